//! Issue #41 item 4: tunnels, a long-lived byte stream carried between two nodes over a
//! real `nats-server` started by each test. Bytes go both ways in order and both ends
//! finish; a gap (a frame NATS dropped, forged here by a raw client) ends the tunnel and
//! closes both local streams; a peer that does not know the tunnel is found at the first
//! keepalive; an idle tunnel ends; the bounds refuse; a reader that does not read holds
//! its sender back to the window rather than anything buffering. Nothing sleeps: each
//! test awaits how the tunnels end, or their flow.

use bytes::Bytes;
use mcpl_cluster::bus::{BusConfig, BusError, NatsBus};
use mcpl_cluster::tunnel::{
    Ended, Frame, Tunnel, TunnelConfig, TunnelCounts, TunnelError, Tunnels, decode, encode,
};
use mcpl_testkit::nats::Nats;
use mcpl_testkit::within;
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, DuplexStream};
use tokio::task::JoinHandle;

async fn node(nats: &Nats, name: &str) -> NatsBus {
    NatsBus::connect(&nats.url(), BusConfig::new(name))
        .await
        .expect("the node connects")
}

/// Quick keepalives, so the tests that wait for one do not wait long.
fn quick() -> TunnelConfig {
    TunnelConfig {
        keepalive: Duration::from_millis(100),
        answer_within: Duration::from_secs(5),
        ..TunnelConfig::default()
    }
}

/// Runs `tunnel` on one end of a duplex pipe of `capacity` bytes; the other end, for the
/// test, and the run's task.
fn run(tunnel: Tunnel, capacity: usize) -> (DuplexStream, JoinHandle<Ended>) {
    let (near, far) = tokio::io::duplex(capacity);
    let task = tokio::spawn(tunnel.run(far, std::future::pending()));
    (near, task)
}

/// `b` accepts the next tunnel opened to it (its kind and first bytes checked), `a`
/// opens it: a's tunnel and b's.
async fn pair(a: &Tunnels, b: &Tunnels, b_bus: &NatsBus) -> (Tunnel, Tunnel) {
    let b_name = b_bus.node().to_owned();
    let mut opens = b.opens().await.unwrap();
    // NATS has b's subscription before a asks.
    within(b_bus.flush()).await.unwrap();
    let accepted = tokio::spawn(async move {
        let open = opens.next().await.expect("an open");
        assert_eq!(open.kind(), "ws");
        assert_eq!(&open.first()[..], b"GET / HTTP/1.1\r\n\r\n");
        open.accept().await.expect("accepted")
    });
    let opened = within(a.open(&b_name, "ws", Bytes::from_static(b"GET / HTTP/1.1\r\n\r\n")))
        .await
        .expect("opened");
    let accepted = within(accepted).await.unwrap();
    assert_eq!(opened.id(), accepted.id());
    (opened, accepted)
}

