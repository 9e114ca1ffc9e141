//! Host-side conformance vectors of §5 (hint changes: carriers, order, recovery), each
//! driven by a scripted server over a real transport: WebSocket where the link is ordered,
//! Streamable HTTP (with the client's delivery hook holding back POST responses against the
//! GET stream) where it is not. The scripted server writes what a test chooses — out of
//! order, twice, or never — and each test asserts what the host sent back and what the
//! agent was shown.

use crate::support;

use mcpl_host::link::PushPolicy;
use mcpl_protocol::mcpl::PushEventResult;
use mcpl_testkit::msg;
use mcpl_testkit::within;
use serde_json::json;
use std::time::Duration;
use support::server::*;
use tokio::time::Instant;

const HOLD: Duration = Duration::from_millis(250);

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

#[actix::test]
async fn vector_03_a_push_explaining_a_change_is_applied_once_even_when_refused() {
    within(async {
        let (_server, host, mut conn) = connected_with(Transport::Ws, HOLD, |s| {
            s.link.push_policy = PushPolicy::from_fn(|p| PushEventResult {
                accepted: p.event_id != "e-refused",
                reason: (p.event_id == "e-refused").then(|| "not now".to_owned()),
                ..Default::default()
            });
        })
        .await;
        // The game opens with White to move: only resign is visible to the agent.
        let call = spawn_call(
            &host,
            "toolsets--open",
            json!({"toolset": "game", "instance": "g1"}),
        );
        let req = conn.expect_next("toolsets/open").await;
        conn.reply(
            &req,
            json!({"instance": "g1", "_meta": {"mcpl/hints": changes(2,
            json!([vis("resign", Some("g1"), true)]),
            json!([{"toolset": "game", "instance": "g1", "state": "open"}]))}}),
        )
        .await;
        call.await.unwrap();
        host.transcript().await.unwrap();

        // Accepted: the change is told right after the push that explains it.
        conn.push(
            100,
            "e-1",
            "White played E5.",
            Some(changes(
                3,
                json!([vis("play", Some("g1"), true)]),
                json!([]),
            )),
        )
        .await;
        assert_eq!(
            conn.answer_to(100).await["result"],
            json!({"accepted": true})
        );
        // Refused: the change applies all the same (§5.2), told once as a notice.
        conn.push(
            101,
            "e-refused",
            "White offers a draw.",
            Some(changes(
                4,
                json!([vis("play", Some("g1"), false)]),
                json!([]),
            )),
        )
        .await;
        assert_eq!(
            conn.answer_to(101).await["result"],
            json!({"accepted": false, "reason": "not now"})
        );
        hints_until(&host, |h| h.last_rev == 4).await;

        let shown = host.transcript().await.unwrap();
        let t = texts(&shown);
        assert!(t.contains("White played E5.\n- Usable: play"), "{t}");
        assert!(
            !t.contains("White offers a draw."),
            "a refused push is not shown: {t}"
        );
        assert_eq!(count(&t, "Usable: play"), 1, "{t}");
        assert_eq!(
            count(&t, "No longer usable: play in [arcade/game:g1]"),
            1,
            "{t}"
        );
        // The host's state, not only what it told: the refused push's change stands.
        assert!(
            !visible(&host, "play", Some("g1")).await,
            "the refused push's change applies (§5.2)"
        );
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    })
    .await;
}

