//! The surface host as an MCPL server (SPEC §5, §9; RFC §8.6: "push events to an MCPL
//! client"): to a client that speaks MCPL it offers a manifest with one feature set,
//! [`FEATURE_SET`], that uses `pushEvents`; once the client's `featureSets/update` grants
//! it, what the host shows outside results goes to that client as `push/event` instead of
//! in its next result and `notifications/message`. The surface host declares no
//! `toolHints`: its own tools never change, so there is nothing to hint.
//!
//! Pure: the manifest, whether the policy in force lets it push, and each push's params. A
//! client's `featureSets/update` is received by the server SDK's own `Lifecycle`
//! (`mcpl_server_core::lifecycle::Lifecycle::receive_grant`: the rule of
//! `mcpl_protocol::grant::Policy::receive` and the receipt of `grant::receipt`), in
//! [`crate::session`].

use mcpl_host::host::{Shown, ShownKind};
use mcpl_protocol::grant::{self, Policy};
use mcpl_protocol::mcp::ContentBlock;
use mcpl_protocol::mcpl::{
    CAP_PUSH_EVENTS, FeatureSetDecl, MCPL_VERSION, McplManifest, PushEventParams, PushPayload,
};
use mcpl_protocol::time::rfc3339_millis;
use std::time::SystemTime;

/// The surface host's one feature set: what happens behind it, pushed.
pub const FEATURE_SET: &str = "events";

/// The surface host's manifest.
pub fn manifest() -> McplManifest {
    let mut m = McplManifest {
        version: MCPL_VERSION.to_owned(),
        push_events: Some(true),
        ..Default::default()
    };
    m.feature_sets.insert(
        FEATURE_SET.to_owned(),
        FeatureSetDecl::new(
            "What happens at the servers behind the surface host (another player's move, a challenge, a game ended, a server lost), and reminders of what is open",
            &[CAP_PUSH_EVENTS],
        ),
    );
    // A manifest built here always has a digest; should it not, it goes without one.
    m.revision = mcpl_protocol::digest::manifest_revision(&m).ok();
    m
}

/// Whether `policy` (the one in force, if any) lets the surface host push: its
/// [`FEATURE_SET`] available (not disabled, selected, its `uses` granted) and
/// `pushEvents` granted.
pub fn pushes(manifest: &McplManifest, policy: Option<&Policy>) -> bool {
    policy.is_some_and(|p| {
        grant::availability(manifest, p, FEATURE_SET).is_ok() && p.grant.allows(CAP_PUSH_EVENTS)
    })
}

/// A session's push event ids: `surface-EPOCH-N`, N counting from 0 in every session and
/// the epoch drawn at random when the session starts, so ids are unique across sessions
/// and restarts (SPEC §9.2; a client remembering `surface-0` from an earlier session would
/// otherwise take every push of the next one for a retry, issue #36 item 2).
#[derive(Debug, Clone)]
pub struct EventIds {
    epoch: u64,
    next: u64,
}

impl EventIds {
    /// Ids for a new session.
    pub fn new() -> Self {
        EventIds::with_epoch(rand::random())
    }

    /// Ids under a chosen epoch (tests).
    pub fn with_epoch(epoch: u64) -> Self {
        EventIds { epoch, next: 0 }
    }

    /// The next id.
    pub fn next_id(&mut self) -> String {
        let n = self.next;
        self.next += 1;
        format!("surface-{:016x}-{n}", self.epoch)
    }
}

impl Default for EventIds {
    fn default() -> Self {
        EventIds::new()
    }
}

