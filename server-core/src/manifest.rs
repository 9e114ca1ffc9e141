//! The MCPL manifest as the server keeps it and as each host is shown it (SPEC §17).
//!
//! - [`check`]: what a server refuses to start (or to switch to) with.
//! - [`shown_to`]: the manifest a given host sees, with its `revision` stamped. A host
//!   without `toolHints` sees it without RFC-014's members (§2, §4.1 **\[project\]**).
//! - [`ManifestViews`]: the server's manifest with both views made once, shared by every
//!   session: a view's revision is a digest of its canonical JSON, which made per
//!   connection was nearly half of all the allocations of a mass reconnection (issue #42).
//! - [`changed_domains`]: which SPEC §17.1 domains differ between two manifests, for
//!   `mcpl/manifestChanged`.

use mcpl_protocol::digest::{DigestError, manifest_revision};
use mcpl_protocol::mcpl::{DOMAIN_TOOLSETS, MCPL_VERSION, McplManifest};
use mcpl_protocol::toolsets::DeclError;
use std::sync::Arc;

/// The manifest domain of everything that is not a feature set or RFC-014's members
/// (SPEC §17.1).
pub const DOMAIN_CAPABILITIES: &str = "capabilities";
/// The manifest domain of the feature set declarations (SPEC §17.1).
pub const DOMAIN_FEATURE_SETS: &str = "featureSets";

