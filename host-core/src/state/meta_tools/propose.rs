//! Instance names the host proposes (§4.1, §4.2, vector 18).

use super::plan::MetaConfig;
use crate::state::view::ServerView;
use mcpl_protocol::names::{MAX_NAME_LEN, is_valid_name};

/// A fresh instance name for `toolset` that is not open on `view`: `<toolset>-<n>` (with
/// the configured tag before `n`), fitting the name grammar (§4.1); `next` is the counter
/// it takes `n` from.
pub(super) fn instance(
    config: &MetaConfig,
    next: &mut u64,
    view: &ServerView<'_>,
    toolset: &str,
) -> String {
    // Only grammar characters, so every proposal below is a valid name and the loop
    // ends (only finitely many instances can be open).
    let tag: String = config
        .instance_tag
        .as_deref()
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .take(16)
        .collect();
    loop {
        let n = *next;
        *next = next.wrapping_add(1);
        // ASCII throughout: at most 1 + 16 + 20 bytes.
        let suffix = format!("-{tag}{n}");
        let room = MAX_NAME_LEN - suffix.len();
        let base: String = toolset.chars().take(room).collect();
        let mut name = format!("{base}{suffix}");
        if !is_valid_name(&name) {
            // A toolset name outside the grammar (a faulty server): a neutral base.
            name = format!("i{suffix}");
        }
        // Not a name open now, nor one whose end may still be told (§4.2, §4.3).
        let taken = view.hints.is_some_and(|h| h.name_in_use(toolset, &name));
        if !taken {
            return name;
        }
    }
}
