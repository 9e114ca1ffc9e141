//! A hostile client against a server built on the SDK, over real WebSocket and Streamable
//! HTTP listeners on 127.0.0.1 (issue 7, "Hostile peers"): missing and wrong tokens, a
//! session id or instance names of another principal, a foreign `Origin`, messages past
//! the size limit, 100,000 nested `[`, malformed JSON and unknown methods, a client that
//! never reads, and slow HTTP clients.
//!
//! After each hostile act a *witness* — another principal's session opened before it —
//! makes a successful call, so every test also proves that the server and its other
//! sessions go on. Raw clients (`hostile_client/raw.rs`) write what our transport's clients
//! never would.

use crate::raw;

use mcpl_protocol::jsonrpc::ErrorCode;
use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{
    InstanceContext, InstanceLogic, Reply, Server, Started, ToolCall, ToolContext, Toolset,
};
use mcpl_testkit::{ReadError, msg, within};
use mcpl_transport::testkit::{TestEnd, TestPeer};
use mcpl_transport::{ClientOptions, ServerOptions, TransportError, http, ws};
use raw::{WsRead, exchange, post, ws_connect};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The server's message size limit in these tests.
const LIMIT: usize = 256 * 1024;
/// The one foreign origin the server lets in (loopback origins always are).
const GOOD_ORIGIN: &str = "http://good.example";
/// How long a read waits before the test fails.
const RECV_LIMIT: Duration = Duration::from_secs(10);

// ---- the server --------------------------------------------------------------------------

/// A game instance: `poke` says who poked which instance and how many take part.
struct Game(String);

impl InstanceLogic for Game {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        let players = cx.participants().count();
        Reply::text(format!(
            "{} poked {} ({players} taking part)",
            cx.name(call.caller()),
            self.0
        ))
    }
}

fn build() -> Server {
    let object = json!({"type": "object", "properties": {}});
    let echo = Tool::new(
        "echo",
        "Says it back",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
    );
    Server::builder("hostile-test", "1.0")
        .toolset(
            Toolset::new("game")
                .title("Game")
                .instances()
                .tool(Tool::new("poke", "Pokes the game", object))
                .on_open(|opening, _| {
                    let name = opening.instance().unwrap_or_default().to_owned();
                    Ok(Started::new(Game(name.clone())).text(format!("{name} is open.")))
                }),
        )
        .tool(echo, |_: ToolContext, args: Value| async move {
            Ok(CallToolResult::text(
                args["text"].as_str().unwrap_or_default(),
            ))
        })
        .build()
        .expect("a valid server")
}

/// The server on a WebSocket and a Streamable HTTP listener. Tokens `alice-token` and
/// `bob-token` map to `alice` and `bob`; no anonymous connections.
struct Fixture {
    server: Server,
    ws: SocketAddr,
    http: SocketAddr,
}

impl Fixture {
    async fn start() -> Fixture {
        Fixture::start_with(None).await
    }

    /// The same, pinging WebSocket peers every `ping` (and closing one that stays silent
    /// or cannot be written to for two of them).
    async fn start_with(ping: Option<Duration>) -> Fixture {
        Fixture::start_opts(ping, ServerOptions::default().http_read_timeout).await
    }

    /// The same, with a client allowed `read` to send an HTTP request's head, then its body.
    async fn start_opts(ping: Option<Duration>, read: Duration) -> Fixture {
        let server = build();
        let mut opts = ServerOptions {
            max_message_size: LIMIT,
            allowed_origins: vec![GOOD_ORIGIN.to_owned()],
            ws_ping_interval: ping,
            http_read_timeout: read,
            ..Default::default()
        };
        for who in ["alice", "bob"] {
            opts.tokens.insert(format!("{who}-token"), who.to_owned());
        }
        let opts = Arc::new(opts);
        let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let mut wl = ws::bind(any, opts.clone()).await.expect("bind ws");
        let mut hl = http::bind(any, "/mcp", opts).await.expect("bind http");
        let (ws, http) = (wl.local_addr(), hl.local_addr());
        let (a, b) = (server.clone(), server.clone());
        actix::spawn(async move {
            while let Some(conn) = wl.accept().await {
                a.serve(conn);
            }
        });
        actix::spawn(async move {
            while let Some(conn) = hl.accept().await {
                b.serve(conn);
            }
        });
        Fixture { server, ws, http }
    }

