//! A table kept across a restart of the arcade (issue #15 **\[project\]**): the SDK writes
//! it after every step of its instance and reads it back when the arcade starts again on
//! the same data directory (`mcpl_server::Durable`).
//!
//! What is kept: the game ([`Rules::save`]: Go's size, komi and moves, from which the board,
//! the captures, ko and superko follow; tic-tac-toe's moves), the seats, whether the
//! invited opponent has joined, a resignation, the bot's seed, the move count, the game's
//! number (what spectators and its resource know it by), and an open challenge as the
//! lobby lists it. What is not: a search the bot had under way — it
//! starts again when the table resumes, and its move comes to the human as an event (the
//! call that waited for it went with the old process).

use super::{Seat, Side, Table};
use crate::arcade::rules::Rules;
use crate::arcade::shared::{Challenge, Shared};
use mcpl_server::{Durable, InstanceContext, ParticipantId};
use mcpl_transport::Principal;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// A table as written.
#[derive(Serialize, Deserialize)]
struct Kept {
    game: Value,
    /// By [`Side::index`]: who sits there, and whether it is the bot.
    seats: [(ParticipantId, bool); 2],
    started: bool,
    /// The side that resigned, by [`Side::index`].
    resigned: Option<usize>,
    challenge: Option<KeptChallenge>,
    seed: u64,
    moves: u64,
    /// The game's number (spectators, resources); absent in a table kept before it was
    /// kept, which gets a new one.
    #[serde(default)]
    number: Option<u64>,
}

/// An open challenge, as the lobby lists it.
#[derive(Serialize, Deserialize)]
struct KeptChallenge {
    challenger: String,
    invitee: String,
    instance: Option<String>,
    summary: String,
}

fn side(index: usize) -> Side {
    if index == 0 {
        Side::First
    } else {
        Side::Second
    }
}

impl<R: Rules> Serialize for Table<R> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let challenge = self
            .challenge
            .and_then(|id| self.shared.challenge(id))
            .and_then(|c| {
                let Principal::Named(invitee) = c.invitee else {
                    return None;
                };
                Some(KeptChallenge {
                    challenger: c.challenger,
                    invitee,
                    instance: c.instance,
                    summary: c.summary,
                })
            });
        Kept {
            game: self.rules.save(),
            seats: self.seats.map(|s| (s.id, s.bot)),
            started: self.started,
            resigned: self.resigned.map(Side::index),
            challenge,
            seed: self.seed,
            moves: self.moves,
            number: Some(self.number),
        }
        .serialize(s)
    }
}

impl<R: Rules> Durable for Table<R> {
    const FORMAT: u32 = 1;

    /// The bot was to move when the arcade stopped: it thinks again.
    fn resumed(&mut self, cx: &mut InstanceContext) {
        let to_move = self.rules.to_move();
        if self.started && self.outcome().is_none() && self.seat(to_move).bot {
            self.bot_opens(cx);
        }
        self.publish(cx);
    }
}

impl<R: Rules> Table<R> {
    /// The table a [`Durable`] record kept, in the arcade `shared`: its challenge, if one
    /// was open, is listed in the lobby again.
    pub(crate) fn restore(shared: Arc<Shared>, format: u32, state: Value) -> Result<Self, String> {
        if format != Self::FORMAT {
            return Err(format!(
                "the table is in format {format}; this arcade reads format {}",
                Self::FORMAT
            ));
        }
        let kept: Kept =
            serde_json::from_value(state).map_err(|e| format!("the table does not read: {e}"))?;
        let rules = R::load(&kept.game).map_err(|e| format!("the game does not read: {e}"))?;
        let challenge = kept.challenge.map(|c| {
            shared.add_challenge(|id| Challenge {
                id,
                toolset: R::TOOLS.toolset,
                challenger: c.challenger,
                invitee: Principal::Named(c.invitee),
                instance: c.instance,
                summary: c.summary,
            })
        });
        Ok(Table {
            rules,
            seats: kept.seats.map(|(id, bot)| Seat { id, bot }),
            started: kept.started,
            resigned: kept.resigned.map(side),
            thinking: None,
            challenge,
            seed: kept.seed,
            moves: kept.moves,
            // A game keeps its number across restarts (issue #43); no new game takes it.
            number: match kept.number {
                Some(number) => {
                    shared.game_numbers_past(number);
                    number
                }
                None => shared.next_game(),
            },
            shared,
        })
    }
}
