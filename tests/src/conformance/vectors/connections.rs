//! §4.3 and §4.6 on the server side, across connections of the named principal: kept
//! instances after a reconnect, ended records that outlive connections, and changes made
//! on one connection reaching the others on their own revs.
//! Vectors 9, 13, 14, 32.
//!
//! The named principal keeps what earlier runs left on a long-lived server, so these
//! vectors name their instances uniquely ([`Ctx::unique`]) and close what they open.

use super::super::contract::{GAME, GAME_FLIP, GAME_SECRET, GAME_SHOW};
use super::super::error::{Checked, ensure, violation};
use super::super::target::Ctx;
use super::super::wire::{
    ended_record, hints_of, open_records, stated_visible, tool_entries, toolset_entry, visibility,
};
use super::{
    adopted, check_record, close_with_id, ended_id, hints, later, open_game, takes_next,
    wait_change,
};
use serde_json::{Value, json};

/// Vector 9 (the server's half): an instance opened on one connection is kept after it
/// closes; the next connection's statement lists it, and opening it again adopts it.
pub async fn v09(ctx: &Ctx) -> Checked {
    let name = ctx.unique("kept");
    let mut first = ctx.named_hinted("the first connection").await?;
    open_game(&mut first, Some(&name), Some(4)).await?;
    first.finish().await?;
    first.close();
    let mut again = ctx
        .named_hinted("the connection after the reconnect")
        .await?;
    let s = again.statement().await?;
    let records: Vec<&Value> = open_records(&s, GAME, Some(&name)).collect();
    ensure(records.len() == 1, || {
        format!(
            "after a reconnect the statement does not list the kept instance {name} once (§4.3): {s}"
        )
    })?;
    ensure(
        records[0]
            .get("options")
            .is_none_or(|o| o == &json!({"size": 4})),
        || format!("the kept instance's options changed: {}", records[0]),
    )?;
    ensure(
        stated_visible(hints(&s, "toolsets/list")?)
            .contains(&(GAME_SHOW.to_owned(), Some(name.clone()))),
        || format!("the statement does not state the kept instance's tools visible: {s}"),
    )?;
    let o = again
        .open_ok(GAME, Some(&name), Some(json!({"size": 4})))
        .await?;
    adopted(&o, Some(&name), "re-opening the kept instance")?;
    let s = again.statement().await?;
    ensure(open_records(&s, GAME, Some(&name)).count() == 1, || {
        format!("re-opening the kept instance made a second one: {s}")
    })?;
    again.close_ok(GAME, Some(&name)).await?;
    again.finish().await
}

/// Vector 13 (the server's half): every end of an instance — a close, an end from
/// outside — gets an ended record with its own id, reported the same way on every later
/// connection of the principal.
pub async fn v13(ctx: &Ctx) -> Checked {
    let closed = ctx.unique("closed");
    let ended = ctx.unique("ended");
    let mut first = ctx.named_hinted("the first connection").await?;
    open_game(&mut first, Some(&closed), None).await?;
    let closed_id = close_with_id(&mut first, GAME, Some(&closed)).await?;
    open_game(&mut first, Some(&ended), None).await?;
    later(&mut first, &ended, json!({"end": true, "event": false})).await?;
    let told = wait_change(&mut first, &format!("the end of {ended}"), |h| {
        toolset_entry(h, GAME, Some(&ended)).is_some_and(|e| e["state"] == "closed")
    })
    .await?;
    let (h, _) = hints_of(&told).expect("a hint change");
    let ended_id = ended_id(h, GAME, Some(&ended))?;
    ensure(ended_id != closed_id, || {
        format!("two ends share the ended record id {closed_id} (§4.3)")
    })?;
    let s = first.statement().await?;
    let mut records = Vec::new();
    for (id, instance) in [(&closed_id, &closed), (&ended_id, &ended)] {
        let rec = ended_record(&s, id).ok_or_else(|| {
            violation(format!(
                "the statement lists no ended record {id} for {instance}: {s}"
            ))
        })?;
        check_record(rec, GAME, Some(instance))?;
        records.push(rec.clone());
    }
    first.finish().await?;
    first.close();
    for n in 1..=2 {
        let mut next = ctx.named_hinted(&format!("reconnection {n}")).await?;
        let s = next.statement().await?;
        for rec in &records {
            let id = rec["id"].as_str().unwrap_or_default();
            ensure(ended_record(&s, id) == Some(rec), || {
                format!(
                    "reconnection {n} does not list the ended record {rec} as before (§4.3): {s}"
                )
            })?;
        }
        next.finish().await?;
        next.close();
    }
    Ok(())
}