    fn ws_url(&self) -> String {
        format!("ws://{}/mcp", self.ws)
    }

    fn http_url(&self) -> String {
        format!("http://{}/mcp", self.http)
    }

    /// A session of `who` over the WebSocket, through the MCPL handshake.
    async fn ws_session(&self, who: &str) -> Rpc {
        let mut c = Rpc::connect(&self.ws_url(), who).await.expect("admitted");
        c.handshake().await;
        c
    }

    /// A session of `who` over Streamable HTTP, through the MCPL handshake.
    async fn http_session(&self, who: &str) -> Rpc {
        let mut c = Rpc::connect(&self.http_url(), who).await.expect("admitted");
        c.handshake().await;
        c
    }

    /// Waits until the server has `n` live sessions.
    async fn sessions(&self, n: usize) {
        let mut w: watch::Receiver<usize> = self.server.watch_sessions();
        within(w.wait_for(|live| *live == n))
            .await
            .expect("the server runs");
    }
}

// ---- a well-behaved client -------------------------------------------------------------

/// The one raw peer of the tests (`mcpl_testkit`) on one of our transport's connections,
/// and the steps these tests take with it.
struct Rpc(TestPeer);

impl Rpc {
    async fn connect(url: &str, who: &str) -> Result<Rpc, TransportError> {
        let opts = ClientOptions {
            token: Some(format!("{who}-token")),
            ..Default::default()
        };
        let conn = mcpl_transport::connect(url, &opts).await?;
        Ok(Rpc(TestEnd::peer(conn).with_limit(RECV_LIMIT)))
    }

    async fn send(&mut self, v: Value) {
        self.0.send(v).await;
    }

    /// The next message, or `None` once the link closed.
    async fn recv(&mut self) -> Option<Value> {
        let deadline = self.0.deadline();
        match self.0.read(deadline).await {
            Ok(v) => Some(v),
            Err(ReadError::Closed(_)) => None,
            Err(e) => panic!("the test stalled or the server wrote something unreadable: {e:?}"),
        }
    }

    /// Sends a request of `method` and returns its answer (anything else read meanwhile
    /// fails the test: nothing else is due).
    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.0.send_request(method, params).await;
        let answer = self.recv().await.expect("the link is open");
        assert_eq!(
            answer["id"], id,
            "expected the answer to {method}: {answer}"
        );
        answer
    }

    async fn handshake(&mut self) {
        let init = self
            .call(
                "initialize",
                json!({"protocolVersion": "2025-11-25",
                       "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true}}},
                       "clientInfo": {"name": "hostile-test", "version": "1"}}),
            )
            .await;
        assert!(init.get("result").is_some(), "{init}");
        self.send(msg::initialized()).await;
        let grant = self
            .call(
                "featureSets/update",
                json!({"effectiveCapabilities": ["tools"]}),
            )
            .await;
        assert_eq!(grant["result"]["accepted"], true, "{grant}");
    }

    /// `echo` says `text` back.
    async fn echo(&mut self, text: &str) {
        let r = self
            .call(
                "tools/call",
                json!({"name": "echo", "arguments": {"text": text}}),
            )
            .await;
        assert_eq!(
            r["result"]["content"][0]["text"], text,
            "the session works: {r}"
        );
    }
}

fn code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {answer}"))
}

// ---- raw HTTP helpers ------------------------------------------------------------------

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const PING: &[u8] = br#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#;

/// Opens an MCP session of `who` over raw HTTP; returns its id.
async fn raw_session(addr: SocketAddr, who: &str) -> String {
    let auth = format!("Bearer {who}-token");
    let r = exchange(
        addr,
        post(addr, &[("Authorization", &auth)], INIT.as_bytes()),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    let id = r.header("mcp-session-id").expect("a session id").to_owned();
    let done = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let r = exchange(
        addr,
        post(
            addr,
            &[("Authorization", &auth), ("Mcp-Session-Id", &id)],
            done,
        ),
    )
    .await;
    assert_eq!(r.status, 202, "{r:?}");
    id
}

/// POSTs `body` in session `id` as `who`.
async fn in_session(addr: SocketAddr, who: &str, id: &str, body: &[u8]) -> raw::HttpResponse {
    let auth = format!("Bearer {who}-token");
    exchange(
        addr,
        post(
            addr,
            &[("Authorization", &auth), ("Mcp-Session-Id", id)],
            body,
        ),
    )
    .await
}

/// A ping in session `id` is answered.
async fn session_answers(addr: SocketAddr, who: &str, id: &str) {
    let r = in_session(addr, who, id, PING).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json(), json!({"jsonrpc": "2.0", "id": 9, "result": {}}));
}

