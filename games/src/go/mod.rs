//! The game of Go: rules, area scoring and rendering.
//!
//! Rules implemented: stones are captured when their chain has no
//! liberties, suicide is illegal, positional superko forbids recreating any
//! earlier whole-board position, two consecutive passes (or a resignation)
//! end the game, and the result is decided by area scoring plus komi on the
//! stones exactly as they stand (dead stones are not negotiated, so games
//! are meant to be played out until they are captured).
//!
//! ```
//! use mcpl_games::go::{BoardSize, Game, Move};
//!
//! let mut game = Game::new(BoardSize::Nine);
//! let mv = Move::parse("e5", BoardSize::Nine).unwrap();
//! game.play(mv).unwrap();
//! assert_eq!(game.last_move().unwrap().to_string(), "Black E5");
//! ```

mod board;
mod coord;
mod game;
mod render;
mod score;
mod setup;
mod svg;
mod zobrist;

pub use board::Board;
pub use coord::{BoardSize, Color, InvalidBoardSize, Move, ParseMoveError, Point};
pub use game::{DEFAULT_KOMI, Game, GameResult, IllegalMove, MoveOutcome, PlayedMove, WinBy};
pub use render::render_ascii;
pub use score::AreaScore;
pub use setup::SetupError;
pub use svg::{render_svg, render_svg_with_result};
