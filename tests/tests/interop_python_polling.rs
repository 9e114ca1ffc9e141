//! Interop, issue #39 item 9: what a 2025-11-25 server built on the official Python SDK may
//! do to a client, taken by our host's `ServerLink` over Streamable HTTP
//! (`tests/interop/py_polling_server.py`):
//!
//! - SSE polling (SEP-1699): the server closes a call's stream after its priming event and
//!   keeps the answer for a GET with `Last-Event-ID`. Before, the host failed such a call
//!   as unanswered although the server ran it.
//! - `elicitation/create` sent although the host declared no `elicitation`: answered with
//!   the server's own defaults when every required field has one, declined otherwise
//!   (before: -32601, and the tool failed).

use actix::Actor;
use mcpl_host::link::{
    CallTool, Connector, EraPolicy, EventSink, LinkConfig, LinkEvent, ServerLink,
};
use mcpl_tests::interop::{Killed, python_http_server};
use mcpl_transport::ClientOptions;
use serde_json::json;
use tokio::sync::mpsc;

/// Starts the Python server and a link to it, and waits until the link has its tools.
/// The link is configured `legacy`: what is tested here is the 2025-11-25 era (the SDK's
/// server is dual-era, and `auto` would find it modern, where neither SSE polling nor a
/// server's own requests exist).
async fn linked() -> (actix::Addr<ServerLink>, Killed) {
    let (guard, url) = python_http_server("py_polling_server.py", &[]);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let config = LinkConfig::new("py", Connector::url(url, ClientOptions::default()))
        .with_era(EraPolicy::Legacy)
        .with_subscriber(EventSink::Channel(tx));
    let link = ServerLink::new(config).start();
    loop {
        match rx.recv().await.expect("the link reports") {
            LinkEvent::ToolsChanged { tools, .. } => {
                let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                names.sort_unstable();
                assert_eq!(names, ["ask_name", "confirm", "slow_echo"]);
                return (link, guard);
            }
            LinkEvent::ConnectFailed { error, .. } => panic!("could not connect: {error}"),
            _ => {}
        }
    }
}

async fn call(link: &actix::Addr<ServerLink>, tool: &str, args: serde_json::Value) -> String {
    let result = link
        .send(CallTool::new(tool).with_arguments(args.as_object().cloned().unwrap()))
        .await
        .expect("the link answers")
        .unwrap_or_else(|e| panic!("{tool}: the call failed: {e}"));
    assert!(!result.is_error, "{tool}: {result:?}");
    result.joined_text()
}

#[actix::test]
async fn issue39_09_a_call_whose_stream_the_server_closed_is_resumed_and_answered() {
    let (link, _server) = linked().await;
    for n in 0..3 {
        let text = format!("poll {n}");
        assert_eq!(
            call(&link, "slow_echo", json!({"text": text})).await,
            format!("after polling: {text}")
        );
    }
}

#[actix::test]
async fn issue39_09_elicitation_is_answered_with_the_servers_defaults_or_declined() {
    let (link, _server) = linked().await;
    assert_eq!(
        call(&link, "confirm", json!({})).await,
        "accept {'confirm': False, 'size': 9}"
    );
    assert_eq!(call(&link, "ask_name", json!({})).await, "decline");
}
