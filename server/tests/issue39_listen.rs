//! Issue #39 item 4 from outside, in raw JSON on real sockets: `subscriptions/listen`
//! (MCP 2026-07-28, `basic/patterns/subscriptions.md`) on the stdio transport's framing
//! (newline-delimited JSON, here over a loopback TCP connection), on WebSocket (a named
//! principal's connection, and an anonymous one whose modern requests are each served on a
//! session of their own), and on modern Streamable HTTP (an SSE answer). The
//! acknowledgement comes first with the honoured subset of the filter; every notification
//! carries `io.modelcontextprotocol/subscriptionId`; a change of the tool list reaches the
//! streams that opted in and no other; the client's cancel (or closing the HTTP answer) ends
//! a stream; the server closing a session answers each open stream gracefully (then tells
//! it cancelled); a principal
//! has at most 8 streams open.

#[allow(dead_code)]
use crate::raw;

use mcpl_protocol::mcpl::McplManifest;
use mcpl_server::Server;
use mcpl_testkit::within;
use mcpl_transport::{ConnectionInfo, Principal, ServerOptions, TransportKind, http, stdio, ws};
use raw::{RawWs, SseReader, post, stdio_socket, ws_connect};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const SUB: &str = "io.modelcontextprotocol/subscriptionId";

/// A manifest with two toolsets, or only the lobby: switching between them changes the
/// tool list a modern (plain) client is shown.
fn manifest(with_game: bool) -> McplManifest {
    let mut m = json!({"version": "0.5", "pushEvents": true, "toolHints": true,
        "featureSets": {"default": {"description": "Tools", "uses": ["tools", "pushEvents"]}},
        "toolsets": {"lobby": {"title": "Lobby", "summary": "Find games", "default": "open"},
                     "game": {"title": "Go", "default": "closed", "instances": true}}});
    if !with_game {
        m["toolsets"].as_object_mut().unwrap().remove("game");
    }
    serde_json::from_value(m).unwrap()
}

fn server() -> Server {
    Server::builder("listen", "1.0")
        .manifest(manifest(true))
        .build()
        .expect("a valid server")
}

fn meta() -> Value {
    mcpl_testkit::msg::modern_meta(json!({}))
}

fn listen(id: Value, notifications: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": notifications}})
}

fn list_tools(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"_meta": meta()}})
}

fn cancel(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}})
}

fn changed(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {SUB: id}}})
}

#[actix::test]
async fn issue39_04_listen_on_stdio() {
    let server = server();
    let (mut c, session) = stdio_socket(&server, Principal::Named("alice".into())).await;
    // Tools opted in; prompts and resources asked for but not served: left out of the ack.
    c.send(listen(
        json!("L1"),
        json!({"toolsListChanged": true, "promptsListChanged": true,
            "resourceSubscriptions": ["file:///x"]}),
    ))
    .await;
    assert_eq!(
        c.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {SUB: "L1"}, "notifications": {"toolsListChanged": true}}})
    );
    // A second stream that opts in to nothing.
    c.send(listen(json!(2), json!({}))).await;
    assert_eq!(
        c.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {SUB: 2}, "notifications": {}}})
    );
    // A change: told on L1 only (a tools/list read after it shows nothing else came).
    server.replace_manifest(manifest(false)).unwrap();
    assert_eq!(c.recv().await, changed(json!("L1")));
    c.send(list_tools(10)).await;
    let seen = c.until_response(10).await;
    assert_eq!(seen.len(), 1, "nothing but the answer: {seen:?}");
    // The client cancels L1: no response, and the next change is told on L3 (opened after
    // the cancel was read), not on L1.
    c.send(cancel(json!("L1"))).await;
    c.send(listen(json!("L3"), json!({"toolsListChanged": true})))
        .await;
    assert_eq!(c.recv().await["params"]["_meta"][SUB], "L3");
    server.replace_manifest(manifest(true)).unwrap();
    assert_eq!(
        c.recv().await,
        changed(json!("L3")),
        "L1 ended without a word"
    );
    // The id of an open stream is in use; an ended one's is free again.
    c.send(listen(json!(2), json!({}))).await;
    assert_eq!(c.recv().await["error"]["code"], -32600);
    c.send(listen(json!("L1"), json!({"toolsListChanged": true})))
        .await;
    assert_eq!(c.recv().await["params"]["_meta"][SUB], "L1");
    // The server closes the session: each open stream is answered gracefully, then told
    // cancelled, in the order they were opened.
    session.close();
    let mut ends = Vec::new();
    for _ in 0..6 {
        ends.push(c.recv().await);
    }
    let end = |id: Value| {
        json!({"jsonrpc": "2.0", "id": id,
            "result": {"resultType": "complete", "_meta": {SUB: id}}})
    };
    let cancelled = |id: Value| {
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "the server closed the session",
                "_meta": {SUB: id}}})
    };
    assert_eq!(
        ends,
        vec![
            end(json!(2)),
            cancelled(json!(2)),
            end(json!("L3")),
            cancelled(json!("L3")),
            end(json!("L1")),
            cancelled(json!("L1")),
        ]
    );
}

