//! Tic-tac-toe at an arcade table: [`crate::tictactoe`] behind [`Rules`]. Its bot is
//! perfect and instant (a memoised table), so it moves in the caller's own step.

use super::BotSettings;
use super::rules::{BotPlan, Outcome, Rules, Seating, Side, ToolNames, tool_names, written};
use super::spectate::Spectacle;
use crate::tictactoe::{
    Cell, Game, Mark, choose_move, render_ascii, render_svg, render_svg_with_result,
};
use mcpl_server::schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Options of a game of tic-tac-toe (the `tictactoe` toolset's options schema is derived
/// from it).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[schemars(crate = "mcpl_server::schemars")]
#[serde(deny_unknown_fields)]
pub struct TicTacToeOptions {
    /// "bot" (the default) or the name of a player to challenge: they are invited into the game
    #[schemars(length(min = 1, max = 64))]
    pub opponent: Option<String>,
    /// Your mark (default x; X moves first)
    #[serde(default)]
    #[schemars(schema_with = "mark_option")]
    pub color: Option<MarkOption>,
}

/// `color`'s schema: the two marks.
fn mark_option(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"enum": ["x", "o"]})
}

/// A `color` option of tic-tac-toe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkOption {
    /// X, who moves first.
    X,
    /// O.
    O,
}

/// A game of tic-tac-toe at a table.
#[derive(Debug, Clone, Default)]
pub struct TicTacToeRules {
    game: Game,
}

impl TicTacToeRules {
    /// The game.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The free cells (`b2`, …).
    fn legal(&self) -> Vec<String> {
        written(self.game.legal_moves())
    }
}

impl Rules for TicTacToeRules {
    type Move = Cell;

    const TOOLS: ToolNames = tool_names!("tictactoe");

    type Options = TicTacToeOptions;

    const SIDES: [(&'static str, &'static str); 2] = [("X", "x"), ("O", "o")];

    fn from_options(o: TicTacToeOptions) -> Result<(Self, Seating), String> {
        let side = o.color.map(|c| match c {
            MarkOption::X => Side::First,
            MarkOption::O => Side::Second,
        });
        Ok((TicTacToeRules::default(), Seating::new(o.opponent, side)))
    }

    fn title(&self) -> String {
        "Tic-tac-toe".to_owned()
    }

    fn options(&self) -> Map<String, Value> {
        Map::new()
    }

    fn to_move(&self) -> Side {
        self.game.to_move().into()
    }

    fn parse(&self, text: &str) -> Result<Cell, String> {
        Cell::parse(text).map_err(|e| e.to_string())
    }

    fn pass(&self) -> Option<Cell> {
        None
    }

    fn play(&mut self, mv: Cell) -> Result<(), String> {
        self.game.play(mv).map_err(|e| e.to_string())
    }

    fn describe(mv: Cell) -> String {
        format!("played {mv}")
    }

    fn outcome(&self) -> Option<Outcome> {
        self.game.result().map(|r| Outcome {
            winner: r.winner.map(Side::from),
            text: r.text,
            detail: None,
        })
    }

    fn render(&self) -> String {
        render_ascii(&self.game)
    }

    fn legal_summary(&self) -> Option<String> {
        let legal = self.legal();
        (!legal.is_empty()).then(|| format!("Free cells: {}", legal.join(", ")))
    }

    fn moves(&self) -> Vec<String> {
        written(self.game.history())
    }

    /// The moves: replaying them rebuilds the board and whose turn it is.
    fn save(&self) -> Value {
        json!({ "moves": self.moves() })
    }

    fn load(state: &Value) -> Result<Self, String> {
        #[derive(serde::Deserialize)]
        struct Kept {
            moves: Vec<String>,
        }
        let kept: Kept = serde_json::from_value(state.clone()).map_err(|e| e.to_string())?;
        let mut game = Game::new();
        for (i, text) in kept.moves.iter().enumerate() {
            let at = |e: String| format!("move {} ({text}): {e}", i + 1);
            let cell = Cell::parse(text).map_err(|e| at(e.to_string()))?;
            game.play(cell).map_err(|e| at(e.to_string()))?;
        }
        Ok(TicTacToeRules { game })
    }

    /// Says nothing of the schema's `enum` (`go_rules.rs`).
    fn play_description(&self) -> String {
        "Mark a cell: `move` is a column a-c and a row 1-3 (a1 bottom left, c3 top right). A taken cell is refused with the reason; tictactoe_board shows the position and the free cells.".to_owned()
    }

    fn play_schema(&self) -> Value {
        json!({"type": "object",
               "properties": {"move": {"type": "string", "enum": self.legal(),
                                       "description": "A free cell now: column a-c and row 1-3"}},
               "required": ["move"], "additionalProperties": false})
    }

    fn spectacle(&self, result: Option<&str>) -> Spectacle {
        let game = &self.game;
        let svg = match result {
            Some(result) if game.result().is_none() => render_svg_with_result(game, result),
            _ => render_svg(game),
        };
        // The mark of the last move is the one not to move now.
        let last_move = game
            .last_move()
            .map(|cell| format!("{} {cell}", game.to_move().opponent()));
        Spectacle {
            svg,
            last_move,
            captures: None,
            score: None,
        }
    }

    fn bot(&self, _: &BotSettings, seed: u64) -> Option<BotPlan<Cell>> {
        let mut rng = StdRng::seed_from_u64(seed);
        choose_move(&self.game, &mut rng).map(BotPlan::Now)
    }
}

/// The engine's mark to move or winning, as the table's seat.
impl From<Mark> for Side {
    fn from(v: Mark) -> Side {
        match v {
            Mark::X => Side::First,
            Mark::O => Side::Second,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_and_summary_list_the_free_cells() {
        let mut r = TicTacToeRules::default();
        r.play(r.parse("b2").unwrap()).unwrap();
        let legal = r.play_schema()["properties"]["move"]["enum"].clone();
        assert_eq!(legal.as_array().unwrap().len(), 8);
        assert!(!legal.as_array().unwrap().contains(&json!("b2")));
        assert_eq!(
            r.legal_summary().unwrap(),
            "Free cells: a1, b1, c1, a2, c2, a3, b3, c3"
        );
        assert_eq!(r.to_move(), Side::Second);
    }

    #[test]
    fn the_bot_moves_at_once_and_never_loses() {
        let settings = BotSettings::default();
        let mut r = TicTacToeRules::default();
        let mut seed = 0;
        while r.outcome().is_none() {
            let mv = match r.to_move() {
                // A weak first player: the first free cell.
                Side::First => r.game().legal_moves()[0],
                Side::Second => match r.bot(&settings, seed) {
                    Some(BotPlan::Now(mv)) => mv,
                    other => panic!("expected an instant move, got {other:?}"),
                },
            };
            r.play(mv).unwrap();
            seed += 1;
        }
        assert_ne!(r.outcome().unwrap().winner, Some(Side::First));
        assert!(r.bot(&settings, 0).is_none());
        assert!(r.record().starts_with("Moves: a1 "));
    }
}
