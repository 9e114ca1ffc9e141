//! This crate's integration tests, one binary: each file beside this one is a module of it,
//! so the test build links one binary against the dependency graph rather than one per
//! file (`Cargo.toml`: `autotests = false`). A new test file gets a `mod` line here;
//! `scripts/test-binaries.py --check` fails on a file in no test binary. A test that needs
//! a process of its own has its own `[[test]]` in `Cargo.toml`, which says why.

// Shared by the tests below, declared once.
mod conformance_support;

mod arcade_python;
mod conformance_broken;
mod conformance_fixture;
mod faults;
mod fixture_tls;
mod interop_python_client;
mod interop_python_example;
mod interop_python_polling;
mod interop_python_server;
mod issue36_conformance;
mod issue36_server;
mod issue39_host_modern;
mod issue39_python_mrtr;
mod issue39_ts2;
mod issue40_host_modern;
mod issue40_modern_events;
mod issue40_modern_play;
mod mcpl_base_arcade;
mod reconnect_after_restart;
mod rfc014_boundaries;
mod server_authoring;
mod server_cancelled_calls;
mod server_client_requests;
mod server_principals;
mod server_vectors;
mod server_wire_rules;
