//! A push carrying hints whose answer never comes (§5.2 "Pushes and retries"): it times
//! out (the server's `push_timeout`, on tokio's paused clock) and is **never retried** —
//! its rev was spent when it was written — and the next change goes on the next rev, under
//! a new event id.

use crate::support;

use mcpl_protocol::mcp::Tool;
use mcpl_server::{
    Audience, Event, InstanceContext, InstanceLogic, Reply, Server, Started, ToolCall, Toolset,
};
use serde_json::{Value, json};
use std::time::Duration;
use support::{Client, TestClient, call, hinted, hints, open, shown, text};

const TIMEOUT: Duration = Duration::from_secs(5);

struct Lamp {
    lit: bool,
}

impl InstanceLogic for Lamp {
    fn call(&mut self, _: ToolCall, cx: &mut InstanceContext) -> Reply {
        self.lit = !self.lit;
        cx.set_visible(Audience::All, "light", self.lit);
        cx.event(Audience::All, Event::text("The lamp flipped."));
        Reply::text("Flipped.")
    }
}

fn server() -> Server {
    let lamp = Toolset::new("lamp")
        .tool(Tool::new(
            "flip",
            "Flips the lamp",
            json!({"type": "object"}),
        ))
        .hidden_tool(Tool::new("light", "Lit", json!({"type": "object"})))
        .on_open(|_, _| Ok(Started::new(Lamp { lit: false })));
    Server::builder("test-server", "0.1.0")
        .push_timeout(TIMEOUT)
        .toolset(lamp)
        .build()
        .unwrap()
}

/// The next message, checked to be the flip's push with hints on `rev` under request id
/// `id`; returns its event id. Not answered.
async fn flipped(client: &mut TestClient, id: i64, rev: i64, lit: bool) -> Value {
    let got = client.recv().await;
    assert_eq!(
        (&got["method"], &got["id"]),
        (&json!("push/event"), &json!(id)),
        "{got:#}"
    );
    let params = &got["params"];
    assert_eq!(
        (&params["payload"]["content"], &params["hints"]),
        (
            &json!([text("The lamp flipped.")]),
            &json!({"rev": rev, "tools": [shown("light", None, lit)]})
        ),
        "{got:#}"
    );
    params["eventId"].clone()
}

#[actix::test]
async fn a_hint_push_that_times_out_is_not_sent_again() {
    tokio::time::pause();
    let server = server();
    let (mut a1, _s1) = hinted(&server, "alice").await;
    let (mut a2, s2) = hinted(&server, "alice").await;
    a1.exchange(open(1, "lamp", None, None)).await;
    a2.expect(hints(
        json!({"rev": 1, "tools": [shown("flip", None, true)],
        "toolsets": [{"toolset": "lamp", "state": "open"}]}),
    ))
    .await;
    let flip = a1.exchange(call(2, "flip", json!({}))).await;
    assert_eq!(flip["result"]["_meta"]["mcpl/hints"]["rev"], 2, "{flip:#}");
    // alice's other connection is pushed the change with the event, and never answers.
    let first = flipped(&mut a2, 1, 2, true).await;
    assert_eq!(s2.status().await.unwrap().pending_requests, 1);
    // A minute passes (the timeout is 5 s): nothing is sent again, under any id.
    a2.expect_silence().await;
    assert_eq!(
        s2.status().await.unwrap().pending_requests,
        0,
        "the push timed out"
    );
    // The next change takes the next rev and a new event; nothing restates the first.
    a1.exchange(call(3, "flip", json!({}))).await;
    let second = flipped(&mut a2, 2, 3, false).await;
    assert_ne!(first, second);
    a2.expect_silence().await;
}
