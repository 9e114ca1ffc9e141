//! The fault proxy (`mcpl_testkit::proxy`), one test a fault, on real loopback sockets.
//! Nothing sleeps: a test awaits the bytes or the end of a stream; where it must show that
//! nothing arrives (held bytes, a calm proxy) it runs on tokio's paused clock, whose time
//! moves on only when every task is idle.

use mcpl_testkit::proxy::{Direction, Faults, Frame, Proxy, Verdict};
use mcpl_testkit::within;
use mcpl_testkit::ws::{Listener, Peer};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// An upstream that writes `tag` to each connection, then echoes what it reads.
async fn echo(tag: &'static [u8]) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut c, _)) = listener.accept().await {
            tokio::spawn(async move {
                c.write_all(tag).await.unwrap();
                let (mut r, mut w) = c.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    addr
}

/// Reads exactly `n` bytes.
async fn read_n(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut got = vec![0u8; n];
    within(s.read_exact(&mut got)).await.unwrap();
    got
}

/// True once the stream has ended (a close or a reset), with no bytes before it.
async fn ended(s: &mut TcpStream) -> bool {
    let mut b = [0u8; 1];
    matches!(within(s.read(&mut b)).await, Ok(0) | Err(_))
}

#[tokio::test]
async fn issue38_06_bytes_pass_both_ways_and_a_half_close_passes() {
    let proxy = Proxy::start(echo(b"hi").await).await.unwrap();
    let mut c = TcpStream::connect(proxy.addr()).await.unwrap();
    assert_eq!(read_n(&mut c, 2).await, b"hi");
    c.write_all(b"ping").await.unwrap();
    assert_eq!(read_n(&mut c, 4).await, b"ping");
    // The client stops writing: the echo reads the end, stops, and the client reads it.
    c.shutdown().await.unwrap();
    assert!(ended(&mut c).await);
    assert_eq!(proxy.stats().accepted, 1);
}

#[tokio::test]
async fn issue38_06_cut_all_cuts_every_connection() {
    let proxy = Proxy::start(echo(b"").await).await.unwrap();
    let mut a = TcpStream::connect(proxy.addr()).await.unwrap();
    let mut b = TcpStream::connect(proxy.addr()).await.unwrap();
    for s in [&mut a, &mut b] {
        s.write_all(b"x").await.unwrap();
        assert_eq!(read_n(s, 1).await, b"x");
    }
    proxy.cut_all();
    assert!(ended(&mut a).await, "cut");
    assert!(ended(&mut b).await, "cut");
    assert_eq!(proxy.stats().mass_cuts, 2);
    // The proxy still accepts: a later connection passes.
    let mut c = TcpStream::connect(proxy.addr()).await.unwrap();
    c.write_all(b"y").await.unwrap();
    assert_eq!(read_n(&mut c, 1).await, b"y");
}

#[tokio::test]
async fn issue38_06_new_connections_go_to_the_new_upstream_and_old_ones_stay() {
    let proxy = Proxy::start(echo(b"A").await).await.unwrap();
    let mut old = TcpStream::connect(proxy.addr()).await.unwrap();
    assert_eq!(read_n(&mut old, 1).await, b"A");
    proxy.set_upstream(echo(b"B").await);
    let mut new = TcpStream::connect(proxy.addr()).await.unwrap();
    assert_eq!(read_n(&mut new, 1).await, b"B");
    old.write_all(b"still").await.unwrap();
    assert_eq!(read_n(&mut old, 5).await, b"still");
}

#[tokio::test]
async fn issue38_06_a_refused_upstream_closes_the_client() {
    let gone = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = gone.local_addr().unwrap();
    drop(gone);
    let proxy = Proxy::start(addr).await.unwrap();
    let mut c = TcpStream::connect(proxy.addr()).await.unwrap();
    assert!(ended(&mut c).await);
}

#[tokio::test(start_paused = true)]
async fn issue38_06_held_bytes_wait_for_the_release_while_the_client_still_writes() {
    let upstream = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = Proxy::start(upstream.local_addr().unwrap()).await.unwrap();
    let mut client = TcpStream::connect(proxy.addr()).await.unwrap();
    let (mut server, _) = within(upstream.accept()).await.unwrap();

    proxy.hold();
    server.write_all(b"held").await.unwrap();
    // The client's bytes still go up (and the proxy has seen the held bytes by then).
    client.write_all(b"up").await.unwrap();
    assert_eq!(read_n(&mut server, 2).await, b"up");
    let mut b = [0u8; 4];
    let early = tokio::time::timeout(Duration::from_secs(5), client.read(&mut b)).await;
    assert!(
        early.is_err(),
        "nothing reaches the client while held: {early:?}"
    );

    proxy.release();
    assert_eq!(read_n(&mut client, 4).await, b"held");
    server.write_all(b"more").await.unwrap();
    assert_eq!(read_n(&mut client, 4).await, b"more");
}

/// Connection 1 lives `life`; the others live for ever.
struct FirstLives(Duration);

impl Faults for FirstLives {
    fn lifetime(&self, conn: u64) -> Option<Duration> {
        (conn == 1).then_some(self.0)
    }
}

#[tokio::test(start_paused = true)]
async fn issue38_06_a_connection_is_cut_when_its_lifetime_runs_out() {
    let life = Duration::from_secs(20);
    let proxy = Proxy::start_with(echo(b"").await, FirstLives(life))
        .await
        .unwrap();
    let start = tokio::time::Instant::now();
    let mut first = TcpStream::connect(proxy.addr()).await.unwrap();
    let mut second = TcpStream::connect(proxy.addr()).await.unwrap();
    first.write_all(b"x").await.unwrap();
    assert_eq!(read_n(&mut first, 1).await, b"x");
    assert!(ended(&mut first).await);
    assert!(start.elapsed() >= life, "not before its lifetime");
    assert_eq!(proxy.stats().lifetime_cuts, 1);
    second.write_all(b"y").await.unwrap();
    assert_eq!(read_n(&mut second, 1).await, b"y", "the other lives on");
}

#[tokio::test(start_paused = true)]
async fn issue38_06_a_calm_proxy_cuts_nothing_for_its_age() {
    let proxy = Proxy::start_with(echo(b"").await, FirstLives(Duration::from_secs(20)))
        .await
        .unwrap();
    let mut first = TcpStream::connect(proxy.addr()).await.unwrap();
    first.write_all(b"x").await.unwrap();
    assert_eq!(read_n(&mut first, 1).await, b"x");
    proxy.calm();
    let mut b = [0u8; 1];
    let read = tokio::time::timeout(Duration::from_secs(60), first.read(&mut b)).await;
    assert!(read.is_err(), "still open past its lifetime: {read:?}");
    assert_eq!(proxy.stats().lifetime_cuts, 0);
}

/// Records the client's text frames; sends a server's text frame with "twice" in it
/// twice, and cuts at one with "cut" in it.
#[derive(Default)]
struct ByText {
    up: Mutex<Vec<String>>,
}

impl Faults for ByText {
    fn websocket(&self) -> bool {
        true
    }

    fn frame(&self, _conn: u64, direction: Direction, frame: &Frame<'_>) -> Verdict {
        let Some(text) = frame.text() else {
            return Verdict::Pass;
        };
        match direction {
            Direction::Up => {
                self.up.lock().unwrap().push(text.to_owned());
                Verdict::Pass
            }
            Direction::Down if text.contains("twice") => Verdict::Twice,
            Direction::Down if text.contains("cut") => Verdict::Cut,
            Direction::Down => Verdict::Pass,
        }
    }
}

#[tokio::test]
async fn issue38_06_websocket_frames_are_read_unmasked_sent_twice_or_cut_at() {
    let server = Listener::bind().await;
    let faults = Arc::new(ByText::default());
    let proxy = Proxy::start_with(server.addr(), faults.clone())
        .await
        .unwrap();
    let url = format!("ws://{}/mcp", proxy.addr());
    let (mut client, mut upstream) = tokio::join!(Peer::connect(&url, None), server.accept());

    client.send(json!({"n": 1})).await;
    assert_eq!(upstream.recv().await, json!({"n": 1}));
    assert_eq!(*faults.up.lock().unwrap(), [r#"{"n":1}"#], "unmasked");

    upstream.send(json!({"say": "once"})).await;
    upstream.send(json!({"say": "twice"})).await;
    assert_eq!(client.recv().await, json!({"say": "once"}));
    assert_eq!(client.recv().await, json!({"say": "twice"}));
    assert_eq!(client.recv().await, json!({"say": "twice"}));

    upstream.send(json!({"say": "cut"})).await;
    // Not delivered: the connection ends there, both ways.
    client.expect_closed().await;
    upstream.expect_closed().await;
    let stats = proxy.stats();
    assert_eq!((stats.duplicated, stats.frame_cuts), (1, 1));
}

/// A message sent in fragments (RFC 6455 §5.4; `mcpl-transport` sends any over 1 KiB so)
/// is judged whole: the faults see its text, joined, once (a control frame between its
/// fragments passes on its own), and it arrives whole.
#[tokio::test]
async fn a_fragmented_message_is_judged_whole() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::protocol::frame::Frame as WsFrame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};

    let server = Listener::bind().await;
    let faults = Arc::new(ByText::default());
    let proxy = Proxy::start_with(server.addr(), faults.clone())
        .await
        .unwrap();
    let url = format!("ws://{}/mcp", proxy.addr());
    let (client, mut upstream) = tokio::join!(
        async {
            tokio_tungstenite::connect_async(url.as_str())
                .await
                .unwrap()
                .0
        },
        server.accept()
    );
    let (mut sink, stream) = client.split();
    // Sends `text` in three fragments, a ping between the first two.
    let fragmented = |text: String| {
        let bytes = text.into_bytes();
        let third = bytes.len() / 3;
        vec![
            Message::Frame(WsFrame::message(
                bytes[..third].to_vec(),
                OpCode::Data(Data::Text),
                false,
            )),
            Message::Ping(Default::default()),
            Message::Frame(WsFrame::message(
                bytes[third..2 * third].to_vec(),
                OpCode::Data(Data::Continue),
                false,
            )),
            Message::Frame(WsFrame::message(
                bytes[2 * third..].to_vec(),
                OpCode::Data(Data::Continue),
                true,
            )),
        ]
    };
    let up = json!({"n": 2, "pad": "x".repeat(3000)});
    for frame in fragmented(up.to_string()) {
        sink.send(frame).await.unwrap();
    }
    assert_eq!(upstream.recv().await, up);
    assert_eq!(
        *faults.up.lock().unwrap(),
        [up.to_string()],
        "seen once, whole"
    );

    drop(stream);
}

/// Cuts the answers of the connections it is told, as each starts.
struct CutAnswers(Vec<u64>);

impl Faults for CutAnswers {
    fn answer(&self, conn: u64) -> Verdict {
        if self.0.contains(&conn) {
            Verdict::Cut
        } else {
            Verdict::Pass
        }
    }
}

/// Issue #40 item 5: an HTTP answer lost on its way — the server read the request and
/// answered, and the client reads the end of the stream instead, none of the answer.
#[tokio::test]
async fn issue40_an_http_answer_is_cut_as_it_starts() {
    // The echo's tag stands for an answer that starts as the connection does.
    let proxy = Proxy::start_with(echo(b"HTTP/1.1 200 OK\r\n\r\n").await, CutAnswers(vec![2]))
        .await
        .unwrap();
    let mut passed = TcpStream::connect(proxy.addr()).await.unwrap();
    assert_eq!(read_n(&mut passed, 19).await, b"HTTP/1.1 200 OK\r\n\r\n");
    let mut cut = TcpStream::connect(proxy.addr()).await.unwrap();
    assert!(ended(&mut cut).await);
    // Bytes that start no answer pass on the connection whose answer passed.
    passed.write_all(b"more").await.unwrap();
    assert_eq!(read_n(&mut passed, 4).await, b"more");
    assert_eq!(proxy.stats().answer_cuts, 1);
    // A calm proxy asks about no answer.
    proxy.calm();
    let proxy2 = Proxy::start_with(echo(b"HTTP/1.1 200 OK\r\n\r\n").await, CutAnswers(vec![1]))
        .await
        .unwrap();
    proxy2.calm();
    let mut c = TcpStream::connect(proxy2.addr()).await.unwrap();
    assert_eq!(read_n(&mut c, 19).await, b"HTTP/1.1 200 OK\r\n\r\n");
    assert_eq!(proxy2.stats().answer_cuts, 0);
}