/// §5.2 and §6: a push refused before the handshake is done still has its changes told,
/// once. On Streamable HTTP a push on the GET stream can overtake the `featureSets/update`
/// answer the server wrote before it, so the host reads the push first and refuses it
/// (-32002); its hints applied when read all the same. Here they carry the end of the game
/// the agent had open, with its record, which the connection's statement then lists too:
/// the end is told once, neither lost with the refused push nor told again.
#[actix::test]
async fn vector_03_a_push_refused_before_the_handshake_is_done_still_tells_its_changes_once() {
    within(async {
        let (mut server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        open_game(&host, &mut conn, "g1", 2).await;
        host.transcript().await.unwrap();

        // The connection drops. On the next one the game's end is pushed before the answer
        // to featureSets/update (an ordered link shows the host what HTTP may).
        drop(conn);
        let mut conn = server.accept().await;
        let init = conn.expect_next("initialize").await;
        conn.reply(&init, arcade_init()).await;
        let reason = "White won by resignation";
        let end = json!({"toolset": "game", "instance": "g1", "state": "closed",
                         "reason": reason, "ended": "end-1"});
        conn.push(
            100,
            "e-end",
            "Black resigned.",
            Some(changes(1, json!([]), json!([end]))),
        )
        .await;
        let refused = conn
            .next_where(|m| m.get("method").is_none() && m["id"] == json!(100))
            .await;
        assert_eq!(refused["error"]["code"], json!(-32002), "{refused}");
        let update = conn.expect_request("featureSets/update").await;
        conn.reply(&update, json!({"accepted": true})).await;
        let record = json!({"id": "end-1", "toolset": "game", "instance": "g1",
                            "reason": reason, "at": "2026-11-30T12:00:00Z"});
        let stated = statement(
            2,
            json!([{"toolset": "lobby"}]),
            json!([record]),
            json!([vis("seek", None, true), vis("roam", None, true)]),
        );
        let (mut listed, mut stated_once) = (false, false);
        while !(listed && stated_once) {
            let m = conn.next_non_notification().await;
            match m["method"].as_str() {
                Some("tools/list") => {
                    conn.reply(&m, tools_page(&arcade_tools(), 1)).await;
                    listed = true;
                }
                Some("toolsets/list") => {
                    conn.reply(&m, stated.clone()).await;
                    stated_once = true;
                }
                _ => panic!("unexpected at connect: {m}"),
            }
        }
        settled(&host, 2, 2, 6).await;

        let t = texts(&host.transcript().await.unwrap());
        assert!(
            !t.contains("Black resigned."),
            "a refused push is not shown: {t}"
        );
        assert_eq!(t.matches(reason).count(), 1, "the end is told once: {t}");
        assert!(
            t.contains("- Closed [arcade/game:g1]: \"White won by resignation\" (from arcade)."),
            "{t}"
        );
        assert!(!is_usable(&host, "play").await, "the end applied (§5.2)");
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_04_revs_run_across_results_pushes_and_tools_hints_and_a_stale_one_is_ignored() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        open_game(&host, &mut conn, "g1", 2).await;
        // rev 3 on a push, rev 4 standalone, rev 5 on a call's result: one counter.
        conn.push(100, "e-1", "You moved; White thinks.", Some(changes(3, json!([vis("play", Some("g1"), false)]), json!([]))))
            .await;
        conn.hints(changes(4, json!([vis("play", Some("g1"), true)]), json!([])))
            .await;
        let call = spawn_call(&host, "toolsets--act", json!({"tool": "play", "args": {"move": "D4"}}));
        let req = conn.next_request().await;
        assert_eq!(req["method"], "tools/call");
        conn.reply(&req, json!({"content": [{"type": "text", "text": "Black D4."}],
            "_meta": {"mcpl/hints": changes(5, json!([vis("play", Some("g1"), false)]), json!([]))}}))
            .await;
        let r = call.await.unwrap();
        assert!(r.joined_text().contains("No longer usable: play"), "{r:?}");
        let h = hints_until(&host, |h| h.last_rev == 5).await;
        assert_eq!((h.stats.applied, h.stats.recoveries), (4, 0), "{h:?}");

        // A step back to rev 3: its visibility is stale and ignored; on an ordered link
        // that is a fault, so the host recovers.
        conn.hints(changes(3, json!([vis("play", Some("g1"), true)]), json!([])))
            .await;
        let stmt = conn.next_request().await;
        assert_eq!(stmt["method"], "toolsets/list");
        assert!(!visible(&host, "play", Some("g1")).await, "the stale rev was applied");
        conn.reply(&stmt, statement(6, json!([{"toolset": "lobby"}, {"toolset": "game", "instance": "g1"}]), json!([]),
            json!([vis("seek", None, true), vis("roam", None, true), vis("resign", Some("g1"), true)])))
            .await;
        let list = conn.expect_next("tools/list").await;
        conn.reply(&list, tools_page(&arcade_tools(), 6)).await;
        let h = hints_until(&host, |h| h.last_rev == 6 && !h.recovering).await;
        assert_eq!((h.stats.stale, h.stats.recoveries), (1, 1), "{h:?}");
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_04_on_streamable_http_a_stale_rev_is_ignored_without_a_recovery() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Http, HOLD).await;
        conn.hints(changes(2, json!([vis("roam", None, false)]), json!([])))
            .await;
        hints_until(&host, |h| h.last_rev == 2).await;
        // The same rev again, saying otherwise: stale, and normal on HTTP (§5.2).
        conn.hints(changes(2, json!([vis("roam", None, true)]), json!([])))
            .await;
        let h = hints_until(&host, |h| h.stats.stale == 1).await;
        assert_eq!(
            (h.stats.recoveries, h.recovering, h.last_rev),
            (0, false, 2),
            "{h:?}"
        );
        assert!(
            !visible(&host, "roam", None).await,
            "the stale rev was applied"
        );
        assert_eq!(conn.count("toolsets/list"), 1, "only the connect-time read");
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_21_a_gap_on_an_ordered_link_triggers_one_recovery_reading_both_lists() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        // Revs 2 and 4 never come; the second gap is seen while the recovery is under way.
        conn.hints(changes(3, json!([vis("roam", None, false)]), json!([])))
            .await;
        conn.hints(changes(5, json!([vis("seek", None, false)]), json!([])))
            .await;
        let stmt = conn.next_request().await;
        assert_eq!(
            stmt["method"], "toolsets/list",
            "toolsets/list first (§5.2)"
        );
        conn.reply(
            &stmt,
            statement(
                6,
                json!([{"toolset": "lobby"}]),
                json!([]),
                json!([vis("seek", None, true)]),
            ),
        )
        .await;
        let list = conn.next_request().await;
        assert_eq!(list["method"], "tools/list");
        conn.reply(&list, tools_page(&arcade_tools(), 6)).await;
        let h = hints_until(&host, |h| h.last_rev == 6 && !h.recovering).await;
        assert_eq!((h.stats.gaps, h.stats.recoveries), (2, 1), "{h:?}");
        nothing_else_was_sent(&host, &mut conn).await;
        assert_eq!(
            (conn.count("toolsets/list"), conn.count("tools/list")),
            (2, 2)
        );
        // The statement states seek visible and leaves roam out: invisible (§4.3).
        assert!(visible(&host, "seek", None).await);
        assert!(!visible(&host, "roam", None).await);
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_21_a_step_back_on_an_ordered_link_triggers_one_recovery() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        conn.hints(changes(2, json!([vis("roam", None, false)]), json!([])))
            .await;
        conn.hints(changes(2, json!([vis("roam", None, true)]), json!([])))
            .await;
        conn.serve_recovery(lobby_statement(3), &arcade_tools(), 3)
            .await;
        let h = hints_until(&host, |h| h.last_rev == 3 && !h.recovering).await;
        assert_eq!((h.stats.stale, h.stats.recoveries), (1, 1), "{h:?}");
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_22_after_a_recovery_held_and_late_revs_up_to_its_statement_are_ignored() {
    within(async {
        let (gate, mut held) = Gate::new(post_result_with_rev(2));
        let mut server = ScriptedServer::bind(Transport::Http).await;
        let host = start_host(
            server.connector(gate.options()),
            Duration::from_millis(100),
            |_| {},
        );
        let mut conn = server.accept().await;
        conn.connect(arcade_init(), arcade_tools(), 0, Some(lobby_statement(1)))
            .await;
        settled(&host, 1, 1, 6).await;

        // rev 2 rides on a call's result, held back on its POST; rev 3 comes on the GET stream.
        let call = spawn_call(&host, "toolsets--act", json!({"tool": "roam"}));
        let req = conn.expect_next("tools/call").await;
        conn.reply(
            &req,
            json!({"content": [{"type": "text", "text": "You roam."}],
            "_meta": {"mcpl/hints": changes(2, json!([vis("seek", None, false)]), json!([]))}}),
        )
        .await;
        held.recv().await.expect("the result is held");
        let t0 = Instant::now();
        conn.hints(changes(3, json!([vis("roam", None, false)]), json!([])))
            .await;
        // The hold expires: a recovery, whose statement (rev 4) supersedes revs 2 and 3.
        conn.serve_recovery(lobby_statement(4), &arcade_tools(), 4)
            .await;
        assert!(
            t0.elapsed() >= Duration::from_millis(100),
            "held for the window first"
        );
        hints_until(&host, |h| h.last_rev == 4 && !h.recovering).await;
        gate.release();
        let r = call.await.unwrap();
        assert!(r.joined_text().contains("You roam."), "{r:?}");
        let h = hints_until(&host, |h| h.stats.stale == 1).await;
        assert_eq!(
            (
                h.stats.superseded,
                h.stats.recoveries,
                h.last_rev,
                h.recovering
            ),
            (1, 1, 4, false),
            "{h:?}"
        );
        // Neither rev 2 (late) nor rev 3 (held) changed anything: both stay usable.
        for tool in ["seek", "roam"] {
            assert!(visible(&host, tool, None).await, "{tool} is still visible");
        }
        let t = texts(&host.transcript().await.unwrap());
        assert!(!t.contains("No longer usable"), "{t}");
        assert_eq!(conn.count("toolsets/list"), 2);
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_28_hints_on_a_result_that_arrives_after_its_call_timed_out_are_applied() {
    within(async {
        let (_server, host, mut conn) = connected_with(Transport::Ws, HOLD, |s| {
            s.link.request_timeout = Duration::from_millis(200);
        })
        .await;
        open_game(&host, &mut conn, "g1", 2).await;
        host.transcript().await.unwrap();
        let call = spawn_call(&host, "toolsets--act", json!({"tool": "play", "args": {"move": "D4"}}));
        let req = conn.expect_next("tools/call").await;
        // The host gives up and says so to the server.
        let cancelled = conn.recv().await;
        assert_eq!(cancelled["method"], "notifications/cancelled");
        assert_eq!(cancelled["params"]["requestId"], req["id"]);
        let r = call.await.unwrap();
        assert!(r.is_error && r.joined_text().contains("did not answer in time"), "{r:?}");
        // The result comes late: its hints apply (§5.2), and are told as a notice.
        conn.reply(&req, json!({"content": [{"type": "text", "text": "Black D4."}],
            "_meta": {"mcpl/hints": changes(3, json!([vis("play", Some("g1"), false)]), json!([]))}}))
            .await;
        hints_until(&host, |h| h.last_rev == 3).await;
        let t = texts(&host.transcript().await.unwrap());
        assert!(t.contains("No longer usable: play in [arcade/game:g1]"), "{t}");
        assert!(!visible(&host, "play", Some("g1")).await, "the late result's hints applied");
        host.stop().await;
    })
    .await;
}

/// §5.2 and vector 29, host side: on an unordered link a call whose answer broke off (the
/// transport answers it CONNECTION_CLOSED: a Streamable HTTP POST that failed after the
/// server read it) may be carried out by the server only after the host's recovery read
/// the state, and its result, at a rev above the statement's, is lost too: nothing later
/// would show the host the gap. The host cancels the call before it reads the state
/// again, so the server sends what the call changes as `tools/hints` (vector 29): here
/// the game's end, which the agent is told once.
#[test]
fn vector_29_a_call_whose_answer_broke_off_is_cancelled_before_the_state_is_read_again() {
    support::paused(async {
        let (_server, host, mut conn) = connected(Transport::MemoryUnordered, HOLD).await;
        open_game(&host, &mut conn, "g1", 2).await;
        host.transcript().await.unwrap();
        let call = spawn_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "args": {"move": "D4"}}),
        );
        let req = conn.expect_next("tools/call").await;
        conn.send(msg::error(
            &req["id"],
            -32000,
            "Streamable HTTP: the POST failed",
        ))
        .await;
        let r = call.await.unwrap();
        assert!(r.is_error, "{r:?}");
        // The call is cancelled first, then the state read again.
        let cancelled = conn.recv().await;
        assert_eq!(
            cancelled["method"], "notifications/cancelled",
            "{cancelled}"
        );
        assert_eq!(cancelled["params"]["requestId"], req["id"]);
        // The statement is answered before the server carried the call out: g1 still open.
        let in_play = game_statement("g1", 3);
        conn.serve_recovery(in_play, &arcade_tools(), 3).await;
        hints_until(&host, |h| h.last_rev == 3 && !h.recovering).await;
        // Then it is carried out: cancelled, it sends its changes as tools/hints.
        let end = json!({"toolset": "game", "instance": "g1", "state": "closed",
                         "reason": "Black won by 7.5", "ended": "end-1"});
        conn.hints(changes(4, json!([]), json!([end]))).await;
        hints_until(&host, |h| h.last_rev == 4).await;
        let t = texts(&host.transcript().await.unwrap());
        assert_eq!(
            t.matches("- Closed [arcade/game:g1]: \"Black won by 7.5\" (from arcade).")
                .count(),
            1,
            "{t}"
        );
        assert!(!visible(&host, "play", Some("g1")).await);
        host.stop().await;
    });
}

#[actix::test]
async fn vector_35_a_push_seen_before_has_its_hints_ignored_and_makes_no_false_gap() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        open_game(&host, &mut conn, "g1", 2).await;
        conn.push(
            100,
            "e-1",
            "White played E5.",
            Some(changes(
                3,
                json!([vis("play", Some("g1"), false)]),
                json!([]),
            )),
        )
        .await;
        // The same event again, with hints it must not carry: ignored, rev 4 still read.
        conn.push(
            101,
            "e-1",
            "White played E5.",
            Some(changes(
                4,
                json!([vis("play", Some("g1"), true)]),
                json!([]),
            )),
        )
        .await;
        conn.hints(changes(
            5,
            json!([vis("resign", Some("g1"), false)]),
            json!([]),
        ))
        .await;
        let h = hints_until(&host, |h| h.last_rev == 5).await;
        assert_eq!(
            (h.stats.duplicates, h.stats.gaps, h.stats.recoveries),
            (1, 0, 0),
            "{h:?}"
        );
        assert!(
            !visible(&host, "play", Some("g1")).await,
            "the duplicate's hints applied"
        );
        nothing_else_was_sent(&host, &mut conn).await;
        assert_eq!(conn.count("toolsets/list"), 1);
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_37_streamable_http_holds_an_early_rev_and_applies_it_once_the_missing_one_comes() {
    within(async {
        let (gate, mut held) = Gate::new(post_result_with_rev(2));
        let mut server = ScriptedServer::bind(Transport::Http).await;
        // A long window: this half is about order, not expiry.
        let host = start_host(
            server.connector(gate.options()),
            Duration::from_secs(600),
            |_| {},
        );
        let mut conn = server.accept().await;
        conn.connect(arcade_init(), arcade_tools(), 0, Some(lobby_statement(1)))
            .await;
        settled(&host, 1, 1, 6).await;

        let call = spawn_call(&host, "toolsets--act", json!({"tool": "roam"}));
        let req = conn.expect_next("tools/call").await;
        conn.reply(
            &req,
            json!({"content": [{"type": "text", "text": "You roam."}],
            "_meta": {"mcpl/hints": changes(2, json!([vis("seek", None, false)]), json!([]))}}),
        )
        .await;
        held.recv().await.expect("the result is held");
        conn.hints(changes(3, json!([vis("roam", None, false)]), json!([])))
            .await;
        let h = hints_until(&host, |h| h.held == [3]).await;
        assert_eq!(h.last_rev, 1);
        gate.release();
        let r = call.await.unwrap();
        let h = hints_until(&host, |h| h.last_rev == 3).await;
        assert_eq!(
            (
                h.stats.held,
                h.stats.resolved_in_window,
                h.stats.recoveries,
                h.held.len()
            ),
            (1, 1, 0, 0),
            "{h:?}"
        );
        // rev 2's change rides on its result; rev 3's is a notice.
        assert!(
            r.joined_text()
                .contains("No longer usable: seek in [arcade/lobby]"),
            "{r:?}"
        );
        assert!(!visible(&host, "seek", None).await && !visible(&host, "roam", None).await);
        // Where each change is told is the rule here: the held rev 3's, as a notice.
        let t = texts(&host.transcript().await.unwrap());
        assert!(t.contains("No longer usable: roam in [arcade]"), "{t}");
        assert_eq!(conn.count("toolsets/list"), 1, "no recovery");
        host.stop().await;
    })
    .await;
}

/// The hold expires: the host recovers, and the recovery's statement supersedes what was
/// held. Over Streamable HTTP on the real clock, then over an unordered in-process link on
/// tokio's paused clock, where the window is measured exactly.
async fn a_hold_that_expires_recovers(transport: Transport, exact: bool) {
    let mut server = ScriptedServer::bind(transport).await;
    let host = start_host(server.connector(Default::default()), HOLD, |_| {});
    let mut conn = server.accept().await;
    conn.connect(arcade_init(), arcade_tools(), 0, Some(lobby_statement(1)))
        .await;
    settled(&host, 1, 1, 6).await;

    // rev 2 is never written; rev 3 is early and held. The window starts when the host
    // reads rev 3, which is after it was written.
    let written_at = Instant::now();
    conn.hints(changes(3, json!([vis("roam", None, false)]), json!([])))
        .await;
    let h = hints_until(&host, |h| h.held == [3]).await;
    assert_eq!(h.last_rev, 1);
    let stmt = conn.expect_next("toolsets/list").await;
    let waited = written_at.elapsed();
    assert!(waited >= HOLD, "the recovery started after {waited:?}");
    if exact {
        assert_eq!(waited, HOLD, "recovery starts when the window passes");
    }
    conn.reply(&stmt, lobby_statement(4)).await;
    let list = conn.expect_next("tools/list").await;
    conn.reply(&list, tools_page(&arcade_tools(), 4)).await;
    let h = hints_until(&host, |h| h.last_rev == 4 && !h.recovering).await;
    assert_eq!(
        (
            h.stats.expired,
            h.stats.superseded,
            h.stats.recoveries,
            h.held.len()
        ),
        (1, 1, 1, 0),
        "{h:?}"
    );
    assert!(visible(&host, "roam", None).await, "rev 3 was superseded");
    let t = texts(&host.transcript().await.unwrap());
    assert!(!t.contains("No longer usable"), "{t}");
    host.stop().await;
}

#[actix::test]
async fn vector_37_streamable_http_recovers_when_a_hold_expires() {
    within(a_hold_that_expires_recovers(Transport::Http, false)).await;
}

#[test]
fn vector_37_an_unordered_link_recovers_exactly_when_the_250_ms_hold_expires() {
    support::paused(a_hold_that_expires_recovers(
        Transport::MemoryUnordered,
        true,
    ));
}
