//! Tic-tac-toe (noughts and crosses) on a 3×3 board, with a perfect bot.
//!
//! Cells are named like Go points: a column letter `a`-`c` (left to right)
//! and a row digit `1`-`3` (bottom to top), so `a1` is the bottom-left
//! corner, `b2` the centre and `c3` the top-right corner. Parsing ignores
//! case and surrounding whitespace. `X` moves first.
//!
//! ```
//! use mcpl_games::tictactoe::{Cell, Game, Mark};
//!
//! let mut game = Game::new();
//! game.play(Cell::parse("b2").unwrap()).unwrap();
//! assert_eq!(game.to_move(), Mark::O);
//! ```

mod bot;
mod svg;

use std::fmt;
use std::fmt::Write as _;

use thiserror::Error;

pub use bot::{best_moves, choose_move, value};
pub use svg::{render_svg, render_svg_with_result};

/// A player's mark. `X` moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mark {
    /// The first player.
    X,
    /// The second player.
    O,
}

impl Mark {
    /// The other mark.
    pub const fn opponent(self) -> Mark {
        match self {
            Mark::X => Mark::O,
            Mark::O => Mark::X,
        }
    }

    /// `'X'` or `'O'`.
    pub const fn symbol(self) -> char {
        match self {
            Mark::X => 'X',
            Mark::O => 'O',
        }
    }
}

impl fmt::Display for Mark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.symbol())
    }
}

/// One of the nine cells, `a1`..`c3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cell(u8);

impl Cell {
    /// All cells, row by row from `a1` (bottom-left) to `c3` (top-right).
    pub const ALL: [Cell; 9] = [
        Cell(0),
        Cell(1),
        Cell(2),
        Cell(3),
        Cell(4),
        Cell(5),
        Cell(6),
        Cell(7),
        Cell(8),
    ];

    /// The cell at zero-based `col` (0 = `a`) and `row` (0 = bottom), if
    /// both are below 3.
    pub const fn new(col: u8, row: u8) -> Option<Cell> {
        if col < 3 && row < 3 {
            Some(Cell(row * 3 + col))
        } else {
            None
        }
    }

    /// Zero-based column, 0 = `a`.
    pub const fn col(self) -> u8 {
        self.0 % 3
    }

    /// Zero-based row, 0 = the bottom row (`1`).
    pub const fn row(self) -> u8 {
        self.0 / 3
    }

    /// Position in [`Cell::ALL`], 0..9.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Parses `a1`..`c3` (any case, surrounding whitespace ignored). Never
    /// panics.
    pub fn parse(text: &str) -> Result<Cell, ParseCellError> {
        let text = text.trim();
        let mut chars = text.chars();
        let letter = chars.next().ok_or(ParseCellError::Empty)?;
        let col = match letter.to_ascii_lowercase() {
            'a' => 0,
            'b' => 1,
            'c' => 2,
            _ => return Err(ParseCellError::InvalidColumn(letter)),
        };
        let row = match chars.as_str() {
            "1" => 0,
            "2" => 1,
            "3" => 2,
            other => return Err(ParseCellError::InvalidRow(other.to_owned())),
        };
        Ok(Cell(row * 3 + col))
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", char::from(b'a' + self.col()), self.row() + 1)
    }
}

/// Why a cell name could not be read.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ParseCellError {
    /// Nothing but whitespace.
    #[error("empty cell: expected a1..c3")]
    Empty,
    /// The column is not `a`, `b` or `c`.
    #[error("invalid column {0:?}: expected a, b or c followed by 1, 2 or 3")]
    InvalidColumn(char),
    /// The row is not `1`, `2` or `3`.
    #[error("invalid row {0:?}: expected 1, 2 or 3 after the column letter")]
    InvalidRow(String),
}

/// Why [`Game::play`] refused a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum IllegalMove {
    /// Someone already won, or the board is full.
    #[error("the game is over")]
    GameOver,
    /// The cell is taken.
    #[error("{0} is already taken")]
    Occupied(Cell),
}

/// The result of a finished game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameResult {
    /// The winner, or `None` for a draw.
    pub winner: Option<Mark>,
    /// The three winning cells, if someone won.
    pub line: Option<[Cell; 3]>,
    /// `X wins`, `O wins` or `Draw`.
    pub text: String,
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The eight winning lines, by cell index.
const LINES: [[usize; 3]; 8] = [
    [0, 1, 2],
    [3, 4, 5],
    [6, 7, 8],
    [0, 3, 6],
    [1, 4, 7],
    [2, 5, 8],
    [0, 4, 8],
    [2, 4, 6],
];

