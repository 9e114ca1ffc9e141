//! The server-side vectors of spec §9, each a function of a [`Ctx`], grouped as the spec
//! groups the rules they check, and the steps they share.
//!
//! | file | vectors |
//! |---|---|
//! | `contract.rs` | the fixture contract itself (0) |
//! | `tools.rs` | §3: 1, 10, 11, 16, 27 |
//! | `order.rs` | §5: 2, 3, 4, 7, 21, 29, 31, 35 |
//! | `toolsets.rs` | §4.1–4.3: 5, 6, 17, 18, 23, 25, 33, 38 |
//! | `connections.rs` | §4.6, across connections: 9, 13, 14, 32 |
//! | `plain.rs` | §2, §8, hosts without `toolHints`: 8, 26, 36 |
//! | `stateless.rs` | the stateless profile (`docs/rfc014-stateless.md` §5): S1–S4, S8–S15, S17, S19, S20 |
//!
//! Every vector ends with [`Peer::finish`] on each connection it used, so the rev rules of
//! §5.2 and the "no hints without `toolHints`" rule are checked by all of them (on a
//! modern link: no server-to-client request and no `tools/hints`).

mod connections;
mod contract;
mod order;
mod plain;
mod stateless;
mod tools;
mod toolsets;

pub use stateless::profile_not_served;

use super::contract::{GAME, GAME_LATER, GAME_MOVE, GAME_SECRET};
use super::error::{Checked, ensure, violation};
use super::peer::Peer;
use super::run::{Kind, Vector, VectorId};
use super::target::{Ctx, Need};
use super::wire::{entries_for, hints_of, is_tool_error, result_hints, text_of, toolset_entry};
use serde_json::{Value, json};

const SHARED: &[Need] = &[Need::SharedPrincipal];

macro_rules! vector {
    (S $number:literal, $title:literal, $f:path) => {
        vector!(S $number, $title, $f, &[])
    };
    (S $number:literal, $title:literal, $f:path, $needs:expr) => {
        Vector {
            id: VectorId::Stateless($number),
            kind: Kind::Rfc,
            title: $title,
            needs: $needs,
            run: |ctx| Box::pin($f(ctx)),
        }
    };
    ($number:literal, $title:literal, $f:path) => {
        vector!($number, $title, $f, &[])
    };
    ($number:literal, $title:literal, $f:path, $needs:expr) => {
        Vector {
            id: VectorId::Rfc($number),
            kind: if $number == 0 {
                Kind::Fixture
            } else {
                Kind::Rfc
            },
            title: $title,
            needs: $needs,
            run: |ctx| Box::pin($f(ctx)),
        }
    };
}

