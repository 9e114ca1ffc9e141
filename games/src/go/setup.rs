//! Building a position from a text diagram, for puzzles and tests.

use thiserror::Error;

use super::board::Board;
use super::coord::{BoardSize, Color, InvalidBoardSize, Point};
use super::game::Game;

/// Why a diagram could not be turned into a position.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SetupError {
    /// The number of rows is not a supported board size.
    #[error(transparent)]
    Size(#[from] InvalidBoardSize),
    /// A row's length differs from the number of rows.
    #[error("diagram row {row} (from the top) has {found} points, expected {expected}")]
    RaggedRow {
        /// 1-based row index from the top of the diagram.
        row: usize,
        /// Points found on that row.
        found: usize,
        /// Points expected (the number of rows).
        expected: usize,
    },
    /// A character other than `X`, `O`, `.`, `+` or whitespace.
    #[error("unexpected character {0:?} in diagram: use X, O, . or +")]
    BadChar(char),
    /// A chain in the diagram has no liberties, which play can never produce.
    #[error("the chain at {0} has no liberties")]
    NoLiberties(Point),
}

impl Game {
    /// A game starting from `diagram`: one line per row, top row first,
    /// `X` Black, `O` White, `.` or `+` empty, whitespace ignored, blank
    /// lines skipped. The number of rows sets the board size. The history
    /// starts empty, and the diagram's position counts as already seen for
    /// superko.
    ///
    /// ```
    /// use mcpl_games::go::{Color, Game, Point};
    ///
    /// let rows = [". . . . . . . . ."; 9].join("\n");
    /// let game = Game::from_diagram(&rows, Color::White, 6.5).unwrap();
    /// assert_eq!(game.to_move(), Color::White);
    /// assert_eq!(game.board().get(Point::new(0, 0)), None);
    /// ```
    pub fn from_diagram(diagram: &str, to_move: Color, komi: f32) -> Result<Game, SetupError> {
        let rows: Vec<Vec<char>> = diagram
            .lines()
            .map(|line| {
                line.chars()
                    .filter(|c| !c.is_whitespace())
                    .collect::<Vec<_>>()
            })
            .filter(|row| !row.is_empty())
            .collect();
        let count = u32::try_from(rows.len()).unwrap_or(u32::MAX);
        let size = BoardSize::new(count)?;
        let n = usize::from(size.lines());
        let mut board = Board::new(size);
        for (i, row) in rows.iter().enumerate() {
            if row.len() != n {
                return Err(SetupError::RaggedRow {
                    row: i + 1,
                    found: row.len(),
                    expected: n,
                });
            }
            for (col, &c) in row.iter().enumerate() {
                let color = match c {
                    'X' | 'x' => Color::Black,
                    'O' | 'o' => Color::White,
                    '.' | '+' => continue,
                    other => return Err(SetupError::BadChar(other)),
                };
                // `n` is at most 19, so both indices fit in a u8.
                let p = Point::new(col as u8, (n - 1 - i) as u8);
                board.place(board.pos(p), color);
            }
        }
        for pos in board.all_positions() {
            if board.cell(pos).color().is_some() && board.pseudo_liberties(pos) == 0 {
                return Err(SetupError::NoLiberties(board.point(pos)));
            }
        }
        Ok(Game::from_board(board, to_move, komi))
    }
}
