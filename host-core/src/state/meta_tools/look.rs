//! `toolsets--look`: what is open, what is usable in each open toolset and instance (with
//! descriptions and argument summaries), what can be opened, what ended, and which
//! suggestions are pending — rendered from the catalogs, hint states and presenter, never
//! from the server directly. Tools the host's policy denies are not shown (§6).

use super::error::MetaError;
use super::plan::{Answer, MetaConfig, Plan, World};
use super::{args, resolve};
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
    let mut tool_seen = false;
    for view in views {
        let s = server_section(view, world, &filter, &config.bounds, &mut tool_seen);
        if !s.is_empty() {
            sections.push(s);
        }
    }
    if let (Some(t), false) = (filter.tool, tool_seen) {
        return Err(MetaError::UnknownTool {
            tool: t.to_owned(),
            meta_tools: world.meta_tools_listed(),
        });
    }
    let (text, announces) = if sections.is_empty() {
        ("Nothing matches.".to_owned(), BTreeSet::new())
    } else {
        bounded(&sections, config.max_look_bytes)
    };
    Ok(Plan::Answer(Answer {
        result: CallToolResult::text(text),
        announces,
    }))
}

/// What a line of a look lists, counted when it is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum What {
    /// A heading.
    Head,
    /// An open toolset or instance: the first line of its group.
    Open,
    /// A usable tool (in an open toolset's group, or outside toolsets).
    Tool,
    /// A note in an open toolset's group ("nothing usable in it").
    Note,
    /// Something else: what can be opened, what ended, a suggestion.
    Entry,
}

/// One line of a look.
struct Line {
    text: String,
    what: What,
    /// An open toolset's marker, on its first line.
    marker: Option<Marker>,
}

impl Line {
    fn new(what: What, text: String) -> Self {
        Line {
            text,
            what,
            marker: None,
        }
    }
}

/// Kept back from a look's bound for its last line, which says what was left out.
const LOOK_TRAILER: usize = 640;

/// The lines of one section in blocks listed whole or not at all: an open toolset with its
/// tools and notes, or one line.
fn blocks(section: &[Line]) -> Vec<&[Line]> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < section.len() {
        let mut end = start + 1;
        if section[start].what == What::Open {
            while end < section.len() && matches!(section[end].what, What::Tool | What::Note) {
                end += 1;
            }
        }
        out.push(&section[start..end]);
        start = end;
    }
    out
}

/// The sections joined within `max` bytes (**\[project\]**, issue #37 item 5: 5,000 open
/// instances made a 1.1 MB look): an open toolset is listed with all its tools or not at
/// all (the first one is cut to the lines that fit, so a narrowed look at one large
/// toolset still shows it); past the bound, a last line counts the open toolsets, usable
/// tools and other entries left out and says how to narrow the look. Only open toolsets
/// listed whole count as announced.
fn bounded(sections: &[Vec<Line>], max: usize) -> (String, BTreeSet<Marker>) {
    let room = max.saturating_sub(LOOK_TRAILER);
    let mut text = String::new();
    let mut announces = BTreeSet::new();
    let (mut open, mut tools, mut other) = (0usize, 0usize, 0usize);
    let mut first_left: Option<&Marker> = None;
    let mut listed_open = false;
    let mut full = false;
    for (i, section) in sections.iter().enumerate() {
        for (j, block) in blocks(section).into_iter().enumerate() {
            let sep = |k: usize| match (i, j, k) {
                (0, 0, 0) => "",
                (_, 0, 0) => "\n\n",
                _ => "\n",
            };
            let size: usize = block
                .iter()
                .enumerate()
                .map(|(k, l)| sep(k).len() + l.text.len())
                .sum();
            let group = block[0].what == What::Open;
            let mut left = block;
            if !full && text.len() + size <= room {
                for (k, l) in block.iter().enumerate() {
                    text.push_str(sep(k));
                    text.push_str(&l.text);
                }
                announces.extend(block[0].marker.clone());
                listed_open |= group;
                continue;
            }
            if !full && group && !listed_open {
                // The first open toolset, too large alone: the lines that fit.
                let mut k = 0;
                while k < block.len() && text.len() + sep(k).len() + block[k].text.len() <= room {
                    text.push_str(sep(k));
                    text.push_str(&block[k].text);
                    k += 1;
                }
                left = &block[k..];
            }
            full = true;
            if group && left.len() == block.len() {
                first_left = first_left.or(block[0].marker.as_ref());
            }
            for l in left {
                match l.what {
                    What::Head | What::Note => {}
                    What::Open => open += 1,
                    What::Tool => tools += 1,
                    What::Entry => other += 1,
                }
            }
        }
    }
    if full {
        let mut parts = Vec::new();
        if open > 0 {
            parts.push(format!("{open} open toolsets or instances"));
        }
        if tools > 0 {
            parts.push(format!("{tools} usable tools"));
        }
        if other > 0 {
            parts.push(format!("{other} other entries"));
        }
        if parts.is_empty() {
            parts.push("some headings".to_owned());
        }
        let example = first_left
            .map(|m| {
                let mut args = serde_json::Map::new();
                args.insert("server".into(), m.server.clone().into());
                if let Some(t) = &m.toolset {
                    args.insert("toolset".into(), t.clone().into());
                }
                if let Some(i) = &m.instance {
                    args.insert("instance".into(), i.clone().into());
                }
                format!(
                    " (the first not listed: toolsets--look {})",
                    Value::Object(args)
                )
            })
            .unwrap_or_default();
        text.push_str(&format!(
            "\n\n…and {} not listed: a look shows at most {max} bytes. Narrow it: toolsets--look takes `server`, `toolset`, `instance` and `tool`{example}.",
            parts.join(", ")
        ));
    }
    (text, announces)
}

