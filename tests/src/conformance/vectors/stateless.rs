//! The stateless profile's server-side vectors (`docs/rfc014-stateless.md` §5): RFC-014 on
//! MCP 2026-07-28, checked in raw JSON over modern requests ([`Ctx::modern`]: no
//! handshake, every request carrying its own `_meta`). Vectors S1–S4, S8–S15, and events on
//! listen streams (§3.5): S17, S19, S20.
//!
//! Each is `[RFC]` as the kit's others are: what fails it is one of the profile's rules,
//! which bind every server that declares `mcpl/core`; where the fixture contract makes a
//! choice the profile leaves open (an `ended` id on a closed entry, -32601 for
//! `toolsets/*` to a plain host, how many tombstones are kept), a server that chooses
//! otherwise is told where it departs. S11 and S15 need two connections of one principal
//! (skipped over stdio, like the legacy vectors 9, 13, 14, 32). S13 (an idle principal's
//! instances ending after `idleEndMs`) needs its connection closed and a new one after
//! the idle time (skipped over stdio too), and applies only to a server that states an
//! `idleEndMs`: the fixture contract keeps toolsets (§1 of `tests/CONFORMANCE.md`), so
//! against it S13 is reported skipped; the fixture's `--idle-end-ms` makes one that does
//! not.
//!
//! **\[project\]** (the profile does not say how a client makes an event happen, README
//! "readings"): S17 and S19 make one with the contract's `game_later {event: true}`, so
//! they run against every contract server over every transport. S20 (events past a
//! stream's bound) is **\[fixture\]**-dependent: it needs the contract's optional
//! `game_burst`, which raises many events in one step (a server listing none has it
//! skipped), asked for more than the server's stream holds (`RunOptions::event_burst`,
//! past the fixture's Streamable HTTP queue by default), and runs over Streamable HTTP
//! alone, where a listen is its POST's bounded answer (skipped elsewhere, saying why).
//!
//! On a network target the named principal's state is shared with the legacy vectors and
//! earlier runs, so these vectors read the principal's version before they change
//! anything, name their instances uniquely and close what they open.

use super::super::contract::{
    ALL_TOOLS, GAME, GAME_BURST, GAME_FLIP, GAME_LATER, GAME_SECRET, GAME_SHOW, NEWS, TOMBSTONES,
    peal_text,
};
use super::super::error::{Checked, VectorError, ensure, violation};
use super::super::modern::Hinted;
use super::super::peer::Peer;
use super::super::run::VectorId;
use super::super::target::{Ctx, RunOptions};
use super::super::wire::{hints_of, method_of, result_hints, toolset_entry, visibility};
use super::{check_record, closed_entry, later, open_game, takes_next, tool_ok, wait_change};
use mcpl_protocol::ErrorCode;
use mcpl_protocol::mcpl::{CAP_PUSH_EVENTS, CAP_TOOLS};
use mcpl_protocol::meta;
use mcpl_protocol::modern::{MCPL_EXTENSION, SUBSCRIPTION_ID_KEY, SUBSCRIPTIONS_ACKNOWLEDGED};
use mcpl_protocol::stateless::{
    EVENT_NOTIFICATION, FILTER_EVENTS, FILTER_HINTS, HINTS_NOTIFICATION, IDLE_END_MS, VERSION,
};
use serde_json::{Value, json};

/// Why the profile's vectors cannot run against this target (`None`: they run). A server
/// that refuses a modern `server/discover` (legacy-only) or declares no `mcpl/core` on it
/// does not serve the profile; one that cannot be reached is not told apart here, so the
/// vectors run and fail saying why.
pub async fn profile_not_served(opts: &RunOptions) -> Option<String> {
    let ctx = Ctx::new(opts.clone(), VectorId::Stateless(0), "probe".to_owned());
    let mut p = ctx.modern("the profile probe").await.ok()?;
    let r = match p.discover(Hinted::Since(0)).await {
        Ok(r) => r,
        Err(super::super::VectorError::Closed(_)) => {
            return Some(
                "it closed the connection on a modern server/discover (a legacy-only server)"
                    .to_owned(),
            );
        }
        Err(_) => return None,
    };
    if let Some(e) = r.get("error") {
        return Some(format!(
            "it refuses a modern server/discover ({e}): a legacy-only server"
        ));
    }
    let declared = r
        .pointer("/result/capabilities/extensions")
        .and_then(|e| e.get(MCPL_EXTENSION))
        .is_some_and(Value::is_object);
    (!declared).then(|| {
        format!("its server/discover declares no capabilities.extensions[\"{MCPL_EXTENSION}\"]")
    })
}

/// A result's `_meta["mcpl/hints"]` and its version (§3.3: every result to a host that
/// declared `mcpl/core` carries them).
fn vhints<'a>(result: &'a Value, what: &str) -> Checked<(&'a Value, u64)> {
    let h = result_hints(result).ok_or_else(|| {
        violation(format!(
            "{what} carries no _meta[\"mcpl/hints\"], though the request declared mcpl/core (§3.3): {result}"
        ))
    })?;
    let version = version_of(h, what)?;
    Ok((h, version))
}

/// The `version` of versioned hints, which must be a non-negative integer.
fn version_of(h: &Value, what: &str) -> Checked<u64> {
    h.get("version").and_then(Value::as_u64).ok_or_else(|| {
        violation(format!(
            "{what}'s hints have no version, a non-negative integer (§3.3): {h}"
        ))
    })
}

fn is_statement(h: &Value) -> bool {
    h.get("statement") == Some(&json!(true))
}

/// Every entry of versioned hints (tools and toolsets).
fn entries(h: &Value) -> impl Iterator<Item = &Value> {
    ["tools", "toolsets"]
        .into_iter()
        .flat_map(|m| h.get(m).and_then(Value::as_array).into_iter().flatten())
}

/// Every entry's stamp `v`; an entry without one fails (a server stamps every entry it
/// states, §3.3).
fn stamps(h: &Value, what: &str) -> Checked<Vec<u64>> {
    entries(h)
        .map(|e| {
            e.get("v").and_then(Value::as_u64).ok_or_else(|| {
                violation(format!(
                    "{what} states an entry without a stamp v (§3.3): {e}"
                ))
            })
        })
        .collect()
}

/// Checks a delta (§3.3): it carries changes only under a version above `since`, every
/// entry stamped after `since` and at most its version. Returns the version.
fn check_delta(h: &Value, since: u64, what: &str) -> Checked<u64> {
    let version = version_of(h, what)?;
    let stamps = stamps(h, what)?;
    ensure(stamps.is_empty() || version > since, || {
        format!(
            "{what} carries changes under version {version}, not above its since {since}: every change takes a new version (§2): {h}"
        )
    })?;
    for v in stamps {
        ensure(v > since, || {
            format!(
                "{what} repeats an entry stamped {v}, at or below its since {since}: a delta carries only what was stamped after since, and a change never takes a version the host holds (§2, §3.3, S4): {h}"
            )
        })?;
        ensure(v <= version, || {
            format!("{what} states an entry stamped {v}, above its version {version}: {h}")
        })?;
    }
    Ok(version)
}

