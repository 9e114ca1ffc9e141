//! The simulator: agents that see only what the MCPL host shows a model and act only
//! through its tool calls, playing on an in-process arcade — the demo, and load and chaos
//! runs that check RFC-014's invariants and report.
//!
//! Layout:
//!
//! | module | what |
//! |---|---|
//! | [`agent`] | agents: what they perceive, believe and do; scripted policies; the model-backed agent |
//! | [`arcade`] | the arcade in process, on WebSocket and Streamable HTTP listeners, restartable |
//! | [`hosts`] | a host per agent, the arcade its one server |
//! | [`demo`] | `sim demo`: two agents play Go through the lobby, one plays tic-tac-toe against the bot |
//! | [`surface`] | an agent that reaches the arcade through a surface host, as a plain MCP client (`sim demo --surface`) |
//! | [`print`](mod@print) | the demo's printer |
//! | [`svg`] | final boards as pictures |
//! | [`metrics`] | counters, latencies, peak RSS |
//! | [`proxy`] | the chaos runs' faults on the workspace's one TCP fault proxy (`mcpl_testkit::proxy`): drops, mass drops, duplicated WebSocket frames |
//! | [`cli`] | what the binaries share: logging to standard error, the exit code of an outcome |
//! | [`chaos`] | the chaos level's knobs: proxy faults, delivery delays on Streamable HTTP, restarts |
//! | [`truth`] | the server's state for a principal, read as a fresh connection of it would |
//! | [`invariants`] | the checks at the end of a load run |
//! | [`load`] | `sim`: many agents, chaos, invariants, a report |
//! | [`nodes`] | `sim --nodes N`: the arcade as N `mcpl-arcade` processes on PostgreSQL and NATS behind a load balancer (one node owning the arcade, or each its players' leases: `--ownership`); node deaths |
//! | [`det`] | `sim --deterministic`: the same agents in memory on one thread and virtual time; a seed replays to the same trace digest |
//! | [`report`] | the load run's table and JSON |
//!
//! `--modern N` (or `--modern 20%`) plays that many of the agents on MCP 2026-07-28
//! ([`agent::modern`]): hosts with no session, served as plain MCP hosts, checked by
//! [`invariants::check_modern`]. `--modern-hints N` plays that many on MCP 2026-07-28 with
//! RFC-014's stateless profile ([`load::hinted`]): scripted agents checked by the legacy
//! invariants, under their era's chaos (answers lost, calls re-issued, streams cut).
//!
//! Agents never read host or server internals: they read the tool list, the transcript
//! and tool results. The run's checks read the server's truth through a connection of
//! their own, as the principal ([`truth`]).
//!
//! # Usage
//!
//! ```text
//! cargo run -p sim -- demo [--full] [--seed N] [--out DIR] [--limit SECONDS]
//! cargo run -p sim [-- --agents N --duration S --seed X --transport ws|http|mixed
//!                      --chaos LEVEL --json PATH --bot-playouts N --think-ms MS
//!                      --host-threads N --quiet --surface-agents N --modern N|P%
//!                      --modern-hints N|P%] [--nodes N [--arcade-bin PATH]
//!                      [--balance round-robin|owner] [--ownership arcade|principal]]
//! cargo run -p sim -- --deterministic [--seed X --agents N --duration S --transport …
//!                      --chaos LEVEL --think-ms MS --trace-out PATH]
//! ```
//!
//! The load run exits non-zero, naming its seed, when an invariant was violated; the
//! deterministic one also prints the command that replays it, and always
//! `trace digest: <sha256>`, the same for every run of a seed ([`det`]).
//! `SIM_TRACE=p0003,p0017` (or `*`) prints what those agents see; `SIM_DUMP=PATH` keeps
//! every agent's log in memory and writes those of the agents at fault. The demo's carol
//! is played by a model when `SIM_MODEL_URL` is set ([`agent::model`]).
//!
//! # Threads
//!
//! Everything runs on actix arbiters: the arcade's sessions and listeners on one, hosts
//! and their agents on `--host-threads` more, the run's timeline and the chaos proxies on
//! the caller's. Go searches (the arcade's bot, the engine agents) run on tokio's blocking
//! pool. The deterministic mode runs all of it on the caller's thread alone, with no Go
//! search ([`det`]).

pub mod agent;
pub mod arcade;
pub mod chaos;
pub mod cli;
pub mod demo;
pub mod det;
pub mod hosts;
pub mod invariants;
pub mod load;
pub mod metrics;
pub mod nodes;
pub mod print;
pub mod proxy;
pub mod report;
pub mod surface;
pub mod svg;
pub mod truth;
