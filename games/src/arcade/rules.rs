//! What a two-player game must say for a [`Table`](super::table) to run it: the seam
//! between the pure rules (`crate::go`, `crate::tictactoe`) and the arcade's protocol side.
//!
//! A table knows nothing of Go or tic-tac-toe: it seats two players, keeps turns, shows
//! and hides tools, and asks the rules what a move means. Each game implements [`Rules`]
//! once (`go_rules.rs`, `tictactoe_rules.rs`).

use super::BotSettings;
use super::spectate::Spectacle;
use mcpl_server::schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::fmt;

/// Who plays a new game, from the options every game has: the opponent (`None` for the
/// bot) and the side the opener takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seating {
    /// The player challenged; `None` plays the bot.
    pub opponent: Option<String>,
    /// The opener's side (the first when no colour was asked for).
    pub side: Side,
}

impl Seating {
    /// From the `opponent` and `color` options: `"bot"` (or none) plays the bot.
    pub fn new(opponent: Option<String>, side: Option<Side>) -> Self {
        Seating {
            opponent: opponent.filter(|o| o != "bot"),
            side: side.unwrap_or(Side::First),
        }
    }
}

/// A seat at a table: the side that moves first (Black, X) or second (White, O).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// Moves first: Black in Go, X in tic-tac-toe.
    First,
    /// Moves second: White in Go, O in tic-tac-toe.
    Second,
}

impl Side {
    /// The other seat.
    pub fn other(self) -> Side {
        match self {
            Side::First => Side::Second,
            Side::Second => Side::First,
        }
    }

    /// 0 for [`Side::First`], 1 for [`Side::Second`].
    pub fn index(self) -> usize {
        match self {
            Side::First => 0,
            Side::Second => 1,
        }
    }
}

/// The tool names of one game's toolset (tool names are global on a server, so each game
/// prefixes its own: `tool_names!`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolNames {
    /// The toolset.
    pub toolset: &'static str,
    /// Makes a move; visible only on your turn, its `move` an enum of the legal moves.
    pub play: &'static str,
    /// Passes (games that have passing).
    pub pass: Option<&'static str>,
    /// Gives up.
    pub resign: &'static str,
    /// Shows the position; always visible.
    pub board: &'static str,
}

/// Moves (or cells) as text, in order.
pub(crate) fn written<T: fmt::Display>(moves: impl IntoIterator<Item = T>) -> Vec<String> {
    moves.into_iter().map(|m| m.to_string()).collect()
}

/// The [`ToolNames`] of the game whose toolset is `$toolset`: each tool is named
/// `{toolset}_{tool}` (`go_play`), and `pass` is there for a game that has passing.
macro_rules! tool_names {
    ($toolset:literal) => {
        $crate::arcade::rules::ToolNames {
            toolset: $toolset,
            play: concat!($toolset, "_play"),
            pass: None,
            resign: concat!($toolset, "_resign"),
            board: concat!($toolset, "_board"),
        }
    };
    ($toolset:literal, pass) => {
        $crate::arcade::rules::ToolNames {
            pass: Some(concat!($toolset, "_pass")),
            ..tool_names!($toolset)
        }
    };
}
pub(crate) use tool_names;

/// How a finished game ended, in the rules' words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The winner; `None` for a draw.
    pub winner: Option<Side>,
    /// What the rules say ("White wins by 3.5", "X wins", "Draw"). When there is a winner
    /// it starts with the winner's side name, so the table can add the player's name.
    pub text: String,
    /// How the result was counted, when the rules count one (Go's area score: "Black 40
    /// (area), White 71.5 (64 area + 7.5 komi)"), so a player can see why (issue #43).
    pub detail: Option<String>,
}

/// How the bot will find its move.
pub enum BotPlan<M> {
    /// At once (tic-tac-toe's table lookup costs microseconds).
    Now(M),
    /// By a search that must not run on the actix arbiter: the table runs it on a
    /// blocking thread.
    Think(Box<dyn FnOnce() -> M + Send>),
}

impl<M> fmt::Debug for BotPlan<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BotPlan::Now(_) => f.write_str("BotPlan::Now"),
            BotPlan::Think(_) => f.write_str("BotPlan::Think"),
        }
    }
}