/// Checks a statement (§3.3): `statement: true`, every entry stamped from 1 to its
/// version. Returns the version.
fn check_statement(h: &Value, what: &str) -> Checked<u64> {
    ensure(is_statement(h), || {
        format!("{what} is not a full statement (statement: true, §3.3): {h}")
    })?;
    let version = version_of(h, what)?;
    for v in stamps(h, what)? {
        ensure((1..=version).contains(&v), || {
            format!("{what} states an entry stamped {v}, outside 1..={version}: {h}")
        })?;
    }
    Ok(version)
}

/// Checks hints are `{version}` alone: what a request whose `since` is current is told.
fn check_current(h: &Value, version: u64, what: &str) -> Checked {
    ensure(
        !is_statement(h) && entries(h).next().is_none() && version_of(h, what)? == version,
        || {
            format!(
                "{what}, sent with the current version {version} as since, should carry {{\"version\": {version}}} alone (§3.3): {h}"
            )
        },
    )
}

/// A modern connection with a game of its own opened on it: the connection, the game's
/// name, and the version of the open.
async fn game_opened(ctx: &Ctx) -> Checked<(Peer, String, u64)> {
    let name = ctx.unique("g");
    let mut p = ctx.modern("the modern connection").await?;
    let a = opened(&mut p, &name).await?;
    Ok((p, name, a))
}

/// Opens the game `name` on `p` since the current version; returns the open's version.
async fn opened(p: &mut Peer, name: &str) -> Checked<u64> {
    let v0 = current(p).await?;
    open_modern(p, name, v0).await
}

/// Flips the game `name`'s secret, sent with `since`; returns the result.
async fn flip(p: &mut Peer, name: &str, since: u64) -> Checked<Value> {
    p.modern_call(GAME_FLIP, json!({}), Some(name), Hinted::Since(since))
        .await
}

/// `h` (of `what`) is a delta, not a statement (§3.3).
fn not_statement(h: &Value, what: &str) -> Checked {
    ensure(!is_statement(h), || {
        format!("{what} is a statement, not a delta (§3.3): {h}")
    })
}

/// A `tools/list` sent with the current version `v` is answered the version alone.
async fn list_is_current(p: &mut Peer, v: u64) -> Checked {
    let (_, first) = p.modern_tools_list(Hinted::Since(v)).await?;
    let (h, _) = vhints(&first, "a tools/list with the current version")?;
    check_current(h, v, "a tools/list")
}

/// The principal's version now: a hinted `tools/list` with `since: 0`, a statement.
async fn current(p: &mut Peer) -> Checked<u64> {
    let (_, first) = p.modern_tools_list(Hinted::Since(0)).await?;
    let (h, _) = vhints(&first, "a hinted tools/list with since 0")?;
    check_statement(h, "a hinted tools/list with since 0")
}

/// Opens a `game` instance named `name` with a modern request sent with `since` (the
/// principal's current version): a delta stating it open. Returns the result's version.
async fn open_modern(p: &mut Peer, name: &str, since: u64) -> Checked<u64> {
    let what = format!("the modern open of {GAME}:{name}");
    let r = p
        .modern_toolsets("toolsets/open", GAME, Some(name), since)
        .await?;
    let result = r
        .get("result")
        .ok_or_else(|| violation(format!("{what} was refused: {}", r["error"])))?;
    ensure(result["instance"] == name, || {
        format!(
            "{what} proposed {name:?}, the server named {} (§4.2)",
            result["instance"]
        )
    })?;
    let (h, _) = vhints(result, &what)?;
    ensure(!is_statement(h), || {
        format!("{what} was sent with the current version as since, yet answers a statement: {h}")
    })?;
    let version = check_delta(h, since, &what)?;
    let state = toolset_entry(h, GAME, Some(name)).and_then(|e| e.get("state"));
    ensure(state == Some(&json!("open")), || {
        format!("{what}'s delta does not state {GAME}:{name} open (§3.3): {h}")
    })?;
    Ok(version)
}

/// Closes `name` with a modern request sent with `since`: a delta stating it closed.
/// Returns the result's version.
async fn close_modern(p: &mut Peer, name: &str, since: u64) -> Checked<u64> {
    let what = format!("the modern close of {GAME}:{name}");
    let r = p
        .modern_toolsets("toolsets/close", GAME, Some(name), since)
        .await?;
    let result = r
        .get("result")
        .ok_or_else(|| violation(format!("{what} was refused: {}", r["error"])))?;
    let (h, _) = vhints(result, &what)?;
    let version = check_delta(h, since, &what)?;
    ensure(
        toolset_entry(h, GAME, Some(name)).is_some_and(|e| e["state"] == "closed"),
        || format!("{what}'s delta does not state {GAME}:{name} closed (§3.3): {h}"),
    )?;
    Ok(version)
}

/// The subscription id a stream message names.
fn subscription(m: &Value) -> Option<&Value> {
    m.pointer("/params/_meta")
        .and_then(|meta| meta.get(SUBSCRIPTION_ID_KEY))
}

/// Waits for the acknowledgement of the listen `id`; returns what it honours.
async fn acknowledged(p: &mut Peer, id: &Value, what: &str) -> Checked<Value> {
    let ack = p
        .wait_for(&format!("the acknowledgement of {what}"), |m| {
            method_of(m) == Some(SUBSCRIPTIONS_ACKNOWLEDGED) && subscription(m) == Some(id)
        })
        .await?;
    Ok(ack
        .pointer("/params/notifications")
        .cloned()
        .unwrap_or(Value::Null))
}

/// Ends the listen `id` (MCP cancellation; on Streamable HTTP the stream also ends with
/// the connection).
async fn end_listen(p: &mut Peer, id: &Value) -> Checked {
    p.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "the vector is done"}),
    )
    .await
}

/// S1: `server/discover` from a client declaring `mcpl/core` states the manifest, its
/// revision included, exactly as a legacy hinted host is shown it, `cacheScope: "private"`.
pub async fn s01(ctx: &Ctx) -> Checked {
    let mut p = ctx.modern("the modern connection").await?;
    let r = p.discover(Hinted::Since(0)).await?;
    let result = r.get("result").ok_or_else(|| {
        violation(format!(
            "server/discover declaring mcpl/core was refused: {}",
            r["error"]
        ))
    })?;
    let core = result
        .pointer("/capabilities/extensions")
        .and_then(|e| e.get(MCPL_EXTENSION))
        .cloned()
        .unwrap_or(Value::Null);
    ensure(core["revision"].is_string(), || {
        format!("capabilities.extensions[\"mcpl/core\"] has no revision (§3.1): {core}")
    })?;
    ensure(core["toolsets"][GAME].is_object(), || {
        format!(
            "capabilities.extensions[\"mcpl/core\"] declares no {GAME}: not the manifest a hinted host is shown (§3.1): {core}"
        )
    })?;
    ensure(result["cacheScope"] == "private", || {
        format!(
            "a discover result carrying mcpl/core is tailored, so cacheScope \"private\" (§3.1), not {}",
            result["cacheScope"]
        )
    })?;
    let mut legacy = ctx.fresh("a legacy hinted connection").await?;
    let init = legacy
        .handshake(super::super::peer::HostKind::Hinted, None)
        .await?;
    let mcpl = init
        .pointer("/capabilities/experimental/mcpl")
        .cloned()
        .unwrap_or(Value::Null);
    for member in ["toolsets", "revision", "toolHints"] {
        ensure(core.get(member) == mcpl.get(member), || {
            format!(
                "mcpl/core's {member} is {}, but legacy capabilities.experimental.mcpl's is {}: the settings are the manifest exactly (§3.1)",
                core.get(member).unwrap_or(&Value::Null),
                mcpl.get(member).unwrap_or(&Value::Null)
            )
        })?;
    }
    legacy.finish().await?;
    p.finish().await
}

