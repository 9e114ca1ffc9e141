//! Issue #41 item 2: the bus between nodes, on a real `nats-server` started by each test
//! (`mcpl_testkit::nats`; it starts in milliseconds, so each test has its own, and the
//! restart test can kill it without disturbing the others). Change notices reach every
//! node watching a principal, whatever its name; forwarded requests are answered or fail
//! clearly; everything is bounded; a notice lost (NATS restarted mid-stream) costs a
//! read from the store, never a version.

use bytes::Bytes;
use mcpl_cluster::bus::{BusConfig, BusError, Change, NatsBus, name_of_token, subject_token};
use mcpl_testkit::nats::Nats;
use mcpl_testkit::{within, within_named};
use std::time::Duration;

async fn node(nats: &Nats, name: &str) -> NatsBus {
    NatsBus::connect(&nats.url(), BusConfig::new(name))
        .await
        .expect("the node connects")
}

/// Names a subject could be fooled by: separators, wildcards, whitespace, the escape
/// character, an escaped form of another, unicode, the empty name.
const HOSTILE: [&str; 12] = [
    "alice",
    "a.b",
    "a",
    "b",
    "a.*",
    "*",
    ">",
    "a b",
    "a%2Eb",
    "ünïcødé 日本",
    "",
    "tab\there",
];

