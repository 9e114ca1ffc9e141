//! §5 on the server side: the three carriers, who says what, consecutive revs, reads in
//! the middle of a stream of changes, cancelled calls, pushes never retried.
//! Vectors 2, 3, 4, 7, 21, 29, 31, 35.

use super::super::contract::{
    GAME, GAME_FLIP, GAME_GROW, GAME_MOVE, GAME_POKE, GAME_SECRET, GAME_SHOW, GAME_WAIT, show_text,
};
use super::super::error::{Checked, ensure, violation};
use super::super::peer::{HostKind, Peer, PushAnswer};
use super::super::requests::call_params;
use super::super::target::Ctx;
use super::super::wire::{
    Carrier, is_push, method_of, result_hints, stated_visible, text_of, visibility,
};
use super::{
    check_cap, hints, later, open_game, rev, secret_push, secret_standalone, takes_next, tool_ok,
};
use mcpl_protocol::mcpl::{CAP_PUSH_EVENTS, CAP_TOOLS};
use serde_json::{Value, json};

fn secret_stated(statement: &Value, instance: &str) -> Checked<bool> {
    Ok(stated_visible(hints(statement, "toolsets/list")?)
        .contains(&(GAME_SECRET.to_owned(), Some(instance.to_owned()))))
}

/// Reads the statement, which must take the rev after `after` (`what`: why it must).
async fn next_statement(p: &mut Peer, after: u64, what: &str) -> Checked<Value> {
    let s = p.statement().await?;
    takes_next(hints(&s, "toolsets/list")?, after, what)?;
    Ok(s)
}

/// Vector 2: a call that makes a tool visible carries the change in its result, and
/// nothing else carries it: the statement read next takes the very next rev.
pub async fn v02(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let g = open_game(&mut p, None, None).await?;
    let last = p.last_rev();
    let r = p.call(GAME_FLIP, json!({}), Some(&g)).await?;
    tool_ok(&r, GAME_FLIP)?;
    let h = hints(&r, GAME_FLIP)?;
    takes_next(h, last, GAME_FLIP)?;
    ensure(visibility(h, GAME_SECRET, Some(&g)) == Some(true), || {
        format!("{GAME_FLIP}'s result does not make {GAME_SECRET} visible in {g}: {h}")
    })?;
    let after = p.last_rev();
    let s = next_statement(&mut p, after, "the statement read after the call (a push of the call's own change would have taken a rev, §5.3)").await?;
    ensure(secret_stated(&s, &g)?, || {
        format!("the statement does not state {GAME_SECRET} visible after {GAME_FLIP}")
    })?;
    tool_ok(
        &p.call(GAME_SECRET, json!({}), Some(&g)).await?,
        &format!("{GAME_SECRET}, visible now"),
    )?;
    ensure(!p.log().iter().any(is_push), || {
        "the server pushed an event for a call's own consequences (§5.3)".to_owned()
    })?;
    p.close_ok(GAME, Some(&g)).await?;
    p.finish().await
}

