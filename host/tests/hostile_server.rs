//! A hostile server against our host (issue 7, "Hostile peers"): revs that go backwards or
//! start over, gaps that never close, hints from a server that never advertised
//! `toolHints`, definitions whose `inputSchema` is a bomb, floods of
//! `mcpl/manifestChanged` and of pushes, and messages past the size limit.
//!
//! Each test drives a scripted server over a real WebSocket (or, where the test measures
//! time, an in-process link on tokio's paused clock) and proves three things: the host
//! stays up and answers the agent, what it keeps is bounded, and every message it answers
//! is answered. Cases the conformance vectors already cover (one step back, one gap, hints
//! on results and `tools/hints` without `toolHints`) are extended here, not repeated.

use crate::support;

use mcpl_host::host::ShownKind;
use mcpl_testkit::within;
use mcpl_transport::ClientOptions;
use serde_json::{Value, json};
use std::time::Duration;
use support::server::*;
use tokio::time::Instant;

const HOLD: Duration = Duration::from_millis(250);

/// The host's delay before it reads again a statement that did not count
/// (`start_host` sets it).
const RETRY: Duration = Duration::from_millis(50);

/// What "promptly" means for the agent's answer on a debug build on a shared machine: far
/// below what an unbounded check (a backtracking regex, an exponential `$ref` walk) takes.
const PROMPT: Duration = Duration::from_secs(10);

/// The lobby open and `tools` visible (outside instances), at `rev`.
fn visible_statement(rev: u64, tools: &[&str]) -> Value {
    let vis: Vec<Value> = tools.iter().map(|t| vis(t, None, true)).collect();
    statement(rev, json!([{"toolset": "lobby"}]), json!([]), json!(vis))
}

// ---- revs that go backwards ------------------------------------------------------------

#[actix::test]
async fn a_rev_counter_that_starts_over_is_never_applied_and_each_burst_costs_one_recovery() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        conn.hints(changes(2, json!([vis("roam", None, false)]), json!([])))
            .await;
        hints_until(&host, |h| h.last_rev == 2).await;
        host.transcript().await.unwrap();
        let mut last = 2;
        let mut stale = 0;
        for burst in 1..=3u64 {
            // The server's counter starts over (from 0, which no server may send): every
            // one of these revs is at or below `last`, and each would make roam usable.
            for rev in 0..=last {
                conn.hints(changes(
                    rev,
                    json!([vis("roam", None, true), vis("seek", None, false)]),
                    json!([]),
                ))
                .await;
                stale += 1;
            }
            last += 1;
            conn.serve_recovery(visible_statement(last, &["seek"]), &arcade_tools(), last)
                .await;
            let h = hints_until(&host, |h| h.last_rev == last && !h.recovering).await;
            assert_eq!(
                (h.stats.recoveries, h.stats.stale),
                (burst, stale),
                "one recovery per burst, every rev of it stale: {h:?}"
            );
        }
        let t = texts(&host.transcript().await.unwrap());
        assert!(
            !t.contains("roam") && !t.contains("seek"),
            "nothing told: {t}"
        );
        assert!(!is_usable(&host, "roam").await, "no stale rev was applied");
        assert!(is_usable(&host, "seek").await);
        nothing_else_was_sent(&host, &mut conn).await;
        assert_eq!(
            conn.count("toolsets/list"),
            4,
            "the connect-time read and 3"
        );
        host.stop().await;
    })
    .await;
}

