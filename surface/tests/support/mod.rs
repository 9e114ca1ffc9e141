//! What the surface host's tests share: the real `mcpl-arcade` binary (built on first use
//! when the test run did not build it), the `mcpl-surface` binary with a configuration
//! file, and a raw JSON-RPC client over its stdin/stdout that speaks in the MCP spec's
//! shapes (plain `serde_json` values, none of the project's types).

#![allow(dead_code)]

pub use mcpl_testkit::proxy;

use mcpl_testkit::process::{listening, report};
use mcpl_testkit::within;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The surface host's binary.
pub const SURFACE: &str = env!("CARGO_BIN_EXE_mcpl-surface");

/// How long any one step may take before the test fails (a Go game's bot moves included).
pub const LIMIT: Duration = Duration::from_secs(60);

/// The bot's budget in the arcades the tests start: small and seeded, fast and repeatable.
pub const BOT: [&str; 4] = ["--bot-playouts", "64", "--seed", "7"];

/// The `mcpl-arcade` binary of this workspace (built first when this package's tests
/// did not build it: [`mcpl_testkit::process::workspace_bin`]), looked up once.
pub fn arcade() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| mcpl_testkit::process::workspace_bin("mcpl-games", "mcpl-arcade"))
}

/// Starts the arcade with these `serve` flags and returns it with the URLs it listens on
/// (read from its `listening on` lines).
pub async fn arcade_listening(args: &[&str], listeners: usize) -> (Child, Vec<String>) {
    // In memory: each test's arcade starts empty (issue #15 made the default an OS data
    // directory, which every test would share).
    let mut child = Command::new(arcade())
        .args(["serve", "--in-memory"])
        .args(args)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the arcade starts");
    let urls = listening(&mut child, listeners).await;
    (child, urls)
}

/// The arcade on Streamable HTTP (with the tests' small bot) that knows alice and bob by
/// its own tokens, `alice-arcade-secret` and `bob-arcade-secret`; the child (killed when
/// dropped) and its URL.
pub async fn arcade_of_alice_and_bob() -> (Child, String) {
    let mut args = vec![
        "--http",
        "127.0.0.1:0",
        "--token",
        "alice=alice-arcade-secret",
        "--token",
        "bob=bob-arcade-secret",
    ];
    args.extend(BOT);
    let (arcade, mut urls) = arcade_listening(&args, 1).await;
    (arcade, urls.remove(0))
}

/// A surface host on Streamable HTTP in front of the arcade at `arcade` (as
/// [`arcade_of_alice_and_bob`] starts it), whose clients are alice and bob: each presents
/// the surface host's own token (`alice-surface-secret`, `bob-surface-secret`) and reaches
/// the arcade with the arcade's. `state_dir`: the surface host's `stateDir` (none: it keeps
/// no state). Its configuration is written into `dir`; the child and its URL.
pub async fn surface_of_alice_and_bob(
    dir: &Path,
    arcade: &str,
    state_dir: Option<&Path>,
) -> (Child, String) {
    let client = |who: &str| {
        json!({"token": format!("{who}-surface-secret"),
               "servers": {"arcade": {"headers": {"Authorization": format!("Bearer {who}-arcade-secret")}}}})
    };
    let mut surface = json!({"clients": {"alice": client("alice"), "bob": client("bob")}});
    if let Some(state_dir) = state_dir {
        surface["stateDir"] = json!(state_dir);
    }
    let config = write_config(
        dir,
        "surface.json",
        &json!({"mcpServers": {"arcade": {"type": "http", "url": arcade}}, "surface": surface}),
    );
    surface_http(&config).await
}

/// The arcade on WebSocket (with the tests' small bot) that knows alice by the token
/// `alice-secret`; the child (killed when dropped) and its address.
pub async fn ws_arcade_of_alice() -> (Child, std::net::SocketAddr) {
    let mut args = vec!["--ws", "127.0.0.1:0", "--token", "alice=alice-secret"];
    args.extend(BOT);
    let (child, urls) = arcade_listening(&args, 1).await;
    let addr = urls[0]
        .strip_prefix("ws://")
        .unwrap()
        .trim_end_matches('/')
        .parse()
        .unwrap();
    (child, addr)
}

/// A surface host's configuration (written into `dir`) whose one server is the arcade
/// [`ws_arcade_of_alice`] starts, reached as alice through `proxy`.
pub fn proxied_arcade_config(dir: &Path, proxy: &proxy::Proxy) -> PathBuf {
    write_config(
        dir,
        "surface.json",
        &json!({"mcpServers": {"arcade": {
            "url": format!("ws://{}", proxy.addr()),
            "headers": {"Authorization": "Bearer alice-secret"}
        }}}),
    )
}

