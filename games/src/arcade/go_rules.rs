//! Go at an arcade table: [`crate::go`]'s rules and [`crate::bot`]'s search behind
//! [`Rules`].

use super::rules::{BotPlan, Outcome, Rules, Seating, Side, ToolNames, tool_names, written};
use super::spectate::{ScoreView, SideScore, Spectacle};
use super::{BotBudget, BotSettings};
use crate::bot::Bot;
use crate::bot::Budget;
use crate::go::{
    BoardSize, Color, DEFAULT_KOMI, Game, Move, render_ascii, render_svg, render_svg_with_result,
};
use mcpl_server::schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::time::Instant;

/// Boards up to this many lines get `move` as an enum of the legal points; larger ones a
/// pattern (19×19 would list up to 361 points on every turn).
pub const ENUM_MAX_LINES: u8 = 13;

/// The pattern `move` gets on boards too large for an enum: a column letter (no `I`) and a
/// row number, either case. Hosts never evaluate it (§6); the table checks legality.
pub const POINT_PATTERN: &str = "^[A-HJ-Ta-hj-t]([1-9]|1[0-9])$";

/// A game of Go at a table.
#[derive(Debug, Clone)]
pub struct GoRules {
    game: Game,
}

impl From<Game> for GoRules {
    /// A table's rules for a game in progress (benchmarks and tests start mid-game).
    fn from(game: Game) -> Self {
        GoRules { game }
    }
}

impl GoRules {
    /// The game.
    pub fn game(&self) -> &Game {
        &self.game
    }
}

/// Options of a game of Go (the `go` toolset's options schema is derived from it).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[schemars(crate = "mcpl_server::schemars")]
#[serde(deny_unknown_fields)]
pub struct GoOptions {
    /// "bot" (the default) or the name of a player to challenge: they are invited into the game
    #[schemars(length(min = 1, max = 64))]
    pub opponent: Option<String>,
    /// Board size (default 9)
    #[serde(default)]
    #[schemars(schema_with = "board_size")]
    pub size: Option<u32>,
    /// Points added to White's score (default 7.5)
    #[schemars(range(min = -100, max = 100))]
    pub komi: Option<f32>,
    /// Your colour (default black; Black moves first)
    #[serde(default)]
    #[schemars(schema_with = "go_color")]
    pub color: Option<GoColor>,
}

/// `size`'s schema: the sizes, with no `type`, so that a whole number written `13.0`
/// passes as it decodes (issue #36 item 11; JSON Schema validators differ on whether it
/// is an `integer`).
fn board_size(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"enum": [9, 13, 19]})
}

/// `color`'s schema: the two colours.
fn go_color(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"enum": ["black", "white"]})
}

/// A `color` option of Go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GoColor {
    /// Black, who moves first.
    Black,
    /// White.
    White,
}

impl Rules for GoRules {
    type Move = Move;

    const TOOLS: ToolNames = tool_names!("go", pass);

    type Options = GoOptions;

    const SIDES: [(&'static str, &'static str); 2] = [("Black", "black"), ("White", "white")];

    fn from_options(o: GoOptions) -> Result<(Self, Seating), String> {
        let size = match o.size {
            None => BoardSize::Nine,
            Some(n) => BoardSize::new(n).map_err(|_| "size must be 9, 13 or 19".to_owned())?,
        };
        let side = o.color.map(|c| match c {
            GoColor::Black => Side::First,
            GoColor::White => Side::Second,
        });
        let rules = GoRules {
            game: Game::with_komi(size, o.komi.unwrap_or(DEFAULT_KOMI)),
        };
        Ok((rules, Seating::new(o.opponent, side)))
    }

    fn title(&self) -> String {
        format!("Go {}", self.game.size())
    }

    fn options(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("size".into(), json!(self.game.size().lines()));
        m.insert("komi".into(), json!(self.game.komi()));
        m
    }

    fn to_move(&self) -> Side {
        self.game.to_move().into()
    }

    fn parse(&self, text: &str) -> Result<Move, String> {
        match Move::parse(text, self.game.size()) {
            Ok(Move::Resign) => Err(format!("to resign, call {}", Self::TOOLS.resign)),
            Ok(mv) => Ok(mv),
            Err(e) => Err(e.to_string()),
        }
    }

    fn pass(&self) -> Option<Move> {
        Some(Move::Pass)
    }

    fn play(&mut self, mv: Move) -> Result<(), String> {
        self.game.play(mv).map(|_| ()).map_err(|e| e.to_string())
    }