#[test]
fn a_statement_behind_the_last_rev_is_read_again_no_faster_than_the_retry_delay() {
    support::paused(async {
        let (_server, host, mut conn) = connected(Transport::MemoryOrdered, HOLD).await;
        conn.hints(changes(2, json!([vis("roam", None, false)]), json!([])))
            .await;
        conn.hints(changes(4, json!([]), json!([]))).await;
        // Every statement the server gives is behind rev 2: none counts, and the host
        // reads again, paced by its retry delay (never in a tight loop).
        let mut reads = Vec::new();
        for _ in 0..20 {
            let stmt = conn.expect_next("toolsets/list").await;
            reads.push(Instant::now());
            conn.reply(&stmt, visible_statement(1, &["seek", "roam"]))
                .await;
        }
        for pair in reads.windows(2) {
            let gap = pair[1] - pair[0];
            // At most half of the wait is taken off at random (the retry jitter).
            assert!(gap >= RETRY / 2, "read again after {gap:?}");
        }
        let h = hints_until(&host, |h| h.stats.stale >= 20).await;
        assert_eq!(h.last_rev, 2, "no stale statement was applied: {h:?}");
        assert!(!is_usable(&host, "roam").await);
        // A statement ahead of the last rev ends it.
        conn.serve_recovery(visible_statement(5, &["seek"]), &arcade_tools(), 5)
            .await;
        hints_until(&host, |h| h.last_rev == 5 && !h.recovering).await;
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    });
}

// ---- gaps that never close -------------------------------------------------------------

#[test]
fn a_forever_gap_costs_one_recovery_each_time_and_the_host_then_stays_quiet() {
    support::paused(async {
        let (_server, host, mut conn) = connected(Transport::MemoryUnordered, HOLD).await;
        let mut last = 1;
        for round in 1..=20u64 {
            // rev last+1 never comes; last+2 is held for the window, then recovered.
            let written = Instant::now();
            conn.hints(changes(
                last + 2,
                json!([vis("roam", None, false)]),
                json!([]),
            ))
            .await;
            let stmt = conn.expect_next("toolsets/list").await;
            assert_eq!(written.elapsed(), HOLD, "held exactly the window first");
            last += 3;
            conn.reply(&stmt, lobby_statement(last)).await;
            let list = conn.expect_next("tools/list").await;
            conn.reply(&list, tools_page(&arcade_tools(), last)).await;
            let h = hints_until(&host, |h| h.last_rev == last && !h.recovering).await;
            assert_eq!(
                (h.stats.recoveries, h.stats.superseded, h.held.len()),
                (round, round, 0),
                "{h:?}"
            );
        }
        assert!(
            is_usable(&host, "roam").await,
            "every early rev was superseded"
        );
        // Ten minutes on, the host has sent nothing of its own.
        tokio::time::advance(Duration::from_secs(600)).await;
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    });
}

#[test]
fn a_flood_of_early_revs_beyond_a_forever_gap_is_held_within_bounds_and_recovered_once() {
    support::paused(async {
        let (_server, host, mut conn) = connected(Transport::MemoryUnordered, HOLD).await;
        // rev 2 never comes; 3..=2002 are early.
        for rev in 3..=2002u64 {
            let visible = rev % 2 == 0;
            conn.hints(changes(rev, json!([vis("roam", None, visible)]), json!([])))
                .await;
        }
        let h = hints_until(&host, |h| h.stats.gaps == 2000).await;
        assert!(
            h.held.len() <= mcpl_host::state::DEFAULT_MAX_HELD,
            "held {}",
            h.held.len()
        );
        assert!(h.recovering, "a full hold recovers at once: {h:?}");
        conn.serve_recovery(lobby_statement(2003), &arcade_tools(), 2003)
            .await;
        let h = hints_until(&host, |h| h.last_rev == 2003 && !h.recovering).await;
        assert_eq!(
            (h.stats.recoveries, h.stats.applied, h.held.len()),
            (1, 0, 0),
            "{h:?}"
        );
        assert!(is_usable(&host, "roam").await, "the statement wins");
        tokio::time::advance(Duration::from_secs(600)).await;
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    });
}

