//! This crate's integration tests, one binary: each file beside this one is a module of it,
//! so the test build links one binary against the dependency graph rather than one per
//! file (`Cargo.toml`: `autotests = false`). A new test file gets a `mod` line here;
//! `scripts/test-binaries.py --check` fails on a file in no test binary. A test that needs
//! a process of its own has its own `[[test]]` in `Cargo.toml`, which says why.

mod broken_host;
mod chaos;
mod demo;
mod deterministic;
mod issue39_sim_modern;
mod issue40_sim_modern_hints;
mod issue41_modern_drain;
mod issue41_sim_nodes;
mod issue42_overload;
mod issue43_demo_web;
mod issue43_glossary;
mod model_agent;
mod quiet;
mod surface_load;
