//! What a scripted agent believes, built only from what the host showed it: its open games
//! and the tools usable in each, invitations (suggestions), and every end it was told.
//!
//! The host tells each change once (§6 "RFC §8.3"), so beliefs are kept by applying each
//! fact in the order shown; `toolsets--look` re-reads them whole ([`Beliefs::resync`]) when
//! an agent suspects it missed something.

use super::GameRecord;
use super::perceive::{Looked, Marker, Seen, game_key, parse_marker, perceive, read_look};
use mcpl_host::host::{Shown, ShownKind};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// (toolset, instance).
pub type GameKey = (String, String);

/// One game (an instance of an instanced toolset) as the agent knows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GameBelief {
    /// Open, as far as the agent was told.
    pub open: bool,
    /// Tools usable in it now.
    pub usable: BTreeSet<String>,
    /// The reason it ended with, once told.
    pub ended: Option<String>,
    /// The last "Moves: …" line shown for it (the record at the end).
    pub moves: Option<String>,
    /// The opponent's last move was a pass (from the event that told it).
    pub opponent_passed: bool,
    /// The agent's own moves in it.
    pub my_moves: u32,
    /// The title the server gave it (`Go 9x9 vs bob`), when seen.
    pub title: Option<String>,
    /// The number of messages read when it last had news (for staleness).
    pub last_news: u64,
}

/// An invitation: a suggestion to open an instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Invitation {
    /// What to open.
    pub key: GameKey,
    /// The server's words.
    pub reason: String,
    /// The `toolsets--open` arguments the host gave to accept it.
    pub call: Value,
}

/// Everything an agent believes. See the module docs.
#[derive(Debug, Clone, Default)]
pub struct Beliefs {
    /// Games by (toolset, instance).
    pub games: BTreeMap<GameKey, GameBelief>,
    /// Tools usable outside games (the lobby's).
    pub lobby: BTreeSet<String>,
    /// Invitations not yet answered.
    pub invitations: BTreeMap<GameKey, Invitation>,
    /// Ends told with the server's reason, per instance: each is an ended record told
    /// (§4.3); more than one for an instance is a record told twice.
    pub ends_told: BTreeMap<GameKey, u32>,
    /// Closes the host told without a reason ("it is no longer open").
    pub plain_closes: u64,
    /// Messages read.
    pub read: u64,
}

impl Beliefs {
    /// What the agent believes of each game it knew, as its report says it.
    pub fn game_records(&self) -> Vec<GameRecord> {
        self.games
            .iter()
            .map(|((toolset, instance), g)| GameRecord {
                toolset: toolset.clone(),
                instance: instance.clone(),
                title: g.title.clone(),
                result: g.ended.clone(),
                moves: g.moves.clone(),
                my_moves: g.my_moves,
                open: g.open,
            })
            .collect()
    }

    /// Takes in one message the host showed.
    pub fn absorb(&mut self, shown: &Shown) {
        self.read += 1;
        let result = shown.kind == ShownKind::ToolResult;
        if shown.kind == ShownKind::Reminder {
            self.apply_look(&read_look(&shown.text), false);
        }
        let about = about(&shown.text);
        if let Some(key) = about.as_ref().and_then(game_key) {
            let content = content(&shown.text, result);
            let read = self.read;
            let g = self.games.entry(key).or_default();
            g.last_news = read;
            if let Some(m) = content.lines().rev().find(|l| l.starts_with("Moves:")) {
                g.moves = Some(m.to_owned());
            }
            if shown.kind == ShownKind::Push {
                // The opponent's move, in the server's words ("bob (White) passed.").
                if content.contains(") passed.") {
                    g.opponent_passed = true;
                } else if content.contains(") played ") {
                    g.opponent_passed = false;
                }
            }
        }
        for seen in perceive(&shown.text, result) {
            self.apply(seen);
        }
    }

