//! Pictures of final boards, drawn by the games' own renderers.

use mcpl_games::arcade::render::game_from_moves;
use mcpl_games::go::{BoardSize, DEFAULT_KOMI, render_svg};
use mcpl_games::tictactoe::{Cell, Game};

/// The SVG of the 9×9 Go game a `Moves: …` line records; `None` if it does not replay.
pub fn go_svg(moves: &str) -> Option<String> {
    game_from_moves(BoardSize::Nine, DEFAULT_KOMI, moves)
        .ok()
        .map(|g| render_svg(&g))
}

/// The SVG of the tic-tac-toe game a `Moves: a1 b2 …` line records.
pub fn tictactoe_svg(moves: &str) -> Option<String> {
    let mut game = Game::new();
    for m in moves.trim_start_matches("Moves:").split_whitespace() {
        game.play(Cell::parse(m).ok()?).ok()?;
    }
    Some(mcpl_games::tictactoe::render_svg(&game))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finished_games_become_pictures() {
        let go = go_svg("Moves: E5 C3 pass pass").unwrap();
        assert!(go.starts_with("<svg") && go.contains("circle"), "{go}");
        assert_eq!(go_svg("Moves: E5 E5"), None);
        let t = tictactoe_svg("Moves: b2 a1 c3").unwrap();
        assert_eq!(t.matches("<path").count(), 2);
        assert_eq!(t.matches("<circle").count(), 1);
        assert_eq!(tictactoe_svg("Moves: b2 b2"), None);
    }
}
