//! What the server sends the host: pushes (answered by policy, tapped before the answer),
//! pings, unknown requests, and the notifications passed to subscribers.

use crate::support;

use actix::{Actor, Addr};
use mcpl_host::link::{
    GetStatus, LinkConfig, LinkEvent, PushPolicy, ServerLink, SetPushPolicy, Tap, TapEvent,
};
use mcpl_protocol::mcpl::PushEventResult;
use mcpl_protocol::{ErrorCode, Message};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use support::*;

async fn ready_with(
    configure: impl FnOnce(&mut LinkConfig),
) -> (Addr<ServerLink>, Peer, Events, TapLog) {
    let (connector, mut servers) = scripted();
    let (sink, mut events) = events();
    let (tap, taps) = tap();
    let mut config = config(connector, sink, tap);
    configure(&mut config);
    let link = ServerLink::new(config).start();
    let mut peer = servers.next_peer().await;
    peer.serve_mcpl_handshake(json!([tool("play")])).await;
    events
        .until(|e| matches!(e, LinkEvent::ToolsListed { .. }).then_some(()))
        .await;
    (link, peer, events, taps)
}

fn push(id: &str, event_id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "push/event", "params": {
        "featureSet": "arcade.games", "eventId": event_id, "timestamp": "2026-11-30T12:00:00Z",
        "tags": ["surface:turn"],
        "payload": {"content": [{"type": "text", "text": "White played E5"}]},
        "hints": {"rev": 2, "tools": [{"name": "play", "instance": "g1", "visible": true}]},
        "toolset": "game", "instance": "g1"
    }})
}

/// The push read, if the tap already has it (it must, before the answer is written).
fn tapped_push(taps: &mut TapLog, event_id: &str) -> bool {
    while let Some(e) = taps.try_next() {
        if let TapEvent::Read(r) = e
            && let Message::Request(req) = &r.message
            && req.method == "push/event"
            && req.params_value().is_some_and(|p| p["eventId"] == event_id)
        {
            assert_eq!(r.answers, None);
            return true;
        }
    }
    false
}

#[test]
fn a_push_is_tapped_before_it_is_answered_and_accepted_by_default() {
    paused(async {
        let (_link, mut peer, mut events, mut taps) = ready_with(|_| {}).await;
        peer.send(push("push-1", "ev-1")).await;
        assert_eq!(
            peer.recv().await,
            json!({"jsonrpc": "2.0", "id": "push-1", "result": {"accepted": true}})
        );
        assert!(
            tapped_push(&mut taps, "ev-1"),
            "the push was tapped before its answer was written"
        );
        match events.next().await {
            LinkEvent::Push {
                epoch: 1,
                params,
                result,
            } => {
                assert_eq!(params.event_id, "ev-1");
                assert_eq!(params.hints.unwrap().rev, 2);
                assert!(result.accepted);
            }
            other => panic!("expected Push, got {other:?}"),
        }
    });
}

#[test]
fn a_push_refused_by_policy_is_still_tapped_and_the_policy_can_change() {
    paused(async {
        // One journal for the tap and the policy: the push must be read before it is decided.
        let journal: Arc<Mutex<Vec<String>>> = Arc::default();
        let decisions = journal.clone();
        let refuse = PushPolicy::from_fn(move |p| {
            decisions
                .lock()
                .unwrap()
                .push(format!("decided {}", p.event_id));
            PushEventResult {
                accepted: false,
                reason: Some(format!("busy with {}", p.event_id)),
                ..Default::default()
            }
        });
        let reads = journal.clone();
        let journaling_tap = Tap::from_fn(move |e| {
            if let TapEvent::Read(r) = e
                && let Message::Request(req) = &r.message
            {
                let event_id = req.params_value().map(|p| p["eventId"].clone());
                reads.lock().unwrap().push(format!(
                    "tapped {} {}",
                    req.method,
                    event_id.unwrap_or_default()
                ));
            }
        });
        let (link, mut peer, mut events, _taps) = ready_with(|c| {
            c.push_policy = refuse;
            c.tap = Some(journaling_tap);
        })
        .await;
        peer.send(push("push-2", "ev-2")).await;
        assert_eq!(
            peer.recv().await,
            json!({"jsonrpc": "2.0", "id": "push-2", "result": {"accepted": false, "reason": "busy with ev-2"}})
        );
        // §5.2, vector 3: a refused push's hints are read all the same, and before the
        // decision about it.
        assert_eq!(
            *journal.lock().unwrap(),
            [r#"tapped push/event "ev-2""#, "decided ev-2"]
        );
        match events.next().await {
            LinkEvent::Push { result, .. } => assert!(!result.accepted),
            other => panic!("expected Push, got {other:?}"),
        }

        link.send(SetPushPolicy(PushPolicy::accept_all()))
            .await
            .unwrap();
        peer.send(push("push-3", "ev-3")).await;
        assert_eq!(peer.recv().await["result"], json!({"accepted": true}));
    });
}

#[test]
fn without_the_push_grant_a_push_is_denied_but_still_tapped() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, _events) = events();
        let (tap, mut taps) = tap();
        let mut config = config(connector, sink, tap);
        config.grant = vec!["tools".into()];
        let _link = ServerLink::new(config).start();
        let mut peer = servers.next_peer().await;
        let init = peer.expect_next("initialize").await;
        peer.reply(&init, mcpl_init_result()).await;
        peer.recv().await; // initialized
        let grant = peer.expect_next("featureSets/update").await;
        // The server advertises pushEvents; the host's policy leaves it out: it is denied,
        // and said so as a diagnostic (SPEC §5.4).
        assert_eq!(
            grant["params"],
            json!({"effectiveCapabilities": ["tools"], "deniedCapabilities": ["pushEvents"]})
        );
        peer.reply(&grant, json!({"accepted": true})).await;
        let list = peer.expect_next("tools/list").await;
        peer.reply(&list, json!({"tools": []})).await;

        peer.send(push("push-4", "ev-4")).await;
        let answer = peer.recv().await;
        assert_eq!(answer["id"], "push-4");
        assert_eq!(answer["error"]["code"], ErrorCode::CAPABILITY_DENIED.0);
        assert!(tapped_push(&mut taps, "ev-4"));
    });
}