/// Writes a configuration file into `dir`.
pub fn write_config(dir: &Path, name: &str, config: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(config).unwrap()).unwrap();
    path
}

/// An MCP client of the surface host over its stdin/stdout, raw JSON-RPC lines.
pub struct StdioClient {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: i64,
    /// Every notification read, in order.
    pub notifications: Vec<Value>,
    /// The `_meta` every request carries once [`StdioClient::speak_modern`] was called.
    meta: Option<Value>,
}

impl StdioClient {
    /// From now on every request is MCP 2026-07-28's: it carries [`modern_meta`] in its
    /// `_meta` (a request that has its own `_meta` keeps it).
    pub fn speak_modern(&mut self) {
        self.meta = Some(modern_meta());
    }

    /// Starts `mcpl-surface serve --config PATH` with these extra flags.
    pub fn start(config: &Path, extra: &[&str]) -> Self {
        let mut command = Command::new(SURFACE);
        command
            .arg("serve")
            .arg("--config")
            .arg(config)
            .args(extra)
            .env("XDG_DATA_HOME", data_home(config));
        Self::spawn(command)
    }

    /// Starts the server SDK's arcade on stdio, serving `principal` (in memory, the tests'
    /// small bot): the same raw client, on a server SDK session.
    pub fn arcade(principal: &str) -> Self {
        let mut command = Command::new(arcade());
        command
            .args(["serve", "--in-memory", "--stdio", "--principal", principal])
            .args(BOT)
            .stderr(Stdio::null());
        Self::spawn(command)
    }

    /// Spawns `command`, its stdin and stdout the MCP channel.
    pub fn spawn(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        StdioClient {
            child,
            stdin,
            lines,
            next_id: 0,
            notifications: Vec::new(),
            meta: None,
        }
    }

    /// [`start`](Self::start)s it, does the MCP [`handshake`](Self::handshake) and lists
    /// the tools (once listed, the servers behind it have settled: a player is online).
    pub async fn ready(config: &Path, extra: &[&str]) -> Self {
        let mut c = Self::start(config, extra);
        c.handshake().await;
        c.request("tools/list", json!({})).await;
        c
    }

    /// Writes one line as is.
    pub async fn write_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Sends one message.
    pub async fn send(&mut self, message: &Value) {
        self.write_line(&message.to_string()).await;
    }

    /// Reads the next message.
    pub async fn read(&mut self) -> Value {
        let line = within(self.lines.next_line())
            .await
            .expect("reading stdout")
            .expect("the surface host wrote a message before it ended");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Reads until the response with this id, keeping notifications.
    pub async fn response(&mut self, id: i64) -> Value {
        loop {
            let m = self.read().await;
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return m;
            }
            assert!(
                m.get("method").is_some() && m.get("id").is_none(),
                "only notifications come unasked: {m}"
            );
            self.notifications.push(m);
        }
    }

