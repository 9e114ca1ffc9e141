//! §2 and §8 on the server side: hosts that did not advertise `toolHints` get plain
//! tools and never a hint. Every connection here is such a host, so [`Peer::finish`]
//! fails on any hint it was sent.
//! Vectors 8, 26, 36.
//!
//! The RFC lets a server either leave toolsets out for such a host or offer plain tools to
//! open, choose and close instances (§8). The fixture offers them — `toolset_open`,
//! `toolset_close`, an `instance` argument, implicit opens — and the vectors check that
//! choice with [`Ctx::choice`]. A server that leaves them out departs from the fixture and
//! is checked on what the RFC requires of it alone.

use super::super::contract::{
    ALL_TOOLS, DEFAULT_SIZE, ECHO, GAME, GAME_FLIP, GAME_LATER, GAME_SHOW, LOBBY_WHO, PANEL_READ,
    TEMP, TOOLSET_CLOSE, TOOLSET_OPEN, show_text,
};
use super::super::error::{Checked, ensure, violation};
use super::super::peer::{HostKind, Peer};
use super::super::target::Ctx;
use super::super::wire::{is_push, text_of};
use super::{open_game, tool_error, tool_ok};
use mcpl_protocol::mcpl::{CAP_PUSH_EVENTS, CAP_TOOLS};
use mcpl_protocol::meta;
use serde_json::{Value, json};

async fn compat(p: &mut Peer, tool: &str, args: Value) -> Checked<String> {
    let r = p.call(tool, args.clone(), None).await?;
    tool_ok(&r, &format!("{tool} {args}"))
}

async fn show(p: &mut Peer, args: Value) -> Checked<String> {
    let r = p.call(GAME_SHOW, args.clone(), None).await?;
    tool_ok(&r, &format!("{GAME_SHOW} {args}"))
}

/// Opens or closes (`tool`: a compat tool) the game instance `instance`.
async fn compat_game(p: &mut Peer, tool: &str, instance: &str) -> Checked<String> {
    compat(p, tool, json!({"toolset": GAME, "instance": instance})).await
}

/// `game_show` with `args` shows the instance `instance` as it opened (`what`: the
/// violation if not).
async fn shows_fresh(p: &mut Peer, args: Value, instance: &str, what: &str) -> Checked {
    let text = show(p, args).await?;
    ensure(text == show_text(instance, DEFAULT_SIZE, 0), || {
        format!("{what}: {text:?}")
    })
}

/// True when the host is offered the compat tools (the fixture's §8 choice).
fn offers_compat(tools: &[Value]) -> bool {
    [TOOLSET_OPEN, TOOLSET_CLOSE]
        .iter()
        .all(|n| tools.iter().any(|t| t["name"] == *n))
}

fn listed<'a>(tools: &'a [Value], name: &str) -> Checked<&'a Value> {
    tools.iter().find(|t| t["name"] == name).ok_or_else(|| {
        violation(format!(
            "tools/list for a host without toolHints does not list {name}"
        ))
    })
}