// ---- tokens ----------------------------------------------------------------------------

#[actix::test]
async fn requests_without_a_valid_token_or_with_another_principals_session_are_refused() {
    let f = Fixture::start().await;
    let mut witness = f.ws_session("alice").await;

    // WebSocket: refused at the upgrade.
    for token in [None, Some("mallory-token".to_owned())] {
        let opts = ClientOptions {
            token,
            ..Default::default()
        };
        let refused = ws::connect(&f.ws_url(), &opts).await;
        assert!(
            matches!(refused, Err(TransportError::Unauthorized)),
            "{refused:?}"
        );
    }
    // Streamable HTTP: every request is checked, the first and every later one.
    let init = INIT.as_bytes();
    let r = exchange(f.http, post(f.http, &[], init)).await;
    assert_eq!(r.status, 401, "{r:?}");
    assert!(
        r.header("www-authenticate")
            .is_some_and(|v| v.starts_with("Bearer"))
    );
    let r = exchange(
        f.http,
        post(f.http, &[("Authorization", "Bearer mallory-token")], init),
    )
    .await;
    assert_eq!(r.status, 401, "{r:?}");
    let r = exchange(
        f.http,
        post(f.http, &[("Authorization", "Basic YWxpY2U6")], init),
    )
    .await;
    assert_eq!(r.status, 401, "{r:?}");

    // Alice's session id in bob's hands, or in nobody's, is refused; in alice's it works.
    let alice = raw_session(f.http, "alice").await;
    let r = in_session(f.http, "bob", &alice, PING).await;
    // 404, as for an id that never existed: the answer does not tell bob that alice's exists.
    assert_eq!(r.status, 404, "another principal's session: {r:?}");
    let r = exchange(f.http, post(f.http, &[("Mcp-Session-Id", &alice)], PING)).await;
    assert_eq!(r.status, 401, "{r:?}");
    session_answers(f.http, "alice", &alice).await;

    assert_eq!(f.server.principal_count(), 1, "only alice got in");
    witness.echo("still here").await;
    f.http_session("bob").await.echo("bob got in").await;
}

// ---- another principal's instances -------------------------------------------------------

/// `answer` with the instance name replaced and the request id dropped, to compare what a
/// guessed name and a made-up one get.
fn shape(answer: &Value, name: &str) -> String {
    let mut a = answer.clone();
    a.as_object_mut().unwrap().remove("id");
    a.to_string().replace(name, "NAME")
}

