//! MCP progress and logging from a tool handler (MCP 2025-11-25, "Utilities / Progress" and
//! "Utilities / Logging"): `ToolContext::progress` and `ToolContext::log`, the `logging`
//! capability and `logging/setLevel`.
//!
//! Every test runs over a real WebSocket listener on 127.0.0.1, whose link is ordered, so
//! the order a client reads is the order the session wrote: a call's notifications must
//! come before its result.

use mcpl_protocol::jsonrpc::ErrorCode;
use mcpl_protocol::mcp::{CallToolResult, LoggingLevel, Tool};
use mcpl_server::{
    InstanceContext, InstanceLogic, NotifyError, Reply, Server, ServerBuilder, Started, ToolCall,
    ToolContext, ToolError, Toolset,
};
use mcpl_testkit::msg;
use mcpl_transport::{ServerOptions, ws};
use serde::Deserialize;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How long a read waits before the test fails (only a failing test reaches it).
const RECV_LIMIT: Duration = Duration::from_secs(10);

/// Every level, least severe first, as the wire names them.
const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

// ---- the server --------------------------------------------------------------------------

#[derive(Deserialize)]
struct Steps {
    /// Progress values to report in order: numbers, or "nan" / "inf" for what JSON cannot
    /// carry.
    values: Vec<Value>,
    /// The total, the same way.
    #[serde(default)]
    total: Option<Value>,
    #[serde(default)]
    message: Option<String>,
}

/// What became of one report, by variant (never by text).
fn outcome(r: Result<(), NotifyError>) -> &'static str {
    match r {
        Ok(()) => "ok",
        Err(NotifyError::NotFinite) => "not-finite",
        Err(NotifyError::NotIncreasing { .. }) => "not-increasing",
        Err(NotifyError::CallEnded) => "ended",
        Err(NotifyError::Closed) => "closed",
        Err(_) => "other",
    }
}

fn value(v: &Value) -> f64 {
    match v.as_str() {
        Some("nan") => f64::NAN,
        Some("inf") => f64::INFINITY,
        _ => v.as_f64().expect("a number"),
    }
}

async fn steps(ctx: ToolContext, args: Steps) -> Result<CallToolResult, ToolError> {
    let total = args.total.as_ref().map(value);
    let mut outcomes = Vec::new();
    for v in &args.values {
        let r = ctx.progress(value(v), total, args.message.clone()).await;
        outcomes.push(outcome(r));
    }
    Ok(CallToolResult::text(outcomes.join(",")))
}

/// Logs one message at each level, least severe first.
async fn log_all(ctx: ToolContext, _: Value) -> Result<CallToolResult, ToolError> {
    for name in LEVELS {
        let level: LoggingLevel = serde_json::from_value(json!(name)).expect("a level");
        let r = ctx.log(level, Some("levels"), json!({"at": name})).await;
        assert_eq!(outcome(r), "ok");
    }
    Ok(CallToolResult::text("logged"))
}

struct Board;

impl InstanceLogic for Board {
    fn call(&mut self, _: ToolCall, _: &mut InstanceContext) -> Reply {
        Reply::text("a board")
    }
}

/// Opens `board` for its caller (the change is held for the result, §5.3), then reports
/// progress: the notification takes no rev and must not push the held change out first.
async fn open_then_report(ctx: ToolContext, _: Value) -> Result<CallToolResult, ToolError> {
    ctx.open_toolset("board", None, None)
        .await
        .map_err(ToolError::internal)?;
    let r = ctx.progress(1.0, Some(1.0), Some("opened".into())).await;
    Ok(CallToolResult::text(outcome(r)))
}

fn object() -> Value {
    json!({"type": "object"})
}

/// The test server: logging offered from `logging` (or not), and `keep` handing each of
/// its calls' contexts to `kept`.
fn server(logging: Option<LoggingLevel>, kept: mpsc::UnboundedSender<ToolContext>) -> Server {
    let mut b: ServerBuilder = Server::builder("progress-test", "1.0");
    if let Some(level) = logging {
        b = b.logging(level);
    }
    b.tool(Tool::new("steps", "Reports progress", object()), steps)
        .tool(
            Tool::new("log_all", "Logs at every level", object()),
            log_all,
        )
        .tool(
            Tool::new("keep", "Hands its context to the test", object()),
            move |ctx: ToolContext, _: Value| {
                let kept = kept.clone();
                async move {
                    kept.send(ctx).expect("the test waits");
                    Ok(CallToolResult::text("kept"))
                }
            },
        )
        .tool(
            Tool::new("open_then_report", "Opens board, then reports", object()),
            open_then_report,
        )
        .toolset(
            Toolset::new("board")
                .tool(Tool::new("peek", "Peeks", object()))
                .on_open(|_, _| Ok(Started::new(Board))),
        )
        .build()
        .expect("a valid server")
}