/// Vector 3: a change made by something else than a call (a timer) is pushed with the
/// event explaining it, in the push's `hints`, naming its toolset and instance; a refused
/// push changes nothing and nothing is restated.
pub async fn v03(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let g = open_game(&mut p, None, None).await?;
    p.push_answer = PushAnswer::Refuse;
    let last = p.last_rev();
    later(&mut p, &g, json!({})).await?;
    let push = secret_push(&mut p, &g).await?;
    let params = &push["params"];
    ensure(
        params["toolset"] == GAME && params["instance"] == g.as_str(),
        || {
            format!(
                "the push does not name the toolset {GAME} and instance {g} it is about (§5.2): {params}"
            )
        },
    )?;
    ensure(
        params["payload"]["content"]
            .as_array()
            .is_some_and(|c| !c.is_empty()),
        || format!("the push carrying the change has no content explaining it: {params}"),
    )?;
    ensure(
        params["eventId"].as_str().is_some_and(|e| !e.is_empty()),
        || format!("the push has no eventId: {params}"),
    )?;
    ensure(
        params["featureSet"].as_str().is_some_and(|f| !f.is_empty()),
        || format!("the push names no featureSet (§2, SPEC §9): {params}"),
    )?;
    ensure(
        params["timestamp"]
            .as_str()
            .is_some_and(super::super::wire::is_rfc3339),
        || format!("the push's timestamp is not an RFC 3339 time (§2, SPEC §9): {params}"),
    )?;
    let h = &params["hints"];
    takes_next(h, last, "the push")?;
    ensure(visibility(h, GAME_SECRET, Some(&g)) == Some(true), || {
        format!("the push does not make {GAME_SECRET} visible: {h}")
    })?;
    p.push_answer = PushAnswer::Accept;
    let after = p.last_rev();
    let s = next_statement(
        &mut p,
        after,
        "the statement after a refused push (nothing is restated, §5.2)",
    )
    .await?;
    ensure(secret_stated(&s, &g)?, || {
        "the refused push's change did not stand: the statement does not state it (§5.2)".to_owned()
    })?;
    p.close_ok(GAME, Some(&g)).await?;
    p.finish().await
}

/// Vector 4: results, a push and `tools/hints` share one counter, consecutive from 1.
pub async fn v04(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let g = open_game(&mut p, None, None).await?;
    p.call(GAME_FLIP, json!({}), Some(&g)).await?;
    later(&mut p, &g, json!({})).await?;
    secret_push(&mut p, &g).await?;
    later(&mut p, &g, json!({"event": false})).await?;
    secret_standalone(&mut p, &g).await?;
    p.statement().await?;
    p.close_ok(GAME, Some(&g)).await?;
    for carrier in [Carrier::Result, Carrier::Push, Carrier::Standalone] {
        ensure(p.revs().iter().any(|r| r.carrier == carrier), || {
            format!("no rev came by {carrier:?}")
        })?;
    }
    p.finish().await
}

/// Vector 7: an instance's own definition changes in a hint change, the statement states
/// it, and no `notifications/tools/list_changed` is sent.
pub async fn v07(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let g = open_game(&mut p, None, Some(3)).await?;
    let last = p.last_rev();
    let r = p.call(GAME_GROW, json!({}), Some(&g)).await?;
    tool_ok(&r, GAME_GROW)?;
    let h = hints(&r, GAME_GROW)?;
    takes_next(h, last, GAME_GROW)?;
    check_cap(h, &g, 4, &format!("{GAME_GROW}'s result"))?;
    let s = p.statement().await?;
    check_cap(
        hints(&s, "toolsets/list")?,
        &g,
        4,
        "the statement (every current definition that differs from the declared one, §4.3)",
    )?;
    tool_ok(
        &p.call(GAME_MOVE, json!({"n": 4}), Some(&g)).await?,
        &format!("{GAME_MOVE} with n = 4 after {GAME_GROW}"),
    )?;
    // What the server wrote before this push has been read once the push is.
    later(&mut p, &g, json!({})).await?;
    secret_push(&mut p, &g).await?;
    ensure(
        !p.log()
            .iter()
            .any(|m| method_of(m) == Some("notifications/tools/list_changed")),
        || {
            "a definition change of a dynamic tool was followed by notifications/tools/list_changed (vector 7)".to_owned()
        },
    )?;
    p.close_ok(GAME, Some(&g)).await?;
    p.finish().await
}

/// Where the first message matching `f` sits in the log.
fn position(p: &Peer, f: impl Fn(&Value) -> bool) -> usize {
    p.log().iter().position(f).unwrap_or(usize::MAX)
}