/// S2: a modern request without `mcpl/core` is shown no hint `_meta`; tools are listed as
/// to a host without hints (§8), and `toolsets/*` are not offered (-32601: the fixture's
/// choice).
pub async fn s02(ctx: &Ctx) -> Checked {
    let mut p = ctx.modern("a plain modern connection").await?;
    let (tools, first) = p.modern_tools_list(Hinted::Plain).await?;
    for key in [meta::HINTS, VERSION, meta::REV] {
        ensure(
            first.pointer("/_meta").and_then(|m| m.get(key)).is_none(),
            || {
                format!(
                    "a tools/list without mcpl/core carries _meta[\"{key}\"] (§3.1, S2): {first}"
                )
            },
        )?;
    }
    for t in &tools {
        for key in [meta::PRESENCE, meta::VISIBLE, meta::TOOLSET] {
            ensure(
                t.pointer("/_meta").and_then(|m| m.get(key)).is_none(),
                || {
                    format!(
                        "a tool listed to a request without mcpl/core carries _meta[\"{key}\"] (§8, S2): {t}"
                    )
                },
            )?;
        }
    }
    let echo = p
        .modern_call(
            super::super::contract::ECHO,
            json!({"text": "hi"}),
            None,
            Hinted::Plain,
        )
        .await?;
    ensure(result_hints(&echo).is_none(), || {
        format!("a call without mcpl/core carries hints (§3.1, S2): {echo}")
    })?;
    let r = p
        .modern_request("toolsets/list", json!({}), Hinted::Plain)
        .await?;
    match r.get("result") {
        Some(result) => {
            ensure(result_hints(result).is_none(), || {
                format!("toolsets/list without mcpl/core carries hints (S2): {result}")
            })?;
            ctx.choice(false, || {
                format!("toolsets/list is answered to a request without mcpl/core; the fixture answers -32601, as to a legacy host without toolHints (§8): {result}")
            });
        }
        None => ctx.choice(
            r.pointer("/error/code") == Some(&json!(ErrorCode::METHOD_NOT_FOUND.0)),
            || {
                format!(
                    "toolsets/list without mcpl/core is refused with {}, not -32601 (the fixture's choice)",
                    r["error"]
                )
            },
        ),
    }
    p.finish().await
}

/// S3: a request with `since: 0` is answered a full statement stamped with the current
/// version; so is one whose `since` is ahead of the version; one with the current version
/// is told `{version}` alone.
pub async fn s03(ctx: &Ctx) -> Checked {
    let name = ctx.unique("g");
    let mut p = ctx.modern("the modern connection").await?;
    let r = p
        .modern_toolsets("toolsets/open", GAME, Some(&name), 0)
        .await?;
    let result = r.get("result").ok_or_else(|| {
        violation(format!(
            "the open of {GAME}:{name} was refused: {}",
            r["error"]
        ))
    })?;
    let what = "the result of an open sent with since 0";
    let (h, _) = vhints(result, what)?;
    let version = check_statement(h, what)?;
    ensure(
        toolset_entry(h, GAME, Some(&name)).is_some_and(|e| e["state"] == "open"),
        || format!("{what} does not state {GAME}:{name} open: {h}"),
    )?;
    ensure(visibility(h, GAME_SHOW, Some(&name)) == Some(true), || {
        format!("{what} does not state {GAME_SHOW} visible in {name}: {h}")
    })?;
    let (_, first) = p.modern_tools_list(Hinted::Since(0)).await?;
    let what = "a tools/list with since 0";
    let (h, _) = vhints(&first, what)?;
    let again = check_statement(h, what)?;
    ensure(again == version, || {
        format!("{what} is stamped {again}, not the current version {version} (S3)")
    })?;
    let ahead = version + 1_000_000;
    let (_, first) = p.modern_tools_list(Hinted::Since(ahead)).await?;
    let what = format!("a tools/list with since {ahead}, ahead of the version {version}");
    let (h, _) = vhints(&first, &what)?;
    check_statement(h, &what)?;
    list_is_current(&mut p, version).await?;
    close_modern(&mut p, &name, version).await?;
    p.finish().await
}

/// S4: after two changes at versions `a` and `b`, a request with `since: a` carries exactly
/// the entries stamped `b`, each with `v: b`, from any request; one with `since: b` the
/// version alone.
pub async fn s04(ctx: &Ctx) -> Checked {
    let (mut p, name, a) = game_opened(ctx).await?;
    let flipped = flip(&mut p, &name, a).await?;
    tool_ok(&flipped, GAME_FLIP)?;
    let what = format!("{GAME_FLIP}'s result, sent with since {a}");
    let (h, _) = vhints(&flipped, &what)?;
    not_statement(h, &what)?;
    let b = check_delta(h, a, &what)?;
    let stamped = stamps(h, &what)?;
    ensure(stamped.iter().all(|v| *v == b), || {
        format!(
            "{what}: one change, yet its entries are stamped {stamped:?}, not each {b} (§2: every entry a change touches is stamped with its version)"
        )
    })?;
    ensure(
        visibility(h, GAME_SECRET, Some(&name)) == Some(true),
        || format!("{what} does not state {GAME_SECRET} visible in {name}: {h}"),
    )?;
    let flip_tools = h.get("tools").cloned().unwrap_or(json!([]));
    let (_, first) = p.modern_tools_list(Hinted::Since(a)).await?;
    let what = format!("a tools/list sent with since {a}");
    let (h, _) = vhints(&first, &what)?;
    not_statement(h, &what)?;
    ensure(check_delta(h, a, &what)? == b, || {
        format!("{what} names version {}, not {b}: {h}", h["version"])
    })?;
    let listed = h.get("tools").cloned().unwrap_or(json!([]));
    let same = |x: &Value, y: &Value| {
        let (x, y) = (
            x.as_array().cloned().unwrap_or_default(),
            y.as_array().cloned().unwrap_or_default(),
        );
        x.len() == y.len() && x.iter().all(|e| y.contains(e))
    };
    ensure(same(&listed, &flip_tools), || {
        format!(
            "{what} states other tool entries than {GAME_FLIP}'s result, from the same since (§3.3: every entry stamped after since): {listed} / {flip_tools}"
        )
    })?;
    list_is_current(&mut p, b).await?;
    close_modern(&mut p, &name, b).await?;
    p.finish().await
}

