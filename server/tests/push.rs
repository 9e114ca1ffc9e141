//! `push/event`: refused before the grant and without `pushEvents`, delivered after it,
//! matched by id, timed out, and pushed from inside a tool handler.

use crate::support;

use mcpl_protocol::jsonrpc::ErrorCode;
use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_protocol::mcpl::PushEventResult;
use mcpl_server::{PushError, PushEvent, Server, SessionHandle, ToolContext, ToolError};
use mcpl_testkit::within;
use serde_json::{Value, json};
use std::time::Duration;
use support::{Client, TestClient, connect};
use tokio::task::JoinHandle;

const TIMEOUT: Duration = Duration::from_secs(5);

fn server() -> Server {
    Server::builder("test-server", "0.1.0")
        .push_timeout(TIMEOUT)
        .tool(
            Tool::new(
                "announce",
                "Pushes, then answers",
                json!({"type": "object"}),
            ),
            |ctx: ToolContext, _: Value| async move {
                match ctx
                    .push(PushEvent::text("announcing").with_event_id("ann-1"))
                    .await
                {
                    Ok(r) => Ok(CallToolResult::text(format!("accepted: {}", r.accepted))),
                    Err(e) => Err(ToolError::failed(e.to_string())),
                }
            },
        )
        .build()
        .unwrap()
}

fn event(id: &str) -> PushEvent {
    PushEvent::text("Black played D4")
        .with_event_id(id)
        .with_timestamp("2026-11-30T12:00:00Z")
        .with_tag("surface:turn")
        .about("go", Some("g1".into()))
}

fn spawn_push(
    session: &SessionHandle,
    event: PushEvent,
) -> JoinHandle<Result<PushEventResult, PushError>> {
    let session = session.clone();
    tokio::spawn(async move { session.push(event).await })
}

async fn sync(client: &mut TestClient) {
    let pong = client
        .exchange(json!({"jsonrpc": "2.0", "id": "sync", "method": "ping"}))
        .await;
    assert_eq!(pong["result"], json!({}));
}

#[actix::test]
async fn nothing_is_pushed_before_the_grant() {
    let (mut client, session) = connect(&server());
    assert_eq!(session.push(event("e")).await, Err(PushError::GrantPending));
    client
        .initialize_with(
            "2025-11-25",
            json!({"experimental": {"mcpl": {"version": "0.5", "pushEvents": true}}}),
        )
        .await;
    assert_eq!(session.push(event("e")).await, Err(PushError::GrantPending));
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    sync(&mut client).await;
    assert_eq!(session.push(event("e")).await, Err(PushError::GrantPending));
    client.grant(&["tools", "pushEvents"]).await;
    let push = spawn_push(&session, event("e"));
    assert_eq!(client.recv().await["method"], "push/event");
    drop(push);
}

#[actix::test]
async fn nothing_is_pushed_without_the_push_events_grant() {
    let (mut client, session) = connect(&server());
    client.handshake_mcpl(false, &["tools"]).await;
    assert_eq!(session.push(event("e")).await, Err(PushError::NotGranted));
    // A new grant with pushEvents allows it.
    client.grant(&["tools", "pushEvents"]).await;
    let push = spawn_push(&session, event("e"));
    assert_eq!(client.recv().await["method"], "push/event");
    drop(push);
}

#[actix::test]
async fn a_plain_mcp_host_is_never_pushed_to() {
    let (mut client, session) = connect(&server());
    client.handshake_plain().await;
    sync(&mut client).await;
    assert_eq!(session.push(event("e")).await, Err(PushError::NotGranted));
}

#[actix::test]
async fn an_unknown_feature_set_is_refused() {
    let (mut client, session) = connect(&server());
    client.handshake_mcpl(false, &["tools", "pushEvents"]).await;
    let e = session.push(event("e").with_feature_set("nope")).await;
    assert_eq!(e, Err(PushError::NoFeatureSet(Some("nope".into()))));
}

#[actix::test]
async fn a_granted_push_is_sent_and_resolves_on_the_hosts_answer() {
    let (mut client, session) = connect(&server());
    client.handshake_mcpl(true, &["tools", "pushEvents"]).await;
    let push = spawn_push(&session, event("ev-test"));
    client
        .expect(json!({"jsonrpc": "2.0", "id": 1, "method": "push/event", "params": {
            "featureSet": "default", "eventId": "ev-test", "timestamp": "2026-11-30T12:00:00Z",
            "tags": ["surface:turn"], "payload": {"content": [{"type": "text", "text": "Black played D4"}]},
            "toolset": "go", "instance": "g1"}}))
        .await;
    client.send(json!({"jsonrpc": "2.0", "id": 1, "result": {"accepted": true, "inferenceId": "inf-1"}})).await;
    let answer = within(push).await.unwrap().unwrap();
    assert_eq!(
        answer,
        PushEventResult {
            accepted: true,
            inference_id: Some("inf-1".into()),
            reason: None,
            meta: None
        }
    );
    assert_eq!(session.status().await.unwrap().pending_requests, 0);
}

