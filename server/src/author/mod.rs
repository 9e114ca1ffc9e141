//! The author's side of RFC-014: declare toolsets and write what an instance does, never
//! touching a rev, a session or a principal.
//!
//! | file | what |
//! |---|---|
//! | `toolset.rs` | [`Toolset`]: a declaration (§4.1), its tools (typed routes), its logic |
//! | `route.rs` | typed routes: a tool's handler on its instance's logic, its arguments decoded as its declared type ([`Call`]) |
//! | `logic.rs` | [`InstanceLogic`] (calls, joins, closes, timers), with the values it takes and gives ([`Opening`], [`ToolCall`], [`Reply`], [`Joined`], [`Refusal`]) |
//! | `started.rs` | [`ToolsetLogic`] (opening) and what an open returns, [`Started`] |
//! | `context.rs` | [`InstanceContext`]: visibility and definitions per participant, events, deferred answers (and holding their changes), invitations and the names invitees see, bots, wakers and blocking work, the end |
//! | `durable.rs` | [`Durable`]: logic kept across restarts (issue #15) |
//! | `work.rs` | [`InstanceWaker`] and [`Blocking`]: waking an instance from outside its actor (the context's `waker` and `spawn_blocking` hand them out) |
//!
//! The values the context, the logic and the cores all name are `mcpl_server_core`'s
//! (`author/`), re-exported here: [`CallId`] and [`Event`] with its tags, [`ParticipantId`],
//! [`Participant`], [`Audience`], [`Refusal`], and what a step did (the context's effects).
//!
//! A two-player game in a few lines (the SDK does the protocol: hint changes in the mover's
//! result, a push with the explaining event and the opponent's changes, ended records):
//!
//! ```
//! use mcpl_server::{Call, Event, InstanceContext, InstanceLogic, NoArguments, ParticipantId, Reply, Started, Toolset};
//!
//! struct Duel { players: [ParticipantId; 2], turn: usize, left: u32 }
//!
//! impl InstanceLogic for Duel {}
//!
//! impl Duel {
//!     fn strike(&mut self, _: NoArguments, _: Call, cx: &mut InstanceContext) -> Reply {
//!         let (me, them) = (self.players[self.turn], self.players[1 - self.turn]);
//!         self.left -= 1;
//!         if self.left == 0 {
//!             cx.end(format!("{} wins", cx.name(me)));
//!             return Reply::text("You win.");
//!         }
//!         self.turn = 1 - self.turn;
//!         cx.hide(me, "strike");
//!         cx.show(them, "strike");
//!         cx.event(them, Event::text(format!("{} struck", cx.name(me))).turn());
//!         Reply::text("Struck.")
//!     }
//! }
//!
//! let duel = Toolset::new("duel")
//!     .instances()
//!     .route("strike", "Strike", Duel::strike)
//!     .hidden()
//!     .on_open(|opening, cx| {
//!         let bot = cx.add_bot("bot");
//!         cx.show(opening.opener(), "strike");
//!         Ok(Started::new(Duel { players: [opening.opener(), bot], turn: 0, left: 3 }).title("Duel vs bot"))
//!     });
//! # let _ = duel;
//! ```

/// The builder methods of what an instance tells someone it takes in ([`Started`] its
/// opener, [`Joined`] a joiner): its title for them and the content they are told.
macro_rules! told_builders {
    ($who:literal, $title:literal, $content:literal) => {
        #[doc = concat!("Its title for the ", $who, " (", $title, ").")]
        pub fn title(mut self, title: impl Into<String>) -> Self {
            self.title = Some(title.into());
            self
        }

        #[doc = concat!("Adds a text block to what the ", $who, " is told.")]
        pub fn text(mut self, text: impl Into<String>) -> Self {
            self.content.push(ContentBlock::text(text));
            self
        }

        #[doc = concat!("Adds content blocks", $content, ".")]
        pub fn content(mut self, blocks: impl IntoIterator<Item = ContentBlock>) -> Self {
            self.content.extend(blocks);
            self
        }
    };
}

mod context;
mod durable;
use mcpl_server_core::author::event;
mod logic;
use mcpl_server_core::author::participant;
mod route;
mod started;
mod toolset;
mod work;

pub use context::InstanceContext;
pub use durable::Durable;
pub(crate) use durable::{Logic, RestoreFn, restore_fn};
pub use event::{CallId, Event, SURFACE_ACTIVITY, SURFACE_TURN};
pub use logic::{InstanceLogic, Joined, Opening, Reply, ToolCall};
pub(crate) use mcpl_server_core::author::Effect;
pub(crate) use mcpl_server_core::author::Job;
pub use mcpl_server_core::author::Refusal;
pub use participant::{Audience, Participant, ParticipantId, ParticipantKind};
pub use route::Call;
pub(crate) use route::Routes;
pub(crate) use started::{PlainInstance, PlainToolset};
pub use started::{Started, ToolsetLogic};
pub use toolset::Toolset;
pub(crate) use work::Woken;
pub use work::{Blocking, BlockingError, InstanceWaker};
