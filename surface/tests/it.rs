//! This crate's integration tests, one binary: each file beside this one is a module of it,
//! so the test build links one binary against the dependency graph rather than one per
//! file (`Cargo.toml`: `autotests = false`). A new test file gets a `mod` line here;
//! `scripts/test-binaries.py --check` fails on a file in no test binary. A test that needs
//! a process of its own has its own `[[test]]` in `Cargo.toml`, which says why.

// Shared by the tests below, declared once.
mod support;

mod drop;
mod hardening2;
mod http;
mod issue38_05_typed_dispatch;
mod issue38_typed;
mod issue39_modern;
mod issue39_sdks;
mod issue43_rough_edges;
mod mcpl_client;
mod python_sdk;
mod stdio;
mod typescript_sdk;