/// S8: a request whose `since` is older than the newest tombstone the server forgot is
/// answered a full statement. The fixture keeps [`TOMBSTONES`] tombstones, so the vector
/// closes one more instance than that after its mark; a server that kept them all may
/// answer a delta, which must then carry the first close.
pub async fn s08(ctx: &Ctx) -> Checked {
    let mut p = ctx.modern("the modern connection").await?;
    let mut since = current(&mut p).await?;
    let first = ctx.unique("t0");
    since = open_modern(&mut p, &first, since).await?;
    let before = since;
    since = close_modern(&mut p, &first, since).await?;
    for i in 1..=TOMBSTONES {
        let name = ctx.unique(&format!("t{i}"));
        since = open_modern(&mut p, &name, since).await?;
        since = close_modern(&mut p, &name, since).await?;
    }
    let (_, listed) = p.modern_tools_list(Hinted::Since(before)).await?;
    let what = format!(
        "a tools/list sent with since {before}, before {} closes",
        TOMBSTONES + 1
    );
    let (h, version) = vhints(&listed, &what)?;
    if is_statement(h) {
        check_statement(h, &what)?;
        ensure(version == since, || {
            format!("{what} is a statement stamped {version}, not the current version {since}")
        })?;
    } else {
        check_delta(h, before, &what)?;
        ensure(
            toolset_entry(h, GAME, Some(&first)).is_some_and(|e| e["state"] == "closed"),
            || {
                format!(
                    "{what} is a delta without the closed entry of {first}, stamped after {before}: a server that forgot that tombstone answers a full statement (§3.3, S8): {h}"
                )
            },
        )?;
        ctx.choice(false, || {
            format!(
                "the server kept more than {TOMBSTONES} tombstones, so the statement after a forgotten one was not shown; the fixture keeps {TOMBSTONES}"
            )
        });
    }
    p.finish().await
}

/// S9: a listen asking for `mcpl/hints` is acknowledged with it and told each change as
/// `notifications/mcpl/hints` with stamps; a listen without the member, or from a request
/// without `mcpl/core`, is acknowledged without it and told none.
pub async fn s09(ctx: &Ctx) -> Checked {
    let name = ctx.unique("g");
    let mut p = ctx.modern("the modern connection").await?;
    let now = current(&mut p).await?;
    let hinted = p
        .listen(json!({FILTER_HINTS: true}), Hinted::Since(now))
        .await?;
    let other = p
        .listen(json!({"toolsListChanged": true}), Hinted::Since(now))
        .await?;
    let plain = p.listen(json!({FILTER_HINTS: true}), Hinted::Plain).await?;
    let honoured = acknowledged(&mut p, &hinted, "the listen asking for mcpl/hints").await?;
    ensure(honoured.get(FILTER_HINTS) == Some(&json!(true)), || {
        format!(
            "the acknowledgement of a hinted listen asking for mcpl/hints does not list it (§3.5, S9): {honoured}"
        )
    })?;
    let honoured = acknowledged(&mut p, &other, "the listen without mcpl/hints").await?;
    ensure(honoured.get(FILTER_HINTS).is_none(), || {
        format!(
            "the acknowledgement of a listen that did not ask for mcpl/hints lists it: {honoured}"
        )
    })?;
    let honoured = acknowledged(&mut p, &plain, "the listen without mcpl/core").await?;
    ensure(
        honoured.get(FILTER_HINTS).is_none_or(|v| v != &json!(true)),
        || {
            format!(
                "a listen from a request without mcpl/core is acknowledged with mcpl/hints (§3.1, S9): {honoured}"
            )
        },
    )?;
    let a = open_modern(&mut p, &name, now).await?;
    let told = p
        .wait_for(
            &format!("{HINTS_NOTIFICATION} telling the open of {name}"),
            |m| {
                method_of(m) == Some(HINTS_NOTIFICATION)
                    && subscription(m) == Some(&hinted)
                    && m.get("params").is_some_and(|h| {
                        toolset_entry(h, GAME, Some(&name)).is_some_and(|e| e["state"] == "open")
                    })
            },
        )
        .await?;
    let h = &told["params"];
    let what = format!("the {HINTS_NOTIFICATION} telling the open");
    let version = version_of(h, &what)?;
    ensure(version <= a, || {
        format!("{what} names version {version}, above the open's result's {a}: {h}")
    })?;
    for v in stamps(h, &what)? {
        ensure(v <= version, || {
            format!("{what} states an entry stamped {v}, above its version {version}: {h}")
        })?;
    }
    let c = close_modern(&mut p, &name, a).await?;
    p.wait_for(
        &format!("{HINTS_NOTIFICATION} telling the close of {name}"),
        |m| {
            method_of(m) == Some(HINTS_NOTIFICATION)
                && subscription(m) == Some(&hinted)
                && m.pointer("/params/version") == Some(&json!(c))
        },
    )
    .await?;
    // Anything written to the other streams before the close was told has been read on an
    // ordered link; on Streamable HTTP each stream is its own answer, so this is as far
    // as the kit can see.
    let strays: Vec<&Value> = p
        .log()
        .iter()
        .filter(|m| {
            method_of(m) == Some(HINTS_NOTIFICATION)
                && subscription(m).is_some_and(|s| *s == other || *s == plain)
        })
        .collect();
    ensure(strays.is_empty(), || {
        format!(
            "a stream that was not granted mcpl/hints was sent {HINTS_NOTIFICATION} (§3.5, S9): {}",
            strays[0]
        )
    })?;
    for id in [&hinted, &other, &plain] {
        end_listen(&mut p, id).await?;
    }
    p.finish().await
}

/// S10: a stream opened with a `since` behind the principal's version is sent, first after
/// its acknowledgement, the delta since then.
pub async fn s10(ctx: &Ctx) -> Checked {
    let (mut p, name, a) = game_opened(ctx).await?;
    let flipped = flip(&mut p, &name, a).await?;
    let (h, _) = vhints(&flipped, &format!("{GAME_FLIP}'s result"))?;
    let b = check_delta(h, a, &format!("{GAME_FLIP}'s result"))?;
    let id = p
        .listen(json!({FILTER_HINTS: true}), Hinted::Since(a))
        .await?;
    acknowledged(&mut p, &id, "the listen sent with since behind").await?;
    let first = p
        .wait_for(
            "the stream's first message after its acknowledgement",
            |m| subscription(m) == Some(&id) && method_of(m) != Some(SUBSCRIPTIONS_ACKNOWLEDGED),
        )
        .await?;
    let what = format!("the first message of a stream opened with since {a}");
    ensure(method_of(&first) == Some(HINTS_NOTIFICATION), || {
        format!("{what} is not {HINTS_NOTIFICATION} (§3.5, S10): {first}")
    })?;
    let h = &first["params"];
    ensure(!is_statement(h), || {
        format!("{what} is a statement, not the delta since {a} (§3.5, S10): {h}")
    })?;
    let version = check_delta(h, a, &what)?;
    ensure(version == b, || {
        format!("{what} names version {version}, not the principal's {b} (S10): {h}")
    })?;
    ensure(
        visibility(h, GAME_SECRET, Some(&name)) == Some(true),
        || format!("{what} does not carry the flip made after {a} (S10): {h}"),
    )?;
    end_listen(&mut p, &id).await?;
    close_modern(&mut p, &name, b).await?;
    p.finish().await
}