#[actix::test]
async fn another_principals_instance_names_are_not_found_and_their_existence_does_not_leak() {
    let f = Fixture::start().await;
    let mut alice = f.ws_session("alice").await;
    let opened = alice
        .call(
            "toolsets/open",
            json!({"toolset": "game", "instance": "red-17"}),
        )
        .await;
    assert_eq!(opened["result"]["instance"], "red-17", "{opened}");

    let mut bob = f.http_session("bob").await;
    let guessed = "red-17";
    let made_up = "nobody-g7";
    // A call into the guessed instance and into one that never was: the same answer.
    let poke =
        |name: &str| json!({"name": "poke", "arguments": {}, "_meta": {"mcpl/instance": name}});
    let a = bob.call("tools/call", poke(guessed)).await;
    let b = bob.call("tools/call", poke(made_up)).await;
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert!(!a.to_string().contains("alice"), "{a}");
    assert_eq!(shape(&a, guessed), shape(&b, made_up));
    // A close of either: the same refusal.
    let close = |name: &str| json!({"toolset": "game", "instance": name});
    let a = bob.call("toolsets/close", close(guessed)).await;
    let b = bob.call("toolsets/close", close(made_up)).await;
    assert!(
        a.get("error").is_some() || a["result"]["isError"] == true,
        "{a}"
    );
    assert!(!a.to_string().contains("alice"), "{a}");
    assert_eq!(shape(&a, guessed), shape(&b, made_up));
    // Bob's statement names nothing of alice's.
    let list = bob.call("toolsets/list", json!({})).await;
    assert_eq!(
        (&list["result"]["open"], &list["result"]["ended"]),
        (&json!([]), &json!([])),
        "{list}"
    );
    // Opening the guessed name gives bob an instance of his own, as any fresh name would.
    let a = bob.call("toolsets/open", close(guessed)).await;
    let poked = bob.call("tools/call", poke(guessed)).await;
    assert_eq!(
        poked["result"]["content"][0]["text"], "bob poked red-17 (1 taking part)",
        "{poked}"
    );
    let b = bob.call("toolsets/open", close(made_up)).await;
    assert!(a["result"].get("adopted").is_none(), "not alice's: {a}");
    let rev = |v: &Value| v["result"]["_meta"]["mcpl/hints"]["rev"].clone();
    assert_eq!(
        rev(&b),
        json!(rev(&a).as_u64().unwrap() + 1),
        "the poke between took none"
    );
    let strip = |mut v: Value| {
        v["result"]["_meta"]["mcpl/hints"]["rev"] = json!(0);
        v
    };
    assert_eq!(shape(&strip(a), guessed), shape(&strip(b), made_up));

    // Alice saw none of it: her next read is her own answer, and her game is hers alone.
    let mine = alice.call("tools/call", poke(guessed)).await;
    assert_eq!(
        mine["result"]["content"][0]["text"], "alice poked red-17 (1 taking part)",
        "{mine}"
    );
    let list = alice.call("toolsets/list", json!({})).await;
    assert_eq!(
        list["result"]["open"],
        json!([{"toolset": "game", "instance": "red-17", "title": "Game"}]),
        "{list}"
    );
    alice.echo("still here").await;
}

// ---- origins ---------------------------------------------------------------------------

#[actix::test]
async fn a_foreign_origin_is_refused_with_403_on_both_transports() {
    let f = Fixture::start().await;
    let mut witness = f.http_session("bob").await;
    let auth = ("Authorization", "Bearer alice-token");
    let evil = ("Origin", "http://evil.example");

    let r = exchange(f.http, post(f.http, &[auth, evil], INIT.as_bytes())).await;
    assert_eq!(r.status, 403, "{r:?}");
    assert_eq!(ws_connect(f.ws, &[auth, evil], None).await.err(), Some(403));
    // A DNS-rebinding page posing as loopback on another port is still loopback; a
    // lookalike host is not.
    let lookalike = ("Origin", "http://127.0.0.1.evil.example");
    assert_eq!(
        ws_connect(f.ws, &[auth, lookalike], None).await.err(),
        Some(403)
    );

    // The configured origin, and a loopback one, get in.
    let good = ("Origin", GOOD_ORIGIN);
    let r = exchange(f.http, post(f.http, &[auth, good], INIT.as_bytes())).await;
    assert_eq!(r.status, 200, "{r:?}");
    let mut ws = ws_connect(f.ws, &[auth, ("Origin", "http://localhost:3000")], None)
        .await
        .expect("a loopback origin is accepted");
    ws.send_text(PING).await.unwrap();
    assert_eq!(ws.recv_json().await["id"], 9);
    witness.echo("still here").await;
}

// ---- size and shape ----------------------------------------------------------------------

