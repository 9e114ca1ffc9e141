//! Pictures of final boards: Go through the arcade's own renderer, tic-tac-toe drawn here.

use mcpl_games::arcade::render::game_from_moves;
use mcpl_games::go::{BoardSize, DEFAULT_KOMI, render_svg};
use mcpl_games::tictactoe::{Cell, Game, Mark};
use std::fmt::Write as _;

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
    let mut s = String::from(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"300\" height=\"300\" viewBox=\"0 0 300 300\">\n<rect width=\"300\" height=\"300\" fill=\"#fff\"/>\n",
    );
    for i in 1..3 {
        let at = i * 100;
        let _ = writeln!(
            s,
            "<line x1=\"{at}\" y1=\"10\" x2=\"{at}\" y2=\"290\" stroke=\"#000\" stroke-width=\"4\"/>\n<line x1=\"10\" y1=\"{at}\" x2=\"290\" y2=\"{at}\" stroke=\"#000\" stroke-width=\"4\"/>"
        );
    }
    for col in 0..3u8 {
        for row in 0..3u8 {
            let Some(mark) = Cell::new(col, row).and_then(|c| game.get(c)) else {
                continue;
            };
            // Row 1 is at the bottom, as the arcade draws it.
            let (x, y) = (i32::from(col) * 100 + 50, (2 - i32::from(row)) * 100 + 50);
            match mark {
                Mark::X => {
                    let _ = writeln!(
                        s,
                        "<path d=\"M{} {} L{} {} M{} {} L{} {}\" stroke=\"#c00\" stroke-width=\"8\"/>",
                        x - 30,
                        y - 30,
                        x + 30,
                        y + 30,
                        x + 30,
                        y - 30,
                        x - 30,
                        y + 30
                    );
                }
                Mark::O => {
                    let _ = writeln!(
                        s,
                        "<circle cx=\"{x}\" cy=\"{y}\" r=\"32\" fill=\"none\" stroke=\"#00c\" stroke-width=\"8\"/>"
                    );
                }
            }
        }
    }
    s.push_str("</svg>\n");
    Some(s)
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
