//! The principal's state as the core holds it, with whether it may have changed since it
//! was last stamped (issue #42 item 3): a restamp is a pass over the whole view (every
//! instance, tool and definition, fingerprinted), and the actor asks for one after every
//! turn — a light call, which changes nothing, paid ~42,000 instructions a modern request
//! for it. Every mutation reaches the state through [`DerefMut`], which marks it; reads
//! through [`Deref`] do not. So a restamp of a state not reached mutably since the last
//! one, which could find nothing to stamp, is not made.

use super::super::principal::{PrincipalState, Versioned};
use mcpl_protocol::hints::ToolsetChange;
use mcpl_protocol::stateless::VersionedHints;
use std::ops::{Deref, DerefMut};
use std::time::SystemTime;

/// [`PrincipalState`] and whether it may differ from its stamps (module docs).
pub(super) struct Tracked {
    state: PrincipalState,
    /// Reached mutably since its last restamp: it may have changed.
    changed: bool,
}

impl Tracked {
    /// `state`, never stamped here: its first restamp is made.
    pub(super) fn new(state: PrincipalState) -> Self {
        Tracked {
            state,
            changed: true,
        }
    }

    /// [`PrincipalState::restamp`]: after it the stamps agree with the state.
    pub(super) fn restamp(&mut self, closes: &[ToolsetChange]) -> Option<VersionedHints> {
        self.changed = false;
        self.state.restamp(closes)
    }

    /// Restamps the state when it may have changed since its last restamp; otherwise
    /// there is nothing a restamp could find (`restamp` changes nothing a second time).
    pub(super) fn restamp_if_changed(&mut self) {
        if self.changed {
            self.restamp(&[]);
        }
    }

    /// [`PrincipalState::versioned_now`], which restamps first.
    pub(super) fn versioned_now(&mut self) -> Versioned {
        self.changed = false;
        self.state.versioned_now()
    }

    /// [`PrincipalState::expire`]: the ended records that expired dropped. No stamp reads
    /// them but a close's tombstone, and a close marks the state itself.
    pub(super) fn expire(&mut self, now: SystemTime) {
        self.state.expire(now);
    }
}

impl Deref for Tracked {
    type Target = PrincipalState;

    fn deref(&self) -> &PrincipalState {
        &self.state
    }
}

impl DerefMut for Tracked {
    fn deref_mut(&mut self) -> &mut PrincipalState {
        self.changed = true;
        &mut self.state
    }
}
