//! The catalog's manifest members, and what a manifest change changes (§4.1).
//!
//! - `toolHints`, `toolsets` and `surface` form the manifest domain `toolsets` (§4.1);
//!   [`Catalog::apply_to_manifest`] writes them (the manifest module stamps the revision and
//!   leaves them out for a host without `toolHints`).
//! - [`Catalog::diff`] compares two catalogs. A toolset that is no longer declared, or whose
//!   `instances` flag changed, counts as a **removal plus an addition** (§4.1
//!   **\[project\]**): its instances end, with ended records (vector 33) — the principal core
//!   does that in `PrincipalState::replace_catalog`. Withdrawing `toolHints` makes the
//!   server hint-less (vector 34).

use super::Catalog;
#[cfg(test)]
use mcpl_protocol::mcpl::McplManifest;

/// What changed between two catalogs' declarations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManifestDiff {
    /// Toolsets whose instances end: no longer declared, or `instances` changed (§4.1).
    pub removed_toolsets: Vec<String>,
    /// Toolsets newly declared, or declared again with another `instances` flag.
    pub added_toolsets: Vec<String>,
    /// Toolsets still declared with the same `instances` flag whose declaration changed
    /// (title, summary, default, options): their instances go on.
    pub changed_toolsets: Vec<String>,
    /// `toolHints` was advertised and no longer is (vector 34).
    pub tool_hints_withdrawn: bool,
    /// `toolHints` is advertised and was not.
    pub tool_hints_added: bool,
    /// The `surface` member changed.
    pub surface_changed: bool,
    /// Some tool was added, removed, or its declaration or hints changed: the actor sends
    /// `notifications/tools/list_changed`.
    pub tools_changed: bool,
}

impl ManifestDiff {
    /// True when the manifest domain `toolsets` changed (§4.1), so `mcpl/manifestChanged`
    /// names it.
    #[cfg(test)]
    pub fn toolsets_domain_changed(&self) -> bool {
        !self.removed_toolsets.is_empty()
            || !self.added_toolsets.is_empty()
            || !self.changed_toolsets.is_empty()
            || self.tool_hints_withdrawn
            || self.tool_hints_added
            || self.surface_changed
    }
}

impl Catalog {
    /// Writes RFC-014's manifest members: `toolHints`, `toolsets`, `surface` (§4.1). A
    /// catalog without `toolHints` writes none of them. The caller restamps the revision.
    #[cfg(test)]
    pub fn apply_to_manifest(&self, manifest: &mut McplManifest) {
        if self.tool_hints {
            manifest.tool_hints = Some(true);
            manifest.toolsets = self
                .toolsets()
                .map(|(n, d)| (n.to_owned(), d.clone()))
                .collect();
            manifest.surface = self.surface.clone();
        } else {
            manifest.tool_hints = None;
            manifest.toolsets.clear();
            manifest.surface = None;
        }
    }