/// Serves `server` on a WebSocket listener on 127.0.0.1 (bound before this returns).
async fn listen(server: Server) -> SocketAddr {
    let mut opts = ServerOptions::default();
    opts.tokens.insert("alice-token".into(), "alice".into());
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let mut listener = ws::bind(any, Arc::new(opts)).await.expect("bind ws");
    let addr = listener.local_addr();
    actix::spawn(async move {
        while let Some(conn) = listener.accept().await {
            server.serve(conn);
        }
    });
    addr
}

// ---- the client --------------------------------------------------------------------------

/// The one raw peer of the tests (`mcpl_testkit`) on a WebSocket, and the steps these
/// tests take with it.
struct Link(mcpl_testkit::ws::Peer);

impl Link {
    async fn connect(addr: SocketAddr) -> Link {
        let peer =
            mcpl_testkit::ws::Peer::connect(&format!("ws://{addr}/mcp"), Some("alice-token"))
                .await
                .with_limit(RECV_LIMIT);
        Link(peer)
    }

    async fn send(&mut self, v: Value) {
        self.0.send(v).await;
    }

    async fn recv(&mut self) -> Value {
        self.0.recv().await
    }

    /// Sends request `id` and returns the next message.
    async fn exchange(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.0.exchange(msg::request(id, method, params)).await
    }

    /// The plain MCP handshake; returns the initialize result.
    async fn handshake_plain(&mut self) -> Value {
        self.handshake(json!({})).await
    }

    /// The MCPL handshake with `toolHints`, granted `tools`; returns the initialize result.
    async fn handshake_hinted(&mut self) -> Value {
        let mcpl = json!({"version": "0.5", "toolHints": true});
        let result = self
            .handshake(json!({"experimental": {"mcpl": mcpl}}))
            .await;
        let grant = json!({"effectiveCapabilities": ["tools"]});
        let receipt = self.exchange(2, "featureSets/update", grant).await;
        assert_eq!(receipt["result"]["accepted"], true, "{receipt}");
        result
    }

    async fn handshake(&mut self, capabilities: Value) -> Value {
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "progress-test", "version": "1"}});
        let reply = self.exchange(1, "initialize", init).await;
        self.send(msg::initialized()).await;
        reply["result"].clone()
    }

    /// Calls `tool`; returns the notifications read before its response, and the response.
    async fn call(&mut self, id: i64, tool: &str, args: Value, meta: Option<Value>) -> Called {
        let mut params = msg::call_params(tool, args, None);
        if let Some(m) = meta {
            params["_meta"] = m;
        }
        self.send(msg::request(id, "tools/call", params)).await;
        let mut before = Vec::new();
        loop {
            let m = self.recv().await;
            if m.get("id") == Some(&json!(id)) {
                return Called {
                    before,
                    response: m,
                };
            }
            assert!(m.get("id").is_none(), "only notifications come first: {m}");
            before.push(m);
        }
    }

    async fn set_level(&mut self, id: i64, level: Value) -> Value {
        self.exchange(id, "logging/setLevel", json!({"level": level}))
            .await
    }
}

/// A call's notifications and its response, in the order read.
struct Called {
    before: Vec<Value>,
    response: Value,
}

impl Called {
    fn text(&self) -> &str {
        self.response["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("not a text result: {}", self.response))
    }

    /// The `data` of each log message read before the response.
    fn logged(&self) -> Vec<Value> {
        self.before
            .iter()
            .map(|m| {
                assert_eq!(m["method"], "notifications/message", "{m}");
                m["params"]["data"].clone()
            })
            .collect()
    }
}

/// The data `log_all` logs at each level from `least` up.
fn logged_from(least: &str) -> Vec<Value> {
    let from = LEVELS.iter().position(|l| *l == least).expect("a level");
    LEVELS[from..].iter().map(|l| json!({"at": l})).collect()
}

fn error_code(reply: &Value) -> i64 {
    reply["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {reply}"))
}

