//! With the `testkit` feature: one end of a [`Connection`] as a [`Link`] of the tests' one
//! raw peer (`mcpl_testkit::Peer`), so a suite talks to a server or a host through any
//! transport in exact JSON. [`TestEnd::of`] takes the end of a real connection (stdio,
//! WebSocket, Streamable HTTP, a [`memory`](crate::memory) pair); [`TestEnd::raw_pair`]
//! builds a connection whose other end the test feeds directly, to hand the side under
//! test what only a transport produces (undecodable bytes, an oversized message).

use crate::{Connection, ConnectionInfo, Inbound, Outbound, StreamId};
use mcpl_protocol::Message;
use mcpl_testkit::{Closed, Link, Received};
use serde_json::Value;
use tokio::sync::mpsc;

/// The raw peer on a [`TestEnd`].
pub type TestPeer = mcpl_testkit::Peer<TestEnd>;

enum Writer {
    Conn(Outbound),
    Raw(mpsc::Sender<Inbound>),
    Closed,
}

enum Reader {
    Conn(crate::Incoming),
    Raw(mpsc::Receiver<Message>),
}

/// The test's end of a connection. See the module docs.
pub struct TestEnd {
    writer: Writer,
    reader: Reader,
    info: Option<ConnectionInfo>,
    last_stream: Option<StreamId>,
}

impl TestEnd {
    /// The test's end of `conn`, a connection the other side serves.
    pub fn of(conn: Connection) -> Self {
        TestEnd {
            writer: Writer::Conn(conn.outbound),
            reader: Reader::Conn(conn.inbound),
            info: Some(conn.info),
            last_stream: None,
        }
    }

    /// The raw peer on `conn`.
    pub fn peer(conn: Connection) -> TestPeer {
        mcpl_testkit::Peer::new(Self::of(conn))
    }

    /// A connection described by `info` for the side under test, and the test's end of
    /// it, which writes straight into that side's inbound channel.
    pub fn raw_pair(info: ConnectionInfo) -> (Connection, TestEnd) {
        let (to_tested, tested_in) = mpsc::channel(64);
        let (tested_out, from_tested) = mpsc::channel(64);
        let conn = Connection {
            info,
            outbound: Outbound::new(tested_out),
            inbound: tested_in.into(),
        };
        let end = TestEnd {
            writer: Writer::Raw(to_tested),
            reader: Reader::Raw(from_tested),
            info: None,
            last_stream: None,
        };
        (conn, end)
    }

    /// What the transport says about the connection (not known on a raw pair's end).
    pub fn info(&self) -> Option<&ConnectionInfo> {
        self.info.as_ref()
    }

    /// The stream the last thing read arrived on (Streamable HTTP tells them apart).
    pub fn last_stream(&self) -> Option<StreamId> {
        self.last_stream
    }

    /// Hands the other side `item` as its transport would (a raw pair's end only); `Err`
    /// once it stopped reading.
    pub async fn deliver(&mut self, item: Inbound) -> Result<(), String> {
        match &self.writer {
            Writer::Raw(tx) => tx
                .send(item)
                .await
                .map_err(|_| "the other side stopped reading".to_owned()),
            _ => panic!("only a raw pair's end hands over what a transport produces"),
        }
    }

    /// Hands the other side `bytes` as its transport would: decoded, or as
    /// [`Inbound::Malformed`] (a raw pair's end only).
    pub async fn deliver_bytes(&mut self, bytes: &[u8]) -> Result<(), String> {
        let item = match Message::decode(bytes) {
            Ok(message) => Inbound::Message {
                stream: StreamId(0),
                message,
            },
            Err(error) => Inbound::Malformed {
                stream: StreamId(0),
                error,
            },
        };
        self.deliver(item).await
    }

    /// Closes the writing side: the other side's inbound ends; what it still writes can be
    /// read.
    pub fn close_write(&mut self) {
        self.writer = Writer::Closed;
    }
}

impl Link for TestEnd {
    async fn send(&mut self, message: Value) -> Result<(), String> {
        let message = Message::from_value(message.clone())
            .map_err(|e| format!("not a JSON-RPC message ({e}): {message}"))?;
        match &self.writer {
            Writer::Conn(out) => out.send(message).await.map_err(|e| e.to_string()),
            Writer::Raw(tx) => tx
                .send(Inbound::Message {
                    stream: StreamId(0),
                    message,
                })
                .await
                .map_err(|_| "the other side stopped reading".to_owned()),
            Writer::Closed => Err("this end's writing side is closed".to_owned()),
        }
    }

    async fn next(&mut self) -> Received {
        let message = match &mut self.reader {
            Reader::Raw(rx) => match rx.recv().await {
                None => return Received::Closed(Closed::Dropped),
                Some(message) => message,
            },
            Reader::Conn(rx) => match rx.recv().await {
                None => return Received::Closed(Closed::Dropped),
                Some(Inbound::Message { stream, message }) => {
                    self.last_stream = Some(stream);
                    message
                }
                Some(Inbound::Malformed { stream, error, .. }) => {
                    self.last_stream = Some(stream);
                    return Received::Unreadable(error.to_string());
                }
                Some(Inbound::TooLarge {
                    stream,
                    size,
                    limit,
                }) => {
                    self.last_stream = Some(stream);
                    return Received::Unreadable(format!(
                        "a message of {size} bytes, over the limit of {limit}"
                    ));
                }
            },
        };
        match serde_json::to_value(&message) {
            Ok(v) => Received::Message(v),
            Err(e) => Received::Unreadable(e.to_string()),
        }
    }
}
