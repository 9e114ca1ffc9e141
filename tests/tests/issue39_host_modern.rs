//! Issue #39 item 8: the host's `ServerLink` speaks MCP 2026-07-28 (the modern era) with a
//! modern-only server written with the official Python SDK, over stdio and Streamable
//! HTTP: the `server/discover` probe, per-request `_meta`, a question asked by MRTR
//! (`InputRequiredResult`) answered from the form's defaults or declined, and a tool list
//! that changes, told on `subscriptions/listen` or read again once stale when the server
//! serves no listen. And a fake legacy server on a real socket, refusing the probe with an
//! error that is no modern one, gets `initialize` next on the same connection.

use actix::Actor;
use mcpl_host::link::{
    CallTool, Connector, DisconnectReason, Era, EraPolicy, EventSink, GetStatus, LinkConfig,
    LinkError, LinkEvent, SendRequest, ServerLink, Shutdown,
};
use mcpl_protocol::mcp::Tool;
use mcpl_protocol::method::ToolsetsList;
use mcpl_testkit::within;
use mcpl_tests::interop::{python, python_http_server, script};
use mcpl_transport::ClientOptions;
use serde_json::{Value, json};
use std::collections::HashMap;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

type Events = mpsc::UnboundedReceiver<LinkEvent>;

/// Starts a link with `era` and waits until it is connected with its tools listed; and
/// whether a subscription was acknowledged by then.
async fn link_and_tools(
    connector: Connector,
    era: EraPolicy,
) -> (actix::Addr<ServerLink>, Vec<Tool>, Events, bool) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let config = LinkConfig::new("py", connector)
        .with_era(era)
        .with_subscriber(EventSink::Channel(tx));
    let link = ServerLink::new(config).start();
    let mut connected = false;
    let mut acknowledged = false;
    let tools = within(async {
        loop {
            match rx.recv().await.expect("the link reports") {
                LinkEvent::Notification { notification, .. } if is_ack(&notification) => {
                    acknowledged = true;
                }
                LinkEvent::Connected { init, mcpl, .. } => {
                    assert_eq!(init.server_info.name, "py-modern");
                    assert_eq!(init.protocol_version, "2026-07-28");
                    assert!(
                        !mcpl,
                        "a modern server without mcpl/core is served as plain MCP"
                    );
                    connected = true;
                }
                LinkEvent::ToolsChanged { tools, .. } if connected => return tools.to_vec(),
                LinkEvent::Disconnected { reason, .. } => panic!("disconnected: {reason}"),
                LinkEvent::ConnectFailed { error, .. } => panic!("could not connect: {error}"),
                _ => {}
            }
        }
    })
    .await;
    (link, tools, rx, acknowledged)
}

fn is_ack(notification: &mcpl_protocol::Notification) -> bool {
    notification.method == "notifications/subscriptions/acknowledged"
}

