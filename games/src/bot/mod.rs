//! A Go opponent for beginners, and a uniformly random mover.
//!
//! [`Bot::choose_move`] decides in this order:
//!
//! 1. If the opponent has just passed and the stones as they stand already
//!    win the game for the bot, it passes too and the game ends.
//! 2. Candidates are the legal moves (positional superko included) that do
//!    not fill one of the bot's own true eyes: every neighbour its own, and
//!    no opponent stone on a diagonal at the edge, at most one in the
//!    centre. With no candidate left it passes, so games always end.
//! 3. Tactics: it captures opponent stones, and rescues its own chains in
//!    atari by capturing an attacker or by extending, but only when a short
//!    ladder read says the chain then escapes. The move that captures plus
//!    saves the most stones is played; captures that are immediately
//!    recaptured bigger (snapback) are skipped.
//! 4. Moves that leave a group of two or more stones in atari (such as
//!    filling a shared liberty in seki) are dropped; if none remain, pass.
//! 5. Otherwise a flat Monte-Carlo search: every candidate is an arm of a
//!    bandit, each sample one random playout after it (playouts never fill
//!    eyes either), counted by area with komi. Results are shared between
//!    arms via all-moves-as-first (RAVE) statistics, and slow first-line
//!    moves in empty areas start with a pessimistic prior. The most visited
//!    move is played. When even that move almost never wins after enough
//!    playouts, the bot resigns (configurable, see [`BotConfig`]).
//!
//! The search is deterministic for a given RNG seed and a [`Budget`] without
//! a deadline; with a deadline, the number of playouts depends on the
//! machine's speed.
//!
//! ```
//! use mcpl_games::bot::{Bot, Budget};
//! use mcpl_games::go::{BoardSize, Game};
//! use rand::{SeedableRng, rngs::StdRng};
//!
//! let mut game = Game::new(BoardSize::Nine);
//! let mut rng = StdRng::seed_from_u64(1);
//! let decision = Bot::new().choose_move(&game, Budget::playouts(200), &mut rng);
//! game.play(decision.mv).expect("the bot only chooses legal moves");
//! ```

mod fastrng;
mod playout;
mod search;
mod tactics;

use std::fmt;
use std::time::{Duration, Instant};

use rand::Rng;

use crate::go::{Color, Game, Move, PlayedMove};

/// Thinking time the arcade gives the bot for each 9×9 move.
pub const DEFAULT_MOVE_TIME: Duration = Duration::from_millis(200);

/// How much searching one move may do. The search stops at whichever limit
/// comes first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Maximum number of random playouts.
    pub playouts: u32,
    /// Optional wall-clock limit, checked every few playouts.
    pub deadline: Option<Instant>,
}

impl Budget {
    /// A fixed number of playouts and no deadline: fully deterministic for a
    /// given seed. Tests and benchmarks use this.
    pub const fn playouts(playouts: u32) -> Budget {
        Budget {
            playouts,
            deadline: None,
        }
    }

    /// As many playouts as fit before `deadline`.
    pub const fn until(deadline: Instant) -> Budget {
        Budget {
            playouts: u32::MAX,
            deadline: Some(deadline),
        }
    }

    /// The arcade's default for 9×9: [`DEFAULT_MOVE_TIME`] from `now`. The
    /// caller passes `now` so this crate never reads the clock to decide
    /// when a move starts.
    pub fn default_9x9(now: Instant) -> Budget {
        Budget::until(now + DEFAULT_MOVE_TIME)
    }
}

/// Knobs for [`Bot`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BotConfig {
    /// Resign when the best move's estimated winning chance is below this
    /// (e.g. `0.03` for 3%); `None` never resigns.
    pub resign_below: Option<f64>,
    /// Playouts the best move needs before its estimate may trigger a
    /// resignation, so a tiny budget never resigns on noise.
    pub resign_min_visits: u32,
    /// UCB1 exploration constant.
    pub exploration: f64,
}

impl Default for BotConfig {
    fn default() -> Self {
        BotConfig {
            resign_below: Some(0.03),
            resign_min_visits: 500,
            exploration: 0.4,
        }
    }
}

/// Why the bot chose its move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reason {
    /// The game is already over; the accompanying pass must not be played.
    GameOver,
    /// Every legal point is one of the bot's own eyes (or there is none).
    NoUsefulMove,
    /// The opponent passed and the bot wins if the game ends now.
    WinningPass,
    /// A tactical move: captures and/or rescues stones from atari.
    Tactic {
        /// Opponent stones captured by the move.
        captured: usize,
        /// Own stones in atari that the move rescues.
        saved: usize,
    },
    /// A random sensible move, because the budget allowed no playouts.
    Unsearched,
    /// Chosen by Monte-Carlo search.
    Search {
        /// Fraction of this move's playouts that the bot won.
        win_rate: f64,
        /// Playouts spent on this move.
        visits: u32,
    },
    /// The search found no move with a real chance.
    Hopeless {
        /// Best move's winning fraction.
        win_rate: f64,
    },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Reason::GameOver => f.write_str("the game is over"),
            Reason::NoUsefulMove => f.write_str("no useful move left"),
            Reason::WinningPass => f.write_str("passing wins the game"),
            Reason::Tactic { captured, saved } => write!(f, "captures {captured}, saves {saved}"),
            Reason::Unsearched => f.write_str("random sensible move (no search budget)"),
            Reason::Search { win_rate, visits } => {
                write!(
                    f,
                    "search: {:.0}% wins over {visits} playouts",
                    win_rate * 100.0
                )
            }
            Reason::Hopeless { win_rate } => write!(f, "hopeless: {:.1}% wins", win_rate * 100.0),
        }
    }
}

