//! The link's handshake and tool listing, against a scripted server.

use crate::support;

use actix::Actor;
use mcpl_host::link::{
    AwaitStatus, CallTool, DisconnectReason, GetStatus, LinkError, LinkEvent, LinkPhase, ListTools,
    ReadEvent, SendRequest, ServerLink, TapEvent,
};
use mcpl_protocol::ErrorCode;
use mcpl_protocol::mcp::{InitializeParams, Tool};
use mcpl_protocol::method::Initialize;
use serde_json::json;
use support::*;

fn names(tools: &[Tool]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

/// The method a tapped read answers, or the method of a tapped request/notification.
fn tapped(event: &TapEvent) -> String {
    match event {
        TapEvent::Read(ReadEvent {
            answers: Some(a), ..
        }) => format!("response:{}:{:?}", a.method, a.status),
        TapEvent::Read(ReadEvent { message, .. }) => {
            format!("read:{}", message.method().unwrap_or("?"))
        }
        TapEvent::Connected { epoch, .. } => format!("connected:{epoch}"),
        TapEvent::Disconnected { epoch, .. } => format!("disconnected:{epoch}"),
        TapEvent::Unreadable { epoch, .. } => format!("unreadable:{epoch}"),
    }
}

#[test]
fn an_mcpl_server_gets_initialize_initialized_a_grant_request_then_tools_list() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, mut taps) = tap();
        let link = ServerLink::new(config(connector, sink, tap)).start();
        let mut peer = servers.next_peer().await;
        // The exact wire, in order, is asserted inside.
        peer.serve_mcpl_handshake(json!([tool("look"), tool("play")]))
            .await;

        match events.next().await {
            LinkEvent::Connected {
                epoch,
                init,
                receipt,
                granted,
                mcpl,
            } => {
                assert_eq!(epoch, 1);
                assert_eq!(init.server_info.name, "arcade");
                assert!(receipt.expect("an MCPL server's receipt").accepted);
                assert_eq!(granted, ["pushEvents", "tools"]);
                assert!(mcpl);
            }
            other => panic!("expected Connected, got {other:?}"),
        }
        match events.next().await {
            LinkEvent::ToolsChanged { epoch: 1, tools } => {
                assert_eq!(names(&tools), ["look", "play"])
            }
            other => panic!("expected ToolsChanged, got {other:?}"),
        }

        // The tap saw every read in order (the era probe's refusal first), and the
        // connection's start right after the initialize result.
        let mut seen = Vec::new();
        for _ in 0..5 {
            seen.push(tapped(&taps.next().await));
        }
        assert_eq!(
            seen,
            [
                "response:server/discover:Awaited",
                "response:initialize:Awaited",
                "connected:1",
                "response:featureSets/update:Awaited",
                "response:tools/list:Awaited"
            ]
        );

        let status = link.send(GetStatus).await.unwrap();
        assert_eq!((status.phase, status.epoch), (LinkPhase::Ready, 1));
        let session = status.session.expect("a ready link has a session");
        assert_eq!(session.granted, ["pushEvents", "tools"]);
        assert_eq!(names(&session.tools), ["look", "play"]);
        assert!(
            session
                .manifest
                .expect("the manifest from initialize")
                .has_tool_hints()
        );
        assert!(session.info.ordered);
    });
}

#[test]
fn a_plain_mcp_server_gets_no_feature_sets_update() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, _taps) = tap();
        let link = ServerLink::new(config(connector, sink, tap)).start();
        let mut peer = servers.next_peer().await;

        let init = peer.expect_next("initialize").await;
        peer.reply(&init, plain_init_result()).await;
        assert_eq!(
            peer.recv().await,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        );
        // Straight to tools/list: no grant for a server that does not speak MCPL.
        let list = peer.recv().await;
        assert_eq!(
            list,
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}})
        );
        peer.reply(&list, json!({"tools": [tool("echo")]})).await;

        match events.next().await {
            LinkEvent::Connected {
                epoch: 1,
                init,
                receipt,
                granted,
                mcpl,
            } => {
                assert_eq!(init.protocol_version, "2025-06-18");
                assert_eq!(receipt, None);
                assert!(granted.is_empty() && !mcpl);
            }
            other => panic!("expected Connected, got {other:?}"),
        }
        events
            .until(|e| matches!(e, LinkEvent::ToolsChanged { .. }).then_some(()))
            .await;
        let session = link.send(GetStatus).await.unwrap().session.unwrap();
        assert!(session.granted.is_empty());
        assert_eq!(session.manifest, None);
    });
}

