//! Reconnecting: capped exponential backoff between attempts (on tokio's paused clock), a
//! reset once a connection has stayed up, and a fresh epoch per connection.

use crate::support;

use actix::Actor;
use mcpl_host::link::{ConnectError, GetStatus, LinkEvent, LinkPhase, ServerLink, TapEvent};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use support::*;

const MS: fn(u64) -> Duration = Duration::from_millis;

#[test]
fn after_a_restart_the_link_backs_off_doubling_to_the_cap_then_reconnects_and_resets() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, mut taps) = tap();
        let link = ServerLink::new(config(connector, sink, tap)).start();
        servers.next_attempt().await;
        let mut peer = servers.next_peer().await;
        peer.serve_mcpl_handshake(json!([tool("play")])).await;
        events
            .until(|e| matches!(e, LinkEvent::ToolsChanged { epoch: 1, .. }).then_some(()))
            .await;

        // The server "restarts": it goes, and refuses four attempts before it is back.
        servers.plan([Plan::Refuse; 4]);
        let dropped_at = tokio::time::Instant::now();
        drop(peer);
        let mut attempts = vec![dropped_at];
        for _ in 0..5 {
            attempts.push(servers.next_attempt().await);
        }
        let gaps: Vec<Duration> = attempts.windows(2).map(|w| w[1] - w[0]).collect();
        // 250 ms doubling, capped at 1 s (jitter is off in the tests' config).
        assert_eq!(gaps, [MS(250), MS(500), MS(1000), MS(1000), MS(1000)]);

        let mut failed = Vec::new();
        let mut waits = Vec::new();
        while failed.len() < 4 {
            match events.next().await {
                LinkEvent::ConnectFailed {
                    attempt,
                    error: ConnectError::Transport(_),
                } => failed.push(attempt),
                LinkEvent::BackingOff { delay, .. } => waits.push(delay),
                LinkEvent::Disconnected { epoch: 1, .. }
                | LinkEvent::ToolsListed { epoch: 1, .. } => {}
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(failed, [1, 2, 3, 4]);
        assert_eq!(waits, [MS(250), MS(500), MS(1000), MS(1000)]);

        // Back: a fresh connection, its ids from 1 again, a new epoch.
        let mut peer = servers.next_peer().await;
        peer.serve_mcpl_handshake(json!([tool("play")])).await;
        events
            .until(|e| matches!(e, LinkEvent::Connected { epoch: 2, .. }).then_some(()))
            .await;
        taps.until(|e| matches!(e, TapEvent::Connected { epoch: 2, .. }).then_some(()))
            .await;
        let status = link.send(GetStatus).await.unwrap();
        assert_eq!(
            (status.phase, status.epoch, status.failed_attempts),
            (LinkPhase::Ready, 2, 0)
        );

        // A connection that stayed up past `stable_after` resets the backoff: the next drop
        // waits the first step again (one dropped sooner would not, see `hardening.rs`).
        tokio::time::advance(Duration::from_secs(10)).await;
        let dropped_at = tokio::time::Instant::now();
        drop(peer);
        assert_eq!(servers.next_attempt().await - dropped_at, MS(250));
    });
}

/// Issue #42: a reconnection answered `initialize` with the same text as the last
/// connection takes the result read then (shared, not decoded and digested again), and one
/// answered differently is read afresh.
#[test]
fn an_unchanged_initialize_answer_is_not_read_again_and_a_changed_one_is() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, mut events) = events();
        let (tap, _taps) = tap();
        let _link = ServerLink::new(config(connector, sink, tap)).start();
        let mut changed = mcpl_init_result();
        changed["serverInfo"]["version"] = json!("2.0.0");
        let answers = [
            mcpl_init_result(),
            mcpl_init_result(),
            changed.clone(),
            changed,
        ];
        let mut inits = Vec::new();
        for (epoch, answer) in (1..).zip(answers) {
            let mut peer = servers.next_peer().await;
            let list = peer.serve_mcpl_handshake_answering(answer).await;
            peer.reply(&list, json!({"tools": []})).await;
            let init = events
                .until(|e| match e {
                    LinkEvent::Connected { epoch: e, init, .. } if e == epoch => Some(init),
                    _ => None,
                })
                .await;
            inits.push(init);
            drop(peer);
        }
        assert!(
            Arc::ptr_eq(&inits[0], &inits[1]),
            "the same answer, not read again"
        );
        assert!(
            !Arc::ptr_eq(&inits[1], &inits[2]),
            "a changed answer is read"
        );
        assert_eq!(
            (
                &*inits[1].server_info.version,
                &*inits[2].server_info.version
            ),
            ("1.0.0", "2.0.0")
        );
        assert!(Arc::ptr_eq(&inits[2], &inits[3]), "and kept in its turn");
    });
}

#[test]
fn the_tap_sees_each_connection_start_and_end_with_its_epoch() {
    paused(async {
        let (connector, mut servers) = scripted();
        let (sink, _events) = events();
        let (tap, mut taps) = tap();
        let _link = ServerLink::new(config(connector, sink, tap)).start();
        for epoch in 1..=3 {
            let mut peer = servers.next_peer().await;
            peer.serve_mcpl_handshake(json!([])).await;
            taps.until(|e| match e {
                TapEvent::Connected { epoch: e, .. } => {
                    assert_eq!(e, epoch);
                    Some(())
                }
                TapEvent::Read(r) => {
                    assert_eq!(r.epoch, epoch, "reads carry their connection's epoch");
                    None
                }
                TapEvent::Disconnected { .. } => {
                    panic!("a disconnect before this connection started")
                }
                TapEvent::Unreadable { .. } => panic!("nothing unreadable was sent"),
            })
            .await;
            taps.until(|e| matches!(&e, TapEvent::Read(r) if r.answers.as_ref().is_some_and(|a| a.method == "tools/list")).then_some(()))
                .await;
            drop(peer);
            assert!(
                matches!(taps.next().await, TapEvent::Disconnected { epoch: e, .. } if e == epoch)
            );
        }
    });
}

#[test]
fn an_attempt_that_never_completes_fails_at_the_connect_timeout() {
    paused(async {
        let (connector, mut servers) = scripted();
        servers.plan([Plan::Hang]);
        let (sink, mut events) = events();
        let (tap, _taps) = tap();
        let mut config = config(connector, sink, tap);
        config.connect_timeout = Duration::from_secs(3);
        let _link = ServerLink::new(config).start();
        let first = servers.next_attempt().await;
        match events.next().await {
            LinkEvent::ConnectFailed {
                attempt: 1,
                error: ConnectError::TimedOut { after },
            } => {
                assert_eq!(after, Duration::from_secs(3));
            }
            other => panic!("expected ConnectFailed, got {other:?}"),
        }
        let second = servers.next_attempt().await;
        assert_eq!(second - first, Duration::from_secs(3) + MS(250));
        servers
            .next_peer()
            .await
            .serve_mcpl_handshake(json!([]))
            .await;
        events
            .until(|e| matches!(e, LinkEvent::Connected { epoch: 1, .. }).then_some(()))
            .await;
    });
}
