//! Board sizes, colours, points and moves, and their text form.
//!
//! Points are written like `D4`: a column letter `A`..`T` that skips `I`
//! (so `A`-`H`, `J`-`T`, as on printed boards) followed by a row number
//! counted from 1 at the bottom. Parsing is case-insensitive and ignores
//! surrounding whitespace; `pass` and `resign` are moves too.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// Column letters in board order; `I` is skipped because it is easily
/// confused with `J` and `1` on printed boards.
pub(crate) const COLUMN_LETTERS: &[u8; 19] = b"ABCDEFGHJKLMNOPQRST";

/// The board sizes this crate supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoardSize {
    /// 9×9, the beginner board.
    Nine,
    /// 13×13.
    Thirteen,
    /// 19×19, the full board.
    Nineteen,
}

/// A board size other than 9, 13 or 19 was requested.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("unsupported board size {0}: expected 9, 13 or 19")]
pub struct InvalidBoardSize(pub u32);

impl BoardSize {
    /// Every supported size, smallest first.
    pub const ALL: [BoardSize; 3] = [BoardSize::Nine, BoardSize::Thirteen, BoardSize::Nineteen];

    /// The size with `n` lines, or an error unless `n` is 9, 13 or 19.
    pub fn new(n: u32) -> Result<Self, InvalidBoardSize> {
        match n {
            9 => Ok(BoardSize::Nine),
            13 => Ok(BoardSize::Thirteen),
            19 => Ok(BoardSize::Nineteen),
            other => Err(InvalidBoardSize(other)),
        }
    }

    /// Number of lines in each direction.
    pub const fn lines(self) -> u8 {
        match self {
            BoardSize::Nine => 9,
            BoardSize::Thirteen => 13,
            BoardSize::Nineteen => 19,
        }
    }

    /// Number of intersections on the board.
    pub const fn points(self) -> usize {
        let n = self.lines() as usize;
        n * n
    }

    /// The star points (hoshi) conventionally marked on this board.
    pub fn hoshi(self) -> Vec<Point> {
        let (lo, hi, mid) = match self {
            BoardSize::Nine => (2, 6, 4),
            BoardSize::Thirteen => (3, 9, 6),
            BoardSize::Nineteen => (3, 15, 9),
        };
        let lines: &[u8] = match self {
            // Only the 19×19 board has side star points.
            BoardSize::Nineteen => &[lo, mid, hi],
            _ => &[lo, hi],
        };
        let mut points: Vec<Point> = lines
            .iter()
            .flat_map(|&r| lines.iter().map(move |&c| Point::new(c, r)))
            .collect();
        if self != BoardSize::Nineteen {
            points.push(Point::new(mid, mid));
        }
        points
    }
}

impl TryFrom<u32> for BoardSize {
    type Error = InvalidBoardSize;

    fn try_from(n: u32) -> Result<Self, Self::Error> {
        BoardSize::new(n)
    }
}

impl fmt::Display for BoardSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.lines();
        write!(f, "{n}x{n}")
    }
}

/// A player's colour. Black moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Color {
    /// The first player, drawn as `X` in text.
    Black,
    /// The second player, drawn as `O` in text; receives komi.
    White,
}

impl Color {
    /// The other colour.
    pub const fn opponent(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    /// `"Black"` or `"White"`.
    pub const fn name(self) -> &'static str {
        match self {
            Color::Black => "Black",
            Color::White => "White",
        }
    }

    /// The stone character used by [`render_ascii`](crate::go::render_ascii):
    /// `X` for Black, `O` for White.
    pub const fn symbol(self) -> char {
        match self {
            Color::Black => 'X',
            Color::White => 'O',
        }
    }

