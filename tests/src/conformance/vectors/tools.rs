//! §3 and §4.4 on the server side: `tools/list` with hints and its rev, calls refused with
//! a reason, the toolset that implies dynamic, the undeclared group.
//! Vectors 1, 10, 11, 16, 27.

use super::super::contract::{
    ECHO, EXTRA_PING, EXTRAS, GAME, GAME_FLIP, GAME_OPEN_VISIBLE, GAME_SECRET, GAME_SHOW,
    GAME_TOOLS, LOBBY, LOBBY_WHO, MANIFEST_DROP, MANIFEST_RESTORE, NEWS, PANEL, PANEL_READ, TEMP,
    TEMP_PING,
};
use super::super::error::{Checked, ensure, violation};
use super::super::peer::Peer;
use super::super::target::Ctx;
use super::super::wire::{entries_for, hints_of, open_records, result_hints, stated_visible};
use super::{hints, open_game, takes_next, tool_error, tool_ok};
use serde_json::{Value, json};

fn listed<'a>(tools: &'a [Value], name: &str) -> Checked<&'a Value> {
    tools.iter().find(|t| t["name"] == name).ok_or_else(|| {
        violation(format!(
            "tools/list does not list {name} (§3: every tool, visible or not)"
        ))
    })
}

/// What a listed tool's `_meta` says about its visibility (absent: visible, §3).
fn listed_visible(tool: &Value) -> bool {
    tool.pointer("/_meta/mcpl~1visible")
        .and_then(Value::as_bool)
        .unwrap_or(true)
}

fn check_listing(tools: &[Value], visible: &[&str], invisible: &[&str]) -> Checked {
    for name in visible {
        let t = listed(tools, name)?;
        ensure(listed_visible(t), || {
            format!("tools/list shows {name} invisible, though it is visible now: {t}")
        })?;
    }
    for name in invisible {
        let t = listed(tools, name)?;
        ensure(!listed_visible(t), || {
            format!("tools/list shows {name} visible, though it is not now: {t}")
        })?;
    }
    Ok(())
}

/// Checks each tool of a declared toolset is listed as its member (`mcpl/toolset`, which
/// implies dynamic, §3), the dynamic tool outside toolsets as dynamic, and the static ones
/// as static (absent presence is static, §3).
fn check_classes(tools: &[Value]) -> Checked {
    let mut members: Vec<(&str, &str)> = GAME_TOOLS.iter().map(|t| (*t, GAME)).collect();
    members.extend([(LOBBY_WHO, LOBBY), (PANEL_READ, PANEL), (TEMP_PING, TEMP)]);
    for (name, toolset) in members {
        let t = listed(tools, name)?;
        ensure(
            t.pointer("/_meta/mcpl~1toolset") == Some(&json!(toolset)),
            || format!("{name} is not listed with mcpl/toolset {toolset:?} (§3): {t}"),
        )?;
    }
    let news = listed(tools, NEWS)?;
    ensure(
        news.pointer("/_meta/mcpl~1presence") == Some(&json!("dynamic")),
        || format!("{NEWS}, a dynamic tool outside toolsets, is not listed dynamic (§3): {news}"),
    )?;
    for name in [ECHO, MANIFEST_DROP, MANIFEST_RESTORE] {
        let t = listed(tools, name)?;
        ensure(
            t.pointer("/_meta/mcpl~1presence")
                .is_none_or(|p| p == "static")
                && t.pointer("/_meta/mcpl~1toolset").is_none(),
            || format!("{name}, a static tool outside toolsets, is listed otherwise (§3): {t}"),
        )?;
    }
    Ok(())
}

/// Checks `tools/list` names the last rev taken on the connection (§3, vector 27).
async fn list_names_last_rev(p: &mut Peer) -> Checked<Vec<Value>> {
    let (tools, rev) = p.tools_list().await?;
    let last = p.last_rev();
    ensure(rev == Some(last), || {
        format!("tools/list names _meta[\"mcpl/rev\"] {rev:?}; the last rev taken is {last} (§3)")
    })?;
    Ok(tools)
}