fn server_section(
    view: &ServerView<'_>,
    world: &World<'_>,
    f: &Filter<'_>,
    b: &TextBounds,
    tool_seen: &mut bool,
) -> Vec<Line> {
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
        out.push(Line::new(
            What::Head,
            format!("{head}: not connected just now{why}; nothing is known to be open there."),
        ));
        return out;
    }
    if !view.catalog.hints_count() {
        if !f.narrowed() {
            out.push(Line::new(
                What::Head,
                format!("{head}: no toolsets; its tools are in your tool list."),
            ));
        }
        return out;
    }
    if !view.settled() {
        out.push(Line::new(
            What::Head,
            format!("{head}: not connected just now; nothing is known to be open there."),
        ));
        return out;
    }
    out.push(Line::new(What::Head, head));
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
        open_lines.push(Line {
            text: line,
            what: What::Open,
            marker: Some(set.marker.clone()),
        });
        let tools: Vec<Line> = usable
            .get(&set.marker)
            .into_iter()
            .flatten()
            .filter(|((t, _), _)| tool_ok(t))
            .map(|((t, _), (m, d))| {
                Line::new(
                    What::Tool,
                    format!("  - {}", b.describe(view.name, t, m, d)),
                )
            })
            .collect();
        *tool_seen |= !tools.is_empty();
        if tools.is_empty() && f.tool.is_none() {
            open_lines.push(Line::new(
                What::Note,
                "  (nothing usable in it right now)".to_owned(),
            ));
        }
        open_lines.extend(tools);
    }
    if !open_lines.is_empty() {
        out.push(Line::new(What::Head, "Open:".to_owned()));
        out.extend(open_lines);
    }

    if f.toolset.is_none() && f.instance.is_none() {
        let alone: Vec<Line> = actual
            .usable
            .iter()
            .filter(|((t, _), (m, _))| m.toolset.is_none() && tool_ok(t))
            .map(|((t, _), (m, d))| {
                Line::new(What::Tool, format!("- {}", b.describe(view.name, t, m, d)))
            })
            .collect();
        *tool_seen |= !alone.is_empty();
        if !alone.is_empty() {
            out.push(Line::new(What::Head, "Usable outside toolsets:".to_owned()));
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
                out.push(Line::new(
                    What::Entry,
                    format!(
                        "- not usable right now: {}",
                        b.describe(view.name, t, &marker, &d)
                    ),
                ));
            }
        }
    }

    if f.instance.is_none() && f.tool.is_none() {
        let closed = closed_lines(view, &actual, f, b);
        if !closed.is_empty() {
            out.push(Line::new(What::Head, "Can be opened:".to_owned()));
            out.extend(closed.into_iter().map(|l| Line::new(What::Entry, l)));
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
            out.push(Line::new(What::Head, "Ended:".to_owned()));
            out.extend(ended.into_iter().map(|l| Line::new(What::Entry, l)));
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
            out.push(Line::new(What::Head, "Suggested, not acted on:".to_owned()));
            out.extend(pending.into_iter().map(|l| Line::new(What::Entry, l)));
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