    /// 0 for Black, 1 for White; indexes per-colour arrays.
    pub(crate) const fn index(self) -> usize {
        match self {
            Color::Black => 0,
            Color::White => 1,
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An intersection, zero-based: column 0 is `A`, row 0 is the bottom row
/// (`1` in text). A `Point` is not tied to a board size; moves off the
/// board are refused when played.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point {
    col: u8,
    row: u8,
}

impl Point {
    /// The point at zero-based `col` (0 = `A`) and `row` (0 = bottom row).
    pub const fn new(col: u8, row: u8) -> Self {
        Point { col, row }
    }

    /// Zero-based column, 0 = `A`.
    pub const fn col(self) -> u8 {
        self.col
    }

    /// Zero-based row, 0 = the bottom row (`1` in text).
    pub const fn row(self) -> u8 {
        self.row
    }

    /// Whether the point lies on a board of `size`.
    pub const fn is_on(self, size: BoardSize) -> bool {
        self.col < size.lines() && self.row < size.lines()
    }

    /// Parses text like `D4` or ` q16 ` as a point on a board of `size`.
    pub fn parse(text: &str, size: BoardSize) -> Result<Point, ParseMoveError> {
        let text = text.trim();
        let mut chars = text.chars();
        let letter = chars.next().ok_or(ParseMoveError::Empty)?;
        let upper = letter.to_ascii_uppercase();
        let col = COLUMN_LETTERS
            .iter()
            .position(|&c| char::from(c) == upper)
            .ok_or(ParseMoveError::InvalidColumn(letter))?;
        let lines = size.lines();
        if col >= usize::from(lines) {
            return Err(ParseMoveError::ColumnOffBoard {
                column: upper,
                size: lines,
            });
        }
        let digits = chars.as_str();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ParseMoveError::InvalidRow(digits.to_owned()));
        }
        // Digits only, so the sole parse failure is overflow: off the board.
        let row = digits.parse::<u32>().unwrap_or(u32::MAX);
        if row == 0 || row > u32::from(lines) {
            return Err(ParseMoveError::RowOffBoard {
                row: digits.to_owned(),
                size: lines,
            });
        }
        // Both bounds were checked against `lines`, which is at most 19.
        Ok(Point::new(col as u8, (row - 1) as u8))
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match COLUMN_LETTERS.get(usize::from(self.col)) {
            Some(&letter) => write!(f, "{}{}", char::from(letter), u32::from(self.row) + 1),
            // Points are freely constructible, so one may lie beyond `T`.
            None => write!(f, "col{}-row{}", self.col, u32::from(self.row) + 1),
        }
    }
}

/// One turn's action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    /// Place a stone.
    Play(Point),
    /// Pass; two consecutive passes end the game.
    Pass,
    /// Give up; the opponent wins.
    Resign,
}

impl Move {
    /// Parses `D4`, `pass` or `resign` (any case, surrounding whitespace
    /// ignored) for a board of `size`. Never panics.
    pub fn parse(text: &str, size: BoardSize) -> Result<Move, ParseMoveError> {
        let trimmed = text.trim();
        if trimmed.eq_ignore_ascii_case("pass") {
            Ok(Move::Pass)
        } else if trimmed.eq_ignore_ascii_case("resign") {
            Ok(Move::Resign)
        } else {
            Point::parse(trimmed, size).map(Move::Play)
        }
    }
}

impl From<Point> for Move {
    fn from(p: Point) -> Self {
        Move::Play(p)
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Move::Play(p) => p.fmt(f),
            Move::Pass => f.write_str("pass"),
            Move::Resign => f.write_str("resign"),
        }
    }
}

/// Why a move's text could not be read.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ParseMoveError {
    /// Nothing but whitespace was given.
    #[error("empty move: expected a point like D4, or pass, or resign")]
    Empty,
    /// The first character is not a column letter (`I` is never one).
    #[error("invalid column {0:?}: expected a letter A-T without I, or pass, or resign")]
    InvalidColumn(char),
    /// The column letter is valid but beyond this board's edge.
    #[error("column {column} is off the {size}x{size} board")]
    ColumnOffBoard {
        /// The column letter, upper-cased.
        column: char,
        /// Lines on the board.
        size: u8,
    },
    /// What follows the column letter is not a row number.
    #[error("invalid row {0:?}: expected a number after the column letter")]
    InvalidRow(String),
    /// The row number is 0 or beyond this board's edge.
    #[error("row {row} is off the {size}x{size} board")]
    RowOffBoard {
        /// The row digits as given.
        row: String,
        /// Lines on the board.
        size: u8,
    },
}