/// Vector 1: every tool is listed, visible or not, with its visibility now.
pub async fn v01(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let tools = list_names_last_rev(&mut p).await?;
    check_classes(&tools)?;
    let always = [LOBBY_WHO, ECHO, EXTRA_PING, MANIFEST_DROP, MANIFEST_RESTORE];
    let mut closed: Vec<&str> = GAME_TOOLS.to_vec();
    closed.extend([PANEL_READ, TEMP_PING, NEWS]);
    check_listing(&tools, &always, &closed)?;
    let g = open_game(&mut p, Some("g1"), None).await?;
    let tools = list_names_last_rev(&mut p).await?;
    check_classes(&tools)?;
    let mut visible = always.to_vec();
    visible.extend(GAME_OPEN_VISIBLE);
    check_listing(
        &tools,
        &visible,
        &[GAME_SECRET, PANEL_READ, TEMP_PING, NEWS],
    )?;
    p.close_ok(GAME, Some(&g)).await?;
    p.finish().await
}

/// Vector 10 (the server's half): the undeclared group's tool is listed with its toolset,
/// stated visible outside any instance, answered without an open (the host gates it, the
/// server cannot), and the server refuses to track the group.
pub async fn v10(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let (tools, _) = p.tools_list().await?;
    let extra = listed(&tools, EXTRA_PING)?;
    ensure(
        extra.pointer("/_meta/mcpl~1toolset") == Some(&json!(EXTRAS)),
        || format!("{EXTRA_PING} is not listed with mcpl/toolset {EXTRAS:?}: {extra}"),
    )?;
    let s = p.statement().await?;
    ensure(open_records(&s, EXTRAS, None).next().is_none(), || {
        format!("toolsets/list reports the undeclared group {EXTRAS} open (§4.4): {s}")
    })?;
    let stated = stated_visible(hints(&s, "toolsets/list")?);
    ensure(stated.contains(&(EXTRA_PING.to_owned(), None)), || {
        format!(
            "the statement does not state {EXTRA_PING} visible (§4.3: every visible dynamic tool outside declared toolsets): {s}"
        )
    })?;
    let r = p.call(EXTRA_PING, json!({}), None).await?;
    tool_ok(
        &r,
        &format!("{EXTRA_PING}, called without any open (the host gates it, §4.4)"),
    )?;
    // A host never sends it (§4.4); the fixture refuses it, as a group it does not track.
    let o = p.open(EXTRAS, None, None).await?;
    ctx.choice(o.get("error").is_some(), || {
        format!("toolsets/open of the undeclared group {EXTRAS} succeeded: {o}")
    });
    p.finish().await
}

/// A tool error's text must name `what`, beyond the tool's own name.
fn names(text: &str, tool: &str, what: &str) -> Checked {
    ensure(text.replace(tool, "").contains(what), || {
        format!("the tool error for {tool} does not name {what:?}: {text:?}")
    })
}

/// Vector 11: an invisible tool, a tool of a declared toolset that is not open, and a tool
/// invisible in its instance are each a tool error saying why.
pub async fn v11(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let r = p.call(NEWS, json!({}), None).await?;
    let text = tool_error(&r, &format!("calling the invisible {NEWS}"))?;
    ensure(text.contains(NEWS), || {
        format!("the tool error for {NEWS} does not name it: {text:?}")
    })?;
    let r = p.call(PANEL_READ, json!({}), None).await?;
    let text = tool_error(&r, &format!("calling {PANEL_READ} with {PANEL} not open"))?;
    names(&text, PANEL_READ, PANEL)?;
    let r = p.call(GAME_SHOW, json!({}), None).await?;
    let text = tool_error(&r, &format!("calling {GAME_SHOW} with no {GAME} open"))?;
    names(&text, GAME_SHOW, GAME)?;
    let g = open_game(&mut p, Some("g1"), None).await?;
    let r = p.call(GAME_SECRET, json!({}), Some(&g)).await?;
    let text = tool_error(&r, &format!("calling {GAME_SECRET}, invisible in {g}"))?;
    ensure(text.contains(GAME_SECRET), || {
        format!("the tool error for {GAME_SECRET} does not name it: {text:?}")
    })?;
    ctx.choice(text.contains(&g), || {
        format!("the tool error for {GAME_SECRET}, invisible in {g}, does not name {g}: {text:?}")
    });
    // A tool the server does not have is no tool error but a protocol error (MCP).
    let r = p.call_raw("no_such_tool", json!({}), None).await?;
    ensure(r.get("result").is_none(), || {
        format!("a call of a tool the server does not have succeeded: {r}")
    })?;
    ctx.choice(r.pointer("/error/code") == Some(&json!(-32602)), || {
        format!("a call of an unknown tool is not refused with -32602 (MCP): {r}")
    });
    p.close_ok(GAME, Some(&g)).await?;
    p.finish().await
}