async fn start(logging: Option<LoggingLevel>) -> (Link, mpsc::UnboundedReceiver<ToolContext>) {
    let (kept_tx, kept) = mpsc::unbounded_channel();
    let addr = listen(server(logging, kept_tx)).await;
    (Link::connect(addr).await, kept)
}

// ---- progress ----------------------------------------------------------------------------

#[actix::test]
async fn progress_arrives_before_the_result_with_the_calls_own_token() {
    let (mut c, _kept) = start(None).await;
    c.handshake_plain().await;
    let args = json!({"values": [0, 50, 100], "total": 100, "message": "working"});
    let meta = json!({"progressToken": "tok-1"});
    let got = c.call(10, "steps", args, Some(meta)).await;
    assert_eq!(got.text(), "ok,ok,ok");
    let want: Vec<Value> = [0.0, 50.0, 100.0]
        .iter()
        .map(|p| {
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                "progressToken": "tok-1", "progress": p, "total": 100.0, "message": "working"}})
        })
        .collect();
    assert_eq!(got.before, want);

    // A number token comes back as the same number; no total, no message.
    let got = c
        .call(
            11,
            "steps",
            json!({"values": [0.5]}),
            Some(json!({"progressToken": 7})),
        )
        .await;
    assert_eq!(got.text(), "ok");
    assert_eq!(
        got.before,
        [json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": 7, "progress": 0.5}})]
    );
}

#[actix::test]
async fn a_call_without_a_progress_token_gets_no_progress() {
    let (mut c, _kept) = start(None).await;
    c.handshake_plain().await;
    let args = json!({"values": [0, 50, 100], "total": 100});
    let got = c.call(10, "steps", args.clone(), None).await;
    assert_eq!(got.text(), "ok,ok,ok", "reporting without a token succeeds");
    assert_eq!(got.before, Vec::<Value>::new());
    // A `_meta` with other keys but no token is no token either.
    let meta = json!({"mcpl/instance": "x", "other": 1});
    let got = c.call(11, "steps", args, Some(meta)).await;
    assert_eq!(got.before, Vec::<Value>::new());
}

#[actix::test]
async fn progress_that_does_not_increase_or_is_not_finite_is_refused_and_not_sent() {
    let (mut c, _kept) = start(None).await;
    c.handshake_plain().await;
    let args = json!({"values": [10, 10, 5, "nan", 20, "inf"]});
    let got = c
        .call(10, "steps", args, Some(json!({"progressToken": "t"})))
        .await;
    assert_eq!(
        got.text(),
        "ok,not-increasing,not-increasing,not-finite,ok,not-finite"
    );
    let sent: Vec<&Value> = got
        .before
        .iter()
        .map(|m| &m["params"]["progress"])
        .collect();
    assert_eq!(sent, [&json!(10.0), &json!(20.0)]);
    // A total that is not finite is refused too, and nothing more is sent.
    let args = json!({"values": [30], "total": "nan"});
    let got = c
        .call(11, "steps", args, Some(json!({"progressToken": "t"})))
        .await;
    assert_eq!(got.text(), "not-finite");
    assert_eq!(got.before, Vec::<Value>::new());
}

#[actix::test]
async fn progress_after_the_call_was_answered_is_refused() {
    let (mut c, mut kept) = start(None).await;
    c.handshake_plain().await;
    let got = c
        .call(
            10,
            "keep",
            json!({}),
            Some(json!({"progressToken": "late"})),
        )
        .await;
    assert_eq!(got.text(), "kept");
    let ctx = kept.recv().await.expect("the handler's context");
    // MCP: progress notifications stop once the call is answered.
    assert_eq!(
        ctx.progress(1.0, None, None).await,
        Err(NotifyError::CallEnded)
    );
    // Nothing was written: the next message is the answer to a ping.
    let pong = c.exchange(11, "ping", json!({})).await;
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": 11, "result": {}}));
}

#[actix::test]
async fn progress_takes_no_rev_and_leaves_changes_held_for_the_result() {
    let (mut c, _kept) = start(None).await;
    c.handshake_hinted().await;
    let meta = json!({"progressToken": "open"});
    let got = c.call(10, "open_then_report", json!({}), Some(meta)).await;
    assert_eq!(got.text(), "ok");
    // §5.3: the open's change rides in the result; the progress before it is no reason to
    // send it ahead as `tools/hints` (§5.2: only hint-carrying messages take revs).
    assert_eq!(
        got.before,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": "open", "progress": 1.0, "total": 1.0, "message": "opened"}})
        ]
    );
    let hints = &got.response["result"]["_meta"]["mcpl/hints"];
    assert_eq!(hints["rev"], 1, "{}", got.response);
}