/// A held rev that a recovery's statement does not reach: the host read it before it asked
/// for the statement, so an honest server wrote it before the statement took its rev. A
/// statement below it proves it bogus; it is dropped as stale, rather than recovered once
/// per hold window for ever.
#[test]
fn an_early_rev_no_statement_can_reach_costs_one_recovery_not_one_per_hold_window() {
    support::paused(async {
        let (_server, host, mut conn) = connected(Transport::MemoryUnordered, HOLD).await;
        // A rev no honest server reaches: every later statement is below it.
        conn.hints(changes(
            u64::MAX,
            json!([vis("roam", None, false)]),
            json!([]),
        ))
        .await;
        conn.serve_recovery(lobby_statement(2), &arcade_tools(), 2)
            .await;
        hints_until(&host, |h| h.last_rev == 2 && !h.recovering).await;
        assert!(
            is_usable(&host, "roam").await,
            "the bogus rev was not applied"
        );
        // The statement was asked for after the host had read the bogus rev, so the server
        // cannot have written it after the statement: nothing is left to wait for.
        tokio::time::advance(Duration::from_secs(60)).await;
        let h = hints_until(&host, |_| true).await;
        assert_eq!(h.stats.recoveries, 1, "{h:?}");
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    });
}

// ---- hints from a server without toolHints ---------------------------------------------

#[actix::test]
async fn hints_on_pushes_and_at_any_rev_from_a_server_without_tool_hints_are_ignored() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host(server.connector(ClientOptions::default()), HOLD, |_| {});
        let mut conn = server.accept().await;
        let mut manifest = arcade_manifest();
        manifest.as_object_mut().unwrap().remove("toolHints");
        // Its tools/list names a rev too: ignored like every other hint.
        conn.connect(init_with(Some(manifest)), arcade_tools(), 7, None)
            .await;
        host.wait_for(|s| {
            s.server("arcade")
                .is_some_and(|a| a.ready && a.listed_tools == 6)
        })
        .await
        .unwrap();
        let tools = host.tools_json().await.unwrap();
        host.transcript().await.unwrap();

        let open_g1 = json!([{"toolset": "game", "instance": "g1", "state": "open"}]);
        let cases = [
            (
                1,
                changes(1, json!([vis("play", Some("g1"), true)]), open_g1.clone()),
            ),
            (2, changes(9, json!([vis("roam", None, false)]), json!([]))),
            (3, changes(0, json!([vis("seek", None, false)]), json!([]))),
            (4, changes(u64::MAX, json!([]), open_g1)),
        ];
        for (id, hints) in cases {
            conn.push(id, &format!("e{id}"), &format!("event {id}"), Some(hints))
                .await;
            let answer = conn.answer_to(id).await;
            assert_eq!(answer["result"]["accepted"], true, "{answer}");
        }
        // A duplicate event id and a coalesced push: neither starts anything.
        conn.push(
            5,
            "e1",
            "event 1 again",
            Some(changes(2, json!([]), json!([]))),
        )
        .await;
        assert_eq!(conn.answer_to(5).await["id"], 5);
        conn.hints(changes(3, json!([vis("roam", None, true)]), json!([])))
            .await;

        nothing_else_was_sent(&host, &mut conn).await;
        assert_eq!(conn.count("toolsets/list"), 0, "no statement, no recovery");
        let s = host.status();
        let a = s.server("arcade").unwrap();
        assert!(
            !a.hints_count && a.hints.is_none() && a.open.is_empty(),
            "{a:?}"
        );
        let shown = host.transcript().await.unwrap();
        let t = texts(&shown);
        for id in 1..=4 {
            assert!(
                t.contains(&format!("event {id}")),
                "each push is shown: {t}"
            );
        }
        for word in ["Usable", "usable", "Opened", "Closed"] {
            assert!(!t.contains(word), "no hint was told: {t}");
        }
        assert_eq!(
            host.tools_json().await.unwrap(),
            tools,
            "the list is untouched"
        );
        host.stop().await;
    })
    .await;
}

// ---- a definition whose schema is a bomb -----------------------------------------------

/// `levels` nested objects, each with one property `a` (JSON depth `2 * levels + 1`).
fn deep_schema(levels: usize) -> Value {
    let mut s = json!({"type": "string"});
    for _ in 0..levels {
        s = json!({"type": "object", "properties": {"a": s}, "required": ["a"]});
    }
    s
}

