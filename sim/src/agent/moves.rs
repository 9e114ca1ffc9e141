//! Choosing a move from what an agent was shown: a legal move from the `play` tool's
//! current definition (its `move` enum, §5.1), or the arcade's own engines on a position
//! rebuilt from the board text the game's `board` tool answered. Pure and seeded.

use mcpl_games::arcade::render::game_from_board_text;
use mcpl_games::bot::{Bot, Budget};
use mcpl_games::go::{DEFAULT_KOMI, Move};
use mcpl_games::tictactoe::{self, Cell};
use rand::Rng;
use rand::rngs::StdRng;
use serde_json::Value;

/// The legal moves a `play` definition lists (`inputSchema.properties.move.enum`).
pub fn legal_moves(input_schema: &Value) -> Vec<String> {
    input_schema["properties"]["move"]["enum"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// A uniformly random legal move.
pub fn random_move(legal: &[String], rng: &mut StdRng) -> Option<String> {
    (!legal.is_empty()).then(|| legal[rng.random_range(0..legal.len())].clone())
}

/// What the Go engine chose: a point, a pass, or resigning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoChoice {
    /// Play this point (`D4`).
    Play(String),
    /// Pass.
    Pass,
    /// Resign.
    Resign,
}

/// The arcade's bot engine on the position a `go_board` answer shows, with `playouts` of
/// search. `opponent_passed` restores the one bit of history the picture loses, so the
/// engine may pass to end a game it wins. `None` when the text holds no board.
pub fn go_engine_move(
    board_text: &str,
    opponent_passed: bool,
    playouts: u32,
    rng: &mut StdRng,
) -> Option<GoChoice> {
    let game = game_from_board_text(board_text, DEFAULT_KOMI).ok()?;
    let game = if opponent_passed {
        // The same stones with the opponent to move, then its pass.
        let me_white = board_text
            .lines()
            .any(|l| l.trim().starts_with("White") && l.trim().ends_with("to move"));
        let flipped: String = if me_white {
            board_text
                .lines()
                .filter(|l| !(l.trim().starts_with("White") && l.trim().ends_with("to move")))
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            format!("{board_text}\nWhite to move")
        };
        let mut g = game_from_board_text(&flipped, DEFAULT_KOMI).ok()?;
        g.play(Move::Pass).ok()?;
        g
    } else {
        game
    };
    let decision = Bot::new().choose_move(&game, Budget::playouts(playouts), rng);
    Some(match decision.mv {
        Move::Play(p) => GoChoice::Play(p.to_string()),
        Move::Pass => GoChoice::Pass,
        Move::Resign => GoChoice::Resign,
    })
}

/// Perfect tic-tac-toe on the position a `tictactoe_board` answer shows (rows like
/// ` 3  X | . | O`). `None` when the text holds no position or it is over.
pub fn tictactoe_move(board_text: &str, rng: &mut StdRng) -> Option<String> {
    let mut xs = Vec::new();
    let mut os = Vec::new();
    let mut rows = 0;
    for line in board_text.lines() {
        // The last mark is in parentheses (` 1  . | . |(O)`): a cell like any other here.
        let line = line.replace(['(', ')'], " ");
        let t = line.trim_start();
        let Some((row, rest)) = t.split_once("  ") else {
            continue;
        };
        let Ok(row) = row.parse::<u8>() else { continue };
        let marks: Vec<&str> = rest.split('|').map(str::trim).collect();
        if marks.len() != 3 || !(1..=3).contains(&row) {
            continue;
        }
        rows += 1;
        for (col, m) in marks.iter().enumerate() {
            let cell = Cell::new(col as u8, row - 1)?;
            match *m {
                "X" => xs.push(cell),
                "O" => os.push(cell),
                _ => {}
            }
        }
    }
    if rows != 3 || (xs.len() != os.len() && xs.len() != os.len() + 1) {
        return None;
    }
    // Marks only accumulate and the game is not over, so any interleaving replays it.
    let mut game = tictactoe::Game::new();
    for (i, x) in xs.iter().enumerate() {
        game.play(*x).ok()?;
        if let Some(o) = os.get(i) {
            game.play(*o).ok()?;
        }
    }
    tictactoe::choose_move(&game, rng).map(|c| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_games::arcade::render::game_from_moves;
    use mcpl_games::go::{BoardSize, render_ascii};
    use rand::SeedableRng;
    use serde_json::json;

    #[test]
    fn legal_moves_come_from_the_definitions_enum() {
        let s = json!({"properties": {"move": {"enum": ["a1", "b2"]}}});
        assert_eq!(legal_moves(&s), ["a1", "b2"]);
        assert!(legal_moves(&json!({"properties": {"move": {"pattern": "x"}}})).is_empty());
        let mut rng = StdRng::seed_from_u64(7);
        let m = random_move(&legal_moves(&s), &mut rng).unwrap();
        assert!(m == "a1" || m == "b2");
        assert_eq!(random_move(&[], &mut rng), None);
    }

    #[test]
    fn the_go_engine_answers_an_atari_by_capturing() {
        // White E5 in atari: Black captures at the last liberty.
        let g = game_from_moves(BoardSize::Nine, DEFAULT_KOMI, "D5 E5 F5 A1 E6 A2").unwrap();
        let text = render_ascii(&g);
        let mut rng = StdRng::seed_from_u64(1);
        assert_eq!(
            go_engine_move(&text, false, 16, &mut rng),
            Some(GoChoice::Play("E4".into()))
        );
        assert_eq!(go_engine_move("no board", false, 16, &mut rng), None);
    }

    #[test]
    fn the_go_engine_passes_after_a_pass_when_it_wins() {
        // Black owns the board but for a white stone in atari: after White's pass Black
        // may end the game.
        let g = game_from_moves(BoardSize::Nine, DEFAULT_KOMI, "E5 pass D5 pass").unwrap();
        let text = render_ascii(&g);
        let mut rng = StdRng::seed_from_u64(1);
        let without = go_engine_move(&text, false, 8, &mut rng);
        assert!(matches!(without, Some(GoChoice::Play(_))), "{without:?}");
        // With White's pass restored, Black leads on the board and passes to win.
        assert_eq!(
            go_engine_move(&text, true, 8, &mut rng),
            Some(GoChoice::Pass)
        );
    }

    #[test]
    fn tictactoe_takes_the_win_it_is_shown() {
        let mut g = tictactoe::Game::new();
        for c in ["a1", "b1", "a2", "b2"] {
            g.play(Cell::parse(c).unwrap()).unwrap();
        }
        let text = tictactoe::render_ascii(&g);
        let mut rng = StdRng::seed_from_u64(3);
        assert_eq!(tictactoe_move(&text, &mut rng).as_deref(), Some("a3"));
        assert_eq!(tictactoe_move("nothing", &mut rng), None);
    }
}