    /// Sends a request and returns its response.
    pub async fn request(&mut self, method: &str, mut params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        if let (Some(meta), Some(p)) = (&self.meta, params.as_object_mut()) {
            p.entry("_meta").or_insert_with(|| meta.clone());
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.response(id).await
    }

    /// Waits for the next notification of this method (one already read counts).
    pub async fn notification(&mut self, method: &str) -> Value {
        if let Some(at) = self
            .notifications
            .iter()
            .position(|n| n["method"] == method)
        {
            return self.notifications.remove(at);
        }
        loop {
            let m = self.read().await;
            if m["method"] == method {
                return m;
            }
            self.notifications.push(m);
        }
    }

    /// The MCP handshake: `initialize`, then `notifications/initialized`.
    pub async fn handshake(&mut self) -> Value {
        let init = self
            .request(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw-test-client", "version": "0"}}),
            )
            .await;
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        init
    }

    /// Calls a tool; its result (a JSON-RPC error fails the test).
    pub async fn call(&mut self, name: &str, arguments: Value) -> Value {
        let r = self
            .request("tools/call", json!({"name": name, "arguments": arguments}))
            .await;
        assert!(r.get("error").is_none(), "{name}: {r}");
        r["result"].clone()
    }

    /// Closes stdin and reads every message still to come, to the end of stdout (and the
    /// notifications already read before them).
    pub async fn close_and_read_rest(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        let mut rest = std::mem::take(&mut self.notifications);
        while let Some(line) = within(self.lines.next_line())
            .await
            .expect("reading stdout")
        {
            rest.push(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")));
        }
        let status = within(self.child.wait()).await.unwrap();
        assert_eq!(status.code(), Some(0));
        rest
    }

    /// Closes stdin and waits for the process to exit; its exit code.
    pub async fn close(mut self) -> Option<i32> {
        drop(self.stdin.take());
        within(self.child.wait()).await.unwrap().code()
    }
}

/// The text blocks of a result, joined.
pub fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// What a result's text tells since the previous call: the words after its
/// `Since your previous call:` line. Fails the test when it tells nothing.
pub fn since_previous_call(text: &str) -> &str {
    text.split_once("Since your previous call:")
        .unwrap_or_else(|| panic!("nothing since the previous call in {text}"))
        .1
}

/// Plays tic-tac-toe in `instance` by trying the cells in a fixed order, as a client that
/// knows only the results would: a cell taken is a tool error, and the next is tried.
/// Returns the last result's text (the one that says the game is over).
pub async fn play_tictactoe(client: &mut StdioClient, instance: &str) -> String {
    let cells = ["b2", "a1", "c3", "a3", "c1", "b1", "b3", "a2", "c2"];
    for _round in 0..5 {
        for cell in cells {
            let r = client
                .call(
                    "toolsets--act",
                    json!({"tool": "tictactoe_play", "instance": instance, "args": {"move": cell}}),
                )
                .await;
            if r["isError"] == true {
                continue;
            }
            let t = text(&r);
            if t.contains("Game over:") {
                return t;
            }
            break;
        }
    }
    panic!("the game did not end");
}

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("surface/ has a parent")
        .to_path_buf()
}

/// The `mcpServers` entry of the arcade binary on stdio (in memory, the tests' small bot)
/// as `principal`.
pub fn stdio_arcade(principal: &str) -> Value {
    let mut args = vec!["serve", "--in-memory", "--stdio", "--principal", principal];
    args.extend(BOT);
    json!({"command": arcade(), "args": args})
}

/// A configuration of one server, `arcade`: the arcade binary on stdio as `principal`
/// ([`stdio_arcade`]).
pub fn stdio_arcade_config(dir: &Path, principal: &str) -> PathBuf {
    write_config(
        dir,
        "surface.json",
        &json!({"mcpServers": {"arcade": stdio_arcade(principal)}}),
    )
}

/// Runs an SDK's client, `program script GAME SURFACE serve --config PATH` (`script`
/// relative to the workspace root), at `game` through a surface host in front of a stdio
/// arcade that knows it as `principal`; its report ([`report`]).
pub async fn play_sdk_client(
    program: impl AsRef<std::ffi::OsStr>,
    script: &str,
    game: &str,
    principal: &str,
) -> Value {
    let program = program.as_ref().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let config = stdio_arcade_config(dir.path(), principal);
    let run = Command::new(&program)
        .arg(root().join(script))
        .arg(game)
        .arg(SURFACE)
        .args(["serve", "--config"])
        .arg(&config)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .unwrap_or_else(|_| panic!("{script} did not finish in time"))
        .unwrap_or_else(|e| panic!("{} does not run: {e}", program.display()));
    report(&out)
}

/// What every SDK client's game report shows: the surface host's name, the four
/// meta-tools and nothing else, a list that did not change, no error, and the lobby's
/// opening logged as `notifications/message` data.
pub fn check_sdk_report(report: &Value) {
    assert_eq!(report["server"], "mcpl-surface", "{report:#}");
    assert_eq!(
        report["tools"],
        json!([
            "toolsets--open",
            "toolsets--act",
            "toolsets--look",
            "toolsets--close"
        ]),
        "{report:#}"
    );
    assert_eq!(report["errors"], json!([]), "{report:#}");
    assert_eq!(report["tools_stable"], true, "{report:#}");
    let logs = report["logs"].as_array().unwrap();
    assert!(
        logs.iter()
            .any(|l| l["server"] == "arcade" && l["text"].as_str().unwrap().contains("Lobby")),
        "{report:#}"
    );
}

/// The checks of a finished game in an SDK client's report, instance `instance`.
pub fn check_sdk_game(report: &Value, game: &str, instance: &str) {
    let opened = report["opened"].as_str().unwrap();
    assert!(
        opened.contains(&format!("Opened [arcade/{game}:{instance}]")),
        "{report:#}"
    );
    let last = report["final"].as_str().expect("the game ended");
    let moves: Vec<&str> = report["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    if game == "tictactoe" {
        // The perfect bot never loses.
        assert!(
            last.contains("O (bot) wins") || last.contains("Draw"),
            "{last}"
        );
        assert!((3..=5).contains(&moves.len()), "{report:#}");
    } else {
        assert!(opened.contains("You play Black"), "{opened}");
        assert!(last.contains("Game over:"), "{last}");
        assert_eq!(
            moves.iter().filter(|m| **m != "pass").count(),
            10,
            "{moves:?}"
        );
    }
}

/// The OS data directory a spawned surface host is given: beside its configuration, in
/// the test's own directory, so that its default `stateDir` is the test's and not the
/// machine's.
fn data_home(config: &Path) -> std::path::PathBuf {
    config.parent().unwrap_or(Path::new(".")).join("data")
}

/// Starts `mcpl-surface serve --config PATH --http 127.0.0.1:0` and returns it with its URL
/// (read from its `listening on` line).
pub async fn surface_http(config: &Path) -> (Child, String) {
    let mut child = Command::new(SURFACE)
        .arg("serve")
        .arg("--config")
        .arg(config)
        .args(["--http", "127.0.0.1:0"])
        .env("XDG_DATA_HOME", data_home(config))
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("mcpl-surface starts");
    let url = listening(&mut child, 1).await.remove(0);
    (child, url)
}

/// An MCP client of the surface host over Streamable HTTP: the transport's client end,
/// every message written and read as plain JSON in the MCP spec's shapes.
pub struct HttpClient {
    conn: mcpl_transport::Connection,
    next_id: i64,
    /// Every notification read, in order.
    pub notifications: Vec<Value>,
}

impl HttpClient {
    /// Connects with this bearer token and does the MCP handshake.
    pub async fn connect(url: &str, token: &str) -> Self {
        let opts = mcpl_transport::ClientOptions {
            token: Some(token.to_owned()),
            ..Default::default()
        };
        let conn = within(mcpl_transport::http::connect(url, &opts))
            .await
            .expect("connects");
        let mut c = HttpClient {
            conn,
            next_id: 0,
            notifications: Vec::new(),
        };
        let init = c
            .request(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw-http-client", "version": "0"}}),
            )
            .await;
        assert_eq!(
            init["result"]["serverInfo"]["name"], "mcpl-surface",
            "{init}"
        );
        c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        c
    }

