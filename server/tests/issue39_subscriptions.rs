//! Issue #39, resource subscriptions, from outside in raw JSON on real sockets: a server
//! whose author lets resources be watched (`ServerBuilder::resource_subscriptions`)
//! declares `resources.subscribe`; a legacy session's `resources/subscribe` and
//! `resources/unsubscribe` answer `{}` (WebSocket, stdio's framing over a loopback socket,
//! Streamable HTTP with its GET stream), and `Server::resource_updated` reaches the
//! sessions subscribed to that URI and no other; a URI of no resource is -32602; a session
//! watches at most 128 URIs of at most 32 KiB (-32600 past either, nothing lost); a modern
//! `subscriptions/listen` with `resourceSubscriptions` is acknowledged with the URIs it
//! honours and carries `notifications/resources/updated` with its subscription id.

#[allow(dead_code)]
use crate::raw;

use mcpl_protocol::server_features::{Resource, ResourceContents, ResourceInfo, ResourceTemplate};
use mcpl_server::features::RequestContext;
use mcpl_server::{Server, SessionHandle};
use mcpl_testkit::msg::{initialized, modern_meta, request};
use mcpl_testkit::within;
use mcpl_transport::{ConnectionInfo, Principal, ServerOptions, TransportKind, stdio};
use raw::{RawWs, SseReader, exchange, post, ws_connect};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

const SUB: &str = "io.modelcontextprotocol/subscriptionId";
const README: &str = "notes://readme";

/// A server with a fixed resource and a template, whose resources may be watched.
fn server() -> Server {
    Server::builder("watch", "1.0")
        .resource(
            Resource::new(
                README,
                ResourceInfo::new("readme", "text/plain", "What this is"),
            ),
            |_: RequestContext| async {
                Ok(vec![ResourceContents::text(README, "text/plain", "Hello.")])
            },
        )
        .resource_template(
            ResourceTemplate::new(
                "notes://n/{id}",
                ResourceInfo::new("note", "text/plain", "A note"),
            ),
            |_: RequestContext, uri: String, vars: BTreeMap<String, String>| async move {
                Ok(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    vars["id"].clone(),
                )])
            },
        )
        .resource_subscriptions()
        .build()
        .expect("a valid server")
}

fn opts() -> Arc<ServerOptions> {
    let mut opts = ServerOptions::default();
    opts.tokens.insert("alice-token".into(), "alice".into());
    opts.tokens.insert("bob-token".into(), "bob".into());
    Arc::new(opts)
}

fn subscribe(id: i64, uri: &str) -> Value {
    request(id, "resources/subscribe", json!({"uri": uri}))
}

fn unsubscribe(id: i64, uri: &str) -> Value {
    request(id, "resources/unsubscribe", json!({"uri": uri}))
}

fn empty(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {}})
}

fn updated(uri: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}})
}

fn initialize(id: i64) -> Value {
    request(
        id,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}),
    )
}

fn listen(id: i64, notifications: Value) -> Value {
    request(
        id,
        "subscriptions/listen",
        json!({"_meta": modern_meta(json!({})), "notifications": notifications}),
    )
}

/// A raw client on one of the transports that carry messages both ways on one connection.
enum Peer {
    Ws(RawWs),
    Lines {
        read: BufReader<tokio::net::tcp::OwnedReadHalf>,
        write: tokio::net::tcp::OwnedWriteHalf,
        _session: SessionHandle,
    },
}

impl Peer {
    async fn send(&mut self, v: Value) {
        match self {
            Peer::Ws(ws) => ws.send_text(v.to_string().as_bytes()).await.expect("send"),
            Peer::Lines { write, .. } => {
                let mut line = v.to_string().into_bytes();
                line.push(b'\n');
                write.write_all(&line).await.expect("write");
            }
        }
    }

    async fn recv(&mut self) -> Value {
        match self {
            Peer::Ws(ws) => within(ws.recv_json()).await,
            Peer::Lines { read, .. } => {
                let mut line = String::new();
                let n = within(read.read_line(&mut line)).await.expect("read");
                assert!(n > 0, "the server closed the connection");
                serde_json::from_str(&line).expect("a JSON line")
            }
        }
    }

    /// Sends `v` and reads the next message: its answer, when nothing else was coming.
    async fn ask(&mut self, v: Value) -> Value {
        self.send(v).await;
        self.recv().await
    }

