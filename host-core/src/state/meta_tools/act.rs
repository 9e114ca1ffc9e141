//! `toolsets--act` and the direct call of a static `server--tool`: one dispatch path
//! ([`dispatch`]), `act` adding only `_meta["mcpl/instance"]` (§6 "RFC §8.2").

use super::args;
use super::error::EndedCall;
use super::error::MetaError;
use super::plan::{After, MetaConfig, Outgoing, Plan, SendPlan, World};
use super::resolve::{self, Kind};
use crate::state::args_check::{self, ArgCheck, Problem};
use crate::state::catalog::CallGate;
use crate::state::conversation::split_namespaced;
use crate::state::view::{Marker, ServerView};
use mcpl_protocol::{CallToolParams, Meta};
use serde_json::{Map, Value};

/// `toolsets--act`: resolves the tool and its instance, refuses what cannot be called
/// there, checks the arguments against the instance's current definition (bounded), and
/// plans the same `tools/call` a direct call would send.
pub(super) fn act(config: &MetaConfig, raw: &Value, world: &World<'_>) -> Result<Plan, MetaError> {
    let a = args::act(raw)?;
    let (view, tool) = resolve::tool(world, a.server.as_deref(), &a.tool, a.instance.as_deref())?;
    let hints = view.hints.ok_or_else(|| resolve::not_connected(view))?;
    let no_instances = |m: Marker| MetaError::NoInstances { marker: m };
    // A finished instance whose record the server keeps: only its read-only tools answer.
    let mut finished = false;
    let instance = match resolve::tool_toolset(view, &tool) {
        // §4.5: the named instance, or the only open one; else name the open ones.
        Some((ts, Kind::Declared(d))) if d.instances => {
            match resolve::instance(view, &ts, a.instance.as_deref()) {
                Ok(i) => Some(i),
                Err(e) => {
                    let ended = match (&e, a.instance.as_deref()) {
                        (MetaError::UnknownInstance { .. }, Some(i)) => {
                            hints.has_ended(&ts, i).then(|| i.to_owned())
                        }
                        (MetaError::NotOpen { .. }, None) => {
                            hints.last_ended(&ts).map(str::to_owned)
                        }
                        _ => None,
                    };
                    let Some(i) = ended else {
                        return Err(e);
                    };
                    if !read_only(view, &tool) {
                        let marker = Marker::new(view.name, &ts, Some(&i));
                        let reason = world
                            .presenter
                            .recent_ended(view.name)
                            .filter(|e| e.marker == marker)
                            .last()
                            .and_then(|e| e.reason.clone());
                        return Err(MetaError::Ended(Box::new(EndedCall {
                            marker,
                            tool,
                            reason,
                            read_only: read_only_tools(view, &ts),
                        })));
                    }
                    // §4.3 [project]: the server answers it with the instance's last view.
                    finished = true;
                    Some(i)
                }
            }
        }
        Some((ts, Kind::Declared(_))) => {
            let marker = Marker::new(view.name, &ts, None);
            if a.instance.is_some() {
                return Err(no_instances(marker));
            }
            if !hints.is_open(&ts, None) {
                return Err(MetaError::NotOpen { marker });
            }
            None
        }
        Some((g, Kind::Group)) => {
            let marker = Marker::new(view.name, &g, None);
            if a.instance.is_some() {
                return Err(no_instances(marker));
            }
            // §4.4, vector 10: the server cannot know the group is closed; the host gates.
            if let CallGate::ClosedGroup { .. } = view.catalog.gate(&tool) {
                return Err(MetaError::ClosedGroup { tool, marker });
            }
            None
        }
        None => {
            if a.instance.is_some() {
                return Err(no_instances(Marker::server(view.name)));
            }
            None
        }
    };
    let marker = view.tool_marker(&tool, instance.as_deref());
    let actual = view.actual();
    if !finished
        && !actual
            .usable
            .contains_key(&(tool.clone(), instance.clone()))
    {
        // §3, vector 11: not visible there; say where it is.
        let usable_in = actual
            .usable
            .iter()
            .filter(|((t, _), _)| *t == tool)
            .map(|(_, (m, _))| m.to_string())
            .collect();
        return Err(MetaError::NotVisible {
            tool,
            marker,
            usable_in,
        });
    }
    // §6: checked against the instance's *current* definition, bounded; a pattern is
    // never evaluated, and what the host leaves unchecked the server checks.
    let def_instance = instance.as_deref().filter(|_| !finished);
    let def = view
        .definition(&tool, def_instance)
        .ok_or_else(|| MetaError::UnknownTool {
            tool: tool.clone(),
            meta_tools: world.meta_tools_listed(),
        })?;
    let given = Value::Object(a.args.clone().unwrap_or_default());
    match args_check::check_with(&def.input_schema, &given, &config.check) {
        ArgCheck::Invalid(problems) => return Err(MetaError::InvalidArgs { tool, problems }),
        ArgCheck::Valid => {}
        ArgCheck::Unchecked(why) => {
            tracing::debug!(server = view.name, tool, %why, "arguments left to the server");
        }
    }
    Ok(dispatch(view, tool, a.args, instance, Some(marker), true))
}

