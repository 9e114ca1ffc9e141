//! A server's `push/event` admitted or refused by the grant, before anything else is read
//! of it (SPEC §5.4, §9, §16.6), and what makes two pushes the same event (§9.4). The
//! actor (`push.rs`) keeps the ids seen across connections, asks the push policy, answers
//! and tells.

use super::session::Session;
use mcpl_protocol::grant::Refusal;
use mcpl_protocol::mcpl::{CAP_PUSH_EVENTS, PushEventParams};
use mcpl_protocol::{ErrorObject, Request};

/// Admits a push on a connection whose session is `session` (none before `initialize`
/// was accepted), `ready` once its handshake is done:
///
/// 1. a server that does not speak MCPL (or was left as plain MCP): -32601;
/// 2. before the initial policy's receipt (§5.3), or `pushEvents` not granted: -32002
///    with `data.capability`;
/// 3. params that do not decode: -32602;
/// 4. a feature set not declared: -32003; declared but disabled: -32001; one whose `uses`
///    lacks `pushEvents`: -32002, a declaration mismatch (§6.4 rule 2).
pub fn admit_push(
    session: Option<&Session>,
    ready: bool,
    request: &Request,
) -> Result<PushEventParams, ErrorObject> {
    let Some((session, manifest)) = session
        .filter(|s| s.speaks_mcpl())
        .and_then(|s| Some((s, s.manifest()?)))
    else {
        return Err(ErrorObject::method_not_found(&request.method));
    };
    let grant = session.grant();
    if !ready || !grant.allows(CAP_PUSH_EVENTS) {
        return Err(Refusal::CapabilityDenied {
            capability: CAP_PUSH_EVENTS.to_owned(),
        }
        .to_error());
    }
    let params = request.params_as::<PushEventParams>()?;
    session
        .derivation
        .check_use(manifest, &grant, &params.feature_set, CAP_PUSH_EVENTS)
        .map_err(|r| r.to_error())?;
    Ok(params)
}

/// A digest of what a push says, to tell a retry from another event under the same id:
/// everything but its id and what rides along with it (`hints`, `coalesce`, `_meta`). A
/// retry is the same event, so its `timestamp` ("when the event occurred") is the same too.
pub fn content_digest(p: &PushEventParams) -> u64 {
    use std::hash::{Hash, Hasher};
    // SipHash with fixed keys: the same content gives the same digest in this process, and
    // a server that made two of its own events collide could only hide its own event.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let said = (
        &p.feature_set,
        &p.timestamp,
        &p.origin,
        &p.tags,
        &p.payload,
        &p.toolset,
        &p.instance,
    );
    serde_json::to_string(&said)
        .unwrap_or_default()
        .hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::jsonrpc::to_raw;
    use mcpl_protocol::mcp::InitializeResult;
    use mcpl_protocol::{ErrorCode, Id};
    use serde_json::json;

    fn push(params: serde_json::Value) -> Request {
        Request {
            id: Id::Number(1),
            method: "push/event".to_owned(),
            params: Some(to_raw(&params)),
        }
    }

    fn event(feature_set: &str) -> serde_json::Value {
        json!({"eventId": "e1", "featureSet": feature_set, "timestamp": "2026-01-01T00:00:00Z",
            "origin": {"kind": "test"}, "payload": {"content": [{"type": "text", "text": "1"}]}})
    }

    fn session(granted: &[&str]) -> Session {
        let init: InitializeResult = serde_json::from_value(json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}, "experimental": {"mcpl": {"version": "0.5", "pushEvents": true,
                "featureSets": {"alerts": {"uses": ["pushEvents"]}, "quiet": {"uses": ["tools"]}}}}},
            "serverInfo": {"name": "s", "version": "1"}
        }))
        .unwrap();
        let mut s = Session::new(init);
        s.set_granted(granted.iter().map(|g| (*g).to_owned()).collect());
        s
    }

    fn code(r: Result<PushEventParams, ErrorObject>) -> ErrorCode {
        r.map(|_| ()).unwrap_err().code
    }

    #[test]
    fn issue38_02_a_push_is_admitted_by_the_grant_in_order() {
        let ok = push(event("alerts"));
        let granted = session(&["pushEvents", "tools"]);
        assert_eq!(
            admit_push(Some(&granted), true, &ok).unwrap().event_id,
            "e1"
        );
        assert_eq!(
            code(admit_push(None, false, &ok)),
            ErrorCode::METHOD_NOT_FOUND,
            "no session: no MCPL"
        );
        let mut plain = session(&["pushEvents"]);
        plain.fall_back_to_mcp();
        assert_eq!(
            code(admit_push(Some(&plain), true, &ok)),
            ErrorCode::METHOD_NOT_FOUND
        );
        assert_eq!(
            code(admit_push(Some(&granted), false, &ok)),
            ErrorCode::CAPABILITY_DENIED,
            "before the initial receipt"
        );
        assert_eq!(
            code(admit_push(Some(&session(&["tools"])), true, &ok)),
            ErrorCode::CAPABILITY_DENIED
        );
        assert_eq!(
            code(admit_push(
                Some(&granted),
                true,
                &push(json!({"eventId": 3}))
            )),
            ErrorCode::INVALID_PARAMS
        );
        assert_ne!(
            admit_push(Some(&granted), true, &push(event("nowhere"))).map(|_| ()),
            Ok(()),
            "an undeclared feature set"
        );
        assert_eq!(
            code(admit_push(Some(&granted), true, &push(event("quiet")))),
            ErrorCode::CAPABILITY_DENIED,
            "its uses lack pushEvents"
        );
    }

    #[test]
    fn issue38_02_a_retry_has_the_same_digest_and_another_event_another() {
        let a: PushEventParams = serde_json::from_value(event("alerts")).unwrap();
        let mut retry = a.clone();
        retry.coalesce = Some(json!(true));
        assert_eq!(
            content_digest(&a),
            content_digest(&retry),
            "what rides along is not the event"
        );
        let other: PushEventParams = serde_json::from_value(json!({"eventId": "e1",
            "featureSet": "alerts", "timestamp": "2026-01-01T00:00:00Z",
            "origin": {"kind": "test"}, "payload": {"content": [{"type": "text", "text": "2"}]}}))
        .unwrap();
        assert_ne!(content_digest(&a), content_digest(&other));
    }
}
