//! Where sessions run: on another arbiter's thread through `Server::serve_in`, and under an
//! `actix::System` built by hand.

use crate::support;

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{PushEvent, Server, ToolContext};
use mcpl_transport::{Principal, memory};
use serde_json::{Value, json};
use support::{Client, connect};

fn server() -> Server {
    Server::builder("test-server", "0.1.0")
        .tool(
            Tool::new(
                "thread",
                "Pushes, then names its thread",
                json!({"type": "object"}),
            ),
            |ctx: ToolContext, _: Value| async move {
                let answer = ctx.push(PushEvent::text("from the handler")).await;
                let name = std::thread::current()
                    .name()
                    .unwrap_or("unnamed")
                    .to_owned();
                Ok(CallToolResult::text(format!("{name} {}", answer.is_ok())))
            },
        )
        .build()
        .unwrap()
}

#[actix::test]
async fn a_session_served_on_another_arbiter_works_the_same() {
    let server = server();
    let arbiter = actix::Arbiter::new();
    let (client, conn) = memory::pair(Principal::Named("bob".into()), true);
    let session = server.serve_in(&arbiter.handle(), conn);
    assert_eq!(session.principal(), &Principal::Named("bob".into()));
    let mut client = support::from_connection(client);
    client.handshake_mcpl(false, &["tools", "pushEvents"]).await;
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "thread"}})).await;
    let push = client.recv().await;
    assert_eq!(push["method"], "push/event");
    client
        .send(json!({"jsonrpc": "2.0", "id": push["id"], "result": {"accepted": true}}))
        .await;
    let reply = client.recv().await;
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let test_thread = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_owned();
    assert!(text.ends_with(" true"), "{text}");
    assert!(
        !text.starts_with(&format!("{test_thread} ")),
        "the handler ran on the arbiter's thread: {text}"
    );
    arbiter.stop();
}

#[test]
fn a_hand_built_system_runs_sessions() {
    actix::System::new().block_on(async {
        let (mut client, _session) = connect(&server());
        let init = client.handshake_plain().await;
        assert_eq!(init["serverInfo"]["name"], "test-server");
    });
}
