//! The host against a hostile server, issue #13's host-side items, each at a reduced scale
//! with its bound asserted (the server-side items are in `games/tests/hardening.rs` and
//! the transport's tests):
//!
//! - 7: a server that sends requests and never reads the answers: the answers wait in a
//!   bounded queue, each for a bounded time, then the connection is dropped;
//! - 8: a notification flood is read no faster than the Host takes it (a bounded read-ahead),
//!   so the agent's request is not queued behind it, and nothing read is lost;
//! - 10: an unreadable `tools/list` answer is listed again within a short grace, not left
//!   unknown; a server that drops every connection right after its handshake is
//!   reconnected ever more slowly; one that never answers `initialize` is tried again;
//! - 11: a flood of malformed messages costs a few log lines per interval, not one each.
//!
//! Item 9 (the cost per tool) is measured by `sim-perf` and the host's benchmarks.

use crate::support;

use actix::Actor;
use mcpl_host::link::{
    DEFAULT_READ_AHEAD, DisconnectReason, LinkEvent, ReadGate, ServerLink, Tap, TapEvent, Ticket,
};
use mcpl_testkit::within;
use mcpl_transport::ClientOptions;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::server::*;
use support::*;

const MS: fn(u64) -> Duration = Duration::from_millis;
const HOLD: Duration = Duration::from_millis(250);

fn ping(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": format!("p{id}"), "method": "ping"})
}

/// Waits for the link's next `Disconnected` and returns its reason.
async fn next_disconnect(events: &mut Events) -> DisconnectReason {
    events
        .until(|e| match e {
            LinkEvent::Disconnected { reason, .. } => Some(reason),
            _ => None,
        })
        .await
}

// ---- 7: a server that never reads ------------------------------------------------------

#[test]
fn hardening_07_a_server_that_never_reads_its_answers_is_dropped_at_the_queue_bound() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, _taps) = tap();
        let mut config = config(connector, sink, tap);
        config.write_queue = 64;
        let _link = ServerLink::new(config).start();
        let mut peer = servers.next_peer().await;
        peer.serve_mcpl_handshake(json!([tool("play")])).await;
        // The server pings and reads none of the answers: they fill the transport's
        // channels, then the link's queue, and the next one finds it full.
        let sender = tokio::spawn(async move {
            let mut sent = 0;
            while sent < 100_000 && peer.try_send(ping(sent)).await.is_ok() {
                sent += 1;
            }
            sent
        });
        assert_eq!(
            next_disconnect(&mut events).await,
            DisconnectReason::NotReading { queued: 64 }
        );
        let sent = sender.await.unwrap();
        // What the channels held on both sides, and the queue: bounded, however many are sent.
        assert!(sent < 4 * 1024 + 64 + 16, "{sent} pings were read");
        // A fresh connection: the server is tried again.
        servers
            .next_peer()
            .await
            .serve_mcpl_handshake(json!([]))
            .await;
        events
            .until(|e| matches!(e, LinkEvent::Connected { epoch: 2, .. }).then_some(()))
            .await;
    });
}

#[test]
fn hardening_07_an_answer_that_waits_past_the_write_timeout_drops_the_connection() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, _taps) = tap();
        let mut config = config(connector, sink, tap);
        config.write_timeout = Duration::from_secs(5);
        let _link = ServerLink::new(config).start();
        let mut peer = servers.next_peer().await;
        peer.serve_mcpl_handshake(json!([tool("play")])).await;
        // The transport's two channels hold 2 × 1024 answers; a few more wait in the link's
        // queue, far below its bound, and the first of them for room.
        for i in 0..2 * 1024 + 8 {
            peer.send(ping(i)).await;
        }
        let since = tokio::time::Instant::now();
        match next_disconnect(&mut events).await {
            DisconnectReason::NotReading { queued } => assert!(queued <= 8, "{queued}"),
            other => panic!("expected NotReading, got {other:?}"),
        }
        let waited = since.elapsed();
        assert!(
            waited >= Duration::from_secs(5) && waited < Duration::from_secs(6),
            "{waited:?}"
        );
    });
}

// ---- 8: floods -------------------------------------------------------------------------