#[test]
fn issue41_02_subject_tokens_are_literal_one_to_one_and_read_back() {
    let mut seen = std::collections::HashSet::new();
    for name in HOSTILE {
        let token = subject_token(name);
        assert!(!token.is_empty(), "{name:?}");
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_graphic() && !b".*>".contains(&b)),
            "{name:?} escapes to {token:?}: not one literal token"
        );
        assert!(seen.insert(token.clone()), "{name:?} shares {token:?}");
        assert_eq!(name_of_token(&token).as_deref(), Some(name), "{token:?}");
    }
    // Strings no name escapes to are not read as one.
    for bad in ["a.b", "%2e", "%41", "%G0", "%4", "a*", ""] {
        assert_eq!(name_of_token(bad), None, "{bad:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_02_notices_reach_every_watcher_of_a_principal_and_no_other() {
    let nats = Nats::start().expect("nats-server starts");
    let a = node(&nats, "a").await;
    let b = node(&nats, "b").await;
    let c = node(&nats, "c").await;
    // b and c watch every hostile name, each from its own known version.
    let mut watches = Vec::new();
    for (i, name) in HOSTILE.iter().enumerate() {
        let known = 100 * i as u64;
        watches.push((b.watch(name, known).await.unwrap(), known));
        watches.push((c.watch(name, known).await.unwrap(), known));
    }
    within(b.flush()).await.unwrap();
    within(c.flush()).await.unwrap();
    // Each principal's next version, then the one after, round robin.
    for round in 1..=2 {
        for (i, name) in HOSTILE.iter().enumerate() {
            a.announce(name, 100 * i as u64 + round).await.unwrap();
        }
    }
    for (watch, known) in &mut watches {
        let name = watch.principal().to_owned();
        for round in 1..=2 {
            // A notice of another principal on this one's subject would come first, as a
            // resync: only the principal's own versions, in order.
            assert_eq!(
                within_named(&name, watch.next()).await,
                Some(Change::Next {
                    version: *known + round
                }),
                "principal {name:?}"
            );
        }
    }
    // A version already told is skipped, the next one counts; a jump is a gap.
    let (watch, _) = &mut watches[2]; // b's watch of "a.b", at 102
    assert_eq!(watch.principal(), "a.b");
    a.announce("a.b", 101).await.unwrap();
    a.announce("a.b", 102).await.unwrap();
    a.announce("a.b", 103).await.unwrap();
    a.announce("a.b", 106).await.unwrap();
    assert_eq!(
        within(watch.next()).await,
        Some(Change::Next { version: 103 })
    );
    assert_eq!(
        within(watch.next()).await,
        Some(Change::Gap {
            last: 103,
            version: 106
        })
    );
    // The owner read the record at 108 meanwhile: notices up to it are old news.
    watch.caught_up(108);
    a.announce("a.b", 107).await.unwrap();
    a.announce("a.b", 108).await.unwrap();
    a.announce("a.b", 109).await.unwrap();
    assert_eq!(
        within(watch.next()).await,
        Some(Change::Next { version: 109 })
    );
    assert_eq!(watch.last(), 109);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_02_forward_is_answered_or_fails_clearly() {
    let nats = Nats::start().expect("nats-server starts");
    let mut small = BusConfig::new("a");
    small.max_message = 1024;
    let a = NatsBus::connect(&nats.url(), small.clone()).await.unwrap();
    let b = NatsBus::connect(
        &nats.url(),
        BusConfig {
            node: "b.*>".to_owned(),
            ..small.clone()
        },
    )
    .await
    .unwrap();
    let silent = node(&nats, "silent").await;
    // b answers each request with "b:" and what it got; an answer over the limit is
    // refused on b's side.
    let mut requests = b.serve().await.unwrap();
    let mut unanswered = silent.serve().await.unwrap();
    within(b.flush()).await.unwrap();
    within(silent.flush()).await.unwrap();
    let server = tokio::spawn(async move {
        let mut refused = Vec::new();
        while let Some(request) = requests.next().await {
            if request.payload().as_ref() == b"big" {
                match request.respond(Bytes::from(vec![0; 2000])).await {
                    Err(BusError::TooLarge {
                        size: 2000,
                        limit: 1024,
                        ..
                    }) => refused.push("big"),
                    other => panic!("an answer over the limit was not refused: {other:?}"),
                }
                continue;
            }
            let mut answer = b"b:".to_vec();
            answer.extend_from_slice(request.payload());
            request.respond(answer.into()).await.unwrap();
            if refused.len() == 1 {
                return refused;
            }
        }
        refused
    });
    let limit = Duration::from_secs(30);
    let answer = within(a.forward("b.*>", Bytes::from_static(b"hello"), limit))
        .await
        .unwrap();
    assert_eq!(answer.as_ref(), b"b:hello");
    // No node of that name (nor one whose subject a wildcard would match): at once.
    for nobody in ["nobody", "b", "b.*", "*"] {
        match within(a.forward(nobody, Bytes::from_static(b"x"), limit)).await {
            Err(BusError::NoNode { node }) => assert_eq!(node, nobody),
            other => panic!("forward to {nobody:?}: {other:?}"),
        }
    }
    // A node that does not answer: the timeout, named.
    let short = Duration::from_millis(200);
    match within(a.forward("silent", Bytes::from_static(b"x"), short)).await {
        Err(BusError::TimedOut { node, after }) => {
            assert_eq!((node.as_str(), after), ("silent", short))
        }
        other => panic!("forward to a silent node: {other:?}"),
    }
    assert_eq!(
        within(unanswered.next()).await.unwrap().payload().as_ref(),
        b"x"
    );
    // A request over the limit is refused before it is sent.
    match a.forward("b.*>", Bytes::from(vec![0; 1025]), limit).await {
        Err(BusError::TooLarge {
            size: 1025,
            limit: 1024,
            ..
        }) => {}
        other => panic!("a request over the limit: {other:?}"),
    }
    // b refuses to answer over the limit: a times out rather than read it.
    match within(a.forward("b.*>", Bytes::from_static(b"big"), short)).await {
        Err(BusError::TimedOut { .. }) => {}
        other => panic!("an answer over the limit: {other:?}"),
    }
    let answer = within(a.forward("b.*>", Bytes::from_static(b"again"), limit))
        .await
        .unwrap();
    assert_eq!(answer.as_ref(), b"b:again");
    assert_eq!(within(server).await.unwrap(), ["big"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_02_watches_and_names_are_bounded() {
    let nats = Nats::start().expect("nats-server starts");
    let mut config = BusConfig::new("a");
    config.max_watched = 2;
    config.max_name = 16;
    let a = NatsBus::connect(&nats.url(), config).await.unwrap();
    let first = a.watch("p1", 0).await.unwrap();
    let _second = a.watch("p2", 0).await.unwrap();
    match a.watch("p3", 0).await {
        Err(e @ BusError::TooManyWatched { limit: 2 }) => {
            assert!(e.to_string().contains("2 principals"), "{e}")
        }
        other => panic!("a third watch: {other:?}"),
    }
    drop(first);
    a.watch("p3", 0)
        .await
        .expect("a dropped watch frees its place");
    let long = "x".repeat(17);
    match a.announce(&long, 1).await {
        Err(BusError::NameTooLong {
            what: "principal",
            len: 17,
            limit: 16,
        }) => {}
        other => panic!("a name over the limit: {other:?}"),
    }
    match a.forward(&long, Bytes::new(), Duration::from_secs(1)).await {
        Err(BusError::NameTooLong { what: "node", .. }) => {}
        other => panic!("a node name over the limit: {other:?}"),
    }
    match NatsBus::connect("nats://127.0.0.1:1", BusConfig::new("z")).await {
        Err(e @ BusError::Connect { .. }) => assert!(e.to_string().contains("127.0.0.1:1"), "{e}"),
        other => panic!("connecting to nothing: {other:?}"),
    }
}

/// Awaits the node's connection being `up` (or not).
async fn connection(bus: &NatsBus, up: bool) {
    let mut connected = bus.connected();
    within_named(
        if up { "reconnection" } else { "disconnection" },
        connected.wait_for(|now| *now == up),
    )
    .await
    .expect("the bus is open");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_02_nats_restarted_mid_stream_costs_a_read_not_a_version() {
    let mut nats = Nats::start().expect("nats-server starts");
    let mut config = BusConfig::new("a");
    config.reconnect_max = Duration::from_millis(100);
    let a = NatsBus::connect(&nats.url(), config.clone()).await.unwrap();
    let b = NatsBus::connect(
        &nats.url(),
        BusConfig {
            node: "b".to_owned(),
            ..config
        },
    )
    .await
    .unwrap();
    let mut watch = b.watch("alice", 0).await.unwrap();
    within(b.flush()).await.unwrap();
    for version in 1..=5 {
        a.announce("alice", version).await.unwrap();
    }
    for version in 1..=5 {
        assert_eq!(within(watch.next()).await, Some(Change::Next { version }));
    }
    // NATS dies: versions 6 and 7 are committed meanwhile, their notices lost with it.
    nats.stop();
    connection(&a, false).await;
    connection(&b, false).await;
    nats.restart()
        .expect("nats-server starts again on its port");
    connection(&a, true).await;
    connection(&b, true).await;
    // b's subscription is back once the server has seen its flush.
    within(b.flush()).await.unwrap();
    // The reconnection alone says: read the record (the last notice may be the lost one).
    assert_eq!(within(watch.next()).await, Some(Change::Resync));
    a.announce("alice", 8).await.unwrap();
    assert_eq!(
        within(watch.next()).await,
        Some(Change::Gap {
            last: 5,
            version: 8
        })
    );
    // The owner read the record (at 8): the stream goes on.
    watch.caught_up(8);
    a.announce("alice", 9).await.unwrap();
    assert_eq!(
        within(watch.next()).await,
        Some(Change::Next { version: 9 })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_02_a_full_queue_drops_notices_and_the_watcher_is_told_to_resync() {
    let nats = Nats::start().expect("nats-server starts");
    let a = node(&nats, "a").await;
    let mut config = BusConfig::new("b");
    config.queue = 4;
    let b = NatsBus::connect(&nats.url(), config).await.unwrap();
    let mut watch = b.watch("alice", 0).await.unwrap();
    within(b.flush()).await.unwrap();
    // 20 notices while b reads none: its queue holds 4, NATS drops the rest.
    for version in 1..=20 {
        a.announce("alice", version).await.unwrap();
    }
    within(a.flush()).await.unwrap();
    // b's own round trip comes after the 20 on its connection: they were all handled.
    within(b.flush()).await.unwrap();
    // What was queued comes in order, and b is told it missed some (the overflow's event
    // may come before or among them).
    let mut told = Vec::new();
    let mut resynced = false;
    while !resynced || told.len() < 4 {
        match within(watch.next()).await.expect("open") {
            Change::Next { version } => told.push(version),
            Change::Resync => resynced = true,
            other => panic!("{other:?} after {told:?}"),
        }
    }
    assert_eq!(told, [1, 2, 3, 4], "the queue's 4, in order");
    // The next notice is a gap from the last told. NATS reports each notice it dropped
    // (16 here) and the bus's event task handles them one after another: under load some
    // come after the watcher was told the first, and each tells it again to resync,
    // which changes nothing. No notice comes before the gap.
    a.announce("alice", 21).await.unwrap();
    let next = loop {
        match within(watch.next()).await {
            Some(Change::Resync) => continue,
            other => break other,
        }
    };
    assert_eq!(
        next,
        Some(Change::Gap {
            last: 4,
            version: 21
        })
    );
}
