//! The fixture contract itself (`tests/CONFORMANCE.md`): the declarations and tools every
//! vector relies on. When this fails, the vectors' failures say more about the fixture than
//! about RFC-014.

use super::super::contract::{ALL_TOOLS, EXTRAS, GAME, LOBBY, PANEL, TEMP};
use super::super::error::{Checked, ensure};
use super::super::peer::HostKind;
use super::super::target::Ctx;
use mcpl_protocol::mcpl::{CAP_PUSH_EVENTS, CAP_TOOLS};
use serde_json::Value;

fn declared<'a>(toolsets: &'a Value, name: &str) -> Checked<&'a Value> {
    toolsets.get(name).ok_or_else(|| {
        super::violation(format!("the manifest does not declare the toolset {name}"))
    })
}

fn is_default_open(decl: &Value) -> bool {
    decl.get("default").and_then(Value::as_str) == Some("open")
}

fn has_instances(decl: &Value) -> bool {
    decl.get("instances").and_then(Value::as_bool) == Some(true)
}

/// Vector 0: the manifest declares `game` (instances, closed, options), `lobby` (open by
/// default), `panel` (closed, no instances), `temp` (instances) and not `extras`; every
/// contract tool is listed.
pub async fn contract(ctx: &Ctx) -> Checked {
    let mut p = ctx.fresh("the connection").await?;
    let init = p
        .handshake(HostKind::Hinted, Some(&[CAP_TOOLS, CAP_PUSH_EVENTS]))
        .await?;
    let manifest = init
        .pointer("/capabilities/experimental/mcpl")
        .cloned()
        .unwrap_or(Value::Null);
    let toolsets = manifest.get("toolsets").cloned().unwrap_or(Value::Null);
    let game = declared(&toolsets, GAME)?;
    ensure(has_instances(game) && !is_default_open(game), || {
        format!("{GAME} must be declared closed with instances: {game}")
    })?;
    ensure(game.get("options").is_some(), || {
        format!("{GAME} must declare an options schema: {game}")
    })?;
    let lobby = declared(&toolsets, LOBBY)?;
    ensure(is_default_open(lobby) && !has_instances(lobby), || {
        format!("{LOBBY} must be declared default-open without instances: {lobby}")
    })?;
    let panel = declared(&toolsets, PANEL)?;
    ensure(!is_default_open(panel) && !has_instances(panel), || {
        format!("{PANEL} must be declared closed without instances: {panel}")
    })?;
    let temp = declared(&toolsets, TEMP)?;
    ensure(has_instances(temp), || {
        format!("{TEMP} must be declared with instances: {temp}")
    })?;
    ensure(toolsets.get(EXTRAS).is_none(), || {
        format!("{EXTRAS} must not be declared: it is the undeclared group")
    })?;
    let (tools, _) = p.tools_list().await?;
    for name in ALL_TOOLS {
        ensure(tools.iter().any(|t| t["name"] == name), || {
            format!("tools/list does not list the contract's tool {name}")
        })?;
    }
    p.finish().await
}
