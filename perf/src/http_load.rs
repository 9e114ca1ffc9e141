//! The Streamable HTTP rows' load generator: keep-alive HTTP/1.1 connections, each a lane
//! that POSTs one light call, reads its answer, and POSTs the next — as a load tool (wrk,
//! oha) drives an HTTP server: the request's head written once per session, answers' heads
//! and chunk sizes read with `httparse`.
//!
//! Why not mcpl-transport's client, as the WebSocket rows use: on a machine whose CPUs are
//! taken (a build beside), every figure costs what its server costs *plus what the client
//! costs*, and a client shared by both sides of a ratio pulls the ratio towards 1. Ours
//! does a host's work (a GET stream, a pool, channels to and from the connection, every
//! message decoded whole, hyper's connection task); for measuring servers the client
//! should cost as little as it can, and cost every server alike. The WebSocket rows keep
//! the transport's client: the latency row judges ours against an echo *over the same
//! client code* (issue #18).
//!
//! A session ([`HttpSession::open`]) is what a host makes (MCP 2025-11-25, "Transports /
//! Streamable HTTP": "Session Management" and "Protocol Version Header"): `initialize` (the
//! MCPL capabilities of `client.rs`), its `Mcp-Session-Id` if the server gives one, then
//! `notifications/initialized`; every later request carries the session id, the
//! negotiated `MCP-Protocol-Version` and the bearer token; every POST accepts both
//! `application/json` and `text/event-stream`. It has `lanes` connections (the
//! in-flight depth: HTTP/1.1 answers one request at a time on a connection). An answer
//! may come as `application/json` or as an SSE stream (rmcp's default), with a length or
//! chunked; either way it is read whole, at most [`MAX_BODY`] bytes (a head at most
//! [`MAX_HEAD`]), and checked as the transport client's reading would
//! (`client::answer_in`). A connection the server closes (or says it will) is made
//! again before the next request; a request it was closed under is failed, never sent
//! again (RFC 9110 §9.2.2: a POST is not idempotent).
//!
//! A modern client ([`HttpSession::modern`], the `modern` row) makes no handshake and has
//! no session (MCP 2026-07-28, "Transports / Streamable HTTP"): every POST carries
//! `MCP-Protocol-Version: 2026-07-28`, `Mcp-Method` and `Mcp-Name` mirroring its body, and
//! the body's `_meta` the version, the client's info and capabilities
//! (`client::modern_light_call`).

use super::PerfError;
use super::client::{self, Answer};
use eventsource_stream::Eventsource as _;
use futures_util::StreamExt as _;
use mcpl_protocol::jsonrpc::{Id, Message, Notification, Request as RpcRequest};
use mcpl_protocol::mcp::{Empty, LATEST_PROTOCOL_VERSION};
use mcpl_protocol::method::{Initialize, Initialized};
use mcpl_protocol::modern::MODERN_PROTOCOL_VERSION;
use serde::Deserialize;
use std::io::{self, Write as _};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// The most of an answer's body read; a bigger one fails its call.
pub const MAX_BODY: usize = 1 << 20;
/// The most of an answer's head read; a bigger one fails its call.
pub const MAX_HEAD: usize = 64 << 10;
/// How long a session's handshake may take before it counts as failed.
pub const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// The most header lines an answer's head may have.
const MAX_HEADERS: usize = 64;