#[actix::test]
async fn oversized_messages_are_refused_and_the_server_and_other_sessions_go_on() {
    let f = Fixture::start().await;
    let mut witness = f.http_session("bob").await;

    // WebSocket, over the limit: refused with a null id; the same session goes on.
    let mut alice = f.ws_session("alice").await;
    let big = "x".repeat(LIMIT + 1);
    alice
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {"text": big}}}))
        .await;
    let refused = alice.recv().await.expect("an answer");
    assert_eq!(
        (&refused["id"], code(&refused)),
        (&Value::Null, ErrorCode::INVALID_REQUEST.0),
        "{refused}"
    );
    alice.echo("after the big one").await;
    witness.echo("still here").await;

    // Past the transport's hard ceiling: that link is closed with 1009, and only it.
    let auth = ("Authorization", "Bearer alice-token");
    let mut raw = ws_connect(f.ws, &[auth], None).await.unwrap();
    let huge = vec![b' '; LIMIT * ws::HARD_CEILING_FACTOR + 1];
    let _ = raw.send_text(&huge).await;
    assert!(
        matches!(raw.recv().await, WsRead::Close(Some(1009)) | WsRead::Eof),
        "closed"
    );
    alice.echo("after the huge one").await;

    // Streamable HTTP: 413 with a JSON-RPC error; the session goes on.
    let session = raw_session(f.http, "alice").await;
    let body = format!(r#"{{"jsonrpc":"2.0","id":3,"method":"ping","params":{{"pad":"{big}"}}}}"#);
    let r = in_session(f.http, "alice", &session, body.as_bytes()).await;
    assert_eq!(r.status, 413, "{r:?}");
    assert_eq!(code(&r.json()), ErrorCode::INVALID_REQUEST.0);
    // One far past the limit is not even read to its end.
    let r = in_session(f.http, "alice", &session, &vec![b' '; 8 * LIMIT]).await;
    assert_eq!(r.status, 413, "{r:?}");
    session_answers(f.http, "alice", &session).await;
    witness.echo("still here").await;
}

#[actix::test]
async fn deeply_nested_json_is_a_parse_error_and_the_session_goes_on() {
    let f = Fixture::start().await;
    let mut witness = f.http_session("bob").await;
    // Not JSON at all (-32700); JSON nested past the parser's limit inside a message object
    // (-32700: it cannot be read); JSON that is an array, however deep (-32600: a message is
    // an object, and an array is never read, so its depth costs nothing).
    let open_only = vec![b'['; 100_000];
    let deep_object = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{}{}}}"#,
        r#"{"a":"#.repeat(20_000),
        "}".repeat(20_000)
    )
    .into_bytes();
    let balanced = [vec![b'['; 50_000], vec![b']'; 50_000]].concat();
    let cases = [
        (&open_only, ErrorCode::PARSE_ERROR),
        (&deep_object, ErrorCode::PARSE_ERROR),
        (&balanced, ErrorCode::INVALID_REQUEST),
    ];

    let auth = ("Authorization", "Bearer alice-token");
    let mut ws = ws_connect(f.ws, &[auth], None).await.unwrap();
    for (body, expected) in cases {
        ws.send_text(body).await.unwrap();
        let refused = ws.recv_json().await;
        assert_eq!(
            (&refused["id"], code(&refused)),
            (&Value::Null, expected.0),
            "{refused}"
        );
        ws.send_text(PING).await.unwrap();
        assert_eq!(ws.recv_json().await["result"], json!({}));
    }

    let session = raw_session(f.http, "alice").await;
    for (body, expected) in cases {
        let r = in_session(f.http, "alice", &session, body).await;
        assert_eq!(r.status, 400, "{r:?}");
        assert_eq!(code(&r.json()), expected.0);
        session_answers(f.http, "alice", &session).await;
    }
    witness.echo("still here").await;
}

