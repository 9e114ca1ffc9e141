//! This crate's integration tests, one binary: each file beside this one is a module of it,
//! so the test build links one binary against the dependency graph rather than one per
//! file (`Cargo.toml`: `autotests = false`). A new test file gets a `mod` line here;
//! `scripts/test-binaries.py --check` fails on a file in no test binary. A test that needs
//! a process of its own has its own `[[test]]` in `Cargo.toml`, which says why.

mod issue39_sim_perf_modern;
mod issue41_cluster_perf;
mod perf_smoke;