/// Arguments that fit [`deep_schema`]`(levels)` but for the innermost value, a number.
fn deep_args(levels: usize) -> Value {
    let mut v = json!(7);
    for _ in 0..levels {
        v = json!({ "a": v });
    }
    v
}

/// A `$ref` chain where each level refers to the next twice: walking it naively takes
/// 2^levels steps.
fn ref_bomb(levels: usize) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..levels {
        let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
        defs.insert(format!("d{i}"), json!({"anyOf": [next.clone(), next]}));
    }
    defs.insert(format!("d{levels}"), json!({"type": "integer"}));
    json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}},
           "required": ["x"], "$defs": defs})
}

/// A schema of `n` alternatives.
fn wide_schema(n: usize) -> Value {
    let branches: Vec<Value> = (0..n)
        .map(|i| json!({"type": "object", "properties": {"k": {"const": i}}}))
        .collect();
    json!({"anyOf": branches})
}

/// One property whose `enum` has `n` entries (about 7 bytes each).
fn huge_enum(n: usize) -> Value {
    let entries: Vec<u64> = (0..n as u64).map(|i| 100_000 + i).collect();
    json!({"type": "object", "properties": {"pick": {"enum": entries}}, "required": ["pick"]})
}

/// A backtracking regex's worst case, beside a bound the host can check.
fn riddle_schema() -> Value {
    json!({"type": "object", "properties": {
        "word": {"type": "string", "pattern": "^(a+)+$", "maxLength": 8}},
        "required": ["word"]})
}

fn dynamic(name: &str, schema: Value) -> Value {
    listed(name, json!({"mcpl/presence": "dynamic"}), schema)
}

/// The agent calls `tool` through `act`; the host, which leaves the check to the server,
/// sends it at once; while it waits the host answers a `look`; the server refuses it.
async fn left_to_the_server(
    host: &mcpl_host::host::HostHandle,
    conn: &mut Conn,
    tool: &str,
    args: Value,
) {
    let started = std::time::Instant::now();
    let call = spawn_call(host, "toolsets--act", json!({"tool": tool, "args": args}));
    let req = conn.expect_next("tools/call").await;
    assert_eq!(req["params"]["name"], tool);
    assert_eq!(req["params"]["arguments"], args, "sent as given");
    let (err, look) = local_call(host, "toolsets--look", json!({})).await;
    assert!(
        !err && look.contains(tool),
        "the host answers meanwhile: {look}"
    );
    conn.reply(
        &req,
        json!({"isError": true, "content": [{"type": "text", "text": format!("{tool}: the arguments do not fit")}]}),
    )
    .await;
    let r = call.await.unwrap();
    assert!(r.is_error, "{r:?}");
    assert!(
        r.joined_text()
            .contains(&format!("{tool}: the arguments do not fit")),
        "{r:?}"
    );
    let took = started.elapsed();
    assert!(took < PROMPT, "{tool} took {took:?}");
}

