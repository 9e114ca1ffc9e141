//! `toolsets--look`: what is open, what is usable in each open toolset and instance (with
//! descriptions and argument summaries), what can be opened, what ended, and which
//! suggestions are pending — rendered from the catalogs, hint states and presenter, never
//! from the server directly. Tools the host's policy denies are not shown (§6).

use super::{Answer, MetaConfig, MetaError, Plan, World, args, resolve};
use crate::state::presenter::TextBounds;
use crate::state::view::{Described, Marker, ServerView};
use mcpl_protocol::CallToolResult;
use mcpl_protocol::hints::SuggestAction;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// The filters a look was given.
struct Filter<'a> {
    toolset: Option<&'a str>,
    instance: Option<&'a str>,
    tool: Option<&'a str>,
}

impl Filter<'_> {
    fn set(&self, m: &Marker) -> bool {
        self.toolset.is_none_or(|t| m.toolset.as_deref() == Some(t))
            && self
                .instance
                .is_none_or(|i| m.instance.as_deref() == Some(i))
    }
    fn narrowed(&self) -> bool {
        self.toolset.is_some() || self.instance.is_some() || self.tool.is_some()
    }
}

/// Renders a look.
pub(super) fn look(config: &MetaConfig, raw: &Value, world: &World<'_>) -> Result<Plan, MetaError> {
    let a = args::look(raw)?;
    let views = resolve::servers(world, a.server.as_deref())?;
    let filter = Filter {
        toolset: a.toolset.as_deref(),
        instance: a.instance.as_deref(),
        tool: a.tool.as_deref(),
    };
    if let Some(t) = filter.toolset {
        let offered = views
            .iter()
            .any(|v| v.catalog.declaration(t).is_some() || v.catalog.is_group(t));
        if !offered {
            // Names the candidates, as open does.
            resolve::toolset(world, a.server.as_deref(), t)?;
        }
    }
    let mut sections = Vec::new();
    let mut announces = BTreeSet::new();
    let mut tool_seen = false;
    for view in views {
        let s = server_section(
            view,
            world,
            &filter,
            &config.bounds,
            &mut announces,
            &mut tool_seen,
        );
        if !s.is_empty() {
            sections.push(s.join("\n"));
        }
    }
    if let (Some(t), false) = (filter.tool, tool_seen) {
        return Err(MetaError::UnknownTool {
            tool: t.to_owned(),
            meta_tools: world.meta_tools_listed(),
        });
    }
    let text = if sections.is_empty() {
        "Nothing matches.".to_owned()
    } else {
        sections.join("\n\n")
    };
    Ok(Plan::Answer(Answer {
        result: CallToolResult::text(text),
        announces,
    }))
}

