//! This crate's integration tests, one binary: each file beside this one is a module of it,
//! so the test build links one binary against the dependency graph rather than one per
//! file (`Cargo.toml`: `autotests = false`). A new test file gets a `mod` line here;
//! `scripts/test-binaries.py --check` fails on a file in no test binary. A test that needs
//! a process of its own has its own `[[test]]` in `Cargo.toml`, which says why.

// Shared by the tests below, declared once.
mod support;

mod boundaries;
mod console;
mod handshake;
mod hardening;
mod hint_state_props;
mod host;
mod hostile_server;
mod issue36_names_events;
mod issue36_state;
mod issue37_host_bounds;
mod issue37_host_bytes;
mod issue39_host_era;
mod issue40_host_profile;
mod issue43_rough_edges;
mod mcpl_base;
mod play;
mod play_tmux;
mod reconnect;
mod requests;
mod server_requests;
mod vectors_order;
mod vectors_presentation;
mod vectors_toolsets;
mod websocket;