impl FromStr for BoardSize {
    type Err = InvalidBoardSize;

    /// Reads `9`, `13`, `19` (or `9x9` and the like); text that is not a
    /// number is reported as size 0.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let n = s.split(['x', 'X']).next().unwrap_or(s).trim();
        let value = n.parse::<u32>().map_err(|_| InvalidBoardSize(0))?;
        BoardSize::new(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_points_case_insensitively_and_trimmed() {
        let s = BoardSize::Nineteen;
        assert_eq!(Point::parse("D4", s), Ok(Point::new(3, 3)));
        assert_eq!(Point::parse("  d4\t", s), Ok(Point::new(3, 3)));
        assert_eq!(Point::parse("A1", s), Ok(Point::new(0, 0)));
        assert_eq!(Point::parse("J1", s), Ok(Point::new(8, 0)));
        assert_eq!(Point::parse("t19", s), Ok(Point::new(18, 18)));
        assert_eq!(Move::parse(" PASS ", s), Ok(Move::Pass));
        assert_eq!(Move::parse("Resign", s), Ok(Move::Resign));
    }

    #[test]
    fn rejects_bad_points_with_specific_errors() {
        let s = BoardSize::Nine;
        assert_eq!(Point::parse("", s), Err(ParseMoveError::Empty));
        assert_eq!(
            Point::parse("I5", s),
            Err(ParseMoveError::InvalidColumn('I'))
        );
        assert_eq!(
            Point::parse("5D", s),
            Err(ParseMoveError::InvalidColumn('5'))
        );
        assert_eq!(
            Point::parse("K5", s),
            Err(ParseMoveError::ColumnOffBoard {
                column: 'K',
                size: 9
            })
        );
        assert_eq!(
            Point::parse("D", s),
            Err(ParseMoveError::InvalidRow(String::new()))
        );
        assert_eq!(
            Point::parse("D+4", s),
            Err(ParseMoveError::InvalidRow("+4".into()))
        );
        assert_eq!(
            Point::parse("D0", s),
            Err(ParseMoveError::RowOffBoard {
                row: "0".into(),
                size: 9
            })
        );
        assert!(matches!(
            Point::parse("D99999999999999999999", s),
            Err(ParseMoveError::RowOffBoard { .. })
        ));
    }

    #[test]
    fn display_round_trips() {
        for size in BoardSize::ALL {
            let n = size.lines();
            for row in 0..n {
                for col in 0..n {
                    let p = Point::new(col, row);
                    assert_eq!(Point::parse(&p.to_string(), size), Ok(p));
                }
            }
        }
    }

    #[test]
    fn board_sizes() {
        assert_eq!(BoardSize::new(13), Ok(BoardSize::Thirteen));
        assert_eq!(BoardSize::new(10), Err(InvalidBoardSize(10)));
        assert_eq!("19x19".parse::<BoardSize>(), Ok(BoardSize::Nineteen));
        assert_eq!(BoardSize::Nine.hoshi().len(), 5);
        assert_eq!(BoardSize::Thirteen.hoshi().len(), 5);
        assert_eq!(BoardSize::Nineteen.hoshi().len(), 9);
    }

    proptest! {
        #[test]
        fn move_parser_never_panics(text in any::<String>()) {
            for size in BoardSize::ALL {
                let _ = Move::parse(&text, size);
            }
        }

        #[test]
        fn move_parser_never_panics_on_near_misses(text in "[ \\t]*[A-Za-z\u{e9}\u{131}]?[0-9+\\-\u{0663}]{0,25}[ \\t]*") {
            for size in BoardSize::ALL {
                if let Ok(Move::Play(p)) = Move::parse(&text, size) {
                    prop_assert!(p.is_on(size));
                }
            }
        }
    }
}
