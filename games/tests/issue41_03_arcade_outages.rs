//! Issue #41, what the nodes ride through (the "Done when" lines after the takeover):
//! three `mcpl-arcade serve --postgres URL --nats URL --node NAME` nodes on a private
//! PostgreSQL and a private `nats-server`, both started by the test on loopback (the
//! helpers are `issue41_02_arcade_nodes`'s). Shown from outside, in raw modern POSTs:
//!
//! - PostgreSQL stopped as `pg_ctl stop -m immediate` stops it, mid-game, and started
//!   again: a move meanwhile gets a clear, retryable error; the owner, whose lease can no
//!   longer be renewed, stops (status 3); once the database is back a standby takes the
//!   lease and serves, every acknowledged move there, and play goes on;
//! - two nodes hammering one principal at once: its versions stay consecutive (every
//!   change one version, none given twice, none skipped) and no change is lost, as the
//!   node that loads the committed records after a takeover states them;
//! - a game ending on the new owner after a takeover: the player who was away is told
//!   the end once (its next result, a full statement from the new life, carries the
//!   closed entry with its ended id; the one after does not), although it had been told
//!   earlier changes before the kill.
//!
//! - the owner gone and PostgreSQL restarted while the owner's lease row lives on,
//!   unexpired: the node started again under the owner's name takes the arcade back at
//!   once, the game where it was, rather than standing by forwarding to itself until its
//!   own old lease expires.
//!
//! Every process is stopped by its own id; nothing sleeps: the test awaits the nodes' log
//! lines and the answers, each within the testkit's limit.

use crate::issue41_02_arcade_nodes::{
    Node, TTL_MS, board, call, cluster, go_g1_against_the_bot, is_retryable, modern,
    play_some_point, post, stones,
};
use crate::support::text_of;

use mcpl_testkit::nats::Nats;
use mcpl_testkit::postgres::Postgres;
use mcpl_testkit::within;
use serde_json::{Value, json};

/// A modern request of a host that declares `mcpl/core` and holds every change up to
/// `since` (`docs/rfc014-stateless.md` §3.2): its result carries `mcpl/hints`. A `_meta`
/// in `params` is kept (`mcpl/instance`).
pub(crate) fn hinted(id: i64, method: &str, mut params: Value, since: u64) -> Value {
    let own = params
        .as_object_mut()
        .and_then(|p| p.remove("_meta"))
        .unwrap_or_else(|| json!({}));
    let mut body = modern(id, method, params);
    let meta = &mut body["params"]["_meta"];
    for (k, v) in own.as_object().into_iter().flatten() {
        meta[k] = v.clone();
    }
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({"extensions": {"mcpl/core":
        {"version": "0.5", "toolHints": true, "pushEvents": true}}});
    meta["mcpl/since"] = json!(since);
    body
}

/// A result's `mcpl/hints`.
pub(crate) fn hints(answer: &Value) -> &Value {
    &answer["result"]["_meta"]["mcpl/hints"]
}

/// A result's principal version.
pub(crate) fn version(answer: &Value) -> u64 {
    hints(answer)["version"]
        .as_u64()
        .unwrap_or_else(|| panic!("no mcpl/hints version: {answer:#}"))
}

/// The toolset entries of `h` for `instance`.
pub(crate) fn entries_of<'a>(h: &'a Value, instance: &str) -> Vec<&'a Value> {
    h["toolsets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["instance"] == instance)
        .collect()
}

/// Waits until one of `candidates` owns the arcade: that one.
pub(crate) async fn new_owner<'a>(candidates: &[&'a Node]) -> &'a Node {
    let lines: Vec<String> = candidates
        .iter()
        .map(|n| format!("node {:?} owns the arcade and serves it", n.name))
        .collect();
    let mut logs: Vec<_> = candidates.iter().map(|n| n.log.clone()).collect();
    within(async {
        let waits = logs.iter_mut().zip(&lines).map(|(log, line)| {
            Box::pin(async move {
                let _ = log
                    .wait_for(|said| said.iter().any(|l| l.contains(line.as_str())))
                    .await;
            })
        });
        futures_util::future::select_all(waits).await;
    })
    .await;
    candidates
        .iter()
        .zip(&lines)
        .find(|(n, line)| n.has_said(line))
        .map(|(n, _)| *n)
        .expect("one of them owns the arcade")
}

