//! The values the session's parts share, apart from the code that handles them: a modern
//! request in flight (`modern.rs`), an open stream (`listen.rs`), a legacy session's
//! subscriptions (`watch.rs`), a feature request (`features.rs`). The session holds them and
//! its actor's [`Io`](super::Io) names the last; keeping them here lets those files depend
//! on the session, and not the other way round.

use crate::mrtr::Carried;
use mcpl_protocol::grant::Policy;
use mcpl_protocol::mcp::{ClientCapabilities, LoggingLevel};
use mcpl_protocol::modern::CacheHints;
use mcpl_protocol::server_features::{CompleteParams, GetPromptParams};
use std::collections::BTreeSet;

/// A modern request in flight, until it is answered or cancelled.
#[derive(Debug, Clone)]
pub struct ModernCall {
    /// `io.modelcontextprotocol/logLevel`: `None`, none of its log messages is sent.
    pub(super) log_level: Option<LoggingLevel>,
    /// What the request declared, for what its handler asks of the client.
    pub(super) capabilities: ClientCapabilities,
    /// The caching hints its result carries.
    pub(super) cache: Option<CacheHints>,
    /// A `tools/call`'s, `prompts/get`'s or `resources/read`'s answers to its handler's
    /// questions (MRTR, `mrtr.rs`).
    pub(super) input: Option<Carried>,
    /// A hinted request's `mcpl/since` (module docs); `None`: not hinted.
    pub(super) since: Option<u64>,
    /// The manifest revision a hinted request's result names, when the request's
    /// `_meta["mcpl/revision"]` differs from it (profile §3.3).
    pub(super) revision: Option<String>,
    /// Its result states everything (`toolsets/list`).
    pub(super) statement: bool,
}

/// What one open stream carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listen {
    /// `notifications/tools/list_changed`.
    pub(super) tools: bool,
    /// `notifications/mcpl/hints` (module docs): the version up to which the stream told
    /// its client every change; `None`, it carries none.
    pub(super) hints: Option<u64>,
    /// Its first message is sent (it waits for the principal's stamped state when the
    /// stream opened before the principal gave it).
    pub(super) told: bool,
    /// `notifications/resources/updated` for these URIs (`watch.rs`).
    pub(super) resources: BTreeSet<String>,
    /// `notifications/mcpl/event` (`listen.rs`); `None`, it carries none.
    pub(super) events: Option<EventStream>,
}

/// What a stream that carries events (`listen.rs`) pushes under, and how far its events'
/// hints reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EventStream {
    /// The grant of the `subscriptions/listen` request that opened it (profile §3.6: a
    /// stream pushes only under it).
    pub(super) policy: Policy,
    /// The version up to which its events' hints told the changes: the next event carries
    /// what was stamped after it.
    pub(super) mark: u64,
}

/// A legacy session's subscribed URIs, with their size.
#[derive(Debug, Default)]
pub struct Subscriptions {
    pub(super) uris: BTreeSet<String>,
    pub(super) bytes: usize,
}

/// A feature request, its params read.
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureRequest {
    /// `resources/list`.
    ListResources,
    /// `resources/templates/list`.
    ListResourceTemplates,
    /// `resources/read`.
    ReadResource {
        /// The resource.
        uri: String,
    },
    /// `prompts/list`.
    ListPrompts,
    /// `prompts/get`.
    GetPrompt(GetPromptParams),
    /// `completion/complete`.
    Complete(CompleteParams),
}