/// Vector 16: `game_show` declares `mcpl/presence: "static"` but belongs to `game`: it is
/// dynamic, in `tools/list` and in every hint change (no presence entry for it).
pub async fn v16(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    let (tools, _) = p.tools_list().await?;
    let show = listed(&tools, GAME_SHOW)?;
    ensure(
        show.pointer("/_meta/mcpl~1toolset") == Some(&json!(GAME)),
        || format!("{GAME_SHOW} is not listed in toolset {GAME}: {show}"),
    )?;
    let presence = show.pointer("/_meta/mcpl~1presence");
    ensure(presence.is_none_or(|p| p == "dynamic"), || {
        format!(
            "{GAME_SHOW} belongs to {GAME} yet is listed static; a toolset's tool is dynamic (§3): {show}"
        )
    })?;
    let g = open_game(&mut p, Some("g1"), None).await?;
    let opened = p.log().last().cloned().unwrap_or_default();
    ensure(
        result_hints(&opened["result"])
            .is_some_and(|h| super::super::wire::visibility(h, GAME_SHOW, Some(&g)) == Some(true)),
        || format!("the open's hints do not state {GAME_SHOW} visible in {g}: {opened}"),
    )?;
    p.call(GAME_FLIP, json!({}), Some(&g)).await?;
    let s = p.statement().await?;
    ensure(
        stated_visible(hints(&s, "toolsets/list")?)
            .contains(&(GAME_SHOW.to_owned(), Some(g.clone()))),
        || format!("the statement does not state {GAME_SHOW} visible in {g}: {s}"),
    )?;
    for m in p.log() {
        let Some((changes, _)) = hints_of(m) else {
            continue;
        };
        if let Some(e) = entries_for(changes, GAME_SHOW, None).next() {
            return Err(violation(format!(
                "a hint entry for {GAME_SHOW} names no instance; a toolset's tool is per instance (§3): {e}"
            )));
        }
        for e in entries_for(changes, GAME_SHOW, Some(&g)) {
            ensure(e.get("presence").is_none(), || {
                format!(
                    "a hint entry gives {GAME_SHOW} a presence; it is dynamic by its toolset (§3): {e}"
                )
            })?;
        }
    }
    p.finish().await
}

/// Vector 27: results of `toolsets/open|close|list` carrying hints take the next rev,
/// calls too; a call that changes nothing takes none; `tools/list` takes none and names the
/// last.
pub async fn v27(ctx: &Ctx) -> Checked {
    let mut p = ctx.hinted("the connection").await?;
    list_names_last_rev(&mut p).await?;
    let last = p.last_rev();
    let s = p.statement().await?;
    takes_next(hints(&s, "toolsets/list")?, last, "toolsets/list")?;
    list_names_last_rev(&mut p).await?;
    let last = p.last_rev();
    let o = p.open_ok(PANEL, None, None).await?;
    takes_next(hints(&o, "toolsets/open")?, last, "toolsets/open")?;
    list_names_last_rev(&mut p).await?;
    let last = p.last_rev();
    let r = p.call(PANEL_READ, json!({}), None).await?;
    tool_ok(&r, PANEL_READ)?;
    ensure(result_hints(&r).is_none(), || {
        format!("{PANEL_READ} changes nothing, yet its result carries hints: {r}")
    })?;
    let g = open_game(&mut p, Some("g1"), None).await?;
    let last_before_flip = p.last_rev();
    let r = p.call(GAME_FLIP, json!({}), Some(&g)).await?;
    takes_next(hints(&r, GAME_FLIP)?, last_before_flip, GAME_FLIP)?;
    ensure(p.last_rev() == last + 2, || "revs were skipped".to_owned())?;
    list_names_last_rev(&mut p).await?;
    for (toolset, instance) in [(PANEL, None), (GAME, Some(g.as_str()))] {
        let last = p.last_rev();
        let c = p.close_ok(toolset, instance).await?;
        takes_next(hints(&c, "toolsets/close")?, last, "toolsets/close")?;
    }
    let last = p.last_rev();
    let s = p.statement().await?;
    takes_next(hints(&s, "toolsets/list")?, last, "toolsets/list")?;
    list_names_last_rev(&mut p).await?;
    p.finish().await
}
