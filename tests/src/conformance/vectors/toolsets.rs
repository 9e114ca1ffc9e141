//! §4.1–§4.3 on the server side: opening (names, adoption, options), the full statement,
//! ended records, default-open toolsets, manifest changes.
//! Vectors 5, 6, 17, 18, 23, 25, 33, 38.

use super::super::contract::{
    DEFAULT_SIZE, EXTRA_PING, GAME, GAME_BURST, GAME_FLIP, GAME_SHOW, GAME_TOOLS, LOBBY, LOBBY_WHO,
    MANIFEST_DROP, MANIFEST_RESTORE, PANEL, PANEL_READ, TEMP, show_text,
};
use super::super::error::{Checked, ensure, violation};
use super::super::peer::Peer;
use super::super::target::Ctx;
use super::super::wire::{
    ended_record, hints_of, method_of, open_records, result_hints, stated_visible, text_of,
    toolset_entry,
};
use super::{
    adopted, check_cap, check_record, close_told, closed_entry, hints, open_game, takes_next,
    tool_error, tool_ok,
};
use mcpl_protocol::ErrorCode;
use mcpl_protocol::names::is_valid_name;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Vector 5: an open without a name gets one from the server; calls naming it reach it.
pub async fn v05(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let a = open_game(&mut p, None, Some(2)).await?;
    ctx.choice(is_valid_name(&a), || {
        format!(
            "the server chose the instance name {a:?}, outside the fixture's name grammar (§4.1)"
        )
    });
    let r = p.call(GAME_SHOW, json!({}), Some(&a)).await?;
    let text = tool_ok(&r, GAME_SHOW)?;
    ensure(text == show_text(&a, 2, 0), || {
        format!("a call naming {a} did not reach it: {text:?}")
    })?;
    let b = open_game(&mut p, None, None).await?;
    ensure(a != b, || {
        format!(
            "a second open without a name returned the same instance {a} (§4.2: not idempotent)"
        )
    })?;
    let text = tool_ok(&p.call(GAME_SHOW, json!({}), Some(&b)).await?, GAME_SHOW)?;
    ensure(text == show_text(&b, DEFAULT_SIZE, 0), || {
        format!("a call naming {b} did not reach it: {text:?}")
    })?;
    for g in [&a, &b] {
        p.close_ok(GAME, Some(g)).await?;
    }
    p.finish().await
}

/// Vector 6: with two instances open, a call naming none (or an unknown one) is a tool
/// error naming the open ones.
pub async fn v06(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let g1 = open_game(&mut p, Some("g1"), None).await?;
    let g2 = open_game(&mut p, Some("g2"), None).await?;
    for (instance, what) in [
        (None, "naming no instance"),
        (Some("g9"), "naming g9, not open"),
    ] {
        let r = p.call(GAME_SHOW, json!({}), instance).await?;
        let text = tool_error(&r, &format!("a call of {GAME_SHOW} {what}, with two open"))?;
        ensure(text.contains(&g1) && text.contains(&g2), || {
            format!(
                "the tool error for a call {what} does not name the open instances {g1} and {g2} (§4.5): {text:?}"
            )
        })?;
    }
    let text = tool_ok(&p.call(GAME_SHOW, json!({}), Some(&g2)).await?, GAME_SHOW)?;
    ensure(text == show_text(&g2, DEFAULT_SIZE, 0), || {
        format!("a call naming {g2} did not reach it: {text:?}")
    })?;
    for g in [&g1, &g2] {
        p.close_ok(GAME, Some(g)).await?;
    }
    p.finish().await
}

