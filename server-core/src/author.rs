//! The values an author's logic and the cores both name, apart from the logic's traits and
//! context (those run in actors and stay in `mcpl_server::author`, which re-exports these):
//! a call's id and an event ([`event`]), participants and audiences ([`participant`]), a
//! refusal ([`refusal`]), and what a step did ([`effect`]).

pub mod effect;
pub mod event;
pub mod participant;
pub mod refusal;

pub use effect::{Effect, Job};
pub use event::{CallId, Event, SURFACE_ACTIVITY, SURFACE_TURN};
pub use participant::{Audience, Participant, ParticipantId, ParticipantKind};
pub use refusal::Refusal;
