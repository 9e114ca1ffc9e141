//! Wire types and pure functions for MCP, MCPL 0.5 and RFC-014.
//!
//! This crate does no I/O and holds no clock: it turns bytes into typed messages and back,
//! and computes the few pure functions the protocol defines (the manifest digest, the name
//! grammar). Everything else in the workspace speaks through these types.
//!
//! Layout, one concept per module:
//!
//! | module | what |
//! |---|---|
//! | [`jsonrpc`] | JSON-RPC 2.0 envelopes, ids, error codes, decoding by the keys present |
//! | [`method`] | one marker type per method, tying its name to its params and result types |
//! | [`mcp`] | MCP base: `initialize`, `ping`, `tools/list`, `tools/call`, cancellation, progress, logging |
//! | [`server_features`] | what a server offers besides tools: resources, resource templates, prompts, completion |
//! | [`client_features`] | what a server may ask of its client: `sampling/createMessage`, `elicitation/create` |
//! | [`mcpl`] | MCPL 0.5 base: capabilities, the manifest (read liberally), `featureSets/update`, `push/event` |
//! | [`digest`] | the manifest revision digest (SPEC §17.2: SHA-256 over RFC 8785 JCS) |
//! | [`grant`] | capability grants, `*` matching, feature-set derivation, receipts and refusals (SPEC §5.3–§6.7) |
//! | [`modern`] | MCP 2026-07-28: per-request `_meta`, `server/discover`, `resultType`, caching hints, the era's errors |
//! | [`header_params`] | MCP 2026-07-28's tool parameters mirrored into HTTP headers (`x-mcp-header`, `Mcp-Param-*`): which a schema marks, their encoding, a server's check |
//! | [`meta`] | the `_meta` object and RFC-014's keys in it (spec §3) |
//! | [`hints`] | RFC-014 hint changes: `HintChanges` and its entries (spec §5.1), `tools/hints` params |
//! | [`stateless`] | RFC-014 on MCP 2026-07-28, this project's profile (`docs/rfc014-stateless.md`): versioned, stamped hints and the `_meta` keys of requests |
//! | [`toolsets`] | RFC-014 toolset declarations and `toolsets/open|close|list` (spec §4) |
//! | [`names`] | RFC-014's name grammar for toolsets and instances (spec §4.1) |
//! | [`principal`] | [`principal::Principal`]: who a server-side connection authenticated as (spec §4.6) |
//! | [`time`] | RFC 3339 timestamps: whole seconds (ended records' `at`, §4.3) and milliseconds (`push/event`'s `timestamp`), clamped, never failing |
//!
//! Section signs (§) in comments refer to `shared/spec/RFC-014.md` unless they say "SPEC §"
//! (the MCPL 0.5 spec) or "MCP".

pub mod client_features;
pub mod digest;
pub mod grant;
pub mod header_params;
pub mod hints;
pub mod jsonrpc;
pub mod mcp;
pub mod mcpl;
pub mod meta;
pub mod method;
pub mod modern;
pub mod names;
pub mod principal;
pub mod server_features;
pub mod stateless;
pub mod time;
pub mod toolsets;

pub use hints::{
    HintChanges, HintEntries, Presence, Suggestion, ToolHint, ToolHintsParams, ToolsetChange,
    ToolsetState,
};
pub use jsonrpc::{ErrorCode, ErrorObject, Id, Message, Notification, Request, Response};
pub use mcp::{CallToolParams, CallToolResult, ContentBlock, Tool};
pub use meta::Meta;