    /// Applies one fact.
    pub fn apply(&mut self, seen: Seen) {
        let read = self.read;
        match seen {
            Seen::Opened { marker, title } => {
                if let Some(key) = game_key(&marker) {
                    self.invitations.remove(&key);
                    let g = self.games.entry(key).or_default();
                    g.open = true;
                    g.last_news = read;
                    if title.is_some() {
                        g.title = title;
                    }
                }
            }
            Seen::Usable { tool, marker } => match game_key(&marker) {
                Some(key) => {
                    // A tool usable in an instance says the instance is open (a look
                    // while disconnected may have made the agent doubt it).
                    let g = self.games.entry(key).or_default();
                    g.usable.insert(tool);
                    g.open = g.ended.is_none();
                    g.last_news = read;
                }
                None => {
                    self.lobby.insert(tool);
                }
            },
            Seen::Unusable { tool, marker } => match game_key(&marker) {
                Some(key) => {
                    let g = self.games.entry(key).or_default();
                    g.usable.remove(&tool);
                    g.last_news = read;
                }
                None => {
                    self.lobby.remove(&tool);
                }
            },
            Seen::Closed { marker, reason } => {
                let Some(key) = game_key(&marker) else { return };
                self.invitations.remove(&key);
                if reason.is_some() {
                    *self.ends_told.entry(key.clone()).or_default() += 1;
                } else {
                    self.plain_closes += 1;
                }
                let g = self.games.entry(key).or_default();
                g.open = false;
                g.usable.clear();
                g.last_news = read;
                if g.ended.is_none() {
                    g.ended = Some(reason.unwrap_or_else(|| "closed".to_owned()));
                }
            }
            Seen::Ended { marker, reason } => {
                let Some(key) = game_key(&marker) else { return };
                self.invitations.remove(&key);
                *self.ends_told.entry(key.clone()).or_default() += 1;
                let g = self.games.entry(key).or_default();
                g.open = false;
                g.usable.clear();
                g.ended = Some(reason);
                g.last_news = read;
            }
            Seen::Suggested {
                marker,
                open,
                reason,
                call,
            } => {
                let Some(key) = game_key(&marker) else { return };
                let known = self
                    .games
                    .get(&key)
                    .is_some_and(|g| g.open || g.ended.is_some());
                if open && !known {
                    self.invitations
                        .insert(key.clone(), Invitation { key, reason, call });
                }
            }
        }
    }

    /// Replaces what is open and usable with what a `toolsets--look` answer says; true
    /// when it did. A look while the server is not connected says nothing about what is
    /// open there: it is not applied.
    pub fn resync(&mut self, look_text: &str) -> bool {
        if look_text.contains("not connected just now") {
            return false;
        }
        self.apply_look(&read_look(look_text), true);
        true
    }

    fn apply_look(&mut self, looked: &Looked, whole: bool) {
        let read = self.read;
        let open: BTreeSet<GameKey> = looked.open.iter().filter_map(game_key).collect();
        if whole {
            for (key, g) in self.games.iter_mut() {
                if !open.contains(key) {
                    g.open = false;
                    g.usable.clear();
                }
            }
        }
        for key in &open {
            let g = self.games.entry(key.clone()).or_default();
            g.open = true;
            g.last_news = read;
            if whole {
                g.usable.clear();
            }
        }
        for (tool, marker) in &looked.usable {
            match game_key(marker) {
                Some(key) => {
                    self.games
                        .entry(key)
                        .or_default()
                        .usable
                        .insert(tool.clone());
                }
                None => {
                    self.lobby.insert(tool.clone());
                }
            }
        }
    }

    /// Games open now.
    pub fn open_games(&self) -> impl Iterator<Item = (&GameKey, &GameBelief)> {
        self.games.iter().filter(|(_, g)| g.open)
    }
}