/// Lets every other task run until `ready` holds (the paused clock never moves for this).
async fn until(mut ready: impl FnMut() -> bool) {
    while !ready() {
        tokio::task::yield_now().await;
    }
}

/// A read (its JSON, for a message) and the ticket the consumer holds for it.
type Taken = (Option<Value>, Ticket);

#[test]
fn hardening_08_a_link_reads_no_further_ahead_of_its_consumer_than_its_gate_allows() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, _events) = events();
        let gate = ReadGate::new(64);
        // The consumer holds every message's ticket until the test lets go of them.
        let held: Arc<Mutex<Vec<Taken>>> = Arc::default();
        let (tap_gate, tap_held) = (gate.clone(), held.clone());
        let tap = Tap::from_fn(move |e| {
            let read = match e {
                TapEvent::Read(r) => Some(serde_json::to_value(&r.message).unwrap()),
                _ => None,
            };
            tap_held.lock().unwrap().push((read, tap_gate.ticket()));
        });
        let mut config = config(connector, sink, tap);
        config.read_gate = Some(gate.clone());
        let _link = ServerLink::new(config).start();
        let mut peer = servers.next_peer().await;
        // The handshake's reads: the consumer takes them.
        let list = peer.serve_mcpl_handshake_to_list().await;
        peer.reply(&list, json!({"tools": []})).await;
        let listed = |h: &[Taken]| {
            h.iter().any(|(m, _)| {
                m.as_ref()
                    .is_some_and(|m| m["result"].get("tools").is_some())
            })
        };
        until(|| listed(&held.lock().unwrap())).await;
        held.lock().unwrap().clear();

        const FLOOD: u64 = 5_000;
        let sender = tokio::spawn(async move {
            for i in 0..FLOOD {
                peer.send(json!({"jsonrpc": "2.0", "method": "notifications/message",
                                 "params": {"level": "info", "data": i}}))
                    .await;
            }
            peer
        });
        // Until the consumer takes something, the link has read exactly its gate's worth;
        // the rest waits in the transport, which in turn stops the server.
        until(|| gate.out() == 64).await;
        assert_eq!((gate.out(), held.lock().unwrap().len()), (64, 64));
        assert!(!sender.is_finished());
        // Taken, a few at a time: every message is read, in order, never more ahead.
        let mut seen = Vec::new();
        while seen.len() < FLOOD as usize {
            let taken: Vec<_> = held.lock().unwrap().drain(..).collect();
            seen.extend(taken.into_iter().filter_map(|(m, _ticket)| m));
            tokio::task::yield_now().await;
            assert!(gate.out() <= 64);
        }
        let data: Vec<u64> = seen
            .iter()
            .map(|m| m["params"]["data"].as_u64().unwrap())
            .collect();
        assert_eq!(data, (0..FLOOD).collect::<Vec<_>>());
        assert_eq!(gate.peak(), 64);
        sender.await.unwrap();
    });
}

#[actix::test]
async fn hardening_08_a_flood_is_read_no_faster_than_the_host_takes_it_and_nothing_is_lost() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        const EACH: u64 = 10_000;
        let flood = tokio::spawn(async move {
            for i in 0..EACH {
                conn.send(json!({"jsonrpc": "2.0", "method": "notifications/message",
                                 "params": {"level": "info", "data": format!("line {i}")}}))
                    .await;
            }
            for rev in 2..EACH + 2 {
                conn.hints(changes(
                    rev,
                    json!([vis("roam", None, rev % 2 == 1)]),
                    json!([]),
                ))
                .await;
            }
            conn
        });
        // The agent is answered while the flood is read.
        let (err, text) = local_call(&host, "toolsets--look", json!({})).await;
        assert!(!err, "{text}");
        let mut conn = flood.await.unwrap();
        let h = hints_until(&host, |h| h.last_rev == EACH + 1).await;
        assert_eq!((h.stats.applied, h.stats.gaps), (EACH, 0), "{h:?}");
        assert!(
            is_usable(&host, "roam").await,
            "the last rev made it usable"
        );
        let peak = host.status().server("arcade").unwrap().read_ahead_peak;
        // One read becomes at most a tapped read and an event.
        assert!(
            peak <= DEFAULT_READ_AHEAD + 2,
            "{peak} messages waited for the host"
        );
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    })
    .await;
}

