//! A server's `elicitation/create`, answered with nobody to ask.
//!
//! **\[project\]** The host does not declare the `elicitation` capability: it has no person
//! to put a form to in the middle of a call, and an agent answering for one would be
//! making up consent. Servers built on some SDKs ask anyway (the official Python SDK's
//! `ctx.elicit` sends without looking at the capability), and a -32601 there fails a tool
//! call over a question with a safe answer. So the host answers what it can without
//! inventing anything (issue #39 item 9):
//!
//! - a form whose every required field has a `default` the server itself offered is
//!   accepted with those defaults (every field that has one);
//! - anything else (a required field with no default, URL mode, a schema it cannot read)
//!   is declined.

use mcpl_protocol::client_features::{ElicitAction, ElicitParams, ElicitResult};
use serde_json::{Map, Value};

/// The answer given to `params`, and why, in words for a log line.
pub fn unattended(params: &ElicitParams) -> (ElicitResult, &'static str) {
    let decline = |why| {
        (
            ElicitResult {
                action: ElicitAction::Decline,
                content: None,
                meta: None,
            },
            why,
        )
    };
    if params.mode.as_deref().is_some_and(|m| m != "form") {
        return decline("not a form: there is nobody to send to a URL");
    }
    let Some(schema) = params.requested_schema.as_ref().and_then(Value::as_object) else {
        return decline("a form with no schema to read");
    };
    let properties = match schema.get("properties") {
        Some(Value::Object(p)) => p.clone(),
        None => Map::new(),
        Some(_) => return decline("a form whose properties are not an object"),
    };
    let defaults: Map<String, Value> = properties
        .iter()
        .filter_map(|(name, p)| Some((name.clone(), p.get("default")?.clone())))
        .collect();
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let all_given = required
        .iter()
        .all(|r| r.as_str().is_some_and(|name| defaults.contains_key(name)));
    if !all_given {
        return decline("a required field has no default and there is nobody to ask");
    }
    (
        ElicitResult {
            action: ElicitAction::Accept,
            content: Some(defaults),
            meta: None,
        },
        "accepted with the defaults the server offered",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(schema: Value) -> ElicitParams {
        ElicitParams::form("?", schema)
    }

    #[test]
    fn a_form_whose_required_fields_all_have_defaults_is_accepted_with_them() {
        let (r, _) = unattended(&form(json!({
            "type": "object",
            "properties": {
                "confirm": {"type": "boolean", "default": false},
                "size": {"type": "integer", "default": 9},
                "note": {"type": "string"}
            },
            "required": ["confirm"]
        })));
        assert_eq!(r.action, ElicitAction::Accept);
        assert_eq!(
            Value::Object(r.content.unwrap()),
            json!({"confirm": false, "size": 9})
        );
    }

    #[test]
    fn a_required_field_without_a_default_url_mode_and_a_bad_schema_are_declined() {
        let no_default = form(json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"]
        }));
        let mut url = form(json!({}));
        url.requested_schema = None;
        url.mode = Some("url".into());
        let bad = form(json!({"properties": []}));
        for params in [no_default, url, bad] {
            let (r, why) = unattended(&params);
            assert_eq!(
                (r.action, r.content),
                (ElicitAction::Decline, None),
                "{why}"
            );
        }
    }
}