/// Vector 21 (the server's half): a statement and `tools/list` read while a change is
/// being made agree with their revs: the statement states the change exactly when the
/// change's rev is lower; `tools/list` shows it exactly when it names that rev or a later
/// one; on an ordered link, in the order written.
pub async fn v21(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let g = open_game(&mut p, None, None).await?;
    let base = p.last_rev();
    let later_id = p
        .send_request(
            "tools/call",
            call_params(super::super::contract::GAME_LATER, json!({}), Some(&g)),
        )
        .await?;
    let st_id = p.send_request("toolsets/list", json!({})).await?;
    let tl_id = p.send_request("tools/list", json!({})).await?;
    p.response(&later_id, "the answer to game_later").await?;
    let push = secret_push(&mut p, &g).await?;
    let st = p.response(&st_id, "the answer to toolsets/list").await?;
    let tl = p.response(&tl_id, "the answer to tools/list").await?;
    let push_rev = rev(&push["params"]["hints"]);
    let st_rev = rev(hints(&st["result"], "toolsets/list")?);
    let mut pair = [push_rev, st_rev];
    pair.sort_unstable();
    ensure(pair == [base + 1, base + 2], || {
        format!(
            "the push and the statement took revs {push_rev} and {st_rev}, not {} and {} (§5.2)",
            base + 1,
            base + 2
        )
    })?;
    let stated = secret_stated(&st["result"], &g)?;
    ensure(stated == (push_rev < st_rev), || {
        format!(
            "the statement (rev {st_rev}) {} the change of the push (rev {push_rev})",
            if stated { "states" } else { "leaves out" }
        )
    })?;
    let listed_rev = tl
        .pointer("/result/_meta/mcpl~1rev")
        .and_then(Value::as_u64)
        .ok_or_else(|| violation(format!("tools/list names no _meta[\"mcpl/rev\"]: {tl}")))?;
    let listed_visible = tl["result"]["tools"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["name"] == GAME_SECRET))
        .and_then(|t| t.pointer("/_meta/mcpl~1visible"))
        .and_then(Value::as_bool)
        .unwrap_or(true);
    ensure(listed_visible == (listed_rev >= push_rev), || {
        format!(
            "tools/list names rev {listed_rev} but shows {GAME_SECRET} {} (the push took rev {push_rev}, §3)",
            if listed_visible {
                "visible"
            } else {
                "invisible"
            }
        )
    })?;
    if p.ordered() {
        let push_at = position(&p, |m| *m == push);
        let st_at = position(&p, |m| *m == st);
        let tl_at = position(&p, |m| *m == tl);
        ensure((push_at < st_at) == (push_rev < st_rev), || {
            "on an ordered link the push and the statement arrived out of their rev order"
                .to_owned()
        })?;
        let before = p.log()[..tl_at]
            .iter()
            .filter_map(|m| super::super::wire::hints_of(m).map(|(h, _)| rev(h)))
            .max()
            .unwrap_or(0);
        ensure(listed_rev == before, || {
            format!(
                "tools/list names rev {listed_rev}, but the last rev written before it was {before}"
            )
        })?;
    }
    p.close_ok(GAME, Some(&g)).await?;
    p.finish().await
}

/// Waits until the instance reports `n` waiting calls (on an unordered link a request may
/// overtake another; this proves the server holds the call before it is cancelled).
async fn await_waiting(p: &mut Peer, instance: &str, size: u64, n: usize) -> Checked {
    let want = show_text(instance, size, n);
    for _ in 0..1000 {
        let r = p.call(GAME_SHOW, json!({}), Some(instance)).await?;
        if text_of(&r) == want {
            return Ok(());
        }
    }
    Err(violation(format!(
        "{GAME_SHOW} never answered {want:?} while a {GAME_WAIT} call waited"
    )))
}