/// S11 (the server's half): an end from outside while the modern host has no stream and
/// issues no request reaches its next result as the closed entry (with its ended id: the
/// fixture's choice); a later statement names the same end, and lists its record once.
/// The end is caused, and seen to happen, through a legacy connection of the principal.
pub async fn s11(ctx: &Ctx) -> Checked {
    let name = ctx.unique("g");
    let mut m = ctx.modern("the modern host").await?;
    let a = opened(&mut m, &name).await?;
    let mut l = ctx
        .named_hinted("a legacy connection of the principal")
        .await?;
    later(&mut l, &name, json!({"end": true, "event": false})).await?;
    let told = wait_change(&mut l, &format!("the end of {name}"), |h| {
        toolset_entry(h, GAME, Some(&name)).is_some_and(|e| e["state"] == "closed")
    })
    .await?;
    let (h, _) = hints_of(&told).expect("a hint change");
    let legacy_id = closed_entry(h, GAME, Some(&name))?;
    let (_, first) = m.modern_tools_list(Hinted::Since(a)).await?;
    let what = format!("the modern host's next result (since {a}) after the end");
    let (h, _) = vhints(&first, &what)?;
    ensure(!is_statement(h), || {
        format!("{what} is a statement, not a delta: {h}")
    })?;
    let b = check_delta(h, a, &what)?;
    let entry = toolset_entry(h, GAME, Some(&name))
        .filter(|e| e["state"] == "closed")
        .ok_or_else(|| {
            violation(format!(
                "{what} does not carry the closed entry of {name} (§3.5, S11): {h}"
            ))
        })?;
    let id = entry["ended"].as_str().map(str::to_owned);
    ctx.choice(id.is_some(), || {
        format!("the closed entry of {name}, an end the host did not ask for, carries no ended record id (§4.3): {entry}")
    });
    ensure(
        id.is_none() || legacy_id.is_none() || id == legacy_id,
        || {
            format!(
                "the modern host is told the ended record {id:?}, the legacy connection {legacy_id:?}: one end, one record (§4.3)"
            )
        },
    )?;
    let s = m
        .modern_result("toolsets/list", json!({}), Hinted::Since(b))
        .await?;
    let what = "a later toolsets/list";
    let (h, _) = vhints(&s, what)?;
    check_statement(h, what)?;
    let again = toolset_entry(h, GAME, Some(&name))
        .filter(|e| e["state"] == "closed")
        .ok_or_else(|| {
            violation(format!(
                "{what} drops the closed entry of {name} while its record is kept (§2): {h}"
            ))
        })?;
    ensure(again.get("ended") == entry.get("ended"), || {
        format!(
            "{what} names the end of {name} as {again}, the delta as {entry}: a host would tell it twice (S11)"
        )
    })?;
    one_record(&s, &name, what, id.as_deref())?;
    l.finish().await?;
    m.finish().await
}

/// A statement's `ended` lists one record of the game instance `name`, well formed (§4.3),
/// and under `id` when the closed entry named one.
fn one_record(s: &Value, name: &str, what: &str, id: Option<&str>) -> Checked {
    let records: Vec<&Value> = s["ended"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["toolset"] == GAME && r["instance"] == json!(name))
        .collect();
    ensure(records.len() == 1, || {
        format!("{what} does not list one ended record for {name} (§4.3): {s}")
    })?;
    check_record(records[0], GAME, Some(name))?;
    if let Some(id) = id {
        ensure(records[0]["id"] == json!(id), || {
            format!(
                "the closed entry names the record {id}, the statement lists {} (§4.3)",
                records[0]
            )
        })?;
    }
    Ok(())
}

/// S12: an open retried with the same proposed name adopts, changing nothing; a close
/// retried succeeds, changing nothing; a close of what was never open is refused.
pub async fn s12(ctx: &Ctx) -> Checked {
    let (mut p, name, a) = game_opened(ctx).await?;
    let r = p
        .modern_toolsets("toolsets/open", GAME, Some(&name), a)
        .await?;
    let what = "the retried open";
    let result = r
        .get("result")
        .ok_or_else(|| violation(format!("{what} was refused: {}", r["error"])))?;
    ensure(
        result["adopted"] == true && result["instance"] == name,
        || format!("{what} must adopt {name} (adopted: true, §3.4, S12): {result}"),
    )?;
    let (h, _) = vhints(result, what)?;
    check_current(h, a, what)?;
    let c = close_modern(&mut p, &name, a).await?;
    let r = p
        .modern_toolsets("toolsets/close", GAME, Some(&name), c)
        .await?;
    let what = "the retried close";
    let result = r.get("result").ok_or_else(|| {
        violation(format!(
            "{what} of {name}, whose tombstone is kept, must succeed again (§3.4, S12): {}",
            r["error"]
        ))
    })?;
    let (h, _) = vhints(result, what)?;
    check_current(h, c, what)?;
    let never = ctx.unique("never");
    let r = p
        .modern_toolsets("toolsets/close", GAME, Some(&never), c)
        .await?;
    ensure(r.get("error").is_some(), || {
        format!("a close of {never}, never open, must be refused (§3.4): {r}")
    })?;
    p.finish().await
}

/// The longest idle time S13 waits for (a server stating more is reported skipped).
const MAX_IDLE_WAIT_MS: u64 = 10_000;

/// S13: on a server that does not keep toolsets — it states `idleEndMs` in `mcpl/core`'s
/// settings (profile §3.6) — a principal idle that long (no request, no open stream) has
/// its instances ended, each with an ended record, and its next request's result carries
/// each end by its stamp. A server that states no `idleEndMs` keeps toolsets: the vector
/// does not apply to it.
pub async fn s13(ctx: &Ctx) -> Checked {
    let mut p = ctx.modern("the modern connection").await?;
    let found = p.discover(Hinted::Since(0)).await?;
    let stated = found
        .pointer("/result/capabilities/extensions")
        .and_then(|e| e.get(MCPL_EXTENSION))
        .and_then(|c| c.get(IDLE_END_MS))
        .cloned();
    let Some(stated) = stated else {
        p.finish().await?;
        return Err(VectorError::NotApplicable(format!(
            "the server states no {IDLE_END_MS} in {MCPL_EXTENSION}: it keeps toolsets, so no idle time ends them (profile §3.6)"
        )));
    };
    let ms = stated.as_u64().ok_or_else(|| {
        violation(format!(
            "{IDLE_END_MS} must be a whole number of milliseconds (profile §3.6): {stated}"
        ))
    })?;
    if ms > MAX_IDLE_WAIT_MS {
        p.finish().await?;
        return Err(VectorError::NotApplicable(format!(
            "{IDLE_END_MS} is {ms}: longer than this kit waits ({MAX_IDLE_WAIT_MS} ms)"
        )));
    }
    let Some(pass_time) = ctx.pass_time() else {
        p.finish().await?;
        return Err(VectorError::NotApplicable(
            "this run was given no way to let the server's time pass (RunOptions::pass_time)"
                .to_owned(),
        ));
    };
    let name = ctx.unique("g");
    let a = opened(&mut p, &name).await?;
    p.finish().await?;
    p.close();
    // The principal is idle now: no request, no stream, for twice the time stated.
    let idle = ms * 2;
    pass_time.pass(std::time::Duration::from_millis(idle)).await;
    let mut q = ctx
        .modern("a modern connection after the idle time")
        .await?;
    let (_, r) = q.modern_tools_list(Hinted::Since(a)).await?;
    let what = format!("the first result after {idle} ms idle (since {a})");
    let (h, b) = vhints(&r, &what)?;
    let entry = toolset_entry(h, GAME, Some(&name))
        .filter(|e| e["state"] == "closed")
        .ok_or_else(|| {
            violation(format!(
                "{what} does not carry the end of {name}, open when the principal went idle for longer than its {IDLE_END_MS} {ms} (profile §3.6, S13): {h}"
            ))
        })?;
    let id = entry["ended"].as_str().map(str::to_owned);
    ctx.choice(id.is_some(), || {
        format!("the closed entry of {name}, ended by the idle time, carries no ended record id (§4.3): {entry}")
    });
    let s = q
        .modern_result("toolsets/list", json!({}), Hinted::Since(b))
        .await?;
    one_record(
        &s,
        &name,
        "a toolsets/list after the idle end",
        id.as_deref(),
    )?;
    q.finish().await
}

