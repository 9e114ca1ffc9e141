//! Go positions from text, for pictures: a game replayed from its moves (the `Moves:` line
//! the arcade prints when a game ends), or a position read back from the ASCII board the
//! arcade shows. [`crate::go::render_svg`] then draws either; `mcpl-arcade render` is the
//! command-line front.

use crate::go::{BoardSize, Color, Game, IllegalMove, Move, ParseMoveError, SetupError};

/// Why a position could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    /// A move's text could not be read.
    #[error("move {index} ({text:?}): {error}")]
    BadMove {
        /// Its 1-based position in the list.
        index: usize,
        /// Its text.
        text: String,
        /// Why.
        error: ParseMoveError,
    },
    /// A move is not legal where it comes.
    #[error("move {index} ({mv}): {error}")]
    Illegal {
        /// Its 1-based position in the list.
        index: usize,
        /// The move.
        mv: Move,
        /// Why.
        error: IllegalMove,
    },
    /// The text holds no board rows.
    #[error("no board found: expected rows like \" 9 . . X . 9\"")]
    NoBoard,
    /// The rows do not make a position.
    #[error(transparent)]
    Setup(#[from] SetupError),
}

/// The game after `moves` (whitespace- or comma-separated, `D4`, `pass`, `resign`; Black
/// first; a leading `Moves:` is skipped), on a `size` board with `komi`.
pub fn game_from_moves(size: BoardSize, komi: f32, moves: &str) -> Result<Game, RenderError> {
    let mut game = Game::with_komi(size, komi);
    let moves = moves.trim().strip_prefix("Moves:").unwrap_or(moves);
    let words = moves
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty());
    for (i, text) in words.enumerate() {
        let index = i + 1;
        let mv = Move::parse(text, size).map_err(|error| RenderError::BadMove {
            index,
            text: text.to_owned(),
            error,
        })?;
        game.play(mv)
            .map_err(|error| RenderError::Illegal { index, mv, error })?;
    }
    Ok(game)
}

/// The position in a board as [`crate::go::render_ascii`] draws it: rows numbered on both
/// sides (the last move's parentheses are ignored), and the `… to move` line if present.
/// History is not recoverable from a picture: the result has none.
pub fn game_from_board_text(text: &str, komi: f32) -> Result<Game, RenderError> {
    let mut rows = Vec::new();
    let mut to_move = Color::Black;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("White") && trimmed.ends_with("to move") {
            to_move = Color::White;
        }
        let cleaned = trimmed.replace(['(', ')'], " ");
        let words: Vec<&str> = cleaned.split_whitespace().collect();
        let numbered = words.len() >= 3
            && words[0].parse::<u32>().is_ok()
            && words.first() == words.last()
            && words[1..words.len() - 1]
                .iter()
                .all(|w| matches!(*w, "." | "+" | "X" | "O"));
        if numbered {
            rows.push(words[1..words.len() - 1].join(" "));
        }
    }
    if rows.is_empty() {
        return Err(RenderError::NoBoard);
    }
    Ok(Game::from_diagram(&rows.join("\n"), to_move, komi)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::go::{DEFAULT_KOMI, Point, render_ascii};

    #[test]
    fn moves_replay_into_the_position() {
        let g = game_from_moves(BoardSize::Nine, DEFAULT_KOMI, "Moves: E5 C3, pass D4").unwrap();
        assert_eq!(g.history().len(), 4);
        assert_eq!(g.board().get(Point::new(4, 4)), Some(Color::Black));
        assert_eq!(g.board().get(Point::new(3, 3)), Some(Color::White));
        assert_eq!(g.to_move(), Color::Black);
        assert!(matches!(
            game_from_moves(BoardSize::Nine, 7.5, "E5 E5"),
            Err(RenderError::Illegal { index: 2, .. })
        ));
        assert!(matches!(
            game_from_moves(BoardSize::Nine, 7.5, "E5 Z1"),
            Err(RenderError::BadMove { index: 2, .. })
        ));
    }

    #[test]
    fn the_ascii_board_reads_back() {
        let g = game_from_moves(BoardSize::Nine, DEFAULT_KOMI, "E5 C3 G7").unwrap();
        let text = render_ascii(&g);
        let back =
            game_from_board_text(&text, DEFAULT_KOMI).unwrap_or_else(|e| panic!("{e}\n{text}"));
        for col in 0..9 {
            for row in 0..9 {
                let p = Point::new(col, row);
                assert_eq!(back.board().get(p), g.board().get(p), "{p}");
            }
        }
        assert_eq!(back.to_move(), Color::White);
        assert!(matches!(
            game_from_board_text("no board here", 7.5),
            Err(RenderError::NoBoard)
        ));
    }
}
