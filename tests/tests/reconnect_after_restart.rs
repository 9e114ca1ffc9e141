//! The host reconnects after the server process restarts: a real `mcpl-interop-server`
//! child over WebSocket is killed and started again on the same port; the link reports the
//! drop, backs off, reconnects on a new epoch, and calls work again. A call made while the
//! server is down fails at once with a clear error instead of hanging.

use actix::Actor;
use mcpl_host::link::{
    CallTool, Connector, EventSink, LinkConfig, LinkError, LinkEvent, ServerLink,
};
use mcpl_tests::interop::{Killed, started_listening};
use mcpl_transport::ClientOptions;
use serde_json::json;
use std::process::Command;
use std::time::Duration;
use tokio::sync::mpsc;

const SERVER: &str = env!("CARGO_BIN_EXE_mcpl-interop-server");

/// Starts the server on `addr` (port 0 picks one) and returns it (killed when dropped) with
/// the address it bound.
fn start_server(addr: &str) -> (Killed, String) {
    let mut command = Command::new(SERVER);
    command.args(["ws", addr]);
    started_listening(command)
}

async fn connected(rx: &mut mpsc::UnboundedReceiver<LinkEvent>) -> u64 {
    loop {
        match rx.recv().await.expect("the link reports") {
            LinkEvent::ToolsChanged { epoch, .. } => return epoch,
            _ => continue,
        }
    }
}

async fn echo(link: &actix::Addr<ServerLink>, text: &str) -> Result<String, LinkError> {
    let args = json!({ "text": text }).as_object().cloned().unwrap();
    link.send(CallTool::new("echo").with_arguments(args))
        .await
        .expect("the link answers")
        .map(|r| r.joined_text())
}

#[actix::test]
async fn the_host_reconnects_after_the_server_restarts() {
    let (server, addr) = start_server("127.0.0.1:0");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut config = LinkConfig::new(
        "restart",
        Connector::url(format!("ws://{addr}/"), ClientOptions::default()),
    )
    .with_subscriber(EventSink::Channel(tx));
    config.backoff.initial = Duration::from_millis(20);
    config.backoff.max = Duration::from_millis(200);
    config.backoff.seed = Some(7);
    let link = ServerLink::new(config).start();

    let first = connected(&mut rx).await;
    assert_eq!(echo(&link, "before").await.unwrap(), "before");

    drop(server);
    loop {
        if let LinkEvent::Disconnected { epoch, .. } = rx.recv().await.expect("the link reports") {
            assert_eq!(epoch, first);
            break;
        }
    }
    assert!(
        matches!(
            echo(&link, "while down").await,
            Err(LinkError::NotConnected { .. })
        ),
        "a call while the server is down fails at once"
    );

    let (_server, again) = start_server(&addr);
    assert_eq!(again, addr);
    let second = connected(&mut rx).await;
    assert!(second > first, "a new connection epoch");
    assert_eq!(echo(&link, "after").await.unwrap(), "after");
}