/// Vector 8: a host without `toolHints` (an MCPL host granted `pushEvents`) is never sent
/// `tools/hints` nor `hints`, whatever changes: its own calls, steps of their own with and
/// without an event.
pub async fn v08(ctx: &Ctx) -> Checked {
    let mut p = ctx.fresh("a host without toolHints").await?;
    p.handshake(HostKind::McplPlain, Some(&[CAP_TOOLS, CAP_PUSH_EVENTS]))
        .await?;
    let (tools, listed_rev) = p.tools_list().await?;
    ctx.choice(listed_rev.is_none(), || {
        format!("tools/list names a rev ({listed_rev:?}) to a host without toolHints, which takes none (§8)")
    });
    for method in ["toolsets/list", "toolsets/open"] {
        let r = p.request(method, json!({"toolset": GAME})).await?;
        ctx.choice(r.pointer("/error/code") == Some(&json!(-32601)), || {
            format!("{method} is not refused as an unknown method (-32601) to a host without toolHints: {r}")
        });
    }
    if ctx.shares_principals() {
        others_changes_bring_no_hints(ctx).await?;
    }
    if !offers_compat(&tools) {
        // Nothing of `game` is offered to this host: what it can call changes nothing.
        ctx.choice(false, || {
            "a host without toolHints is not offered toolset_open/toolset_close (§8)".to_owned()
        });
        tool_ok(&p.call(ECHO, json!({"text": "x"}), None).await?, ECHO)?;
        return p.finish().await;
    }
    compat_game(&mut p, TOOLSET_OPEN, "p1").await?;
    tool_ok(&p.call(GAME_FLIP, json!({}), None).await?, GAME_FLIP)?;
    tool_ok(
        &p.call(GAME_LATER, json!({"event": false}), None).await?,
        GAME_LATER,
    )?;
    tool_ok(&p.call(GAME_LATER, json!({}), None).await?, GAME_LATER)?;
    // The event still reaches the host, without hints; the silent step came before it.
    let push = p.wait_for("the event of game_later", is_push).await?;
    ensure(push.pointer("/params/hints").is_none(), || {
        format!("a push to a host without toolHints carries hints (§2): {push}")
    })?;
    compat_game(&mut p, TOOLSET_CLOSE, "p1").await?;
    p.finish().await
}

/// Vector 8, across connections: what a hinted connection of the principal changes reaches
/// its connection without `toolHints` with no hints.
async fn others_changes_bring_no_hints(ctx: &Ctx) -> Checked {
    let name = ctx.unique("seen-by-plain");
    let mut plain = ctx
        .named("a connection of the named principal without toolHints")
        .await?;
    plain
        .handshake(HostKind::McplPlain, Some(&[CAP_TOOLS, CAP_PUSH_EVENTS]))
        .await?;
    let mut hinted = ctx
        .named_hinted("a hinted connection of the same principal")
        .await?;
    open_game(&mut hinted, Some(&name), None).await?;
    tool_ok(
        &hinted.call(GAME_FLIP, json!({}), Some(&name)).await?,
        GAME_FLIP,
    )?;
    hinted.close_ok(GAME, Some(&name)).await?;
    // The hinted connection's own revs are other vectors' business: this one is about
    // what the connection without toolHints is sent.
    hinted.close();
    // tools/list goes through the principal, behind what it sent this connection before.
    plain.tools_list().await?;
    plain.finish().await
}

/// Vector 26: a plain MCP host sees plain tools and can use them; the fixture's §8 choice
/// is that it sees every tool plus `toolset_open`/`toolset_close`, calls a toolset without
/// instances or required options as if open, and plays instances through the compat tools
/// and the `instance` argument.
pub async fn v26(ctx: &Ctx) -> Checked {
    let mut p = ctx.fresh("a plain MCP host").await?;
    p.handshake(HostKind::PlainMcp, None).await?;
    let (tools, _) = p.tools_list().await?;
    listed(&tools, ECHO)?;
    tool_ok(&p.call(ECHO, json!({"text": "x"}), None).await?, ECHO)?;
    if !offers_compat(&tools) {
        ctx.choice(false, || {
            "a plain MCP host is not offered toolset_open/toolset_close (§8)".to_owned()
        });
        return p.finish().await;
    }
    for name in ALL_TOOLS {
        ctx.choice(tools.iter().any(|t| t["name"] == name), || {
            format!("a plain MCP host is not shown {name}")
        });
    }
    let offered = listed(&tools, TOOLSET_OPEN)?
        .pointer("/inputSchema/properties/toolset/enum")
        .cloned();
    ctx.choice(offered == Some(json!([GAME, TEMP])), || {
        format!("{TOOLSET_OPEN} does not offer exactly the toolsets that need an open, {GAME} and {TEMP}: {offered:?}")
    });
    let r = p.call(PANEL_READ, json!({}), None).await?;
    ctx.choice(r["isError"] != json!(true), || {
        format!("{PANEL_READ} is not implicitly open for a plain host (§8): {r}")
    });
    // Wrong compat arguments are tool errors the model can correct.
    let r = p.call(TOOLSET_OPEN, json!({}), None).await?;
    ctx.choice(r["isError"] == json!(true), || {
        format!("{TOOLSET_OPEN} without a toolset is not a tool error: {r}")
    });
    let r = p
        .call(
            TOOLSET_OPEN,
            json!({"toolset": GAME, "options": {"size": 99}}),
            None,
        )
        .await?;
    ctx.choice(
        r["isError"] == json!(true) && text_of(&r).contains("size"),
        || {
            format!(
                "{TOOLSET_OPEN} with invalid options is not a tool error naming the problem: {r}"
            )
        },
    );
    tool_ok(&p.call(LOBBY_WHO, json!({}), None).await?, LOBBY_WHO)?;
    compat(
        &mut p,
        TOOLSET_OPEN,
        json!({"toolset": GAME, "instance": "p1", "options": {"size": 2}}),
    )
    .await?;
    let text = show(&mut p, json!({})).await?;
    ensure(text == show_text("p1", 2, 0), || {
        format!("with one instance open, a call without one did not reach it: {text:?}")
    })?;
    compat_game(&mut p, TOOLSET_OPEN, "p2").await?;
    let r = p.call(GAME_SHOW, json!({}), None).await?;
    let text = tool_error(&r, "a call naming no instance, with two open")?;
    ensure(text.contains("p1") && text.contains("p2"), || {
        format!("the tool error does not name the open instances p1 and p2: {text:?}")
    })?;
    shows_fresh(
        &mut p,
        json!({"instance": "p2"}),
        "p2",
        "a call with the instance argument p2 did not reach it",
    )
    .await?;
    compat_game(&mut p, TOOLSET_CLOSE, "p1").await?;
    shows_fresh(
        &mut p,
        json!({}),
        "p2",
        "with p1 closed, a call without an instance did not reach p2",
    )
    .await?;
    compat_game(&mut p, TOOLSET_CLOSE, "p2").await?;
    p.finish().await
}