/// One game's rules, as a table uses them. Every method is pure.
pub trait Rules: Send + Sized + 'static {
    /// A move (a point, a pass).
    type Move: Copy + fmt::Display + Send + 'static;

    /// The toolset's tool names.
    const TOOLS: ToolNames;

    /// The toolset's options (`toolsets/open`, §4.2) as the open receives them: the
    /// options schema the toolset declares is derived from this type (`tools.rs`). Every
    /// member is optional, so a host without `toolHints` opens a game with none (§8).
    type Options: DeserializeOwned + JsonSchema + Send + 'static;

    /// A new game from its options, which passed the declared schema, and who plays it;
    /// an error says what is wrong.
    fn from_options(options: Self::Options) -> Result<(Self, Seating), String>;

    /// The game as titles say it ("Go 9x9", "Tic-tac-toe").
    fn title(&self) -> String;

    /// Options that describe this game to an invited player (size, komi), besides
    /// `opponent` and `color`.
    fn options(&self) -> Map<String, Value>;

    /// Each side's name and `color` option value, by [`Side::index`]
    /// (`[("Black", "black"), ("White", "white")]`).
    const SIDES: [(&'static str, &'static str); 2];

    /// The side's name ("Black", "X").
    fn side_name(side: Side) -> &'static str {
        Self::SIDES[side.index()].0
    }

    /// The side's `color` option value ("black", "x").
    fn color_option(side: Side) -> &'static str {
        Self::SIDES[side.index()].1
    }

    /// Whose turn it is.
    fn to_move(&self) -> Side;

    /// Reads a move for the side to move; the error says what is wrong.
    fn parse(&self, text: &str) -> Result<Self::Move, String>;

    /// The pass move, for games that have one.
    fn pass(&self) -> Option<Self::Move>;

    /// Plays a move for the side to move; the error says why it is illegal.
    fn play(&mut self, mv: Self::Move) -> Result<(), String>;

    /// What a move did, after "Black " ("played D4", "passed").
    fn describe(mv: Self::Move) -> String;

    /// The result, once the game is over.
    fn outcome(&self) -> Option<Outcome>;

    /// The position as text, with coordinates and the last move marked.
    fn render(&self) -> String;

    /// A line telling the side to move what it may play, if the game says so briefly.
    fn legal_summary(&self) -> Option<String>;

    /// The moves played, in order, as the players wrote them (`d4`, `pass`, `b2`).
    fn moves(&self) -> Vec<String>;

    /// The moves so far, for the final report ("Moves: D4 E5 pass ...").
    fn record(&self) -> String {
        format!("Moves: {}", self.moves().join(" "))
    }

    /// The `play` tool's input schema now: `move` an enum of the legal moves (§5.1: an
    /// instance's own definition).
    fn play_schema(&self) -> Value;

    /// The `play` tool's description beside [`Rules::play_schema`], for the side to move
    /// (an instance's own definition). It does not send the reader to the schema's list
    /// (issue #36, item 14): a host may show only part of a long `enum`, and the agent of
    /// a host without `toolHints` never sees it; it names the board tool instead.
    fn play_description(&self) -> String;

    /// The game as kept across a restart of the arcade (issue #15): what rebuilds it
    /// exactly — the board, the history, the ko and superko state, whose turn it is.
    fn save(&self) -> Value;

    /// The game [`Rules::save`] wrote; an error says what is wrong (a value of another
    /// shape, a move that is not legal where it was played).
    fn load(state: &Value) -> Result<Self, String>;

    /// What a spectator is shown of the position (issue #43, the spectator page): its
    /// picture — `result` in its caption when the game ended in a way the rules do not
    /// know of (a resignation, which the table keeps) — the last move, the captures and
    /// the count.
    fn spectacle(&self, result: Option<&str>) -> Spectacle;

    /// How the bot finds a move for the side to move; `None` once the game is over.
    fn bot(&self, settings: &BotSettings, seed: u64) -> Option<BotPlan<Self::Move>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_alternate() {
        assert_eq!(Side::First.other(), Side::Second);
        assert_eq!(Side::Second.other().index(), 0);
        assert_eq!(Side::Second.index(), 1);
    }
}