/// Every check, in the order run.
pub static ALL: &[Vector] = &[
    vector!(
        0,
        "the server meets the fixture contract",
        contract::contract
    ),
    vector!(1, "tools/list lists every tool, visible or not", tools::v01),
    vector!(
        2,
        "a call's own changes ride in its result; no push follows",
        order::v02
    ),
    vector!(
        3,
        "a push carries the change it explains; a refused one is not restated",
        order::v03
    ),
    vector!(
        4,
        "revs are consecutive across results, pushes and tools/hints",
        order::v04
    ),
    vector!(
        5,
        "open returns an instance name; calls carry it",
        toolsets::v05
    ),
    vector!(
        6,
        "two instances open, none named: the call fails naming them",
        toolsets::v06
    ),
    vector!(
        7,
        "a definition change arrives without tools/list_changed",
        order::v07
    ),
    vector!(
        8,
        "a host without toolHints gets no tools/hints and no hints",
        plain::v08
    ),
    vector!(
        9,
        "after a reconnect the kept instance is listed; opening it adopts",
        connections::v09,
        SHARED
    ),
    vector!(
        10,
        "an undeclared group is listed and stated, never tracked or gated",
        tools::v10
    ),
    vector!(
        11,
        "an invisible tool or a closed toolset's tool: a tool error saying why",
        tools::v11
    ),
    vector!(
        13,
        "ended records persist across connections under one id",
        connections::v13,
        SHARED
    ),
    vector!(
        14,
        "an open on one connection reaches another on its own revs",
        connections::v14,
        SHARED
    ),
    vector!(
        16,
        "a toolset's tool is dynamic though declared static",
        tools::v16
    ),
    vector!(
        17,
        "opening an open instance adopts it; other options are reported",
        toolsets::v17
    ),
    vector!(
        18,
        "a proposed instance name is used as given or refused",
        toolsets::v18
    ),
    vector!(
        21,
        "a statement and tools/list read mid-stream agree with their revs",
        order::v21
    ),
    vector!(23, "toolsets/list is a full statement", toolsets::v23),
    vector!(
        25,
        "a default-open toolset is listed without an open",
        toolsets::v25
    ),
    vector!(
        26,
        "a host without toolHints plays through compat tools and implicit opens",
        plain::v26
    ),
    vector!(
        27,
        "toolsets/* results take the next rev; tools/list names the last",
        tools::v27
    ),
    vector!(
        29,
        "a cancelled call sends its changes as tools/hints",
        order::v29
    ),
    vector!(
        31,
        "without pushEvents, another's changes come as tools/hints",
        order::v31
    ),
    vector!(
        32,
        "a close and a visibility change reach the principal's other connections",
        connections::v32,
        SHARED
    ),
    vector!(
        33,
        "a manifest change removing a toolset ends its instances",
        toolsets::v33
    ),
    vector!(35, "a push with hints is never retried", order::v35),
    vector!(
        36,
        "without toolHints, hinted tools are plain static tools",
        plain::v36
    ),
    vector!(
        38,
        "a statement with nothing visible in any toolset still takes a rev",
        toolsets::v38
    ),
    vector!(
        S 1,
        "server/discover declaring mcpl/core states the manifest, private",
        stateless::s01
    ),
    vector!(
        S 2,
        "a modern request without mcpl/core is shown no hints",
        stateless::s02
    ),
    vector!(
        S 3,
        "since 0 (or ahead) is answered a full statement at the version",
        stateless::s03
    ),
    vector!(
        S 4,
        "a delta carries exactly what was stamped after since",
        stateless::s04
    ),
    vector!(
        S 8,
        "since behind a forgotten tombstone is answered a statement",
        stateless::s08
    ),
    vector!(
        S 9,
        "a listen stream with mcpl/hints is told every change, stamped",
        stateless::s09
    ),
    vector!(
        S 10,
        "a stream opened behind is sent the delta first",
        stateless::s10
    ),
    vector!(
        S 11,
        "an end from outside reaches the next result, told once",
        stateless::s11,
        SHARED
    ),
    vector!(
        S 12,
        "a retried open adopts; a retried close succeeds",
        stateless::s12
    ),
    vector!(
        S 13,
        "an idle principal's toolsets end after idleEndMs, with records",
        stateless::s13,
        SHARED
    ),
    vector!(
        S 14,
        "a hinted tools/list: every tool by name, private, versioned",
        stateless::s14
    ),
    vector!(
        S 15,
        "a legacy connection and modern requests of one principal agree",
        stateless::s15,
        SHARED
    ),
    vector!(
        S 17,
        "an events stream under a grant with pushEvents is sent each event",
        stateless::s17
    ),
    vector!(
        S 19,
        "an event with no events stream is not delivered; the delta has it",
        stateless::s19
    ),
    vector!(
        S 20,
        "events past a stream's bound are dropped; the delta has them",
        stateless::s20
    ),
];

/// A tool result that must not be a tool error; returns its text.
fn tool_ok(result: &Value, what: &str) -> Checked<String> {
    ensure(!is_tool_error(result), || {
        format!("{what} returned a tool error: {}", text_of(result))
    })?;
    Ok(text_of(result))
}

