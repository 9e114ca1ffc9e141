//! What one hint change costs the server, from a call to every connection's write.
//!
//! One principal with three connections over in-memory pairs, each with `toolHints` and a
//! `pushEvents` grant. Connection 0 calls `flip`, whose logic toggles the visibility of
//! `lamp`; an iteration ends when connection 0 has read the call's result (carrying the
//! change, §5.3) and connections 1 and 2 have each read their `tools/hints` (§4.6, each on
//! its own rev). So it covers: the session forwarding the call, the principal resolving
//! it, the instance running the logic, the principal applying the batch to its state and
//! fanning out, and three sessions stamping and writing.

use criterion::{Criterion, criterion_group, criterion_main};
use mcpl_protocol::jsonrpc::{Id, Message, Request};
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
        params: Some(params),
    })
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
                    for c in conns.iter_mut() {
                        next(c).await;
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