/// Why a lane's request failed.
#[derive(Debug, thiserror::Error)]
pub enum LaneError {
    /// The TCP connection could not be made, or failed.
    #[error("I/O: {0}")]
    Io(#[from] io::Error),
    /// The server closed the connection before it answered.
    #[error("the connection closed before an answer")]
    Closed,
    /// The answer is not HTTP/1.1 as RFC 9112 writes it, or is over a bound.
    #[error("a bad answer: {0}")]
    Bad(&'static str),
}

/// What every request of a session carries: the request's head but its length.
#[derive(Debug, Clone)]
pub struct Headers {
    addr: String,
    path: String,
    token: String,
    session: Option<String>,
    version: String,
    /// Each request is a modern one (MCP 2026-07-28): no session, `Mcp-Method` and
    /// `Mcp-Name` in its head, `_meta` in its body.
    modern: bool,
    /// The head, written from the above ([`Headers::write_head`]).
    head: Vec<u8>,
}

impl Headers {
    /// A session's headers: `addr` `HOST:PORT`, `path` the endpoint's path and query.
    fn new(addr: &str, path: &str, token: &str) -> Headers {
        let mut h = Headers {
            addr: addr.to_owned(),
            path: path.to_owned(),
            token: token.to_owned(),
            session: None,
            version: LATEST_PROTOCOL_VERSION.to_owned(),
            modern: false,
            head: Vec::new(),
        };
        h.write_head();
        h
    }

    /// The server's `HOST:PORT`.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Writes the head again from the fields.
    fn write_head(&mut self) {
        let mut head = format!(
            "POST {} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\nauthorization: Bearer {}\r\n\
             mcp-protocol-version: {}\r\n",
            self.path, self.addr, self.token, self.version
        );
        if let Some(s) = &self.session {
            head.push_str(&format!("mcp-session-id: {s}\r\n"));
        }
        if self.modern {
            // Every request here is the light call: its method and name, mirrored.
            head.push_str(&format!(
                "mcp-method: tools/call\r\nmcp-name: {}\r\n",
                client::LIGHT_TOOL
            ));
        }
        self.head = head.into_bytes();
    }
}

/// A header value is written in a request's head as it is: it must be visible ASCII or
/// spaces (RFC 9110 §5.5), or the head would be broken.
fn header_safe(value: &str) -> bool {
    value
        .bytes()
        .all(|b| b == b' ' || b == b'\t' || (0x21..0x7f).contains(&b))
}

/// An answer, read whole.
#[derive(Debug)]
pub struct Reply {
    /// Its status code.
    pub status: u16,
    /// Whether it is an SSE stream.
    pub sse: bool,
    /// Its `Mcp-Session-Id`.
    pub session: Option<String>,
    /// Its body, de-chunked.
    pub body: Vec<u8>,
    /// Its `mcpl-served-by` (an arcade node's name: whose arcade served it), if any.
    pub served_by: Option<String>,
    /// Its `mcpl-landed-on` (an arcade node's name: whose front it reached), if any.
    pub landed_on: Option<String>,
}

/// One keep-alive connection.
pub struct Lane {
    tcp: TcpStream,
    /// What was read and not yet taken.
    buf: Vec<u8>,
    /// The request being written (kept for its capacity).
    out: Vec<u8>,
    /// The server closed the connection, or said it would.
    closed: bool,
}

/// An initialized session and its lanes.
pub struct HttpSession {
    /// What each request carries.
    pub headers: Headers,
    /// Its connections, `lanes` of them.
    pub lanes: Vec<Lane>,
}

/// The members of an `initialize` result read here.
#[derive(Deserialize)]
struct InitResult {
    #[serde(rename = "protocolVersion")]
    protocol_version: Option<String>,
}

/// How a call on a lane ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Answered, rightly or not (`client::Answer`), with its id.
    Answered(Answer),
    /// A 2xx with no answer in it, an answer with no numeric id, or an error status.
    NoAnswer,
    /// The connection failed before an answer came, or the answer was over a bound.
    Failed,
}

fn connect_error(url: &str, reason: impl ToString) -> PerfError {
    PerfError::Connect {
        url: url.to_owned(),
        reason: reason.to_string(),
    }
}

impl HttpSession {
    /// Opens a session at `url` (`http://HOST:PORT/PATH`) presenting `token`, with `lanes`
    /// connections (at least one); the first carries the handshake, which may take at most
    /// [`HANDSHAKE_TIMEOUT`].
    pub async fn open(url: &str, token: &str, lanes: usize) -> Result<HttpSession, PerfError> {
        tokio::time::timeout(HANDSHAKE_TIMEOUT, Self::open_now(url, token, lanes))
            .await
            .map_err(|_| PerfError::Stalled("a Streamable HTTP handshake got no answer"))?
    }

    /// A modern client of `url` presenting `token`, with `lanes` connections: no
    /// handshake, no session (module docs).
    pub async fn modern(url: &str, token: &str, lanes: usize) -> Result<HttpSession, PerfError> {
        let mut headers = Self::headers(url, token)?;
        headers.modern = true;
        headers.version = MODERN_PROTOCOL_VERSION.to_owned();
        headers.write_head();
        let mut all = Vec::with_capacity(lanes.max(1));
        for _ in 0..lanes.max(1) {
            all.push(
                Lane::connect(&headers.addr)
                    .await
                    .map_err(|e| connect_error(url, e))?,
            );
        }
        Ok(HttpSession {
            headers,
            lanes: all,
        })
    }

