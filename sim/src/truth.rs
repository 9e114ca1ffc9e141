//! The server's truth for a principal, read the way any new connection of that principal
//! reads it: a fresh in-memory connection to the arcade (through its public `serve`), the
//! MCPL handshake advertising `toolHints` and granting only `tools` (so nothing is pushed
//! to it), and `toolsets/list` — the full statement (§4.3): what is open, every tool
//! visible in each open instance, and the ended records. No server internals are read.
//!
//! With the arcade in other processes (`sim --nodes`, [`Source::Remote`]) the connection
//! is a WebSocket through the load balancer, to the node that owns the arcade, with the
//! principal's token; one that cannot be made (no owner just then) is tried again, up
//! to [`CONNECT_TRIES`] times.

use mcpl_games::arcade::Arcade;
use mcpl_protocol::jsonrpc::{RawValue, decode_result};
use mcpl_protocol::toolsets::{EndedRecord, ToolsetsListResult};
use mcpl_protocol::{Id, Message, Response};
use mcpl_transport::{ClientOptions, Inbound, Principal, memory};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;

/// How long the truth's connection waits for an answer.
const ANSWER_LIMIT: Duration = Duration::from_secs(20);

/// How many times a remote truth's connection is tried.
pub const CONNECT_TRIES: u32 = 20;

/// Where the truth is read.
#[derive(Clone)]
pub enum Source {
    /// The arcade in this process: a connection in memory.
    Local(Arcade),
    /// The arcade behind a WebSocket URL (each player's name its token).
    Remote(String),
}

impl From<&Arcade> for Source {
    fn from(a: &Arcade) -> Self {
        Source::Local(a.clone())
    }
}

/// (name, instance).
pub type Key = (String, Option<String>);

/// What the server says is so for one principal.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Truth {
    /// Open toolsets and instances, as (toolset, instance).
    pub open: BTreeSet<Key>,
    /// Visible dynamic tools, as (tool, instance).
    pub visible: BTreeSet<Key>,
    /// The ended records.
    pub ended: Vec<EndedRecord>,
}

/// Why the truth could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TruthError {
    /// The server answered a request with an error.
    #[error("{method} was refused: {message}")]
    Refused {
        /// The request.
        method: &'static str,
        /// The server's message.
        message: String,
    },
    /// The server's answer does not decode.
    #[error("{method}'s result does not decode: {error}")]
    BadResult {
        /// The request.
        method: &'static str,
        /// Why.
        error: String,
    },
    /// The statement carries no hints (§4.3 says it always does).
    #[error("the toolsets/list result carries no mcpl/hints statement")]
    NoStatement,
    /// The connection closed or an answer did not come.
    #[error("the connection closed or {0} got no answer in time")]
    NoAnswer(&'static str),
}

/// Reads the truth for the named principal.
pub async fn read(source: &Source, principal: &str) -> Result<Truth, TruthError> {
    let client = match source {
        Source::Local(arcade) => {
            let (client, conn) = memory::pair(Principal::Named(principal.to_owned()), true);
            arcade.serve(conn);
            client
        }
        Source::Remote(url) => {
            let opts = ClientOptions {
                token: Some(principal.to_owned()),
                ..Default::default()
            };
            let mut tries = 0;
            loop {
                match mcpl_transport::connect(url, &opts).await {
                    Ok(c) => break c,
                    Err(_) if tries + 1 < CONNECT_TRIES => {
                        tries += 1;
                        // No owner just then (a takeover): try again shortly.
                        tokio::time::sleep(Duration::from_millis(250)).await;
                    }
                    Err(_) => return Err(TruthError::NoAnswer("the connection")),
                }
            }
        }
    };
    let mut c = Raw {
        out: client.outbound,
        inbound: client.inbound,
        next: 1,
    };
    c.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25",
               "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true}}},
               "clientInfo": {"name": "sim-truth", "version": env!("CARGO_PKG_VERSION")}}),
    )
    .await?;
    c.notify("notifications/initialized").await?;
    c.request(
        "featureSets/update",
        json!({"effectiveCapabilities": ["tools"]}),
    )
    .await?;
    let list = c.request("toolsets/list", json!({})).await?;
    let list: ToolsetsListResult = decode_result(&list).map_err(|e| TruthError::BadResult {
        method: "toolsets/list",
        error: e.to_string(),
    })?;
    let hints = list.meta.hints.ok_or(TruthError::NoStatement)?;
    Ok(Truth {
        open: list
            .open
            .into_iter()
            .map(|o| (o.toolset, o.instance))
            .collect(),
        visible: hints
            .entries
            .tools
            .into_iter()
            .filter(|t| t.visible == Some(true))
            .map(|t| (t.name, t.instance))
            .collect(),
        ended: list.ended,
    })
}

struct Raw {
    out: mcpl_transport::Outbound,
    inbound: mcpl_transport::Incoming,
    next: i64,
}

impl Raw {
    async fn send(&self, v: Value, method: &'static str) -> Result<(), TruthError> {
        let m = Message::from_value(v).map_err(|e| TruthError::BadResult {
            method,
            error: e.to_string(),
        })?;
        self.out
            .send(m)
            .await
            .map_err(|_| TruthError::NoAnswer(method))
    }

    async fn notify(&self, method: &'static str) -> Result<(), TruthError> {
        self.send(json!({"jsonrpc": "2.0", "method": method}), method)
            .await
    }

    async fn request(
        &mut self,
        method: &'static str,
        params: Value,
    ) -> Result<Box<RawValue>, TruthError> {
        let id = self.next;
        self.next += 1;
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            method,
        )
        .await?;
        let wait = async {
            loop {
                match self.inbound.recv().await {
                    None => return Err(TruthError::NoAnswer(method)),
                    Some(Inbound::Message {
                        message:
                            Message::Response(Response {
                                id: Some(Id::Number(n)),
                                outcome,
                            }),
                        ..
                    }) if n == id => {
                        return outcome.map_err(|e| TruthError::Refused {
                            method,
                            message: e.message,
                        });
                    }
                    Some(_) => {}
                }
            }
        };
        tokio::time::timeout(ANSWER_LIMIT, wait)
            .await
            .map_err(|_| TruthError::NoAnswer(method))?
    }
}
