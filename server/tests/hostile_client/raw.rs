//! Raw clients for hostile tests: HTTP/1.1 requests written byte by byte, and a WebSocket
//! client that frames text by hand. Our transport's clients only send well-formed
//! messages; these send whatever a test writes (a foreign `Origin`, a body of 100,000 `[`,
//! half a body) and read exactly what the server answers.

use mcpl_server::{Server, SessionHandle};
use mcpl_testkit::within;
use mcpl_transport::{ConnectionInfo, Principal, TransportKind, stdio};
use serde_json::Value;
use std::net::SocketAddr;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::net::{TcpSocket, TcpStream};

/// An HTTP response, read to the end of its connection.
#[derive(Debug)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// Header lines, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body (the raw bytes; chunked bodies are not decoded).
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The first header of that (lowercase) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not a JSON body ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

/// A `POST` of `body` to `/mcp` with the MCP headers and `extra` ones, on a connection
/// that closes after the answer.
pub fn post(addr: SocketAddr, extra: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Sends `request` and reads the answer to the end. Writing may fail part way (a server
/// that answers 413 and closes before reading a huge body): the answer is read anyway.
pub async fn exchange(addr: SocketAddr, request: Vec<u8>) -> HttpResponse {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (mut rd, mut wr) = stream.into_split();
    let writer = tokio::spawn(async move {
        let _ = wr.write_all(&request).await;
        wr
    });
    let mut raw = Vec::new();
    let _ = rd.read_to_end(&mut raw).await;
    drop(writer.await);
    parse(&raw)
}

/// A connection that wrote `bytes` and then nothing more: a slow client mid-request.
pub async fn hold_open(addr: SocketAddr, bytes: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(bytes).await.expect("write");
    stream
}

fn parse(raw: &[u8]) -> HttpResponse {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP head in {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    HttpResponse {
        status,
        headers,
        body: raw[end + 4..].to_vec(),
    }
}

/// What a raw WebSocket read.
#[derive(Debug, PartialEq)]
pub enum WsRead {
    /// A text message.
    Text(String),
    /// A close frame, with its code.
    Close(Option<u16>),
    /// The connection ended without a close frame.
    Eof,
}

/// A WebSocket client that frames by hand.
pub struct RawWs {
    stream: TcpStream,
}

/// Opens a WebSocket to `/mcp` with `extra` headers. `Err(status)` when the upgrade is
/// refused. `recv_buffer`: a small receive buffer, so a client that never reads pushes back
/// on the server soon.
pub async fn ws_connect(
    addr: SocketAddr,
    extra: &[(&str, &str)],
    recv_buffer: Option<u32>,
) -> Result<RawWs, u16> {
    let socket = TcpSocket::new_v4().expect("a socket");
    if let Some(size) = recv_buffer {
        socket.set_recv_buffer_size(size).expect("set SO_RCVBUF");
    }
    let mut stream = socket.connect(addr).await.expect("connect");
    let mut head = format!(
        "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    );
    for (name, value) in extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.expect("write");
    // The head ends at the first blank line; the server sends nothing after it unasked.
    let mut raw = Vec::new();
    while !raw.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8];
        if stream.read(&mut byte).await.expect("read") == 0 {
            break;
        }
        raw.push(byte[0]);
    }
    let status = parse(&raw).status;
    if status == 101 {
        Ok(RawWs { stream })
    } else {
        Err(status)
    }
}

impl RawWs {
    /// Sends one masked text frame. Fails when the server has closed.
    pub async fn send_text(&mut self, text: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(&frame(text)).await
    }

    /// Writes bytes as they are (frames made with [`frame`]).
    pub async fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes).await
    }

    /// The next text message or close (pongs and pings skipped).
    pub async fn recv(&mut self) -> WsRead {
        let mut message = Vec::new();
        loop {
            let mut head = [0u8; 2];
            if self.stream.read_exact(&mut head).await.is_err() {
                return WsRead::Eof;
            }
            let (fin, opcode) = (head[0] & 0x80 != 0, head[0] & 0x0f);
            let len = match head[1] & 0x7f {
                126 => {
                    let mut b = [0u8; 2];
                    self.stream.read_exact(&mut b).await.expect("length");
                    u16::from_be_bytes(b) as usize
                }
                127 => {
                    let mut b = [0u8; 8];
                    self.stream.read_exact(&mut b).await.expect("length");
                    u64::from_be_bytes(b) as usize
                }
                n => n as usize,
            };
            let mut payload = vec![0u8; len];
            self.stream.read_exact(&mut payload).await.expect("payload");
            match opcode {
                0x8 => {
                    let code =
                        (payload.len() >= 2).then(|| u16::from_be_bytes([payload[0], payload[1]]));
                    return WsRead::Close(code);
                }
                0x9 | 0xA => continue,
                _ => message.extend_from_slice(&payload),
            }
            if fin {
                return WsRead::Text(String::from_utf8(message).expect("UTF-8 text"));
            }
        }
    }

    /// The next text message, as JSON.
    pub async fn recv_json(&mut self) -> Value {
        match self.recv().await {
            WsRead::Text(t) => serde_json::from_str(&t).expect("JSON"),
            other => panic!("expected a message, got {other:?}"),
        }
    }
}