#[actix::test]
async fn a_schema_bomb_is_left_to_the_server_at_once_and_the_host_stays_responsive() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host(server.connector(ClientOptions::default()), HOLD, |_| {});
        let mut conn = server.accept().await;
        let mut tools = arcade_tools();
        let bombs = [
            dynamic("deep", deep_schema(50)),
            dynamic("maze", ref_bomb(40)),
            dynamic("wide", wide_schema(10_000)),
            dynamic("pick", huge_enum(200_000)),
            dynamic("riddle", riddle_schema()),
        ];
        tools.as_array_mut().unwrap().extend(bombs);
        let visible = ["seek", "roam", "deep", "maze", "wide", "pick", "riddle"];
        conn.connect(
            arcade_init(),
            tools.clone(),
            0,
            Some(visible_statement(1, &visible)),
        )
        .await;
        settled(&host, 1, 1, 11).await;

        left_to_the_server(&host, &mut conn, "deep", deep_args(50)).await;
        left_to_the_server(&host, &mut conn, "maze", json!({"x": "not a number"})).await;
        left_to_the_server(&host, &mut conn, "wide", json!({"k": -1})).await;
        left_to_the_server(&host, &mut conn, "pick", json!({"pick": 1})).await;
        // The pattern is never evaluated; only the pattern is broken, so the call goes.
        left_to_the_server(&host, &mut conn, "riddle", json!({"word": "aaaa!"})).await;

        // What the host can check within its bounds it refuses itself, without running
        // the regex that sits beside it, and sends nothing.
        let started = std::time::Instant::now();
        let word = format!("{}!", "a".repeat(5_000));
        let (err, why) = local_call(
            &host,
            "toolsets--act",
            json!({"tool": "riddle", "args": {"word": word}}),
        )
        .await;
        assert!(err && why.contains("/word"), "{why}");
        assert!(started.elapsed() < PROMPT);

        // The same bomb as a hint's definition, on a tool whose listed schema was tame.
        conn.hints(json!({"rev": 2, "tools": [
            {"name": "roam", "definition": {"inputSchema": ref_bomb(40)}}]}))
            .await;
        hints_until(&host, |h| h.last_rev == 2).await;
        left_to_the_server(&host, &mut conn, "roam", json!({"x": []})).await;
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn a_definition_nested_too_deep_to_read_is_refused_and_its_loss_recovered() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        // Deeper than any JSON the host reads: the message does not decode.
        conn.hints(json!({"rev": 2, "tools": [
            {"name": "roam", "definition": {"inputSchema": deep_schema(200)}}]}))
            .await;
        let refusal = conn.recv().await;
        assert_eq!(
            (&refusal["id"], &refusal["error"]["code"]),
            (&Value::Null, &json!(-32700)),
            "a parse error: {refusal}"
        );
        // rev 2 was lost; the next one shows the gap, and a recovery restates everything.
        conn.hints(changes(3, json!([]), json!([]))).await;
        conn.serve_recovery(lobby_statement(4), &arcade_tools(), 4)
            .await;
        let h = hints_until(&host, |h| h.last_rev == 4 && !h.recovering).await;
        assert_eq!(h.stats.recoveries, 1, "{h:?}");
        let def = host.definition(None, "roam", None).await.unwrap().unwrap();
        assert_eq!(def.input_schema, json!({"type": "object"}));
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    })
    .await;
}

// ---- floods ----------------------------------------------------------------------------