#[actix::test]
async fn malformed_json_unknown_methods_and_bad_params_get_clear_json_rpc_errors() {
    let f = Fixture::start().await;
    let mut witness = f.http_session("bob").await;
    let cases: [(&[u8], Value, i64); 6] = [
        (br#"{"jsonrpc": "2.0", "id": 1, "method": "#, Value::Null, ErrorCode::PARSE_ERROR.0),
        (b"not json at all", Value::Null, ErrorCode::PARSE_ERROR.0),
        (br#"{"jsonrpc": "2.0", "id": 2, "method": "no/such"}"#, json!(2), ErrorCode::METHOD_NOT_FOUND.0),
        (br#"{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "nope"}"#, json!(3), ErrorCode::INVALID_REQUEST.0),
        (br#"{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "no_such_tool"}}"#, json!(4), ErrorCode::INVALID_PARAMS.0),
        (br#"{"jsonrpc": "1.0", "id": 5, "method": "ping"}"#, json!(5), ErrorCode::INVALID_REQUEST.0),
    ];

    let auth = ("Authorization", "Bearer alice-token");
    let mut ws = ws_connect(f.ws, &[auth], None).await.unwrap();
    ws.send_text(INIT.as_bytes()).await.unwrap();
    assert_eq!(ws.recv_json().await["id"], 1);
    ws.send_text(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await
        .unwrap();
    for (body, id, want) in &cases {
        ws.send_text(body).await.unwrap();
        let answer = ws.recv_json().await;
        assert_eq!((&answer["id"], code(&answer)), (id, *want), "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
    }
    ws.send_text(PING).await.unwrap();
    assert_eq!(ws.recv_json().await["result"], json!({}));

    let session = raw_session(f.http, "alice").await;
    for (body, id, want) in &cases {
        let r = in_session(f.http, "alice", &session, body).await;
        let answer = r.json();
        assert_eq!((&answer["id"], code(&answer)), (id, *want), "{answer}");
        let status_ok = if *want == ErrorCode::PARSE_ERROR.0 || id.is_null() {
            r.status == 400
        } else {
            r.status == 200 || r.status == 400
        };
        assert!(status_ok, "{r:?}");
    }
    session_answers(f.http, "alice", &session).await;
    witness.echo("still here").await;
}

// ---- clients that do not keep up -----------------------------------------------------------

/// The session ends either way: its outbound queue fills (the session closes the link
/// rather than buffer), or, once the socket's buffers are full, tungstenite's reader stalls
/// behind its unflushed writes and the queue never fills; then only the keepalive bounds
/// it (a ping that cannot be written within two intervals closes the link). Without
/// `ws_ping_interval` such a session would live as long as the client's socket.
#[actix::test]
async fn a_client_that_never_reads_is_disconnected_and_other_sessions_go_on() {
    let f = Fixture::start_with(Some(Duration::from_millis(500))).await;
    let mut witness = f.http_session("bob").await;
    f.sessions(1).await;
    let auth = ("Authorization", "Bearer alice-token");
    // A tiny receive window: the server's answers back up almost at once.
    let mut ws = ws_connect(f.ws, &[auth], Some(4096)).await.unwrap();
    f.sessions(2).await;
    let mut live = f.server.watch_sessions();
    let mut sent = 0u32;
    // Pings, never reading a pong, until the server gives up on the session. Bounded: the
    // server must have closed long before.
    while *live.borrow_and_update() == 2 && sent < 2_000_000 {
        let batch: Vec<u8> = (0..500).flat_map(|_| raw::frame(PING)).collect();
        let wrote = tokio::time::timeout(RECV_LIMIT, ws.send_raw(&batch)).await;
        if !matches!(wrote, Ok(Ok(()))) {
            break;
        }
        sent += 500;
    }
    f.sessions(1).await;
    assert!(sent < 2_000_000, "the session was never closed");
    witness.echo("still here").await;
    f.ws_session("alice").await.echo("a new one works").await;
}

#[actix::test]
async fn slow_http_clients_hold_only_their_own_connections() {
    let f = Fixture::start_opts(None, Duration::from_millis(300)).await;
    let mut witness = f.ws_session("bob").await;
    let (mut half_body, mut half_head) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        // Headers and a tenth of the body, then nothing.
        let body = INIT.as_bytes();
        let mut request = post(f.http, &[("Authorization", "Bearer alice-token")], body);
        request.truncate(request.len() - body.len() + body.len() / 10);
        half_body.push(raw::hold_open(f.http, &request).await);
        // Half a request head.
        half_head.push(raw::hold_open(f.http, b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-").await);
    }
    witness.echo("still here").await;
    f.http_session("alice")
        .await
        .echo("a new session works")
        .await;
    f.ws_session("alice")
        .await
        .echo("and over the other transport")
        .await;
    // The server cuts each slow client off by itself once its time is up: a late body with
    // 408, a late head with nothing.
    for mut s in half_body {
        let got = read_to_close(&mut s).await;
        let head = String::from_utf8_lossy(&got).to_ascii_lowercase();
        assert!(head.starts_with("http/1.1 408"), "{head}");
        assert!(head.contains("connection: close"), "{head}");
    }
    for mut s in half_head {
        assert!(read_to_close(&mut s).await.is_empty());
    }
    witness.echo("after they were cut off").await;
}

/// Reads what the server writes until it closes the connection (a reset counts as closed),
/// within [`RECV_LIMIT`].
async fn read_to_close(stream: &mut tokio::net::TcpStream) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(RECV_LIMIT, read)
        .await
        .expect("the server closes a slow client's connection");
    got
}