#[actix::test]
async fn defaults_are_filled_in() {
    let (mut client, session) = connect(&server());
    client.handshake_mcpl(false, &["tools", "pushEvents"]).await;
    let push = spawn_push(&session, PushEvent::text("hello"));
    let request = client.recv().await;
    let params = &request["params"];
    assert_eq!(params["featureSet"], "default");
    assert!(
        params["eventId"].as_str().is_some_and(|id| !id.is_empty()),
        "{request}"
    );
    let ts = params["timestamp"].as_str().unwrap();
    assert!(
        ts.len() == 24 && ts.ends_with('Z') && ts.as_bytes()[10] == b'T',
        "{ts}"
    );
    assert_eq!(
        params.as_object().unwrap().len(),
        4,
        "no other members: {request}"
    );
    client.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"accepted": false, "reason": "busy"}})).await;
    let answer = within(push).await.unwrap().unwrap();
    assert_eq!(
        (answer.accepted, answer.reason.as_deref()),
        (false, Some("busy"))
    );
}

/// Issue #36 item 2: event ids are unique across processes (SPEC §9.2). A server built
/// again — what a restart does — numbered its pushes `ev-1`, `ev-2`, … once more, and a host
/// that remembered the first process's `ev-1` took the second's for a retry and showed
/// nothing. Each build here stands for a process: same code, same sequence of pushes.
#[actix::test]
async fn issue36_02_a_restarted_server_s_event_ids_differ_from_the_last_process_s() {
    let mut ids = Vec::new();
    for _process in 0..2 {
        let (mut client, session) = connect(&server());
        client.handshake_mcpl(false, &["tools", "pushEvents"]).await;
        for _ in 0..2 {
            let push = spawn_push(&session, PushEvent::text("bob challenges you"));
            let request = client.recv().await;
            ids.push(request["params"]["eventId"].as_str().unwrap().to_owned());
            client
                .send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"accepted": true}}))
                .await;
            within(push).await.unwrap().unwrap();
        }
    }
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "an id repeats: {ids:?}");
}

#[actix::test]
async fn answers_are_matched_by_id_in_any_order() {
    let (mut client, session) = connect(&server());
    client.handshake_mcpl(false, &["tools", "pushEvents"]).await;
    let first = spawn_push(&session, event("a"));
    let r1 = client.recv().await;
    let second = spawn_push(&session, event("b"));
    let r2 = client.recv().await;
    assert_eq!(
        (
            r1["params"]["eventId"].clone(),
            r2["params"]["eventId"].clone()
        ),
        (json!("a"), json!("b"))
    );
    assert_ne!(r1["id"], r2["id"]);
    client.send(json!({"jsonrpc": "2.0", "id": r2["id"], "result": {"accepted": false, "reason": "second"}})).await;
    client.send(json!({"jsonrpc": "2.0", "id": r1["id"], "error": {"code": -32602, "message": "bad event"}})).await;
    assert_eq!(
        within(second).await.unwrap().unwrap().reason.as_deref(),
        Some("second")
    );
    match within(first).await.unwrap() {
        Err(PushError::Host(e)) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS),
        other => panic!("expected the host's error, got {other:?}"),
    }
}

#[actix::test]
async fn a_malformed_answer_is_reported() {
    let (mut client, session) = connect(&server());
    client.handshake_mcpl(false, &["tools", "pushEvents"]).await;
    let push = spawn_push(&session, event("a"));
    let request = client.recv().await;
    client
        .send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"accepted": "yes"}}))
        .await;
    assert!(matches!(
        within(push).await.unwrap(),
        Err(PushError::MalformedResult(_))
    ));
}

#[actix::test]
async fn an_unanswered_push_times_out_and_a_late_answer_is_ignored() {
    tokio::time::pause();
    let (mut client, session) = connect(&server());
    client.handshake_mcpl(false, &["tools", "pushEvents"]).await;
    let push = spawn_push(&session, event("slow"));
    let request = client.recv().await;
    assert_eq!(
        within(push).await.unwrap(),
        Err(PushError::TimedOut(TIMEOUT))
    );
    assert_eq!(session.status().await.unwrap().pending_requests, 0);
    client
        .send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"accepted": true}}))
        .await;
    sync(&mut client).await;
    client.expect_silence().await;
}

#[actix::test]
async fn a_tool_handler_can_push_while_its_call_runs() {
    let (mut client, _session) = connect(&server());
    client.handshake_mcpl(false, &["tools", "pushEvents"]).await;
    client.send(json!({"jsonrpc": "2.0", "id": "c1", "method": "tools/call", "params": {"name": "announce"}})).await;
    let push = client.recv().await;
    assert_eq!(
        (push["method"].clone(), push["params"]["eventId"].clone()),
        (json!("push/event"), json!("ann-1"))
    );
    client
        .send(json!({"jsonrpc": "2.0", "id": push["id"], "result": {"accepted": true}}))
        .await;
    client
        .expect(json!({"jsonrpc": "2.0", "id": "c1", "result": {"content": [{"type": "text", "text": "accepted: true"}]}}))
        .await;
}