    async fn send(&mut self, v: Value) {
        let m = mcpl_protocol::Message::from_value(v).expect("a valid message");
        self.conn.outbound.send(m).await.expect("sent");
    }

    async fn read(&mut self) -> Value {
        loop {
            let read = within(self.conn.inbound.recv())
                .await
                .expect("the session is open");
            if let mcpl_transport::Inbound::Message { message, .. } = read {
                return serde_json::from_str(&message.encode()).unwrap();
            }
        }
    }

    /// Sends a request and returns its response, keeping notifications.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let m = self.read().await;
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return m;
            }
            self.notifications.push(m);
        }
    }

    /// Calls a tool; its result (a JSON-RPC error fails the test).
    pub async fn call(&mut self, name: &str, arguments: Value) -> Value {
        let r = self
            .request("tools/call", json!({"name": name, "arguments": arguments}))
            .await;
        assert!(r.get("error").is_none(), "{name}: {r}");
        r["result"].clone()
    }

    /// Waits for a `notifications/message` whose text contains `needle` (one already read
    /// counts), and returns its text.
    pub async fn logged(&mut self, needle: &str) -> String {
        let matches = |n: &Value| {
            n["method"] == "notifications/message"
                && n["params"]["data"]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains(needle))
        };
        if let Some(at) = self.notifications.iter().position(matches) {
            let n = self.notifications.remove(at);
            return n["params"]["data"]["text"].as_str().unwrap().to_owned();
        }
        loop {
            let m = self.read().await;
            if matches(&m) {
                return m["params"]["data"]["text"].as_str().unwrap().to_owned();
            }
            self.notifications.push(m);
        }
    }
}

/// The `_meta` of an MCP 2026-07-28 request: its version, its (empty) capabilities, who
/// sends it.
pub fn modern_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": {},
           "io.modelcontextprotocol/clientInfo": {"name": "raw-modern-client", "version": "0"}})
}

/// One HTTP answer, read off the socket.
#[derive(Debug)]
pub struct RawAnswer {
    /// The status code.
    pub status: u16,
    /// The headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (an SSE body's last message; `null` when empty).
    pub body: Value,
}

