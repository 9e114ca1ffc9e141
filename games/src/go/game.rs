//! A game of Go in progress: turn order, history, superko, passes,
//! resignation and the final result.

use std::collections::HashSet;
use std::fmt;

use thiserror::Error;

use super::board::{Board, BoardIllegal};
use super::coord::{BoardSize, Color, Move, Point};
use super::score::{AreaScore, format_points};

/// Komi used by [`Game::new`]: half a point avoids drawn games.
pub const DEFAULT_KOMI: f32 = 7.5;

/// A move together with the colour that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PlayedMove {
    /// Who moved.
    pub color: Color,
    /// What they did.
    pub mv: Move,
}

impl fmt::Display for PlayedMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.color, self.mv)
    }
}

/// What a successful [`Game::play`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveOutcome {
    /// The move as played.
    pub played: PlayedMove,
    /// Opponent stones removed by this move, row-major from A1.
    pub captured: Vec<Point>,
    /// Whether this move ended the game (second pass or resignation).
    pub game_over: bool,
}

/// Why [`Game::play`] refused a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum IllegalMove {
    /// The game has already ended.
    #[error("the game is over")]
    GameOver,
    /// The point is not on this board.
    #[error("{point} is off the {size} board")]
    OffBoard {
        /// The refused point.
        point: Point,
        /// The board's size.
        size: BoardSize,
    },
    /// A stone is already there.
    #[error("{0} is already occupied")]
    Occupied(Point),
    /// The stone would have no liberties and capture nothing.
    #[error("{0} would be suicide: the stone would have no liberties")]
    Suicide(Point),
    /// Retaking a ko at once; a move elsewhere must come first.
    #[error("{0} retakes the ko immediately; play elsewhere first")]
    Ko(Point),
    /// The move would recreate an earlier whole-board position.
    #[error("{0} would repeat an earlier board position (superko)")]
    Superko(Point),
}

/// How a finished game was won.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WinBy {
    /// By counting; the margin in points (0 for a draw).
    Score(f32),
    /// The loser resigned.
    Resignation,
}

/// The result of a finished game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameResult {
    /// The winner, or `None` for a draw (possible only with whole-number
    /// komi).
    pub winner: Option<Color>,
    /// Counting margin or resignation.
    pub how: WinBy,
    /// The area count, when the game ended by passing.
    pub score: Option<AreaScore>,
    /// Human-readable summary, e.g. `White wins by 3.5` or
    /// `Black wins by resignation`.
    pub text: String,
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A game of Go: the board, whose turn it is, and everything needed to
/// apply the rules (history for superko, pass count, resignation).
#[derive(Clone, Debug)]
pub struct Game {
    board: Board,
    komi: f32,
    to_move: Color,
    history: Vec<PlayedMove>,
    /// Stones captured by Black and by White.
    captures: [u32; 2],
    /// Every whole-board position so far, for positional superko.
    seen: HashSet<u64>,
    /// Position hash after each ply, starting with the initial position;
    /// tells an immediate ko recapture apart from a longer cycle.
    hashes: Vec<u64>,
    consecutive_passes: u8,
    resigned: Option<Color>,
}

impl Game {
    /// A new game on an empty board, Black to move, komi 7.5.
    pub fn new(size: BoardSize) -> Game {
        Game::with_komi(size, DEFAULT_KOMI)
    }

    /// A new game on an empty board with the given komi for White.
    pub fn with_komi(size: BoardSize, komi: f32) -> Game {
        Game::from_board(Board::new(size), Color::Black, komi)
    }

    /// A game starting from an arbitrary (valid) position.
    pub(crate) fn from_board(board: Board, to_move: Color, komi: f32) -> Game {
        let hash = board.hash();
        Game {
            board,
            komi,
            to_move,
            history: Vec::new(),
            captures: [0, 0],
            seen: HashSet::from([hash]),
            hashes: vec![hash],
            consecutive_passes: 0,
            resigned: None,
        }
    }

    /// The board size.
    pub fn size(&self) -> BoardSize {
        self.board.size()
    }

    /// Komi for White.
    pub fn komi(&self) -> f32 {
        self.komi
    }

    /// The current stones.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The colour whose turn it is (even after the game ended: the side
    /// that would move next).
    pub fn to_move(&self) -> Color {
        self.to_move
    }

    /// Every move so far, oldest first.
    pub fn history(&self) -> &[PlayedMove] {
        &self.history
    }

    /// The most recent move, if any.
    pub fn last_move(&self) -> Option<PlayedMove> {
        self.history.last().copied()
    }