// ---- logging -----------------------------------------------------------------------------

#[actix::test]
async fn logging_is_declared_and_messages_come_at_or_above_the_level_set() {
    let (mut c, _kept) = start(Some(LoggingLevel::Debug)).await;
    let init = c.handshake_plain().await;
    assert_eq!(init["capabilities"]["logging"], json!({}), "{init}");

    // Before any setLevel: the server's initial level, debug, sends everything.
    let got = c.call(10, "log_all", json!({}), None).await;
    assert_eq!(got.text(), "logged");
    assert_eq!(got.logged(), logged_from("debug"));
    assert_eq!(
        got.before[1],
        json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "logger": "levels", "data": {"at": "info"}}})
    );

    let reply = c.set_level(11, json!("warning")).await;
    assert_eq!(reply, json!({"jsonrpc": "2.0", "id": 11, "result": {}}));
    let got = c.call(12, "log_all", json!({}), None).await;
    assert_eq!(got.logged(), logged_from("warning"));

    c.set_level(13, json!("emergency")).await;
    let got = c.call(14, "log_all", json!({}), None).await;
    assert_eq!(got.logged(), logged_from("emergency"));

    // Lowering it again lets the less severe ones back in.
    c.set_level(15, json!("debug")).await;
    let got = c.call(16, "log_all", json!({}), None).await;
    assert_eq!(got.logged(), logged_from("debug"));
}

#[actix::test]
async fn the_servers_initial_level_applies_until_the_client_sets_one() {
    let (mut c, _kept) = start(Some(LoggingLevel::Error)).await;
    c.handshake_plain().await;
    let got = c.call(10, "log_all", json!({}), None).await;
    assert_eq!(got.logged(), logged_from("error"));
    c.set_level(11, json!("info")).await;
    let got = c.call(12, "log_all", json!({}), None).await;
    assert_eq!(got.logged(), logged_from("info"));
}

#[actix::test]
async fn a_bad_level_is_invalid_params_and_changes_nothing() {
    let (mut c, _kept) = start(Some(LoggingLevel::Debug)).await;
    c.handshake_plain().await;
    c.set_level(10, json!("error")).await;
    let invalid = ErrorCode::INVALID_PARAMS.0;
    for (id, bad) in [(11, json!("verbose")), (12, json!("ERROR")), (13, json!(3))] {
        let reply = c.set_level(id, bad.clone()).await;
        assert_eq!(error_code(&reply), invalid, "{bad}: {reply}");
    }
    let reply = c.exchange(14, "logging/setLevel", json!({})).await;
    assert_eq!(error_code(&reply), invalid, "no level: {reply}");
    // The session goes on, at the level set before.
    let got = c.call(15, "log_all", json!({}), None).await;
    assert_eq!(got.logged(), logged_from("error"));
}

#[actix::test]
async fn each_session_has_its_own_level() {
    let (kept_tx, _kept) = mpsc::unbounded_channel();
    let addr = listen(server(Some(LoggingLevel::Debug), kept_tx)).await;
    let (mut a, mut b) = (Link::connect(addr).await, Link::connect(addr).await);
    a.handshake_plain().await;
    b.handshake_plain().await;
    a.set_level(10, json!("critical")).await;
    assert_eq!(
        a.call(11, "log_all", json!({}), None).await.logged(),
        logged_from("critical")
    );
    assert_eq!(
        b.call(11, "log_all", json!({}), None).await.logged(),
        logged_from("debug")
    );
}

#[actix::test]
async fn a_server_without_logging_declares_none_refuses_set_level_and_sends_nothing() {
    let (mut c, _kept) = start(None).await;
    let init = c.handshake_plain().await;
    assert!(init["capabilities"].get("logging").is_none(), "{init}");
    let reply = c.set_level(10, json!("debug")).await;
    assert_eq!(error_code(&reply), ErrorCode::METHOD_NOT_FOUND.0, "{reply}");
    let got = c.call(11, "log_all", json!({}), None).await;
    assert_eq!(got.text(), "logged");
    assert_eq!(got.before, Vec::<Value>::new());
}