#[actix::test]
async fn spec_17_8_a_flood_of_manifest_changes_is_read_at_a_bounded_rate() {
    within(async {
        // SPEC §17.8: the host bounds the fetch rate per connection and coalesces.
        const MIN: Duration = Duration::from_millis(600);
        // The host counts the interval from when it sent a fetch; the test can only time
        // when it read one, later by however long a loaded machine took to deliver it. So
        // a gap is judged against a quarter of the interval: a fetch read late by up to
        // 450 ms still passes, and without the bound a fetch follows in a millisecond.
        const SLACK_FLOOR: Duration = Duration::from_millis(150);
        let (_server, host, mut conn) = connected_with(Transport::Ws, HOLD, |c| {
            c.link.manifest_min_interval = MIN;
        })
        .await;
        let changed = json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
                             "params": {"revision": "r2", "domains": ["toolsets"]}});
        for _ in 0..1000 {
            conn.send(changed.clone()).await;
        }
        let first = conn.expect_next("mcpl/manifest").await;
        let start = std::time::Instant::now();
        let mut last = start;
        // While it is unanswered the host sends no other.
        nothing_else_was_sent(&host, &mut conn).await;
        conn.reply(&first, arcade_manifest()).await;
        // Every change read meanwhile is one fetch, no sooner than the interval allows.
        let second = conn.expect_next("mcpl/manifest").await;
        assert!(last.elapsed() >= SLACK_FLOOR, "{:?}", last.elapsed());
        last = std::time::Instant::now();
        conn.reply(&second, arcade_manifest()).await;
        nothing_else_was_sent(&host, &mut conn).await;
        assert_eq!(conn.count("mcpl/manifest"), 2);

        // A server that floods again within the interval: each burst is one fetch, at the
        // interval's end, never one per change.
        for round in 1..=4 {
            for _ in 0..50 {
                conn.send(changed.clone()).await;
            }
            let read = conn.expect_next("mcpl/manifest").await;
            assert!(
                last.elapsed() >= SLACK_FLOOR,
                "round {round}: {:?}",
                last.elapsed()
            );
            last = std::time::Instant::now();
            conn.reply(&read, arcade_manifest()).await;
            nothing_else_was_sent(&host, &mut conn).await;
            assert_eq!(conn.count("mcpl/manifest"), 2 + round);
        }
        // Six fetches: at least five intervals between the first and the last, whatever
        // the lag of a single read (only the first read's lag shortens the whole).
        assert!(
            start.elapsed() >= MIN * 5 - (MIN - SLACK_FLOOR),
            "{:?}",
            start.elapsed()
        );
        assert!(host.status().server("arcade").unwrap().settled);
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn a_flood_of_pushes_is_answered_one_by_one_told_within_a_turns_bound_and_the_history_bounded()
 {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        let mut told = host.subscribe();
        const PUSHES: i64 = 5_000;
        const CHUNK: i64 = 250;
        for start in (0..PUSHES).step_by(CHUNK as usize) {
            for i in start..start + CHUNK {
                // Each carries the next rev and flips roam.
                let hints = changes(
                    i as u64 + 2,
                    json!([vis("roam", None, i % 2 == 1)]),
                    json!([]),
                );
                conn.push(
                    1_000 + i,
                    &format!("e{i}"),
                    &format!("push #{i}."),
                    Some(hints),
                )
                .await;
            }
            for i in start..start + CHUNK {
                let answer = conn.recv().await;
                assert_eq!(
                    (&answer["id"], &answer["result"]["accepted"]),
                    (&json!(1_000 + i), &json!(true)),
                    "{answer}"
                );
            }
        }
        let h = hints_until(&host, |h| h.last_rev == PUSHES as u64 + 1).await;
        assert_eq!(
            (h.stats.applied as i64, h.stats.recoveries, h.stats.gaps),
            (PUSHES, 0, 0),
            "{h:?}"
        );
        assert!(
            is_usable(&host, "roam").await,
            "the last push made it usable"
        );
        nothing_else_was_sent(&host, &mut conn).await;

        // What one turn shows is bounded (issue #37 item 5): the first pushes are told, in
        // order, the rest left out, and the agent's next turn is told how many.
        let mut pushes = 0;
        let mut bytes = 0;
        let mut left_out_said = false;
        while let Ok(s) = told.try_recv() {
            bytes += s.text.len();
            left_out_said |= s.text.contains("the rest are left out");
            if s.kind == ShownKind::Push {
                assert!(
                    s.text.contains(&format!("push #{pushes}.")),
                    "in order: {}",
                    s.text
                );
                pushes += 1;
            }
        }
        assert!(pushes > 0 && pushes < PUSHES, "{pushes} told");
        assert!(
            bytes <= mcpl_host::state::host_core::DEFAULT_MAX_TURN_BYTES,
            "{bytes} B told"
        );
        assert!(left_out_said, "the turn said it left the rest out");
        host.start_turn().await.unwrap();
        let kept = host.transcript().await.unwrap();
        assert!(
            kept.len() <= mcpl_host::state::conversation::DEFAULT_HISTORY,
            "{} messages kept",
            kept.len()
        );
        let counted = format!("{} events were left out", PUSHES - pushes);
        assert!(
            kept.iter().any(|s| s.text.contains(&counted)),
            "the next turn says how many: {:?}",
            kept.last()
        );
        host.stop().await;
    })
    .await;
}

// ---- messages past the size limit ------------------------------------------------------

