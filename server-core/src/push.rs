//! Push events (SPEC §9): what a server author hands the session, and why a push fails.
//!
//! The session fills in what the author may leave out — the feature set (the first
//! declared one whose `uses` includes `pushEvents`), the event id, the timestamp — checks
//! that it may push at all ([`PushError::GrantPending`], [`PushError::NotGranted`]), sends
//! `push/event` as a request and resolves on the host's answer or a timeout.
//!
//! A [`PushEvent`] carries no RFC-014 hints: hint changes are the principal's state, and
//! travel only with the events a toolset's logic raises
//! (`InstanceContext::event`), numbered by the session as
//! they are written (§5.2). An author's own push is never a hint carrier.

use mcpl_protocol::grant::{self, Policy};
use mcpl_protocol::jsonrpc::ErrorObject;
use mcpl_protocol::mcp::ContentBlock;
use mcpl_protocol::mcpl::{CAP_PUSH_EVENTS, McplManifest};
use serde_json::Value;
use std::time::Duration;

/// An event to push to a host. Build with [`PushEvent::new`] or [`PushEvent::text`] and the
/// `with_*` methods.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PushEvent {
    /// The declaring feature set; `None`: the first declared one whose `uses` includes
    /// `pushEvents`.
    pub feature_set: Option<String>,
    /// The event id; `None`: a fresh one. A re-send of the same event sets the first
    /// send's id (SPEC §9.4).
    pub event_id: Option<String>,
    /// When it happened (RFC 3339); `None`: now.
    pub timestamp: Option<String>,
    /// Provenance.
    pub origin: Option<Value>,
    /// Tags (SPEC §16; RFC-014 reserves `surface:`, §10).
    pub tags: Vec<String>,
    /// The content for the model.
    pub content: Vec<ContentBlock>,
    /// RFC-014: the toolset the event is about.
    pub toolset: Option<String>,
    /// RFC-014: the instance the event is about.
    pub instance: Option<String>,
}

impl PushEvent {
    /// An event with this content and everything else defaulted.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        PushEvent {
            feature_set: None,
            event_id: None,
            timestamp: None,
            origin: None,
            tags: Vec::new(),
            content,
            toolset: None,
            instance: None,
        }
    }

    /// An event with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }

    /// Sets the feature set.
    pub fn with_feature_set(mut self, name: impl Into<String>) -> Self {
        self.feature_set = Some(name.into());
        self
    }

    /// Sets the event id (for a re-send).
    pub fn with_event_id(mut self, id: impl Into<String>) -> Self {
        self.event_id = Some(id.into());
        self
    }

    /// Sets the timestamp (RFC 3339).
    pub fn with_timestamp(mut self, timestamp: impl Into<String>) -> Self {
        self.timestamp = Some(timestamp.into());
        self
    }

    /// Sets the origin.
    pub fn with_origin(mut self, origin: Value) -> Self {
        self.origin = Some(origin);
        self
    }

    /// Adds a tag.
    pub fn with_tag(mut self, tag: impl Into<String>) -> Self {
        self.tags.push(tag.into());
        self
    }

    /// Says which toolset (and instance) the event is about (RFC-014 §5.2).
    pub fn about(mut self, toolset: impl Into<String>, instance: Option<String>) -> Self {
        self.toolset = Some(toolset.into());
        self.instance = instance;
        self
    }
}

/// Why a push did not get an answer, sorted by who is at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PushError {
    /// The host answered with a JSON-RPC error.
    #[error("the host refused the push with an error: {0}")]
    Host(ErrorObject),
    /// The host answered with a result that is not a push result.
    #[error("the host's push result is malformed: {0}")]
    MalformedResult(String),
    /// The host did not grant `pushEvents` (or does not speak MCPL, or disabled the
    /// feature set): pushing is not allowed on this session.
    #[error("the host did not grant pushEvents")]
    NotGranted,
    /// The initial `featureSets/update` has not completed: nothing may be pushed yet
    /// (SPEC §5.3).
    #[error("the host's grant has not been received yet")]
    GrantPending,
    /// The event names a feature set that is not declared with `pushEvents` in its
    /// `uses` — or, with none named, no declared feature set uses `pushEvents`.
    #[error("no declared feature set {0:?} uses pushEvents")]
    NoFeatureSet(Option<String>),
    /// A tag is not `namespace:value` (SPEC §16.1: producers never emit a bare tag).
    #[error("{0:?} is not a tag: a tag is namespace:value (SPEC §16.1)")]
    InvalidTag(String),
    /// The session is closed (or closed before the answer came).
    #[error("the session is closed")]
    Closed,
    /// The host did not answer in time.
    #[error("the host did not answer within {0:?}")]
    TimedOut(Duration),
}