/// A client frame: FIN, text, masked (RFC 6455 §5.3: every client frame is masked).
pub fn frame(payload: &[u8]) -> Vec<u8> {
    let mask = [0x12u8, 0x34, 0x56, 0x78];
    let mut f = vec![0x81u8];
    match payload.len() {
        n if n < 126 => f.push(0x80 | n as u8),
        n if n <= u16::MAX as usize => {
            f.push(0x80 | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(0x80 | 127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    f.extend_from_slice(&mask);
    f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    f
}

/// Reads an HTTP/1.1 response head, then its chunked body as SSE events.
pub struct SseReader {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl SseReader {
    /// Sends `request` on a new connection; the reader and the response's head, lower-cased.
    pub async fn open(addr: SocketAddr, request: &[u8]) -> (SseReader, String) {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(request).await.unwrap();
        let mut sse = SseReader {
            stream,
            buf: Vec::new(),
        };
        let head = sse.head().await.to_ascii_lowercase();
        (sse, head)
    }

    async fn fill(&mut self) {
        let mut chunk = [0u8; 4096];
        let n = within(self.stream.read(&mut chunk)).await.expect("read");
        assert!(n > 0, "the server closed the stream");
        self.buf.extend_from_slice(&chunk[..n]);
    }

    /// The response head, once.
    pub async fn head(&mut self) -> String {
        loop {
            if let Some(at) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.buf[..at]).into_owned();
                self.buf.drain(..at + 4);
                return head;
            }
            self.fill().await;
        }
    }

    /// The next chunk of the body.
    pub async fn chunk(&mut self) -> Vec<u8> {
        loop {
            if let Some(at) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let size = usize::from_str_radix(std::str::from_utf8(&self.buf[..at]).unwrap(), 16)
                    .expect("a chunk size");
                if self.buf.len() >= at + 2 + size + 2 {
                    let data = self.buf[at + 2..at + 2 + size].to_vec();
                    self.buf.drain(..at + 2 + size + 2);
                    return data;
                }
            }
            self.fill().await;
        }
    }

    /// The next SSE event with data, as JSON (a priming event without data is skipped).
    pub async fn event(&mut self) -> Value {
        let mut text = String::new();
        loop {
            while !text.contains("\n\n") {
                text.push_str(&String::from_utf8_lossy(&self.chunk().await));
            }
            let at = text.find("\n\n").unwrap();
            let event: String = text[..at].to_owned();
            text.drain(..at + 2);
            let data: String = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            if !data.is_empty() {
                assert!(text.is_empty(), "one event per read: {text:?}");
                return serde_json::from_str(&data).unwrap_or_else(|e| panic!("{e}: {event:?}"));
            }
        }
    }
}

/// A client speaking newline-delimited JSON (the stdio transport's framing) over a socket.
pub struct Lines {
    read: BufReader<tokio::net::tcp::OwnedReadHalf>,
    write: tokio::net::tcp::OwnedWriteHalf,
}

impl Lines {
    pub async fn send(&mut self, v: Value) {
        let mut line = v.to_string().into_bytes();
        line.push(b'\n');
        self.write.write_all(&line).await.expect("write");
    }

    pub async fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = within(self.read.read_line(&mut line)).await.expect("read");
        assert!(n > 0, "the server closed the connection");
        serde_json::from_str(&line).expect("a JSON line")
    }

    /// The response to `request` (sent now), skipping notifications of open streams.
    pub async fn exchange(&mut self, request: Value) -> Value {
        let id = request["id"].clone();
        self.send(request).await;
        loop {
            let m = self.recv().await;
            if m["id"] == id && m.get("method").is_none() {
                return m;
            }
        }
    }

    /// Everything read until the response with `id`, that response last.
    pub async fn until_response(&mut self, id: i64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let m = self.recv().await;
            let done = m["id"] == id && m.get("method").is_none();
            seen.push(m);
            if done {
                return seen;
            }
        }
    }
}

/// `server` serving the stdio transport's framing on a loopback socket, as `who`.
pub async fn stdio_socket(server: &Server, who: Principal) -> (Lines, SessionHandle) {
    stdio_socket_in(server, who, None).await
}

/// [`stdio_socket`] with the session (and, for a server's first session, the server's
/// actors) on `arbiter` — stopped with it, as on a server that went away; the socket's
/// reading and writing stay on the current runtime.
pub async fn stdio_socket_in(
    server: &Server,
    who: Principal,
    arbiter: Option<&actix::ArbiterHandle>,
) -> (Lines, SessionHandle) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let client = TcpStream::connect(addr).await.unwrap();
    let (accepted, _) = listener.accept().await.unwrap();
    let (r, w) = accepted.into_split();
    let info = ConnectionInfo {
        kind: TransportKind::Stdio,
        ordered: true,
        principal: Some(who),
        peer: "stdio over a socket".into(),
    };
    let conn = stdio::from_io(r, w, info, 1 << 20);
    let session = match arbiter {
        Some(arbiter) => server.serve_in(arbiter, conn),
        None => server.serve(conn),
    };
    let (read, write) = client.into_split();
    let lines = Lines {
        read: BufReader::new(read),
        write,
    };
    (lines, session)
}
