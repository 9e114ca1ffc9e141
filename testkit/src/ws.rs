//! One end of a WebSocket carrying one JSON-RPC message per text frame.
//!
//! [`Peer::connect`] is a client (a host, to test a server); [`Listener::accept`] gives the
//! server side of a connection a host made (a server, to test a host). Either way the test
//! writes exact JSON ([`Peer::send`]) or exact text ([`Peer::send_text`]) and reads exactly
//! what the other side wrote. Messages a test skips over while waiting for another stay
//! queued ([`Peer::unread`]).

use crate::{LIMIT, msg};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::net::SocketAddr;
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message as Frame};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

enum Stream {
    Client(WebSocketStream<MaybeTlsStream<TcpStream>>),
    Server(WebSocketStream<TcpStream>),
}

/// What ended a connection, as this end saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Closed {
    /// A close frame with this code and reason.
    Frame(u16, String),
    /// The TCP connection ended without a close frame.
    Dropped,
}

/// One end of a WebSocket, speaking raw JSON.
pub struct Peer {
    stream: Stream,
    unread: VecDeque<Value>,
    next_id: i64,
    log: Vec<Value>,
}

impl Peer {
    /// Connects to `url` as a client, with a bearer `token` when given.
    pub async fn connect(url: &str, token: Option<&str>) -> Peer {
        let auth = token.map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> = auth
            .as_deref()
            .map(|a| vec![("Authorization", a)])
            .unwrap_or_default();
        Self::connect_with(url, &headers)
            .await
            .expect("the server accepts the connection")
    }

    /// Connects to `url` with these request headers; the handshake's failure is returned.
    pub async fn connect_with(url: &str, headers: &[(&str, &str)]) -> Result<Peer, WsError> {
        let mut request = url.into_client_request()?;
        for (name, value) in headers {
            let name: tokio_tungstenite::tungstenite::http::HeaderName =
                name.parse().expect("a header name");
            request
                .headers_mut()
                .insert(name, HeaderValue::from_str(value).expect("a header value"));
        }
        let (ws, _) = tokio_tungstenite::connect_async(request).await?;
        Ok(Peer::new(Stream::Client(ws)))
    }

    fn new(stream: Stream) -> Peer {
        Peer {
            stream,
            unread: VecDeque::new(),
            next_id: 1,
            log: Vec::new(),
        }
    }

    async fn send_frame(&mut self, frame: Frame) -> Result<(), WsError> {
        match &mut self.stream {
            Stream::Client(ws) => ws.send(frame).await,
            Stream::Server(ws) => ws.send(frame).await,
        }
    }

    async fn next_frame(&mut self) -> Option<Result<Frame, WsError>> {
        match &mut self.stream {
            Stream::Client(ws) => ws.next().await,
            Stream::Server(ws) => ws.next().await,
        }
    }

    /// Writes `v` as one text frame.
    pub async fn send(&mut self, v: &Value) {
        self.send_text(&v.to_string()).await;
    }

    /// Writes `text` as one text frame, whatever it holds.
    pub async fn send_text(&mut self, text: &str) {
        self.send_frame(Frame::text(text.to_owned()))
            .await
            .expect("the connection takes the frame");
    }

    /// Sends a request with the next id and returns that id.
    pub async fn send_request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.send(&msg::request(id.clone(), method, params)).await;
        id
    }

    /// Sends a request and returns its response; messages read meanwhile stay unread.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params).await;
        self.next_where(|v| msg::is_response(v) && v["id"] == id)
            .await
    }

    /// The next message read (an unread one first). Fails the test past [`LIMIT`] or when
    /// the connection ends.
    pub async fn recv(&mut self) -> Value {
        if let Some(v) = self.unread.pop_front() {
            return v;
        }
        match self.read().await {
            Ok(v) => v,
            Err(closed) => panic!("the connection ended ({closed:?}) while a message was awaited"),
        }
    }

    /// Reads the next message from the wire, or how the connection ended.
    async fn read(&mut self) -> Result<Value, Closed> {
        loop {
            let frame = tokio::time::timeout(LIMIT, self.next_frame())
                .await
                .expect("no message within the limit");
            match frame {
                Some(Ok(Frame::Text(t))) => {
                    let v: Value = serde_json::from_str(t.as_str()).unwrap_or_else(|e| {
                        panic!("the peer wrote a frame that is not JSON ({e}): {t}")
                    });
                    self.log.push(v.clone());
                    return Ok(v);
                }
                Some(Ok(Frame::Close(c))) => {
                    return Err(c.map_or(Closed::Dropped, |CloseFrame { code, reason }| {
                        Closed::Frame(code.into(), reason.to_string())
                    }));
                }
                Some(Ok(_)) => continue, // ping, pong, binary: not messages
                Some(Err(_)) | None => return Err(Closed::Dropped),
            }
        }
    }

    /// The next message matching `pred`; those before it stay unread, in order.
    pub async fn next_where(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.unread.iter().position(&pred) {
            return self.unread.remove(i).expect("present");
        }
        loop {
            let v = match self.read().await {
                Ok(v) => v,
                Err(closed) => {
                    panic!("the connection ended ({closed:?}) while a message was awaited")
                }
            };
            if pred(&v) {
                return v;
            }
            self.unread.push_back(v);
        }
    }

    /// The next request (or notification) of `method`.
    pub async fn expect_request(&mut self, method: &str) -> Value {
        self.next_where(|v| msg::is_method(v, method)).await
    }

    /// Answers `request` with `result`.
    pub async fn reply(&mut self, request: &Value, result: Value) {
        self.send(&msg::result(&request["id"], result)).await;
    }

    /// Reads until the connection ends and says how (messages read meanwhile are kept).
    pub async fn closed(&mut self) -> Closed {
        loop {
            match self.read().await {
                Ok(v) => self.unread.push_back(v),
                Err(c) => return c,
            }
        }
    }

    /// Messages read but not yet taken.
    pub fn unread(&self) -> &VecDeque<Value> {
        &self.unread
    }

    /// Every message read on this connection, in order.
    pub fn log(&self) -> &[Value] {
        &self.log
    }

    /// How many messages of `method` were read.
    pub fn count(&self, method: &str) -> usize {
        self.log
            .iter()
            .filter(|v| msg::is_method(v, method))
            .count()
    }
}

/// A WebSocket listener on 127.0.0.1 for a host to connect to; each accepted connection
/// is a [`Peer`] on the server side. Any path, any headers are accepted.
pub struct Listener {
    tcp: TcpListener,
}

impl Listener {
    /// Binds a fresh port on 127.0.0.1.
    pub async fn bind() -> Listener {
        Listener {
            tcp: TcpListener::bind("127.0.0.1:0").await.expect("bind"),
        }
    }

    /// Its address.
    pub fn addr(&self) -> SocketAddr {
        self.tcp.local_addr().expect("bound")
    }

    /// The URL a host connects to.
    pub fn url(&self) -> String {
        format!("ws://{}/mcp", self.addr())
    }

    /// The next connection, its WebSocket handshake done.
    pub async fn accept(&self) -> Peer {
        let (tcp, _) = tokio::time::timeout(LIMIT, self.tcp.accept())
            .await
            .expect("a connection within the limit")
            .expect("accept");
        let ws = tokio_tungstenite::accept_async(tcp)
            .await
            .expect("a WebSocket handshake");
        Peer::new(Stream::Server(ws))
    }
}