/// Vector 29: a call whose change is its own, cancelled before its answer, sends the
/// change as `tools/hints`; no answer carries it.
pub async fn v29(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let g = open_game(&mut p, None, None).await?;
    let wait_id = p
        .send_request("tools/call", call_params(GAME_WAIT, json!({}), Some(&g)))
        .await?;
    await_waiting(&mut p, &g, super::super::contract::DEFAULT_SIZE, 1).await?;
    let request_id = wait_id.clone();
    p.notify(
        "notifications/cancelled",
        json!({"requestId": request_id, "reason": "the conformance runner gave up"}),
    )
    .await?;
    let standalone = secret_standalone(&mut p, &g).await?;
    ensure(
        visibility(&standalone["params"], GAME_SECRET, Some(&g)) == Some(true),
        || format!("the cancelled call's change is not {GAME_SECRET} made visible: {standalone}"),
    )?;
    let poke = p.call(GAME_POKE, json!({}), Some(&g)).await?;
    tool_ok(&poke, GAME_POKE)?;
    ensure(
        result_hints(&poke).is_none_or(|h| visibility(h, GAME_SECRET, Some(&g)).is_none()),
        || format!("{GAME_POKE}'s result carries the cancelled call's change again: {poke}"),
    )?;
    p.ping().await?;
    if let Some(late) = p
        .log()
        .iter()
        .find(|m| m.get("id") == Some(&request_id) && m.get("method").is_none())
    {
        ensure(
            result_hints(&late["result"])
                .is_none_or(|h| visibility(h, GAME_SECRET, Some(&g)).is_none()),
            || {
                format!(
                    "the cancelled call got a result carrying its change, already sent as tools/hints: {late}"
                )
            },
        )?;
    }
    let s = p.statement().await?;
    ensure(secret_stated(&s, &g)?, || {
        "the cancelled call's change does not stand in the statement".to_owned()
    })?;
    p.close_ok(GAME, Some(&g)).await?;
    p.finish().await
}

/// Vector 31: where the server may not push (`pushEvents` not granted, or no grant yet),
/// a change something else made comes as `tools/hints`; once granted, as a push.
pub async fn v31(ctx: &Ctx) -> Checked {
    let cases: [(&str, Option<&[&str]>); 2] = [
        ("a connection granted tools only", Some(&[CAP_TOOLS])),
        ("a connection not granted anything yet", None),
    ];
    for (label, grant) in cases {
        let mut p = ctx.fresh(label).await?;
        p.handshake(HostKind::Hinted, grant).await?;
        let g = open_game(&mut p, None, None).await?;
        for _ in 0..2 {
            later(&mut p, &g, json!({})).await?;
            secret_standalone(&mut p, &g).await?;
        }
        ensure(!p.log().iter().any(is_push), || {
            format!("{label}: the server pushed though it may not (§5.3)")
        })?;
        if grant.is_none() {
            let receipt = p
                .result(
                    "featureSets/update",
                    json!({"effectiveCapabilities": [CAP_TOOLS, CAP_PUSH_EVENTS]}),
                )
                .await?;
            ensure(receipt["accepted"] == true, || {
                format!("featureSets/update was not accepted: {receipt}")
            })?;
            later(&mut p, &g, json!({})).await?;
            secret_push(&mut p, &g).await?;
        }
        p.close_ok(GAME, Some(&g)).await?;
        p.finish().await?;
    }
    Ok(())
}

/// Vector 35: a push carrying hints that the host answers with an error is not sent
/// again with its hints; the next push is a new event on the next rev.
pub async fn v35(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let g = open_game(&mut p, None, None).await?;
    p.push_answer = PushAnswer::Error;
    let last = p.last_rev();
    later(&mut p, &g, json!({})).await?;
    let first = secret_push(&mut p, &g).await?;
    takes_next(&first["params"]["hints"], last, "the push")?;
    let first_id = first["params"]["eventId"].clone();
    p.push_answer = PushAnswer::Accept;
    let after = p.last_rev();
    next_statement(&mut p, after, "the statement after a push answered with an error (hint-carrying pushes are never retried, §5.2)").await?;
    let last = p.last_rev();
    later(&mut p, &g, json!({})).await?;
    let second = secret_push(&mut p, &g).await?;
    ensure(second["params"]["eventId"] != first_id, || {
        format!("the next event reused the eventId {first_id}")
    })?;
    takes_next(&second["params"]["hints"], last, "the next push")?;
    let resent = p
        .log()
        .iter()
        .filter(|m| {
            is_push(m) && m["params"]["eventId"] == first_id && m.pointer("/params/hints").is_some()
        })
        .count();
    ensure(resent == 1, || {
        format!("the push {first_id} was sent {resent} times with its hints (§5.2: never retried)")
    })?;
    p.close_ok(GAME, Some(&g)).await?;
    p.finish().await
}