/// A model's call of `server--tool`. A static tool in the model's list is sent as is; a
/// dynamic one is refused, pointing to `act` (§6 "RFC §8.1").
pub(super) fn direct(name: &str, raw: &Value, world: &World<'_>) -> Result<Plan, MetaError> {
    let unknown = || MetaError::UnknownTool {
        tool: name.to_owned(),
        meta_tools: world.meta_tools_listed(),
    };
    let (server, tool) =
        split_namespaced(name, world.servers.iter().map(|s| s.name)).ok_or_else(unknown)?;
    let view = world.server(server).ok_or_else(unknown)?;
    if view.catalog.tool(tool).is_none() {
        return Err(unknown());
    }
    if !view.policy.allows(tool) {
        return Err(MetaError::Denied {
            server: server.to_owned(),
            tool: tool.to_owned(),
        });
    }
    if view.presented_dynamic(tool) && !view.in_model_list(tool) {
        return Err(MetaError::DynamicByName {
            server: server.to_owned(),
            tool: tool.to_owned(),
        });
    }
    if !view.in_model_list(tool) {
        return Err(unknown());
    }
    let arguments = match raw {
        Value::Null => None,
        Value::Object(m) => Some(m.clone()),
        _ => {
            return Err(MetaError::InvalidArgs {
                tool: tool.to_owned(),
                problems: vec![Problem {
                    path: String::new(),
                    message: "the arguments must be an object".to_owned(),
                }],
            });
        }
    };
    Ok(dispatch(
        view,
        tool.to_owned(),
        arguments,
        None,
        None,
        false,
    ))
}

/// The one dispatch path: `tools/call` with the tool's own name and the arguments as
/// given, plus `_meta["mcpl/instance"]` for an instance-bound call (§4.5).
fn dispatch(
    view: &ServerView<'_>,
    tool: String,
    arguments: Option<Map<String, Value>>,
    instance: Option<String>,
    marker: Option<Marker>,
    via_act: bool,
) -> Plan {
    Plan::Send(SendPlan {
        server: view.name.to_owned(),
        request: Outgoing::Call(CallToolParams {
            name: tool.clone(),
            arguments,
            meta: instance.map(Meta::with_instance),
        }),
        after: After::Call {
            tool,
            marker,
            via_act,
        },
    })
}

/// True when the server annotates `tool` read-only (`readOnlyHint`): one the server may
/// answer for a finished instance (§4.3).
fn read_only(view: &ServerView<'_>, tool: &str) -> bool {
    view.catalog
        .tool(tool)
        .and_then(|t| t.annotations.as_ref())
        .and_then(|a| a.read_only_hint)
        == Some(true)
}

/// The read-only tools of `toolset`, in listed order (policy permitting).
fn read_only_tools(view: &ServerView<'_>, toolset: &str) -> Vec<String> {
    view.catalog
        .listed_tools()
        .filter(|t| view.catalog.toolset_name(&t.name) == Some(toolset))
        .filter(|t| view.policy.allows(&t.name) && read_only(view, &t.name))
        .map(|t| t.name.clone())
        .collect()
}
