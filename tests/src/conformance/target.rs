//! The server under test and how a vector gets connections to it.
//!
//! - A [`Target::Command`] is spawned afresh for every connection (stdio serves one
//!   connection per process), so each connection is a fresh server with a fresh principal;
//!   two connections can never share a principal.
//! - A [`Target::Url`] (`ws://…`, `http://…`, or over TLS `wss://…`, `https://…`) is one
//!   long-lived server. A fresh principal is
//!   an anonymous connection (the contract lets them in, each its own principal, §4.6); the
//!   named principal (the contract's token) shares toolsets across connections, and keeps
//!   what earlier runs left, so vectors using it name their instances uniquely per run.

use super::error::Checked;
use super::peer::{HostKind, Peer};
use super::run::VectorId;
use mcpl_protocol::mcpl::{CAP_PUSH_EVENTS, CAP_TOOLS};
use mcpl_transport::{ChildStderr, ClientOptions, ClientTls};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// What [`PassTime`] is given: how long, to a future that returns once it passed.
type PassFn = dyn Fn(Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync;

/// How a run lets the server's time pass while a principal is idle (vector S13, profile
/// §3.6): given how long, it returns once at least that much of the server's time has
/// passed since the connection the vector closed ended. A test holding the server's clock
/// awaits the session's end and moves the clock; `mcpl-conformance` against a server it
/// does not hold waits on the wall clock.
#[derive(Clone)]
pub struct PassTime(Arc<PassFn>);

impl PassTime {
    /// A way of letting time pass.
    pub fn new(
        f: impl Fn(Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync + 'static,
    ) -> Self {
        PassTime(Arc::new(f))
    }

    /// Lets `how_long` of the server's time pass.
    pub async fn pass(&self, how_long: Duration) {
        (self.0)(how_long).await
    }
}

impl fmt::Debug for PassTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PassTime(..)")
    }
}

/// What the runner talks to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A command line (`PROGRAM ARGS`, split as a POSIX shell would) spawned per
    /// connection, serving on its stdin/stdout.
    Command(String),
    /// A WebSocket (`ws://…`, `wss://…`) or Streamable HTTP (`http://…`, `https://…`)
    /// endpoint.
    Url(String),
}

impl Target {
    /// True when two connections can reach the same server and principal.
    pub fn shares_principals(&self) -> bool {
        matches!(self, Target::Url(_))
    }
}

/// How a run goes.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The server under test.
    pub target: Target,
    /// The bearer token of the named principal (network targets).
    pub token: String,
    /// How long any one wait lasts before the vector fails.
    pub limit: Duration,
    /// Let a spawned server's stderr through (default: discarded).
    pub server_stderr: bool,
    /// How a `wss://` or `https://` target is verified (default: the webpki roots).
    pub tls: ClientTls,
    /// How the server's time passes for S13 (default: none given, and S13 is skipped).
    pub pass_time: Option<PassTime>,
    /// How many events S20 asks `game_burst` for at once: more than a Streamable HTTP
    /// listen stream of the server holds (default [`EVENT_BURST`], past the fixture's
    /// bound).
    ///
    /// [`EVENT_BURST`]: super::contract::EVENT_BURST
    pub event_burst: u64,
}

impl RunOptions {
    /// Options for `target` with the contract's token and a 10-second limit.
    pub fn new(target: Target) -> Self {
        RunOptions {
            target,
            token: super::contract::DEFAULT_TOKEN.to_owned(),
            limit: Duration::from_secs(10),
            server_stderr: false,
            tls: ClientTls::default(),
            pass_time: None,
            event_burst: super::contract::EVENT_BURST,
        }
    }
}

/// What a vector needs beyond a connection of a fresh principal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Several connections of one principal to one server (reconnects, fan-out).
    SharedPrincipal,
}

impl Need {
    /// Why a target without it cannot run the vector.
    pub fn why_missing(self) -> &'static str {
        match self {
            Need::SharedPrincipal => {
                "needs several connections of one principal to one server; a stdio server serves one connection per process"
            }
        }
    }
}

/// What a vector runs with: its connections, names unique to the run, and the departures
/// from the fixture contract's choices noted on the way.
pub struct Ctx {
    opts: RunOptions,
    vector: VectorId,
    nonce: String,
    departures: std::cell::RefCell<Vec<String>>,
}

impl Ctx {
    /// A context for `vector` of the run with `nonce`.
    pub fn new(opts: RunOptions, vector: VectorId, nonce: String) -> Self {
        Ctx {
            opts,
            vector,
            nonce,
            departures: Default::default(),
        }
    }

