//! What the arcade's parts share beyond the SDK's own state: which players exist, who is
//! online, and the challenges each player sent that wait for an answer.
//!
//! **Online** means what [`Server::online_principals`] says: a named principal with at
//! least one live session. Anonymous principals are never listed: they share nothing
//! (§4.6), so nobody can challenge them. On a node of several (issue #41, `--ownership
//! principal`), those online on the other nodes are listed too, as the node was last
//! told ([`Shared::set_online_elsewhere`], from the lease table: `node/online.rs`).
//!
//! A **challenge** is an invitation a table sent (§4.6: a shared instance). The invitee's
//! side of it is the SDK's ([`ToolContext::invitations`](mcpl_server::ToolContext::invitations));
//! the challenger's side — "your challenge to bob waits for an answer" — is recorded here
//! when the table invites, and removed when the invitee joins or declines, or the table
//! goes away (its `Drop`), so the lobby lists exactly the challenges still open.

use super::BotSettings;
use super::challenge_limit::ChallengeLimit;
use super::spectate::Gallery;
use mcpl_server::Server;
use mcpl_transport::Principal;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, SystemTime};

/// Names no player may take: `bot` is the `opponent` value that means the bot.
pub const RESERVED_NAMES: [&str; 1] = ["bot"];

/// One page of who else is online ([`Shared::online_page`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OnlinePlayers {
    /// The page's players, sorted by name.
    pub names: Vec<String>,
    /// How many players other than the asker are online in all.
    pub total: usize,
    /// The last name of this page when more follow: list after it for the next.
    pub next: Option<String>,
}

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
    /// The challenger's name for the instance (the invitee may see it with a `-N` suffix,
    /// when it has that name open already).
    pub instance: Option<String>,
    /// The game in words, from the invitee's side ("Go 9x9, you play White").
    pub summary: String,
}

/// The invitation's reason for a challenge (what the invitee's host shows, §5.3).
pub fn challenge_reason(challenger: &str, summary: &str) -> String {
    format!("{challenger} challenges you to {summary}")
}

/// The summary in a reason [`challenge_reason`] made (the whole reason for any other).
pub fn challenge_summary<'a>(reason: &'a str, challenger: &str) -> &'a str {
    reason
        .strip_prefix(challenger)
        .and_then(|r| r.strip_prefix(" challenges you to "))
        .unwrap_or(reason)
}

/// The arcade's shared state. See the module docs.
pub struct Shared {
    /// How the bot plays.
    pub bot: BotSettings,
    /// Set once the server is built (its toolsets are declared before it exists).
    server: OnceLock<Server>,
    /// Names that may be challenged although offline (from the operator's configuration),
    /// and every named principal seen online.
    known: Mutex<BTreeSet<String>>,
    /// Named principals online on other nodes, as last told (module docs).
    elsewhere: Mutex<BTreeSet<String>>,
    challenges: Mutex<BTreeMap<u64, Challenge>>,
    /// How many challenges each pair sent lately (`challenge_limit.rs`).
    limit: Mutex<ChallengeLimit>,
    next_challenge: AtomicU64,
    next_game: AtomicU64,
    /// Where the tables show their games to spectators (issue #43), if anywhere.
    gallery: Option<Arc<Gallery>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Empty state with these bot settings.
    pub fn new(bot: BotSettings) -> Self {
        Shared {
            bot,
            server: OnceLock::new(),
            known: Mutex::default(),
            elsewhere: Mutex::default(),
            challenges: Mutex::default(),
            limit: Mutex::default(),
            next_challenge: AtomicU64::new(1),
            next_game: AtomicU64::new(1),
            gallery: None,
        }
    }

    /// The same state, the tables showing their games in `gallery`.
    pub fn with_gallery(mut self, gallery: Option<Arc<Gallery>>) -> Self {
        self.gallery = gallery;
        self
    }

    /// Where the tables show their games, if anywhere.
    pub fn gallery(&self) -> Option<&Arc<Gallery>> {
        self.gallery.as_ref()
    }

    /// The server, once built.
    pub fn set_server(&self, server: Server) {
        let _ = self.server.set(server);
    }

    /// A number for a new game, unique in this arcade (it seeds the game's bot; spectators
    /// and the game's resource name the game by it).
    pub fn next_game(&self) -> u64 {
        self.next_game.fetch_add(1, Ordering::Relaxed)
    }

    /// Game `number` exists already (a game read back, or one shown before a restart): no
    /// new game takes it or a lower one.
    pub fn game_numbers_past(&self, number: u64) {
        self.next_game
            .fetch_max(number.saturating_add(1), Ordering::Relaxed);
    }

    /// Lets `name` be challenged while offline.
    pub fn add_known(&self, name: impl Into<String>) {
        lock(&self.known).insert(name.into());
    }

    /// A connection of `principal` is served: a named one may be challenged from now on.
    pub fn connected(&self, principal: &Principal) {
        if let Principal::Named(name) = principal {
            self.add_known(name.clone());
        }
    }