    /// Number of opponent stones `color` has captured.
    pub fn captures(&self, color: Color) -> u32 {
        self.captures[color.index()]
    }

    /// Whether two consecutive passes or a resignation ended the game.
    pub fn is_over(&self) -> bool {
        self.resigned.is_some() || self.consecutive_passes >= 2
    }

    /// Area count of the stones as they stand, with komi.
    pub fn score(&self) -> AreaScore {
        AreaScore::count(&self.board, self.komi)
    }

    /// The result, once the game is over.
    pub fn result(&self) -> Option<GameResult> {
        if let Some(loser) = self.resigned {
            let winner = loser.opponent();
            return Some(GameResult {
                winner: Some(winner),
                how: WinBy::Resignation,
                score: None,
                text: format!("{winner} wins by resignation"),
            });
        }
        if !self.is_over() {
            return None;
        }
        let score = self.score();
        Some(match score.leader() {
            Some((winner, margin)) => GameResult {
                winner: Some(winner),
                how: WinBy::Score(margin),
                score: Some(score),
                text: format!("{winner} wins by {}", format_points(margin)),
            },
            None => GameResult {
                winner: None,
                how: WinBy::Score(0.0),
                score: Some(score),
                text: "Draw (jigo)".to_owned(),
            },
        })
    }

    /// Every point the side to move may play, row-major from A1 (A1, B1,
    /// ..., A2, ...). Empty once the game is over. Passing and resigning
    /// are always possible while the game is on and are not listed.
    pub fn legal_moves(&self) -> Vec<Point> {
        if self.is_over() {
            return Vec::new();
        }
        self.board
            .all_positions()
            .filter(|&pos| self.check_pos(pos).is_ok())
            .map(|pos| self.board.point(pos))
            .collect()
    }

    /// Whether `mv` is legal now, with the reason if not.
    pub fn check(&self, mv: Move) -> Result<(), IllegalMove> {
        if self.is_over() {
            return Err(IllegalMove::GameOver);
        }
        match mv {
            Move::Play(p) => self.check_point(p).map(|_| ()),
            Move::Pass | Move::Resign => Ok(()),
        }
    }

    fn check_point(&self, p: Point) -> Result<usize, IllegalMove> {
        if !p.is_on(self.size()) {
            return Err(IllegalMove::OffBoard {
                point: p,
                size: self.size(),
            });
        }
        let pos = self.board.pos(p);
        self.check_pos(pos).map(|()| pos)
    }

    /// Legality of a stone at an on-board position, for the side to move.
    pub(crate) fn check_pos(&self, pos: usize) -> Result<(), IllegalMove> {
        let p = self.board.point(pos);
        match self.board.check(pos, self.to_move) {
            Err(BoardIllegal::Occupied) => return Err(IllegalMove::Occupied(p)),
            Err(BoardIllegal::Suicide) => return Err(IllegalMove::Suicide(p)),
            // The superko test below covers ko and names it precisely.
            Err(BoardIllegal::Ko) | Ok(()) => {}
        }
        let after = self.board.hash_after(pos, self.to_move);
        if self.seen.contains(&after) {
            let before_last = self.hashes.len().checked_sub(2).map(|i| self.hashes[i]);
            let last_was_stone = matches!(
                self.last_move(),
                Some(PlayedMove {
                    mv: Move::Play(_),
                    ..
                })
            );
            return Err(if last_was_stone && before_last == Some(after) {
                IllegalMove::Ko(p)
            } else {
                IllegalMove::Superko(p)
            });
        }
        Ok(())
    }

    /// Plays `mv` for the side to move.
    pub fn play(&mut self, mv: Move) -> Result<MoveOutcome, IllegalMove> {
        if self.is_over() {
            return Err(IllegalMove::GameOver);
        }
        let color = self.to_move;
        let mut captured = Vec::new();
        match mv {
            Move::Play(p) => {
                let pos = self.check_point(p)?;
                let board = &mut self.board;
                let mut removed = Vec::new();
                board.play(pos, color, |s| removed.push(s));
                captured = removed.into_iter().map(|s| board.point(s)).collect();
                captured.sort_by_key(|p: &Point| (p.row(), p.col()));
                self.captures[color.index()] += captured.len() as u32;
                self.consecutive_passes = 0;
                self.seen.insert(self.board.hash());
            }
            Move::Pass => self.consecutive_passes += 1,
            Move::Resign => self.resigned = Some(color),
        }
        self.hashes.push(self.board.hash());
        let played = PlayedMove { color, mv };
        self.history.push(played);
        self.to_move = color.opponent();
        Ok(MoveOutcome {
            played,
            captured,
            game_over: self.is_over(),
        })
    }
}
