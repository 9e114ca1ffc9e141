//! §4.3 and §4.6 on the server side, across connections of the named principal: kept
//! instances after a reconnect, ended records that outlive connections, and changes made
//! on one connection reaching the others on their own revs.
//! Vectors 9, 13, 14, 32.
//!
//! The named principal keeps what earlier runs left on a long-lived server, so these
//! vectors name their instances uniquely ([`Ctx::unique`]) and close what they open.

use super::super::contract::{GAME, GAME_FLIP, GAME_SECRET, GAME_SHOW};
use super::super::error::{Checked, ensure};
use super::super::target::Ctx;
use super::super::wire::{
    Carrier, ended_record, hints_of, open_records, stated_visible, tool_entries, toolset_entry,
    visibility,
};
use super::{
    adopted, check_record, close_told, closed_entry, hints, later, open_game, takes_next,
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

/// Vector 13 (the server's half): every end the host did not ask for (here: two ends from
/// outside) gets an ended record, each with its own id, reported the same way on every
/// later connection of the principal; a closed entry that names a record names that one.
/// The fixture's choices: the closed entries carry the ids, and a close the principal
/// asked for leaves no record.
pub async fn v13(ctx: &Ctx) -> Checked {
    let ends = [ctx.unique("ended-a"), ctx.unique("ended-b")];
    let asked = ctx.unique("closed");
    let mut first = ctx.named_hinted("the first connection").await?;
    let mut told = Vec::new();
    for name in &ends {
        open_game(&mut first, Some(name), None).await?;
        later(&mut first, name, json!({"end": true, "event": false})).await?;
        let m = wait_change(&mut first, &format!("the end of {name}"), |h| {
            toolset_entry(h, GAME, Some(name)).is_some_and(|e| e["state"] == "closed")
        })
        .await?;
        let (h, _) = hints_of(&m).expect("a hint change");
        let id = closed_entry(h, GAME, Some(name))?;
        ctx.choice(id.is_some(), || {
            format!("the closed entry for {name} carries no ended record id (§4.3): {h}")
        });
        told.push(id);
    }
    open_game(&mut first, Some(&asked), None).await?;
    close_told(ctx, &mut first, GAME, Some(&asked)).await?;
    let s = first.statement().await?;
    let mut records = Vec::new();
    for (name, id) in ends.iter().zip(&told) {
        let listed: Vec<&Value> = s["ended"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["toolset"] == GAME && r["instance"] == json!(name))
            .collect();
        ensure(listed.len() == 1, || {
            format!(
                "the statement does not list one ended record for {name}, an end the host did not ask for (§4.3): {s}"
            )
        })?;
        let rec = listed[0];
        check_record(rec, GAME, Some(name))?;
        if let Some(id) = id {
            ensure(rec["id"] == json!(id), || {
                format!("the closed entry named the record {id}, the statement lists {rec} (§4.3)")
            })?;
        }
        records.push(rec.clone());
    }
    ensure(records[0]["id"] != records[1]["id"], || {
        format!(
            "two ends share the ended record id {} (§4.3)",
            records[0]["id"]
        )
    })?;
    ctx.choice(
        !s["ended"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r["instance"] == json!(asked)),
        || {
            format!(
                "the statement lists a record for {asked}, a close the principal asked for: {s}"
            )
        },
    );
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
/// the principal; when the close names an ended record, both are told the same one.
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
    let (h, carrier) = hints_of(&m).expect("a hint change");
    takes_next(h, last_two, "the flip as the second connection hears it")?;
    ctx.choice(carrier == Carrier::Standalone, || {
        format!("the flip made on the first connection, which has nothing to say, reached the second as {carrier:?}, not tools/hints (§5.2): {m}")
    });
    ensure(
        visibility(h, GAME_SECRET, Some(&name)) == Some(true),
        || format!("the second connection was not told {GAME_SECRET} became visible: {h}"),
    )?;
    let id = close_told(ctx, &mut one, GAME, Some(&name)).await?;
    let m = wait_change(&mut two, "the close made on the first connection", |h| {
        toolset_entry(h, GAME, Some(&name)).is_some_and(|e| e["state"] == "closed")
    })
    .await?;
    let (h, carrier) = hints_of(&m).expect("a hint change");
    ctx.choice(carrier == Carrier::Standalone, || {
        format!("the close made on the first connection reached the second as {carrier:?}, not tools/hints (§5.2): {m}")
    });
    let told = closed_entry(h, GAME, Some(&name))?;
    ensure(told == id, || {
        format!("the second connection was told the ended record {told:?}, the first {id:?} (§4.3)")
    })?;
    one.finish().await?;
    two.finish().await
}