/// A `subscriptions/listen` stream (Streamable HTTP, SSE), read message by message.
pub(crate) struct Listen {
    resp: reqwest::Response,
    buf: String,
}

impl Listen {
    /// Opens `who`'s stream of `mcpl/hints` on `url`, holding every change up to `since`.
    pub(crate) async fn open(http: &reqwest::Client, url: &str, who: &str, since: u64) -> Listen {
        let body = hinted(
            5,
            "subscriptions/listen",
            json!({"notifications": {"mcpl/hints": true}}),
            since,
        );
        let resp = within(
            http.post(url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "subscriptions/listen")
                .header("authorization", format!("Bearer {who}"))
                .body(body.to_string())
                .send(),
        )
        .await
        .expect("the stream opens");
        assert_eq!(resp.status(), 200, "{resp:?}");
        Listen {
            resp,
            buf: String::new(),
        }
    }

    /// The next message (one SSE event's data).
    pub(crate) async fn next(&mut self) -> Value {
        loop {
            if let Some(at) = self.buf.find("\n\n") {
                let event: String = self.buf.drain(..at + 2).collect();
                let data: String = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if data.is_empty() {
                    continue;
                }
                return serde_json::from_str(&data).unwrap_or_else(|e| panic!("{e}: {event:?}"));
            }
            let chunk = within(self.resp.chunk())
                .await
                .expect("the stream is read")
                .expect("the stream goes on");
            self.buf
                .push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
        }
    }
}

#[actix::test]
async fn issue41_03_postgres_stopped_immediately_and_started_again_keeps_every_acknowledged_move() {
    let (mut pg, nats, mut nodes) = cluster().await;
    let http = reqwest::Client::new();
    let on_n2 = nodes[1].url.clone();
    let before = go_g1_against_the_bot(&http, &on_n2).await;

    // PostgreSQL stops at once (`pg_ctl stop -m immediate`: SIGQUIT to its postmaster, by
    // its id). A move meanwhile is refused, clearly and retryable: by the owner, which
    // cannot keep it, or by the standby when the owner has already stopped.
    pg.stop_immediate();
    let play = modern(
        3,
        "tools/call",
        json!({"name": "go_play", "arguments": {"move": "G7", "instance": "g1"}}),
    );
    let (status, headers, refused) = post(&http, &on_n2, "alice", &play).await;
    assert_eq!(refused["id"], 3, "{refused:#}");
    assert_eq!(refused["error"]["data"]["retryable"], true, "{refused:#}");
    assert!(refused["error"]["message"].is_string(), "{refused:#}");
    assert!(
        status == 200 || is_retryable(status, &headers, &refused),
        "{status} {refused:#}"
    );
    eprintln!("a move with the database down: {status} {refused}");

    // The owner's renewal fails: it stops at once, with status 3, saying why.
    let code = within(nodes[0].child.wait()).await.expect("n1 ends");
    assert_eq!(code.code(), Some(3), "{code:?}");
    nodes[0].said("stops serving at once").await;
    // With nobody serving, a request is refused at once, retryable, not run.
    let read = modern(
        4,
        "tools/call",
        json!({"name": "go_board", "arguments": {"instance": "g1"}}),
    );
    let (status, headers, refused) = post(&http, &nodes[2].url, "alice", &read).await;
    assert!(
        is_retryable(status, &headers, &refused),
        "{status} {refused:#}"
    );
    assert_eq!(refused["error"]["data"]["ran"], false, "{refused:#}");

    // PostgreSQL comes back on its port: a standby takes the lease (its connection made
    // again) and serves; the other forwards to it.
    let restarting = std::time::Instant::now();
    pg.restart().expect("PostgreSQL starts again");
    let (took, back) = (restarting.elapsed(), std::time::Instant::now());
    let (n2, n3) = (&nodes[1], &nodes[2]);
    let owner = new_owner(&[n2, n3]).await;
    let other = if owner.name == n2.name { n3 } else { n2 };
    other.forwards_to(&owner.name).await;
    eprintln!(
        "PostgreSQL took {took:?} to start again; {} serves {:?} after it was ready (lease {TTL_MS} ms)",
        owner.name,
        back.elapsed()
    );

    // Every acknowledged move is there, the refused one is not; play goes on.
    let after = board(&http, &other.url).await;
    assert_eq!(
        after, before,
        "the same position after the database's restart"
    );
    let (mv, r) = play_some_point(&http, &other.url).await;
    assert!(r.contains("bot (White) "), "the bot answers again: {r}");
    let now = board(&http, &owner.url).await;
    assert_eq!(stones(&now, 'X'), 3, "{mv} is kept: {now}");

    // The stopped node, started again (by a supervisor), stands by.
    let (pg_url, nats_url) = (pg.url(), nats.url());
    let owner_name = owner.name.clone();
    nodes[0] = Node::start("n1", &pg_url, &nats_url).await;
    nodes[0].forwards_to(&owner_name).await;
    assert_eq!(board(&http, &nodes[0].url).await, now);
}

