//! [`ConnLink`]: an `mcpl_transport` [`Connection`] (stdio, WebSocket, Streamable HTTP, or
//! an in-memory pair) as a [`Link`] of the one raw peer, [`mcpl_testkit::Peer`]. The peer
//! writes and reads JSON; this turns it into the transport's messages and back.

use mcpl_protocol::Message;
use mcpl_testkit::{Closed, Link, Received};
use mcpl_transport::{Connection, ConnectionInfo, Inbound, Outbound, StreamId};
use serde_json::Value;
use tokio::sync::mpsc;

/// A raw peer on an `mcpl_transport` connection.
pub type ConnPeer = mcpl_testkit::Peer<ConnLink>;

/// One end of an `mcpl_transport` connection carrying JSON.
pub struct ConnLink {
    /// What the transport says about the connection.
    pub info: ConnectionInfo,
    out: Outbound,
    inbound: mpsc::Receiver<Inbound>,
    last_stream: Option<StreamId>,
}

impl ConnLink {
    /// The link of `conn`.
    pub fn new(conn: Connection) -> Self {
        ConnLink {
            info: conn.info,
            out: conn.outbound,
            inbound: conn.inbound,
            last_stream: None,
        }
    }

    /// A raw peer on `conn`.
    pub fn peer(conn: Connection) -> ConnPeer {
        mcpl_testkit::Peer::new(Self::new(conn))
    }

    /// The stream the last thing read arrived on (Streamable HTTP tells them apart).
    pub fn last_stream(&self) -> Option<StreamId> {
        self.last_stream
    }
}

impl Link for ConnLink {
    async fn send(&mut self, message: Value) -> Result<(), String> {
        let m = Message::from_value(message.clone())
            .map_err(|e| format!("not a JSON-RPC message ({e}): {message}"))?;
        self.out.send(m).await.map_err(|e| e.to_string())
    }

    async fn next(&mut self) -> Received {
        match self.inbound.recv().await {
            None => Received::Closed(Closed::Dropped),
            Some(Inbound::Message { stream, message }) => {
                self.last_stream = Some(stream);
                match serde_json::to_value(&message) {
                    Ok(v) => Received::Message(v),
                    Err(e) => Received::Unreadable(e.to_string()),
                }
            }
            Some(Inbound::Malformed { stream, error, .. }) => {
                self.last_stream = Some(stream);
                Received::Unreadable(error.to_string())
            }
            Some(Inbound::TooLarge {
                stream,
                size,
                limit,
                ..
            }) => {
                self.last_stream = Some(stream);
                Received::Unreadable(format!(
                    "a message of {size} bytes, over the limit of {limit}"
                ))
            }
        }
    }
}