#[actix::test]
async fn issue39_04_a_principal_has_at_most_eight_streams() {
    let server = server();
    let (mut c, _session) = stdio_socket(&server, Principal::Named("alice".into())).await;
    for id in 0..8 {
        c.send(listen(json!(id), json!({"toolsListChanged": true})))
            .await;
        assert_eq!(c.recv().await["params"]["_meta"][SUB], id);
    }
    c.send(listen(json!(8), json!({}))).await;
    let refused = c.recv().await;
    assert_eq!(refused["id"], 8, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 8"),
        "{refused}"
    );
    // The bound is the principal's: another connection of alice's is refused too.
    let (mut other, _s2) = stdio_socket(&server, Principal::Named("alice".into())).await;
    other.send(listen(json!(9), json!({}))).await;
    assert_eq!(other.recv().await["error"]["code"], -32600);
    // One ended, one more may open.
    c.send(cancel(json!(3))).await;
    c.send(listen(json!(10), json!({}))).await;
    assert_eq!(c.recv().await["params"]["_meta"][SUB], 10);
}

/// A WebSocket listener, with a token for alice and anonymous connections allowed.
async fn ws_listener(server: &Server) -> SocketAddr {
    let mut opts = ServerOptions {
        allow_anonymous: true,
        ..ServerOptions::default()
    };
    opts.tokens.insert("alice-token".into(), "alice".into());
    let mut wl = ws::bind("127.0.0.1:0".parse().unwrap(), Arc::new(opts))
        .await
        .expect("bind ws");
    let addr = wl.local_addr();
    let server = server.clone();
    actix::spawn(async move {
        while let Some(conn) = wl.accept().await {
            server.serve(conn);
        }
    });
    addr
}

async fn ws_send(socket: &mut RawWs, v: Value) {
    socket
        .send_text(v.to_string().as_bytes())
        .await
        .expect("send");
}

#[actix::test]
async fn issue39_04_listen_on_websocket() {
    let server = server();
    let addr = ws_listener(&server).await;
    for auth in [Some("Bearer alice-token"), None] {
        let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", *a)).collect();
        let mut socket = ws_connect(addr, &headers, None).await.expect("upgrade");
        ws_send(
            &mut socket,
            listen(json!(7), json!({"toolsListChanged": true})),
        )
        .await;
        let ack = within(socket.recv_json()).await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(ack["params"]["_meta"][SUB], 7, "{ack}");
        let with_game = server.manifest().toolsets.contains_key("game");
        server.replace_manifest(manifest(!with_game)).unwrap();
        assert_eq!(
            within(socket.recv_json()).await,
            changed(json!(7)),
            "{auth:?}"
        );
        ws_send(&mut socket, cancel(json!(7))).await;
        ws_send(&mut socket, list_tools(8)).await;
        let next = within(socket.recv_json()).await;
        assert_eq!(next["id"], 8, "{auth:?}: {next}");
        assert!(next["result"]["tools"].is_array(), "{next}");
    }
}

