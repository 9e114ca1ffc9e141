//! Words for the agent. Every server-authored string that reaches the model passes through
//! here: bounded in size, cleaned of control and bidirectional-override characters, and
//! quoted so it is told apart from the host's own words and attributed to its server (§7).
//!
//! - [`TextBounds::inline`]: one line, JSON-quoted (`"White won by 3.5"`), for titles,
//!   reasons, descriptions;
//! - [`TextBounds::block`]: each line prefixed `│ `, for content (a board).

use crate::state::view::{Described, Marker, shown_name, shown_name_cow};
use mcpl_protocol::hints::SuggestAction;
use mcpl_protocol::mcp::Media;
use mcpl_protocol::{ContentBlock, Suggestion};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt::Write as _;

/// The default bound on one server-authored item, in characters.
pub const DEFAULT_PER_ITEM: usize = 2_000;

/// How many `enum` entries an argument summary shows.
pub const DEFAULT_ENUM_ENTRIES: usize = 8;

/// Size bounds on server-authored text (§7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextBounds {
    /// Characters per item (a description, a reason, a content block); beyond, it is cut
    /// with a note saying how much was cut.
    pub per_item: usize,
    /// `enum` entries shown in an argument summary.
    pub enum_entries: usize,
}

impl Default for TextBounds {
    fn default() -> Self {
        TextBounds {
            per_item: DEFAULT_PER_ITEM,
            enum_entries: DEFAULT_ENUM_ENTRIES,
        }
    }
}

/// True for characters that must not reach the model from a peer: C0/C1 controls other
/// than newline and tab, and bidirectional overrides and isolates.
fn unwanted(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
}

impl TextBounds {
    /// `s` cleaned and cut to [`TextBounds::per_item`] characters, with a note when cut.
    pub fn bound(&self, s: &str) -> String {
        self.bound_cow(s).into_owned()
    }

    /// True when [`TextBounds::bound`] leaves `s` as it is: no unwanted character, and
    /// short enough (in bytes, so in characters too).
    fn fits(&self, s: &str) -> bool {
        s.len() <= self.per_item && !s.chars().any(unwanted)
    }

