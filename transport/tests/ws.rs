//! WebSocket: our client against our server on 127.0.0.1, and raw tungstenite peers for
//! what our client never does (bad origins, malformed and binary frames, silence).

use crate::support;

use futures_util::{FutureExt, SinkExt, StreamExt};
use mcpl_protocol::Id;
use mcpl_protocol::jsonrpc::DecodeError;
use mcpl_testkit::within_named;
use mcpl_transport::ws::{self, WsListener};
use mcpl_transport::{
    Connection, Inbound, Principal, ServerOptions, StreamId, TransportError, TransportKind,
};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use support::*;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message as Frame};

async fn listen(opts: ServerOptions) -> (WsListener, String) {
    let listener = ws::bind(loopback(), Arc::new(opts)).await.unwrap();
    let url = format!("ws://{}/mcp", listener.local_addr());
    (listener, url)
}

/// Our client, connected and accepted.
async fn linked(opts: ServerOptions, token: Option<&str>) -> (Connection, Connection) {
    let (mut listener, url) = listen(opts).await;
    let client = ws::connect(&url, &client_opts(token)).await.unwrap();
    let server = within_named("accept", listener.accept()).await.unwrap();
    (client, server)
}

type RawWs =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A raw tungstenite client presenting alice's token.
async fn raw(url: &str) -> RawWs {
    let mut req = url.into_client_request().unwrap();
    req.headers_mut()
        .insert("authorization", "Bearer s3cret".parse().unwrap());
    tokio_tungstenite::connect_async(req).await.unwrap().0
}

#[tokio::test]
async fn requests_responses_and_notifications_cross_both_ways() {
    let (mut client, mut server) = linked(server_opts(), Some("s3cret")).await;
    assert_eq!(
        server.info.principal,
        Some(Principal::Named("alice".into()))
    );
    assert_eq!(
        (server.info.kind, server.info.ordered),
        (TransportKind::WebSocket, true)
    );
    assert_eq!(
        (client.info.principal.clone(), client.info.ordered),
        (None, true)
    );

    assert_eq!(round_trip(&mut client, &mut server).await, StreamId(0));
    client
        .outbound
        .send(notification("from/client", json!({})))
        .await
        .unwrap();
    assert_eq!(next_notification(&mut server).await.1.method, "from/client");
}

#[tokio::test]
async fn bearer_tokens_are_checked_at_the_upgrade() {
    let (mut listener, url) = listen(server_opts()).await;
    let bad = ws::connect(&url, &client_opts(Some("wrong")))
        .await
        .unwrap_err();
    assert!(matches!(bad, TransportError::Unauthorized), "{bad:?}");
    let missing = ws::connect(&url, &client_opts(None)).await.unwrap_err();
    assert!(
        matches!(missing, TransportError::Unauthorized),
        "{missing:?}"
    );
    // A raw peer sees the status itself, and the challenge.
    let mut req = url.as_str().into_client_request().unwrap();
    req.headers_mut()
        .insert("authorization", "Bearer wrong".parse().unwrap());
    match tokio_tungstenite::connect_async(req).await {
        Err(WsError::Http(resp)) => {
            assert_eq!(resp.status().as_u16(), 401);
            assert_eq!(resp.headers()["www-authenticate"], "Bearer");
        }
        other => panic!("expected a 401, got {other:?}"),
    }

    // The refused attempts were answered before they returned, so had any of them become a
    // connection it would be queued ahead of this one: the next accepted is bob's.
    let _bob = ws::connect(&url, &client_opts(Some("t0ken")))
        .await
        .unwrap();
    let server = within_named("accept", listener.accept()).await.unwrap();
    assert_eq!(server.info.principal, Some(Principal::Named("bob".into())));
    assert!(
        listener.accept().now_or_never().is_none(),
        "a refused upgrade became a connection"
    );

    let (_client, server) = linked(
        ServerOptions {
            allow_anonymous: true,
            ..server_opts()
        },
        None,
    )
    .await;
    assert!(matches!(
        server.info.principal,
        Some(Principal::Anonymous(_))
    ));
}