    /// The headers for `url` and `token`, checked to be writable in a head.
    fn headers(url: &str, token: &str) -> Result<Headers, PerfError> {
        let Some(rest) = url.strip_prefix("http://") else {
            return Err(connect_error(url, "not an http:// URL"));
        };
        let (addr, path) = rest.find('/').map_or((rest, "/"), |i| rest.split_at(i));
        if !header_safe(addr) || !header_safe(path) || !header_safe(token) {
            return Err(connect_error(url, "a URL or token that cannot be a header"));
        }
        Ok(Headers::new(addr, path, token))
    }

    async fn open_now(url: &str, token: &str, lanes: usize) -> Result<HttpSession, PerfError> {
        let mut headers = Self::headers(url, token)?;
        let addr = headers.addr.clone();
        let addr = addr.as_str();
        let mut first = Lane::connect(addr)
            .await
            .map_err(|e| connect_error(url, e))?;
        // `initialize`: the session id comes in the answer's headers (none when the server
        // is stateless), the protocol version in its result.
        let init = RpcRequest::new::<Initialize>(Id::Number(-1), &client::initialize_params());
        let reply = first
            .post(&headers, Message::from(init).encode().as_bytes())
            .await
            .map_err(|e| connect_error(url, e))?;
        let message = (200..300)
            .contains(&reply.status)
            .then(|| texts(reply.sse, &reply.body))
            .and_then(|texts| texts.iter().find_map(|t| Message::decode_str(t).ok()));
        let result = match message {
            Some(Message::Response(r)) => r.result_value().map_err(|e| PerfError::Refused {
                method: "initialize".into(),
                reason: e.to_string(),
            })?,
            _ => return Err(PerfError::Closed("with no answer to initialize")),
        };
        headers.session = reply.session.filter(|s| header_safe(s));
        if let Ok(InitResult {
            protocol_version: Some(v),
        }) = serde_json::from_value(result)
            && header_safe(&v)
        {
            headers.version = v;
        }
        headers.write_head();
        let initialized = Notification::new::<Initialized>(&Empty::default());
        let reply = first
            .post(&headers, Message::from(initialized).encode().as_bytes())
            .await
            .map_err(|e| connect_error(url, e))?;
        if !(200..300).contains(&reply.status) {
            return Err(PerfError::Refused {
                method: "notifications/initialized".into(),
                reason: format!("HTTP {}", reply.status),
            });
        }
        let mut all = vec![first];
        for _ in 1..lanes.max(1) {
            all.push(
                Lane::connect(addr)
                    .await
                    .map_err(|e| connect_error(url, e))?,
            );
        }
        Ok(HttpSession {
            headers,
            lanes: all,
        })
    }
}

impl Lane {
    /// A new connection to `addr` (`HOST:PORT`), `TCP_NODELAY` set.
    pub async fn connect(addr: &str) -> Result<Lane, LaneError> {
        let tcp = TcpStream::connect(addr).await?;
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY refused");
        }
        Ok(Lane {
            tcp,
            buf: Vec::with_capacity(4096),
            out: Vec::with_capacity(1024),
            closed: false,
        })
    }

    /// POSTs `body` with `headers` and reads the answer whole. A connection the server
    /// closed (or said it would) after the last answer is made again first.
    pub async fn post(&mut self, headers: &Headers, body: &[u8]) -> Result<Reply, LaneError> {
        if self.closed {
            *self = Lane::connect(headers.addr()).await?;
        }
        self.out.clear();
        self.out.extend_from_slice(&headers.head);
        // Written into the kept buffer: no string made per call.
        let _ = write!(self.out, "content-length: {}\r\n\r\n", body.len());
        self.out.extend_from_slice(body);
        self.tcp.write_all(&self.out).await?;
        loop {
            let reply = self.read_reply().await?;
            // An interim answer (100 Continue) is followed by the real one.
            if !(100..200).contains(&reply.status) {
                return Ok(reply);
            }
        }
    }