    /// [`TextBounds::bound`], borrowing `s` when it is left as it is.
    fn bound_cow<'s>(&self, s: &'s str) -> Cow<'s, str> {
        if self.fits(s) {
            return Cow::Borrowed(s);
        }
        let clean: String = s.chars().filter(|c| !unwanted(*c)).collect();
        let total = clean.chars().count();
        if total <= self.per_item {
            return Cow::Owned(clean);
        }
        let kept: String = clean.chars().take(self.per_item).collect();
        Cow::Owned(format!(
            "{kept}… [{} more characters cut by the host]",
            total - self.per_item
        ))
    }

    /// A server's string on one line, bounded and JSON-quoted.
    pub fn inline(&self, s: &str) -> String {
        let bounded = self.bound_cow(s);
        let one_line = if bounded.contains(['\n', '\t']) {
            Cow::Owned(bounded.replace(['\n', '\t'], " "))
        } else {
            bounded
        };
        json_string(&one_line)
    }

    /// A server's text as a quoted block, each line prefixed `│ `.
    pub fn block(&self, s: &str) -> String {
        self.bound(s)
            .lines()
            .map(|l| format!("│ {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Content blocks as a quoted block (text bounded per block; other kinds named).
    pub fn content(&self, blocks: &[ContentBlock]) -> String {
        blocks
            .iter()
            .map(|b| match b {
                ContentBlock::Text { text, .. } => self.block(text),
                ContentBlock::Image(Media { mime_type, uri, .. }) => {
                    self.media("image", mime_type.as_deref(), uri.as_deref())
                }
                ContentBlock::Audio(Media { mime_type, uri, .. }) => {
                    self.media("audio", mime_type.as_deref(), uri.as_deref())
                }
                ContentBlock::ResourceLink { uri, name, .. } => format!(
                    "│ [link {} {}]",
                    self.inline_short(name),
                    self.inline_short(uri)
                ),
                ContentBlock::Resource { uri: Some(uri), .. } => {
                    format!("│ [resource {}]", self.inline_short(uri))
                }
                ContentBlock::Resource { .. } => "│ [embedded resource]".to_owned(),
                ContentBlock::Other(block) => {
                    let kind = block.get("type").and_then(|t| t.as_str()).unwrap_or("?");
                    format!("│ [{} content]", self.inline_short(kind))
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// An image or audio block: its kind, MIME type and, for MCPL's `uri` form, where.
    fn media(&self, kind: &str, mime_type: Option<&str>, uri: Option<&str>) -> String {
        let mut parts = vec![kind.to_owned()];
        parts.extend(mime_type.map(|m| self.bound_short(m)));
        parts.extend(uri.map(|u| self.inline_short(u)));
        format!("│ [{}]", parts.join(", "))
    }

    fn bound_short(&self, s: &str) -> String {
        TextBounds {
            per_item: self.per_item.min(80),
            ..*self
        }
        .bound(s)
    }

    fn inline_short(&self, s: &str) -> String {
        TextBounds {
            per_item: self.per_item.min(200),
            ..*self
        }
        .inline(s)
    }

    /// A one-line summary of a tool's arguments from its input schema:
    /// `{move: "D4" | "pass", note?: string}`. Server-authored throughout, so bounded.
    pub fn args_summary(&self, schema: &Value) -> String {
        let summary = match schema.get("properties").and_then(Value::as_object) {
            Some(props) if !props.is_empty() => {
                let required: Vec<&str> = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let mut out = String::from("{");
                for (i, (name, sub)) in props.iter().take(16).enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&prop_name(name));
                    if !required.contains(&name.as_str()) {
                        out.push('?');
                    }
                    out.push_str(": ");
                    out.push_str(&self.type_of(sub));
                    if let Some(d) = sub.get("description").and_then(Value::as_str) {
                        out.push_str(" — ");
                        out.push_str(&self.inline_short(d));
                    }
                }
                if props.len() > 16 {
                    let _ = write!(out, ", … {} more", props.len() - 16);
                }
                out.push('}');
                out
            }
            _ if schema.get("type").and_then(Value::as_str) == Some("object") => "none".to_owned(),
            _ => self.type_of(schema),
        };
        if self.fits(&summary) {
            summary
        } else {
            self.bound(&summary)
        }
    }

    /// A short type for one schema: its enum, const, or type.
    fn type_of(&self, s: &Value) -> String {
        if let Some(e) = s.get("enum").and_then(Value::as_array) {
            let mut shown: Vec<String> = e
                .iter()
                .take(self.enum_entries)
                .map(|v| short_json(v, 40))
                .collect();
            if e.len() > self.enum_entries {
                shown.push(format!("… ({} more)", e.len() - self.enum_entries));
            }
            return shown.join(" | ");
        }
        if let Some(c) = s.get("const") {
            return short_json(c, 40);
        }
        if s.get("anyOf").or_else(|| s.get("oneOf")).is_some() {
            return "one of several shapes".to_owned();
        }
        let ty = match s.get("type") {
            Some(Value::String(t)) => shown_name_cow(t).into_owned(),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .map(shown_name)
                .collect::<Vec<_>>()
                .join(" | "),
            _ => return "any".to_owned(),
        };
        let (min, max) = (s.get("minimum"), s.get("maximum"));
        match (ty.as_str(), min, max) {
            ("integer" | "number", Some(a), Some(b)) => {
                format!("{ty} {}..{}", short_json(a, 20), short_json(b, 20))
            }
            ("array", ..) => match s.get("items") {
                Some(items) if items.is_object() => format!("array of {}", self.flat_type(items)),
                _ => ty,
            },
            _ => ty,
        }
    }

    /// The type of an array's items, one level only.
    fn flat_type(&self, s: &Value) -> String {
        match s.get("type").and_then(Value::as_str) {
            Some(t) => shown_name(t),
            None if s.get("enum").is_some() => "enum".to_owned(),
            None => "any".to_owned(),
        }
    }

    /// How a usable tool is described to the agent (§6 "RFC §8.3": name, description,
    /// arguments): one line, server text quoted and attributed.
    pub fn describe(&self, server: &str, tool: &str, marker: &Marker, d: &Described<'_>) -> String {
        let mut out = String::with_capacity(256);
        out.push_str(&shown_name_cow(tool));
        let _ = write!(out, " in {marker}");
        if let Some(desc) = &d.description {
            out.push_str(" — ");
            out.push_str(&self.inline(desc));
            out.push_str(" (from ");
            out.push_str(server);
            out.push(')');
        }
        out.push_str(". Arguments: ");
        out.push_str(&self.args_summary(&d.input_schema));
        out.push_str(". Call it with ");
        push_act_call(&mut out, marker, tool);
        out.push('.');
        out
    }
}

impl TextBounds {
    /// A suggestion, rendered and never acted on (§5.3, vector 19): what, why (the
    /// server's words, attributed) and the call that would accept it.
    pub fn suggestion(&self, server: &str, s: &Suggestion) -> String {
        let marker = Marker::new(server, &s.toolset, s.instance.as_deref());
        let (verb, tool) = match s.action {
            SuggestAction::Open => ("open", "toolsets--open"),
            SuggestAction::Close => ("close", "toolsets--close"),
        };
        let mut call = serde_json::Map::new();
        call.insert("server".into(), Value::String(server.to_owned()));
        call.insert("toolset".into(), Value::String(s.toolset.clone()));
        if let Some(i) = &s.instance {
            call.insert("instance".into(), Value::String(i.clone()));
        }
        if let (SuggestAction::Open, Some(o)) = (s.action, &s.options) {
            call.insert("options".into(), o.clone());
        }
        let call = self.bound(&Value::Object(call).to_string());
        format!(
            "Suggestion from {server} (the host does not act on it): {verb} {marker} — {} (from {server}). To accept, call {tool} {call}.",
            self.inline(&s.reason)
        )
    }
}

/// A property name as shown: plain when it is a simple identifier, else JSON-quoted.
fn prop_name(name: &str) -> Cow<'_, str> {
    let simple = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if simple {
        Cow::Borrowed(name)
    } else {
        let cut: String = name.chars().take(64).collect();
        Cow::Owned(json_string(&cut))
    }
}

/// A string as a JSON string.
fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A JSON value, serialized and cut to `max` characters.
fn short_json(v: &Value, max: usize) -> String {
    let s = v.to_string();
    match s.char_indices().nth(max) {
        None => s,
        Some((at, _)) => format!("{}…", &s[..at]),
    }
}

/// The `toolsets--act` call that reaches `tool` under `marker`.
pub fn act_call(marker: &Marker, tool: &str) -> String {
    let mut out = String::new();
    push_act_call(&mut out, marker, tool);
    out
}

/// [`act_call`], written to `out`: its arguments as one JSON object, members in name order
/// (as a `serde_json` map writes them).
fn push_act_call(out: &mut String, marker: &Marker, tool: &str) {
    out.push_str("toolsets--act {");
    if let Some(i) = &marker.instance {
        out.push_str("\"instance\":");
        out.push_str(&json_string(i));
        out.push(',');
    }
    out.push_str("\"server\":");
    out.push_str(&json_string(&marker.server));
    out.push_str(",\"tool\":");
    out.push_str(&json_string(tool));
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_text_is_cut_with_a_note() {
        let b = TextBounds {
            per_item: 10,
            ..Default::default()
        };
        assert_eq!(b.bound("short"), "short");
        assert_eq!(
            b.bound(&"é".repeat(25)),
            format!("{}… [15 more characters cut by the host]", "é".repeat(10))
        );
    }

    #[test]
    fn inline_text_is_one_quoted_line_without_controls() {
        let b = TextBounds::default();
        assert_eq!(
            b.inline("White won\nby 3.5\u{202E}\u{1b}[31m"),
            "\"White won by 3.5[31m\""
        );
        assert_eq!(b.inline("say \"hi\""), "\"say \\\"hi\\\"\"");
    }

    #[test]
    fn an_act_call_is_its_arguments_as_one_json_object() {
        for (server, tool, instance) in [
            ("arcade", "play", None),
            ("arcade", "play", Some("g1")),
            ("a\"b", "t\\ool\n\u{1}é", Some("i\u{7f}\u{2028}\"")),
        ] {
            let marker = Marker {
                server: server.into(),
                toolset: Some("game".into()),
                instance: instance.map(Into::into),
            };
            let mut args = serde_json::Map::new();
            args.insert("server".into(), json!(server));
            args.insert("tool".into(), json!(tool));
            if let Some(i) = instance {
                args.insert("instance".into(), json!(i));
            }
            assert_eq!(
                act_call(&marker, tool),
                format!("toolsets--act {}", Value::Object(args))
            );
        }
    }

    #[test]
    fn text_left_as_it_is_and_text_cleaned_read_the_same_either_way() {
        let b = TextBounds {
            per_item: 12,
            ..Default::default()
        };
        assert_eq!(b.bound("just fits ok"), "just fits ok");
        assert_eq!(b.inline("a\tb\nc"), "\"a b c\"");
        // 12 characters in more than 12 bytes are not cut.
        assert_eq!(b.bound("éééééééééééé"), "éééééééééééé");
        assert_eq!(b.bound("x\u{1b}y"), "xy");
    }

    #[test]
    fn blocks_mark_every_line() {
        let b = TextBounds::default();
        assert_eq!(b.block("a\nb"), "│ a\n│ b");
    }

    #[test]
    fn argument_summaries_show_names_types_and_enums() {
        let b = TextBounds {
            enum_entries: 2,
            ..Default::default()
        };
        let s = json!({"type": "object",
            "properties": {"move": {"enum": ["D4", "Q16", "pass"], "description": "where"},
                           "size": {"type": "integer", "minimum": 9, "maximum": 19},
                           "odd key": {"type": "array", "items": {"type": "string"}}},
            "required": ["move"]});
        assert_eq!(
            b.args_summary(&s),
            "{move: \"D4\" | \"Q16\" | … (1 more) — \"where\", \"odd key\"?: array of string, size?: integer 9..19}"
        );
        assert_eq!(b.args_summary(&json!({"type": "object"})), "none");
    }
}