#[tokio::test]
async fn a_foreign_origin_is_refused_with_403() {
    let (mut listener, url) = listen(server_opts()).await;
    let mut req = url.as_str().into_client_request().unwrap();
    req.headers_mut()
        .insert("authorization", "Bearer s3cret".parse().unwrap());
    req.headers_mut()
        .insert("origin", "http://evil.example".parse().unwrap());
    match tokio_tungstenite::connect_async(req).await {
        Err(WsError::Http(resp)) => assert_eq!(resp.status().as_u16(), 403),
        other => panic!("expected a 403, got {other:?}"),
    }
    let mut req = url.as_str().into_client_request().unwrap();
    req.headers_mut()
        .insert("authorization", "Bearer s3cret".parse().unwrap());
    req.headers_mut()
        .insert("origin", "http://localhost:3000".parse().unwrap());
    let _ok = tokio_tungstenite::connect_async(req).await.unwrap();
    assert!(within_named("accept", listener.accept()).await.is_some());
}

#[tokio::test]
async fn oversized_messages_are_refused_by_either_end_and_the_link_goes_on() {
    let opts = ServerOptions {
        max_message_size: 1024,
        ..server_opts()
    };
    let (mut listener, url) = listen(opts).await;
    let client_opts = mcpl_transport::ClientOptions {
        max_message_size: 1024,
        ..client_opts(Some("s3cret"))
    };
    let mut client = ws::connect(&url, &client_opts).await.unwrap();
    let mut server = within_named("accept", listener.accept()).await.unwrap();

    client
        .outbound
        .send(request(1, "big", json!({"pad": filler(2000)})))
        .await
        .unwrap();
    match next(&mut server).await {
        Inbound::TooLarge { size, limit, .. } => assert!(size > 2000 && limit == 1024),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    client
        .outbound
        .send(request(2, "small", json!({})))
        .await
        .unwrap();
    assert_eq!(next_request(&mut server).await.1.id, Id::Number(2));

    server
        .outbound
        .send(notification("big", json!({"pad": filler(2000)})))
        .await
        .unwrap();
    assert!(matches!(
        next(&mut client).await,
        Inbound::TooLarge { limit: 1024, .. }
    ));
    server
        .outbound
        .send(notification("small", json!({})))
        .await
        .unwrap();
    assert_eq!(next_notification(&mut client).await.1.method, "small");
}

#[tokio::test]
async fn a_message_past_the_hard_ceiling_closes_the_link_with_1009() {
    let opts = ServerOptions {
        max_message_size: 1024,
        ..server_opts()
    };
    let (mut listener, url) = listen(opts).await;
    let mut peer = raw(&url).await;
    let mut server = within_named("accept", listener.accept()).await.unwrap();
    peer.send(Frame::text(filler(1024 * ws::HARD_CEILING_FACTOR + 1)))
        .await
        .unwrap();
    expect_closed(&mut server).await;
    loop {
        match within_named("the close frame", peer.next()).await {
            Some(Ok(Frame::Close(Some(frame)))) => {
                assert_eq!(frame.code, CloseCode::Size);
                break;
            }
            Some(Ok(_)) => continue,
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn malformed_text_and_binary_frames_are_reported_and_the_link_goes_on() {
    let (mut listener, url) = listen(server_opts()).await;
    let mut peer = raw(&url).await;
    let mut server = within_named("accept", listener.accept()).await.unwrap();
    peer.send(Frame::text("{not json")).await.unwrap();
    peer.send(Frame::text(r#"{"jsonrpc":"2.0","id":4,"method":7}"#))
        .await
        .unwrap();
    peer.send(Frame::binary(
        request(5, "ping", json!({})).encode().into_bytes(),
    ))
    .await
    .unwrap();
    peer.send(Frame::text(request(6, "ping", json!({})).encode()))
        .await
        .unwrap();
    assert!(matches!(
        next(&mut server).await,
        Inbound::Malformed {
            error: DecodeError::Parse(_),
            ..
        }
    ));
    match next(&mut server).await {
        Inbound::Malformed {
            error: DecodeError::Invalid { id, .. },
            ..
        } => assert_eq!(id, Some(Id::Number(4))),
        other => panic!("expected an invalid request, got {other:?}"),
    }
    assert!(matches!(
        next(&mut server).await,
        Inbound::Malformed {
            error: DecodeError::Parse(_),
            ..
        }
    ));
    assert_eq!(next_request(&mut server).await.1.id, Id::Number(6));
}

#[tokio::test]
async fn dropping_either_end_closes_the_others_inbound() {
    let (client, mut server) = linked(server_opts(), Some("s3cret")).await;
    drop(client);
    expect_closed(&mut server).await;

    let (mut client, server) = linked(server_opts(), Some("s3cret")).await;
    drop(server);
    expect_closed(&mut client).await;
    let closed = client.outbound.send(notification("late", json!({}))).await;
    assert!(matches!(closed, Err(TransportError::Closed)), "{closed:?}");
}

#[tokio::test]
async fn the_server_pings_and_keeps_a_peer_that_answers() {
    let opts = ServerOptions {
        ws_ping_interval: Some(Duration::from_millis(50)),
        ..server_opts()
    };
    let (mut listener, url) = listen(opts).await;
    let mut peer = raw(&url).await;
    let mut server = within_named("accept", listener.accept()).await.unwrap();
    // The server's consumer waits for the next message throughout, as a session does, so
    // the check is live: the pongs are what keep the link.
    let (_, (_, got)) = tokio::join!(
        async {
            answer_pings(&mut peer, 4).await;
            send_still_here(&mut peer).await;
        },
        next_request(&mut server)
    );
    assert_eq!(got.method, "still/here");
}

/// Reads `n` pings on a raw peer; reading lets tungstenite answer each with a pong.
async fn answer_pings(peer: &mut RawWs, n: usize) {
    for _ in 0..n {
        match within_named("a ping", peer.next()).await {
            Some(Ok(Frame::Ping(_))) => {}
            other => panic!("expected a ping, got {other:?}"),
        }
    }
}

/// A request the server can only read if it kept the link.
async fn send_still_here(peer: &mut RawWs) {
    peer.send(Frame::text(request(1, "still/here", json!({})).encode()))
        .await
        .unwrap();
}

#[tokio::test]
async fn the_server_closes_a_peer_that_stops_answering_pings() {
    let opts = ServerOptions {
        ws_ping_interval: Some(Duration::from_millis(50)),
        ..server_opts()
    };
    let (mut listener, url) = listen(opts).await;
    // Never read: no pong is ever sent.
    let _silent = raw(&url).await;
    let mut server = within_named("accept", listener.accept()).await.unwrap();
    expect_closed(&mut server).await;
}

#[tokio::test]
async fn with_no_limit_configured_both_ends_refuse_past_4_mib_and_take_exactly_4_mib() {
    // Neither end sets `max_message_size`: the defaults apply.
    let (mut client, mut server) = linked(server_opts(), Some("s3cret")).await;
    // One byte over is refused as TooLarge, well under tungstenite's ceiling (which would
    // close the link with 1009 instead).
    const { assert!(FOUR_MIB + 1 < FOUR_MIB * ws::HARD_CEILING_FACTOR) };
    limit_is_inclusive(&client, &mut server, FOUR_MIB).await;
    limit_is_inclusive(&server, &mut client, FOUR_MIB).await;
}

/// Reads frames until a close frame, which it returns; fails if the stream ends first.
async fn close_frame_of<S>(peer: &mut tokio_tungstenite::WebSocketStream<S>) -> CloseFrame
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    loop {
        match within_named("the close frame", peer.next()).await {
            Some(Ok(Frame::Close(Some(frame)))) => return frame,
            Some(Ok(_)) => continue,
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
}

/// Asserts the peer's stream ends (after the close handshake) with no more frames.
async fn expect_raw_end<S>(peer: &mut tokio_tungstenite::WebSocketStream<S>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    match within_named("the end of the stream", peer.next()).await {
        None | Some(Err(WsError::ConnectionClosed)) => {}
        other => panic!("expected the stream to end, got {other:?}"),
    }
}

#[tokio::test]
async fn dropping_the_server_connection_sends_a_normal_close_1000() {
    let (mut listener, url) = listen(server_opts()).await;
    let mut peer = raw(&url).await;
    let server = within_named("accept", listener.accept()).await.unwrap();
    drop(server);
    assert_eq!(close_frame_of(&mut peer).await.code, CloseCode::Normal);
    expect_raw_end(&mut peer).await;
}

#[tokio::test]
async fn dropping_the_client_connection_sends_a_normal_close_1000() {
    let tcp = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let url = format!("ws://{}/mcp", tcp.local_addr().unwrap());
    let client = tokio::spawn(async move { ws::connect(&url, &client_opts(None)).await });
    let (stream, _) = within_named("a TCP connection", tcp.accept())
        .await
        .unwrap();
    let mut peer = tokio_tungstenite::accept_async(stream).await.unwrap();
    let client = within_named("the client", client).await.unwrap().unwrap();
    drop(client);
    assert_eq!(close_frame_of(&mut peer).await.code, CloseCode::Normal);
    expect_raw_end(&mut peer).await;
}

/// A WebSocket peer on a bare TCP stream: it does the upgrade by hand and then only reads,
/// so no pong is ever sent, whatever it reads.
struct DeafPeer {
    tcp: tokio::io::BufReader<tokio::net::TcpStream>,
}

impl DeafPeer {
    async fn connect(addr: std::net::SocketAddr, token: &str) -> DeafPeer {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let upgrade = format!(
            "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
             Authorization: Bearer {token}\r\n\r\n"
        );
        tcp.write_all(upgrade.as_bytes()).await.unwrap();
        let mut tcp = tokio::io::BufReader::new(tcp);
        let mut status = String::new();
        within_named("the upgrade", tcp.read_line(&mut status))
            .await
            .unwrap();
        assert!(status.starts_with("HTTP/1.1 101"), "{status:?}");
        loop {
            let mut line = String::new();
            within_named("the upgrade headers", tcp.read_line(&mut line))
                .await
                .unwrap();
            if line == "\r\n" {
                return DeafPeer { tcp };
            }
        }
    }

    /// The next frame's opcode and payload (server frames are unmasked); `None` at the end
    /// of the TCP stream.
    async fn frame(&mut self) -> Option<(u8, Vec<u8>)> {
        self.frame_fin()
            .await
            .map(|(_, opcode, payload)| (opcode, payload))
    }

    /// The next message's opcode and payload, its fragments joined (a message longer than
    /// `ws::FRAGMENT` comes in several, RFC 6455 §5.4).
    async fn message(&mut self) -> Option<(u8, Vec<u8>)> {
        let (mut fin, opcode, mut payload) = self.frame_fin().await?;
        while !fin {
            let (last, continuation, more) = self.frame_fin().await?;
            assert_eq!(continuation, 0x0, "a continuation frame");
            payload.extend_from_slice(&more);
            fin = last;
        }
        Some((opcode, payload))
    }

    /// The next frame's FIN bit, opcode and payload.
    async fn frame_fin(&mut self) -> Option<(bool, u8, Vec<u8>)> {
        use tokio::io::AsyncReadExt;
        let mut head = [0u8; 2];
        match within_named("a frame", self.tcp.read_exact(&mut head)).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return None,
            Err(e) => panic!("reading a frame: {e}"),
        }
        assert_eq!(head[1] & 0x80, 0, "a server frame must not be masked");
        let len = match head[1] & 0x7f {
            126 => usize::from(self.tcp.read_u16().await.unwrap()),
            127 => usize::try_from(self.tcp.read_u64().await.unwrap()).unwrap(),
            n => usize::from(n),
        };
        let mut payload = vec![0; len];
        self.tcp.read_exact(&mut payload).await.unwrap();
        Some((head[0] & 0x80 != 0, head[0] & 0x0f, payload))
    }
}

#[tokio::test]
async fn a_peer_that_never_answers_pings_is_sent_a_policy_close_1008_before_the_end() {
    const PING: u8 = 0x9;
    const CLOSE: u8 = 0x8;
    // The interval is real time, but nothing here waits for time to pass: each step awaits
    // the frame or the closing it causes.
    let opts = ServerOptions {
        ws_ping_interval: Some(Duration::from_millis(50)),
        ..server_opts()
    };
    let (mut listener, _) = listen(opts).await;
    let mut peer = DeafPeer::connect(listener.local_addr(), "s3cret").await;
    let mut server = within_named("accept", listener.accept()).await.unwrap();
    // The server's consumer waits for the next message, as a session does: the check
    // blames the peer only then (`ServerOptions::ws_ping_interval`).
    let reading = tokio::spawn(async move { expect_closed(&mut server).await });

    let mut pings = 0;
    let code = loop {
        match peer.frame().await {
            Some((PING, _)) => pings += 1,
            Some((CLOSE, payload)) => break u16::from_be_bytes([payload[0], payload[1]]),
            other => panic!("expected a ping or a close, got {other:?}"),
        }
        assert!(pings < 100, "still pinged after {pings} unanswered pings");
    };
    assert!(pings >= 1, "the close came before any ping");
    assert_eq!(code, u16::from(CloseCode::Policy));
    assert_eq!(
        peer.frame().await,
        None,
        "the connection ends after the close"
    );
    within_named("the consumer to see the end", reading)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_consumer_that_stops_reading_is_not_taken_for_a_silent_peer() {
    // The consumer asks once and then reads nothing for many intervals, while the peer
    // answers every ping: its pongs wait unread on the socket, which is the consumer's
    // doing, not the peer's — the link stays.
    let opts = ServerOptions {
        ws_ping_interval: Some(Duration::from_millis(20)),
        ..server_opts()
    };
    let (mut listener, url) = listen(opts).await;
    let mut peer = raw(&url).await;
    let mut server = within_named("accept", listener.accept()).await.unwrap();
    assert!(
        server.inbound.recv().now_or_never().is_none(),
        "nothing was sent yet"
    );
    answer_pings(&mut peer, 10).await;
    send_still_here(&mut peer).await;
    assert_eq!(next_request(&mut server).await.1.method, "still/here");
}

#[tokio::test]
async fn a_consumer_that_drops_its_reading_end_still_hears_the_close() {
    // Nothing reads the server's link any more, yet the socket is read on: the peer's
    // close is answered, and the server's write side learns the link is gone.
    let (mut listener, url) = listen(server_opts()).await;
    let mut peer = raw(&url).await;
    let server = within_named("accept", listener.accept()).await.unwrap();
    let Connection {
        outbound, inbound, ..
    } = server;
    drop(inbound);
    peer.send(Frame::text(request(1, "unread", json!({})).encode()))
        .await
        .unwrap();
    peer.close(None).await.unwrap();
    // The server answers the close (only a reader does: a link nobody read would just drop
    // TCP), and then drops TCP, which it does only once its reader and its writer have both
    // ended.
    let mut answered = false;
    loop {
        match within_named("the end of the link", peer.next()).await {
            Some(Ok(Frame::Close(_))) => answered = true,
            None | Some(Err(WsError::ConnectionClosed)) => break,
            other => panic!("expected the close's answer and the end, got {other:?}"),
        }
    }
    assert!(answered, "the server's answer to the close");
    let late = outbound.send(notification("late", json!({}))).await;
    assert!(matches!(late, Err(TransportError::Closed)), "{late:?}");
}

/// A raw client without a token, its TCP end bound to `from`; the upgrade's outcome.
async fn anonymous_from(
    url: &str,
    from: &str,
) -> Result<tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>, u16> {
    let server: std::net::SocketAddr = url
        .trim_start_matches("ws://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket
        .bind(std::net::SocketAddr::new(from.parse().unwrap(), 0))
        .unwrap();
    let tcp = socket.connect(server).await.unwrap();
    let req = url.into_client_request().unwrap();
    match tokio_tungstenite::client_async(req, tcp).await {
        Ok((ws, _)) => Ok(ws),
        Err(WsError::Http(resp)) => Err(resp.status().as_u16()),
        Err(other) => panic!("the upgrade failed: {other:?}"),
    }
}

/// Item 5 of the issue on hardening: each anonymous connection is a principal of its own,
/// so one address holds at most `anonymous_per_source` of them (429 past it); another
/// address has its own count.
#[tokio::test]
async fn hardening_05_anonymous_connections_are_capped_per_address() {
    let (mut listener, url) = listen(ServerOptions {
        allow_anonymous: true,
        anonymous_per_source: 2,
        ..server_opts()
    })
    .await;
    let _a = anonymous_from(&url, "127.0.0.1").await.unwrap();
    let _b = anonymous_from(&url, "127.0.0.1").await.unwrap();
    assert_eq!(anonymous_from(&url, "127.0.0.1").await.err(), Some(429));
    let _c = anonymous_from(&url, "127.0.0.2").await.unwrap();
    // A named principal is not counted.
    let _named = raw(&url).await;
    for _ in 0..4 {
        assert!(within_named("accept", listener.accept()).await.is_some());
    }
}

/// Item 4: bound to loopback, an upgrade naming another host is refused with 403.
#[tokio::test]
async fn hardening_04_an_upgrade_for_another_host_is_refused_on_loopback() {
    let (_listener, url) = listen(server_opts()).await;
    let mut req = url.as_str().into_client_request().unwrap();
    req.headers_mut()
        .insert("authorization", "Bearer s3cret".parse().unwrap());
    req.headers_mut()
        .insert("host", "evil.example".parse().unwrap());
    match tokio_tungstenite::connect_async(req).await {
        Err(WsError::Http(resp)) => assert_eq!(resp.status().as_u16(), 403),
        other => panic!("expected a 403, got {other:?}"),
    }
}

/// Item 6: a text frame that is not UTF-8 fails the connection with close code 1007
/// (RFC 6455 §8.1), said to the peer rather than a dropped TCP connection.
#[tokio::test]
async fn hardening_06_a_text_frame_that_is_not_utf8_closes_with_1007() {
    use tokio_tungstenite::tungstenite::protocol::frame::Frame as RawFrame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    let (mut listener, url) = listen(server_opts()).await;
    let mut peer = raw(&url).await;
    let mut server = within_named("accept", listener.accept()).await.unwrap();
    let bad = RawFrame::message(vec![0xff, 0xfe, b'{'], OpCode::Data(Data::Text), true);
    peer.send(Frame::Frame(bad)).await.unwrap();
    // The server reads as its consumer asks (`Incoming`): the frame is seen when it does.
    expect_closed(&mut server).await;
    assert_eq!(close_frame_of(&mut peer).await.code, CloseCode::Invalid);
}

/// `ServerOptions::local_tasks`: the listener's tasks run on the binding `LocalSet`, and a
/// connection behaves as on the runtime's scheduler — messages both ways, a silent peer
/// closed by the ping check (the writer stopping the reader), a dropped connection closed
/// with 1000.
#[tokio::test]
async fn a_listener_with_local_tasks_serves_from_its_local_set() {
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            let opts = ServerOptions {
                local_tasks: true,
                ws_ping_interval: Some(Duration::from_millis(50)),
                ..server_opts()
            };
            let (mut listener, url) = listen(opts).await;
            let mut client = ws::connect(&url, &client_opts(Some("s3cret")))
                .await
                .unwrap();
            let mut server = within_named("accept", listener.accept()).await.unwrap();
            round_trip(&mut client, &mut server).await;

            // Never read: no pong is ever sent, and the server gives the link up.
            let _silent = raw(&url).await;
            let mut deaf = within_named("accept", listener.accept()).await.unwrap();
            expect_closed(&mut deaf).await;

            let mut peer = raw(&url).await;
            let dropped = within_named("accept", listener.accept()).await.unwrap();
            drop(dropped);
            assert_eq!(close_frame_of(&mut peer).await.code, CloseCode::Normal);
        })
        .await;
}

/// A peer that stops reading: what is sent is written as it comes until the socket is
/// full, then waits in the link's queue; a full queue refuses `try_send` with
/// `Backpressure`, and `send` waits for room, which the peer's reading makes. Every
/// message arrives once, in the order sent, whether it was written in the sender's turn
/// or by the writer task.
#[tokio::test]
async fn a_peer_that_stops_reading_fills_the_queue_and_send_waits_for_room_in_order() {
    const TEXT: u8 = 0x1;
    let (mut listener, _) = listen(server_opts()).await;
    let mut peer = DeafPeer::connect(listener.local_addr(), "s3cret").await;
    let server = within_named("accept", listener.accept()).await.unwrap();
    let numbered = |n: u64| notification("n", json!({"n": n, "pad": filler(4096)}));

    let mut sent = 0;
    loop {
        match server.outbound.try_send(numbered(sent)) {
            Ok(()) => sent += 1,
            Err(TransportError::Backpressure) => break,
            Err(e) => panic!("message {sent}: {e}"),
        }
        // Kernel buffers and the queue hold a few thousand of these; far more means the
        // queue is not bounded.
        assert!(sent < 100_000, "the queue never filled");
    }
    assert!(
        sent > ws::DEPTH as u64,
        "{sent} sent before the queue filled"
    );

    let mut late = Box::pin(server.outbound.send(numbered(sent)));
    assert!(
        (&mut late).now_or_never().is_none(),
        "send waits while the queue is full"
    );
    let expected = sent + 1;
    let reading = tokio::spawn(async move {
        for n in 0..expected {
            let (opcode, payload) = peer.message().await.expect("the link stays open");
            assert_eq!(opcode, TEXT);
            let got: serde_json::Value = serde_json::from_slice(&payload).unwrap();
            assert_eq!(got["params"]["n"], n, "out of order");
        }
        peer
    });
    within_named("room for the late message", late)
        .await
        .unwrap();
    let _peer = within_named("every message read", reading).await.unwrap();
}
