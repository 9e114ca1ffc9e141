//! Starting a host for one agent: the arcade as its one server, at a URL (the arcade's
//! listener, or a chaos proxy in front of it), the agent's name as its bearer token — or
//! through any [`Connector`] (the deterministic mode's in-memory links).

use mcpl_host::host::{Host, HostConfig, HostError, HostHandle, ServerConfig};
use mcpl_host::link::{Connector, EraPolicy};
use mcpl_transport::ClientOptions;
use mcpl_transport::delivery::DeliveryHook;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The server's name in every agent's host.
pub const SERVER: &str = "arcade";

/// The link knobs a run sets.
#[derive(Debug, Clone)]
pub struct LinkKnobs {
    /// Delays for a Streamable HTTP link's deliveries (chaos).
    pub hook: Option<DeliveryHook>,
    /// The longest reconnect backoff.
    pub backoff_max: Duration,
    /// How long a request waits for its answer.
    pub request_timeout: Duration,
    /// Which era of MCP the host speaks to the arcade: legacy (`initialize`, MCPL) by
    /// default; the modern agents' hosts speak MCP 2026-07-28 only ([`crate::agent::modern`]).
    pub era: EraPolicy,
    /// On the modern era, advertise `toolHints` (the agent's name is a named principal, so
    /// the arcade serves RFC-014's stateless profile, issue #40); without it a modern host
    /// is served as a host without hints (RFC-014 §8). Legacy hosts always advertise.
    pub profile: bool,
}

impl Default for LinkKnobs {
    fn default() -> Self {
        LinkKnobs {
            hook: None,
            backoff_max: Duration::from_secs(2),
            request_timeout: Duration::from_secs(30),
            era: EraPolicy::Legacy,
            profile: false,
        }
    }
}

/// Starts a host for agent `name` (inside an actix system) with the arcade at `url`, its
/// reconnect jitter seeded.
pub fn start_host(
    name: &str,
    url: &str,
    knobs: Option<&LinkKnobs>,
    seed: u64,
) -> Result<HostHandle, HostError> {
    let knobs = knobs.cloned().unwrap_or_default();
    let options = ClientOptions {
        token: Some(name.to_owned()),
        delivery_hook: knobs.hook.clone(),
        ..Default::default()
    };
    start_host_with(Connector::url(url, options), &knobs, seed, None)
}

/// A change made to each host's configuration before it starts: a test build sets a
/// deliberately broken rule with it (`HostConfig::hint_fault`, host feature
/// `fault-injection`) without the simulator's library naming it.
#[derive(Clone)]
pub struct HostTweak(Arc<dyn Fn(&mut HostConfig) + Send + Sync>);

impl HostTweak {
    /// A tweak applying `f`.
    pub fn new(f: impl Fn(&mut HostConfig) + Send + Sync + 'static) -> Self {
        HostTweak(Arc::new(f))
    }
}

impl fmt::Debug for HostTweak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HostTweak(..)")
    }
}

/// Starts a host (inside an actix system) whose one server, the arcade, is reached through
/// `connector`; its reconnect jitter seeded, its configuration changed by `tweak` if given.
pub fn start_host_with(
    connector: Connector,
    knobs: &LinkKnobs,
    seed: u64,
    tweak: Option<&HostTweak>,
) -> Result<HostHandle, HostError> {
    let mut server = ServerConfig::new(SERVER, connector);
    server.link.backoff.seed = Some(seed);
    server.link.backoff.initial = Duration::from_millis(50);
    server.link.backoff.max = knobs.backoff_max;
    server.link.request_timeout = knobs.request_timeout;
    server.link.connect_timeout = Duration::from_secs(10);
    server.link.era = knobs.era;
    // `--modern` agents play as hosts without hints (RFC-014 §8), through the arcade's
    // plain tools; `--modern-hints` ones declare `mcpl/core` and are served the stateless
    // profile (issue #40).
    server.link.advertise_tool_hints = knobs.era != EraPolicy::Modern || knobs.profile;
    let mut config = HostConfig::new(vec![server]);
    config.retry_seed = Some(seed);
    if let Some(t) = tweak {
        (t.0)(&mut config);
    }
    Host::start(config)
}
