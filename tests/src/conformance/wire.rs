//! Reading messages as JSON: where hint changes travel (§5.2's three carriers), their
//! entries, tool results. The runner checks exact JSON, so it reads `serde_json::Value`
//! rather than decoding into types that would drop or default members.

use mcpl_protocol::meta;
use serde_json::Value;
use std::collections::BTreeSet;

/// How a message carries hint changes (§5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Carrier {
    /// `result._meta["mcpl/hints"]` of a response.
    Result,
    /// `params.hints` of a `push/event` request.
    Push,
    /// A `tools/hints` notification.
    Standalone,
}

/// The method of a request or notification.
pub fn method_of(msg: &Value) -> Option<&str> {
    msg.get("method").and_then(Value::as_str)
}

/// True for a `push/event` request.
pub fn is_push(msg: &Value) -> bool {
    method_of(msg) == Some("push/event")
}

/// The hint changes a message carries, and how.
pub fn hints_of(msg: &Value) -> Option<(&Value, Carrier)> {
    if let Some(result) = msg.get("result") {
        return result_hints(result).map(|h| (h, Carrier::Result));
    }
    match method_of(msg) {
        Some("push/event") => msg
            .get("params")
            .and_then(|p| p.get("hints"))
            .map(|h| (h, Carrier::Push)),
        Some("tools/hints") => msg.get("params").map(|h| (h, Carrier::Standalone)),
        _ => None,
    }
}

/// `_meta["mcpl/hints"]` of a result object.
pub fn result_hints(result: &Value) -> Option<&Value> {
    result.get("_meta").and_then(|m| m.get(meta::HINTS))
}

/// The text blocks of a tool result (or of any `content` array), joined by newlines.
pub fn text_of(result: &Value) -> String {
    result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// True when a tool result is a tool error (`isError: true`).
pub fn is_tool_error(result: &Value) -> bool {
    result.get("isError").and_then(Value::as_bool) == Some(true)
}

/// The `tools` entries of hint changes.
pub fn tool_entries(changes: &Value) -> &[Value] {
    changes
        .get("tools")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The `toolsets` entries of hint changes.
pub fn toolset_entries(changes: &Value) -> &[Value] {
    changes
        .get("toolsets")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn instance_is(entry: &Value, instance: Option<&str>) -> bool {
    entry.get("instance").and_then(Value::as_str) == instance
}

/// The tool entries for `name` in `instance` (`None`: entries without an instance).
pub fn entries_for<'a>(
    changes: &'a Value,
    name: &'a str,
    instance: Option<&'a str>,
) -> impl Iterator<Item = &'a Value> + 'a {
    tool_entries(changes)
        .iter()
        .filter(move |e| e.get("name").and_then(Value::as_str) == Some(name))
        .filter(move |e| instance_is(e, instance))
}

/// The visibility the changes give `name` in `instance`, if they state one (the last entry
/// wins, as a host applies them in order).
pub fn visibility(changes: &Value, name: &str, instance: Option<&str>) -> Option<bool> {
    entries_for(changes, name, instance)
        .filter_map(|e| e.get("visible").and_then(Value::as_bool))
        .last()
}

/// The toolset entry for `toolset` / `instance`, if any.
pub fn toolset_entry<'a>(
    changes: &'a Value,
    toolset: &str,
    instance: Option<&str>,
) -> Option<&'a Value> {
    toolset_entries(changes).iter().rev().find(|e| {
        e.get("toolset").and_then(Value::as_str) == Some(toolset) && instance_is(e, instance)
    })
}

/// Every `(tool, instance)` a statement states visible.
pub fn stated_visible(changes: &Value) -> BTreeSet<(String, Option<String>)> {
    let mut all = BTreeSet::new();
    for e in tool_entries(changes) {
        let Some(name) = e.get("name").and_then(Value::as_str) else {
            continue;
        };
        let instance = e.get("instance").and_then(Value::as_str).map(str::to_owned);
        match e.get("visible").and_then(Value::as_bool) {
            Some(true) => {
                all.insert((name.to_owned(), instance));
            }
            Some(false) => {
                all.remove(&(name.to_owned(), instance));
            }
            None => {}
        }
    }
    all
}

/// The `open` records of a `toolsets/list` result naming `toolset` (and `instance`).
pub fn open_records<'a>(
    statement: &'a Value,
    toolset: &'a str,
    instance: Option<&'a str>,
) -> impl Iterator<Item = &'a Value> + 'a {
    statement
        .get("open")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(move |r| r.get("toolset").and_then(Value::as_str) == Some(toolset))
        .filter(move |r| instance_is(r, instance))
}

/// The `ended` record with this id in a `toolsets/list` result.
pub fn ended_record<'a>(statement: &'a Value, id: &str) -> Option<&'a Value> {
    statement
        .get("ended")
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.get("id").and_then(Value::as_str) == Some(id))
}

/// True for an RFC 3339 date-time (`2026-11-30T12:00:00Z`, fractions and offsets allowed).
pub fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    let date = digits(0..4) && at(4, b'-') && digits(5..7) && at(7, b'-') && digits(8..10);
    let time = matches!(b.get(10), Some(b'T' | b't'))
        && digits(11..13)
        && at(13, b':')
        && digits(14..16)
        && at(16, b':')
        && digits(17..19);
    if !(date && time) {
        return false;
    }
    let mut i = 19;
    if at(i, b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match b.get(i) {
        Some(b'Z' | b'z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            digits(i + 1..i + 3) && at(i + 3, b':') && digits(i + 4..i + 6) && i + 6 == b.len()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn carriers_are_told_apart() {
        let result =
            json!({"jsonrpc": "2.0", "id": 1, "result": {"_meta": {"mcpl/hints": {"rev": 2}}}});
        let push = json!({"jsonrpc": "2.0", "id": 1, "method": "push/event", "params": {"hints": {"rev": 3}}});
        let alone = json!({"jsonrpc": "2.0", "method": "tools/hints", "params": {"rev": 4}});
        let none = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
        assert_eq!(hints_of(&result).unwrap().1, Carrier::Result);
        assert_eq!(hints_of(&push).unwrap().1, Carrier::Push);
        assert_eq!(
            hints_of(&alone).unwrap(),
            (&json!({"rev": 4}), Carrier::Standalone)
        );
        assert!(hints_of(&none).is_none());
    }

    #[test]
    fn a_statement_s_visible_set_follows_its_entries_in_order() {
        let changes = json!({"rev": 1, "tools": [
            {"name": "a", "visible": true}, {"name": "b", "instance": "g1", "visible": true},
            {"name": "a", "visible": false}, {"name": "c", "definition": {}}]});
        let set = stated_visible(&changes);
        assert_eq!(set.len(), 1);
        assert!(set.contains(&("b".to_owned(), Some("g1".to_owned()))));
        assert_eq!(visibility(&changes, "a", None), Some(false));
        assert_eq!(visibility(&changes, "b", None), None);
    }

    #[test]
    fn rfc3339_times() {
        for ok in [
            "2026-11-30T12:00:00Z",
            "2026-11-30T12:00:00.123Z",
            "2026-11-30t12:00:00+01:00",
        ] {
            assert!(is_rfc3339(ok), "{ok}");
        }
        for bad in [
            "2026-11-30",
            "2026-11-30T12:00:00",
            "2026-11-30T12:00:00.Z",
            "yesterday",
            "2026-11-30T12:00:00+0100",
        ] {
            assert!(!is_rfc3339(bad), "{bad}");
        }
    }
}
