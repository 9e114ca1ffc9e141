//! What a [`super::Host`] is made with: its servers, where it keeps state, and the knobs of
//! the cores it drives.

use crate::link::{Connector, LinkConfig};
use crate::state::{
    ConversationConfig, DEFAULT_HOLD_WINDOW, MetaConfig, PresenterConfig, ToolPolicy,
};
use mcpl_transport::ClientOptions;
use std::path::PathBuf;
use std::time::Duration;

/// How many told ended ids are kept per server (oldest forgotten first).
pub const DEFAULT_TOLD_CAPACITY: usize = crate::state::presenter::DEFAULT_TOLD_CAPACITY;

/// One server the host links to.
#[derive(Debug)]
pub struct ServerConfig {
    /// The link's configuration. Its `name` is the server's name in this host (markers,
    /// `server--tool`); the Host sets its tap and adds itself as a subscriber.
    pub link: LinkConfig,
    /// The host's tool policy for this server (§6).
    pub policy: ToolPolicy,
}

impl ServerConfig {
    /// A server reached through `connector`, every tool allowed.
    pub fn new(name: impl Into<String>, connector: Connector) -> Self {
        ServerConfig {
            link: LinkConfig::new(name, connector),
            policy: ToolPolicy::allow_all(),
        }
    }

    /// A server at a URL (`stdio:…`, `ws://…`, `wss://…`, `http://…`, `https://…`),
    /// presenting `token` if given; a TLS server is verified against the webpki roots.
    pub fn url(name: impl Into<String>, url: impl Into<String>, token: Option<String>) -> Self {
        let options = ClientOptions {
            token,
            ..Default::default()
        };
        Self::url_with(name, url, options)
    }

    /// A server at a URL reached with these client options: a token, and for a TLS server
    /// with a private CA, [`ClientOptions::tls`] from
    /// [`ClientTls::with_ca_file`](mcpl_transport::ClientTls::with_ca_file).
    pub fn url_with(
        name: impl Into<String>,
        url: impl Into<String>,
        options: ClientOptions,
    ) -> Self {
        Self::new(name, Connector::url(url, options))
    }

    /// With this tool policy.
    pub fn with_policy(mut self, policy: ToolPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The server's name in this host.
    pub fn name(&self) -> &str {
        &self.link.name
    }
}

/// Everything a [`super::Host`] is made with.
#[derive(Debug)]
pub struct HostConfig {
    /// The servers, each with a distinct name.
    pub servers: Vec<ServerConfig>,
    /// Where the told ended ids are kept across restarts (§4.3, vector 13); `None` keeps
    /// them in memory only.
    pub state_dir: Option<PathBuf>,
    /// How long an early rev is held on an unordered link (§5.2 **\[project\]**: 250 ms).
    pub hold_window: Duration,
    /// How long the host waits before reading again after a recovery read failed (the
    /// server answered with an error or not at all; a lost connection starts afresh anyway).
    pub retry_delay: Duration,
    /// The largest fraction taken off each retry's wait at random (default
    /// [`DEFAULT_RETRY_JITTER`](crate::state::host_core::DEFAULT_RETRY_JITTER), half):
    /// hosts whose reads failed together read again spread out.
    pub retry_jitter: f64,
    /// Seeds the retry jitter; `None` seeds it from the OS. Tests and the simulator set one
    /// so that a run repeats.
    pub retry_seed: Option<u64>,
    /// How long a meta-tool call waits for a server's statement (connect-time or a
    /// recovery's) before it is planned anyway (§4.3, §5.2: until it is read, the host does
    /// not know what is open there, and refusing a call as "not usable" would be wrong;
    /// default 5 s).
    pub statement_wait: Duration,
    /// The agent's context window.
    pub conversation: ConversationConfig,
    /// The presenter's bounds.
    pub presenter: PresenterConfig,
    /// The meta-tools' settings.
    pub meta: MetaConfig,
    /// Told ids kept per server.
    pub told_capacity: usize,
    /// A §5.2 rule broken on purpose, to prove that tests catch it (feature
    /// `fault-injection`).
    #[cfg(feature = "fault-injection")]
    pub hint_fault: Option<crate::state::hint_state::HintFault>,
}

impl HostConfig {
    /// A host for these servers with the defaults: no state directory, a 250 ms hold
    /// window, a 1 s retry delay, a 40-message window.
    pub fn new(servers: Vec<ServerConfig>) -> Self {
        HostConfig {
            servers,
            state_dir: None,
            hold_window: DEFAULT_HOLD_WINDOW,
            retry_delay: Duration::from_secs(1),
            retry_jitter: crate::state::host_core::DEFAULT_RETRY_JITTER,
            retry_seed: None,
            statement_wait: Duration::from_secs(5),
            conversation: ConversationConfig::default(),
            presenter: PresenterConfig::default(),
            meta: MetaConfig::default(),
            told_capacity: DEFAULT_TOLD_CAPACITY,
            #[cfg(feature = "fault-injection")]
            hint_fault: None,
        }
    }

    /// With a state directory.
    pub fn with_state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// With a hold window.
    pub fn with_hold_window(mut self, window: Duration) -> Self {
        self.hold_window = window;
        self
    }

    /// How each connection's hint state behaves (its `ordered` is set per connection).
    pub fn hint_config(&self) -> crate::state::HintConfig {
        crate::state::HintConfig {
            #[cfg(feature = "fault-injection")]
            fault: self.hint_fault,
            ..crate::state::HintConfig::ordered().with_hold_window(self.hold_window)
        }
    }
}