/// The feature set a push goes out under: the named one, or the first declared one whose
/// `uses` includes `pushEvents` and that the policy leaves enabled (SPEC §6.4, §6.5) — as
/// long as the grant grants `pushEvents` (§5.4). Never a feature set the receipt reported
/// disabled: the receipt and this choice are both [`grant::availability`].
pub fn feature_set_for(
    manifest: &McplManifest,
    policy: &Policy,
    requested: Option<&str>,
) -> Result<String, PushError> {
    if !policy.grant.allows(CAP_PUSH_EVENTS) {
        return Err(PushError::NotGranted);
    }
    let uses_push = |name: &str| {
        manifest
            .feature_sets
            .get(name)
            .is_some_and(|d| d.uses.iter().any(|u| u == CAP_PUSH_EVENTS))
    };
    let enabled = |name: &str| grant::availability(manifest, policy, name).is_ok();
    match requested {
        Some(name) if !uses_push(name) => Err(PushError::NoFeatureSet(Some(name.to_owned()))),
        Some(name) if !enabled(name) => Err(PushError::NotGranted),
        Some(name) => Ok(name.to_owned()),
        None => {
            let mut candidates = manifest
                .feature_sets
                .keys()
                .filter(|n| uses_push(n))
                .peekable();
            if candidates.peek().is_none() {
                return Err(PushError::NoFeatureSet(None));
            }
            candidates
                .find(|n| enabled(n))
                .cloned()
                .ok_or(PushError::NotGranted)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn manifest() -> McplManifest {
        serde_json::from_value(json!({"version": "0.5", "featureSets": {
            "a.tools": {"description": "a", "uses": ["tools"]},
            "b.events": {"description": "b", "uses": ["tools", "pushEvents"]},
            "c.more": {"description": "c", "uses": ["pushEvents"]}}}))
        .unwrap()
    }

    fn grant(v: serde_json::Value) -> Policy {
        Policy::read(&serde_json::from_value(v).unwrap()).unwrap()
    }

    #[test]
    fn the_feature_set_is_the_named_or_first_push_using_one() {
        let g = grant(json!({"effectiveCapabilities": ["tools", "pushEvents"]}));
        assert_eq!(feature_set_for(&manifest(), &g, None).unwrap(), "b.events");
        assert_eq!(
            feature_set_for(&manifest(), &g, Some("c.more")).unwrap(),
            "c.more"
        );
        assert_eq!(
            feature_set_for(&manifest(), &g, Some("a.tools")),
            Err(PushError::NoFeatureSet(Some("a.tools".into())))
        );
        let mut no_push = manifest();
        no_push.feature_sets.retain(|n, _| n == "a.tools");
        assert_eq!(
            feature_set_for(&no_push, &g, None),
            Err(PushError::NoFeatureSet(None))
        );
    }

    #[test]
    fn the_grant_decides() {
        let denied = grant(json!({"effectiveCapabilities": ["tools"]}));
        assert_eq!(
            feature_set_for(&manifest(), &denied, None),
            Err(PushError::NotGranted)
        );
        let disabled = grant(
            json!({"effectiveCapabilities": ["tools", "pushEvents"], "disabled": ["b.events"]}),
        );
        assert_eq!(
            feature_set_for(&manifest(), &disabled, None).unwrap(),
            "c.more"
        );
        assert_eq!(
            feature_set_for(&manifest(), &disabled, Some("b.events")),
            Err(PushError::NotGranted)
        );
        let only_c = grant(json!({"effectiveCapabilities": ["*"], "enabled": ["c.more"]}));
        assert_eq!(
            feature_set_for(&manifest(), &only_c, None).unwrap(),
            "c.more"
        );
        assert_eq!(
            feature_set_for(&manifest(), &only_c, Some("b.events")),
            Err(PushError::NotGranted)
        );
        let only_a = grant(json!({"effectiveCapabilities": ["*"], "enabled": ["a.tools"]}));
        // A feature set whose `uses` the grant does not cover is disabled, so not pushed
        // under: the receipt reported it so (`b.events` needs `tools`).
        let push_only = grant(json!({"effectiveCapabilities": ["pushEvents"]}));
        assert_eq!(
            feature_set_for(&manifest(), &push_only, None).unwrap(),
            "c.more"
        );
        assert_eq!(
            feature_set_for(&manifest(), &only_a, None),
            Err(PushError::NotGranted)
        );
    }
}