fn names(tools: &[Tool]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

async fn call(link: &actix::Addr<ServerLink>, tool: &str, args: Value) -> String {
    let args = args.as_object().cloned().expect("an object");
    let result = within(link.send(CallTool::new(tool).with_arguments(args)))
        .await
        .expect("the link answers")
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(!result.is_error, "{tool}: {result:?}");
    result.joined_text()
}

/// The whole exercise against a modern-only Python server; `listens`: the server serves
/// `subscriptions/listen`, so the list's change is told rather than found.
async fn exercise(connector: Connector, listens: bool) {
    let (link, tools, mut events, mut acknowledged) =
        link_and_tools(connector, EraPolicy::Auto).await;
    assert_eq!(names(&tools), ["add", "confirm_size", "ask_name", "grow"]);
    let status = link.send(GetStatus).await.unwrap();
    assert_eq!(status.session.expect("a session").era, Era::Modern);
    if listens && !acknowledged {
        // A change made before the acknowledgement would not be told (the stream starts
        // there), and the link reads a list again after a call until then.
        within(async {
            while !matches!(events.recv().await, Some(LinkEvent::Notification { notification, .. }) if is_ack(&notification))
            {}
        })
        .await;
        acknowledged = true;
    }

    assert_eq!(call(&link, "add", json!({"a": 2, "b": 40})).await, "42");
    // MRTR: the form's every required field has a default, so it is accepted with them,
    // and the retry echoes the server's requestState (the tool checks it).
    assert_eq!(
        call(&link, "confirm_size", json!({})).await,
        r#"answered {"action": "accept", "content": {"confirm": true, "size": 9}}"#
    );
    // A required field without a default: declined, and the server decides what that
    // means (here: it says so).
    assert_eq!(
        call(&link, "ask_name", json!({})).await,
        r#"answered {"action": "decline"}"#
    );
    // A tool that adds a tool: the host learns of it (on the listen stream, or by reading
    // the stale list again after the call: its ttlMs is 0) without being asked.
    assert_eq!(call(&link, "grow", json!({})).await, "grown");
    let told = within(async {
        loop {
            match events.recv().await.expect("the link reports") {
                LinkEvent::Notification { notification, .. } if is_ack(&notification) => {
                    acknowledged = true;
                }
                LinkEvent::ToolsListed {
                    tools,
                    list_changed,
                    ..
                } if names(&tools).contains(&"extra") => break list_changed,
                LinkEvent::Disconnected { reason, .. } => panic!("disconnected: {reason}"),
                _ => {}
            }
        }
    })
    .await;
    assert_eq!(
        (acknowledged, told),
        (listens, listens),
        "told by notifications/tools/list_changed exactly when the server listens"
    );
    assert_eq!(call(&link, "extra", json!({})).await, "extra");
    link.send(Shutdown).await.unwrap();
}

fn stdio_url(args: &str) -> String {
    format!(
        "stdio:{} {} stdio {args}",
        python().display(),
        script("py_modern_server.py").display()
    )
}

#[actix::test]
async fn issue39_08_host_plays_a_modern_only_python_server_over_stdio() {
    exercise(
        Connector::url(stdio_url(""), ClientOptions::default()),
        true,
    )
    .await;
}

#[actix::test]
async fn issue39_08_host_plays_a_modern_only_python_server_over_streamable_http() {
    let (_guard, url) = python_http_server("py_modern_server.py", &["http"]);
    exercise(Connector::url(url, ClientOptions::default()), true).await;
}

#[actix::test]
async fn issue39_08_without_listen_a_stale_list_is_read_again_after_a_call_over_stdio() {
    exercise(
        Connector::url(stdio_url("--no-listen"), ClientOptions::default()),
        false,
    )
    .await;
}

#[actix::test]
async fn issue39_08_without_listen_a_stale_list_is_read_again_after_a_call_over_http() {
    let (_guard, url) = python_http_server("py_modern_server.py", &["http", "--no-listen"]);
    exercise(Connector::url(url, ClientOptions::default()), false).await;
}

/// A legacy server (the official Python SDK, which serves both eras, is not one): a link
/// configured `modern` does not connect to a server that answers the probe as legacy.
#[actix::test]
async fn issue39_08_a_modern_only_link_does_not_fall_back() {
    let (url, mut requests) = fake_http_server(Discover::Refuse(400, LEGACY_ERROR)).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let config = LinkConfig::new("fake", Connector::url(url, ClientOptions::default()))
        .with_era(EraPolicy::Modern)
        .with_subscriber(EventSink::Channel(tx));
    let link = ServerLink::new(config).start();
    let reason = within(async {
        loop {
            if let LinkEvent::Disconnected { reason, .. } = rx.recv().await.unwrap() {
                return reason;
            }
        }
    })
    .await;
    assert!(
        matches!(reason, DisconnectReason::NotModern { .. }),
        "{reason:?}"
    );
    assert_eq!(requests.recv().await.unwrap().method, "server/discover");
    link.send(Shutdown).await.unwrap();
    // What it sent before it stopped: the probe again on each attempt, never initialize.
    while let Ok(r) = requests.try_recv() {
        assert_eq!(r.method, "server/discover");
    }
}

/// What the Python SDK's stateful transport says to a POST without a session id.
const LEGACY_ERROR: &str = r#"{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Bad Request: Missing session ID"}}"#;

#[actix::test]
async fn issue39_08_a_legacy_error_to_the_probe_falls_back_to_initialize_on_http() {
    for answer in [
        Discover::Refuse(400, LEGACY_ERROR),
        Discover::Refuse(400, ""),
    ] {
        falls_back(answer).await;
    }
}

async fn falls_back(answer: Discover) {
    let (url, mut requests) = fake_http_server(answer).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let config = LinkConfig::new("fake", Connector::url(url, ClientOptions::default()))
        .with_era(EraPolicy::Auto)
        .with_subscriber(EventSink::Channel(tx));
    let link = ServerLink::new(config).start();
    within(async {
        loop {
            match rx.recv().await.unwrap() {
                LinkEvent::ToolsChanged { tools, .. } => {
                    assert_eq!(names(&tools), ["hello"]);
                    break;
                }
                LinkEvent::Disconnected { reason, .. } => panic!("disconnected: {reason}"),
                _ => {}
            }
        }
    })
    .await;
    let status = link.send(GetStatus).await.unwrap();
    let session = status.session.expect("a session");
    assert_eq!(
        (session.era, session.init.protocol_version.as_str()),
        (Era::Legacy, "2025-11-25")
    );
    assert_eq!(call(&link, "hello", json!({})).await, "hi");

    let probe = requests.recv().await.unwrap();
    assert_eq!(probe.method, "server/discover");
    assert_eq!(probe.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(probe.header("mcp-method"), Some("server/discover"));
    assert_eq!(probe.header("mcp-session-id"), None);
    let meta = &probe.body["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    // Form elicitation, and RFC-014's stateless profile (`mcpl/core`, issue #40).
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"elicitation": {"form": {}}, "extensions": {"mcpl/core":
            {"version": "0.5", "toolHints": true, "pushEvents": true}}})
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"]["name"],
        "mcpl-host"
    );
    let init = requests.recv().await.unwrap();
    assert_eq!(init.method, "initialize");
    // After the fallback, the requests are legacy ones: no per-request `_meta`, the
    // session's id and negotiated version.
    let mut rest = Vec::new();
    while let Ok(r) = requests.try_recv() {
        rest.push(r);
    }
    // Concurrent POSTs: the notification and the listing may come in either order.
    let mut methods: Vec<&str> = rest.iter().map(|r| r.method.as_str()).collect();
    methods.sort_unstable();
    assert_eq!(
        methods,
        ["notifications/initialized", "tools/call", "tools/list"]
    );
    for r in &rest {
        assert!(r.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].is_null());
        assert_eq!(r.header("mcp-session-id"), Some("s1"));
        assert_eq!(r.header("mcp-protocol-version"), Some("2025-11-25"));
    }
    link.send(Shutdown).await.unwrap();
}

