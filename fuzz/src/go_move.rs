//! `go_move_parse`: any text given to [`Move::parse`] on every board size, and to
//! [`Cell::parse`].
//!
//! - parsing never panics;
//! - a parsed point is on the board it was parsed for (and a cell is one of the nine);
//! - a parsed move's `Display` parses back to the same move, and printing that gives the
//!   same text (one canonical spelling);
//! - parsing is ASCII-case-insensitive;
//! - a move that parses on a board parses to the same move on every larger board.
//!
//! Bytes that are not UTF-8 are read lossily, so every input reaches the parsers.

use mcpl_games::go::{BoardSize, Move};
use mcpl_games::tictactoe::Cell;

/// Checks the properties above for one input.
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    check_text(&text);
}

/// Checks the properties above for one text.
pub fn check_text(text: &str) {
    let mut smaller: Option<Move> = None;
    for size in BoardSize::ALL {
        let parsed = Move::parse(text, size);
        if let Ok(m) = parsed {
            check_move(m, size);
        }
        for other in [text.to_ascii_uppercase(), text.to_ascii_lowercase()] {
            assert_eq!(
                Move::parse(&other, size).ok(),
                parsed.as_ref().ok().copied(),
                "case changes the move {text:?} on {size}"
            );
        }
        if let Some(m) = smaller {
            assert_eq!(
                parsed.as_ref().ok(),
                Some(&m),
                "{text:?} parses on a smaller board but not to the same move on {size}"
            );
        }
        smaller = parsed.ok();
    }
    if let Ok(c) = Cell::parse(text) {
        assert!(c.index() < 9, "cell {c:?} is off the board");
        assert_eq!(
            Cell::new(c.col(), c.row()),
            Some(c),
            "cell {c:?} coordinates"
        );
        let shown = c.to_string();
        assert_eq!(
            Cell::parse(&shown),
            Ok(c),
            "cell {shown:?} does not parse back"
        );
        assert_eq!(
            Cell::parse(&text.to_ascii_uppercase()),
            Ok(c),
            "case changes the cell {text:?}"
        );
    }
}

fn check_move(m: Move, size: BoardSize) {
    if let Move::Play(p) = m {
        assert!(p.is_on(size), "{p:?} is off the {size} board");
    }
    let shown = m.to_string();
    let back = Move::parse(&shown, size)
        .unwrap_or_else(|e| panic!("{m:?} printed as {shown:?} does not parse on {size}: {e}"));
    assert_eq!(back, m, "{shown:?} parses to another move on {size}");
    assert_eq!(back.to_string(), shown, "{m:?} has two spellings");
}