#[test]
fn tools_list_follows_next_cursor_through_every_page() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, mut taps) = tap();
        let link = ServerLink::new(config(connector, sink, tap)).start();
        let mut peer = servers.next_peer().await;
        let list = peer.serve_mcpl_handshake_to_list().await;
        peer.reply(&list, json!({"tools": [tool("a")], "nextCursor": "p2"}))
            .await;
        let page2 = peer.recv().await;
        assert_eq!(
            page2,
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"cursor": "p2"}})
        );
        peer.reply(&page2, json!({"tools": [tool("b")], "nextCursor": "p3"}))
            .await;
        let page3 = peer.recv().await;
        assert_eq!(page3["params"], json!({"cursor": "p3"}));
        peer.reply(
            &page3,
            json!({"tools": [tool("c")], "_meta": {"mcpl/rev": 0}}),
        )
        .await;

        let tools = events
            .until(|e| match e {
                LinkEvent::ToolsChanged { tools, .. } => Some(tools),
                _ => None,
            })
            .await;
        assert_eq!(names(&tools), ["a", "b", "c"]);
        let pages = taps
            .until(|e| match e {
                TapEvent::Read(r) if r.answers.as_ref().is_some_and(|a| a.id == 5.into()) => {
                    Some(r)
                }
                _ => None,
            })
            .await;
        assert_eq!(pages.answers.unwrap().method, "tools/list");

        // A caller's listing pages too.
        let call = actix::spawn(link.send(ListTools));
        let first = peer.expect_next("tools/list").await;
        assert_eq!(first["params"], json!({}));
        peer.reply(&first, json!({"tools": [tool("a")], "nextCursor": "next"}))
            .await;
        let second = peer.expect_next("tools/list").await;
        peer.reply(&second, json!({"tools": [tool("d")]})).await;
        let listed = call.await.unwrap().unwrap().unwrap();
        assert_eq!(names(&listed), ["a", "d"]);
    });
}

#[test]
fn a_cursor_given_twice_ends_the_listing_with_an_error() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, _events) = events();
        let (tap, _taps) = tap();
        let link = ServerLink::new(config(connector, sink, tap)).start();
        let mut peer = servers.next_peer().await;
        peer.serve_mcpl_handshake(json!([])).await;

        let call = actix::spawn(link.send(ListTools));
        let first = peer.expect_next("tools/list").await;
        peer.reply(&first, json!({"tools": [], "nextCursor": "again"}))
            .await;
        let second = peer.expect_next("tools/list").await;
        peer.reply(&second, json!({"tools": [], "nextCursor": "again"}))
            .await;
        match call.await.unwrap().unwrap() {
            Err(LinkError::EndlessPaging {
                method: "tools/list",
                cursor,
            }) => assert_eq!(cursor, "again"),
            other => panic!("expected EndlessPaging, got {other:?}"),
        }
    });
}

#[test]
fn every_listing_is_reported_with_the_lowest_rev_its_pages_name() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, _taps) = tap();
        let _link = ServerLink::new(config(connector, sink, tap)).start();
        let mut peer = servers.next_peer().await;
        let first = peer.serve_mcpl_handshake_to_list().await;
        peer.reply(
            &first,
            json!({"tools": [tool("look")], "nextCursor": "p2", "_meta": {"mcpl/rev": 5}}),
        )
        .await;
        let second = peer.expect_next("tools/list").await;
        assert_eq!(second["params"], json!({"cursor": "p2"}));
        peer.reply(
            &second,
            json!({"tools": [tool("play")], "_meta": {"mcpl/rev": 3}}),
        )
        .await;
        let (tools, rev) = events
            .until(|e| match e {
                LinkEvent::ToolsListed { tools, rev, .. } => Some((tools, rev)),
                _ => None,
            })
            .await;
        assert_eq!((names(&tools), rev), (vec!["look", "play"], Some(3)));
    });
}