    /// Checks one of the **fixture contract's choices** — a reading this project made where
    /// RFC-014 leaves a choice (compat tools for plain hosts, the `ended` id on a closed
    /// entry, the name grammar, a tool error's wording). A departure is noted, not failed:
    /// the vector goes on to the RFC's MUSTs, and the report says which is which.
    pub fn choice(&self, holds: bool, what: impl FnOnce() -> String) {
        if !holds {
            self.departures.borrow_mut().push(what());
        }
    }

    /// True when the target lets the named principal have several connections to one
    /// server (a vector may then check more than it needs to declare).
    pub fn shares_principals(&self) -> bool {
        self.opts.target.shares_principals()
    }

    /// How the server's time passes for S13, when the run was given a way.
    pub fn pass_time(&self) -> Option<PassTime> {
        self.opts.pass_time.clone()
    }

    /// True when the target is a Streamable HTTP endpoint (`http://`, `https://`), where a
    /// listen stream is its POST's bounded answer (vector S20).
    pub fn over_streamable_http(&self) -> bool {
        matches!(&self.opts.target, Target::Url(url) if url.starts_with("http://") || url.starts_with("https://"))
    }

    /// How many events S20 asks for at once ([`RunOptions::event_burst`]).
    pub fn event_burst(&self) -> u64 {
        self.opts.event_burst
    }

    /// The departures noted so far.
    pub fn departures(&self) -> Vec<String> {
        self.departures.borrow().clone()
    }

    /// A name unique to this run and vector, valid as an instance name (§4.1).
    pub fn unique(&self, what: &str) -> String {
        match self.vector {
            VectorId::Rfc(n) => format!("c{}-v{n:02}-{what}", self.nonce),
            VectorId::Stateless(n) => format!("c{}-s{n:02}-{what}", self.nonce),
        }
    }

    fn client_options(&self, token: Option<&str>) -> ClientOptions {
        ClientOptions {
            token: token.map(str::to_owned),
            child_stderr: if self.opts.server_stderr {
                ChildStderr::Inherit
            } else {
                ChildStderr::Discard
            },
            tls: self.opts.tls.clone(),
            ..Default::default()
        }
    }

    async fn connect(&self, label: &str, token: Option<&str>) -> Checked<Peer> {
        let url = match &self.opts.target {
            Target::Command(cmd) => format!("stdio:{cmd}"),
            Target::Url(url) => url.clone(),
        };
        let conn = mcpl_transport::connect(&url, &self.client_options(token)).await?;
        Ok(Peer::new(label, conn, self.opts.limit))
    }

    /// A connection of a principal nobody else uses, not yet initialized.
    pub async fn fresh(&self, label: &str) -> Checked<Peer> {
        self.connect(label, None).await
    }

    /// A connection of the named principal, not yet initialized. Only for vectors that
    /// declared [`Need::SharedPrincipal`].
    pub async fn named(&self, label: &str) -> Checked<Peer> {
        self.connect(label, Some(&self.opts.token)).await
    }

    /// A connection for modern requests (MCP 2026-07-28: no `initialize`, every request
    /// carries its own `_meta`) of a **named** principal, whose hinted requests the
    /// stateless profile serves (an anonymous request keeps no state, profile §3.6): over
    /// stdio the spawned server's own principal, fresh with the process; over a network
    /// the named principal's token, whose state earlier vectors and runs may have left (the
    /// vectors name their instances uniquely and close what they open).
    pub async fn modern(&self, label: &str) -> Checked<Peer> {
        let token = match &self.opts.target {
            Target::Command(_) => None,
            Target::Url(_) => Some(self.opts.token.as_str()),
        };
        let mut p = self.connect(label, token).await?;
        p.modern = true;
        Ok(p)
    }

    /// A fresh principal's connection, through the handshake as a hinted host granted
    /// `tools` and `pushEvents`.
    pub async fn hinted(&self, label: &str) -> Checked<Peer> {
        let mut p = self.fresh(label).await?;
        p.handshake(HostKind::Hinted, Some(&[CAP_TOOLS, CAP_PUSH_EVENTS]))
            .await?;
        Ok(p)
    }

    /// The named principal's connection, through the same handshake.
    pub async fn named_hinted(&self, label: &str) -> Checked<Peer> {
        let mut p = self.named(label).await?;
        p.handshake(HostKind::Hinted, Some(&[CAP_TOOLS, CAP_PUSH_EVENTS]))
            .await?;
        Ok(p)
    }
}
