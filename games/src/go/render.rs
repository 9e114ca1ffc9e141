//! Plain-text rendering of a Go position for terminals and chat.

use std::fmt::Write as _;

use super::coord::{COLUMN_LETTERS, Color, Move, Point};
use super::game::Game;

/// Draws `game` as text.
///
/// - Column letters run along the top and bottom, row numbers (1 at the
///   bottom) down both sides.
/// - `X` is a Black stone, `O` a White stone, `.` an empty point and `+` an
///   empty star point (hoshi).
/// - The last stone played is wrapped in parentheses, e.g. `.(X).`.
/// - Below the board: captures for each side, the last move, and either
///   whose turn it is or the result.
///
/// ```text
///    A B C D E F G H J
///  9 . . . . . . . . .  9
///  8 . . . . . . . . .  8
///  7 . . + . . . + . .  7
///  6 . . . . . . . . .  6
///  5 . . . .(X). . . .  5
///  4 . . . . . . . . .  4
///  3 . . + . . . + . .  3
///  2 . . . . . . . . .  2
///  1 . . . . . . . . .  1
///    A B C D E F G H J
/// Captures: Black (X) 0, White (O) 0
/// Last move: Black E5
/// White (O) to move
/// ```
pub fn render_ascii(game: &Game) -> String {
    let board = game.board();
    let size = board.size();
    let n = size.lines();
    let hoshi = size.hoshi();
    let marked = match game.last_move() {
        Some(played) => match played.mv {
            Move::Play(p) => Some(p),
            _ => None,
        },
        None => None,
    };

    let mut letters = String::from("  ");
    for &c in &COLUMN_LETTERS[..usize::from(n)] {
        letters.push(' ');
        letters.push(char::from(c));
    }

    let mut out = String::new();
    out.push_str(&letters);
    out.push('\n');
    for row in (0..n).rev() {
        let number = u32::from(row) + 1;
        let _ = write!(out, "{number:>2}");
        for col in 0..n {
            let p = Point::new(col, row);
            let open = if marked == Some(p) {
                '('
            } else if col > 0 && marked == Some(Point::new(col - 1, row)) {
                ')'
            } else {
                ' '
            };
            out.push(open);
            out.push(match board.get(p) {
                Some(color) => color.symbol(),
                None if hoshi.contains(&p) => '+',
                None => '.',
            });
        }
        let close = if marked == Some(Point::new(n - 1, row)) {
            ')'
        } else {
            ' '
        };
        let _ = writeln!(out, "{close} {number}");
    }
    out.push_str(&letters);
    out.push('\n');

    let _ = writeln!(
        out,
        "Captures: Black (X) {}, White (O) {}",
        game.captures(Color::Black),
        game.captures(Color::White)
    );
    if let Some(last) = game.last_move() {
        let _ = writeln!(out, "Last move: {last}");
    }
    match game.result() {
        Some(result) => {
            let _ = writeln!(out, "Game over: {result}");
        }
        None => {
            let side = game.to_move();
            let _ = writeln!(out, "{side} ({}) to move", side.symbol());
        }
    }
    out
}
