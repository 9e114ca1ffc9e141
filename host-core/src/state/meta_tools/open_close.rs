//! `toolsets--open` and `toolsets--close` (§4.2, §4.4, §6 "RFC §8.2").

use super::error::MetaError;
use super::plan::{After, GroupPlan, MetaConfig, Outgoing, Plan, SendPlan, World};
use super::resolve::{self, Kind};
use super::{args, propose};
use crate::state::args_check::{self, ArgCheck};
use crate::state::view::{Marker, ServerView};
use mcpl_protocol::names::check_peer_name;
use mcpl_protocol::toolsets::{ToolsetDecl, ToolsetsCloseParams, ToolsetsOpenParams};
use serde_json::Value;

/// `toolsets--open`: a group opens locally; a declared toolset is sent `toolsets/open`,
/// an instanced one always with a proposed name (§4.2: a host that may retry proposes
/// one), checked against the grammar, and options checked against the declared schema
/// (bounded, like `act`'s arguments).
pub(super) fn open(
    config: &MetaConfig,
    next_instance: &mut u64,
    raw: &Value,
    world: &World<'_>,
) -> Result<Plan, MetaError> {
    let a = args::open(raw)?;
    let (view, decl, marker) = find(world, a.server.as_deref(), &a.toolset, a.instance.is_some())?;
    let Some(decl) = decl else {
        // §4.4, vector 10: the host opens it alone; nothing is sent.
        return Ok(group_plan(view, a.toolset, true));
    };
    if view.hints.is_none() {
        return Err(resolve::not_connected(view));
    }
    let instance = match (decl.instances, a.instance) {
        (false, Some(_)) => return Err(MetaError::NoInstances { marker }),
        (false, None) => None,
        (true, Some(name)) => {
            // §4.1 [project]: any name within the peer grammar goes out (another
            // server may have named an instance `g.1`); names this host proposes keep
            // the stricter grammar.
            check_peer_name(&name).map_err(|error| MetaError::BadInstanceName {
                name: name.clone(),
                error,
            })?;
            Some(name)
        }
        (true, None) => Some(propose::instance(config, next_instance, view, &a.toolset)),
    };
    if let Some(schema) = &decl.options {
        let given = Value::Object(a.options.clone().unwrap_or_default());
        if let ArgCheck::Invalid(problems) = args_check::check_with(schema, &given, &config.check) {
            return Err(MetaError::InvalidOptions { marker, problems });
        }
    }
    let marker = Marker::new(view.name, &a.toolset, instance.as_deref());
    let request = Outgoing::Open(ToolsetsOpenParams {
        toolset: a.toolset,
        instance,
        options: a.options.map(Value::Object),
        meta: None,
    });
    Ok(send(view, request, After::Open { marker }))
}

/// `toolsets--close`: a group closes locally; a declared toolset is sent `toolsets/close`
/// with the instance required when several are open and filled in when one is, and refused
/// for a toolset without instances (§4.2).
pub(super) fn close(raw: &Value, world: &World<'_>) -> Result<Plan, MetaError> {
    let a = args::close(raw)?;
    let (view, decl, marker) = find(world, a.server.as_deref(), &a.toolset, a.instance.is_some())?;
    let Some(decl) = decl else {
        if !view.catalog.is_group_open(&a.toolset) {
            return Err(MetaError::NotOpen { marker });
        }
        return Ok(group_plan(view, a.toolset, false));
    };
    let hints = view.hints.ok_or_else(|| resolve::not_connected(view))?;
    let instance = if decl.instances {
        Some(resolve::instance(view, &a.toolset, a.instance.as_deref())?)
    } else {
        if a.instance.is_some() {
            return Err(MetaError::NoInstances { marker });
        }
        if !hints.is_open(&a.toolset, None) {
            return Err(MetaError::NotOpen { marker });
        }
        None
    };
    let marker = Marker::new(view.name, &a.toolset, instance.as_deref());
    let request = Outgoing::Close(ToolsetsCloseParams {
        toolset: a.toolset,
        instance,
        meta: None,
    });
    Ok(send(view, request, After::Close { marker }))
}

/// The toolset `toolsets--open` or `--close` names, found where it is offered, with its
/// marker: a declared toolset, or an undeclared group (`None`), for which an instance is
/// refused (§4.4: a group has none).
fn find<'w>(
    world: &World<'w>,
    server: Option<&str>,
    toolset: &str,
    instance_given: bool,
) -> Result<(&'w ServerView<'w>, Option<&'w ToolsetDecl>, Marker), MetaError> {
    let (view, kind) = resolve::toolset(world, server, toolset)?;
    let marker = Marker::new(view.name, toolset, None);
    match kind {
        Kind::Group if instance_given => Err(MetaError::NoInstances { marker }),
        Kind::Group => Ok((view, None, marker)),
        Kind::Declared(d) => Ok((view, Some(d), marker)),
    }
}

/// `request` sent to `view`'s server, `after` applied to its answer.
fn send(view: &ServerView<'_>, request: Outgoing, after: After) -> Plan {
    Plan::Send(SendPlan {
        server: view.name.to_owned(),
        request,
        after,
    })
}

/// A group opened or closed by the host alone (§4.4): nothing is sent.
fn group_plan(view: &ServerView<'_>, group: String, open: bool) -> Plan {
    Plan::Group(GroupPlan {
        server: view.name.to_owned(),
        group,
        open,
    })
}