impl RawAnswer {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 request written by hand on a fresh TCP connection to `url`
/// (`http://ADDR/PATH`), `Connection: close`, and its answer read to the end.
pub async fn raw_http(
    url: &str,
    method: &str,
    headers: &[(&str, String)],
    body: &str,
) -> RawAnswer {
    use tokio::io::AsyncReadExt;
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (addr, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut tcp = within(tokio::net::TcpStream::connect(addr)).await.unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    tcp.write_all(head.as_bytes()).await.unwrap();
    tcp.write_all(body.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    within(tcp.read_to_end(&mut raw)).await.unwrap();
    let raw = String::from_utf8(raw).expect("a text answer");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a head and a body");
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    let sse = headers
        .iter()
        .any(|(n, v)| n == "content-type" && v.starts_with("text/event-stream"));
    let json = if sse {
        body.lines()
            .rev()
            .find_map(|l| l.strip_prefix("data:"))
            .map_or(Value::Null, |d| serde_json::from_str(d.trim()).unwrap())
    } else if body.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
    };
    RawAnswer {
        status,
        headers,
        body: json,
    }
}

/// A chunked body's content.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].strip_prefix("\r\n").unwrap_or(&rest[n..]);
    }
    out
}

/// An MCP 2026-07-28 client of the surface host over Streamable HTTP, written by hand:
/// each request a POST of its own with `_meta`, its mirror headers and a bearer token, and
/// no session id.
pub struct ModernHttp {
    url: String,
    token: String,
    next_id: i64,
}

impl ModernHttp {
    /// A client presenting `token` at `url`.
    pub fn new(url: &str, token: &str) -> Self {
        ModernHttp {
            url: url.to_owned(),
            token: token.to_owned(),
            next_id: 0,
        }
    }

    /// POSTs `body` with the headers a modern POST of `method` carries (`name`: its
    /// `Mcp-Name`), plus `extra`.
    pub async fn post(
        &self,
        method: &str,
        name: Option<&str>,
        body: &Value,
        extra: &[(&str, String)],
    ) -> RawAnswer {
        let mut headers = vec![
            ("Authorization", format!("Bearer {}", self.token)),
            ("Content-Type", "application/json".to_owned()),
            ("Accept", "application/json, text/event-stream".to_owned()),
            ("MCP-Protocol-Version", "2026-07-28".to_owned()),
            ("Mcp-Method", method.to_owned()),
        ];
        if let Some(name) = name {
            headers.push(("Mcp-Name", name.to_owned()));
        }
        for (name, value) in extra {
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            headers.push((name, value.clone()));
        }
        raw_http(&self.url, "POST", &headers, &body.to_string()).await
    }

    /// Sends a modern request (`_meta` added to `params`); its answer.
    pub async fn request(&mut self, method: &str, mut params: Value) -> RawAnswer {
        self.next_id += 1;
        params["_meta"] = modern_meta();
        let name = params["name"].as_str().map(str::to_owned);
        let body =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        let answer = self.post(method, name.as_deref(), &body, &[]).await;
        assert_eq!(answer.body["id"], json!(self.next_id), "{answer:?}");
        answer
    }

    /// Calls a tool; its result, which must be a modern one (a JSON-RPC error fails the
    /// test).
    pub async fn call(&mut self, name: &str, arguments: Value) -> Value {
        let answer = self
            .request("tools/call", json!({"name": name, "arguments": arguments}))
            .await;
        assert_eq!(answer.status, 200, "{name}: {answer:?}");
        assert_eq!(
            answer.header("mcp-session-id"),
            None,
            "no session: {answer:?}"
        );
        let result = answer.body["result"].clone();
        assert_eq!(result["resultType"], "complete", "{name}: {answer:?}");
        assert_eq!(
            result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcpl-surface",
            "{answer:?}"
        );
        result
    }
}

/// Runs a peer script, `program ARGS...` (its OS data directory in `dir`), and returns its
/// report ([`report`]).
pub async fn run_peer(
    program: impl AsRef<std::ffi::OsStr>,
    args: &[std::ffi::OsString],
    dir: &Path,
) -> Value {
    let program = program.as_ref().to_owned();
    let run = Command::new(&program)
        .args(args)
        .env("XDG_DATA_HOME", dir.join("data"))
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .unwrap_or_else(|_| panic!("{args:?} did not finish in time"))
        .unwrap_or_else(|e| panic!("{} does not run: {e}", program.display()));
    report(&out)
}
