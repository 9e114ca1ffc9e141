//! This crate's integration tests, one binary: each file beside this one is a module of it,
//! so the test build links one binary against the dependency graph rather than one per
//! file (`Cargo.toml`: `autotests = false`). A new test file gets a `mod` line here;
//! `scripts/test-binaries.py --check` fails on a file in no test binary. A test that needs
//! a process of its own has its own `[[test]]` in `Cargo.toml`, which says why.

// Shared by the tests below, declared once.
#[path = "hostile_client/raw.rs"]
mod raw;
mod support;

mod direct_calls;
mod durable;
mod durable_prop;
mod ended_ids;
mod handler_toolsets;
mod hint_push_timeout;
mod hold;
mod hostile_client;
mod invitations;
mod issue36_http_cancel;
mod issue38_typed_routes;
mod issue39_ask_all;
mod issue39_features;
mod issue39_listen;
mod issue39_modern_server;
mod issue39_mrtr;
mod issue39_subscriptions;
mod issue41_first_use;
mod issue41_instance_ids;
mod issue41_lazy_principals;
mod issue41_outbox;
mod issue41_ownership;
mod issue41_release_principal;
mod issue41_remote;
mod issue41_remote_invite;
mod issue42_group_commit;
mod issue42_parts;
mod lifecycle;
mod listen;
mod manifest;
mod progress_logging;
mod push;
mod robustness;
mod runtime;
mod stateless;
mod stateless_events;
mod tools;
mod wake;