/// A modern error to the probe is not fallen back from: the link reports the server's
/// refusal and never sends `initialize`.
#[actix::test]
async fn issue39_08_a_modern_error_to_the_probe_is_not_fallen_back_from() {
    const UNSUPPORTED: &str = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2099-01-01"],"requested":"2026-07-28"}}}"#;
    let (url, mut requests) = fake_http_server(Discover::Refuse(400, UNSUPPORTED)).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let config = LinkConfig::new("fake", Connector::url(url, ClientOptions::default()))
        .with_era(EraPolicy::Auto)
        .with_subscriber(EventSink::Channel(tx));
    let link = ServerLink::new(config).start();
    let reason = within(async {
        loop {
            if let LinkEvent::Disconnected { reason, .. } = rx.recv().await.unwrap() {
                return reason;
            }
        }
    })
    .await;
    match reason {
        DisconnectReason::HandshakeRejected { method, error } => {
            assert_eq!((method, error.code.0), ("server/discover", -32022));
        }
        other => panic!("{other:?}"),
    }
    link.send(Shutdown).await.unwrap();
    while let Ok(r) = requests.try_recv() {
        assert_eq!(r.method, "server/discover", "never initialize");
    }
}

/// A modern server's error is its own: the 404 a modern Streamable HTTP server answers an
/// unknown method with reaches the caller as the -32601 in its body, not as a transport
/// failure.
#[actix::test]
async fn issue39_08_a_modern_servers_errors_reach_the_caller_as_its_own() {
    let (_guard, url) = python_http_server("py_modern_server.py", &["http"]);
    let (link, _, _, _) = link_and_tools(
        Connector::url(url, ClientOptions::default()),
        EraPolicy::Modern,
    )
    .await;
    let outcome = within(link.send(SendRequest::<ToolsetsList>::new(Default::default())))
        .await
        .unwrap();
    match outcome {
        Err(LinkError::Server { error, .. }) => assert_eq!(error.code.0, -32601, "{error:?}"),
        other => panic!("{other:?}"),
    }
    link.send(Shutdown).await.unwrap();
}