/// Vector 17: opening an open instance adopts it, changing nothing (one instance stays);
/// differing options are reported in the content.
pub async fn v17(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let g = open_game(&mut p, Some("g1"), Some(3)).await?;
    let o = p.open_ok(GAME, Some(&g), Some(json!({"size": 3}))).await?;
    adopted(&o, Some(&g), "the same options")?;
    ctx.choice(result_hints(&o).is_none(), || {
        format!("an adoption, which changes nothing, carries hints and so takes a rev: {o}")
    });
    let o = p.open_ok(GAME, Some(&g), Some(json!({"size": 5}))).await?;
    adopted(&o, Some(&g), "other options")?;
    ensure(!text_of(&o).trim().is_empty(), || {
        format!("an adoption with other options must say so in its content (§4.2): {o}")
    })?;
    ctx.choice(text_of(&o).contains("size"), || {
        format!("the adoption's content does not name the option that differs: {o}")
    });
    // §4.2: absent options are `{}`: they differ from `{size: 3}`.
    let o = p.open_ok(GAME, Some(&g), None).await?;
    adopted(&o, Some(&g), "no options")?;
    ensure(!text_of(&o).trim().is_empty(), || {
        format!(
            "an adoption without options of an instance opened with some must say they differ (§4.2: absent is {{}}): {o}"
        )
    })?;
    let o = p.open_ok(LOBBY, None, None).await?;
    adopted(&o, None, "the open lobby")?;
    let s = p.statement().await?;
    let records: Vec<&Value> = open_records(&s, GAME, Some(&g)).collect();
    ensure(records.len() == 1, || {
        format!(
            "after the adoptions the statement lists {} records of {g}: {s}",
            records.len()
        )
    })?;
    ensure(
        records[0]
            .get("options")
            .is_none_or(|o| o == &json!({"size": 3})),
        || {
            format!(
                "the adoption changed the instance's options: {}",
                records[0]
            )
        },
    )?;
    p.close_ok(GAME, Some(&g)).await?;
    p.finish().await
}

fn refused_invalid(r: &Value, what: &str) -> Checked {
    ensure(
        r.get("result").is_none()
            && r.pointer("/error/code") == Some(&json!(ErrorCode::INVALID_PARAMS.0)),
        || format!("{what} must be refused with -32602 (§4.2): {r}"),
    )
}

/// Vector 18: a proposed name is used as given, or the open is refused — never another
/// name; a name for a toolset without instances, and invalid options, are refused; a
/// refusal opens nothing. Which names are refused is the fixture's choice (§4.1, the peer
/// grammar): SPEC §17.2's charset `[A-Za-z0-9._:*-]`, 1 to 128 bytes.
pub async fn v18(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let g = open_game(&mut p, Some("my-game_1"), None).await?;
    let mut kept = vec![g.clone()];
    let long = "x".repeat(129);
    let odd = [
        ("g.1", true),
        ("a:b", true),
        ("-dash", true),
        ("bad name", false),
        ("", false),
        ("x/y", false),
        (long.as_str(), false),
    ];
    for (name, fixture_takes) in odd {
        let r = p.open(GAME, Some(name), None).await?;
        match r.get("result") {
            Some(result) => {
                ensure(result["instance"] == json!(name), || {
                    format!(
                        "an open proposing {name:?} opened another name (§4.2: used as given or refused): {r}"
                    )
                })?;
                kept.push(name.to_owned());
                ctx.choice(fixture_takes, || {
                    format!("the name {name:?}, outside the peer grammar, was taken")
                });
            }
            None => {
                refused_invalid(&r, &format!("an open refusing the name {name:?}"))?;
                ctx.choice(!fixture_takes, || {
                    format!("the name {name:?}, within the peer grammar, was refused")
                });
            }
        }
    }
    let r = p.open(PANEL, Some("s1"), None).await?;
    refused_invalid(
        &r,
        &format!("an open of {PANEL} (no instances) naming an instance"),
    )?;
    for (options, problem) in [
        (json!({"size": 99}), "size"),
        (json!({"colour": "red"}), "colour"),
    ] {
        let r = p.open(GAME, Some("g2"), Some(options.clone())).await?;
        refused_invalid(
            &r,
            &format!("an open with the options {options}, outside the schema"),
        )?;
        ensure(r["error"].to_string().contains(problem), || {
            format!(
                "the refusal of the options {options} does not name the problem, {problem} (§4.2): {r}"
            )
        })?;
    }
    let s = p.statement().await?;
    let mut games: Vec<&str> = s["open"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["toolset"] == GAME)
        .filter_map(|r| r["instance"].as_str())
        .collect();
    games.sort_unstable();
    let mut want: Vec<&str> = kept.iter().map(String::as_str).collect();
    want.sort_unstable();
    ensure(games == want, || {
        format!(
            "after the opens and refusals the open {GAME} instances are {games:?}, not {want:?}"
        )
    })?;
    ensure(open_records(&s, PANEL, None).next().is_none(), || {
        format!("a refused open of {PANEL} opened it")
    })?;
    for name in &kept {
        p.close_ok(GAME, Some(name)).await?;
    }
    p.finish().await
}

