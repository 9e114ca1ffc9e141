//! What a link is told when it is made.

use super::connector::Connector;
use super::core::era::EraPolicy;
use super::events::EventSink;
use super::tap::Tap;
use mcpl_protocol::mcp::Implementation;
use mcpl_protocol::mcpl::{CAP_PUSH_EVENTS, CAP_TOOLS, PushEventParams, PushEventResult};
use std::fmt;
use std::time::Duration;

/// The reconnect backoff (see [`super::Backoff`]).
#[derive(Debug, Clone, PartialEq)]
pub struct BackoffConfig {
    /// The first delay (default 250 ms).
    pub initial: Duration,
    /// The largest delay (default 30 s).
    pub max: Duration,
    /// The largest fraction jitter takes off a delay, 0 to 1 (default 0.2).
    pub jitter: f64,
    /// The jitter generator's seed; `None` seeds from the OS. Tests and the simulator set
    /// one so a run repeats.
    pub seed: Option<u64>,
    /// How long a connection must stay up after its handshake before the delay starts
    /// over from `initial` (default 10 s). A connection dropped sooner leaves the delay
    /// growing, so a server that closes every connection right after its handshake is not
    /// reconnected at the first step each time.
    pub stable_after: Duration,
}

impl Default for BackoffConfig {
    fn default() -> Self {
        BackoffConfig {
            initial: Duration::from_millis(250),
            max: Duration::from_secs(30),
            jitter: 0.2,
            seed: None,
            stable_after: Duration::from_secs(10),
        }
    }
}

/// How the link answers `push/event` (SPEC §9). Accepting is a decision about the event,
/// not about the server's state: the push's hints were already offered to the tap when it
/// was read, whatever this says (§5.2, vector 3).
pub struct PushPolicy(Box<dyn FnMut(&PushEventParams) -> PushEventResult + Send>);

impl PushPolicy {
    /// Accepts every event (the default).
    pub fn accept_all() -> Self {
        PushPolicy(Box::new(|_| PushEventResult {
            accepted: true,
            ..Default::default()
        }))
    }

    /// Decides each event with `f`.
    pub fn from_fn(f: impl FnMut(&PushEventParams) -> PushEventResult + Send + 'static) -> Self {
        PushPolicy(Box::new(f))
    }

    pub(super) fn decide(&mut self, params: &PushEventParams) -> PushEventResult {
        (self.0)(params)
    }
}

impl Default for PushPolicy {
    fn default() -> Self {
        Self::accept_all()
    }
}

impl fmt::Debug for PushPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PushPolicy(..)")
    }
}

