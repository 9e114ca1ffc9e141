//! What one hint change costs the server, from a call to every connection's write.
//!
//! One principal with three connections over in-memory pairs, each with `toolHints` and a
//! `pushEvents` grant. Connection 0 calls `flip`, whose logic toggles the visibility of
//! `lamp`; an iteration ends when connection 0 has read the call's result (carrying the
//! change, §5.3) and connections 1 and 2 have each read their `tools/hints` (§4.6, each on
//! its own rev). So it covers: the session forwarding the call, the principal resolving
//! it, the instance running the logic, the principal applying the batch to its state and
//! fanning out, and three sessions stamping and writing.
//!
//! Every message read is checked to be what the iteration waits for — the call's result
//! with `_meta["mcpl/hints"]` on connection 0, a `tools/hints` (or a `push/event` with
//! `hints`, answered) on the others — so the figure is the cost of that, not of whatever
//! else a session might write. The check is a few lookups, next to an actor round trip.

use criterion::{Criterion, criterion_group, criterion_main};
use mcpl_protocol::jsonrpc::{Id, Message, Request, Response};
use mcpl_protocol::mcp::Tool;
use mcpl_server::{InstanceContext, InstanceLogic, Reply, Server, Started, ToolCall, Toolset};
use mcpl_transport::{Connection, Inbound, Principal, memory};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

struct Room {
    lit: bool,
}

impl InstanceLogic for Room {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        self.lit = !self.lit;
        cx.set_visible(call.caller(), "lamp", self.lit);
        Reply::text("flipped")
    }
}

fn server() -> Server {
    let object = json!({"type": "object", "properties": {}});
    Server::builder("bench", "1")
        .toolset(
            Toolset::new("room")
                .open_by_default()
                .tool(Tool::new("flip", "Flips the lamp", object.clone()))
                .hidden_tool(Tool::new("lamp", "The lamp", object))
                .on_open(|_, _| Ok(Started::new(Room { lit: false }))),
        )
        .build()
        .expect("a valid server")
}

fn request(id: &str, method: &str, params: Value) -> Message {
    Message::Request(Request {
        id: Id::from(id),
        method: method.to_owned(),
        params: Some(mcpl_protocol::jsonrpc::to_raw(&params)),
    })
}

/// What a connection is to read in an iteration.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// The `flip` call's result, carrying its change (§5.3: a call reports its own).
    Result,
    /// The change on another connection of the principal: `tools/hints`, or a push with
    /// `hints` (§4.6, §5.2).
    Hints,
}

/// Reads the next message and panics unless it is `expect`; a push is answered.
async fn next_checked(c: &mut Connection, expect: Expect) {
    let message = next(c).await;
    let ok = match (&message, expect) {
        (Message::Response(r), Expect::Result) => {
            r.id == Some(Id::from("flip"))
                && r.result_value()
                    .is_ok_and(|v| v["_meta"].get("mcpl/hints").is_some())
        }
        (Message::Notification(n), Expect::Hints) => n.method == "tools/hints",
        (Message::Request(r), Expect::Hints) if r.method == "push/event" => {
            let hinted = r.params_value().is_some_and(|p| p.get("hints").is_some());
            let accepted = Response::ok(r.id.clone(), json!({"accepted": true}));
            c.outbound.send(accepted.into()).await.unwrap();
            hinted
        }
        _ => false,
    };
    assert!(ok, "expected {expect:?}, got {message:?}");
}

async fn next(c: &mut Connection) -> Message {
    match c.inbound.recv().await {
        Some(Inbound::Message { message, .. }) => message,
        other => panic!("unexpected {other:?}"),
    }
}

/// A connection through the handshake, with `toolHints` and `pushEvents`.
async fn connect(server: &Server) -> Connection {
    let (mut client, conn) = memory::pair(Principal::Named("alice".into()), true);
    server.serve(conn);
    let init = json!({"protocolVersion": "2025-11-25",
        "capabilities": {"experimental": {"mcpl": {"version": "0.5", "pushEvents": true, "toolHints": true}}},
        "clientInfo": {"name": "bench", "version": "1"}});
    client
        .outbound
        .send(request("init", "initialize", init))
        .await
        .unwrap();
    next(&mut client).await;
    let initialized = Message::Notification(mcpl_protocol::Notification {
        method: "notifications/initialized".into(),
        params: None,
    });
    client.outbound.send(initialized).await.unwrap();
    let grant = json!({"effectiveCapabilities": ["tools", "pushEvents"]});
    client
        .outbound
        .send(request("grant", "featureSets/update", grant))
        .await
        .unwrap();
    next(&mut client).await;
    client
        .outbound
        .send(request("list", "toolsets/list", json!({})))
        .await
        .unwrap();
    next(&mut client).await;
    client
}

fn fan_out(c: &mut Criterion) {
    let system = actix::System::new();
    let mut conns = system.block_on(async {
        let server = server();
        let mut conns = Vec::new();
        for _ in 0..3 {
            conns.push(connect(&server).await);
        }
        conns
    });
    let call = request(
        "flip",
        "tools/call",
        json!({"name": "flip", "arguments": {}}),
    );
    let mut group = c.benchmark_group("hint_fanout");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("one_change_to_three_connections", |b| {
        b.iter_custom(|iters| {
            system.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    conns[0].outbound.send(call.clone()).await.unwrap();
                    let (caller, others) = conns.split_first_mut().expect("three connections");
                    next_checked(caller, Expect::Result).await;
                    for c in others {
                        next_checked(c, Expect::Hints).await;
                    }
                }
                start.elapsed()
            })
        })
    });
    group.finish();
}

criterion_group!(benches, fan_out);
criterion_main!(benches);