    /// Proves nothing was written to this client before: a ping's answer is the next
    /// message.
    async fn heard_nothing(&mut self, id: i64) {
        let next = self.ask(request(id, "ping", json!({}))).await;
        assert_eq!(next, empty(id), "nothing comes before the ping's answer");
    }

    /// The legacy handshake; the `initialize` result.
    async fn initialize(&mut self) -> Value {
        let answer = self.ask(initialize(0)).await;
        self.send(initialized()).await;
        answer["result"].clone()
    }
}

async fn ws_peer(addr: SocketAddr, token: &str) -> Peer {
    let auth = format!("Bearer {token}");
    Peer::Ws(
        ws_connect(addr, &[("Authorization", auth.as_str())], None)
            .await
            .expect("upgrade"),
    )
}

/// `server` serving the stdio transport's framing on a loopback socket, as `who`.
async fn stdio_peer(server: &Server, who: &str) -> Peer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (accepted, _) = listener.accept().await.unwrap();
    let (r, w) = accepted.into_split();
    let info = ConnectionInfo {
        kind: TransportKind::Stdio,
        ordered: true,
        principal: Some(Principal::Named(who.into())),
        peer: "stdio over a socket".into(),
    };
    let session = server.serve(stdio::from_io(r, w, info, 1 << 20));
    let (read, write) = client.into_split();
    Peer::Lines {
        read: BufReader::new(read),
        write,
        _session: session,
    }
}

/// The legacy subscribe, notify, unsubscribe round between two sessions of `server`.
async fn legacy_round(server: &Server, alice: &mut Peer, bob: &mut Peer) {
    let caps = alice.initialize().await["capabilities"].clone();
    assert_eq!(caps["resources"], json!({"subscribe": true}), "{caps}");
    bob.initialize().await;
    assert_eq!(alice.ask(subscribe(1, README)).await, empty(1));
    assert_eq!(
        alice.ask(subscribe(2, README)).await,
        empty(2),
        "twice is once"
    );
    // A URI of no resource: -32602 with the URI, as a read of it.
    let refused = alice.ask(subscribe(3, "notes://nope")).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(refused["error"]["data"]["uri"], "notes://nope", "{refused}");
    // A URI a template matches; a param that is no string.
    assert_eq!(alice.ask(subscribe(4, "notes://n/7")).await, empty(4));
    let bad = alice
        .ask(request(5, "resources/subscribe", json!({"uri": 7})))
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert_eq!(bob.ask(subscribe(1, "notes://n/8")).await, empty(1));

    // A change reaches the session subscribed to it, once, and no other.
    assert_eq!(server.resource_updated(README), 1);
    assert_eq!(alice.recv().await, updated(README));
    assert_eq!(server.resource_updated("notes://n/7"), 1);
    assert_eq!(alice.recv().await, updated("notes://n/7"));
    alice.heard_nothing(10).await;
    bob.heard_nothing(10).await;
    assert_eq!(server.resource_updated("notes://n/8"), 1);
    assert_eq!(bob.recv().await, updated("notes://n/8"));
    assert_eq!(
        server.resource_updated("notes://n/9"),
        0,
        "nobody watches it"
    );

    // Unsubscribed: told nothing more; unsubscribing again is `{}` too.
    assert_eq!(alice.ask(unsubscribe(6, README)).await, empty(6));
    assert_eq!(server.resource_updated(README), 0);
    assert_eq!(alice.ask(unsubscribe(7, README)).await, empty(7));
    alice.heard_nothing(11).await;
    assert_eq!(server.resource_updated("notes://n/7"), 1, "the other stays");
    assert_eq!(alice.recv().await, updated("notes://n/7"));
}

#[actix::test]
async fn issue39_11_legacy_subscribe_notify_unsubscribe_on_websocket() {
    let server = server();
    let ws = server
        .serve_ws("127.0.0.1:0".parse().unwrap(), opts())
        .await
        .expect("bind ws");
    let mut alice = ws_peer(ws.local_addr(), "alice-token").await;
    let mut bob = ws_peer(ws.local_addr(), "bob-token").await;
    legacy_round(&server, &mut alice, &mut bob).await;
}

#[actix::test]
async fn issue39_11_legacy_subscribe_notify_unsubscribe_on_stdio() {
    let server = server();
    let mut alice = stdio_peer(&server, "alice").await;
    let mut bob = stdio_peer(&server, "bob").await;
    legacy_round(&server, &mut alice, &mut bob).await;
}