/// How the fake server answers `server/discover`.
#[derive(Clone, Copy)]
enum Discover {
    /// With this status and body.
    Refuse(u16, &'static str),
}

/// A request the fake server read.
#[derive(Debug)]
struct Seen {
    method: String,
    headers: HashMap<String, String>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// A legacy Streamable HTTP server, by hand, on a loopback port: POSTs only (a GET gets
/// 405), `initialize` opens session `s1`; `server/discover` gets `discover`. Each request
/// read is sent on the channel, in order.
async fn fake_http_server(discover: Discover) -> (String, mpsc::UnboundedReceiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::unbounded_channel();
    actix::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let tx = tx.clone();
            actix::spawn(async move {
                let mut socket = BufReader::new(socket);
                while let Some((verb, headers, body)) = read_request(&mut socket).await {
                    let answer = if verb != "POST" {
                        (405, "", String::new())
                    } else {
                        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                        let method = body["method"].as_str().unwrap_or_default().to_owned();
                        let answer = answer_to(&method, &body, discover);
                        let _ = tx.send(Seen {
                            method,
                            headers,
                            body,
                        });
                        answer
                    };
                    let (status, session, text) = answer;
                    let mut head =
                        format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\n", text.len());
                    if !text.is_empty() {
                        head.push_str("content-type: application/json\r\n");
                    }
                    if !session.is_empty() {
                        head.push_str(&format!("mcp-session-id: {session}\r\n"));
                    }
                    head.push_str("\r\n");
                    let out = socket.get_mut();
                    if out.write_all(head.as_bytes()).await.is_err()
                        || out.write_all(text.as_bytes()).await.is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    (url, rx)
}

/// The fake's answer to a POSTed message: status, session id to assign, body.
fn answer_to(method: &str, body: &Value, discover: Discover) -> (u16, &'static str, String) {
    let id = &body["id"];
    let ok = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    match method {
        "server/discover" => {
            let Discover::Refuse(status, text) = discover;
            (status, "", text.to_owned())
        }
        "initialize" => (
            200,
            "s1",
            ok(
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "1"}}),
            ),
        ),
        "tools/list" => (
            200,
            "",
            ok(json!({"tools": [{"name": "hello", "inputSchema": {"type": "object"}}]})),
        ),
        "tools/call" => (
            200,
            "",
            ok(json!({"content": [{"type": "text", "text": "hi"}]})),
        ),
        _ if body.get("id").is_none() => (202, "", String::new()),
        _ => (
            200,
            "",
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}})
                .to_string(),
        ),
    }
}

/// One HTTP/1.1 request: its verb, headers (names lowercased) and body; `None` at the end.
async fn read_request(
    socket: &mut BufReader<tokio::net::TcpStream>,
) -> Option<(String, HashMap<String, String>, Vec<u8>)> {
    let mut line = String::new();
    if socket.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    let verb = line.split(' ').next()?.to_owned();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        socket.read_line(&mut h).await.ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    socket.read_exact(&mut body).await.ok()?;
    Some((verb, headers, body))
}