    /// Named principals online now, here or on another node, sorted (module docs).
    pub fn online(&self) -> Vec<String> {
        let mut all = lock(&self.elsewhere).clone();
        if let Some(s) = self.server.get() {
            all.extend(s.online_principals().iter().map(Principal::name));
        }
        all.into_iter().collect()
    }

    /// The named principals online on the other nodes of a cluster now, replacing those
    /// told before (module docs).
    pub fn set_online_elsewhere(&self, names: BTreeSet<String>) {
        *lock(&self.elsewhere) = names;
    }

    /// One page of the named players online other than `me`, sorted: at most `limit`
    /// whose names sort after `after` (from the first when `None`), how many others are
    /// online in all, and the name to list after for the next page when there is one.
    /// Never builds the whole list: with thousands online, the lobby's answer and a
    /// refusal naming the players stay short (module docs).
    pub fn online_page(&self, after: Option<&str>, limit: usize, me: &str) -> OnlinePlayers {
        let Some(server) = self.server.get() else {
            return OnlinePlayers::default();
        };
        // Two more than asked: `me` may be among them, and one more says a next page.
        let want = limit.saturating_add(2);
        let page = server.online_page(after, want);
        let elsewhere = lock(&self.elsewhere);
        // Those online here and elsewhere, merged: a name online on both counts once.
        let mut merged: BTreeSet<String> = page.principals.iter().map(Principal::name).collect();
        let from = after.map_or(Bound::Unbounded, |a| Bound::Excluded(a.to_owned()));
        merged.extend(
            elsewhere
                .range::<String, _>((from, Bound::Unbounded))
                .take(want)
                .cloned(),
        );
        let only_elsewhere = elsewhere
            .iter()
            .filter(|n| !server.is_online(&Principal::Named((*n).clone())))
            .count();
        let me_online =
            server.is_online(&Principal::Named(me.to_owned())) || elsewhere.contains(me);
        let mut names: Vec<String> = merged.into_iter().take(want).filter(|n| n != me).collect();
        let more = names.len() > limit;
        names.truncate(limit);
        OnlinePlayers {
            next: more.then(|| names.last().cloned()).flatten(),
            total: (page.total + only_elsewhere).saturating_sub(usize::from(me_online)),
            names,
        }
    }

    /// The principal a player's name stands for, if it is one that may be challenged: a
    /// configured name, a named principal seen online, or one online now.
    pub fn player(&self, name: &str) -> Option<Principal> {
        if RESERVED_NAMES.contains(&name) {
            return None;
        }
        let principal = Principal::Named(name.to_owned());
        let known = lock(&self.known).contains(name)
            || lock(&self.elsewhere).contains(name)
            || self.server.get().is_some_and(|s| s.is_online(&principal));
        known.then_some(principal)
    }

    /// Counts a challenge from `challenger` to `invitee` at `now`, or refuses it with how
    /// long until one more is allowed ([`ChallengeLimit`]).
    pub fn admit_challenge(
        &self,
        challenger: &str,
        invitee: &str,
        now: SystemTime,
    ) -> Result<(), Duration> {
        lock(&self.limit).admit(challenger, invitee, now)
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
    }

    /// The challenge `id`, while it waits for an answer.
    pub fn challenge(&self, id: u64) -> Option<Challenge> {
        lock(&self.challenges).get(&id).cloned()
    }

    /// Challenges `challenger` sent that wait for an answer, oldest first.
    pub fn challenges_by(&self, challenger: &str) -> Vec<Challenge> {
        lock(&self.challenges)
            .values()
            .filter(|c| c.challenger == challenger)
            .cloned()
            .collect()
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
    fn challenges_are_listed_for_the_challenger_until_removed() {
        let s = Shared::new(BotSettings::default());
        let id = s.add_challenge(challenge);
        assert_eq!(s.challenges_by("alice")[0].id, id);
        assert!(s.challenges_by("bob").is_empty());
        s.remove_challenge(id);
        assert!(s.challenges_by("alice").is_empty());
    }

    #[test]
    fn only_known_names_are_players_and_bot_is_reserved() {
        let s = Shared::new(BotSettings::default());
        assert_eq!(s.player("carol"), None);
        s.add_known("carol");
        s.add_known("bot");
        s.connected(&Principal::Named("dave".into()));
        s.connected(&Principal::anonymous());
        assert_eq!(s.player("carol"), Some(Principal::Named("carol".into())));
        assert_eq!(s.player("dave"), Some(Principal::Named("dave".into())));
        assert_eq!(s.player("bot"), None);
        assert!(s.online().is_empty(), "no server yet: nobody online");
    }

    #[test]
    fn a_challenge_reason_gives_its_summary_back() {
        let reason = challenge_reason("alice", "Go 9x9, you play White");
        assert_eq!(reason, "alice challenges you to Go 9x9, you play White");
        assert_eq!(
            challenge_summary(&reason, "alice"),
            "Go 9x9, you play White"
        );
        assert_eq!(challenge_summary(&reason, "bob"), reason);
    }
}