    /// One light call with `id`: its outcome.
    pub async fn call(&mut self, headers: &Headers, id: i64) -> Outcome {
        let request = if headers.modern {
            client::modern_light_call(id)
        } else {
            client::light_call(id)
        }
        .encode();
        let Ok(reply) = self.post(headers, request.as_bytes()).await else {
            self.closed = true;
            return Outcome::Failed;
        };
        if reply.status != 200 {
            return Outcome::NoAnswer;
        }
        let answer = if reply.sse {
            texts(true, &reply.body)
                .iter()
                .find_map(|t| client::answer_in(t))
        } else {
            // The common case, read without a copy.
            std::str::from_utf8(&reply.body)
                .ok()
                .and_then(client::answer_in)
        };
        answer.map_or(Outcome::NoAnswer, Outcome::Answered)
    }

    /// Reads more into the buffer; the end of the stream is [`LaneError::Closed`].
    async fn fill(&mut self) -> Result<(), LaneError> {
        self.buf.reserve(4096);
        if self.tcp.read_buf(&mut self.buf).await? == 0 {
            self.closed = true;
            return Err(LaneError::Closed);
        }
        Ok(())
    }

    /// Reads one answer: its head, then its body by its length, its chunks, or (neither
    /// given) up to the end of the connection.
    async fn read_reply(&mut self) -> Result<Reply, LaneError> {
        let (taken, status, sse, session, length, chunked, close, nodes) = loop {
            let mut lines = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut head = httparse::Response::new(&mut lines);
            match head.parse(&self.buf) {
                Ok(httparse::Status::Complete(n)) => {
                    let status = head.code.unwrap_or(0);
                    let value = |name: &str| {
                        head.headers
                            .iter()
                            .find(|h| h.name.eq_ignore_ascii_case(name))
                            .and_then(|h| std::str::from_utf8(h.value).ok())
                            .map(str::trim)
                    };
                    let sse =
                        value("content-type").is_some_and(|v| v.starts_with("text/event-stream"));
                    let session = value("mcp-session-id").map(str::to_owned);
                    let chunked = value("transfer-encoding")
                        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
                    let length = match value("content-length") {
                        None => None,
                        Some(v) => Some(
                            v.parse::<usize>()
                                .map_err(|_| LaneError::Bad("a Content-Length not a number"))?,
                        ),
                    };
                    let close =
                        value("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
                    let nodes = (
                        value(mcpl_games::arcade::node::SERVED_BY).map(str::to_owned),
                        value(mcpl_games::arcade::node::LANDED_ON).map(str::to_owned),
                    );
                    break (n, status, sse, session, length, chunked, close, nodes);
                }
                Ok(httparse::Status::Partial) if self.buf.len() < MAX_HEAD => self.fill().await?,
                Ok(httparse::Status::Partial) => {
                    return Err(LaneError::Bad("a head over the bound"));
                }
                Err(_) => return Err(LaneError::Bad("a malformed head")),
            }
        };
        self.buf.drain(..taken);
        // RFC 9112 §6.3: no body for 1xx, 204 and 304.
        let bodiless = (100..200).contains(&status) || status == 204 || status == 304;
        let body = if bodiless {
            Vec::new()
        } else if chunked {
            self.read_chunks().await?
        } else if let Some(n) = length {
            if n > MAX_BODY {
                return Err(LaneError::Bad("a body over the bound"));
            }
            while self.buf.len() < n {
                self.fill().await?;
            }
            self.buf.drain(..n).collect()
        } else {
            self.read_to_end().await?
        };
        self.closed |= close;
        Ok(Reply {
            status,
            sse,
            session,
            body,
            served_by: nodes.0,
            landed_on: nodes.1,
        })
    }

    /// A chunked body (RFC 9112 §7.1), trailers skipped.
    async fn read_chunks(&mut self) -> Result<Vec<u8>, LaneError> {
        let mut body = Vec::new();
        loop {
            let (n, size) = match httparse::parse_chunk_size(&self.buf) {
                Ok(httparse::Status::Complete(c)) => c,
                Ok(httparse::Status::Partial) if self.buf.len() < MAX_HEAD => {
                    self.fill().await?;
                    continue;
                }
                _ => return Err(LaneError::Bad("a malformed chunk size")),
            };
            let size = usize::try_from(size).unwrap_or(usize::MAX);
            if size == 0 {
                // The trailer section: header lines up to an empty one.
                loop {
                    if self.buf[n..].starts_with(b"\r\n") {
                        self.buf.drain(..n + 2);
                        return Ok(body);
                    }
                    if let Some(i) = self.buf[n..].windows(4).position(|w| w == b"\r\n\r\n") {
                        self.buf.drain(..n + i + 4);
                        return Ok(body);
                    }
                    if self.buf.len() > MAX_HEAD {
                        return Err(LaneError::Bad("trailers over the bound"));
                    }
                    self.fill().await?;
                }
            }
            if size > MAX_BODY - body.len() {
                return Err(LaneError::Bad("a body over the bound"));
            }
            while self.buf.len() < n + size + 2 {
                self.fill().await?;
            }
            if &self.buf[n + size..n + size + 2] != b"\r\n" {
                return Err(LaneError::Bad("a chunk not ended by CRLF"));
            }
            body.extend_from_slice(&self.buf[n..n + size]);
            self.buf.drain(..n + size + 2);
        }
    }

    /// A body delimited by the connection's end (RFC 9112 §6.3 rule 8).
    async fn read_to_end(&mut self) -> Result<Vec<u8>, LaneError> {
        loop {
            if self.buf.len() > MAX_BODY {
                return Err(LaneError::Bad("a body over the bound"));
            }
            match self.fill().await {
                Ok(()) => {}
                Err(LaneError::Closed) => return Ok(std::mem::take(&mut self.buf)),
                Err(e) => return Err(e),
            }
        }
    }
}

/// Each message's text in `body`: the body itself, or each SSE event's data.
pub(crate) fn texts(sse: bool, body: &[u8]) -> Vec<String> {
    if !sse {
        return String::from_utf8(body.to_vec())
            .map(|t| vec![t])
            .unwrap_or_default();
    }
    // The whole stream is here: its events are read at once.
    let events = futures_util::stream::iter([Ok::<_, std::convert::Infallible>(body.to_vec())]);
    let data = events
        .eventsource()
        .filter_map(|e| async move { e.ok().map(|e| e.data) });
    futures_util::FutureExt::now_or_never(data.collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    /// Reads one HTTP/1.1 request: its head (lower-cased) and its body.
    async fn request(tcp: &mut TcpStream) -> Option<(String, String)> {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let n = tcp.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8(buf[..end].to_vec()).ok()?.to_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map_or(0, |v| v.trim().parse().unwrap_or(0));
        while buf.len() < end + length {
            let n = tcp.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        let body = String::from_utf8(buf[end..end + length].to_vec()).ok()?;
        Some((head, body))
    }

    /// Writes a response with `status`, `headers` (each a whole line) and `body`.
    async fn respond(tcp: &mut TcpStream, status: &str, headers: &[&str], body: &str) {
        let mut text = format!("HTTP/1.1 {status}\r\ncontent-length: {}\r\n", body.len());
        for h in headers {
            text.push_str(h);
            text.push_str("\r\n");
        }
        text.push_str("\r\n");
        text.push_str(body);
        tcp.write_all(text.as_bytes()).await.expect("written");
    }

    /// Writes a chunked response: `body` in chunks of `size` bytes, then a trailer.
    async fn respond_chunked(tcp: &mut TcpStream, headers: &[&str], body: &str, size: usize) {
        let mut text = String::from("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n");
        for h in headers {
            text.push_str(h);
            text.push_str("\r\n");
        }
        text.push_str("\r\n");
        for chunk in body.as_bytes().chunks(size) {
            text.push_str(&format!("{:x}\r\n", chunk.len()));
            text.push_str(std::str::from_utf8(chunk).unwrap());
            text.push_str("\r\n");
        }
        text.push_str("0\r\nx-trailer: 1\r\n\r\n");
        tcp.write_all(text.as_bytes()).await.expect("written");
    }

    fn light_answer(id: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"ok"}}]}}}}"#
        )
    }

    /// A session's requests carry what `initialize` gave (its session id and protocol
    /// version) and the token; an answer is read from JSON or from an SSE stream.
    #[tokio::test]
    async fn a_session_carries_its_id_version_and_token_and_reads_json_or_sse() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let (mut tcp, _) = listener.accept().await.unwrap();
            let (head, body) = request(&mut tcp).await.expect("initialize");
            assert!(head.starts_with("post /mcp http/1.1"), "{head}");
            assert!(!head.contains("mcp-session-id"), "{head}");
            assert!(head.contains("accept: application/json, text/event-stream"));
            assert!(body.contains(r#""method":"initialize""#), "{body}");
            let result = r#"{"jsonrpc":"2.0","id":-1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"t","version":"1"}}}"#;
            let json = ["content-type: application/json", "mcp-session-id: s-1"];
            respond(&mut tcp, "200 OK", &json, result).await;
            let (head, body) = request(&mut tcp).await.expect("initialized");
            for line in [
                "mcp-session-id: s-1",
                "mcp-protocol-version: 2025-06-18",
                "authorization: bearer tok",
            ] {
                assert!(head.contains(line), "{line} in {head}");
            }
            assert!(body.contains("notifications/initialized"), "{body}");
            respond(&mut tcp, "202 Accepted", &[], "").await;
            // The second lane: its calls, one answered as JSON, one as SSE.
            let (mut second, _) = listener.accept().await.unwrap();
            let (head, body) = request(&mut second).await.expect("a call");
            assert!(head.contains("mcp-session-id: s-1"), "{head}");
            assert!(body.contains(r#""id":7"#), "{body}");
            respond(&mut second, "200 OK", &[json[0]], &light_answer("7")).await;
            let (_, body) = request(&mut second).await.expect("a call");
            assert!(body.contains(r#""id":8"#), "{body}");
            let sse = format!(
                ": primer\n\nid: 1\ndata:\n\nevent: message\ndata: {}\n\n",
                light_answer("8")
            );
            respond(
                &mut second,
                "200 OK",
                &["content-type: text/event-stream"],
                &sse,
            )
            .await;
            let (_, body) = request(&mut second).await.expect("a call");
            assert!(body.contains(r#""id":9"#), "{body}");
            let sse = format!("event: message\ndata: {}\n\n", light_answer("9"));
            respond_chunked(&mut second, &["content-type: text/event-stream"], &sse, 7).await;
            // The connection is still in step: one more after the chunked answer.
            let (_, body) = request(&mut second).await.expect("a call");
            assert!(body.contains(r#""id":10"#), "{body}");
            respond(&mut second, "200 OK", &[json[0]], &light_answer("10")).await;
        });
        let mut session = HttpSession::open(&url, "tok", 2).await.expect("opened");
        assert_eq!(session.lanes.len(), 2);
        let headers = session.headers.clone();
        let lane = &mut session.lanes[1];
        assert_eq!(
            lane.call(&headers, 7).await,
            Outcome::Answered(Answer::Ok(7))
        );
        assert_eq!(
            lane.call(&headers, 8).await,
            Outcome::Answered(Answer::Ok(8))
        );
        assert_eq!(
            lane.call(&headers, 9).await,
            Outcome::Answered(Answer::Ok(9)),
            "chunked"
        );
        assert_eq!(
            lane.call(&headers, 10).await,
            Outcome::Answered(Answer::Ok(10))
        );
        server.await.expect("the server saw what it should");
    }

    /// A server that closes under a call fails that call, and the lane's next call goes on
    /// a new connection; an error status, a body over the bound and a wrong answer are
    /// told apart.
    #[tokio::test]
    async fn a_closed_connection_fails_its_call_and_wrong_answers_are_told_apart() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let server = tokio::spawn(async move {
            let (mut tcp, _) = listener.accept().await.unwrap();
            request(&mut tcp).await.expect("a call");
            drop(tcp);
            let (mut tcp, _) = listener.accept().await.unwrap();
            request(&mut tcp).await.expect("a call");
            respond(&mut tcp, "500 Internal Server Error", &[], "no").await;
            request(&mut tcp).await.expect("a call");
            let wrong =
                r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"no"}]}}"#;
            respond(
                &mut tcp,
                "200 OK",
                &["content-type: application/json"],
                wrong,
            )
            .await;
            request(&mut tcp).await.expect("a call");
            let big = format!(r#"{{"pad":"{}"}}"#, "x".repeat(MAX_BODY));
            respond(
                &mut tcp,
                "200 OK",
                &["content-type: application/json"],
                &big,
            )
            .await;
        });
        let headers = Headers::new(&addr, "/mcp", "t");
        let mut lane = Lane::connect(&addr).await.unwrap();
        assert_eq!(lane.call(&headers, 1).await, Outcome::Failed);
        assert_eq!(lane.call(&headers, 2).await, Outcome::NoAnswer, "a 500");
        assert_eq!(
            lane.call(&headers, 3).await,
            Outcome::Answered(Answer::Wrong(3))
        );
        assert_eq!(
            lane.call(&headers, 4).await,
            Outcome::Failed,
            "over the bound"
        );
        server.await.expect("served");
    }
}