/// The marker a message is about: a push's `about [m]`, a result's `tool in [m] answered`.
pub fn about(text: &str) -> Option<Marker> {
    let first = text.lines().next()?;
    let at = first.find(" [")?;
    parse_marker(&first[at + 1..]).map(|(m, _)| m)
}

/// The server's content in a message: a push's `│ ` lines, a result's lines between its
/// head and `What changed:`.
pub fn content(text: &str, result: bool) -> String {
    let mut out = Vec::new();
    if result {
        for l in text.lines().skip(1) {
            if l == "What changed:" {
                break;
            }
            out.push(l);
        }
    } else {
        out.extend(
            text.lines()
                .filter_map(|l| l.strip_prefix("│ ").or_else(|| (l == "│").then_some(""))),
        );
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(kind: ShownKind, text: &str) -> Shown {
        Shown::told(0, kind, "arcade", text)
    }

    fn key(i: &str) -> GameKey {
        ("go".into(), i.into())
    }

    #[test]
    fn a_game_is_followed_from_invitation_to_its_end() {
        let mut b = Beliefs::default();
        b.absorb(&shown(ShownKind::Push, "Event from arcade about [arcade/go:go-1]:\n│ alice challenges you\n- Suggestion from arcade (the host does not act on it): open [arcade/go:go-1] — \"alice challenges you\" (from arcade). To accept, call toolsets--open {\"instance\":\"go-1\",\"server\":\"arcade\",\"toolset\":\"go\"}."));
        assert_eq!(b.invitations[&key("go-1")].reason, "alice challenges you");
        b.absorb(&shown(ShownKind::ToolResult, "arcade says:\n│ You play White\nWhat changed:\n- Opened [arcade/go:go-1] \"Go 9x9 vs alice\" (from arcade).\n- Usable: go_board in [arcade/go:go-1] — x"));
        assert!(b.invitations.is_empty());
        assert!(b.games[&key("go-1")].open);
        b.absorb(&shown(ShownKind::Push, "Event from arcade about [arcade/go:go-1]:\n│ alice (Black) passed.\n- Usable: go_play in [arcade/go:go-1] — x"));
        let g = &b.games[&key("go-1")];
        assert!(g.opponent_passed && g.usable.contains("go_play"));
        b.absorb(&shown(ShownKind::ToolResult, "go_pass in [arcade/go:go-1] answered (from arcade):\nYou passed.\nGame over: White (bob) wins by 7.5.\nMoves: pass pass\nWhat changed:\n- Closed [arcade/go:go-1]: \"White (bob) wins by 7.5\" (from arcade)."));
        let g = &b.games[&key("go-1")];
        assert!(!g.open && g.usable.is_empty());
        assert_eq!(g.ended.as_deref(), Some("White (bob) wins by 7.5"));
        assert_eq!(g.moves.as_deref(), Some("Moves: pass pass"));
        assert_eq!(b.ends_told[&key("go-1")], 1);
        assert_eq!(b.open_games().count(), 0);
    }

    #[test]
    fn a_look_replaces_what_is_open_and_usable() {
        let mut b = Beliefs::default();
        b.apply(Seen::Usable {
            tool: "go_play".into(),
            marker: parse_marker("[arcade/go:g1]").unwrap().0,
        });
        b.games.get_mut(&key("g1")).unwrap().open = true;
        assert!(b.resync("[arcade]\nOpen:\n- [arcade/go:g2] \"Go\" (from arcade)\n  - go_board in [arcade/go:g2] — x\nCan be opened:\n- [arcade/go] \"Go\""));
        assert!(!b.games[&key("g1")].open);
        assert!(b.games[&key("g1")].usable.is_empty());
        assert_eq!(
            b.games[&key("g2")].usable,
            BTreeSet::from(["go_board".to_owned()])
        );
        assert!(!b.resync("[arcade] \"Arcade\" (from arcade): not connected just now; nothing is known to be open there."));
        assert!(
            b.games[&key("g2")].open,
            "a look while disconnected changes nothing"
        );
    }
}