/// Without `resource_subscriptions` nothing is declared and both requests are unknown.
#[actix::test]
async fn issue39_11_a_server_that_offers_no_subscriptions_declares_none() {
    let plain = Server::builder("plain", "1.0")
        .resource(
            Resource::new(
                README,
                ResourceInfo::new("readme", "text/plain", "What this is"),
            ),
            |_: RequestContext| async {
                Ok(vec![ResourceContents::text(README, "text/plain", "Hello.")])
            },
        )
        .build()
        .unwrap();
    let mut alice = stdio_peer(&plain, "alice").await;
    assert_eq!(
        alice.initialize().await["capabilities"]["resources"],
        json!({})
    );
    for (id, req) in [(1, subscribe(1, README)), (2, unsubscribe(2, README))] {
        assert_eq!(alice.ask(req).await["error"]["code"], -32601, "{id}");
    }
    assert_eq!(plain.resource_updated(README), 0);
    // Asking for subscriptions with nothing to watch does not build.
    let nothing = Server::builder("none", "1.0")
        .resource_subscriptions()
        .build();
    assert!(
        matches!(nothing, Err(mcpl_server::BuildError::NothingToWatch)),
        "{nothing:?}"
    );
}

#[actix::test]
async fn issue39_11_a_session_watches_at_most_128_uris_and_32_kib() {
    let server = server();
    let ws = server
        .serve_ws("127.0.0.1:0".parse().unwrap(), opts())
        .await
        .expect("bind ws");
    let mut alice = ws_peer(ws.local_addr(), "alice-token").await;
    alice.initialize().await;
    let note = |n: usize| format!("notes://n/{n}");
    for n in 0..128 {
        alice.send(subscribe(n as i64, &note(n))).await;
    }
    for n in 0..128 {
        assert_eq!(alice.recv().await, empty(n as i64));
    }
    // The 129th: a clear error, the limits in `data`.
    let refused = alice.ask(subscribe(128, &note(128))).await;
    assert_eq!(refused["id"], 128, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(
        refused["error"]["data"],
        json!({"maxUris": 128, "maxBytes": 32768})
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 128"),
        "{refused}"
    );
    // Nothing lost: the first and the last are still told; the refused one is not.
    for n in [0, 127] {
        assert_eq!(server.resource_updated(&note(n)), 1);
        assert_eq!(alice.recv().await, updated(&note(n)));
    }
    assert_eq!(server.resource_updated(&note(128)), 0);
    // Subscribing again to one it has costs nothing; after one unsubscribe, one more fits.
    assert_eq!(alice.ask(subscribe(200, &note(5))).await, empty(200));
    assert_eq!(alice.ask(unsubscribe(201, &note(5))).await, empty(201));
    assert_eq!(alice.ask(subscribe(202, &note(128))).await, empty(202));
    alice.heard_nothing(203).await;

    // The bytes: URIs of 409 bytes each, 80 of which fit in 32 KiB.
    let mut bob = ws_peer(ws.local_addr(), "bob-token").await;
    bob.initialize().await;
    let long = |n: usize| format!("notes://n/{n:0400}");
    assert_eq!(long(0).len(), 410);
    let fit = 32 * 1024 / 410;
    for n in 0..fit {
        bob.send(subscribe(n as i64, &long(n))).await;
    }
    for n in 0..fit {
        assert_eq!(bob.recv().await, empty(n as i64));
    }
    let refused = bob.ask(subscribe(1000, &long(fit))).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(server.resource_updated(&long(fit - 1)), 1);
    assert_eq!(bob.recv().await, updated(&long(fit - 1)));
}

/// The JSON-RPC message of a POST's answer, whether a JSON body or one SSE event.
fn answer_of(r: &raw::HttpResponse) -> Value {
    let body = String::from_utf8_lossy(&r.body);
    let data: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim_start)
        .filter(|d| !d.is_empty())
        .collect();
    match data.as_slice() {
        [] => r.json(),
        [one] => serde_json::from_str(one).expect("JSON"),
        more => panic!("one message expected: {more:?}"),
    }
}

