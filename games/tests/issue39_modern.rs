//! Issue #39 items 1–3 and 5 from outside: the `mcpl-arcade` binary, spawned for real,
//! served MCP 2026-07-28 requests in raw JSON over stdio, WebSocket and Streamable HTTP,
//! beside the legacy era on the same process (and, on stdio and WebSocket, the same
//! connection). Nothing sleeps: every read awaits its message.

use crate::support;

use mcpl_testkit::within;
use mcpl_transport::{ClientOptions, ws};
use serde_json::{Value, json};
use std::process::Stdio;
use support::{BIN, Client, serve, text_of};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

const MODERN: &str = "2026-07-28";

/// The era's `_meta`, with `extra` keys added.
fn meta(extra: Value) -> Value {
    let mut m = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    if let (Some(m), Value::Object(extra)) = (m.as_object_mut(), extra) {
        m.extend(extra);
    }
    m
}

/// A modern request: `params` with the era's `_meta`.
fn modern(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta(json!({}));
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn call(id: i64, tool: &str, arguments: Value) -> Value {
    modern(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
}

/// What a discover result must say (MCP `server/discover.md`, caching, `basic/index.md`).
fn assert_discovered(reply: &Value) {
    let r = &reply["result"];
    assert_eq!(r["resultType"], "complete", "{reply:#}");
    let versions = r["supportedVersions"].as_array().expect("versions");
    assert_eq!(versions[0], MODERN, "{reply:#}");
    assert!(
        versions.contains(&json!("2025-11-25")),
        "both eras: {reply:#}"
    );
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcpl-arcade",
        "{reply:#}"
    );
    assert!(r["capabilities"]["tools"].is_object(), "{reply:#}");
    let mcpl = &r["capabilities"]["extensions"]["mcpl/core"];
    assert_eq!(
        mcpl["version"], "0.5",
        "the manifest under mcpl/core: {reply:#}"
    );
    assert!(r["instructions"].is_string(), "{reply:#}");
    assert_eq!(r["ttlMs"], 0, "{reply:#}");
    assert_eq!(r["cacheScope"], "private", "{reply:#}");
}

fn tool_names(reply: &Value) -> Vec<String> {
    reply["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {reply:#}"))
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// A modern result of a call: complete, the server named, and its text.
fn called(reply: &Value) -> String {
    let r = &reply["result"];
    assert_eq!(r["resultType"], "complete", "{reply:#}");
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcpl-arcade",
        "{reply:#}"
    );
    assert!(
        r.get("ttlMs").is_none(),
        "a call is not cacheable: {reply:#}"
    );
    text_of(r)
}

/// The first free cell a tic-tac-toe answer lists.
fn first_free(text: &str) -> String {
    text.split("Free cells: ")
        .nth(1)
        .and_then(|rest| rest.split([',', '\n']).next())
        .map(|c| c.trim().to_owned())
        .unwrap_or_else(|| panic!("no free cells in {text}"))
}