#[test]
fn issue41_04_frames_come_back_as_sent_and_others_are_refused() {
    let frames = [
        Frame::Data {
            seq: 7,
            bytes: Bytes::from_static(b"\x00bytes\n"),
        },
        Frame::Data {
            seq: 0,
            bytes: Bytes::new(),
        },
        Frame::Ack {
            seq: u64::MAX,
            frames: 3,
            bytes: 4096,
        },
        Frame::Eof { seq: 2 },
        Frame::Close {
            seq: 9,
            reason: "a gap".to_owned(),
        },
        Frame::Ping { sent: 12 },
        Frame::Pong,
    ];
    for f in frames {
        assert_eq!(decode(&encode(&f)), Ok(f.clone()), "{f:?}");
    }
    // A long reason is cut at a character's boundary.
    let long = Frame::Close {
        seq: 1,
        reason: "é".repeat(400),
    };
    let Ok(Frame::Close { reason, .. }) = decode(&encode(&long)) else {
        panic!("a close");
    };
    assert_eq!(reason, "é".repeat(256));
    for bad in [
        &b""[..],
        b"X00000000",
        b"D0123",
        b"A00000000",
        b"E000000000",
        b"Q!",
        b"P0000000",
    ] {
        assert!(decode(&Bytes::copy_from_slice(bad)).is_err(), "{bad:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_04_bytes_go_both_ways_in_order_and_both_ends_finish() {
    let nats = Nats::start().expect("nats-server starts");
    let (a, b) = (node(&nats, "a").await, node(&nats, "b").await);
    let small = TunnelConfig {
        chunk: 1000,
        window: 4000,
        ..quick()
    };
    let (ta, tb) = (Tunnels::new(&a, small.clone()), Tunnels::new(&b, small));
    let (opened, accepted) = pair(&ta, &tb, &b).await;
    assert_eq!((ta.live(), tb.live()), (1, 1));
    let (mut near_a, run_a) = run(opened, 512);
    let (mut near_b, run_b) = run(accepted, 512);

    // 100 000 bytes up (many frames, many windows), an answer down, then each end closes.
    let up: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let sent = up.clone();
    let writer = tokio::spawn(async move {
        near_a.write_all(&sent).await.unwrap();
        near_a
    });
    let mut got = vec![0u8; up.len()];
    within(near_b.read_exact(&mut got)).await.unwrap();
    assert!(got == up, "the bytes came in order");
    let mut near_a = within(writer).await.unwrap();
    within(near_b.write_all(b"answer")).await.unwrap();
    let mut answer = [0u8; 6];
    within(near_a.read_exact(&mut answer)).await.unwrap();
    assert_eq!(&answer, b"answer");
    near_a.shutdown().await.unwrap();
    // a's end of file reaches b's stream; b closes too.
    let mut rest = Vec::new();
    within(near_b.read_to_end(&mut rest)).await.unwrap();
    assert!(rest.is_empty());
    near_b.shutdown().await.unwrap();
    let mut rest = Vec::new();
    within(near_a.read_to_end(&mut rest)).await.unwrap();
    assert_eq!(within(run_a).await.unwrap(), Ended::Done);
    assert_eq!(within(run_b).await.unwrap(), Ended::Done);
    assert_eq!((ta.live(), tb.live()), (0, 0), "the places are given back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_04_a_gap_ends_the_tunnel_and_closes_both_local_streams() {
    let nats = Nats::start().expect("nats-server starts");
    let (a, b) = (node(&nats, "a").await, node(&nats, "b").await);
    let (ta, tb) = (Tunnels::new(&a, quick()), Tunnels::new(&b, quick()));
    let (opened, accepted) = pair(&ta, &tb, &b).await;
    let id = opened.id().to_owned();
    let (mut near_a, run_a) = run(opened, 4096);
    let (mut near_b, run_b) = run(accepted, 4096);
    within(near_a.write_all(b"one")).await.unwrap();
    let mut one = [0u8; 3];
    within(near_b.read_exact(&mut one)).await.unwrap();

    // Frame 1 is "lost": frame 5 comes instead (as if NATS dropped 1 to 4).
    let raw = async_nats::connect(nats.url()).await.unwrap();
    let forged = Frame::Data {
        seq: 5,
        bytes: Bytes::from_static(b"after a hole"),
    };
    raw.publish(format!("mcpl.t.{id}.up"), encode(&forged))
        .await
        .unwrap();
    raw.flush().await.unwrap();
    assert_eq!(
        within(run_b).await.unwrap(),
        Ended::Gap {
            expected: 1,
            got: 5
        }
    );
    let Ended::PeerClosed { reason } = within(run_a).await.unwrap() else {
        panic!("a is told");
    };
    assert!(reason.contains("frame 1 was missed"), "{reason}");
    // Both local streams are closed: end of file, nothing of the forged frame.
    let mut rest = Vec::new();
    within(near_b.read_to_end(&mut rest)).await.unwrap();
    assert!(rest.is_empty(), "{rest:?}");
    within(near_a.read_to_end(&mut rest)).await.unwrap();
    assert!(rest.is_empty(), "{rest:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_04_a_peer_that_does_not_know_the_tunnel_is_found_at_the_first_keepalive() {
    let nats = Nats::start().expect("nats-server starts");
    let (a, b) = (node(&nats, "a").await, node(&nats, "b").await);
    let (ta, tb) = (Tunnels::new(&a, quick()), Tunnels::new(&b, quick()));
    let (opened, accepted) = pair(&ta, &tb, &b).await;
    // b forgets the tunnel (as a node that died, or was started again, has).
    drop(accepted);
    let (mut near_a, run_a) = run(opened, 4096);
    assert_eq!(within(run_a).await.unwrap(), Ended::PeerGone);
    let mut rest = Vec::new();
    within(near_a.read_to_end(&mut rest)).await.unwrap();
    assert_eq!(ta.live(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_04_an_idle_tunnel_ends() {
    let nats = Nats::start().expect("nats-server starts");
    let (a, b) = (node(&nats, "a").await, node(&nats, "b").await);
    let idle = Duration::from_millis(400);
    let config = TunnelConfig { idle, ..quick() };
    let (ta, tb) = (Tunnels::new(&a, config.clone()), Tunnels::new(&b, config));
    let (opened, accepted) = pair(&ta, &tb, &b).await;
    let (mut near_a, run_a) = run(opened, 4096);
    let (_near_b, run_b) = run(accepted, 4096);
    let started = std::time::Instant::now();
    let (ea, eb) = (within(run_a).await.unwrap(), within(run_b).await.unwrap());
    // Whichever side's keepalive found it idle first closed it for both.
    let idled = Ended::Idle { after: idle };
    assert!(
        ea == idled || eb == idled,
        "one side ended it as idle: {ea:?} {eb:?}"
    );
    for e in [ea, eb] {
        assert!(
            e == idled
                || matches!(&e, Ended::PeerClosed { reason } if reason.contains("no data either way")),
            "{e:?}"
        );
    }
    assert!(started.elapsed() >= idle);
    let mut rest = Vec::new();
    within(near_a.read_to_end(&mut rest)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_04_the_bounds_refuse_past_them() {
    let nats = Nats::start().expect("nats-server starts");
    let (a, b) = (node(&nats, "a").await, node(&nats, "b").await);
    let one = TunnelConfig {
        max_tunnels: 1,
        ..quick()
    };
    // b holds one tunnel at most: a second open is refused, busy.
    let (ta, tb) = (Tunnels::new(&a, quick()), Tunnels::new(&b, one.clone()));
    let (_first, _kept) = pair(&ta, &tb, &b).await;
    let mut opens = tb.opens().await.unwrap();
    within(b.flush()).await.unwrap();
    let refusing = tokio::spawn(async move {
        let open = opens.next().await.expect("an open");
        open.accept().await
    });
    let second = within(ta.open("b", "ws", Bytes::new())).await;
    assert!(
        matches!(&second, Err(TunnelError::Refused { node, busy: true, .. }) if node == "b"),
        "{second:?}"
    );
    assert!(matches!(
        within(refusing).await.unwrap(),
        Err(TunnelError::TooMany { limit: 1 })
    ));
    assert_eq!(ta.live(), 1, "the refused open gave its place back");
    // Counted: the one opened and accepted; the refused one on neither side.
    assert_eq!(
        ta.counts(),
        TunnelCounts {
            opened: 1,
            accepted: 0
        }
    );
    assert_eq!(
        tb.counts(),
        TunnelCounts {
            opened: 0,
            accepted: 1
        }
    );

    // a holds one at most: its second open fails at once, without asking anyone.
    let ta1 = Tunnels::new(&a, one);
    let _held = pair(&ta1, &Tunnels::new(&b, quick()), &b).await;
    let third = ta1.open("b", "ws", Bytes::new()).await;
    assert!(
        matches!(third, Err(TunnelError::TooMany { limit: 1 })),
        "{third:?}"
    );

    // Nobody takes opens for "nobody": said at once, and not counted.
    let none = within(ta.open("nobody", "ws", Bytes::new())).await;
    assert!(
        matches!(&none, Err(TunnelError::Bus(BusError::NoNode { node })) if node == "nobody"),
        "{none:?}"
    );
    assert_eq!(ta.counts().opened, 1);
    // An open over the bus's limit is not sent.
    let huge = Bytes::from(vec![b'x'; 70 * 1024]);
    assert!(matches!(
        ta.open("b", "ws", huge).await,
        Err(TunnelError::Bus(BusError::TooLarge { .. }))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_04_a_reader_that_does_not_read_holds_its_sender_back_to_the_window() {
    let nats = Nats::start().expect("nats-server starts");
    let (a, b) = (node(&nats, "a").await, node(&nats, "b").await);
    let window = 4096usize;
    let config = TunnelConfig {
        window,
        chunk: 1024,
        ..quick()
    };
    let (ta, tb) = (Tunnels::new(&a, config.clone()), Tunnels::new(&b, config));
    let (opened, accepted) = pair(&ta, &tb, &b).await;
    let mut flow = opened.flow();
    let (mut near_a, run_a) = run(opened, 1024);
    let (mut near_b, run_b) = run(accepted, 1024);

    // a's client offers 1 MiB; b's does not read.
    let total = 1024 * 1024;
    let offered: Vec<u8> = (0..total).map(|i| (i % 253) as u8).collect();
    let sent = offered.clone();
    let writer = tokio::spawn(async move {
        near_a.write_all(&sent).await.unwrap();
        near_a.shutdown().await.unwrap();
        near_a
    });
    // The sender waits for acknowledgements with its window full.
    let held = within(flow.wait_for(|f| f.held_back))
        .await
        .unwrap()
        .to_owned();
    eprintln!("held back at {held:?}");
    assert!(held.sent - held.acked <= window as u64, "{held:?}");
    // What b acknowledged is what it wrote to its stream, which nobody reads: at most
    // that pipe's capacity. So a sent at most the window more.
    assert!(held.acked <= 1024, "{held:?}");
    assert!(held.sent <= (window + 1024) as u64, "{held:?}");
    assert!(!writer.is_finished(), "a's client is held back too");

    // b's client reads: everything comes, in order, and both ends finish.
    let mut got = Vec::with_capacity(total);
    within(near_b.read_to_end(&mut got)).await.unwrap();
    assert!(got == offered, "every byte, in order");
    near_b.shutdown().await.unwrap();
    let mut near_a = within(writer).await.unwrap();
    let mut rest = Vec::new();
    within(near_a.read_to_end(&mut rest)).await.unwrap();
    assert_eq!(within(run_a).await.unwrap(), Ended::Done);
    assert_eq!(within(run_b).await.unwrap(), Ended::Done);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_04_a_peer_sending_past_the_window_is_stopped() {
    let nats = Nats::start().expect("nats-server starts");
    let (a, b) = (node(&nats, "a").await, node(&nats, "b").await);
    let config = TunnelConfig {
        window: 100,
        ..quick()
    };
    let (ta, tb) = (Tunnels::new(&a, config.clone()), Tunnels::new(&b, config));
    let (opened, accepted) = pair(&ta, &tb, &b).await;
    let id = opened.id().to_owned();
    // b's stream is never read and its pipe holds 10 bytes: nothing is acknowledged
    // past them. A raw client (a's frames, forged) sends 200 bytes at once.
    let (_near_b, run_b) = run(accepted, 10);
    drop(opened);
    let raw = async_nats::connect(nats.url()).await.unwrap();
    for seq in 0..2 {
        let f = Frame::Data {
            seq,
            bytes: Bytes::from(vec![b'x'; 100]),
        };
        raw.publish(format!("mcpl.t.{id}.up"), encode(&f))
            .await
            .unwrap();
    }
    raw.flush().await.unwrap();
    let ended = within(run_b).await.unwrap();
    assert!(
        matches!(&ended, Ended::Protocol(why) if why.contains("past this side's window")),
        "{ended:?}"
    );
}