/// A tool result that must be a tool error with some text; returns the text.
fn tool_error(result: &Value, what: &str) -> Checked<String> {
    ensure(is_tool_error(result), || {
        format!("{what} should be a tool error (isError: true), got {result}")
    })?;
    let text = text_of(result);
    ensure(!text.trim().is_empty(), || {
        format!("{what}: the tool error says nothing")
    })?;
    Ok(text)
}

/// The hint changes a result must carry.
fn hints<'a>(result: &'a Value, what: &str) -> Checked<&'a Value> {
    result_hints(result)
        .ok_or_else(|| violation(format!("{what} carries no _meta[\"mcpl/hints\"]: {result}")))
}

/// The rev of hint changes.
fn rev(changes: &Value) -> u64 {
    changes.get("rev").and_then(Value::as_u64).unwrap_or(0)
}

/// Checks hint changes took the next rev after `last`.
fn takes_next(changes: &Value, last: u64, what: &str) -> Checked {
    ensure(rev(changes) == last + 1, || {
        format!(
            "{what} took rev {}, not the next one, {} (§5.2)",
            rev(changes),
            last + 1
        )
    })
}

/// Opens a `game` instance (named, or the server's choice) with `size`; checks the open
/// succeeded with hints on the next rev, stating it open. Returns the instance's name.
async fn open_game(p: &mut Peer, name: Option<&str>, size: Option<u64>) -> Checked<String> {
    let last = p.last_rev();
    let opened = p
        .open_ok(GAME, name, size.map(|s| json!({"size": s})))
        .await?;
    let instance = opened
        .get("instance")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            violation(format!(
                "toolsets/open {GAME} returned no instance: {opened}"
            ))
        })?
        .to_owned();
    if let Some(n) = name {
        ensure(instance == n, || {
            format!("the open proposed {n:?} but the server named it {instance:?} (§4.2)")
        })?;
    }
    let changes = hints(&opened, "a fresh toolsets/open")?;
    takes_next(changes, last, "a fresh toolsets/open")?;
    let state = toolset_entry(changes, GAME, Some(&instance)).and_then(|e| e.get("state"));
    ensure(state == Some(&json!("open")), || {
        format!("the open's hints do not state {GAME}:{instance} open: {changes}")
    })?;
    Ok(instance)
}

/// Calls `game_later` in `instance`; it answers at once, changing nothing itself.
async fn later(p: &mut Peer, instance: &str, args: Value) -> Checked {
    let r = p.call(GAME_LATER, args, Some(instance)).await?;
    tool_ok(&r, GAME_LATER)?;
    ensure(result_hints(&r).is_none(), || {
        format!("{GAME_LATER} changes nothing itself, yet its result carries hints: {r}")
    })
}

/// Waits for a push whose hints state `game_secret`'s visibility in `instance`.
async fn secret_push(p: &mut Peer, instance: &str) -> Checked<Value> {
    p.wait_for(
        &format!("a push flipping {GAME_SECRET} in {instance}"),
        |m| {
            super::wire::is_push(m)
                && m.pointer("/params/hints").is_some_and(|h| {
                    super::wire::visibility(h, GAME_SECRET, Some(instance)).is_some()
                })
        },
    )
    .await
}

/// Waits for a `tools/hints` stating `game_secret`'s visibility in `instance`.
async fn secret_standalone(p: &mut Peer, instance: &str) -> Checked<Value> {
    p.wait_for(
        &format!("tools/hints flipping {GAME_SECRET} in {instance}"),
        |m| {
            super::wire::method_of(m) == Some("tools/hints")
                && m.get("params").is_some_and(|h| {
                    super::wire::visibility(h, GAME_SECRET, Some(instance)).is_some()
                })
        },
    )
    .await
}

