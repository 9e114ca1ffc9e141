//! What the arcade's parts share beyond the SDK's own state: who is online, which players
//! exist, the challenges waiting for an answer, and the declines under way.
//!
//! **Online** means: a named principal with at least one live connection served through
//! [`Arcade::serve`](super::Arcade::serve) — a transport connection (stdio, WebSocket) or
//! a Streamable HTTP session that has not ended. The arcade's own in-process connections
//! (`loopback.rs`) never count, and anonymous principals are never listed: they share
//! nothing (§4.6), so nobody can challenge them.
//!
//! A **challenge** is an invitation a table sent (§4.6: a shared instance): it is recorded
//! here when the table invites, and removed when the invitee joins, declines, or the table
//! goes away (its `Drop`), so the lobby lists exactly the invitations still open.

use super::BotSettings;
use mcpl_server::SessionHandle;
use mcpl_transport::Principal;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Names no player may take: `bot` is the `opponent` value that means the bot.
pub const RESERVED_NAMES: [&str; 1] = ["bot"];

/// A challenge waiting for its invitee.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// Its id, unique in this arcade.
    pub id: u64,
    /// The game's toolset (`go`, `tictactoe`).
    pub toolset: &'static str,
    /// Who challenged.
    pub challenger: String,
    /// Who is invited.
    pub invitee: Principal,
    /// The challenger's name for the instance: the name suggested to the invitee (the SDK
    /// suffixes it, `-2`, if the invitee has that name open already).
    pub instance: Option<String>,
    /// The game in words, from the invitee's side ("Go 9x9, you play White").
    pub summary: String,
}

#[derive(Default)]
struct Players {
    /// Names that may be challenged although offline (from the operator's configuration),
    /// and every named principal seen online.
    known: BTreeSet<String>,
    /// Live connections served through the arcade.
    sessions: Vec<SessionHandle>,
}

/// The arcade's shared state. See the module docs.
pub struct Shared {
    /// How the bot plays.
    pub bot: BotSettings,
    players: Mutex<Players>,
    challenges: Mutex<BTreeMap<u64, Challenge>>,
    /// (invitee, toolset, instance) → the challenge being declined.
    declining: Mutex<BTreeMap<(Principal, String, String), u64>>,
    next_challenge: AtomicU64,
    next_game: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Empty state with these bot settings.
    pub fn new(bot: BotSettings) -> Self {
        Shared {
            bot,
            players: Mutex::default(),
            challenges: Mutex::default(),
            declining: Mutex::default(),
            next_challenge: AtomicU64::new(1),
            next_game: AtomicU64::new(1),
        }
    }

    /// A number for a new game, unique in this arcade (it seeds the game's bot).
    pub fn next_game(&self) -> u64 {
        self.next_game.fetch_add(1, Ordering::Relaxed)
    }

    /// Lets `name` be challenged while offline.
    pub fn add_known(&self, name: impl Into<String>) {
        lock(&self.players).known.insert(name.into());
    }

    /// Records a live connection.
    pub fn connected(&self, session: SessionHandle) {
        let mut p = lock(&self.players);
        if let Principal::Named(name) = session.principal() {
            p.known.insert(name.clone());
        }
        p.sessions.retain(SessionHandle::is_open);
        p.sessions.push(session);
    }

    /// Named principals online now, sorted (module docs).
    pub fn online(&self) -> Vec<String> {
        let mut p = lock(&self.players);
        p.sessions.retain(SessionHandle::is_open);
        let names: BTreeSet<String> = p
            .sessions
            .iter()
            .filter_map(|s| match s.principal() {
                Principal::Named(n) => Some(n.clone()),
                Principal::Anonymous(_) => None,
            })
            .collect();
        names.into_iter().collect()
    }

    /// The principal a player's name stands for, if it is one that may be challenged: a
    /// configured name, or a named principal seen online.
    pub fn player(&self, name: &str) -> Option<Principal> {
        let known = lock(&self.players).known.contains(name);
        (known && !RESERVED_NAMES.contains(&name)).then(|| Principal::Named(name.to_owned()))
    }

