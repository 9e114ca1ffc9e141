//! This crate's integration tests, one binary: each file beside this one is a module of it,
//! so the test build links one binary against the dependency graph rather than one per
//! file (`Cargo.toml`: `autotests = false`). A new test file gets a `mod` line here;
//! `scripts/test-binaries.py --check` fails on a file in no test binary. A test that needs
//! a process of its own has its own `[[test]]` in `Cargo.toml`, which says why.

// Shared by the tests below, declared once.
mod support;

mod connect;
mod http_client;
mod http_link;
mod http_modern;
mod http_resource_metadata;
mod http_server;
mod http_slow_client;
mod issue42_http_answers;
mod jwt;
mod stdio;
mod tls;
mod ws;