#[actix::test]
async fn issue41_03_two_nodes_hammering_one_principal_keep_its_versions_consecutive() {
    const EACH: usize = 6;
    let (_pg, _nats, mut nodes) = cluster().await;
    let http = reqwest::Client::new();
    let (on_n2, on_n3) = (nodes[1].url.clone(), nodes[2].url.clone());
    let listed = hinted(1, "toolsets/list", json!({}), 0);
    let (_, _, first) = post(&http, &on_n2, "alice", &listed).await;
    let base = version(&first);
    // A stream of alice's changes on the owner (streams are the owner's): each change is
    // told on it with its version (`docs/rfc014-stateless.md` §3.5).
    let mut changes = Listen::open(&http, &nodes[0].url, "alice", base).await;

    // 2 × EACH opens of one principal, all at once, half through each standby.
    let opens = (0..EACH).flat_map(|i| {
        [
            (on_n2.clone(), format!("a{i}")),
            (on_n3.clone(), format!("b{i}")),
        ]
    });
    let sent = opens.enumerate().map(|(id, (url, instance))| {
        let http = http.clone();
        async move {
            let body = hinted(
                10 + id as i64,
                "toolsets/open",
                json!({"toolset": "go", "instance": instance}),
                base,
            );
            let (status, _, answer) = post(&http, &url, "alice", &body).await;
            assert_eq!(status, 200, "{answer:#}");
            assert!(answer["result"].is_object(), "{answer:#}");
            (instance, answer)
        }
    });
    let answers = futures_util::future::join_all(sent).await;

    // Each open's result carries its own entry, open, stamped no later than the result.
    for (instance, answer) in &answers {
        let own = entries_of(hints(answer), instance);
        assert_eq!(own.len(), 1, "{instance}: {answer:#}");
        assert_eq!(own[0]["state"], "open", "{answer:#}");
        assert!(
            own[0]["v"].as_u64().unwrap() <= version(answer),
            "{answer:#}"
        );
    }
    let statement = |id| hinted(id, "toolsets/list", json!({}), 0);
    let (_, _, told) = post(&http, &on_n3, "alice", &statement(2)).await;
    assert_eq!(hints(&told)["statement"], true, "{told:#}");
    let last = version(&told);

    // The stream told every version from `base` to the last, each once, in order: no
    // gap, none twice; each message's entries stamped with its version.
    let mut versions = Vec::new();
    let mut opened_on_stream = std::collections::BTreeSet::new();
    while versions.last() != Some(&last) {
        let m = changes.next().await;
        if m["method"] != "notifications/mcpl/hints" {
            continue;
        }
        let v = m["params"]["version"].as_u64().expect("a version");
        for e in m["params"]["toolsets"].as_array().into_iter().flatten() {
            assert_eq!(e["v"], v, "{m:#}");
            if e["state"] == "open" {
                opened_on_stream.insert(e["instance"].as_str().unwrap_or("").to_owned());
            }
        }
        versions.push(v);
    }
    let expected: Vec<u64> = (base..=last).collect();
    assert_eq!(
        versions, expected,
        "alice's versions, as her stream told them"
    );
    let instances: std::collections::BTreeSet<String> =
        answers.iter().map(|(i, _)| i.clone()).collect();
    assert_eq!(opened_on_stream, instances, "every open told on the stream");
    eprintln!(
        "{} opens through two nodes: versions {base}..={last}, {} changes",
        answers.len(),
        last - base
    );

    // The statement: every open there, with the stamp its open was told.
    for (instance, answer) in &answers {
        let stated = entries_of(hints(&told), instance);
        assert_eq!(stated.len(), 1, "{instance}: {told:#}");
        assert_eq!(stated[0]["state"], "open", "{told:#}");
        assert_eq!(
            stated[0]["v"],
            entries_of(hints(answer), instance)[0]["v"],
            "{instance}"
        );
    }

    // The committed records say the same: the owner is killed, and the node that loads
    // them states the same open entries, each stamped again past every version the dead
    // owner may have told (`PrincipalState::continue_after_restart`).
    nodes[0].child.kill().await.expect("n1 is killed (SIGKILL)");
    let (n2, n3) = (&nodes[1], &nodes[2]);
    let owner = new_owner(&[n2, n3]).await;
    let (_, _, loaded) = post(&http, &owner.url, "alice", &statement(3)).await;
    let jumped = version(&told) + mcpl_server::RESTART_GAP;
    assert!(version(&loaded) >= jumped, "{loaded:#}");
    let open = |h: &Value| {
        let mut v: Vec<(String, u64)> = h["toolsets"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["state"] == "open")
            .map(|e| {
                (
                    e["instance"].as_str().unwrap_or("").to_owned(),
                    e["v"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        v.sort();
        v
    };
    let instances = |v: Vec<(String, u64)>| v.into_iter().map(|(i, _)| i).collect::<Vec<_>>();
    assert_eq!(
        instances(open(hints(&loaded))),
        instances(open(hints(&told))),
        "{loaded:#}"
    );
    assert!(
        open(hints(&loaded)).iter().all(|(_, v)| *v >= jumped),
        "{loaded:#}"
    );
    let reloaded = open(hints(&loaded));
    for (instance, _) in &answers {
        assert!(
            reloaded.iter().any(|(i, _)| i == instance),
            "{instance} is kept: {loaded:#}"
        );
    }
}

#[actix::test]
async fn issue41_03_the_away_player_is_told_the_end_once_across_a_takeover() {
    let (_pg, _nats, mut nodes) = cluster().await;
    let http = reqwest::Client::new();
    let (on_n2, on_n3) = (nodes[1].url.clone(), nodes[2].url.clone());

    // alice (on n2) challenges bob; bob (on n3, a hinted host keeping its `since`)
    // joins, and hears of each move as it plays.
    let sent = call(
        &http,
        &on_n2,
        "alice",
        "challenge",
        json!({"opponent": "bob", "game": "tictactoe"}),
    )
    .await;
    let game = sent["structuredContent"]["instance"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut since = 0;
    let mut id = 100;
    let mut bob = async |method: &str, params: Value, since: &mut u64| {
        id += 1;
        let body = hinted(id, method, params, *since);
        let (status, _, answer) = post(&http, &on_n3, "bob", &body).await;
        assert_eq!(status, 200, "{answer:#}");
        assert!(answer["result"].is_object(), "{answer:#}");
        *since = (*since).max(version(&answer));
        answer
    };
    let joined = bob(
        "toolsets/open",
        json!({"toolset": "tictactoe", "instance": game}),
        &mut since,
    )
    .await;
    assert!(
        entries_of(hints(&joined), &game)
            .iter()
            .any(|e| e["state"] == "open"),
        "{joined:#}"
    );
    for (alice_cell, bob_cell) in [("a1", "b1"), ("a2", "b2")] {
        call(
            &http,
            &on_n2,
            "alice",
            "tictactoe_play",
            json!({"move": alice_cell, "instance": game}),
        )
        .await;
        let played = bob(
            "tools/call",
            json!({"name": "tictactoe_play", "arguments": {"move": bob_cell},
                   "_meta": {"mcpl/instance": game}}),
            &mut since,
        )
        .await;
        assert_ne!(played["result"]["isError"], true, "{played:#}");
    }
    // bob has been told the game is open (and every change up to `since`).
    let seen = bob("tools/list", json!({}), &mut since).await;
    assert!(entries_of(hints(&seen), &game).is_empty(), "{seen:#}");
    let told_before = since;

    // The owner is SIGKILLed; a standby takes over and loads the game.
    nodes[0].child.kill().await.expect("n1 is killed (SIGKILL)");
    let (n2, n3) = (&nodes[1], &nodes[2]);
    let owner = new_owner(&[n2, n3]).await;
    let other = if owner.name == n2.name { n3 } else { n2 };
    other.forwards_to(&owner.name).await;

    // alice wins on the new owner while bob is away (no request, no stream).
    let won = call(
        &http,
        &on_n2,
        "alice",
        "tictactoe_play",
        json!({"move": "a3", "instance": game}),
    )
    .await;
    assert!(text_of(&won).contains("X (alice) wins"), "{won:#}");

    // bob's next request: the closed entry with its ended id, once — in a full statement,
    // as every host's first request to a new life gets (the dead owner may have told it
    // versions it never kept: `PrincipalState::continue_after_restart`).
    let next = bob("tools/list", json!({}), &mut since).await;
    let h = hints(&next);
    assert_eq!(
        h["statement"], true,
        "a statement after the takeover, since {told_before}: {h:#}"
    );
    let told = entries_of(h, &game);
    assert_eq!(told.len(), 1, "{h:#}");
    assert_eq!(told[0]["state"], "closed", "{h:#}");
    let ended = told[0]["ended"].as_str().expect("an ended id").to_owned();
    assert!(told[0]["v"].as_u64().unwrap() > told_before, "{h:#}");

    // The one after: not told again.
    let again = bob("tools/list", json!({}), &mut since).await;
    assert!(
        entries_of(hints(&again), &game).is_empty(),
        "told twice: {again:#}"
    );
    // A full statement names the same end by the same id (a host tells it once), with
    // its ended record once.
    let mut zero = 0;
    let listed = bob("toolsets/list", json!({}), &mut zero).await;
    let stated = entries_of(hints(&listed), &game);
    assert_eq!(stated.len(), 1, "{listed:#}");
    assert_eq!(stated[0]["ended"], ended.as_str(), "{listed:#}");
    let records = listed["result"]["ended"]
        .as_array()
        .map(|r| r.iter().filter(|r| r["id"] == ended.as_str()).count());
    assert_eq!(records, Some(1), "{listed:#}");
}

/// Issue #41 (`sim --nodes 3` with PostgreSQL restarted): the owner's lease row outlived
/// the owner and the database's restart, unexpired; the node started again under the
/// owner's name read it as another's and stood by, "forwarding to" itself — a name no
/// process served — until its own old lease expired, while nobody served. It takes the
/// arcade back at once instead (`PgLeases::acquire_or_reclaim`). The lease here outlives
/// the testkit's limit, so waiting it out would fail the test.
#[actix::test]
async fn issue41_03_a_node_started_again_takes_its_own_lease_back_instead_of_forwarding_to_itself()
{
    const LONG_TTL_MS: &str = "120000";
    let mut pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (pg_url, nats_url) = (pg.url(), nats.url());
    let mut n1 = Node::start_with_ttl("n1", &pg_url, &nats_url, LONG_TTL_MS).await;
    n1.owns().await;
    let http = reqwest::Client::new();
    let before = go_g1_against_the_bot(&http, &n1.url).await;

    // The owner dies; PostgreSQL stops at once and starts again. Its lease row lives on.
    n1.child.kill().await.expect("n1 is killed (SIGKILL)");
    pg.stop_immediate();
    pg.restart().expect("PostgreSQL starts again");

    let n1 = Node::start_with_ttl("n1", &pg_url, &nats_url, LONG_TTL_MS).await;
    let role = n1.first_role().await;
    assert!(
        role.contains("node \"n1\" owns the arcade and serves it"),
        "n1, started again, said first: {role}"
    );
    assert!(!n1.has_said("forwarding to node \"n1\""));
    assert_eq!(board(&http, &n1.url).await, before, "the game where it was");
}
