//! This crate's integration tests, one binary: each file beside this one is a module of it,
//! so the test build links one binary against the dependency graph rather than one per
//! file (`Cargo.toml`: `autotests = false`). A new test file gets a `mod` line here;
//! `scripts/test-binaries.py --check` fails on a file in no test binary. A test that needs
//! a process of its own has its own `[[test]]` in `Cargo.toml`, which says why.

mod issue41_01_pg_store;
mod issue41_02_nats_bus;
mod issue41_03_leases;
mod issue41_04_lazy_principals;
mod issue41_04_tunnels;
mod issue41_05_hung_database;
mod issue41_06_adopt_instance;
mod issue41_07_instance_ids;
mod issue41_08_remote_actors;
mod issue41_09_remote_invite;
mod issue41_10_first_use;
mod issue41_11_outbox_nats;
mod support;