// ---- 10: reads and reconnects that must not give up ------------------------------------

/// A `tools/list` answer nested deeper than any reader takes beside its tools (written
/// whole: only reading it back is limited; a tool nested as deep would cost only itself).
fn too_deep(id: &Value) -> Value {
    let mut deep = json!({});
    for _ in 0..300 {
        deep = json!({ "items": deep });
    }
    json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [], "_meta": {"x": deep}}})
}

#[actix::test]
async fn hardening_10_an_unreadable_tools_list_answer_is_listed_again_within_a_grace() {
    within(async {
        const LIMIT: usize = 64 * 1024;
        for oversized in [false, true] {
            let mut server = ScriptedServer::bind(Transport::Ws).await;
            let options = ClientOptions {
                max_message_size: LIMIT,
                ..Default::default()
            };
            // Without the grace the page would be awaited for longer than the test runs.
            let host = start_host(server.connector(options), HOLD, |s| {
                s.link.request_timeout = Duration::from_secs(600);
            });
            let mut conn = server.accept().await;
            conn.handshake(arcade_init()).await;
            // The server: junk for the first `tools/list`, the list for every later one;
            // each statement at a fresh rev (§5.2; a recovery follows what was unreadable).
            let serving = tokio::spawn(async move {
                let (mut lists, mut rev) = (0, 0);
                loop {
                    let m = conn.next_non_notification().await;
                    match m["method"].as_str() {
                        Some("tools/list") if lists == 0 => {
                            lists += 1;
                            let junk = if oversized {
                                let big = "x".repeat(LIMIT);
                                json!({"jsonrpc": "2.0", "id": m["id"], "result": {"tools": [
                                    {"name": "big", "description": big, "inputSchema": {"type": "object"}}]}})
                            } else {
                                too_deep(&m["id"])
                            };
                            conn.send(junk).await;
                        }
                        Some("tools/list") => {
                            lists += 1;
                            conn.reply(&m, tools_page(&arcade_tools(), rev)).await;
                        }
                        Some("toolsets/list") => {
                            rev += 1;
                            conn.reply(&m, lobby_statement(rev)).await
                        }
                        // The host's answer to what it could not read.
                        None if m["error"]["code"] == -32700 => {}
                        _ => panic!("unexpected: {m}"),
                    }
                }
            });
            settled(&host, 1, 1, 6).await;
            serving.abort();
            host.stop().await;
        }
    })
    .await;
}

#[test]
fn hardening_10_a_server_that_drops_each_connection_after_its_handshake_is_reconnected_ever_more_slowly()
 {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, _taps) = tap();
        let _link = ServerLink::new(config(connector, sink, tap)).start();
        let mut gaps = Vec::new();
        servers.next_attempt().await;
        for epoch in 1..=4 {
            let mut peer = servers.next_peer().await;
            peer.serve_mcpl_handshake(json!([tool("play")])).await;
            events
                .until(|e| {
                    matches!(e, LinkEvent::ToolsListed { epoch: n, .. } if n == epoch).then_some(())
                })
                .await;
            let dropped = tokio::time::Instant::now();
            drop(peer);
            gaps.push(servers.next_attempt().await - dropped);
        }
        // 250 ms doubling to the tests' cap of 1 s: each handshake did not start it over.
        assert_eq!(gaps, [MS(250), MS(500), MS(1000), MS(1000)]);

        // A connection that stays up past `stable_after` does.
        let mut peer = servers.next_peer().await;
        peer.serve_mcpl_handshake(json!([tool("play")])).await;
        tokio::time::advance(Duration::from_secs(10)).await;
        let dropped = tokio::time::Instant::now();
        drop(peer);
        assert_eq!(servers.next_attempt().await - dropped, MS(250));
    });
}