fn set(entries: &[(&str, Option<&str>)]) -> BTreeSet<(String, Option<String>)> {
    entries
        .iter()
        .map(|(t, i)| ((*t).to_owned(), i.map(str::to_owned)))
        .collect()
}

/// Vector 23: the statement states every visible dynamic tool (per instance, outside
/// toolsets) and the definitions that differ; what it leaves out is invisible; ended
/// toolsets are listed under the ids their closes carried.
pub async fn v23(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let g = open_game(&mut p, Some("g1"), Some(3)).await?;
    p.call(GAME_FLIP, json!({}), Some(&g)).await?;
    p.open_ok(PANEL, None, None).await?;
    let s = p.statement().await?;
    for (toolset, instance) in [(LOBBY, None), (GAME, Some(g.as_str())), (PANEL, None)] {
        ensure(open_records(&s, toolset, instance).count() == 1, || {
            format!(
                "the statement does not list {toolset} {} open once: {s}",
                instance.unwrap_or("")
            )
        })?;
    }
    let h = hints(&s, "toolsets/list")?;
    let mut want: Vec<(&str, Option<&str>)> =
        GAME_TOOLS.iter().map(|t| (*t, Some(g.as_str()))).collect();
    want.extend([(LOBBY_WHO, None), (PANEL_READ, None), (EXTRA_PING, None)]);
    // The contract's optional tool (S20) is visible on open where a server has it.
    let mut got = stated_visible(h);
    got.remove(&(GAME_BURST.to_owned(), Some(g.clone())));
    ensure(got == set(&want), || {
        format!(
            "the statement states visible {got:?}, not exactly {:?} (§4.3)",
            set(&want)
        )
    })?;
    check_cap(h, &g, 3, "the statement")?;
    let game_id = close_told(ctx, &mut p, GAME, Some(&g)).await?;
    let panel_id = close_told(ctx, &mut p, PANEL, None).await?;
    let s = p.statement().await?;
    let got = stated_visible(hints(&s, "toolsets/list")?);
    let want = set(&[(LOBBY_WHO, None), (EXTRA_PING, None)]);
    ensure(got == want, || {
        format!("after the closes the statement states visible {got:?}, not {want:?}")
    })?;
    // A close that named a record must find it listed (§4.3).
    for (id, toolset, instance) in [(&game_id, GAME, Some(g.as_str())), (&panel_id, PANEL, None)] {
        if let Some(id) = id {
            let rec = ended_record(&s, id).ok_or_else(|| {
                violation(format!(
                    "the close named the ended record {id}, which the statement does not list (§4.3): {s}"
                ))
            })?;
            check_record(rec, toolset, instance)?;
        }
    }
    p.finish().await
}

/// Vector 25: the default-open toolset is listed open (without an instance) in the
/// first statement, its tools stated visible and callable without any open.
pub async fn v25(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let s = p.statement().await?;
    let records: Vec<&Value> = open_records(&s, LOBBY, None).collect();
    ensure(records.len() == 1, || {
        format!(
            "the first statement does not list the default-open {LOBBY} once, without an instance (§4.1): {s}"
        )
    })?;
    ensure(
        stated_visible(hints(&s, "toolsets/list")?).contains(&(LOBBY_WHO.to_owned(), None)),
        || format!("the statement does not state {LOBBY_WHO} visible: {s}"),
    )?;
    tool_ok(
        &p.call(LOBBY_WHO, json!({}), None).await?,
        &format!("{LOBBY_WHO} without an open"),
    )?;
    let o = p.open_ok(LOBBY, None, None).await?;
    adopted(&o, None, "opening the default-open lobby")?;
    p.finish().await
}

/// Vector 33: a manifest change removing a toolset ends its instances (closed entries
/// with ended ids, records in the statement) and is announced with the `toolsets` domain.
pub async fn v33(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let t = p.open_ok(TEMP, Some("t1"), None).await?;
    ensure(t["instance"] == "t1", || {
        format!("the open of {TEMP} t1 named {t}")
    })?;
    let checked = dropped(ctx, &mut p).await;
    // Put the manifest back whatever happened: a long-lived server serves later vectors.
    let restored = restore(&mut p).await;
    checked?;
    restored?;
    p.finish().await
}