/// S14: `tools/list` to a hinted modern host lists every tool with its hints, ordered by
/// name, `ttlMs: 0`, `cacheScope: "private"`, with `_meta["mcpl/version"]` and no rev.
pub async fn s14(ctx: &Ctx) -> Checked {
    let mut p = ctx.modern("the modern connection").await?;
    let (tools, first) = p.modern_tools_list(Hinted::Since(0)).await?;
    ensure(first["ttlMs"] == 0, || {
        format!(
            "a hinted tools/list has ttlMs {}, not 0 (§3.4, S14)",
            first["ttlMs"]
        )
    })?;
    ensure(first["cacheScope"] == "private", || {
        format!(
            "a hinted tools/list has cacheScope {}, not \"private\" (§3.4, S14)",
            first["cacheScope"]
        )
    })?;
    let (h, version) = vhints(&first, "a hinted tools/list")?;
    check_statement(h, "a hinted tools/list with since 0")?;
    let meta = first.get("_meta").cloned().unwrap_or(Value::Null);
    let listed = meta.get(VERSION).and_then(Value::as_u64);
    ensure(listed.is_some_and(|v| v <= version), || {
        format!(
            "a hinted tools/list's _meta[\"mcpl/version\"] is {}, not a version up to its hints' {version} (§3.4, S14)",
            meta.get(VERSION).unwrap_or(&Value::Null)
        )
    })?;
    ensure(meta.get(meta::REV).is_none(), || {
        format!("a hinted modern tools/list names a legacy mcpl/rev (§2): {meta}")
    })?;
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    ensure(names == sorted, || {
        format!("a hinted tools/list is not ordered by name (§3.4, S14): {names:?}")
    })?;
    for name in ALL_TOOLS {
        ensure(names.contains(&name), || {
            format!(
                "a hinted tools/list does not list {name}: every tool, visible or not (§3, S14)"
            )
        })?;
    }
    let hint = |tool: &str, key: &str| {
        tools
            .iter()
            .find(|t| t["name"] == tool)
            .and_then(|t| t.pointer("/_meta"))
            .and_then(|m| m.get(key))
            .cloned()
    };
    ensure(
        hint(GAME_SECRET, meta::TOOLSET) == Some(json!(GAME)),
        || format!("{GAME_SECRET} is not listed with mcpl/toolset \"{GAME}\" (§3, S14)"),
    )?;
    ensure(hint(NEWS, meta::PRESENCE) == Some(json!("dynamic")), || {
        format!("{NEWS} is not listed dynamic (§3, S14)")
    })?;
    p.finish().await
}

/// S15: one principal, a legacy connection and modern requests: a change through either
/// is seen by both — the modern host by its stamp, the legacy connection on its next rev.
pub async fn s15(ctx: &Ctx) -> Checked {
    let name = ctx.unique("g");
    let mut l = ctx.named_hinted("the legacy connection").await?;
    let mut m = ctx.modern("the modern host").await?;
    let v0 = current(&mut m).await?;
    open_game(&mut l, Some(&name), None).await?;
    let (_, first) = m.modern_tools_list(Hinted::Since(v0)).await?;
    let what = format!("the modern host's tools/list (since {v0}) after a legacy open");
    let (h, _) = vhints(&first, &what)?;
    ensure(!is_statement(h), || {
        format!("{what} is a statement, not a delta: {h}")
    })?;
    let a = check_delta(h, v0, &what)?;
    ensure(
        toolset_entry(h, GAME, Some(&name)).is_some_and(|e| e["state"] == "open"),
        || format!("{what} does not carry the open of {name} by its stamp (§4, S15): {h}"),
    )?;
    let last = l.last_rev();
    let flipped = flip(&mut m, &name, a).await?;
    tool_ok(&flipped, GAME_FLIP)?;
    let (h, _) = vhints(&flipped, &format!("{GAME_FLIP}'s modern result"))?;
    check_delta(h, a, &format!("{GAME_FLIP}'s modern result"))?;
    let told = wait_change(&mut l, "the flip made by a modern request", |h| {
        visibility(h, GAME_SECRET, Some(&name)).is_some()
    })
    .await?;
    let (h, _) = hints_of(&told).expect("a hint change");
    takes_next(
        h,
        last,
        "the modern flip as the legacy connection hears it (§4, S15)",
    )?;
    ensure(
        visibility(h, GAME_SECRET, Some(&name)) == Some(true),
        || format!("the legacy connection was not told {GAME_SECRET} became visible: {h}"),
    )?;
    l.close_ok(GAME, Some(&name)).await?;
    l.finish().await?;
    m.finish().await
}

/// The grant a listen asking for `mcpl/events` runs under (profile §3.5).
const PUSH: &[&str] = &[CAP_TOOLS, CAP_PUSH_EVENTS];

/// True for a `notifications/mcpl/event` on the stream `id`.
fn event_on(m: &Value, id: &Value) -> bool {
    method_of(m) == Some(EVENT_NOTIFICATION) && subscription(m) == Some(id)
}

/// Waits for the acknowledgement of the listen `id`, which asked for `mcpl/events` under a
/// grant with `pushEvents`, and checks it lists the member (profile §3.5).
async fn events_acknowledged(p: &mut Peer, id: &Value, what: &str) -> Checked {
    let honoured = acknowledged(p, id, what).await?;
    ensure(honoured.get(FILTER_EVENTS) == Some(&json!(true)), || {
        format!(
            "the acknowledgement of {what} does not list {FILTER_EVENTS}, though its grant has pushEvents (§3.5, S17): {honoured}"
        )
    })
}