#[test]
fn hardening_10_a_server_that_never_answers_initialize_is_tried_again_after_the_backoff() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, _taps) = tap();
        let _link = ServerLink::new(config(connector, sink, tap)).start();
        let mut attempts = vec![servers.next_attempt().await];
        let mut silent = Vec::new();
        for _ in 0..2 {
            let mut peer = servers.next_peer().await;
            peer.expect_next("initialize").await;
            match next_disconnect(&mut events).await {
                DisconnectReason::HandshakeTimeout { method, after } => {
                    assert_eq!((method, after), ("initialize", Duration::from_secs(10)))
                }
                other => panic!("expected HandshakeTimeout, got {other:?}"),
            }
            attempts.push(servers.next_attempt().await);
            silent.push(peer);
        }
        let gaps: Vec<Duration> = attempts.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(
            gaps,
            [
                Duration::from_secs(10) + MS(250),
                Duration::from_secs(10) + MS(500)
            ]
        );
        servers
            .next_peer()
            .await
            .serve_mcpl_handshake(json!([]))
            .await;
        events
            .until(|e| matches!(e, LinkEvent::Connected { epoch: 3, .. }).then_some(()))
            .await;
    });
}

// ---- 11: log volume --------------------------------------------------------------------

/// Keeps the WARN lines written while it is the thread's default subscriber.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl Lines {
    /// Captures this thread's WARN lines (and worse) until the guard drops.
    fn capture() -> (Lines, tracing::subscriber::DefaultGuard) {
        let lines = Lines::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::WARN)
            .with_writer(move || writer.clone())
            .finish();
        (lines, tracing::subscriber::set_default(subscriber))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[actix::test]
async fn hardening_11_a_flood_of_malformed_messages_costs_a_few_log_lines() {
    let (lines, _guard) = Lines::capture();
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        let before = lines.text().lines().count();
        let started = std::time::Instant::now();
        const EACH: i64 = 2_000;
        for i in 0..EACH {
            // Params that are not a push; a `tools/hints` that is not one; an answer to no
            // request.
            conn.send(
                json!({"jsonrpc": "2.0", "id": 10_000 + i, "method": "push/event",
                             "params": {"featureSet": 7}}),
            )
            .await;
            conn.send(json!({"jsonrpc": "2.0", "method": "tools/hints", "params": {"rev": "x"}}))
                .await;
            conn.send(json!({"jsonrpc": "2.0", "id": 90_000 + i, "result": {}}))
                .await;
        }
        conn.send(json!({"jsonrpc": "2.0", "id": "last", "method": "ping"}))
            .await;
        // Every push is answered, in order, and the last ping after them; the hints that did
        // not decode may have been lost changes, so the host reads the state again (each
        // statement at a fresh rev), until it is no longer recovering.
        let (mut pushes, mut rev, mut last) = (0, 1, false);
        loop {
            let m = if last {
                tokio::select! {
                    m = conn.recv() => m,
                    _ = hints_until(&host, |h| !h.recovering) => break,
                }
            } else {
                conn.recv().await
            };
            match m["method"].as_str() {
                Some("toolsets/list") => {
                    rev += 1;
                    conn.reply(&m, lobby_statement(rev)).await
                }
                Some("tools/list") => conn.reply(&m, tools_page(&arcade_tools(), rev)).await,
                _ if m["id"] == "last" => {
                    assert_eq!(pushes, EACH);
                    last = true;
                }
                _ => {
                    assert_eq!(
                        (&m["id"], &m["error"]["code"]),
                        (&json!(10_000 + pushes), &json!(-32602)),
                        "{m}"
                    );
                    pushes += 1;
                }
            }
        }
        nothing_else_was_sent(&host, &mut conn).await;
        let text = lines.text();
        let written = text.lines().count() - before;
        // 5 lines per 10 s from the link and 5 from the host's hint handling; each window's
        // first line carries the count held back.
        let windows = started.elapsed().as_secs() / 10 + 1;
        assert!(
            written as u64 <= 10 * windows,
            "{written} lines for {} malformed messages in {windows} windows:\n{text}",
            3 * EACH
        );
        host.stop().await;
    })
    .await;
}

/// A host that stops ends its connections itself: that is a normal exit, not a warning
/// (issue #16: every `mcpl-host play` exit logged WARN "connection ended … shut down").
#[actix::test]
async fn hardening_11_a_host_that_stops_warns_about_nothing() {
    let (lines, _guard) = Lines::capture();
    within(async {
        let (_server, host, _conn) = connected(Transport::Ws, HOLD).await;
        host.stop().await;
    })
    .await;
    let text = lines.text();
    assert!(text.is_empty(), "a normal stop warned:\n{text}");
}