#[test]
fn list_changed_relists_and_only_a_different_list_is_announced() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, _taps) = tap();
        let link = ServerLink::new(config(connector, sink, tap)).start();
        let mut peer = servers.next_peer().await;
        peer.serve_mcpl_handshake(json!([tool("look")])).await;
        events
            .until(|e| matches!(e, LinkEvent::ToolsChanged { .. }).then_some(()))
            .await;

        // The same list again: read, not announced.
        peer.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
            .await;
        let again = peer.recv().await;
        assert_eq!(
            again,
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}})
        );
        peer.reply(&again, json!({"tools": [tool("look")]})).await;

        peer.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
            .await;
        let changed = peer.expect_next("tools/list").await;
        peer.reply(&changed, json!({"tools": [tool("look"), tool("resign")]}))
            .await;

        // Every listing is reported listed, saying whether list_changed caused it; only a
        // different one is announced changed.
        for (expected, after_change) in [(["look"].as_slice(), false), (["look"].as_slice(), true)]
        {
            match events.next().await {
                LinkEvent::ToolsListed {
                    epoch: 1,
                    tools,
                    list_changed,
                    ..
                } => assert_eq!(
                    (names(&tools).as_slice(), list_changed),
                    (expected, after_change)
                ),
                other => panic!("expected a listing, got {other:?}"),
            }
        }
        match events.next().await {
            LinkEvent::ToolsChanged { epoch: 1, tools } => {
                assert_eq!(names(&tools), ["look", "resign"])
            }
            other => panic!("expected the changed list, got {other:?}"),
        }
        match events.next().await {
            LinkEvent::ToolsListed {
                tools,
                list_changed: true,
                ..
            } => assert_eq!(names(&tools), ["look", "resign"]),
            other => panic!("expected the listing, got {other:?}"),
        }
        let session = link.send(GetStatus).await.unwrap().session.unwrap();
        assert_eq!(names(&session.tools), ["look", "resign"]);
    });
}

#[test]
fn an_unsupported_protocol_version_disconnects_with_a_clear_error() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, mut taps) = tap();
        let link = ServerLink::new(config(connector, sink, tap)).start();
        let first = servers.next_attempt().await;
        let mut peer = servers.next_peer().await;
        let init = peer.expect_next("initialize").await;
        peer.reply(
            &init,
            json!({"protocolVersion": "2024-10-07", "capabilities": {},
                                 "serverInfo": {"name": "old", "version": "0"}}),
        )
        .await;
        // Nothing more is written: the host closes.
        peer.expect_closed().await;

        match events.next().await {
            LinkEvent::Disconnected {
                epoch: 1,
                reason: DisconnectReason::UnsupportedProtocolVersion { version, supported },
            } => {
                assert_eq!(version, "2024-10-07");
                assert!(supported.contains(&"2025-11-25"));
            }
            other => panic!("expected Disconnected, got {other:?}"),
        }
        assert_eq!(
            tapped(&taps.next().await),
            "response:server/discover:Awaited"
        );
        assert_eq!(tapped(&taps.next().await), "response:initialize:Awaited");
        assert_eq!(tapped(&taps.next().await), "disconnected:1");
        let status = link.send(GetStatus).await.unwrap();
        assert!(matches!(
            status.last_disconnect,
            Some(DisconnectReason::UnsupportedProtocolVersion { .. })
        ));
        assert!(status.session.is_none());

        // A failed handshake is a failed attempt: the next comes after the first backoff step.
        let second = servers.next_attempt().await;
        assert_eq!(second - first, std::time::Duration::from_millis(250));
    });
}