/// A game of tic-tac-toe.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Game {
    cells: [Option<Mark>; 9],
    history: Vec<Cell>,
}

impl Game {
    /// An empty board, `X` to move.
    pub fn new() -> Game {
        Game::default()
    }

    /// The mark on `cell`.
    pub fn get(&self, cell: Cell) -> Option<Mark> {
        self.cells[cell.index()]
    }

    /// Whose turn it is (the side that would move next once over).
    pub fn to_move(&self) -> Mark {
        if self.history.len().is_multiple_of(2) {
            Mark::X
        } else {
            Mark::O
        }
    }

    /// Cells played so far, oldest first (`X`, `O`, `X`, ...).
    pub fn history(&self) -> &[Cell] {
        &self.history
    }

    /// The most recent move.
    pub fn last_move(&self) -> Option<Cell> {
        self.history.last().copied()
    }

    /// Empty cells in [`Cell::ALL`] order; none once the game is over.
    pub fn legal_moves(&self) -> Vec<Cell> {
        if self.is_over() {
            return Vec::new();
        }
        Cell::ALL
            .into_iter()
            .filter(|&c| self.get(c).is_none())
            .collect()
    }

    /// Puts the side to move's mark on `cell`.
    pub fn play(&mut self, cell: Cell) -> Result<(), IllegalMove> {
        if self.is_over() {
            return Err(IllegalMove::GameOver);
        }
        if self.get(cell).is_some() {
            return Err(IllegalMove::Occupied(cell));
        }
        self.cells[cell.index()] = Some(self.to_move());
        self.history.push(cell);
        Ok(())
    }

    /// The completed line and its owner, if any.
    pub fn winning_line(&self) -> Option<(Mark, [Cell; 3])> {
        LINES.iter().find_map(|&[a, b, c]| {
            let mark = self.cells[a]?;
            (self.cells[b] == Some(mark) && self.cells[c] == Some(mark))
                .then_some((mark, [a, b, c].map(|i| Cell::ALL[i])))
        })
    }

    /// The winner, if someone has three in a row.
    pub fn winner(&self) -> Option<Mark> {
        self.winning_line().map(|(mark, _)| mark)
    }

    /// Whether someone won or the board is full.
    pub fn is_over(&self) -> bool {
        self.winner().is_some() || self.history.len() == 9
    }

    /// The result, once the game is over.
    pub fn result(&self) -> Option<GameResult> {
        match self.winning_line() {
            Some((mark, line)) => Some(GameResult {
                winner: Some(mark),
                line: Some(line),
                text: format!("{mark} wins"),
            }),
            None if self.history.len() == 9 => Some(GameResult {
                winner: None,
                line: None,
                text: "Draw".to_owned(),
            }),
            None => None,
        }
    }

    /// The marks as nine cells, for the bot's table lookups.
    pub(crate) fn cells(&self) -> &[Option<Mark>; 9] {
        &self.cells
    }
}

/// Draws `game` as text: row numbers on the left (3 at the top), column
/// letters below, `X`/`O` marks, `.` for an empty cell, the last mark in
/// parentheses (as Go's board has it), then whose turn it is or the result.
///
/// ```text
///  3  X | . | O
///    ---+---+---
///  2  . | X | .
///    ---+---+---
///  1  . | . |(O)
///     a   b   c
/// X to move
/// ```
pub fn render_ascii(game: &Game) -> String {
    let mut out = String::new();
    let last = game.last_move();
    for row in (0..3u8).rev() {
        // Each cell is three characters wide: ` X ` or, the last mark, `(X)`.
        let cells: Vec<String> = (0..3u8)
            .map(|col| {
                let cell = Cell::new(col, row);
                let mark = cell.and_then(|c| game.get(c)).map_or('.', Mark::symbol);
                if cell.is_some() && cell == last {
                    format!("({mark})")
                } else {
                    format!(" {mark} ")
                }
            })
            .collect();
        let line = format!(" {} {}|{}|{}", row + 1, cells[0], cells[1], cells[2]);
        let _ = writeln!(out, "{}", line.trim_end());
        if row > 0 {
            out.push_str("   ---+---+---\n");
        }
    }
    out.push_str("    a   b   c\n");
    match game.result() {
        Some(result) => {
            let _ = writeln!(out, "{result}");
        }
        None => {
            let _ = writeln!(out, "{} to move", game.to_move());
        }
    }
    out
}

#[cfg(test)]
mod tests;