#[test]
fn ping_is_answered_and_unknown_requests_get_method_not_found() {
    paused(async {
        let (_link, mut peer, _events, _taps) = ready_with(|_| {}).await;
        peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await;
        assert_eq!(
            peer.recv().await,
            json!({"jsonrpc": "2.0", "id": 1, "result": {}})
        );
        peer.send(
            json!({"jsonrpc": "2.0", "id": 2, "method": "sampling/createMessage", "params": {}}),
        )
        .await;
        let answer = peer.recv().await;
        assert_eq!(answer["id"], 2);
        assert_eq!(answer["error"]["code"], ErrorCode::METHOD_NOT_FOUND.0);
        // A malformed push is an invalid-params error, and the link goes on.
        peer.send(
            json!({"jsonrpc": "2.0", "id": 3, "method": "push/event", "params": {"eventId": 7}}),
        )
        .await;
        assert_eq!(
            peer.recv().await["error"]["code"],
            ErrorCode::INVALID_PARAMS.0
        );
        peer.send(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}))
            .await;
        assert_eq!(peer.recv().await["id"], 4);
    });
}

#[test]
fn notifications_reach_subscribers_and_a_manifest_change_is_re_read() {
    paused(async {
        let (link, mut peer, mut events, _taps) = ready_with(|_| {}).await;

        peer.send(json!({"jsonrpc": "2.0", "method": "tools/hints",
                         "params": {"rev": 3, "tools": [{"name": "play", "visible": false}]}}))
            .await;
        match events.next().await {
            LinkEvent::ToolHints { epoch: 1, changes } => assert_eq!(changes.rev, 3),
            other => panic!("expected ToolHints, got {other:?}"),
        }

        peer.send(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}))
            .await;
        match events.next().await {
            LinkEvent::Notification {
                epoch: 1,
                notification,
            } => assert_eq!(notification.method, "notifications/message"),
            other => panic!("expected Notification, got {other:?}"),
        }

        peer.send(json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
                         "params": {"revision": "r2", "domains": ["toolsets"]}}))
            .await;
        match events.next().await {
            LinkEvent::ManifestChanged { epoch: 1, params } => {
                assert_eq!(params.domains, ["toolsets"])
            }
            other => panic!("expected ManifestChanged, got {other:?}"),
        }
        let read = peer.recv().await;
        assert_eq!(
            read,
            json!({"jsonrpc": "2.0", "id": 5, "method": "mcpl/manifest", "params": {}})
        );
        // SPEC §17.4: the result is the manifest object itself.
        peer.reply(
            &read,
            json!({"version": "0.5", "revision": "r2", "toolHints": true,
                                 "toolsets": {"lobby": {"title": "Lobby", "default": "open"}}}),
        )
        .await;
        // The new manifest no longer advertises pushEvents: the host revokes it at once,
        // then tells the server (SPEC §17.5, §6.7).
        match events.next().await {
            LinkEvent::Granted { epoch: 1, granted } => assert_eq!(granted, ["tools"]),
            other => panic!("expected Granted, got {other:?}"),
        }
        match events.next().await {
            LinkEvent::ManifestUpdated { epoch: 1, manifest } => {
                assert!(manifest.toolsets.contains_key("lobby"))
            }
            other => panic!("expected ManifestUpdated, got {other:?}"),
        }
        let policy = peer.expect_next("featureSets/update").await;
        assert_eq!(
            policy["params"],
            json!({"effectiveCapabilities": ["tools"]})
        );
        peer.reply(&policy, json!({"accepted": true})).await;
        let manifest = link
            .send(GetStatus)
            .await
            .unwrap()
            .session
            .unwrap()
            .manifest
            .unwrap();
        assert_eq!(manifest.revision.as_deref(), Some("r2"));
    });
}