/// POSTs `body` as alice, in `session` when given.
async fn legacy_post(addr: SocketAddr, session: Option<&str>, body: Value) -> raw::HttpResponse {
    let mut headers = vec![("Authorization", "Bearer alice-token")];
    if let Some(id) = session {
        headers.push(("Mcp-Session-Id", id));
        headers.push(("MCP-Protocol-Version", "2025-11-25"));
    }
    within(exchange(
        addr,
        post(addr, &headers, body.to_string().as_bytes()),
    ))
    .await
}

#[actix::test]
async fn issue39_11_legacy_subscribe_notify_unsubscribe_on_streamable_http() {
    let server = server();
    let http = server
        .serve_http("127.0.0.1:0".parse().unwrap(), opts())
        .await
        .expect("bind http");
    let addr = http.local_addr();
    let init = legacy_post(addr, None, initialize(0)).await;
    assert_eq!(init.status, 200, "{init:?}");
    assert_eq!(
        answer_of(&init)["result"]["capabilities"]["resources"],
        json!({"subscribe": true})
    );
    let session = init.header("mcp-session-id").expect("a session").to_owned();
    let done = legacy_post(addr, Some(&session), initialized()).await;
    assert_eq!(done.status, 202, "{done:?}");
    // The session's GET stream, where what answers no request goes.
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\
         Authorization: Bearer alice-token\r\nMcp-Session-Id: {session}\r\n\
         MCP-Protocol-Version: 2025-11-25\r\n\r\n"
    );
    let (mut stream, head) = SseReader::open(addr, get.as_bytes()).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");

    let subscribed = legacy_post(addr, Some(&session), subscribe(1, README)).await;
    assert_eq!(answer_of(&subscribed), empty(1));
    assert_eq!(server.resource_updated(README), 1);
    assert_eq!(stream.event().await, updated(README));
    let unknown = legacy_post(addr, Some(&session), subscribe(2, "notes://nope")).await;
    assert_eq!(answer_of(&unknown)["error"]["code"], -32602);
    let unsubscribed = legacy_post(addr, Some(&session), unsubscribe(3, README)).await;
    assert_eq!(answer_of(&unsubscribed), empty(3));
    assert_eq!(server.resource_updated(README), 0);
    // Another subscription's change is the next event: nothing came for the first.
    let again = legacy_post(addr, Some(&session), subscribe(4, "notes://n/1")).await;
    assert_eq!(answer_of(&again), empty(4));
    assert_eq!(server.resource_updated("notes://n/1"), 1);
    assert_eq!(stream.event().await, updated("notes://n/1"));
}

/// A modern `subscriptions/listen` on Streamable HTTP (its SSE answer) as alice.
async fn modern_listen(addr: SocketAddr, id: i64, notifications: Value) -> (SseReader, String) {
    let body = listen(id, notifications).to_string();
    let request = post(
        addr,
        &[
            ("Authorization", "Bearer alice-token"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "subscriptions/listen"),
        ],
        body.as_bytes(),
    );
    SseReader::open(addr, &request).await
}

#[actix::test]
async fn issue39_11_modern_listen_carries_resource_updates_on_streamable_http() {
    let server = server();
    let http = server
        .serve_http("127.0.0.1:0".parse().unwrap(), opts())
        .await
        .expect("bind http");
    let addr = http.local_addr();
    // Unknown URIs are left out of the acknowledgement, a repeated one named once.
    let (mut sse, head) = modern_listen(
        addr,
        1,
        json!({"toolsListChanged": true,
            "resourceSubscriptions": [README, "notes://nope", "notes://n/1", README]}),
    )
    .await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert_eq!(
        sse.event().await,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {SUB: 1}, "notifications": {"toolsListChanged": true,
                "resourceSubscriptions": [README, "notes://n/1"]}}})
    );
    // A second stream, for another resource.
    let (mut other, _) =
        modern_listen(addr, 2, json!({"resourceSubscriptions": ["notes://n/2"]})).await;
    assert_eq!(
        other.event().await["params"]["notifications"],
        json!({"resourceSubscriptions": ["notes://n/2"]})
    );
    assert_eq!(server.resource_updated("notes://n/1"), 1);
    assert_eq!(
        sse.event().await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"_meta": {SUB: 1}, "uri": "notes://n/1"}})
    );
    assert_eq!(server.resource_updated("notes://nope"), 0);
    assert_eq!(server.resource_updated("notes://n/2"), 1);
    assert_eq!(
        other.event().await["params"],
        json!({"_meta": {SUB: 2}, "uri": "notes://n/2"})
    );
    assert_eq!(server.resource_updated(README), 1);
    assert_eq!(
        sse.event().await["params"],
        json!({"_meta": {SUB: 1}, "uri": README})
    );

    // Past the bound, the listen is refused and opens nothing.
    let many: Vec<String> = (0..129).map(|n| format!("notes://n/{n}")).collect();
    let body = listen(3, json!({"resourceSubscriptions": many})).to_string();
    let refused = within(exchange(
        addr,
        post(
            addr,
            &[
                ("Authorization", "Bearer alice-token"),
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "subscriptions/listen"),
            ],
            body.as_bytes(),
        ),
    ))
    .await;
    let refused = answer_of(&refused);
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["error"]["data"]["maxUris"], 128, "{refused}");
    assert_eq!(server.resource_updated("notes://n/100"), 0);
}

