//! stdio: both ends in-process over `tokio::io::duplex`, and a real child process (the
//! `mcpl-transport-echo` binary) behind `stdio::spawn`.

use crate::support;

use mcpl_protocol::jsonrpc::DecodeError;
use mcpl_protocol::{Id, Message};
use mcpl_testkit::within_named;
use mcpl_transport::{
    ClientOptions, Connection, ConnectionInfo, Inbound, Principal, StreamId, TransportError,
    TransportKind, stdio,
};
use serde_json::json;
use support::*;
use tokio::io::{AsyncWriteExt, DuplexStream};

const ECHO: &str = env!("CARGO_BIN_EXE_mcpl-transport-echo");

fn info(principal: Option<Principal>) -> ConnectionInfo {
    ConnectionInfo {
        kind: TransportKind::Stdio,
        ordered: true,
        principal,
        peer: "test".into(),
    }
}

/// A client and a server joined by two in-memory pipes.
fn linked(limit: usize) -> (Connection, Connection) {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let (cr, cw) = tokio::io::split(client_io);
    let (sr, sw) = tokio::io::split(server_io);
    let client = stdio::from_io(cr, cw, info(None), limit);
    let server = stdio::from_io(sr, sw, info(Some(Principal::Named("local".into()))), limit);
    (client, server)
}

/// A server end whose peer is raw bytes written by the test.
fn raw_server(limit: usize) -> (Connection, DuplexStream) {
    let (test_io, server_io) = tokio::io::duplex(64 * 1024);
    let (sr, sw) = tokio::io::split(server_io);
    (stdio::from_io(sr, sw, info(None), limit), test_io)
}

#[tokio::test]
async fn requests_responses_and_notifications_cross_both_ways() {
    let (mut client, mut server) = linked(1024);
    client
        .outbound
        .send(request(1, "echo", json!({"a": 1})))
        .await
        .unwrap();
    let (stream, req) = next_request(&mut server).await;
    assert_eq!(
        (stream, req.id.clone(), req.method.as_str()),
        (StreamId(0), Id::Number(1), "echo")
    );
    server.outbound.send(ok(1, json!({"b": 2}))).await.unwrap();
    let (_, resp) = next_response(&mut client).await;
    assert_eq!(resp.result_value(), Ok(json!({"b": 2})));

    server
        .outbound
        .send(notification("from/server", json!({})))
        .await
        .unwrap();
    client
        .outbound
        .send(notification("from/client", json!({})))
        .await
        .unwrap();
    assert_eq!(next_notification(&mut client).await.1.method, "from/server");
    assert_eq!(next_notification(&mut server).await.1.method, "from/client");
    assert!(client.info.ordered && client.info.kind == TransportKind::Stdio);
}

