//! An in-process connection through which the arcade acts **as a principal**: the lobby's
//! `challenge` opens a game for the challenger, and `decline` opens the invitation for the
//! invitee only to refuse it.
//!
//! Why: the SDK starts an instance only on a host's `toolsets/open`, and lets a table
//! invite others only from inside an instance; a plain tool handler (the lobby's) can
//! neither open an instance for its caller nor reach a table. So the lobby connects to the
//! server over an in-memory pair under the caller's principal, does the handshake as a
//! host advertising `toolHints` and granting only `tools` (so it is never pushed to), and
//! sends `toolsets/open`. The principal's real connections see the result as they see any
//! change made on another of their connections (§4.6): as hint changes, explained by the
//! table's event. The connection closes when dropped; the server keeps the principal's
//! toolsets across connections, so nothing it opened ends then.

use actix::ArbiterHandle;
use mcpl_protocol::jsonrpc::{ErrorObject, Id, Message, Response};
use mcpl_server::Server;
use mcpl_transport::{Inbound, Outbound, Principal, memory};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::mpsc;

/// How long the arcade waits for its own server to answer.
const ANSWER_LIMIT: Duration = Duration::from_secs(30);

/// Why a loopback request got no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LoopbackError {
    /// The server answered with an error (a refused open: the refusal says why).
    #[error("{}", .0.message)]
    Refused(ErrorObject),
    /// The server closed the connection.
    #[error("the arcade's own connection closed")]
    Closed,
    /// The server did not answer in time.
    #[error("the arcade did not answer its own request within {0:?}")]
    TimedOut(Duration),
}

/// A connection of the arcade's own, acting as one principal. See the module docs.
pub struct Loopback {
    out: Outbound,
    inbound: mpsc::Receiver<Inbound>,
    next: i64,
}

impl Loopback {
    /// Connects to `server` as `principal` (its session runs on `arbiter`) and completes
    /// the handshake.
    pub async fn connect(
        server: &Server,
        arbiter: &ArbiterHandle,
        principal: Principal,
    ) -> Result<Self, LoopbackError> {
        let (client, conn) = memory::pair(principal, true);
        server.serve_in(arbiter, conn);
        let mut link = Loopback {
            out: client.outbound,
            inbound: client.inbound,
            next: 1,
        };
        link.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25",
                   "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true}}},
                   "clientInfo": {"name": "mcpl-arcade-lobby", "version": env!("CARGO_PKG_VERSION")}}),
        )
        .await?;
        link.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        // `tools` only: the lobby reads results, never pushes.
        link.request(
            "featureSets/update",
            json!({"effectiveCapabilities": ["tools"]}),
        )
        .await?;
        Ok(link)
    }

    async fn send(&self, v: Value) -> Result<(), LoopbackError> {
        // Our own messages are well-formed by construction; a failure is the link's.
        let m = Message::from_value(v).map_err(|_| LoopbackError::Closed)?;
        self.out.send(m).await.map_err(|_| LoopbackError::Closed)
    }

    /// Sends a request and returns its result, skipping whatever else the server writes
    /// (hint changes, notifications).
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, LoopbackError> {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        let wait = async {
            loop {
                match self.inbound.recv().await {
                    None => return Err(LoopbackError::Closed),
                    Some(Inbound::Message {
                        message:
                            Message::Response(Response {
                                id: Some(Id::Number(n)),
                                outcome,
                            }),
                        ..
                    }) if n == id => return outcome.map_err(LoopbackError::Refused),
                    Some(_) => {}
                }
            }
        };
        tokio::time::timeout(ANSWER_LIMIT, wait)
            .await
            .map_err(|_| LoopbackError::TimedOut(ANSWER_LIMIT))?
    }

    /// `toolsets/open`.
    pub async fn open(
        &mut self,
        toolset: &str,
        instance: Option<&str>,
        options: Option<Value>,
    ) -> Result<Value, LoopbackError> {
        let mut params = json!({"toolset": toolset});
        if let Some(i) = instance {
            params["instance"] = json!(i);
        }
        if let Some(o) = options {
            params["options"] = o;
        }
        self.request("toolsets/open", params).await
    }
}