/// Checks `changes` give `game_move` in `instance` a definition capping `n` at `cap`.
fn check_cap(changes: &Value, instance: &str, cap: u64, what: &str) -> Checked {
    let def = entries_for(changes, GAME_MOVE, Some(instance))
        .filter_map(|e| e.get("definition"))
        .last()
        .ok_or_else(|| {
            violation(format!(
                "{what} carries no definition of {GAME_MOVE} in {instance}: {changes}"
            ))
        })?;
    ensure(
        def.pointer("/inputSchema/properties/n/maximum") == Some(&json!(cap)),
        || format!("{what}: {GAME_MOVE}'s definition does not cap n at {cap}: {def}"),
    )?;
    ensure(def.get("name").is_none_or(|n| n == GAME_MOVE), || {
        format!("{what}: the definition renames {GAME_MOVE}: {def}")
    })
}

/// The closed entry for `toolset` / `instance` in `changes` (which must have one), and the
/// `ended` record id it carries, if any. The RFC does not require the id there (§4.3 makes
/// it this project's reading); [`Ctx::choice`] checks it where the fixture carries one.
fn closed_entry(changes: &Value, toolset: &str, instance: Option<&str>) -> Checked<Option<String>> {
    let entry = toolset_entry(changes, toolset, instance)
        .filter(|e| e["state"] == "closed")
        .ok_or_else(|| {
            violation(format!(
                "no closed entry for {toolset} {} in {changes}",
                instance.unwrap_or("")
            ))
        })?;
    Ok(entry["ended"].as_str().map(str::to_owned))
}

/// Closes (an end the principal asked for) and returns the `ended` id the close's result
/// carries, if any; the fixture's choice is none (§4.3, the RFC's revision 4: records are
/// for the ends the host did not ask for).
async fn close_told(
    ctx: &Ctx,
    p: &mut Peer,
    toolset: &str,
    instance: Option<&str>,
) -> Checked<Option<String>> {
    let last = p.last_rev();
    let c = p.close_ok(toolset, instance).await?;
    let h = hints(&c, "toolsets/close")?;
    takes_next(h, last, "toolsets/close")?;
    let id = closed_entry(h, toolset, instance)?;
    ctx.choice(id.is_none(), || {
        format!("a close the principal asked for carries an ended record id ({id:?}); the fixture keeps records for the ends the host did not ask for (§4.3)")
    });
    Ok(id)
}

/// Waits for a hint change not carried by a result (a push or `tools/hints`) whose
/// changes match `pred`; returns the message.
async fn wait_change(p: &mut Peer, what: &str, pred: impl Fn(&Value) -> bool) -> Checked<Value> {
    p.wait_for(what, |m| hints_of(m).is_some_and(|(h, _)| pred(h)))
        .await
}

/// Checks an open result is an adoption of `instance` that changed nothing.
fn adopted(o: &Value, instance: Option<&str>, what: &str) -> Checked {
    ensure(o["adopted"] == true, || {
        format!("{what}: opening what is open must adopt it (adopted: true, §4.2): {o}")
    })?;
    ensure(
        o.get("instance").and_then(Value::as_str) == instance,
        || format!("{what}: the adoption names another instance: {o}"),
    )?;
    if let Some(h) = result_hints(o) {
        ensure(
            h.get("tools").is_none_or(|t| t == &json!([]))
                && h.get("toolsets").is_none_or(|t| t == &json!([])),
            || format!("{what}: an adoption changes nothing, yet its hints state changes: {h}"),
        )?;
    }
    Ok(())
}

/// Checks an ended record's members (§4.3).
fn check_record(rec: &Value, toolset: &str, instance: Option<&str>) -> Checked {
    ensure(
        rec["toolset"] == toolset && rec.get("instance").and_then(Value::as_str) == instance,
        || format!("the ended record names another toolset or instance: {rec}"),
    )?;
    ensure(
        rec["reason"].as_str().is_some_and(|r| !r.is_empty()),
        || format!("the ended record gives no reason: {rec}"),
    )?;
    ensure(
        rec["at"].as_str().is_some_and(super::wire::is_rfc3339),
        || format!("the ended record's at is not an RFC 3339 time: {rec}"),
    )
}
