//! What an instance's logic names and says, as values: a call's id ([`CallId`]) and an
//! event for participants ([`Event`]) with its tags.

use mcpl_protocol::mcp::ContentBlock;

/// The tag of a push about something that happened in an instance (§10 **\[project\]**).
pub const SURFACE_ACTIVITY: &str = "surface:activity";
/// The tag of a push telling a participant it is its turn to act (§10 **\[project\]**).
pub const SURFACE_TURN: &str = "surface:turn";

/// Names one call, so that a deferred answer can be given later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(#[doc(hidden)] pub u64);

/// An event for participants: content for their agents, and tags (§10).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Event {
    #[doc(hidden)]
    pub content: Vec<ContentBlock>,
    #[doc(hidden)]
    pub tags: Vec<String>,
}

impl Event {
    /// An event with this content, tagged [`SURFACE_ACTIVITY`].
    pub fn new(content: Vec<ContentBlock>) -> Self {
        Event {
            content,
            tags: vec![SURFACE_ACTIVITY.to_owned()],
        }
    }

    /// An event with one text block, tagged [`SURFACE_ACTIVITY`].
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }

    /// Tags it [`SURFACE_TURN`] instead: it is the participant's turn to act.
    pub fn turn(mut self) -> Self {
        for t in &mut self.tags {
            if t == SURFACE_ACTIVITY {
                SURFACE_TURN.clone_into(t);
            }
        }
        self
    }

    /// Adds a tag: `namespace:value` (SPEC §16.1; a bare one is left out when the event is
    /// pushed). Tags are never authority (§10).
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tags.push(tag.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_activity_unless_a_turn() {
        assert_eq!(Event::text("x").tags, [SURFACE_ACTIVITY]);
        assert_eq!(
            Event::text("x").turn().tag("game:y").tags,
            [SURFACE_TURN, "game:y"]
        );
    }
}
