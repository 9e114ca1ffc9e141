//! What the tests that run this project's host against a real server share
//! (`rfc014_boundaries.rs`, `issue40_host_modern.rs`): a [`Relay`] between the host and the
//! server that can cut the link, hold back statements and keep what the host sent and
//! what the server answered, and
//! the waits on the host ([`settled_after`], [`ok`], [`shown`]).

use mcpl_host::host::{HostHandle, Shown};
use mcpl_host::link::Connector;
use mcpl_protocol::Message;
use mcpl_protocol::mcp::CallToolResult;
use mcpl_testkit::within;
use mcpl_transport::{ClientOptions, Connection, Inbound, Outbound};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{mpsc, oneshot, watch};

/// Passes messages between the host and the server, keeping every message the host sent;
/// [`Relay::cut`] drops the link (and a stream on it), and while
/// [`Relay::hold_statements`] is on, a `toolsets/list` result from the server (and
/// everything after it) waits until [`Relay::release`]. [`Relay::ask`] sends a request of
/// the test's own on the link open now; its answer goes to the test, not the host.
#[derive(Clone)]
pub struct Relay {
    /// Bumped to drop every link open now.
    cut: watch::Sender<u64>,
    /// True while statements are held back.
    hold: watch::Sender<bool>,
    /// What the host sent, in order.
    sent: Arc<Mutex<Vec<Value>>>,
    /// What the server sent the host (passed on or held), in order.
    received: Arc<Mutex<Vec<Value>>>,
    /// The link open now: where [`Relay::ask`] writes.
    live: Arc<Mutex<Option<Outbound>>>,
    /// The test's own requests waiting for their answers, by id.
    asked: Arc<Mutex<HashMap<String, oneshot::Sender<Value>>>>,
}

impl Default for Relay {
    fn default() -> Self {
        Relay::new()
    }
}

impl Relay {
    /// A relay that passes everything.
    pub fn new() -> Self {
        Relay {
            cut: watch::channel(0).0,
            hold: watch::channel(false).0,
            sent: Arc::default(),
            received: Arc::default(),
            live: Arc::default(),
            asked: Arc::default(),
        }
    }

    /// A connector to `url` as `who` (its bearer token), through this relay.
    pub fn connector(&self, url: &str, who: &str) -> Connector {
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
        let (in_tx, in_rx) = mpsc::channel::<Inbound>(64);
        *self.live.lock().unwrap_or_else(PoisonError::into_inner) = Some(outbound.clone());
        let mut cut = self.cut.subscribe();
        let sent = self.sent.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = cut.changed() => return,
                    m = host_rx.recv() => {
                        let Some(m) = m else { return };
                        if let Ok(v) = serde_json::to_value(&m) {
                            sent.lock().unwrap_or_else(PoisonError::into_inner).push(v);
                        }
                        if outbound.send(m).await.is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut cut = self.cut.subscribe();
        let mut hold = self.hold.subscribe();
        let received = self.received.clone();
        let asked = self.asked.clone();
        tokio::spawn(async move {
            let mut held: Vec<Inbound> = Vec::new();
            loop {
                tokio::select! {
                    _ = cut.changed() => return,
                    changed = hold.changed() => {
                        if changed.is_err() {
                            return;
                        }
                        if !*hold.borrow_and_update() {
                            for item in held.drain(..) {
                                if in_tx.send(item).await.is_err() {
                                    return;
                                }
                            }
                        }
                    }
                    item = inbound.recv() => {
                        let Some(item) = item else { return };
                        if let Inbound::Message { message, .. } = &item
                            && let Ok(v) = serde_json::to_value(message)
                        {
                            let mine = v["id"]
                                .as_str()
                                .and_then(|id| {
                                    asked.lock().unwrap_or_else(PoisonError::into_inner).remove(id)
                                });
                            if let Some(answer) = mine {
                                let _ = answer.send(v);
                                continue;
                            }
                            received.lock().unwrap_or_else(PoisonError::into_inner).push(v);
                        }
                        if !held.is_empty() || (*hold.borrow() && is_statement(&item)) {
                            held.push(item);
                        } else if in_tx.send(item).await.is_err() {
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
    pub fn cut(&self) {
        self.cut.send_modify(|n| *n += 1);
    }

    /// Holds back statements from now on.
    pub fn hold_statements(&self) {
        self.hold.send_replace(true);
    }

    /// Passes on what was held, and holds nothing more.
    pub fn release(&self) {
        self.hold.send_replace(false);
    }

    /// The requests the host sent with `method`.
    pub fn sent(&self, method: &str) -> Vec<Value> {
        self.sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|m| m["method"] == method)
            .cloned()
            .collect()
    }

    /// Sends `request` (a JSON-RPC request with a string `id`) on the link open now, as
    /// the host's own would go; returns its answer, which the host never sees. `None` when
    /// no link is open or it goes before answering.
    pub async fn ask(&self, request: Value) -> Option<Value> {
        let id = request["id"].as_str()?.to_owned();
        let message: Message = serde_json::from_value(request).ok()?;
        let outbound = self
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()?;
        let (tx, rx) = oneshot::channel();
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, tx);
        outbound.send(message).await.ok()?;
        rx.await.ok()
    }

    /// Everything the host sent, in order.
    pub fn sent_all(&self) -> Vec<Value> {
        self.sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Everything the server sent the host, in order (held messages included).
    pub fn received(&self) -> Vec<Value> {
        self.received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// A `toolsets/list` result (§4.3): `open` and `ended`, as the RFC shapes it.
fn is_statement(item: &Inbound) -> bool {
    let Inbound::Message { message, .. } = item else {
        return false;
    };
    let v = serde_json::to_value(message).expect("messages serialize");
    v["result"]["open"].is_array() && v["result"]["ended"].is_array()
}

/// Waits until `server` is settled on `host` (statement read, no recovery) on a
/// connection after `after`; returns its epoch.
pub async fn settled_after(host: &HostHandle, server: &str, after: u64) -> u64 {
    let s = within(host.wait_for(|s| {
        s.server(server).is_some_and(|a| {
            a.settled && a.epoch > after && a.hints.as_ref().is_some_and(|h| !h.recovering)
        })
    }))
    .await
    .expect("the host runs");
    s.server(server).expect("the server is configured").epoch
}

/// The agent's call; its result.
pub async fn agent(host: &HostHandle, tool: &str, args: Value) -> CallToolResult {
    within(host.call(tool, args)).await.expect("the host runs")
}

/// The agent's call, which must succeed; its text.
pub async fn ok(host: &HostHandle, tool: &str, args: Value) -> String {
    let r = agent(host, tool, args).await;
    assert!(!r.is_error, "{tool}: {}", r.joined_text());
    r.joined_text()
}

/// Everything the host showed since the last time this was asked.
pub async fn shown(host: &HostHandle) -> String {
    let shown: Vec<Shown> = within(host.transcript()).await.expect("the host runs");
    shown
        .iter()
        .map(|s| s.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}
