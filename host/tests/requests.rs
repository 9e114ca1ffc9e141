//! Requests through the link: results, errors, timeouts (and the late result the tap still
//! reads), drops, unreadable input and shutdown.

use crate::support;

use actix::{Actor, Addr};
use mcpl_host::link::{
    Answered, AwaitStatus, CallTool, DisconnectReason, GetStatus, LinkError, LinkEvent,
    SendRequest, ServerLink, Shutdown, TapEvent,
};
use mcpl_protocol::mcp::CallToolResult;
use mcpl_protocol::meta::Meta;
use mcpl_protocol::method::ToolsetsList;
use mcpl_protocol::toolsets::ToolsetsListParams;
use mcpl_protocol::{ErrorCode, Id, Message};
use serde_json::{Map, Value, json};
use std::time::Duration;
use support::*;

/// A link past its handshake, with its peer, events and tap.
async fn ready(plan: Plan) -> (Addr<ServerLink>, Peer, Events, TapLog) {
    let (connector, mut servers) = scripted();
    servers.plan([plan]);
    let (sink, mut events) = events();
    let (tap, mut taps) = tap();
    let link = ServerLink::new(config(connector, sink, tap)).start();
    let mut peer = servers.next_peer().await;
    peer.serve_mcpl_handshake(json!([tool("play")])).await;
    events
        .until(|e| matches!(e, LinkEvent::ToolsListed { .. }).then_some(()))
        .await;
    taps.until(|e| matches!(&e, TapEvent::Read(r) if r.answers.as_ref().is_some_and(|a| a.method == "tools/list")).then_some(()))
        .await;
    (link, peer, events, taps)
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().expect("an object")
}

#[test]
fn a_call_carries_its_arguments_and_meta_and_returns_the_result() {
    paused(async {
        let (link, mut peer, _events, _taps) = ready(Plan::Accept { ordered: true }).await;
        let call = actix::spawn(
            link.send(
                CallTool::new("play")
                    .with_arguments(args(json!({"move": "D4"})))
                    .with_meta(Meta::with_instance("g1")),
            ),
        );
        let req = peer.recv().await;
        assert_eq!(
            req,
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                   "params": {"name": "play", "arguments": {"move": "D4"}, "_meta": {"mcpl/instance": "g1"}}})
        );
        peer.reply(
            &req,
            json!({"content": [{"type": "text", "text": "Black played D4"}]}),
        )
        .await;
        assert_eq!(
            call.await.unwrap().unwrap(),
            Ok(CallToolResult::text("Black played D4"))
        );
    });
}

#[test]
fn a_server_error_response_and_a_malformed_result_are_told_apart() {
    paused(async {
        let (link, mut peer, _events, _taps) = ready(Plan::Accept { ordered: true }).await;
        let call = actix::spawn(link.send(CallTool::new("play")));
        let req = peer.expect_next("tools/call").await;
        peer.send(json!({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32602, "message": "unknown tool"}})).await;
        match call.await.unwrap().unwrap() {
            Err(LinkError::Server {
                method: "tools/call",
                error,
            }) => assert_eq!(error.code, ErrorCode::INVALID_PARAMS),
            other => panic!("expected a server error, got {other:?}"),
        }

        let call = actix::spawn(link.send(CallTool::new("play")));
        let req = peer.expect_next("tools/call").await;
        peer.reply(&req, json!({"content": "not a list"})).await;
        assert!(matches!(
            call.await.unwrap().unwrap(),
            Err(LinkError::MalformedResult {
                method: "tools/call",
                ..
            })
        ));
    });
}

#[test]
fn a_timed_out_call_is_cancelled_and_its_late_result_still_reaches_the_tap() {
    paused(async {
        let (link, mut peer, _events, mut taps) = ready(Plan::Accept { ordered: true }).await;
        let call =
            actix::spawn(link.send(CallTool::new("play").with_timeout(Duration::from_secs(5))));
        let req = peer.expect_next("tools/call").await;
        let sent_at = tokio::time::Instant::now();

        // The server says nothing; the clock runs to the timeout.
        let cancel = peer.recv().await;
        assert_eq!(
            tokio::time::Instant::now() - sent_at,
            Duration::from_secs(5)
        );
        assert_eq!(cancel["method"], "notifications/cancelled");
        assert_eq!(cancel["params"]["requestId"], req["id"]);
        assert_eq!(
            call.await.unwrap().unwrap(),
            Err(LinkError::Timeout {
                method: "tools/call",
                after: Duration::from_secs(5)
            })
        );

        // §5.2, vector 28: the late result's hints must still be read.
        let late = json!({"content": [], "_meta": {"mcpl/hints": {"rev": 1, "tools": [{"name": "play", "visible": true}]}}});
        peer.reply(&req, late.clone()).await;
        let read = taps
            .until(|e| match e {
                TapEvent::Read(r) if matches!(r.message, Message::Response(_)) => Some(r),
                _ => None,
            })
            .await;
        assert_eq!(
            read.answers,
            Some(Answered {
                id: Id::Number(5),
                method: "tools/call",
                status: AwaitStatus::TimedOut
            })
        );
        let Message::Response(response) = read.message else {
            unreachable!("matched above")
        };
        assert_eq!(response.result_value(), Ok(late));
        assert_eq!((read.epoch, read.ordered), (1, true));

        // The link goes on.
        let call = actix::spawn(link.send(CallTool::new("play")));
        let req = peer.expect_next("tools/call").await;
        assert_eq!(req["id"], 6);
        peer.reply(&req, json!({"content": []})).await;
        assert!(call.await.unwrap().unwrap().is_ok());
    });
}