#[actix::test]
async fn issue39_04_listen_on_streamable_http() {
    let server = server();
    let mut opts = ServerOptions::default();
    opts.tokens.insert("alice-token".into(), "alice".into());
    let mut hl = http::bind("127.0.0.1:0".parse().unwrap(), "/mcp", Arc::new(opts))
        .await
        .expect("bind");
    let addr = hl.local_addr();
    let s = server.clone();
    actix::spawn(async move {
        while let Some(conn) = hl.accept().await {
            s.serve(conn);
        }
    });
    let mut sessions = server.watch_sessions();
    let before = *sessions.borrow();
    let body = listen(json!(1), json!({"toolsListChanged": true})).to_string();
    let request = post(
        addr,
        &[
            ("Authorization", "Bearer alice-token"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "subscriptions/listen"),
        ],
        body.as_bytes(),
    );
    let (mut sse, head) = SseReader::open(addr, &request).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    let ack = sse.event().await;
    assert_eq!(
        ack,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {SUB: 1}, "notifications": {"toolsListChanged": true}}})
    );
    assert_eq!(*sessions.borrow_and_update(), before + 1);
    server.replace_manifest(manifest(false)).unwrap();
    assert_eq!(sse.event().await, changed(json!(1)));
    server.replace_manifest(manifest(true)).unwrap();
    assert_eq!(sse.event().await, changed(json!(1)));
    // The client closes the stream: its session ends.
    drop(sse);
    within(sessions.wait_for(|n| *n == before))
        .await
        .expect("the count is watched");
}

/// A listener that stops reading: its notifications fill the connection's bounded queue
/// (stdio's framing over a pipe that takes 64 bytes and is never read), and the session
/// gives the connection up rather than buffer without end or drop a message (the chosen
/// behaviour on stdio and WebSocket, where a stream's messages share its connection).
#[actix::test]
async fn issue39_04_a_listener_that_stops_reading_loses_its_connection() {
    let server = server();
    let (client, server_end) = tokio::io::duplex(64);
    let (server_read, server_write) = tokio::io::split(server_end);
    let info = ConnectionInfo {
        kind: TransportKind::Stdio,
        ordered: true,
        principal: Some(Principal::Named("carol".into())),
        peer: "a pipe nobody reads".into(),
    };
    let mut sessions = server.watch_sessions();
    let _session = server.serve(stdio::from_io(server_read, server_write, info, 1 << 20));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut line = listen(json!(1), json!({"toolsListChanged": true})).to_string();
    line.push('\n');
    client_write.write_all(line.as_bytes()).await.unwrap();
    let mut reader = BufReader::new(client_read);
    let mut ack = String::new();
    within(reader.read_line(&mut ack)).await.unwrap();
    assert!(ack.contains("acknowledged"), "{ack}");
    within(sessions.wait_for(|n| *n == 1)).await.unwrap();
    // Far more changes than the connection's queue (1024 messages) holds, none read.
    for n in 0..1500 {
        server.replace_manifest(manifest(n % 2 == 1)).unwrap();
    }
    within(sessions.wait_for(|n| *n == 0))
        .await
        .expect("the session gave the connection up");
    drop(reader);
}

/// An anonymous WebSocket connection serves each modern request on a session of its own,
/// under a principal of its own: its streams are bounded per connection instead.
#[actix::test]
async fn issue39_04_an_anonymous_connection_has_at_most_eight_streams() {
    let server = server();
    let addr = ws_listener(&server).await;
    let mut socket = ws_connect(addr, &[], None).await.expect("upgrade");
    for id in 0..8 {
        ws_send(&mut socket, listen(json!(id), json!({}))).await;
        let ack = within(socket.recv_json()).await;
        assert_eq!(ack["params"]["_meta"][SUB], id, "{ack}");
    }
    ws_send(&mut socket, listen(json!(8), json!({}))).await;
    let refused = within(socket.recv_json()).await;
    assert_eq!(refused["id"], 8, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
}