#[test]
fn requests_before_ready_fail_at_once_and_initialize_is_reserved() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, _events) = events();
        let (tap, _taps) = tap();
        let link = ServerLink::new(config(connector, sink, tap)).start();
        let mut peer = servers.next_peer().await;
        let init = peer.expect_next("initialize").await;

        // The initialize result has not come: nothing is sent, nothing hangs.
        let call = link.send(CallTool::new("look")).await.unwrap();
        assert_eq!(
            call,
            Err(LinkError::NotConnected {
                phase: LinkPhase::AwaitingInitializeResult
            })
        );
        let list = link.send(ListTools).await.unwrap();
        assert_eq!(
            list,
            Err(LinkError::NotConnected {
                phase: LinkPhase::AwaitingInitializeResult
            })
        );

        peer.reply(&init, plain_init_result()).await;
        peer.recv().await; // initialized
        let tools = peer.expect_next("tools/list").await;
        peer.reply(&tools, json!({"tools": []})).await;
        let params: InitializeParams =
            serde_json::from_value(initialize_request(1)["params"].clone())
                .expect("initialize params");
        let again = link
            .send(SendRequest::<Initialize>::new(params))
            .await
            .unwrap();
        assert_eq!(
            again.unwrap_err(),
            LinkError::ReservedMethod {
                method: "initialize"
            }
        );
    });
}

#[test]
fn a_refused_grant_disconnects_but_an_mcp_only_fallback_goes_on_without_a_grant() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, _taps) = tap();
        let link = ServerLink::new(config(connector, sink, tap)).start();

        let mut peer = servers.next_peer().await;
        let init = peer.expect_next("initialize").await;
        peer.reply(&init, mcpl_init_result()).await;
        peer.recv().await; // initialized
        let grant = peer.expect_next("featureSets/update").await;
        peer.reply(
            &grant,
            json!({"accepted": false, "fallback": "close", "reason": "tools only"}),
        )
        .await;
        peer.expect_closed().await;
        match events
            .until(|e| match e {
                LinkEvent::Disconnected { reason, .. } => Some(reason),
                _ => None,
            })
            .await
        {
            DisconnectReason::GrantRefused { reason, fallback } => {
                assert_eq!(reason.as_deref(), Some("tools only"));
                assert_eq!(fallback.as_deref(), Some("close"));
            }
            other => panic!("expected GrantRefused, got {other:?}"),
        }

        // Next connection: the server refuses but goes on as plain MCP.
        let mut peer = servers.next_peer().await;
        let init = peer.expect_next("initialize").await;
        peer.reply(&init, mcpl_init_result()).await;
        peer.recv().await;
        let grant = peer.expect_next("featureSets/update").await;
        peer.reply(&grant, json!({"accepted": false, "fallback": "mcp-only"}))
            .await;
        let list = peer.expect_next("tools/list").await;
        peer.reply(&list, json!({"tools": []})).await;
        events
            .until(|e| matches!(e, LinkEvent::Connected { epoch: 2, .. }).then_some(()))
            .await;
        let session = link.send(GetStatus).await.unwrap().session.unwrap();
        assert!(
            session.granted.is_empty(),
            "nothing is granted to a server gone plain"
        );
        // So MCPL is off (SPEC §3.2): push/event is a method this connection does not have.
        peer.send(
            json!({"jsonrpc": "2.0", "id": 9, "method": "push/event", "params": {
            "featureSet": "arcade.games", "eventId": "e", "timestamp": "2026-01-01T00:00:00Z",
            "payload": {"content": []}}}),
        )
        .await;
        let answer = peer.recv().await;
        assert_eq!(answer["id"], 9);
        assert_eq!(answer["error"]["code"], ErrorCode::METHOD_NOT_FOUND.0);
    });
}

