//! A `tools/list` as a holder keeps it: the one list the link read, shared by the
//! [`Catalog`](super::Catalog) and the [`HintState`](super::HintState) (never copied per
//! tool), and an entry for each listed name.

use super::keys::FastMap;
use mcpl_protocol::Tool;
use std::sync::Arc;

/// What a holder keeps of each listed name: at least where the name is in the list.
pub(crate) trait Place {
    /// The name's place in the list.
    fn at(&self) -> usize;
}

impl Place for usize {
    fn at(&self) -> usize {
        *self
    }
}

/// A `tools/list` read: every tool in listed order, and each name's entry `E` (which of a
/// name listed twice it points at is the holder's rule).
#[derive(Debug, Clone)]
pub(crate) struct Listing<E> {
    /// Every listed tool, in listed order, shared (never copied per tool).
    pub(crate) tools: Arc<[Tool]>,
    /// Each listed name's entry.
    pub(crate) by_name: FastMap<String, E>,
}

impl<E> Default for Listing<E> {
    fn default() -> Self {
        Listing {
            tools: Arc::from(Vec::new()),
            by_name: FastMap::default(),
        }
    }
}

impl<E: Place> Listing<E> {
    /// The listed tool a name's entry points at.
    pub(crate) fn tool(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name).map(|e| &self.tools[e.at()])
    }
}
