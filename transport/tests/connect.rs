//! `connect(url)`: the scheme picks the transport; nonsense is refused (TLS schemes are in
//! `tls.rs`).

use crate::support;

use mcpl_testkit::within_named;
use mcpl_transport::{
    ClientOptions, ServerOptions, TransportError, TransportKind, connect, http, ws,
};
use serde_json::json;
use std::sync::Arc;
use support::*;

const ECHO: &str = env!("CARGO_BIN_EXE_mcpl-transport-echo");

#[tokio::test]
async fn unknown_urls_are_bad_urls() {
    for url in ["ftp://x", "mcp", "stdio:", "stdio:'unterminated"] {
        match connect(url, &ClientOptions::default()).await {
            Err(TransportError::BadUrl { url: u, .. }) => assert_eq!(u, url),
            other => panic!("{url}: expected BadUrl, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn stdio_urls_spawn_the_command_split_like_a_shell() {
    // The quoted principal reaches the child as one argument.
    let mut child = connect(
        &format!("stdio:{ECHO} --principal 'a b'"),
        &ClientOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(child.info.kind, TransportKind::Stdio);
    child
        .outbound
        .send(request(1, "whoami", json!({})))
        .await
        .unwrap();
    assert_eq!(
        next_response(&mut child).await.1.result_value(),
        Ok(json!({"principal": "a b", "ordered": true}))
    );
}

#[tokio::test]
async fn ws_and_http_urls_reach_their_listeners() {
    let mut wl = ws::bind(loopback(), Arc::new(server_opts())).await.unwrap();
    let client = connect(
        &format!("ws://{}/", wl.local_addr()),
        &client_opts(Some("s3cret")),
    )
    .await
    .unwrap();
    assert_eq!(client.info.kind, TransportKind::WebSocket);
    assert!(within_named("accept", wl.accept()).await.is_some());

    let opts = Arc::new(ServerOptions {
        allow_anonymous: true,
        ..server_opts()
    });
    let mut hl = http::bind(loopback(), "/mcp", opts).await.unwrap();
    let client = connect(
        &format!("http://{}/mcp", hl.local_addr()),
        &ClientOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        (client.info.kind, client.info.ordered),
        (TransportKind::StreamableHttp, false)
    );
    client.outbound.send(initialize(0)).await.unwrap();
    assert!(within_named("accept", hl.accept()).await.is_some());
}