    fn describe(mv: Move) -> String {
        match mv {
            Move::Play(p) => format!("played {p}"),
            Move::Pass => "passed".to_owned(),
            Move::Resign => "resigned".to_owned(),
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        self.game.result().map(|r| Outcome {
            winner: r.winner.map(Side::from),
            text: r.text,
            detail: r.score.map(|s| s.to_string()),
        })
    }

    fn render(&self) -> String {
        render_ascii(&self.game)
    }

    fn legal_summary(&self) -> Option<String> {
        None
    }

    fn moves(&self) -> Vec<String> {
        written(self.game.history().iter().map(|m| m.mv))
    }

    /// The size, the komi and the moves: replaying them rebuilds the board, the captures
    /// and the ko and superko state exactly (they follow from the moves).
    fn save(&self) -> Value {
        json!({"size": self.game.size().lines(), "komi": self.game.komi(), "moves": self.moves()})
    }

    fn load(state: &Value) -> Result<Self, String> {
        #[derive(serde::Deserialize)]
        struct Kept {
            size: u32,
            komi: f32,
            moves: Vec<String>,
        }
        let kept: Kept = serde_json::from_value(state.clone()).map_err(|e| e.to_string())?;
        let size = BoardSize::new(kept.size)
            .map_err(|_| format!("size {} is not 9, 13 or 19", kept.size))?;
        let mut game = Game::with_komi(size, kept.komi);
        for (i, text) in kept.moves.iter().enumerate() {
            let at = |e: String| format!("move {} ({text}): {e}", i + 1);
            let mv = Move::parse(text, size).map_err(|e| at(e.to_string()))?;
            game.play(mv).map_err(|e| at(e.to_string()))?;
        }
        Ok(GoRules { game })
    }

    /// Says nothing of the schema's `enum`: a host without `toolHints` never sees it, and a
    /// host may show only part of a long one (issue #36, item 14).
    fn play_description(&self) -> String {
        "Place a stone: `move` is a point, column letter then row number (e.g. D4; there is no column I). A point that is taken or not allowed (suicide, a repeated position) is refused with the reason; go_board shows the position.".to_owned()
    }

    fn play_schema(&self) -> Value {
        let legal: Vec<String> = self
            .game
            .legal_moves()
            .iter()
            .map(ToString::to_string)
            .collect();
        let mv = if self.game.size().lines() <= ENUM_MAX_LINES && !legal.is_empty() {
            json!({"type": "string", "enum": legal,
                   "description": "A legal point now: column letter and row number"})
        } else {
            json!({"type": "string", "pattern": POINT_PATTERN,
                   "description": "An empty point: column letter (A-T, no I) and row number, e.g. D4"})
        };
        json!({"type": "object", "properties": {"move": mv}, "required": ["move"],
               "additionalProperties": false})
    }

    fn spectacle(&self, result: Option<&str>) -> Spectacle {
        let game = &self.game;
        let svg = match result {
            Some(result) if game.result().is_none() => render_svg_with_result(game, result),
            _ => render_svg(game),
        };
        let score = game.result().and_then(|r| r.score).map(|count| {
            let side = |color: Color, area: u32, komi: f32, total: f32| {
                let stones = game.board().stone_count(color) as u32;
                SideScore {
                    stones,
                    territory: area.saturating_sub(stones),
                    komi,
                    total,
                }
            };
            ScoreView {
                sides: [
                    side(Color::Black, count.black_area, 0.0, count.black()),
                    side(Color::White, count.white_area, count.komi, count.white()),
                ],
                neutral: count.neutral,
            }
        });
        Spectacle {
            svg,
            last_move: game.last_move().map(|m| format!("{} {}", m.color, m.mv)),
            captures: Some([game.captures(Color::Black), game.captures(Color::White)]),
            score,
        }
    }

    fn bot(&self, settings: &BotSettings, seed: u64) -> Option<BotPlan<Move>> {
        if self.game.is_over() {
            return None;
        }
        let game = self.game.clone();
        let budget = settings.budget;
        Some(BotPlan::Think(Box::new(move || {
            let budget = match budget {
                BotBudget::Playouts(n) => Budget::playouts(n),
                // The time is per 9×9 move; larger boards get it in proportion to their
                // points. The deadline starts when the search does, not when it was asked.
                BotBudget::Time(per_9x9) => {
                    let scale = game.size().points() as f64 / BoardSize::Nine.points() as f64;
                    Budget::until(Instant::now() + per_9x9.mul_f64(scale))
                }
            };
            let mut rng = StdRng::seed_from_u64(seed);
            Bot::new().choose_move(&game, budget, &mut rng).mv
        })))
    }
}

/// The engine's color to move or winning, as the table's seat.
impl From<Color> for Side {
    fn from(v: Color) -> Side {
        match v {
            Color::Black => Side::First,
            Color::White => Side::Second,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(options: Value) -> Result<(GoRules, Seating), String> {
        let options: GoOptions = serde_json::from_value(options).map_err(|e| e.to_string())?;
        GoRules::from_options(options)
    }

    fn rules(options: Value) -> GoRules {
        from(options).unwrap().0
    }

    #[test]
    fn a_kept_game_replays_to_the_same_position_and_ko_and_a_bad_one_says_why() {
        let mut r = rules(json!({"size": 9, "komi": 6.5}));
        for m in ["D4", "E4", "E5", "F5", "pass", "D5"] {
            let mv = r.parse(m).unwrap_or(Move::Pass);
            r.play(mv).unwrap();
        }
        let back = GoRules::load(&r.save()).unwrap();
        assert_eq!(back.render(), r.render());
        assert_eq!(back.to_move(), r.to_move());
        assert_eq!(
            back.play_schema(),
            r.play_schema(),
            "the same legal moves (ko included)"
        );
        assert_eq!(back.game().komi(), 6.5);
        let bad = json!({"size": 9, "komi": 7.5, "moves": ["D4", "D4"]});
        let e = GoRules::load(&bad).unwrap_err();
        assert!(e.starts_with("move 2 (D4):"), "{e}");
        assert!(GoRules::load(&json!({"size": 10, "komi": 7.5, "moves": []})).is_err());
        assert!(GoRules::load(&json!("nonsense")).is_err());
    }

    #[test]
    fn options_choose_the_board_and_komi() {
        let r = rules(json!({}));
        assert_eq!(r.game().size(), BoardSize::Nine);
        assert_eq!(r.game().komi(), DEFAULT_KOMI);
        let r = rules(json!({"size": 13, "komi": 0.5}));
        assert_eq!(r.title(), "Go 13x13");
        assert_eq!(
            r.options(),
            *json!({"size": 13, "komi": 0.5}).as_object().unwrap()
        );
        assert!(from(json!({"size": 10})).is_err());
        assert!(from(json!({"size": "big"})).is_err());
        assert!(from(json!({"komi": "none"})).is_err());
        // A member it does not know is refused, as the derived schema refuses it.
        assert!(from(json!({"size": 19, "clock": "none"})).is_err());
    }

    #[test]
    fn options_seat_the_opener() {
        let (_, seating) = from(json!({})).unwrap();
        assert_eq!(seating, Seating::new(None, None));
        assert_eq!(seating.side, Side::First);
        let (_, seating) = from(json!({"opponent": "bot", "color": "white"})).unwrap();
        assert_eq!((seating.opponent, seating.side), (None, Side::Second));
        let (_, seating) = from(json!({"opponent": "bob", "color": "black"})).unwrap();
        assert_eq!(
            (seating.opponent.as_deref(), seating.side),
            (Some("bob"), Side::First)
        );
        assert!(from(json!({"color": "x"})).is_err());
    }

    #[test]
    fn the_play_schema_lists_legal_points_on_small_boards() {
        let mut r = rules(json!({}));
        let s = r.play_schema();
        assert_eq!(
            s["properties"]["move"]["enum"].as_array().unwrap().len(),
            81
        );
        r.play(r.parse("e5").unwrap()).unwrap();
        let s = r.play_schema();
        let legal = s["properties"]["move"]["enum"].as_array().unwrap();
        assert_eq!(legal.len(), 80);
        assert!(!legal.contains(&json!("E5")));
        let big = rules(json!({"size": 19}));
        assert_eq!(
            big.play_schema()["properties"]["move"]["pattern"],
            POINT_PATTERN
        );
    }

    #[test]
    fn moves_are_read_described_and_resigning_has_its_own_tool() {
        let r = rules(json!({}));
        assert_eq!(GoRules::describe(r.parse("d4").unwrap()), "played D4");
        assert_eq!(GoRules::describe(r.parse("PASS").unwrap()), "passed");
        assert!(r.parse("resign").unwrap_err().contains("go_resign"));
        assert!(r.parse("Z9").is_err());
    }

    #[test]
    fn two_passes_end_with_an_outcome_naming_the_winner_first() {
        let mut r = rules(json!({"komi": 7.5}));
        r.play(Move::Pass).unwrap();
        assert_eq!(r.outcome(), None);
        r.play(Move::Pass).unwrap();
        let o = r.outcome().unwrap();
        assert_eq!(o.winner, Some(Side::Second));
        assert_eq!(o.text, "White wins by 7.5");
        assert_eq!(r.record(), "Moves: pass pass");
    }

    #[test]
    fn a_playout_budget_makes_the_bot_deterministic() {
        let r = rules(json!({}));
        let settings = BotSettings {
            budget: BotBudget::Playouts(50),
            seed: Some(1),
        };
        let run = |seed| match r.bot(&settings, seed) {
            Some(BotPlan::Think(f)) => f(),
            other => panic!("expected a search, got {other:?}"),
        };
        assert_eq!(run(7), run(7));
    }
}
