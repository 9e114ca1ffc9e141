//! This crate's integration tests, one binary: each file beside this one is a module of it,
//! so the test build links one binary against the dependency graph rather than one per
//! file (`Cargo.toml`: `autotests = false`). A new test file gets a `mod` line here;
//! `scripts/test-binaries.py --check` fails on a file in no test binary. A test that needs
//! a process of its own has its own `[[test]]` in `Cargo.toml`, which says why.

// Shared by the tests below, declared once.
mod support;

mod arcade_binary;
mod arcade_ended;
mod arcade_go_bot;
mod arcade_host;
mod arcade_host_players;
mod arcade_lobby;
mod arcade_play_commands;
mod arcade_restart;
mod arcade_tictactoe;
mod arcade_tls;
mod bot_strength;
mod go_rules;
mod hardening;
mod hardening2;
mod issue36_arcade;
mod issue39_modern;
mod issue39_offers;
mod issue39_python;
mod issue41_01_arcade_postgres;
mod issue41_02_arcade_nodes;
mod issue41_03_arcade_outages;
mod issue41_04_arcade_tunnels;
mod issue41_05_arcade_adopt;
mod issue41_06_arcade_principals;
mod issue41_07_arcade_principal_takeover;
mod issue41_08_principal_outages;
mod issue41_09_arcade_scan;
mod issue41_10_arcade_sigterm;
mod issue41_11_principal_lookups;
mod issue42_group_commit;
mod issue43_rough_edges;
mod issue43_spectator;