/// Everything a [`super::ServerLink`] is made with.
#[derive(Debug)]
pub struct LinkConfig {
    /// The server's name in this host (logs, the agent's markers).
    pub name: String,
    /// How to connect.
    pub connector: Connector,
    /// Who this host is, for `initialize` (and a modern request's `clientInfo`).
    pub client_info: Implementation,
    /// Which era of MCP the link may speak (`era.rs`): [`EraPolicy::Auto`] by default
    /// (probe with `server/discover`, fall back to `initialize`).
    pub era: EraPolicy,
    /// How long a request waits for its response (default 30 s).
    pub request_timeout: Duration,
    /// How long each handshake request (`server/discover`, `initialize`, the initial
    /// `featureSets/update`) waits for its response (default 10 s); a server that does not
    /// answer in time is dropped and tried again after the backoff — except for the era
    /// probe, after which a server that said nothing is taken as legacy.
    pub handshake_timeout: Duration,
    /// How long the era probe (`server/discover`, with `--era auto`, the default) waits
    /// before a server that said nothing is taken as legacy and sent `initialize` (default
    /// 3 s). **\[project\]** Shorter than the handshake's: a legacy server that ignores
    /// requests before `initialize` (the binding pages' "on a timeout") costs this once per
    /// server (the era is remembered), and a modern server answers a probe as fast as any
    /// request.
    pub probe_timeout: Duration,
    /// How long one connection attempt may take before it counts as failed (default 30 s).
    pub connect_timeout: Duration,
    /// The reconnect backoff.
    pub backoff: BackoffConfig,
    /// Advertise RFC-014 `toolHints` in `initialize` (§2).
    pub advertise_tool_hints: bool,
    /// The host's policy: what it is willing to grant a server that speaks MCPL (capability
    /// paths, `*` matching one segment, SPEC §5.4; default `["tools", "pushEvents"]`). What
    /// is sent in `featureSets/update` is this intersected with what the server advertises.
    pub grant: Vec<String>,
    /// The least time between two `mcpl/manifest` reads on one connection (SPEC §17.8;
    /// default 1 s). Announcements in between are coalesced into one read.
    pub manifest_min_interval: Duration,
    /// How `push/event` is answered.
    pub push_policy: PushPolicy,
    /// Where every read message goes first (§5.2).
    pub tap: Option<Tap>,
    /// Who gets [`super::LinkEvent`]s from the start (more can [`super::Subscribe`]).
    pub subscribers: Vec<EventSink>,
    /// How many timed-out request ids a connection remembers so that their late results
    /// are still recognised (default 1024; the oldest is forgotten first).
    pub timed_out_capacity: usize,
    /// Bounds how far the link reads ahead of its tap's and subscribers' consumer (see
    /// [`super::ReadGate`]); none (the default) reads as fast as the server writes.
    pub read_gate: Option<super::ReadGate>,
    /// How many messages may wait to be written to the server (default 1024). A server
    /// that lets more pile up is not reading what it is sent (its own requests' answers,
    /// say): the link drops the connection rather than hold them all.
    pub write_queue: usize,
    /// How long one message may wait for the transport to take it (default 30 s) before the
    /// link drops the connection as not reading.
    pub write_timeout: Duration,
    /// How long an acknowledged `mcpl/hints` stream must have lived for its end to give the
    /// connection its whole budget of reopenings back (default 60 s). **\[project\]** A
    /// cut stream is reopened at most 16 times in a row; one that lived this long was
    /// healthy, so a link that stays up for hours on a flaky network keeps its stream.
    pub listen_steady: Duration,
}

impl LinkConfig {
    /// A configuration with the defaults: 30 s request and connect timeouts, 10 s for
    /// each handshake request, backoff from
    /// 250 ms to 30 s with 20 % jitter, `toolHints` advertised, grant
    /// `["tools", "pushEvents"]`, every push accepted, no tap, no subscribers, no read
    /// gate, 1024 messages waiting to be written at most, each for 30 s at most, a hints
    /// stream's reopenings refilled once one lived 60 s.
    pub fn new(name: impl Into<String>, connector: Connector) -> Self {
        LinkConfig {
            name: name.into(),
            connector,
            client_info: Implementation::new("mcpl-host", env!("CARGO_PKG_VERSION")),
            era: EraPolicy::default(),
            request_timeout: Duration::from_secs(30),
            handshake_timeout: Duration::from_secs(10),
            probe_timeout: Duration::from_secs(3),
            connect_timeout: Duration::from_secs(30),
            backoff: BackoffConfig::default(),
            advertise_tool_hints: true,
            grant: vec![CAP_TOOLS.to_owned(), CAP_PUSH_EVENTS.to_owned()],
            manifest_min_interval: Duration::from_secs(1),
            push_policy: PushPolicy::default(),
            tap: None,
            subscribers: Vec::new(),
            timed_out_capacity: 1024,
            read_gate: None,
            write_queue: 1024,
            write_timeout: Duration::from_secs(30),
            listen_steady: Duration::from_secs(60),
        }
    }

    /// Sets the tap.
    pub fn with_tap(mut self, tap: Tap) -> Self {
        self.tap = Some(tap);
        self
    }

    /// Adds a subscriber.
    pub fn with_subscriber(mut self, sink: EventSink) -> Self {
        self.subscribers.push(sink);
        self
    }

    /// Sets which era the link may speak.
    pub fn with_era(mut self, era: EraPolicy) -> Self {
        self.era = era;
        self
    }

    /// Sets the push policy.
    pub fn with_push_policy(mut self, policy: PushPolicy) -> Self {
        self.push_policy = policy;
        self
    }
}
