//! Resolving names across servers (§6: `server` may be left out when the name is
//! unambiguous; when it is ambiguous the call fails naming the candidates), and instances
//! within a toolset (§4.5).

use super::error::MetaError;
use super::plan::World;
use crate::state::catalog::ToolsetRef;
use crate::state::conversation::{namespaced, split_namespaced};
use crate::state::view::{Marker, ServerView};
use mcpl_protocol::toolsets::ToolsetDecl;

/// A toolset as the meta-tools treat it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind<'a> {
    /// Declared in the manifest: the server opens, closes and gates it.
    Declared(&'a ToolsetDecl),
    /// An undeclared group: the host opens, closes and gates it (§4.4).
    Group,
}

/// The servers to look in: the named one, or all.
pub(super) fn servers<'w>(
    world: &World<'w>,
    server: Option<&str>,
) -> Result<Vec<&'w ServerView<'w>>, MetaError> {
    match server {
        None => Ok(world.servers.iter().collect()),
        Some(name) => world
            .server(name)
            .map(|s| vec![s])
            .ok_or_else(|| MetaError::UnknownServer {
                server: name.to_owned(),
                known: world.servers.iter().map(|s| s.name.to_owned()).collect(),
            }),
    }
}

fn kind<'a>(view: &ServerView<'a>, toolset: &str) -> Option<Kind<'a>> {
    if let Some(d) = view.catalog.declaration(toolset) {
        return Some(Kind::Declared(d));
    }
    view.catalog.is_group(toolset).then_some(Kind::Group)
}

/// The one server offering `toolset`, and what kind it is there.
pub(super) fn toolset<'w>(
    world: &World<'w>,
    server: Option<&str>,
    toolset: &str,
) -> Result<(&'w ServerView<'w>, Kind<'w>), MetaError> {
    let within = servers(world, server)?;
    let found: Vec<(&ServerView<'w>, Kind<'w>)> = within
        .iter()
        .filter_map(|v| kind(v, toolset).map(|k| (*v, k)))
        .collect();
    match found.as_slice() {
        [one] => Ok(*one),
        // A server not connected may offer it: say so rather than "no such toolset".
        [] => Err(down(&within).unwrap_or_else(|| MetaError::UnknownToolset {
            toolset: toolset.to_owned(),
            known: within
                .iter()
                .flat_map(|v| {
                    let declared = v.catalog.toolsets().map(|(n, _)| n.to_owned());
                    let groups = v.catalog.groups().into_iter().map(str::to_owned);
                    declared
                        .chain(groups)
                        .map(|t| Marker::new(v.name, &t, None).to_string())
                        .collect::<Vec<_>>()
                })
                .collect(),
        })),
        many => Err(MetaError::Ambiguous {
            name: toolset.to_owned(),
            candidates: many.iter().map(|(v, _)| v.name.to_owned()).collect(),
        }),
    }
}

/// The one server offering `tool` through `act`, and the tool's name there. `tool` may be
/// given as `server--tool`. Among several servers offering it, the ones where it is usable
/// now (in `instance`, if named) are preferred; more than one is ambiguous.
pub(super) fn tool<'w>(
    world: &World<'w>,
    server: Option<&str>,
    tool: &str,
    instance: Option<&str>,
) -> Result<(&'w ServerView<'w>, String), MetaError> {
    let (server, tool) = match (
        server,
        split_namespaced(tool, world.servers.iter().map(|s| s.name)),
    ) {
        (None, Some((s, t))) => (Some(s), t),
        _ => (server, tool),
    };
    let within = servers(world, server)?;
    let offered: Vec<&ServerView<'w>> = within
        .iter()
        .copied()
        .filter(|v| {
            v.catalog.tool(tool).is_some() && v.presented_dynamic(tool) && v.policy.allows(tool)
        })
        .collect();
    let chosen = match offered.as_slice() {
        [one] => *one,
        [] => return Err(not_offered(world, &within, tool)),
        many => {
            let usable: Vec<&ServerView<'w>> =
                many.iter()
                    .copied()
                    .filter(|v| {
                        v.actual().usable.keys().any(|(t, i)| {
                            t == tool && (instance.is_none() || i.as_deref() == instance)
                        })
                    })
                    .collect();
            match usable.as_slice() {
                [one] => *one,
                _ => {
                    return Err(MetaError::Ambiguous {
                        name: tool.to_owned(),
                        candidates: many.iter().map(|v| v.name.to_owned()).collect(),
                    });
                }
            }
        }
    };
    Ok((chosen, tool.to_owned()))
}

/// `view`'s server is not connected now (with why, when that is known).
pub(super) fn not_connected(view: &ServerView<'_>) -> MetaError {
    MetaError::NotConnected {
        server: view.name.to_owned(),
        cause: view.down_because.map(str::to_owned),
    }
}

/// The first of these servers that is not connected, as the error saying so: what a name
/// not found may be offered by (a server never connected has told nothing yet).
fn down(within: &[&ServerView<'_>]) -> Option<MetaError> {
    within
        .iter()
        .find(|v| !v.connected)
        .map(|v| not_connected(v))
}

/// Why no server offers `tool` through `act`: it is static (call it directly), the policy
/// denies it, its server may not be connected, or there is no such tool.
fn not_offered(world: &World<'_>, within: &[&ServerView<'_>], tool: &str) -> MetaError {
    for v in within {
        if v.catalog.tool(tool).is_none() {
            continue;
        }
        if !v.policy.allows(tool) {
            return MetaError::Denied {
                server: v.name.to_owned(),
                tool: tool.to_owned(),
            };
        }
        if v.in_model_list(tool) {
            return MetaError::StaticThroughAct {
                name: namespaced(v.name, tool),
            };
        }
    }
    down(within).unwrap_or_else(|| MetaError::UnknownTool {
        tool: tool.to_owned(),
        meta_tools: world.meta_tools_listed(),
    })
}

/// The instance of a declared instanced toolset a call or close is for: the named one if
/// open, or the only open one; otherwise an error naming the open ones (§4.2, §4.5).
pub(super) fn instance(
    view: &ServerView<'_>,
    toolset: &str,
    named: Option<&str>,
) -> Result<String, MetaError> {
    let marker = Marker::new(view.name, toolset, None);
    let hints = view.hints.ok_or_else(|| not_connected(view))?;
    if hints.is_connecting() {
        return Err(MetaError::NotSettled {
            server: view.name.to_owned(),
        });
    }
    let open: Vec<String> = hints
        .instances_of(toolset)
        .into_iter()
        .map(str::to_owned)
        .collect();
    match named {
        Some(i) if open.iter().any(|o| o == i) => Ok(i.to_owned()),
        Some(i) => Err(MetaError::UnknownInstance {
            marker,
            instance: i.to_owned(),
            open,
        }),
        None => match open.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(MetaError::NotOpen { marker }),
            _ => Err(MetaError::InstanceRequired { marker, open }),
        },
    }
}

/// The toolset a tool belongs to, as the meta-tools treat it.
pub(super) fn tool_toolset<'a>(view: &ServerView<'a>, tool: &str) -> Option<(String, Kind<'a>)> {
    match view.catalog.toolset_of(tool)? {
        ToolsetRef::Declared(t) => {
            let d = view.catalog.declaration(&t)?;
            Some((t, Kind::Declared(d)))
        }
        ToolsetRef::Group(g) => Some((g, Kind::Group)),
    }
}