/// Checks a `notifications/mcpl/event` about the game instance `name` (profile §3.5): the
/// legacy `push/event` params (SPEC §9: `featureSet`, `eventId`, an RFC 3339 `timestamp`,
/// a `payload` with content; RFC-014's `toolset` and `instance`; no `coalesce`) and its
/// changes as versioned `hints`, every entry stamped after `mark` (the principal's
/// version when the stream opened, or before) and at most its version. Returns the hints.
fn check_event<'a>(m: &'a Value, name: &str, mark: u64, what: &str) -> Checked<&'a Value> {
    let params = &m["params"];
    ensure(
        params["featureSet"].as_str().is_some_and(|f| !f.is_empty()),
        || format!("{what} names no featureSet (§3.5: the push/event params, SPEC §9): {params}"),
    )?;
    ensure(
        params["eventId"].as_str().is_some_and(|e| !e.is_empty()),
        || format!("{what} has no eventId (§3.5, SPEC §9): {params}"),
    )?;
    ensure(
        params["timestamp"]
            .as_str()
            .is_some_and(super::super::wire::is_rfc3339),
        || format!("{what}'s timestamp is not an RFC 3339 time (§3.5, SPEC §9): {params}"),
    )?;
    ensure(
        params["payload"]["content"]
            .as_array()
            .is_some_and(|c| !c.is_empty()),
        || format!("{what} has no payload content explaining it (§3.5, SPEC §9): {params}"),
    )?;
    ensure(
        params["toolset"] == GAME && params["instance"] == name,
        || {
            format!(
                "{what} does not name the toolset {GAME} and instance {name} it is about (§3.5): {params}"
            )
        },
    )?;
    ensure(params.get("coalesce").is_none(), || {
        format!("{what} carries coalesce: an event with hints never does (§3.5, §5.2): {params}")
    })?;
    let h = params.get("hints").filter(|h| h.is_object()).ok_or_else(|| {
        violation(format!(
            "{what} carries no hints: its changes ride it as versioned hints (§3.5, S17): {params}"
        ))
    })?;
    ensure(!is_statement(h), || {
        format!(
            "{what}'s hints are a statement, not the changes since the stream's mark (§3.5): {h}"
        )
    })?;
    check_delta(h, mark, &format!("{what}'s hints"))?;
    Ok(h)
}

/// Calls `game_later {event: true}` in `name` with a modern request: answered at once,
/// then a step of its own flips `game_secret` for the caller and raises an event for it.
async fn event_later(p: &mut Peer, name: &str, since: u64) -> Checked {
    let r = p
        .modern_call(
            GAME_LATER,
            json!({"event": true}),
            Some(name),
            Hinted::Since(since),
        )
        .await?;
    tool_ok(&r, GAME_LATER).map(drop)
}

/// S17: a listen asking for `mcpl/events` under a grant with `pushEvents` is acknowledged
/// with it and sent each event as `notifications/mcpl/event` — the legacy `push/event`
/// params with its changes as stamped `hints`; a listen asking under a grant without
/// `pushEvents`, one with no grant, and one not asking are acknowledged without it and sent
/// none. The event is `game_later`'s (a step of its own, explained by an event).
pub async fn s17(ctx: &Ctx) -> Checked {
    let (mut p, name, a) = game_opened(ctx).await?;
    let events = json!({FILTER_EVENTS: true});
    let since = Hinted::Since(a);
    let granted = p.listen_granted(events.clone(), since, Some(PUSH)).await?;
    let tools_only = p
        .listen_granted(events.clone(), since, Some(&[CAP_TOOLS]))
        .await?;
    let no_grant = p.listen_granted(events, since, None).await?;
    let not_asked = p
        .listen_granted(json!({FILTER_HINTS: true}), since, Some(PUSH))
        .await?;
    events_acknowledged(
        &mut p,
        &granted,
        "a listen asking for mcpl/events under a grant with pushEvents",
    )
    .await?;
    let others = [
        (
            &tools_only,
            "a listen asking for mcpl/events under a grant without pushEvents",
        ),
        (&no_grant, "a listen asking for mcpl/events with no grant"),
        (
            &not_asked,
            "a listen not asking for mcpl/events (under a grant with pushEvents)",
        ),
    ];
    for (id, what) in others {
        let honoured = acknowledged(&mut p, id, what).await?;
        ensure(
            honoured
                .get(FILTER_EVENTS)
                .is_none_or(|v| v != &json!(true)),
            || {
                format!(
                    "the acknowledgement of {what} lists {FILTER_EVENTS} (§3.5, S17): {honoured}"
                )
            },
        )?;
    }
    event_later(&mut p, &name, a).await?;
    let told = p
        .wait_for(
            &format!("{EVENT_NOTIFICATION} on the stream granted {FILTER_EVENTS}"),
            |m| event_on(m, &granted),
        )
        .await?;
    let what = format!("the {EVENT_NOTIFICATION} of {GAME_LATER}");
    let h = check_event(&told, &name, a, &what)?;
    let b = version_of(h, &what)?;
    ensure(
        visibility(h, GAME_SECRET, Some(&name)) == Some(true),
        || {
            format!(
                "{what}'s hints do not carry the change it explains, {GAME_SECRET} visible in {name} (§3.5, S17): {h}"
            )
        },
    )?;
    // Everything written before this result has been read on an ordered link; on
    // Streamable HTTP each stream is its own answer, so this is as far as the kit can see.
    let (_, r) = p.modern_tools_list(Hinted::Since(b)).await?;
    let (_, c) = vhints(&r, "a tools/list after the event")?;
    let strays: Vec<&Value> = p
        .log()
        .iter()
        .filter(|m| others.iter().any(|(id, _)| event_on(m, id)))
        .collect();
    ensure(strays.is_empty(), || {
        format!(
            "a stream not acknowledged {FILTER_EVENTS} was sent {EVENT_NOTIFICATION} (§3.5, S17): {}",
            strays[0]
        )
    })?;
    let on_granted = p.log().iter().filter(|m| event_on(m, &granted)).count();
    ensure(on_granted == 1, || {
        format!(
            "one event was raised, the stream granted {FILTER_EVENTS} was sent {on_granted} (§3.5, S17)"
        )
    })?;
    for id in [&granted, &tools_only, &no_grant, &not_asked] {
        end_listen(&mut p, id).await?;
    }
    close_modern(&mut p, &name, c).await?;
    p.finish().await
}