/// Our own server is dual-era and speaks MCPL: probed (`auto`), its `server/discover`
/// names `extensions["mcpl/core"]` and 2025-11-25, so the link goes on to `initialize` on
/// the same connection and keeps MCPL (the grant, RFC-014), on every transport
/// (**[project]**, `host-core/src/link/era.rs`: toolsets reach a modern host only with #40).
#[actix::test]
async fn issue39_08_auto_keeps_a_dual_era_mcpl_server_in_the_legacy_era() {
    const SERVER: &str = env!("CARGO_BIN_EXE_mcpl-interop-server");
    let stdio = format!("stdio:{SERVER} stdio");
    let (_ws, ws) = listening(SERVER, "ws");
    let (_http, http) = listening(SERVER, "http");
    for url in [stdio, format!("ws://{ws}/"), format!("http://{http}/mcp")] {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let config = LinkConfig::new("ours", Connector::url(&url, ClientOptions::default()))
            .with_era(EraPolicy::Auto)
            .with_subscriber(EventSink::Channel(tx));
        let link = ServerLink::new(config).start();
        let mut granted = None;
        within(async {
            loop {
                match rx.recv().await.unwrap() {
                    LinkEvent::Connected {
                        mcpl,
                        receipt,
                        init,
                        ..
                    } => {
                        assert_eq!(init.protocol_version, "2025-11-25", "{url}");
                        granted = Some((mcpl, receipt.is_some()));
                    }
                    LinkEvent::ToolsChanged { .. } if granted.is_some() => break,
                    LinkEvent::Disconnected { reason, .. } => panic!("{url}: {reason}"),
                    _ => {}
                }
            }
        })
        .await;
        assert_eq!(granted, Some((true, true)), "{url}: MCPL and its grant");
        let status = link.send(GetStatus).await.unwrap();
        assert_eq!(status.session.unwrap().era, Era::Legacy, "{url}");
        assert_eq!(call(&link, "echo", json!({"text": "both"})).await, "both");
        link.send(Shutdown).await.unwrap();
    }
}

/// `mcpl-interop-server TRANSPORT` on a free loopback port: the child and its address.
fn listening(server: &str, transport: &str) -> (mcpl_tests::interop::Killed, String) {
    let mut command = std::process::Command::new(server);
    command.arg(transport);
    mcpl_tests::interop::started_listening(command)
}

/// Our own host and server in the modern era (`modern`: the MCPL preference of `auto` does
/// not apply): tools listed and called on every transport, the server's tools served as a
/// plain MCP server's.
#[actix::test]
async fn issue39_08_modern_with_our_own_server_on_every_transport() {
    const SERVER: &str = env!("CARGO_BIN_EXE_mcpl-interop-server");
    let stdio = format!("stdio:{SERVER} stdio");
    let (_ws, ws) = listening(SERVER, "ws");
    let (_http, http) = listening(SERVER, "http");
    for url in [stdio, format!("ws://{ws}/"), format!("http://{http}/mcp")] {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let config = LinkConfig::new("ours", Connector::url(&url, ClientOptions::default()))
            .with_era(EraPolicy::Modern)
            .with_subscriber(EventSink::Channel(tx));
        let link = ServerLink::new(config).start();
        let tools = within(async {
            loop {
                match rx.recv().await.unwrap() {
                    LinkEvent::Connected { mcpl, init, .. } => {
                        assert_eq!(init.protocol_version, "2026-07-28", "{url}");
                        assert!(!mcpl, "{url}");
                    }
                    LinkEvent::ToolsChanged { tools, .. } => break tools,
                    LinkEvent::Disconnected { reason, .. } => panic!("{url}: {reason}"),
                    _ => {}
                }
            }
        })
        .await;
        assert!(names(&tools).contains(&"echo"), "{url}: {tools:?}");
        let status = link.send(GetStatus).await.unwrap();
        assert_eq!(status.session.unwrap().era, Era::Modern, "{url}");
        assert_eq!(
            call(&link, "echo", json!({"text": "modern"})).await,
            "modern"
        );
        assert_eq!(call(&link, "add", json!({"a": 1, "b": 2})).await, "3");
        link.send(Shutdown).await.unwrap();
    }
}