/// True when both hold the same tool entries, in any order.
fn same_entries(a: &Value, b: &Value) -> bool {
    let (a, b) = (tool_entries(a), tool_entries(b));
    a.len() == b.len() && a.iter().all(|e| b.contains(e))
}

/// Vector 14: an open made on one connection reaches another of the principal as hint
/// changes on that connection's own counter — the same entries, not a suggestion.
pub async fn v14(ctx: &Ctx) -> Checked {
    let name = ctx.unique("shared");
    let mut one = ctx.named_hinted("the first connection").await?;
    let mut two = ctx.named_hinted("the second connection").await?;
    // The second connection's counter runs ahead of the first's.
    two.statement().await?;
    two.statement().await?;
    let last_one = one.last_rev();
    let o = one.open_ok(GAME, Some(&name), None).await?;
    let h1 = hints(&o, "toolsets/open")?.clone();
    takes_next(&h1, last_one, "the open on the first connection")?;
    let last_two = two.last_rev();
    let m = wait_change(&mut two, "the open made on the first connection", |h| {
        toolset_entry(h, GAME, Some(&name)).is_some_and(|e| e["state"] == "open")
    })
    .await?;
    let (h2, _) = hints_of(&m).expect("a hint change");
    takes_next(
        h2,
        last_two,
        "the open as the second connection hears it (its own revs, §4.6)",
    )?;
    ensure(same_entries(&h1, h2), || {
        format!("the second connection was told other tool changes than the first: {h1} / {h2}")
    })?;
    let s = two.statement().await?;
    ensure(open_records(&s, GAME, Some(&name)).count() == 1, || {
        format!("the second connection's statement does not list {name}: {s}")
    })?;
    let o = two.open_ok(GAME, Some(&name), None).await?;
    adopted(&o, Some(&name), "opening it on the second connection")?;
    one.close_ok(GAME, Some(&name)).await?;
    one.finish().await?;
    two.finish().await
}

/// Vector 32: a visibility change and a close made on one connection reach another of
/// the principal, the close with the ended record's id the first was told.
pub async fn v32(ctx: &Ctx) -> Checked {
    let name = ctx.unique("shared");
    let mut one = ctx.named_hinted("the first connection").await?;
    let mut two = ctx.named_hinted("the second connection").await?;
    open_game(&mut one, Some(&name), None).await?;
    wait_change(&mut two, "the open made on the first connection", |h| {
        toolset_entry(h, GAME, Some(&name)).is_some_and(|e| e["state"] == "open")
    })
    .await?;
    let last_two = two.last_rev();
    one.call(GAME_FLIP, json!({}), Some(&name)).await?;
    let m = wait_change(&mut two, "the flip made on the first connection", |h| {
        visibility(h, GAME_SECRET, Some(&name)).is_some()
    })
    .await?;
    let (h, _) = hints_of(&m).expect("a hint change");
    takes_next(h, last_two, "the flip as the second connection hears it")?;
    ensure(
        visibility(h, GAME_SECRET, Some(&name)) == Some(true),
        || format!("the second connection was not told {GAME_SECRET} became visible: {h}"),
    )?;
    let id = close_with_id(&mut one, GAME, Some(&name)).await?;
    let m = wait_change(&mut two, "the close made on the first connection", |h| {
        toolset_entry(h, GAME, Some(&name)).is_some_and(|e| e["state"] == "closed")
    })
    .await?;
    let (h, _) = hints_of(&m).expect("a hint change");
    let told = ended_id(h, GAME, Some(&name))?;
    ensure(told == id, || {
        format!("the second connection was told the ended record {told}, the first {id} (§4.3)")
    })?;
    one.finish().await?;
    two.finish().await
}
