//! [`HostStatus`]: a snapshot of each server's connection and hint state, which the `Host`
//! actor publishes on a `watch` channel after everything it handles, so a caller (a test,
//! the `play` front end) can await a state instead of polling or sleeping.

use crate::state::HintStats;
use std::collections::BTreeMap;

/// Every server, by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostStatus {
    /// The servers.
    pub servers: BTreeMap<String, ServerStatus>,
    /// How many meta-tool calls wait for a server's statement (connect-time or a
    /// recovery's, §4.3, §5.2).
    pub calls_waiting: usize,
}

impl HostStatus {
    /// The server of that name.
    pub fn server(&self, name: &str) -> Option<&ServerStatus> {
        self.servers.get(name)
    }
}

/// One server.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerStatus {
    /// The current connection (0 before the first).
    pub epoch: u64,
    /// True once the connection's handshake completed, until it ends.
    pub ready: bool,
    /// True when the current connection is ready, its tools listed and, where hints count,
    /// its statement read: what the agent is shown of this server is complete.
    pub settled: bool,
    /// True when the last connection attempt failed or the connection went, until the
    /// next connection's `initialize` result is read.
    pub unreachable: bool,
    /// True when hints count on this server (§2).
    pub hints_count: bool,
    /// How many tools the last completed `tools/list` listed.
    pub listed_tools: usize,
    /// The connection's hint state, when hints count and a connection is up.
    pub hints: Option<HintSummary>,
    /// Open toolsets, instances and undeclared groups, as (toolset, instance).
    pub open: Vec<(String, Option<String>)>,
    /// Why the server is not connected, plainly (a refused token, a refused connection,
    /// unreachable): the last failed attempt's or ended connection's cause. None once a
    /// handshake completes, and before the first attempt ends.
    pub down_because: Option<String>,
    /// The most messages the server's link had read and the host had not yet handled, at
    /// once: bounded by the link's `mcpl_host::link::ReadGate` (plus the few one read
    /// becomes), however fast the server writes.
    pub read_ahead_peak: usize,
}

/// A connection's hint state, summarised.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HintSummary {
    /// The last rev applied (§5.2).
    pub last_rev: u64,
    /// The early revs held (an unordered link, §5.2).
    pub held: Vec<u64>,
    /// True until the connect-time `toolsets/list` was read.
    pub connecting: bool,
    /// True while a recovery's reads are under way.
    pub recovering: bool,
    /// The state's counters.
    pub stats: HintStats,
}
