//! A WebSocket carrying one JSON-RPC message per text frame: [`WsLink`], and [`Peer`] on
//! it.
//!
//! [`Peer::connect`] is a client (a host, to test a server); [`Listener::accept`] gives the
//! server side of a connection a host made (a server, to test a host). Besides exact JSON
//! a test can write exact text ([`Peer::send_text`]), which need not be JSON at all.

pub use crate::link::Closed;
use crate::link::{Link, Received};
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use std::net::SocketAddr;
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message as Frame};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::LIMIT;

/// A [`crate::Peer`] on a WebSocket.
pub type Peer = crate::Peer<WsLink>;

/// One end of a WebSocket, one JSON message per text frame.
pub enum WsLink {
    /// The client end. Both ends are boxed: with tungstenite's rustls feature on in the
    /// workspace, `MaybeTlsStream` holds a TLS connection's state inline, and the two
    /// streams' sizes differ by more than a kilobyte.
    Client(Box<WebSocketStream<MaybeTlsStream<TcpStream>>>),
    /// The server end.
    Server(Box<WebSocketStream<TcpStream>>),
}

impl WsLink {
    async fn send_frame(&mut self, frame: Frame) -> Result<(), WsError> {
        match self {
            WsLink::Client(ws) => ws.send(frame).await,
            WsLink::Server(ws) => ws.send(frame).await,
        }
    }

    async fn next_frame(&mut self) -> Option<Result<Frame, WsError>> {
        match self {
            WsLink::Client(ws) => ws.next().await,
            WsLink::Server(ws) => ws.next().await,
        }
    }
}

impl Link for WsLink {
    async fn send(&mut self, message: Value) -> Result<(), String> {
        self.send_frame(Frame::text(message.to_string()))
            .await
            .map_err(|e| e.to_string())
    }

    async fn next(&mut self) -> Received {
        loop {
            match self.next_frame().await {
                Some(Ok(Frame::Text(t))) => {
                    return match serde_json::from_str(t.as_str()) {
                        Ok(v) => Received::Message(v),
                        Err(e) => {
                            Received::Unreadable(format!("a frame that is not JSON ({e}): {t}"))
                        }
                    };
                }
                Some(Ok(Frame::Close(c))) => {
                    return Received::Closed(c.map_or(
                        Closed::Dropped,
                        |CloseFrame { code, reason }| {
                            Closed::Frame(code.into(), reason.to_string())
                        },
                    ));
                }
                Some(Ok(_)) => continue, // ping, pong, binary: not messages
                Some(Err(_)) | None => return Received::Closed(Closed::Dropped),
            }
        }
    }
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
        Ok(Peer::new(WsLink::Client(Box::new(ws))))
    }

    /// Writes `text` as one text frame, whatever it holds.
    pub async fn send_text(&mut self, text: &str) {
        self.link_mut()
            .send_frame(Frame::text(text.to_owned()))
            .await
            .expect("the connection takes the frame");
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
        Peer::new(WsLink::Server(Box::new(ws)))
    }
}