#[actix::test]
async fn oversized_messages_are_refused_the_link_goes_on_and_past_the_ceiling_it_reconnects() {
    within(async {
        const LIMIT: usize = 64 * 1024;
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let options = ClientOptions {
            max_message_size: LIMIT,
            ..Default::default()
        };
        let host = start_host(server.connector(options), HOLD, |s| {
            s.link.request_timeout = Duration::from_secs(2);
        });
        let mut conn = server.accept().await;
        conn.connect(arcade_init(), arcade_tools(), 0, Some(lobby_statement(1)))
            .await;
        settled(&host, 1, 1, 6).await;
        let big = "x".repeat(LIMIT + 1);

        // A hint past the limit is refused unread: the host recovers at once (the next rev,
        // read meanwhile, is covered by that recovery's statement).
        conn.hints(json!({"rev": 2, "tools": [
            {"name": "roam", "visible": false, "definition": {"description": big}}]}))
            .await;
        conn.hints(changes(3, json!([]), json!([]))).await;
        conn.serve_recovery(lobby_statement(4), &arcade_tools(), 4)
            .await;
        let h = hints_until(&host, |h| h.last_rev == 4 && !h.recovering).await;
        assert_eq!((h.stats.gaps, h.stats.recoveries), (1, 1), "{h:?}");

        // A result past the limit: the call fails clearly when its time is up, and what
        // the result carried is read again at once.
        let call = spawn_call(&host, "toolsets--act", json!({"tool": "roam"}));
        let req = conn.expect_next("tools/call").await;
        conn.reply(&req, json!({"content": [{"type": "text", "text": big}]}))
            .await;
        conn.serve_recovery(lobby_statement(5), &arcade_tools(), 5)
            .await;
        let r = call.await.unwrap();
        assert!(r.is_error, "{r:?}");
        assert!(r.joined_text().contains("did not answer in time"), "{r:?}");
        let h = hints_until(&host, |h| h.last_rev == 5 && !h.recovering).await;
        assert_eq!(h.stats.recoveries, 2, "{h:?}");
        nothing_else_was_sent(&host, &mut conn).await;

        // Past the transport's hard ceiling the link is closed; the host reconnects.
        let huge = "y".repeat(LIMIT * mcpl_transport::ws::HARD_CEILING_FACTOR + 1);
        conn.send(json!({"jsonrpc": "2.0", "method": "notifications/message",
                         "params": {"level": "info", "data": huge}}))
            .await;
        let mut conn = server.accept().await;
        conn.connect(arcade_init(), arcade_tools(), 0, Some(lobby_statement(1)))
            .await;
        settled(&host, 2, 1, 6).await;
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    })
    .await;
}

/// A message the transport refused as too large may have carried hint changes (a result's,
/// a push's, a `tools/hints`); on a quiet connection no later rev would show the gap, so
/// the host reads the state at once (§5.2: "never lose a change").
#[actix::test]
async fn a_message_refused_as_too_large_starts_a_recovery_at_once() {
    within(async {
        const LIMIT: usize = 64 * 1024;
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let options = ClientOptions {
            max_message_size: LIMIT,
            ..Default::default()
        };
        let host = start_host(server.connector(options), HOLD, |_| {});
        let mut conn = server.accept().await;
        conn.connect(arcade_init(), arcade_tools(), 0, Some(lobby_statement(1)))
            .await;
        settled(&host, 1, 1, 6).await;
        conn.hints(json!({"rev": 2, "tools": [
            {"name": "roam", "visible": false, "definition": {"description": "x".repeat(LIMIT)}}]}))
            .await;
        // Nothing follows: the host itself must notice the loss and read the state.
        let first = tokio::time::timeout(Duration::from_secs(5), conn.next_request())
            .await
            .expect("no recovery after a message was lost");
        assert_eq!(first["method"], "toolsets/list", "{first}");
        conn.reply(&first, lobby_statement(3)).await;
        let list = conn.expect_next("tools/list").await;
        conn.reply(&list, tools_page(&arcade_tools(), 3)).await;
        hints_until(&host, |h| h.last_rev == 3 && !h.recovering).await;
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    })
    .await;
}