/// S19: an event raised while the principal has no stream carrying events is not
/// delivered — not on a stream of hints alone, nor on an events stream opened after it —
/// and its changes reach the next result's delta by their stamps; the next event reaches
/// the stream opened since.
pub async fn s19(ctx: &Ctx) -> Checked {
    let (mut p, name, a) = game_opened(ctx).await?;
    // A stream of hints alone, under a grant with pushEvents: it carries no event, and
    // tells the kit when the event's step has happened.
    let hints = p
        .listen_granted(json!({FILTER_HINTS: true}), Hinted::Since(a), Some(PUSH))
        .await?;
    acknowledged(&mut p, &hints, "the listen of hints alone").await?;
    event_later(&mut p, &name, a).await?;
    p.wait_for(
        &format!("{HINTS_NOTIFICATION} telling {GAME_LATER}'s flip"),
        |m| {
            method_of(m) == Some(HINTS_NOTIFICATION)
                && subscription(m) == Some(&hints)
                && m.get("params")
                    .is_some_and(|h| visibility(h, GAME_SECRET, Some(&name)) == Some(true))
        },
    )
    .await?;
    let (_, r) = p.modern_tools_list(Hinted::Since(a)).await?;
    let what = format!("the next result (since {a}) after an event no stream carried");
    let (h, _) = vhints(&r, &what)?;
    let b = check_delta(h, a, &what)?;
    ensure(
        visibility(h, GAME_SECRET, Some(&name)) == Some(true),
        || {
            format!(
                "{what} does not carry the event's change, {GAME_SECRET} visible in {name} (§3.5, S19): {h}"
            )
        },
    )?;
    let events = p
        .listen_granted(json!({FILTER_EVENTS: true}), Hinted::Since(b), Some(PUSH))
        .await?;
    events_acknowledged(&mut p, &events, "the events stream opened after the event").await?;
    event_later(&mut p, &name, b).await?;
    let first = p
        .wait_for(
            &format!("the first {EVENT_NOTIFICATION} on the stream opened after the event"),
            |m| event_on(m, &events),
        )
        .await?;
    let what = format!("the first {EVENT_NOTIFICATION} on the stream opened after the event");
    let h = check_event(&first, &name, b, &what)?;
    ensure(
        visibility(h, GAME_SECRET, Some(&name)) == Some(false),
        || {
            format!(
                "{what} is not the next event's ({GAME_SECRET} invisible again, after {b}): the event raised while no stream carried events was told late (§3.5, S19): {h}"
            )
        },
    )?;
    let c = version_of(h, &what)?;
    // Everything written before this result has been read on an ordered link (as in S17).
    p.modern_tools_list(Hinted::Since(c)).await?;
    let strays: Vec<&Value> = p.log().iter().filter(|m| event_on(m, &hints)).collect();
    ensure(strays.is_empty(), || {
        format!(
            "a stream that did not ask for {FILTER_EVENTS} was sent {EVENT_NOTIFICATION} (§3.5, S17, S19): {}",
            strays[0]
        )
    })?;
    end_listen(&mut p, &hints).await?;
    end_listen(&mut p, &events).await?;
    close_modern(&mut p, &name, c).await?;
    p.finish().await
}

/// The `n` of a `game_burst` event (`"peal {n}"`), none for any other event.
fn peal_of(m: &Value) -> Option<u64> {
    let text = m.pointer("/params/payload/content/0/text")?.as_str()?;
    let n: u64 = text.strip_prefix("peal ")?.parse().ok()?;
    (peal_text(n) == text).then_some(n)
}

/// S20 (**\[fixture\]**: the contract's optional `game_burst`, and a burst above the
/// server's bound, `RunOptions::event_burst`): on Streamable HTTP, where a listen stream
/// is its POST's bounded answer, one step raising more events than it holds has those past
/// the bound dropped and the rest arrive in order, each once; the next result's delta
/// carries what the dropped ones did; the stream goes on (a later event arrives on it).
pub async fn s20(ctx: &Ctx) -> Checked {
    if !ctx.over_streamable_http() {
        return Err(VectorError::NotApplicable(
            "a stream's bound is checked on Streamable HTTP alone, where a listen is its POST's bounded answer and an event past it is dropped; on stdio and WebSocket a peer that stops reading loses its connection (profile §3.5)".to_owned(),
        ));
    }
    let mut p = ctx.modern("the modern connection").await?;
    let (tools, first) = p.modern_tools_list(Hinted::Since(0)).await?;
    if !tools.iter().any(|t| t["name"] == GAME_BURST) {
        p.finish().await?;
        return Err(VectorError::NotApplicable(format!(
            "the server lists no {GAME_BURST}, the fixture contract's optional tool raising many events at once (tests/CONFORMANCE.md §3)"
        )));
    }
    let (h, _) = vhints(&first, "a hinted tools/list with since 0")?;
    let v0 = check_statement(h, "a hinted tools/list with since 0")?;
    let name = ctx.unique("g");
    let a = open_modern(&mut p, &name, v0).await?;
    let stream = p
        .listen_granted(json!({FILTER_EVENTS: true}), Hinted::Since(a), Some(PUSH))
        .await?;
    events_acknowledged(&mut p, &stream, "the events stream").await?;
    let count = ctx.event_burst();
    let r = p
        .modern_call(
            GAME_BURST,
            json!({"count": count}),
            Some(&name),
            Hinted::Since(a),
        )
        .await?;
    tool_ok(&r, GAME_BURST)?;
    let mut peals: Vec<u64> = Vec::new();
    let mut burst_version = None;
    let follow_up = loop {
        let m = p
            .wait_for(
                &format!("{EVENT_NOTIFICATION} of the burst of {count}, then a later one"),
                |m| event_on(m, &stream),
            )
            .await?;
        let Some(n) = peal_of(&m) else {
            break m;
        };
        let what = format!("the burst's event {n}");
        ensure(peals.last().is_none_or(|last| n > *last), || {
            format!(
                "{what} came after event {}: the events that arrive arrive in order, each once (§3.5, S20)",
                peals.last().copied().unwrap_or_default()
            )
        })?;
        ensure(n < count, || format!("{what}: the burst raised {count}"))?;
        let h = check_event(&m, &name, a, &what)?;
        ensure(
            visibility(h, GAME_SECRET, Some(&name)) == Some(true),
            || {
                format!(
                    "{what}'s hints do not carry the burst's flip, {GAME_SECRET} visible in {name} (§3.5): {h}"
                )
            },
        )?;
        let b = version_of(h, &what)?;
        peals.push(n);
        if burst_version.is_none() {
            burst_version = Some(b);
            // What every event of the burst carried, dropped or not, the next result's
            // delta from the mark before the burst carries by its stamps.
            let (_, r) = p.modern_tools_list(Hinted::Since(a)).await?;
            let what = format!("the next result (since {a}) after the burst");
            let (h, _) = vhints(&r, &what)?;
            check_delta(h, a, &what)?;
            let stamp = super::super::wire::entries_for(h, GAME_SECRET, Some(&name))
                .filter_map(|e| e.get("v").and_then(Value::as_u64))
                .last();
            ensure(
                visibility(h, GAME_SECRET, Some(&name)) == Some(true) && stamp == Some(b),
                || {
                    format!(
                        "{what} does not carry the burst's change, {GAME_SECRET} visible in {name} stamped {b} (§3.5, S20): {h}"
                    )
                },
            )?;
            // A later event, once the stream has room again (its first event has been
            // taken from it): it arrives after what is left of the burst.
            event_later(&mut p, &name, b).await?;
        }
    };
    ensure(!peals.is_empty(), || {
        format!(
            "none of the burst's {count} events arrived before a later one: those within the stream's bound arrive (§3.5, S20)"
        )
    })?;
    ensure((peals.len() as u64) < count, || {
        format!(
            "all {count} events of one step arrived: the stream's queue held them all — give --event-burst more than the server's bound — or nothing bounds it (§3.5: a stream's messages join its transport's bounded queue, S20)"
        )
    })?;
    let b = burst_version.unwrap_or(a);
    let what = "the event after the burst";
    let h = check_event(&follow_up, &name, b, what)?;
    let c = version_of(h, what)?;
    end_listen(&mut p, &stream).await?;
    close_modern(&mut p, &name, c).await?;
    p.finish().await
}