#[tokio::test]
async fn an_over_long_line_is_refused_and_the_link_goes_on() {
    let (mut server, mut peer) = raw_server(64);
    // The long line arrives in two writes, so the codec must skip across reads.
    peer.write_all(filler(100).as_bytes()).await.unwrap();
    peer.write_all(format!("{}\n", filler(100)).as_bytes())
        .await
        .unwrap();
    peer.write_all(format!("{}\n", request(7, "ping", json!({})).encode()).as_bytes())
        .await
        .unwrap();
    match next(&mut server).await {
        Inbound::TooLarge {
            stream,
            size,
            limit,
        } => {
            assert_eq!((stream, limit), (StreamId(0), 64));
            assert!(size > 64);
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert_eq!(next_request(&mut server).await.1.id, Id::Number(7));
}

#[tokio::test]
async fn malformed_lines_are_reported_and_empty_ones_skipped() {
    let (mut server, mut peer) = raw_server(1024);
    peer.write_all(b"{not json\n\n   \r\n{\"jsonrpc\":\"2.0\",\"id\":1}\n\xff\xfe\n")
        .await
        .unwrap();
    peer.write_all(format!("{}\r\n", request(2, "ping", json!({})).encode()).as_bytes())
        .await
        .unwrap();
    for expected in ["parse", "invalid", "parse"] {
        match (next(&mut server).await, expected) {
            (
                Inbound::Malformed {
                    error: DecodeError::Parse(_),
                    ..
                },
                "parse",
            ) => {}
            (
                Inbound::Malformed {
                    error: DecodeError::Invalid { .. },
                    ..
                },
                "invalid",
            ) => {}
            (other, _) => panic!("expected a {expected} error, got {other:?}"),
        }
    }
    assert_eq!(next_request(&mut server).await.1.id, Id::Number(2));
}

#[tokio::test]
async fn a_last_line_without_newline_is_read_at_eof_then_inbound_ends() {
    let (mut server, mut peer) = raw_server(1024);
    peer.write_all(request(3, "ping", json!({})).encode().as_bytes())
        .await
        .unwrap();
    drop(peer);
    assert_eq!(next_request(&mut server).await.1.id, Id::Number(3));
    expect_closed(&mut server).await;
}

#[tokio::test]
async fn dropping_either_end_closes_the_others_inbound() {
    let (client, mut server) = linked(1024);
    drop(client);
    expect_closed(&mut server).await;

    let (mut client, server) = linked(1024);
    drop(server);
    expect_closed(&mut client).await;
}

#[tokio::test]
async fn a_spawned_child_answers_and_notifies() {
    let mut child = stdio::spawn(
        ECHO,
        ["--principal", "bob"],
        stdio::NO_ENV,
        &ClientOptions::default(),
    )
    .unwrap();
    assert_eq!(
        (
            child.info.kind,
            child.info.ordered,
            child.info.principal.clone()
        ),
        (TransportKind::Stdio, true, None)
    );
    child
        .outbound
        .send(request(1, "tools/list", json!({"cursor": "c"})))
        .await
        .unwrap();
    let (_, resp) = next_response(&mut child).await;
    assert_eq!(
        resp.result_value(),
        Ok(json!({"method": "tools/list", "params": {"cursor": "c"}}))
    );

    child
        .outbound
        .send(notification("notify-me", json!({"n": 5})))
        .await
        .unwrap();
    let (_, note) = next_notification(&mut child).await;
    assert_eq!(
        (note.method.as_str(), note.params_value()),
        ("notified", Some(json!({"n": 5})))
    );

    // serve_stdio serves the configured principal.
    child
        .outbound
        .send(request(2, "whoami", json!({})))
        .await
        .unwrap();
    let (_, resp) = next_response(&mut child).await;
    assert_eq!(
        resp.result_value(),
        Ok(json!({"principal": "bob", "ordered": true}))
    );
}

#[tokio::test]
async fn oversized_messages_are_refused_by_either_end_and_the_link_goes_on() {
    // The child's limit is 256: it reports the refusal, then still answers.
    let mut child = stdio::spawn(
        ECHO,
        ["--max", "256"],
        stdio::NO_ENV,
        &ClientOptions::default(),
    )
    .unwrap();
    child
        .outbound
        .send(request(1, "big", json!({"pad": filler(1000)})))
        .await
        .unwrap();
    let (_, note) = next_notification(&mut child).await;
    assert_eq!(note.method, "too-large");
    assert_eq!(
        note.params_value()
            .as_ref()
            .and_then(|p| p.get("limit"))
            .cloned(),
        Some(json!(256))
    );
    child
        .outbound
        .send(request(2, "small", json!({})))
        .await
        .unwrap();
    assert_eq!(next_response(&mut child).await.1.id, Some(Id::Number(2)));

    // Our limit is 256: the child's echo of a large request is refused here.
    let opts = ClientOptions {
        max_message_size: 256,
        ..ClientOptions::default()
    };
    let mut child = stdio::spawn(ECHO, Vec::<String>::new(), stdio::NO_ENV, &opts).unwrap();
    child
        .outbound
        .send(request(1, "big", json!({"pad": filler(1000)})))
        .await
        .unwrap();
    assert!(matches!(
        next(&mut child).await,
        Inbound::TooLarge { limit: 256, .. }
    ));
    child
        .outbound
        .send(request(2, "small", json!({})))
        .await
        .unwrap();
    assert_eq!(next_response(&mut child).await.1.id, Some(Id::Number(2)));
}

#[tokio::test]
async fn closing_the_childs_stdin_ends_its_inbound_and_it_exits() {
    let child = stdio::spawn(
        ECHO,
        Vec::<String>::new(),
        stdio::NO_ENV,
        &ClientOptions::default(),
    )
    .unwrap();
    // Dropping every Outbound closes the child's stdin; the echo server sees its inbound
    // end, says so, and exits, which ends ours.
    let Connection {
        outbound,
        mut inbound,
        ..
    } = child;
    drop(outbound);
    match within_named("stdin-closed", inbound.recv()).await {
        Some(Inbound::Message {
            message: Message::Notification(n),
            ..
        }) => assert_eq!(n.method, "stdin-closed"),
        other => panic!("expected the stdin-closed notification, got {other:?}"),
    }
    assert!(
        within_named("the child to exit", inbound.recv())
            .await
            .is_none()
    );
}

#[tokio::test]
async fn a_child_that_exits_ends_the_inbound() {
    let mut child = stdio::spawn(
        ECHO,
        Vec::<String>::new(),
        stdio::NO_ENV,
        &ClientOptions::default(),
    )
    .unwrap();
    child
        .outbound
        .send(request(1, "exit", json!({})))
        .await
        .unwrap();
    expect_closed(&mut child).await;
}

#[tokio::test]
async fn a_program_that_cannot_start_is_an_error_naming_it() {
    let err = stdio::spawn(
        "/nonexistent/mcpl-no-such-program",
        ["x"],
        stdio::NO_ENV,
        &ClientOptions::default(),
    )
    .unwrap_err();
    // Issue #43: the program is named, not only "No such file or directory".
    assert!(
        matches!(&err, TransportError::Spawn { program, .. } if program == "/nonexistent/mcpl-no-such-program"),
        "{err:?}"
    );
    assert!(err.to_string().contains("no such file"), "{err}");
}

#[tokio::test]
async fn a_child_is_given_the_environment_it_is_spawned_with() {
    // A stand-in server that writes one message naming a variable's value.
    let script = r#"printf '{"jsonrpc":"2.0","method":"notifications/env","params":{"v":"%s"}}\n' "$MCPL_TEST_VAR""#;
    let mut conn = stdio::spawn(
        "sh",
        ["-c", script],
        [("MCPL_TEST_VAR", "from-the-config")],
        &ClientOptions::default(),
    )
    .expect("sh starts");
    let read = tokio::time::timeout(std::time::Duration::from_secs(30), conn.inbound.recv())
        .await
        .expect("the child writes")
        .expect("one message");
    let Inbound::Message {
        message: Message::Notification(n),
        ..
    } = read
    else {
        panic!("{read:?}");
    };
    assert_eq!(n.params_value(), Some(json!({"v": "from-the-config"})));
    // The variable is not in the connection's description (it may be a secret).
    assert!(
        !conn.info.peer.contains("from-the-config"),
        "{}",
        conn.info.peer
    );
}