/// The bot's move and how it got there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    /// The move to play (legal unless the reason is [`Reason::GameOver`]).
    pub mv: Move,
    /// Why.
    pub reason: Reason,
    /// Random playouts run for this decision.
    pub playouts: u32,
}

/// The Go bot. Holds only configuration; all state is in the [`Game`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bot {
    config: BotConfig,
}

impl Bot {
    /// A bot with [`BotConfig::default`].
    pub fn new() -> Bot {
        Bot::default()
    }

    /// A bot with the given configuration.
    pub fn with_config(config: BotConfig) -> Bot {
        Bot { config }
    }

    /// The configuration.
    pub fn config(&self) -> &BotConfig {
        &self.config
    }

    /// Chooses a move for the side to move in `game`. A zero playout budget
    /// skips the search and picks a random non-eye move after tactics.
    pub fn choose_move<R: Rng + ?Sized>(
        &self,
        game: &Game,
        budget: Budget,
        rng: &mut R,
    ) -> Decision {
        let pass = |reason| Decision {
            mv: Move::Pass,
            reason,
            playouts: 0,
        };
        if game.is_over() {
            return pass(Reason::GameOver);
        }
        let me = game.to_move();
        let opponent_passed = matches!(game.last_move(), Some(PlayedMove { mv: Move::Pass, .. }));
        if opponent_passed && game.score().leader().map(|(c, _)| c) == Some(me) {
            return pass(Reason::WinningPass);
        }
        let board = game.board();
        let candidates: Vec<usize> = game
            .legal_moves()
            .into_iter()
            .map(|p| board.pos(p))
            .filter(|&pos| !board.is_eye(pos, me))
            .collect();
        if candidates.is_empty() {
            return pass(Reason::NoUsefulMove);
        }
        if let Some(t) = tactics::best_tactic(board, me, &candidates, rng) {
            return Decision {
                mv: Move::Play(board.point(t.pos)),
                reason: Reason::Tactic {
                    captured: t.captured,
                    saved: t.saved,
                },
                playouts: 0,
            };
        }
        // Leaving a group of two or more stones in atari (such as filling a
        // shared liberty in seki) throws it away; if nothing else is left,
        // passing is better.
        let sensible: Vec<usize> = candidates
            .into_iter()
            .filter(|&pos| !tactics::self_ataris_group(board, pos, me))
            .collect();
        if sensible.is_empty() {
            return pass(Reason::NoUsefulMove);
        }
        if budget.playouts == 0 {
            let pos = sensible[rng.random_range(0..sensible.len())];
            return Decision {
                mv: Move::Play(board.point(pos)),
                reason: Reason::Unsearched,
                playouts: 0,
            };
        }
        let Some(found) = search::flat_ucb(
            board,
            me,
            game.komi(),
            &sensible,
            budget,
            self.config.exploration,
            rng,
        ) else {
            return pass(Reason::NoUsefulMove);
        };
        if let Some(threshold) = self.config.resign_below
            && found.visits >= self.config.resign_min_visits
            && found.win_rate < threshold
        {
            return Decision {
                mv: Move::Resign,
                reason: Reason::Hopeless {
                    win_rate: found.win_rate,
                },
                playouts: found.playouts,
            };
        }
        Decision {
            mv: Move::Play(board.point(found.pos)),
            reason: Reason::Search {
                win_rate: found.win_rate,
                visits: found.visits,
            },
            playouts: found.playouts,
        }
    }
}

/// Chooses with a default [`Bot`]; shorthand for the arcade.
pub fn choose_move<R: Rng + ?Sized>(game: &Game, budget: Budget, rng: &mut R) -> Move {
    Bot::new().choose_move(game, budget, rng).mv
}

/// A uniformly random legal move that does not fill one of the mover's own
/// eyes, or a pass when there is none (so two random players finish their
/// games). Also passes once the game is over.
pub fn random_move<R: Rng + ?Sized>(game: &Game, rng: &mut R) -> Move {
    if game.is_over() {
        return Move::Pass;
    }
    let me = game.to_move();
    let board = game.board();
    let moves: Vec<_> = game
        .legal_moves()
        .into_iter()
        .filter(|&p| !board.is_eye(board.pos(p), me))
        .collect();
    if moves.is_empty() {
        Move::Pass
    } else {
        Move::Play(moves[rng.random_range(0..moves.len())])
    }
}

/// The colour that wins a finished playout or game counted as it stands.
pub(crate) fn area_winner(board: &crate::go::Board, komi: f32) -> Option<Color> {
    crate::go::AreaScore::count(board, komi)
        .leader()
        .map(|(c, _)| c)
}

#[cfg(test)]
mod tests;