fn server_section(
    view: &ServerView<'_>,
    world: &World<'_>,
    f: &Filter<'_>,
    b: &TextBounds,
    announces: &mut BTreeSet<Marker>,
    tool_seen: &mut bool,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut head = format!("{}", Marker::server(view.name));
    if let Some(s) = view.catalog.surface() {
        if let Some(t) = &s.title {
            head.push_str(&format!(" {}", b.inline(t)));
        }
        if let Some(sum) = &s.summary {
            head.push_str(&format!(" — {}", b.inline(sum)));
        }
        head.push_str(&format!(" (from {})", view.name));
    }
    if !view.connected && !view.settled() {
        let why = view
            .down_because
            .map(|c| format!(" ({})", b.bound(c).replace(['\n', '\t'], " ")))
            .unwrap_or_default();
        out.push(format!(
            "{head}: not connected just now{why}; nothing is known to be open there."
        ));
        return out;
    }
    if !view.catalog.hints_count() {
        if !f.narrowed() {
            out.push(format!(
                "{head}: no toolsets; its tools are in your tool list."
            ));
        }
        return out;
    }
    if !view.settled() {
        out.push(format!(
            "{head}: not connected just now; nothing is known to be open there."
        ));
        return out;
    }
    out.push(head);
    let actual = view.actual();
    let usable = actual.usable_by_marker();
    let tool_ok = |t: &str| f.tool.is_none_or(|want| want == t);

    let mut open_lines = Vec::new();
    for set in actual.open.values().filter(|s| f.set(&s.marker)) {
        let mut line = match set.shown_title() {
            Some(t) => format!("- {} {} (from {})", set.marker, b.inline(t), view.name),
            None => format!("- {}", set.marker),
        };
        if set.group {
            line.push_str(" (a group the host opens and closes itself)");
        }
        open_lines.push(line);
        let tools: Vec<String> = usable
            .get(&set.marker)
            .into_iter()
            .flatten()
            .filter(|((t, _), _)| tool_ok(t))
            .map(|((t, _), (m, d))| format!("  - {}", b.describe(view.name, t, m, d)))
            .collect();
        *tool_seen |= !tools.is_empty();
        if tools.is_empty() && f.tool.is_none() {
            open_lines.push("  (nothing usable in it right now)".to_owned());
        }
        open_lines.extend(tools);
        announces.insert(set.marker.clone());
    }
    if !open_lines.is_empty() {
        out.push("Open:".to_owned());
        out.extend(open_lines);
    }

    if f.toolset.is_none() && f.instance.is_none() {
        let alone: Vec<String> = actual
            .usable
            .iter()
            .filter(|((t, _), (m, _))| m.toolset.is_none() && tool_ok(t))
            .map(|((t, _), (m, d))| format!("- {}", b.describe(view.name, t, m, d)))
            .collect();
        *tool_seen |= !alone.is_empty();
        if !alone.is_empty() {
            out.push("Usable outside toolsets:".to_owned());
            out.extend(alone);
        }
    }

    if let Some(t) = f.tool
        && !*tool_seen
    {
        // Known but not usable now: say what it is and why it cannot be called.
        let known =
            view.catalog.tool(t).is_some() && view.presented_dynamic(t) && view.policy.allows(t);
        if known {
            *tool_seen = true;
            let marker = view.tool_marker(t, None);
            if let Some(def) = view.definition(t, None) {
                let d = Described {
                    description: def.description.as_deref().map(Cow::Borrowed),
                    input_schema: Cow::Borrowed(&def.input_schema),
                };
                out.push(format!(
                    "- not usable right now: {}",
                    b.describe(view.name, t, &marker, &d)
                ));
            }
        }
    }

    if f.instance.is_none() && f.tool.is_none() {
        let closed = closed_lines(view, &actual, f, b);
        if !closed.is_empty() {
            out.push("Can be opened:".to_owned());
            out.extend(closed);
        }
    }

    if f.tool.is_none() {
        let ended: Vec<String> = world
            .presenter
            .recent_ended(view.name)
            .filter(|e| f.set(&e.marker))
            .map(|e| {
                let at =
                    e.at.as_ref()
                        .map(|a| format!(" at {}", b.inline(a)))
                        .unwrap_or_default();
                let why = e
                    .reason
                    .as_ref()
                    .map(|r| format!(": {} (from {})", b.inline(r), view.name))
                    .unwrap_or_default();
                format!("- {}{at}{why}", e.marker)
            })
            .collect();
        if !ended.is_empty() {
            out.push("Ended:".to_owned());
            out.extend(ended);
        }
        let pending: Vec<String> = world
            .presenter
            .suggestions(view.name)
            .filter(|s| {
                let key = (s.toolset.clone(), s.instance.clone());
                let open = actual.open.contains_key(&key);
                let marker = Marker::new(view.name, &s.toolset, s.instance.as_deref());
                f.set(&marker)
                    && match s.action {
                        SuggestAction::Open => !open,
                        SuggestAction::Close => open,
                    }
            })
            .map(|s| format!("- {}", b.suggestion(view.name, s)))
            .collect();
        if !pending.is_empty() {
            out.push("Suggested, not acted on:".to_owned());
            out.extend(pending);
        }
    }
    // A server with nothing matching a narrowed look says nothing.
    if f.narrowed() && out.len() == 1 {
        out.clear();
    }
    out
}

/// Declared toolsets that can be opened (instanced ones always can: another instance) and
/// closed groups, with what opening takes.
fn closed_lines(
    view: &ServerView<'_>,
    actual: &crate::state::view::Actual<'_>,
    f: &Filter<'_>,
    b: &TextBounds,
) -> Vec<String> {
    let mut out = Vec::new();
    for (name, d) in view.catalog.toolsets() {
        let marker = Marker::new(view.name, name, None);
        if !f.set(&marker) || (!d.instances && actual.open.contains_key(&(name.to_owned(), None))) {
            continue;
        }
        let mut line = format!("- {marker}");
        if let Some(t) = &d.title {
            line.push_str(&format!(" {}", b.inline(t)));
        }
        if let Some(s) = &d.summary {
            line.push_str(&format!(" — {}", b.inline(s)));
        }
        if d.title.is_some() || d.summary.is_some() {
            line.push_str(&format!(" (from {})", view.name));
        }
        if d.instances {
            line.push_str("; has instances (each open is a new one unless you name an open one)");
        }
        if let Some(o) = &d.options {
            line.push_str(&format!("; options: {}", b.args_summary(o)));
        }
        line.push_str(&format!(
            ". Open with toolsets--open {}.",
            serde_json::json!({"server": view.name, "toolset": name})
        ));
        out.push(line);
    }
    for g in view.catalog.groups() {
        let marker = Marker::new(view.name, g, None);
        if !f.set(&marker) || view.catalog.is_group_open(g) {
            continue;
        }
        out.push(format!(
            "- {marker} (a group the host opens and closes itself). Open with toolsets--open {}.",
            serde_json::json!({"server": view.name, "toolset": g})
        ));
    }
    out
}