#[test]
fn a_call_in_flight_when_the_link_drops_fails_as_disconnected() {
    paused(async {
        let (link, mut peer, mut events, mut taps) = ready(Plan::Accept { ordered: true }).await;
        let call = actix::spawn(link.send(CallTool::new("play")));
        peer.expect_next("tools/call").await;
        drop(peer);

        assert_eq!(
            call.await.unwrap().unwrap(),
            Err(LinkError::Disconnected {
                method: "tools/call",
                reason: DisconnectReason::Closed
            })
        );
        match events.next().await {
            LinkEvent::Disconnected {
                epoch: 1,
                reason: DisconnectReason::Closed,
            } => {}
            other => panic!("expected Disconnected, got {other:?}"),
        }
        assert_eq!(
            taps.next().await,
            TapEvent::Disconnected {
                epoch: 1,
                reason: DisconnectReason::Closed
            }
        );
        // Not ready any more: at once, nothing sent.
        assert!(matches!(
            link.send(CallTool::new("play")).await.unwrap(),
            Err(LinkError::NotConnected { .. })
        ));
    });
}

#[test]
fn any_typed_request_goes_through_send_request() {
    paused(async {
        let (link, mut peer, _events, _taps) = ready(Plan::Accept { ordered: true }).await;
        let call = actix::spawn(
            link.send(SendRequest::<ToolsetsList>::new(ToolsetsListParams {
                meta: None,
            })),
        );
        let req = peer.recv().await;
        assert_eq!(
            req,
            json!({"jsonrpc": "2.0", "id": 5, "method": "toolsets/list", "params": {}})
        );
        peer.reply(
            &req,
            json!({"open": [{"toolset": "game", "instance": "g1"}], "ended": [], "_meta": {"mcpl/hints": {"rev": 1}}}),
        )
        .await;
        let result = call.await.unwrap().unwrap().unwrap();
        assert_eq!(result.open[0].instance.as_deref(), Some("g1"));
        assert_eq!(result.meta.hints.unwrap().rev, 1);
    });
}

#[test]
fn unreadable_input_is_answered_with_its_decode_error_and_the_link_goes_on() {
    paused(async {
        let (link, mut peer, _events, _taps) = ready(Plan::AcceptRaw).await;
        peer.send_unreadable(b"{not json").await;
        let answer = peer.recv().await;
        assert_eq!(answer["id"], Value::Null);
        assert_eq!(answer["error"]["code"], ErrorCode::PARSE_ERROR.0);

        // An invalid message carrying the id of a call in flight was meant as its response:
        // the call fails at once and nothing is answered.
        let call = actix::spawn(link.send(CallTool::new("play")));
        let req = peer.expect_next("tools/call").await;
        let id = req["id"].as_i64().unwrap();
        let bad = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{}},"error":{{"code":1,"message":"x"}}}}"#
        );
        peer.send_unreadable(bad.as_bytes()).await;
        assert!(matches!(
            call.await.unwrap().unwrap(),
            Err(LinkError::MalformedResponse {
                method: "tools/call",
                ..
            })
        ));
        peer.send(json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}))
            .await;
        assert_eq!(
            peer.recv().await,
            json!({"jsonrpc": "2.0", "id": "p", "result": {}}),
            "nothing was written before"
        );
        assert!(link.send(GetStatus).await.unwrap().session.is_some());
    });
}

#[test]
fn shutdown_closes_the_connection_and_fails_what_is_in_flight() {
    paused(async {
        let (link, mut peer, mut events, _taps) = ready(Plan::Accept { ordered: true }).await;
        let call = actix::spawn(link.send(CallTool::new("play")));
        peer.expect_next("tools/call").await;
        link.send(Shutdown).await.unwrap();

        assert_eq!(
            call.await.unwrap().unwrap(),
            Err(LinkError::Disconnected {
                method: "tools/call",
                reason: DisconnectReason::Shutdown
            })
        );
        peer.expect_closed().await;
        match events.next().await {
            LinkEvent::Disconnected {
                epoch: 1,
                reason: DisconnectReason::Shutdown,
            } => {}
            other => panic!("expected Disconnected, got {other:?}"),
        }
        // The actor has stopped.
        assert!(link.send(GetStatus).await.is_err());
    });
}