/// Vector 36: to a host without `toolHints` every hinted tool is a plain static tool (no
/// hint `_meta`), an instance-bound tool gains an optional `instance` argument (§8
/// **\[project\]**), and a call without an instance reaches the only open one.
pub async fn v36(ctx: &Ctx) -> Checked {
    let mut p = ctx.fresh("a host without toolHints").await?;
    p.handshake(HostKind::McplPlain, Some(&[CAP_TOOLS, CAP_PUSH_EVENTS]))
        .await?;
    let (tools, _) = p.tools_list().await?;
    for t in &tools {
        let name = t["name"].as_str().unwrap_or_default();
        for key in [meta::PRESENCE, meta::VISIBLE, meta::TOOLSET] {
            ensure(t.get("_meta").and_then(|m| m.get(key)).is_none(), || {
                format!("{name} is listed with {key} to a host without toolHints (§8): {t}")
            })?;
        }
    }
    if !offers_compat(&tools) {
        ctx.choice(false, || {
            "a host without toolHints is not offered toolset_open/toolset_close (§8)".to_owned()
        });
        return p.finish().await;
    }
    let panel = &listed(&tools, PANEL_READ)?["inputSchema"];
    ctx.choice(panel.pointer("/properties/instance").is_none(), || {
        format!("{PANEL_READ}, of a toolset without instances, has an instance argument: {panel}")
    });
    let schema = &listed(&tools, GAME_SHOW)?["inputSchema"];
    ctx.choice(schema.pointer("/properties/instance").is_some(), || {
        format!("{GAME_SHOW} has no instance argument for a host without toolHints (§8): {schema}")
    });
    ctx.choice(
        !schema["required"]
            .as_array()
            .is_some_and(|r| r.iter().any(|x| x == "instance")),
        || format!("{GAME_SHOW}'s instance argument is not optional (§8): {schema}"),
    );
    compat_game(&mut p, TOOLSET_OPEN, "g1").await?;
    shows_fresh(
        &mut p,
        json!({}),
        "g1",
        "a call without an instance did not reach the only open one",
    )
    .await?;
    tool_ok(&p.call(GAME_FLIP, json!({}), None).await?, GAME_FLIP)?;
    compat_game(&mut p, TOOLSET_CLOSE, "g1").await?;
    p.finish().await
}