/// The `push/event` params for a message shown outside results, or `None` for one that is
/// not; its id is the session's next ([`EventIds`]).
pub fn push(shown: &Shown, ids: &mut EventIds) -> Option<PushEventParams> {
    if !matches!(
        shown.kind,
        ShownKind::Push | ShownKind::Notice | ShownKind::Reminder
    ) {
        return None;
    }
    Some(PushEventParams {
        feature_set: FEATURE_SET.to_owned(),
        event_id: ids.next_id(),
        timestamp: rfc3339_millis(SystemTime::now()),
        origin: shown
            .server
            .as_ref()
            .map(|s| serde_json::json!({"server": s})),
        tags: Vec::new(),
        payload: PushPayload {
            content: vec![ContentBlock::text(shown.text.clone())],
        },
        coalesce: None,
        hints: None,
        toolset: None,
        instance: None,
        meta: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_manifest_declares_one_push_set_with_its_digest() {
        let m = manifest();
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(v["featureSets"]["events"]["uses"], json!(["pushEvents"]));
        assert_eq!(v["pushEvents"], true);
        assert!(v.get("toolHints").is_none());
        let revision = m.revision.clone().unwrap();
        let mut unrevised = v.clone();
        unrevised.as_object_mut().unwrap().remove("revision");
        assert_eq!(
            mcpl_protocol::digest::revision_of_value(&unrevised).unwrap(),
            revision
        );
    }

    #[test]
    fn pushes_are_enabled_only_by_a_grant_of_push_events() {
        use mcpl_protocol::mcpl::FeatureSetsUpdateParams;
        use mcpl_server_core::lifecycle::Lifecycle;
        let m = manifest();
        let read = |v| serde_json::from_value::<FeatureSetsUpdateParams>(v).unwrap();
        // A client that speaks MCPL, received as a session receives it.
        let mut session = Lifecycle::default();
        let init = serde_json::from_value(json!({"protocolVersion": "2025-11-25",
            "capabilities": {"experimental": {"mcpl": {"version": "0.5", "pushEvents": true}}},
            "clientInfo": {"name": "c", "version": "0"}}))
        .unwrap();
        session.on_initialize(&init).unwrap();
        let mut update = |v| {
            let answer = session.receive_grant(read(v), &m).map_err(|e| e.to_error());
            (answer, pushes(&m, session.policy()))
        };
        let (receipt, pushing) = update(json!({"effectiveCapabilities": ["pushEvents"]}));
        assert!(pushing);
        assert!(receipt.unwrap().unavailable_features.is_empty());
        let (_, pushing) = update(json!({"effectiveCapabilities": []}));
        assert!(!pushing);
        let (_, pushing) =
            update(json!({"effectiveCapabilities": ["pushEvents"], "disabled": ["events"]}));
        assert!(!pushing);
        let (_, pushing) = update(json!({"effectiveCapabilities": ["pushEvents"]}));
        assert!(pushing);
        let (refused, pushing) = update(
            json!({"effectiveCapabilities": ["pushEvents"], "deniedCapabilities": ["pushEvents"]}),
        );
        assert_eq!(refused.unwrap_err().code.0, -32602);
        assert!(!pushing, "a refused update revokes what it denied");
    }

    #[test]
    fn issue36_02_two_sessions_push_under_different_event_ids() {
        // Each session counts from 0; before, both sent `surface-0`, and a client that
        // remembered the first session's took the second's first push for a retry.
        let (mut first, mut second) = (EventIds::new(), EventIds::new());
        assert_ne!(first.next_id(), second.next_id());
    }

    #[test]
    fn a_push_carries_the_words_and_the_server() {
        let shown = Shown {
            seq: 3,
            kind: ShownKind::Push,
            server: Some("arcade".into()),
            text: "bob challenges you".into(),
            restates: false,
        };
        let mut ids = EventIds::with_epoch(0xab);
        let p = push(&shown, &mut ids).unwrap();
        assert_eq!(p.event_id, "surface-00000000000000ab-0");
        assert_eq!(ids.next_id(), "surface-00000000000000ab-1");
        assert_eq!(p.origin, Some(json!({"server": "arcade"})));
        assert_eq!(p.payload.content[0].as_text(), Some("bob challenges you"));
        assert!(
            p.timestamp.ends_with('Z') && p.timestamp.len() == 24,
            "{}",
            p.timestamp
        );
        let result = Shown {
            kind: ShownKind::ToolResult,
            ..shown
        };
        assert!(push(&result, &mut EventIds::with_epoch(0)).is_none());
    }
}