    /// What changes from this catalog (the old one) to `new` (§4.1).
    pub fn diff(&self, new: &Catalog) -> ManifestDiff {
        let mut d = ManifestDiff::default();
        for (name, old) in self.toolsets() {
            match new.toolset(name) {
                // §4.1 [project]: a changed `instances` flag is a removal plus an addition.
                Some(now) if now.instances != old.instances => {
                    d.removed_toolsets.push(name.to_owned());
                    d.added_toolsets.push(name.to_owned());
                }
                Some(now) if now != old => d.changed_toolsets.push(name.to_owned()),
                Some(_) => {}
                None => d.removed_toolsets.push(name.to_owned()),
            }
        }
        d.added_toolsets.extend(
            new.toolsets()
                .filter(|(n, _)| self.toolset(n).is_none())
                .map(|(n, _)| n.to_owned()),
        );
        d.added_toolsets.sort();
        d.tool_hints_withdrawn = self.tool_hints && !new.tool_hints;
        d.tool_hints_added = !self.tool_hints && new.tool_hints;
        d.surface_changed = self.surface != new.surface;
        d.tools_changed = self.tools != new.tools;
        d
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{arcade, tool};
    use super::super::{Catalog, ToolDecl};
    use super::*;
    use mcpl_protocol::toolsets::{Surface, ToolsetDecl};
    use serde_json::json;
    use std::collections::BTreeMap;

    fn rebuilt(
        edit: impl FnOnce(&mut Vec<ToolDecl>, &mut BTreeMap<String, ToolsetDecl>),
    ) -> Catalog {
        let old = arcade();
        let mut tools: Vec<ToolDecl> = old.tools().cloned().collect();
        let mut toolsets: BTreeMap<String, ToolsetDecl> = old
            .toolsets()
            .map(|(n, d)| (n.to_owned(), d.clone()))
            .collect();
        edit(&mut tools, &mut toolsets);
        Catalog::new(tools, toolsets, old.surface().cloned()).unwrap()
    }

    #[test]
    fn the_same_catalog_changes_nothing() {
        let d = arcade().diff(&arcade());
        assert_eq!(d, ManifestDiff::default());
        assert!(!d.toolsets_domain_changed());
    }

    #[test]
    fn removing_a_toolset_ends_it_and_adding_one_is_an_addition() {
        let new = rebuilt(|_, ts| {
            ts.remove("solo");
            ts.insert("chess".into(), ToolsetDecl::default());
        });
        let d = arcade().diff(&new);
        assert_eq!(d.removed_toolsets, ["solo"]);
        assert_eq!(d.added_toolsets, ["chess"]);
        assert!(d.toolsets_domain_changed());
        assert!(
            !d.tools_changed,
            "the hint tool still names `solo`; only its group is now undeclared"
        );
    }

    #[test]
    fn a_changed_instances_flag_is_a_removal_plus_an_addition() {
        // §4.1 [project]
        let new = rebuilt(|_, ts| ts.get_mut("solo").unwrap().instances = true);
        let d = arcade().diff(&new);
        assert_eq!(d.removed_toolsets, ["solo"]);
        assert_eq!(d.added_toolsets, ["solo"]);
        assert!(d.changed_toolsets.is_empty());
    }

    #[test]
    fn other_declaration_changes_keep_instances() {
        let new = rebuilt(|_, ts| {
            ts.get_mut("go").unwrap().options = Some(json!({"type": "object"}));
            ts.get_mut("lobby").unwrap().title = Some("Hall".into());
        });
        let d = arcade().diff(&new);
        assert!(d.removed_toolsets.is_empty() && d.added_toolsets.is_empty());
        assert_eq!(d.changed_toolsets, ["go", "lobby"]);
    }

    #[test]
    fn withdrawing_tool_hints_and_tool_changes_are_seen() {
        let d = arcade().diff(&arcade().without_tool_hints());
        assert!(d.tool_hints_withdrawn && !d.tool_hints_added && d.toolsets_domain_changed());
        assert!(
            arcade()
                .without_tool_hints()
                .diff(&arcade())
                .tool_hints_added
        );
        let new = rebuilt(|tools, _| tools.push(ToolDecl::new(tool("extra"))));
        let d = arcade().diff(&new);
        assert!(d.tools_changed && !d.toolsets_domain_changed());
    }

    #[test]
    fn manifest_members_are_written_or_left_out() {
        let mut m = McplManifest::default();
        arcade().apply_to_manifest(&mut m);
        assert_eq!(m.tool_hints, Some(true));
        assert_eq!(
            m.toolsets.keys().collect::<Vec<_>>(),
            ["go", "lobby", "ranked", "solo"]
        );
        assert_eq!(
            m.surface,
            Some(Surface {
                title: Some("Arcade".into()),
                summary: Some("Games".into())
            })
        );
        arcade().without_tool_hints().apply_to_manifest(&mut m);
        assert_eq!((m.tool_hints, m.toolsets.len(), m.surface), (None, 0, None));
    }
}