#[test]
fn issue42_an_unanswered_grant_is_tried_again_on_a_new_connection_not_a_fall_back() {
    // A server too busy to answer the initial featureSets/update in time has not refused
    // MCPL: the host does not serve it as plain MCP for the rest of the connection (every
    // hint lost), it drops the connection and makes the handshake again after the backoff.
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, _taps) = tap();
        let link = ServerLink::new(config(connector, sink, tap)).start();

        let mut peer = servers.next_peer().await;
        let init = peer.expect_next("initialize").await;
        peer.reply(&init, mcpl_init_result()).await;
        peer.recv().await; // initialized
        let _unanswered = peer.expect_next("featureSets/update").await;
        // At the handshake timeout: the request is cancelled, and the connection ends.
        let cancelled = peer.recv().await;
        assert_eq!(
            cancelled["method"], "notifications/cancelled",
            "{cancelled}"
        );
        peer.expect_closed().await;
        match events
            .until(|e| match e {
                LinkEvent::Disconnected { reason, .. } => Some(reason),
                LinkEvent::Connected { .. } => panic!("served as plain MCP: {e:?}"),
                _ => None,
            })
            .await
        {
            DisconnectReason::HandshakeTimeout { method, .. } => {
                assert_eq!(method, "featureSets/update")
            }
            other => panic!("expected HandshakeTimeout, got {other:?}"),
        }

        // The next connection's grant is answered: MCPL, granted.
        let mut peer = servers.next_peer().await;
        let init = peer.expect_next("initialize").await;
        peer.reply(&init, mcpl_init_result()).await;
        peer.recv().await;
        let grant = peer.expect_next("featureSets/update").await;
        peer.reply(&grant, json!({"accepted": true})).await;
        let list = peer.expect_next("tools/list").await;
        peer.reply(&list, json!({"tools": []})).await;
        events
            .until(|e| matches!(e, LinkEvent::Connected { epoch: 2, .. }).then_some(()))
            .await;
        let session = link.send(GetStatus).await.unwrap().session.unwrap();
        assert!(!session.granted.is_empty(), "{session:?}");
    });
}

#[test]
fn an_initialize_error_is_a_rejected_handshake() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, mut taps) = tap();
        let _link = ServerLink::new(config(connector, sink, tap)).start();
        let mut peer = servers.next_peer().await;
        let init = peer.expect_next("initialize").await;
        peer.send(json!({"jsonrpc": "2.0", "id": init["id"], "error": {"code": -32603, "message": "boom"}})).await;
        peer.expect_closed().await;
        match events.next().await {
            LinkEvent::Disconnected {
                reason: DisconnectReason::HandshakeRejected { method, error },
                ..
            } => {
                assert_eq!(method, "initialize");
                assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
            }
            other => panic!("expected HandshakeRejected, got {other:?}"),
        }
        match taps.next().await {
            TapEvent::Read(ReadEvent {
                answers: Some(a), ..
            }) => assert_eq!(a.status, AwaitStatus::Awaited),
            other => panic!("expected the error response tapped, got {other:?}"),
        }
    });
}

#[test]
fn a_listing_asked_for_during_another_follows_it() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, _taps) = tap();
        let link = ServerLink::new(config(connector, sink, tap)).start();
        let mut peer = servers.next_peer().await;
        let first = peer.serve_mcpl_handshake_to_list().await;

        // The first listing is unanswered: a caller's waits for one of its own after it.
        let call = actix::spawn(link.send(ListTools));
        events
            .until(|e| matches!(e, LinkEvent::Connected { .. }).then_some(()))
            .await;
        peer.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
            .await;
        peer.reply(&first, json!({"tools": [tool("old")]})).await;
        // Exactly one more listing, for both the caller and the list_changed.
        let second = peer.recv().await;
        assert_eq!(
            second,
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}})
        );
        peer.reply(&second, json!({"tools": [tool("new")]})).await;
        assert_eq!(names(&call.await.unwrap().unwrap().unwrap()), ["new"]);
        peer.send(json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}))
            .await;
        assert_eq!(peer.recv().await["id"], "p", "no third listing was sent");
        // The listing under way when list_changed came does not count as caused by it; the
        // one after does (a host's tool-list boundary, §3).
        let mut listed = Vec::new();
        while listed.len() < 2 {
            if let LinkEvent::ToolsListed {
                tools,
                list_changed,
                ..
            } = events.next().await
            {
                listed.push((names(&tools).join(","), list_changed));
            }
        }
        assert_eq!(
            listed,
            [("old".to_owned(), false), ("new".to_owned(), true)]
        );
    });
}
