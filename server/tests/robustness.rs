//! What a peer can send wrong, and how a session ends: malformed and oversized input,
//! stray responses, the link closing with a push in flight.

use crate::support;

use mcpl_protocol::jsonrpc::ErrorCode;
use mcpl_server::{PushError, PushEvent, Server};
use mcpl_testkit::within;
use serde_json::json;
use support::{Client, TestClient, code, connect, connect_raw};

fn server() -> Server {
    Server::builder("test-server", "0.1.0").build().unwrap()
}

async fn ping_pong(client: &mut TestClient, id: i64) {
    let pong = client
        .exchange(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
        .await;
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
}

#[actix::test]
async fn malformed_json_is_a_parse_error_and_the_session_goes_on() {
    let (mut client, _session) = connect_raw(&server());
    client.handshake_plain().await;
    client
        .send_bytes(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ")
        .await;
    let reply = client.recv().await;
    assert_eq!(
        (reply["id"].clone(), code(&reply)),
        (json!(null), ErrorCode::PARSE_ERROR.0)
    );
    ping_pong(&mut client, 2).await;
}

#[actix::test]
async fn an_invalid_message_is_an_invalid_request_carrying_its_id() {
    let (mut client, _session) = connect_raw(&server());
    client
        .send_bytes(br#"{"jsonrpc": "1.0", "id": 7, "method": "ping"}"#)
        .await;
    let reply = client.recv().await;
    assert_eq!(
        (reply["id"].clone(), code(&reply)),
        (json!(7), ErrorCode::INVALID_REQUEST.0)
    );
    client
        .send_bytes(br#"[{"jsonrpc": "2.0", "id": 8, "method": "ping"}]"#)
        .await;
    let reply = client.recv().await;
    assert_eq!(
        (reply["id"].clone(), code(&reply)),
        (json!(null), ErrorCode::INVALID_REQUEST.0)
    );
    ping_pong(&mut client, 9).await;
}

#[actix::test]
async fn an_oversized_message_is_refused_with_a_null_id_and_the_session_goes_on() {
    let (mut client, _session) = connect_raw(&server());
    client.handshake_plain().await;
    client.send_too_large(5_000_000, 4_194_304).await;
    let reply = client.recv().await;
    assert_eq!(
        (reply["id"].clone(), code(&reply)),
        (json!(null), ErrorCode::INVALID_REQUEST.0)
    );
    ping_pong(&mut client, 1).await;
}

#[actix::test]
async fn responses_to_no_pending_request_are_ignored() {
    let (mut client, _session) = connect(&server());
    client.handshake_mcpl(false, &["tools", "pushEvents"]).await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 41, "result": {"accepted": true}}))
        .await;
    client
        .send(json!({"jsonrpc": "2.0", "id": "x", "error": {"code": -32601, "message": "no"}}))
        .await;
    client
        .send(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "bad"}}))
        .await;
    // Nothing answers them: the next message is the pong.
    ping_pong(&mut client, 1).await;
}

#[actix::test]
async fn when_the_link_closes_the_session_stops_and_pending_pushes_fail_closed() {
    let server = server();
    let (mut client, session) = connect(&server);
    client.handshake_mcpl(false, &["tools", "pushEvents"]).await;
    assert_eq!(server.session_count(), 1);
    let push = tokio::spawn({
        let session = session.clone();
        async move { session.push(PushEvent::text("hello")).await }
    });
    let request = client.recv().await;
    assert_eq!(request["method"], "push/event");
    let mut closed = client.close();
    assert_eq!(within(push).await.unwrap(), Err(PushError::Closed));
    // The server's side closes too, once the session has gone.
    assert_eq!(closed.try_recv().await, None);
    assert!(!session.is_open());
    assert_eq!(
        session.push(PushEvent::text("late")).await,
        Err(PushError::Closed)
    );
    assert!(session.status().await.is_err());
    assert_eq!(server.session_count(), 0);
}

#[actix::test]
async fn closing_a_session_from_the_server_side_ends_the_link() {
    let (client, session) = connect(&server());
    session.close();
    let mut client = client.close();
    assert_eq!(client.try_recv().await, None);
    assert!(!session.is_open());
}

#[actix::test]
async fn a_host_that_stops_reading_is_disconnected_rather_than_buffered_without_bound() {
    // The raw link's outbound queue holds 64 messages; the session writes straight into
    // it and never queues more on its own side.
    let (mut client, session) = connect_raw(&server());
    let mut sent = 0;
    while sent < 10_000
        && client
            .try_send(json!({"jsonrpc": "2.0", "id": sent, "method": "ping"}))
            .await
            .is_ok()
    {
        sent += 1;
    }
    assert!(
        sent < 10_000,
        "the session kept reading a host that never reads"
    );
    let mut closed = client.close();
    let mut pongs = 0;
    while closed.try_recv().await.is_some() {
        pongs += 1;
    }
    assert!((64..sent).contains(&pongs), "{pongs} of {sent}");
    assert!(!session.is_open());
}

#[actix::test]
async fn an_anonymous_principal_is_forgotten_with_its_last_connection() {
    tokio::time::pause();
    let server = server();
    let (client, conn) = mcpl_transport::memory::pair(mcpl_transport::Principal::anonymous(), true);
    let mut client = support::from_connection(client);
    server.serve(conn);
    client.handshake_plain().await;
    assert_eq!(server.principal_count(), 1);
    drop(client);
    support::forgotten(&server).await;
    assert_eq!((server.session_count(), server.principal_count()), (0, 0));
}
