//! Issue #40 item 3 from the host's side: `mcpl_host`'s Host against the project's real
//! server (the conformance fixture, `mcpl_tests::fixture`, on a loopback WebSocket) in the
//! modern era (MCP 2026-07-28) under RFC-014's stateless profile
//! (`docs/rfc014-stateless.md`): every request declares `mcpl/core` and carries the
//! link's mark and grant, every result's and stream message's stamped hints go through
//! the link's `StampedView`, and what the agent sees is fed from it as on legacy. Between
//! host and server a relay passes every message on and can cut the connection (the
//! `mcpl/hints` stream with it); the host reconnects and reopens the stream from its mark.
//! Each test is named for the profile's vector it proves (S11, S15, S16).

use mcpl_host::host::{Host, HostConfig, HostHandle, ServerConfig, Shown};
use mcpl_host::link::{BackoffConfig, Connector, EraPolicy};
use mcpl_protocol::Message;
use mcpl_protocol::mcp::CallToolResult;
use mcpl_testkit::within;
use mcpl_tests::conformance::contract::DEFAULT_TOKEN;
use mcpl_tests::fixture::{Choices, serve_ws_here};
use mcpl_transport::{ClientOptions, Connection, Outbound};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

// ---- the relay ---------------------------------------------------------------------------

/// Passes messages between the host and the server, keeping every request the host sent;
/// [`Relay::cut`] drops the link (and the stream on it).
#[derive(Clone)]
struct Relay {
    cut: watch::Sender<u64>,
    sent: Arc<Mutex<Vec<Value>>>,
}

impl Relay {
    fn new() -> Self {
        Relay {
            cut: watch::channel(0).0,
            sent: Arc::default(),
        }
    }

    /// A connector to `url` as `who`, through this relay.
    fn connector(&self, url: &str, who: &str) -> Connector {
        let (url, who, relay) = (url.to_owned(), who.to_owned(), self.clone());
        Connector::from_fn(move || {
            let (url, who, relay) = (url.clone(), who.clone(), relay.clone());
            Box::pin(async move {
                let opts = ClientOptions {
                    token: Some(who),
                    ..Default::default()
                };
                let real = mcpl_transport::connect(&url, &opts).await?;
                Ok(relay.splice(real))
            })
        })
    }

    fn splice(&self, real: Connection) -> Connection {
        let Connection {
            info,
            outbound,
            mut inbound,
        } = real;
        let (host_tx, mut host_rx) = mpsc::channel::<Message>(64);
        let (in_tx, in_rx) = mpsc::channel(64);
        let mut cut = self.cut.subscribe();
        let sent = self.sent.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = cut.changed() => return,
                    m = host_rx.recv() => {
                        let Some(m) = m else { return };
                        if let Ok(v) = serde_json::to_value(&m) {
                            sent.lock().unwrap().push(v);
                        }
                        if outbound.send(m).await.is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut cut = self.cut.subscribe();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = cut.changed() => return,
                    item = inbound.recv() => {
                        let Some(item) = item else { return };
                        if in_tx.send(item).await.is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Connection {
            info,
            outbound: Outbound::new(host_tx),
            inbound: in_rx.into(),
        }
    }

    /// Drops every link open now: both ends read its end.
    fn cut(&self) {
        self.cut.send_modify(|n| *n += 1);
    }

    /// The requests the host sent with `method`.
    fn sent(&self, method: &str) -> Vec<Value> {
        self.sent
            .lock()
            .unwrap()
            .iter()
            .filter(|m| m["method"] == method)
            .cloned()
            .collect()
    }
}

// ---- the host ----------------------------------------------------------------------------

/// A host of the fixture's named principal in `era`, through `relay`, reconnecting within
/// 10–40 ms.
fn start_host(url: &str, relay: &Relay, era: EraPolicy) -> HostHandle {
    let mut server = ServerConfig::new("fixture", relay.connector(url, DEFAULT_TOKEN));
    server.link.era = era;
    server.link.backoff = BackoffConfig {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(40),
        jitter: 0.0,
        seed: Some(7),
        ..Default::default()
    };
    Host::start(HostConfig::new(vec![server])).expect("a valid host configuration")
}

/// Waits until the fixture is settled (statement read, no recovery) on a connection after
/// `after`; returns its epoch.
async fn settled_after(host: &HostHandle, after: u64) -> u64 {
    let s = within(host.wait_for(|s| {
        s.server("fixture").is_some_and(|a| {
            a.settled && a.epoch > after && a.hints.as_ref().is_some_and(|h| !h.recovering)
        })
    }))
    .await
    .expect("the host runs");
    s.server("fixture").unwrap().epoch
}

/// The agent's call; its result.
async fn agent(host: &HostHandle, tool: &str, args: Value) -> CallToolResult {
    within(host.call(tool, args)).await.expect("the host runs")
}

/// The agent's call, which must succeed; its text.
async fn ok(host: &HostHandle, tool: &str, args: Value) -> String {
    let r = agent(host, tool, args).await;
    assert!(!r.is_error, "{tool}: {}", r.joined_text());
    r.joined_text()
}

/// Everything the host showed since the last time this was asked.
async fn shown(host: &HostHandle) -> String {
    let shown: Vec<Shown> = within(host.transcript()).await.expect("the host runs");
    shown
        .iter()
        .map(|s| s.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[actix::test]
async fn smoke() {
    within(async {
        let server = serve_ws_here(Choices::Fixture).await;
        let relay = Relay::new();
        let host = start_host(server.url(), &relay, EraPolicy::Modern);
        settled_after(&host, 0).await;
        let tools = within(host.tools_json()).await.unwrap();
        println!("{tools}");
        println!(
            "{}",
            ok(
                &host,
                "toolsets--open",
                json!({"toolset": "game", "instance": "g1"})
            )
            .await
        );
        println!(
            "{}",
            ok(
                &host,
                "toolsets--act",
                json!({"tool": "game_flip", "instance": "g1", "args": {}})
            )
            .await
        );
        println!(
            "{}",
            ok(
                &host,
                "toolsets--act",
                json!({"tool": "game_secret", "instance": "g1", "args": {}})
            )
            .await
        );
        println!("SHOWN {}", shown(&host).await);
        println!("{:#?}", relay.sent("tools/call"));
        host.stop().await;
    })
    .await;
}