async fn dropped(ctx: &Ctx, p: &mut Peer) -> Checked {
    let r = p.call(MANIFEST_DROP, json!({}), None).await?;
    tool_ok(&r, MANIFEST_DROP)?;
    let changed = manifest_changed(p).await?;
    ensure(changed["params"]["revision"].is_string(), || {
        format!("mcpl/manifestChanged carries no revision: {changed}")
    })?;
    let closes_t1 = |m: &Value| {
        hints_of(m).is_some_and(|(h, _)| {
            toolset_entry(h, TEMP, Some("t1")).is_some_and(|e| e["state"] == "closed")
        })
    };
    let carrier = match p.log().iter().find(|m| closes_t1(m)) {
        Some(m) => m.clone(),
        None => {
            p.wait_for("the hint change closing temp:t1", closes_t1)
                .await?
        }
    };
    let (h, _) = hints_of(&carrier).expect("the carrier carries hints");
    let id = closed_entry(h, TEMP, Some("t1"))?;
    ctx.choice(id.is_some(), || {
        format!("the closed entry for the removed {TEMP}:t1 carries no ended record id (§4.3): {h}")
    });
    let s = p.statement().await?;
    ensure(open_records(&s, TEMP, Some("t1")).next().is_none(), || {
        format!(
            "the statement still lists {TEMP}:t1 open after the toolset was removed (§4.1): {s}"
        )
    })?;
    // An end the host did not ask for: recorded (§4.3).
    let listed: Vec<&Value> = s["ended"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["toolset"] == TEMP && r["instance"] == "t1")
        .collect();
    let rec = listed.last().copied().ok_or_else(|| {
        violation(format!(
            "the statement lists no ended record for the removed {TEMP}:t1 (§4.3): {s}"
        ))
    })?;
    if let Some(id) = &id {
        ensure(ended_record(&s, id).is_some(), || {
            format!(
                "the closed entry named the ended record {id}, which the statement does not list: {s}"
            )
        })?;
    }
    check_record(rec, TEMP, Some("t1"))
}

async fn restore(p: &mut Peer) -> Checked {
    let r = p.call(MANIFEST_RESTORE, json!({}), None).await?;
    tool_ok(&r, MANIFEST_RESTORE)?;
    manifest_changed(p).await.map(|_| ())
}

async fn manifest_changed(p: &mut Peer) -> Checked<Value> {
    p.wait_for("mcpl/manifestChanged naming the toolsets domain", |m| {
        method_of(m) == Some("mcpl/manifestChanged")
            && m["params"]["domains"]
                .as_array()
                .is_some_and(|d| d.iter().any(|x| x == "toolsets"))
    })
    .await
}

/// Vector 38: with every declared toolset closed, the statement still takes the next rev
/// and states no declared toolset's tool visible (only the undeclared group's, which
/// §4.3 requires it to state).
pub async fn v38(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let id = close_told(ctx, &mut p, LOBBY, None).await?;
    let last = p.last_rev();
    let s = p.statement().await?;
    takes_next(
        hints(&s, "toolsets/list")?,
        last,
        "the statement with nothing open",
    )?;
    ensure(s["open"] == json!([]), || {
        format!(
            "with the lobby closed nothing is open, yet the statement lists {}",
            s["open"]
        )
    })?;
    let got = stated_visible(hints(&s, "toolsets/list")?);
    let want = set(&[(EXTRA_PING, None)]);
    ensure(got == want, || {
        format!("with nothing open the statement states visible {got:?}, not {want:?}")
    })?;
    if let Some(id) = &id {
        let rec = ended_record(&s, id)
            .ok_or_else(|| violation(format!("no ended record {id} for the closed lobby: {s}")))?;
        check_record(rec, LOBBY, None)?;
    }
    let r = p.call(LOBBY_WHO, json!({}), None).await?;
    tool_error(&r, &format!("{LOBBY_WHO} with the lobby closed"))?;
    p.finish().await
}