/// Why a manifest was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The manifest names an MCPL version this server does not speak.
    #[error("MCPL version {0:?} is not supported (this server speaks {MCPL_VERSION})")]
    UnsupportedVersion(String),
    /// A feature set's `uses` is empty or names a path outside the vocabulary (SPEC §6.2:
    /// a host would disable it with `invalid_uses`).
    #[error("feature set {0:?}: uses must name one or more capability paths of SPEC §6.2")]
    InvalidUses(String),
    /// A feature set has no description (SPEC §6.2, B.2 require one).
    #[error("feature set {0:?} has no description")]
    NoDescription(String),
    /// A toolset declaration is invalid (§4.1).
    #[error(transparent)]
    Toolset(#[from] DeclError),
    /// The tools do not fit the new declarations (an options schema that does not compile,
    /// an instanced toolset whose tool declares an `instance` argument, §4.1, §8).
    #[error(transparent)]
    Catalog(#[from] crate::CatalogError),
    /// The revision digest cannot be computed: an identifier position (a member name, a
    /// feature-set name, a `uses` entry, …) is outside SPEC §17.2's charset.
    #[error(transparent)]
    Digest(#[from] DigestError),
}

/// Checks a manifest before a server uses it.
pub fn check(manifest: &McplManifest) -> Result<(), ManifestError> {
    if manifest.version != MCPL_VERSION {
        return Err(ManifestError::UnsupportedVersion(manifest.version.clone()));
    }
    for (name, decl) in &manifest.feature_sets {
        if !decl.has_valid_uses() {
            return Err(ManifestError::InvalidUses(name.clone()));
        }
        if decl.description.is_none() {
            return Err(ManifestError::NoDescription(name.clone()));
        }
    }
    for (name, decl) in &manifest.toolsets {
        decl.check(name)?;
    }
    manifest_revision(manifest)?;
    Ok(())
}

/// The manifest a host is shown, with its revision (SPEC §17.2) computed over exactly what
/// is shown: the whole manifest to a host that advertised `toolHints`, the tailored one
/// otherwise (§4.1 **\[project\]**).
pub fn shown_to(manifest: &McplManifest, host_tool_hints: bool) -> McplManifest {
    if !host_tool_hints {
        return manifest.tailored_for_plain_host();
    }
    let mut m = manifest.clone();
    m.revision = None;
    // `check` ran on every manifest a server holds, so the digest succeeds.
    m.revision = manifest_revision(&m).ok();
    m
}

/// The server's manifest and the two views of it a host may be shown ([`shown_to`]), each
/// made with its revision once, when the manifest is set, and shared by every session.
#[derive(Debug, Clone)]
pub struct ManifestViews {
    server: Arc<McplManifest>,
    hinted: Arc<McplManifest>,
    plain: Arc<McplManifest>,
}

impl ManifestViews {
    /// The views of `server` (a manifest [`check`] passed).
    pub fn new(server: Arc<McplManifest>) -> Self {
        ManifestViews {
            hinted: Arc::new(shown_to(&server, true)),
            plain: Arc::new(shown_to(&server, false)),
            server,
        }
    }

    /// The manifest as the server holds it.
    pub fn server(&self) -> &Arc<McplManifest> {
        &self.server
    }

    /// The manifest as a host is shown it: [`shown_to`]`(server, host_tool_hints)`.
    pub fn shown_to(&self, host_tool_hints: bool) -> &Arc<McplManifest> {
        if host_tool_hints {
            &self.hinted
        } else {
            &self.plain
        }
    }
}

/// The domains in which `new` differs from `old`, in a fixed order: `capabilities`,
/// `featureSets`, `toolsets` (RFC-014's `toolHints`, `toolsets` and `surface`, §4.1).
/// `revision` is ignored: it follows from the rest.
pub fn changed_domains(old: &McplManifest, new: &McplManifest) -> Vec<String> {
    let rfc014 = |m: &McplManifest| (m.tool_hints, m.toolsets.clone(), m.surface.clone());
    let rest = |m: &McplManifest| (m.version.clone(), m.push_events, m.other.clone());
    let mut domains = Vec::new();
    if rest(old) != rest(new) {
        domains.push(DOMAIN_CAPABILITIES.to_owned());
    }
    if old.feature_sets != new.feature_sets {
        domains.push(DOMAIN_FEATURE_SETS.to_owned());
    }
    if rfc014(old) != rfc014(new) {
        domains.push(DOMAIN_TOOLSETS.to_owned());
    }
    domains
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn manifest(v: serde_json::Value) -> McplManifest {
        serde_json::from_value(v).unwrap()
    }

    fn base() -> McplManifest {
        manifest(
            json!({"version": "0.5", "pushEvents": true, "toolHints": true,
            "featureSets": {"default": {"description": "d", "uses": ["tools", "pushEvents"]}},
            "toolsets": {"lobby": {"title": "Lobby", "default": "open"}},
            "surface": {"title": "Arcade", "summary": "Games"}}),
        )
    }

    #[test]
    fn views_are_what_shown_to_makes() {
        let views = ManifestViews::new(Arc::new(base()));
        assert_eq!(**views.shown_to(true), shown_to(&base(), true));
        assert_eq!(**views.shown_to(false), shown_to(&base(), false));
        assert_eq!(**views.server(), base());
        assert_ne!(
            views.shown_to(true).revision,
            views.shown_to(false).revision
        );
    }

    #[test]
    fn domains_follow_the_member_that_changed() {
        let old = base();
        let mut m = old.clone();
        m.toolsets.clear();
        assert_eq!(changed_domains(&old, &m), [DOMAIN_TOOLSETS]);
        let mut m = old.clone();
        m.surface = None;
        m.tool_hints = None;
        assert_eq!(changed_domains(&old, &m), [DOMAIN_TOOLSETS]);
        let mut m = old.clone();
        m.feature_sets.get_mut("default").unwrap().uses.pop();
        assert_eq!(changed_domains(&old, &m), [DOMAIN_FEATURE_SETS]);
        let mut m = old.clone();
        m.other
            .insert("contextHooks".into(), json!({"beforeInference": true}));
        m.push_events = None;
        m.toolsets.clear();
        assert_eq!(
            changed_domains(&old, &m),
            [DOMAIN_CAPABILITIES, DOMAIN_TOOLSETS]
        );
        let mut m = old.clone();
        m.revision = Some("sha256:other".into());
        assert!(changed_domains(&old, &m).is_empty());
    }

    #[test]
    fn a_plain_host_is_shown_no_rfc014_members_and_a_matching_revision() {
        let full = shown_to(&base(), true);
        assert_eq!(full.revision, manifest_revision(&base()).ok());
        let plain = shown_to(&base(), false);
        assert!(plain.tool_hints.is_none() && plain.toolsets.is_empty() && plain.surface.is_none());
        assert_eq!(plain.revision, manifest_revision(&plain).ok());
        assert_ne!(plain.revision, full.revision);
    }

    #[test]
    fn bad_manifests_are_refused() {
        let mut m = base();
        m.version = "0.4".into();
        assert!(matches!(check(&m), Err(ManifestError::UnsupportedVersion(v)) if v == "0.4"));
        let mut m = base();
        m.feature_sets
            .get_mut("default")
            .unwrap()
            .uses
            .push("push events".into());
        assert!(matches!(check(&m), Err(ManifestError::InvalidUses(n)) if n == "default"));
        let mut m = base();
        m.feature_sets.get_mut("default").unwrap().description = None;
        assert!(matches!(check(&m), Err(ManifestError::NoDescription(n)) if n == "default"));
        let mut m = base();
        m.other
            .insert("push events".into(), serde_json::json!(true));
        assert!(matches!(
            check(&m),
            Err(ManifestError::Digest(DigestError::IdentifierCharset { .. }))
        ));
        let m = manifest(json!({"version": "0.5",
            "toolsets": {"game": {"default": "open", "instances": true}}}));
        assert!(matches!(
            check(&m),
            Err(ManifestError::Toolset(DeclError::OpenWithInstances(_)))
        ));
        assert!(check(&base()).is_ok());
    }
}