struct Stdio_ {
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Stdio_ {
    async fn exchange(&mut self, v: Value) -> Value {
        self.stdin
            .write_all(format!("{v}\n").as_bytes())
            .await
            .unwrap();
        self.recv().await
    }

    async fn recv(&mut self) -> Value {
        let line = within(self.lines.next_line())
            .await
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }
}

#[actix::test]
async fn issue39_01_02_stdio_serves_modern_requests_then_a_legacy_initialize_on_one_process() {
    let mut child = Command::new(BIN)
        .args(["serve", "--in-memory", "--stdio", "--principal", "carol"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut io = Stdio_ {
        stdin: child.stdin.take().unwrap(),
        lines: BufReader::new(child.stdout.take().unwrap()).lines(),
    };
    // Item 1: discover before anything else, answered; the process goes on.
    let found = io.exchange(modern(1, "server/discover", json!({}))).await;
    assert_eq!(found["id"], 1);
    assert_discovered(&found);
    // Item 2: the era's errors.
    let mut no_caps = modern(2, "tools/list", json!({}));
    no_caps["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let refused = io.exchange(no_caps).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused:#}");
    let mut old = modern(3, "server/discover", json!({}));
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let refused = io.exchange(old).await;
    assert_eq!(refused["error"]["code"], -32022, "{refused:#}");
    assert_eq!(refused["error"]["data"]["requested"], "1900-01-01");
    assert_eq!(refused["error"]["data"]["supported"][0], MODERN);
    // Item 5: the list, in the same order each time, tailored to the principal.
    let listed = io.exchange(modern(4, "tools/list", json!({}))).await;
    assert_eq!(listed["result"]["resultType"], "complete", "{listed:#}");
    assert_eq!(listed["result"]["cacheScope"], "private", "{listed:#}");
    assert_eq!(listed["result"]["ttlMs"], 0, "{listed:#}");
    let names = tool_names(&listed);
    assert!(
        names.contains(&"toolset_open".to_owned()) && names.contains(&"games".to_owned()),
        "{names:?}"
    );
    let again = io.exchange(modern(5, "tools/list", json!({}))).await;
    assert_eq!(tool_names(&again), names, "a deterministic order");
    // A game against the bot through the compat tools (RFC-014 §8), carol's state kept
    // between requests: the principal is stdio's, not the connection's.
    let opened = io
        .exchange(call(
            6,
            "toolset_open",
            json!({"toolset": "tictactoe", "instance": "t1"}),
        ))
        .await;
    let text = called(&opened);
    assert!(text.starts_with("Opened tictactoe:t1"), "{text}");
    let cell = first_free(&text);
    let played = io
        .exchange(call(
            7,
            "tictactoe_play",
            json!({"move": cell, "instance": "t1"}),
        ))
        .await;
    let text = called(&played);
    assert!(
        text.contains(&format!("X {cell}")) || text.contains(&cell),
        "{text}"
    );
    // No logLevel asked: no notifications/message came between the answers (each read
    // above was the answer to its request, by id).
    assert_eq!(played["id"], 7);
    // The same process, the same stdin: `initialize` opens the legacy era as before.
    let init = io
        .exchange(
            json!({"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init:#}");
    assert!(init["result"].get("resultType").is_none(), "{init:#}");
    io.stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .unwrap();
    let board = io
        .exchange(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "tictactoe_board", "arguments": {"instance": "t1"}}}))
        .await;
    assert!(
        board["result"].get("resultType").is_none(),
        "legacy: {board:#}"
    );
    assert_ne!(board["result"]["isError"], true, "{board:#}");
    let shown = text_of(&board["result"]);
    assert!(
        shown.contains(" X ") && first_free(&shown) != cell,
        "the game opened in the modern era is carol's, with her move {cell}: {board:#}"
    );
    // A legacy connection keeps 2025-11-25's rules: discover is unknown there.
    let unknown = io.exchange(modern(10, "server/discover", json!({}))).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown:#}");
    drop(io);
    let status = within(child.wait()).await.unwrap();
    assert!(status.success(), "{status:?}");
}

#[actix::test]
async fn issue39_01_02_websocket_serves_discover_and_modern_calls() {
    let (_child, urls) = serve(&["--ws", "127.0.0.1:0", "--token", "alice=a-token"], 1).await;
    let opts = ClientOptions {
        token: Some("a-token".into()),
        ..Default::default()
    };
    let mut c = Client::from_connection(ws::connect(&urls[0], &opts).await.unwrap());
    let found = exchange(&mut c, modern(1, "server/discover", json!({}))).await;
    assert_discovered(&found);
    let unknown = exchange(&mut c, modern(2, "toolsets/list", json!({}))).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown:#}");
    let opened = exchange(
        &mut c,
        call(
            3,
            "toolset_open",
            json!({"toolset": "tictactoe", "instance": "w1"}),
        ),
    )
    .await;
    let text = called(&opened);
    assert!(text.starts_with("Opened tictactoe:w1"), "{text}");
    let listed = exchange(&mut c, modern(4, "tools/list", json!({}))).await;
    assert!(
        tool_names(&listed).contains(&"tictactoe_play".to_owned()),
        "{listed:#}"
    );
    let cell = first_free(&text);
    let played = exchange(
        &mut c,
        call(5, "tictactoe_play", json!({"move": cell, "instance": "w1"})),
    )
    .await;
    called(&played);
    // A legacy request on a connection never initialized is still refused as before.
    let refused = exchange(
        &mut c,
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": {}}),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32600, "{refused:#}");
}

/// Sends `v` and reads up to the message that answers it.
async fn exchange(c: &mut Client, v: Value) -> Value {
    let id = v["id"].clone();
    c.send(v).await;
    c.next_where(|m| m["id"] == id && m.get("method").is_none())
        .await
}

/// A modern POST with the headers its body calls for.
fn post(
    http: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    body: &Value,
) -> reqwest::RequestBuilder {
    let method = body["method"].as_str().unwrap_or_default();
    let mut b = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", method)
        .body(body.to_string());
    if let Some(name) = body["params"]["name"].as_str() {
        b = b.header("mcp-name", name);
    }
    if let Some(t) = token {
        b = b.header("authorization", format!("Bearer {t}"));
    }
    b
}

async fn answer(resp: reqwest::Response) -> (reqwest::StatusCode, Value) {
    let status = resp.status();
    assert!(
        !resp.headers().contains_key("mcp-session-id"),
        "no session in 2026-07-28"
    );
    let body = within(resp.text()).await.unwrap();
    // A JSON body, or an SSE answer whose last event is the response.
    let json = body
        .lines()
        .rev()
        .filter_map(|l| l.strip_prefix("data: ").or(Some(l)))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v.get("id").is_some())
        .unwrap_or_else(|| panic!("no response in {body}"));
    (status, json)
}

#[actix::test]
async fn issue39_03_streamable_http_serves_modern_posts_statelessly_beside_sessions() {
    let (_child, urls) = serve(&["--http", "127.0.0.1:0", "--token", "alice=a-token"], 1).await;
    let url = &urls[0];
    let http = reqwest::Client::new();
    let token = Some("a-token");
    let (status, found) = answer(
        post(&http, url, token, &modern(1, "server/discover", json!({})))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    assert_discovered(&found);
    // Alice's game outlives the request that opened it: her principal is her token's.
    let (_, opened) = answer(
        post(
            &http,
            url,
            token,
            &call(
                2,
                "toolset_open",
                json!({"toolset": "tictactoe", "instance": "h1"}),
            ),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    let text = called(&opened);
    assert!(text.starts_with("Opened tictactoe:h1"), "{text}");
    let (status, played) = answer(
        post(
            &http,
            url,
            token,
            &call(
                3,
                "tictactoe_play",
                json!({"move": first_free(&text), "instance": "h1"}),
            ),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    called(&played);
    // The era's refusals, each with its status.
    let mut body = call(4, "games", json!({}));
    let misnamed = post(&http, url, token, &body);
    body["params"]["name"] = json!("go_play");
    let (status, mismatch) = answer(misnamed.body(body.to_string()).send().await.unwrap()).await;
    assert_eq!(
        (status.as_u16(), mismatch["error"]["code"].clone()),
        (400, json!(-32020))
    );
    let (status, unknown) = answer(
        // Not a method of the era's (toolsets/* are issue #40's profile; the arcade serves
        // resources since item 7).
        post(&http, url, token, &modern(5, "toolsets/list", json!({})))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (status.as_u16(), unknown["error"]["code"].clone()),
        (404, json!(-32601))
    );
    let resp = http
        .get(url)
        .header("authorization", "Bearer a-token")
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 405);
    // A legacy session on the same endpoint works as it always did.
    let init = json!({"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let resp = http
        .post(url)
        .header("authorization", "Bearer a-token")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(init.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().contains_key("mcp-session-id"));
    let init: Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init:#}");
}

/// **\[project\]** (README readings): a modern request without a token is a principal of
/// its own, ended with its answer, so what it opens does not outlive it — the compat
/// tools answer, and the next request finds nothing open.
#[actix::test]
async fn issue39_03_an_anonymous_modern_request_keeps_no_state() {
    let (_child, urls) = serve(&["--http", "127.0.0.1:0", "--allow-anonymous"], 1).await;
    let url = &urls[0];
    let http = reqwest::Client::new();
    let (_, opened) = answer(
        post(
            &http,
            url,
            None,
            &call(
                1,
                "toolset_open",
                json!({"toolset": "tictactoe", "instance": "a1"}),
            ),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    let text = called(&opened);
    assert!(text.starts_with("Opened tictactoe:a1"), "{text}");
    let (_, played) = answer(
        post(
            &http,
            url,
            None,
            &call(
                2,
                "tictactoe_play",
                json!({"move": first_free(&text), "instance": "a1"}),
            ),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(played["result"]["isError"], true, "{played:#}");
    // Loose tools answer every request alike.
    let (status, games) = answer(
        post(&http, url, None, &call(3, "games", json!({})))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    called(&games);
}

/// **\[project\]** As over HTTP, on an anonymous WebSocket connection each modern request
/// is a principal of its own: the connection is not a session (MCP `basic/index.md`,
/// "Statelessness"), so a game opened by one request is not there for the next.
#[actix::test]
async fn issue39_02_an_anonymous_websocket_connections_modern_requests_keep_no_state() {
    let (_child, urls) = serve(&["--ws", "127.0.0.1:0", "--allow-anonymous"], 1).await;
    let mut c = Client::from_connection(
        ws::connect(&urls[0], &ClientOptions::default())
            .await
            .unwrap(),
    );
    let opened = exchange(
        &mut c,
        call(
            1,
            "toolset_open",
            json!({"toolset": "tictactoe", "instance": "a1"}),
        ),
    )
    .await;
    let text = called(&opened);
    assert!(text.starts_with("Opened tictactoe:a1"), "{text}");
    let played = exchange(
        &mut c,
        call(
            2,
            "tictactoe_play",
            json!({"move": first_free(&text), "instance": "a1"}),
        ),
    )
    .await;
    assert_eq!(played["result"]["isError"], true, "{played:#}");
    let found = exchange(&mut c, modern(3, "server/discover", json!({}))).await;
    assert_discovered(&found);
}
