//! The URL connector over a real WebSocket on 127.0.0.1: the same handshake on the wire,
//! and a reconnect when the server side drops. Real sockets, so real time: the test awaits
//! events, with a short backoff so the reconnect comes quickly.

use crate::support;

use actix::Actor;
use mcpl_host::link::{CallTool, Connector, GetStatus, LinkEvent, ServerLink};
use mcpl_protocol::mcp::CallToolResult;
use mcpl_transport::{ClientOptions, Principal, ServerOptions, TransportKind, ws};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use support::*;

#[actix::test]
async fn a_url_connector_links_over_a_real_websocket_and_reconnects_when_the_server_drops() {
    let mut server_options = ServerOptions::default();
    server_options
        .tokens
        .insert("s3cret".into(), "alice".into());
    let mut listener = ws::bind("127.0.0.1:0".parse().unwrap(), Arc::new(server_options))
        .await
        .unwrap();
    let url = format!("ws://{}/mcp", listener.local_addr());
    let client_options = ClientOptions {
        token: Some("s3cret".into()),
        ..Default::default()
    };

    let (sink, mut events) = events();
    let (tap, _taps) = tap();
    let mut config = config(Connector::url(url, client_options), sink, tap);
    config.backoff.initial = Duration::from_millis(10);
    config.backoff.max = Duration::from_millis(40);
    let link = ServerLink::new(config).start();

    let conn = listener.accept().await.expect("the host connects");
    assert_eq!(conn.info.principal, Some(Principal::Named("alice".into())));
    let mut peer = support::from_connection(conn);
    peer.serve_mcpl_handshake(json!([tool("play")])).await;
    events
        .until(|e| matches!(e, LinkEvent::ToolsChanged { epoch: 1, .. }).then_some(()))
        .await;
    let session = link.send(GetStatus).await.unwrap().session.unwrap();
    assert_eq!(
        (session.info.kind, session.info.ordered),
        (TransportKind::WebSocket, true)
    );

    let call = actix::spawn(link.send(CallTool::new("play")));
    let req = peer.expect_next("tools/call").await;
    peer.reply(&req, json!({"content": [{"type": "text", "text": "ok"}]}))
        .await;
    assert_eq!(call.await.unwrap().unwrap(), Ok(CallToolResult::text("ok")));

    drop(peer);
    events
        .until(|e| matches!(e, LinkEvent::Disconnected { epoch: 1, .. }).then_some(()))
        .await;
    let mut peer = support::from_connection(listener.accept().await.expect("the host reconnects"));
    peer.serve_mcpl_handshake(json!([])).await;
    events
        .until(|e| matches!(e, LinkEvent::Connected { epoch: 2, .. }).then_some(()))
        .await;
}