    /// Records a challenge; returns its id.
    pub fn add_challenge(&self, make: impl FnOnce(u64) -> Challenge) -> u64 {
        let id = self.next_challenge.fetch_add(1, Ordering::Relaxed);
        lock(&self.challenges).insert(id, make(id));
        id
    }

    /// Forgets a challenge (joined, declined, or its table is gone).
    pub fn remove_challenge(&self, id: u64) {
        lock(&self.challenges).remove(&id);
        lock(&self.declining).retain(|_, c| *c != id);
    }

    /// Challenges waiting for `invitee`, oldest first.
    pub fn challenges_for(&self, invitee: &Principal) -> Vec<Challenge> {
        lock(&self.challenges)
            .values()
            .filter(|c| &c.invitee == invitee)
            .cloned()
            .collect()
    }

    /// Challenges `challenger` sent that wait for an answer, oldest first.
    pub fn challenges_by(&self, challenger: &str) -> Vec<Challenge> {
        lock(&self.challenges)
            .values()
            .filter(|c| c.challenger == challenger)
            .cloned()
            .collect()
    }

    /// Marks the challenge as being declined by its invitee, who will open it under
    /// `instance` only to refuse it.
    pub fn start_decline(&self, challenge: &Challenge, instance: &str) {
        lock(&self.declining).insert(
            (
                challenge.invitee.clone(),
                challenge.toolset.to_owned(),
                instance.to_owned(),
            ),
            challenge.id,
        );
    }

    /// Ends a decline, whatever became of it.
    pub fn end_decline(&self, invitee: &Principal, toolset: &str, instance: &str) {
        lock(&self.declining).remove(&(invitee.clone(), toolset.to_owned(), instance.to_owned()));
    }

    /// True while `challenge` is being declined: its table refuses the join and ends.
    pub fn is_declined(&self, challenge: u64) -> bool {
        lock(&self.declining).values().any(|c| *c == challenge)
    }

    /// True while `principal` is opening `toolset:instance` only to decline: an open that
    /// is not a join (the invitation went away meanwhile) must start no game.
    pub fn is_declining(&self, principal: &Principal, toolset: &str, instance: &str) -> bool {
        lock(&self.declining).contains_key(&(
            principal.clone(),
            toolset.to_owned(),
            instance.to_owned(),
        ))
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("bot", &self.bot)
            .field("challenges", &lock(&self.challenges).len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn challenge(id: u64) -> Challenge {
        Challenge {
            id,
            toolset: "go",
            challenger: "alice".into(),
            invitee: Principal::Named("bob".into()),
            instance: Some("go-1".into()),
            summary: "Go 9x9".into(),
        }
    }

    #[test]
    fn challenges_are_listed_for_both_sides_until_removed() {
        let s = Shared::new(BotSettings::default());
        let id = s.add_challenge(challenge);
        let bob = Principal::Named("bob".into());
        assert_eq!(s.challenges_for(&bob).len(), 1);
        assert_eq!(s.challenges_by("alice")[0].id, id);
        s.start_decline(&s.challenges_for(&bob)[0], "go-1");
        assert!(s.is_declined(id));
        assert!(s.is_declining(&bob, "go", "go-1"));
        assert!(!s.is_declining(&bob, "go", "go-2"));
        s.remove_challenge(id);
        assert!(s.challenges_for(&bob).is_empty());
        assert!(!s.is_declined(id));
    }

    #[test]
    fn only_known_names_are_players_and_bot_is_reserved() {
        let s = Shared::new(BotSettings::default());
        assert_eq!(s.player("carol"), None);
        s.add_known("carol");
        s.add_known("bot");
        assert_eq!(s.player("carol"), Some(Principal::Named("carol".into())));
        assert_eq!(s.player("bot"), None);
        assert!(s.online().is_empty());
    }
}