#[actix::test]
async fn issue39_11_modern_listen_carries_resource_updates_on_stdio() {
    let server = server();
    let mut alice = stdio_peer(&server, "alice").await;
    let discovered = alice
        .ask(request(
            0,
            "server/discover",
            json!({"_meta": modern_meta(json!({}))}),
        ))
        .await;
    assert_eq!(
        discovered["result"]["capabilities"]["resources"],
        json!({"subscribe": true}),
        "{discovered}"
    );
    // `resources/subscribe` is a method 2026-07-28 removed: unknown to a modern request.
    let removed = alice
        .ask(request(
            1,
            "resources/subscribe",
            json!({"_meta": modern_meta(json!({})), "uri": README}),
        ))
        .await;
    assert_eq!(removed["error"]["code"], -32601, "{removed}");
    let ack = alice
        .ask(listen(2, json!({"resourceSubscriptions": [README]})))
        .await;
    assert_eq!(
        ack["params"],
        json!({"_meta": {SUB: 2}, "notifications": {"resourceSubscriptions": [README]}})
    );
    assert_eq!(server.resource_updated(README), 1);
    assert_eq!(
        alice.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"_meta": {SUB: 2}, "uri": README}})
    );
    // The client cancels the stream: it is told nothing more.
    alice
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 2}}),
        )
        .await;
    let list = request(
        3,
        "resources/list",
        json!({"_meta": modern_meta(json!({}))}),
    );
    let answer = alice.ask(list).await;
    assert_eq!(answer["id"], 3, "{answer}");
    assert_eq!(server.resource_updated(README), 0);
}

/// On WebSocket, a named principal's listen and an anonymous connection's (served on a
/// session of its own) carry the changes they watch.
#[actix::test]
async fn issue39_11_modern_listen_carries_resource_updates_on_websocket() {
    let server = server();
    let mut with_anonymous = (*opts()).clone();
    with_anonymous.allow_anonymous = true;
    let ws = server
        .serve_ws("127.0.0.1:0".parse().unwrap(), Arc::new(with_anonymous))
        .await
        .expect("bind ws");
    for auth in [Some("Bearer alice-token"), None] {
        let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", *a)).collect();
        let mut peer = Peer::Ws(
            ws_connect(ws.local_addr(), &headers, None)
                .await
                .expect("upgrade"),
        );
        let ack = peer
            .ask(listen(7, json!({"resourceSubscriptions": ["notes://n/3"]})))
            .await;
        assert_eq!(
            ack["params"]["notifications"],
            json!({"resourceSubscriptions": ["notes://n/3"]}),
            "{auth:?}: {ack}"
        );
        let mut sessions = server.watch_sessions();
        let at_ack = *sessions.borrow_and_update();
        assert_eq!(server.resource_updated("notes://n/3"), 1, "{auth:?}");
        assert_eq!(
            peer.recv().await,
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                "params": {"_meta": {SUB: 7}, "uri": "notes://n/3"}}),
            "{auth:?}"
        );
        peer.send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7}}),
        )
        .await;
        let answer = peer
            .ask(request(
                8,
                "resources/list",
                json!({"_meta": modern_meta(json!({}))}),
            ))
            .await;
        assert_eq!(answer["id"], 8, "{auth:?}: {answer}");
        if auth.is_none() {
            // The anonymous listen's own session ends with its stream (what it watched is
            // let go of first); the cancel reached it through the connection's.
            within(sessions.wait_for(|n| *n == at_ack - 1))
                .await
                .expect("the count is watched");
        }
        assert_eq!(server.resource_updated("notes://n/3"), 0, "{auth:?}");
    }
}
