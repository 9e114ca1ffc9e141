//! What a spectator is shown of one game: a [`GameView`], made by the game's table after
//! every step and sent to the page as JSON.

use serde::{Deserialize, Serialize};

/// One game as the spectator page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameView {
    /// The game's number in this arcade, kept across restarts (a game read back keeps it,
    /// and a new game never takes the number of one shown before).
    pub id: u64,
    /// The game's toolset: `go` or `tictactoe`.
    pub game: String,
    /// The game in words ("Go 9x9", "Tic-tac-toe").
    pub title: String,
    /// The players, the side that moves first (Black, X) first.
    pub players: [PlayerView; 2],
    /// Waiting, playing, or over.
    pub state: GameState,
    /// Moves played, passes included.
    pub moves: u64,
    /// The last move, with its side ("Black D4", "White pass", "X b2").
    pub last_move: Option<String>,
    /// Stones each side captured, by side (Go).
    pub captures: Option<[u32; 2]>,
    /// The count of a game that ended by counting (Go after two passes).
    pub score: Option<ScoreView>,
    /// The position as a standalone SVG document.
    pub svg: String,
}

impl GameView {
    /// True once the game is over.
    pub fn is_over(&self) -> bool {
        matches!(self.state, GameState::Over { .. })
    }
}

/// A seat at the game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerView {
    /// The player's name (`bot` for the arcade's bot).
    pub name: String,
    /// The side's name ("Black", "O").
    pub side: String,
    /// The arcade's bot plays this side.
    pub bot: bool,
}

/// Where a game is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum GameState {
    /// A challenge sent: the invited player has not accepted yet.
    Waiting {
        /// The invited player's side, by index (0: Black, X).
        invited: usize,
    },
    /// Under way.
    Playing {
        /// The side to move, by index (0: Black, X).
        to_move: usize,
        /// The bot is searching for its move.
        thinking: bool,
    },
    /// Over.
    Over {
        /// The result with the winner's name ("White (bot) wins by 7.5").
        result: String,
    },
}

/// One side's count (area scoring: stones on the board plus the empty points only it
/// surrounds, plus komi for White).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SideScore {
    /// Its stones on the board.
    pub stones: u32,
    /// Empty points only its stones reach.
    pub territory: u32,
    /// Komi (White's compensation for moving second); 0 for Black.
    pub komi: f32,
    /// Stones + territory + komi.
    pub total: f32,
}

/// The count of a finished game, by side.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ScoreView {
    /// By side: the first (Black), then the second (White).
    pub sides: [SideScore; 2],
    /// Empty points counted for nobody (they touch both colours).
    pub neutral: u32,
}

/// What the rules say about the position for a spectator: the part of a [`GameView`]
/// that depends on the game ([`Rules::spectacle`](crate::arcade::Rules::spectacle)).
#[derive(Debug, Clone, PartialEq)]
pub struct Spectacle {
    /// The position as a standalone SVG document.
    pub svg: String,
    /// The last move, with its side ("Black D4").
    pub last_move: Option<String>,
    /// Stones each side captured, for games that capture.
    pub captures: Option<[u32; 2]>,
    /// The count, once a game that is counted has ended by counting.
    pub score: Option<ScoreView>,
}
