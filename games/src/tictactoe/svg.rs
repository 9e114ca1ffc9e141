//! A self-contained SVG picture of a tic-tac-toe position: the grid, the marks, the last
//! one ringed, coordinates as the arcade names cells (`a`–`c` under the columns, `1`–`3`
//! beside the rows, row 1 at the bottom), the winning line struck through, and a caption
//! saying whose turn it is or the result.

use super::{Cell, Game, Mark};
use std::fmt::Write as _;

/// Width of a cell, in SVG user units.
const CELL: i32 = 100;
/// Room left of and under the grid for the coordinates.
const MARGIN: i32 = 36;
/// Room under the coordinates for the caption.
const CAPTION: i32 = 40;

/// Draws `game` as a standalone SVG document (no fonts, images or scripts referenced).
pub fn render_svg(game: &Game) -> String {
    let status = match game.result() {
        Some(result) => result.to_string(),
        None => format!("{} to move", game.to_move()),
    };
    draw(game, &status)
}

/// [`render_svg`] for a game that ended in a way the position does not show (a player
/// resigned through the arcade's table): `result` ("O (bot) wins by resignation") is the
/// caption.
pub fn render_svg_with_result(game: &Game, result: &str) -> String {
    draw(game, result)
}

/// The picture, `status` its title and caption.
fn draw(game: &Game, status: &str) -> String {
    let width = MARGIN + 3 * CELL + 12;
    let height = 12 + 3 * CELL + MARGIN + CAPTION;
    // Names in a result come from players: escaped here.
    let status = status
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;");
    // The grid's top-left corner, and the centre of a cell (row 0 at the bottom).
    let (left, top) = (MARGIN, 12);
    let centre = |cell: Cell| {
        (
            left + i32::from(cell.col()) * CELL + CELL / 2,
            top + (2 - i32::from(cell.row())) * CELL + CELL / 2,
        )
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="Tic-tac-toe, {status}">"#
    );
    let _ = writeln!(s, "<title>Tic-tac-toe, {status}</title>");
    let _ = writeln!(
        s,
        r##"<rect width="{width}" height="{height}" fill="#fff"/>"##
    );
    for i in 1..3 {
        let x = left + i * CELL;
        let y = top + i * CELL;
        let _ = writeln!(
            s,
            r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#000" stroke-width="4"/><line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#000" stroke-width="4"/>"##,
            top + 6,
            top + 3 * CELL - 6,
            left + 6,
            left + 3 * CELL - 6
        );
    }
    let last = game.last_move();
    for col in 0..3u8 {
        for row in 0..3u8 {
            let Some(cell) = Cell::new(col, row) else {
                continue;
            };
            let Some(mark) = game.get(cell) else {
                continue;
            };
            let (x, y) = centre(cell);
            if last == Some(cell) {
                let _ = writeln!(
                    s,
                    r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#fff3b0"/>"##,
                    x - CELL / 2 + 6,
                    y - CELL / 2 + 6,
                    CELL - 12,
                    CELL - 12
                );
            }
            match mark {
                Mark::X => {
                    let _ = writeln!(
                        s,
                        r##"<path d="M{} {} L{} {} M{} {} L{} {}" stroke="#c00" stroke-width="8"/>"##,
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
                        r##"<circle cx="{x}" cy="{y}" r="32" fill="none" stroke="#00c" stroke-width="8"/>"##
                    );
                }
            }
        }
    }
    if let Some((_, [from, _, to])) = game.winning_line() {
        let ((x1, y1), (x2, y2)) = (centre(from), centre(to));
        let _ = writeln!(
            s,
            r##"<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#2a2" stroke-width="6" stroke-linecap="round" opacity="0.8"/>"##
        );
    }
    let _ = writeln!(
        s,
        r##"<g font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="16" fill="#333" text-anchor="middle" dominant-baseline="central">"##
    );
    for i in 0..3u8 {
        let letter = char::from(b'a' + i);
        let x = left + i32::from(i) * CELL + CELL / 2;
        let y = top + (2 - i32::from(i)) * CELL + CELL / 2;
        let _ = writeln!(
            s,
            r#"<text x="{x}" y="{}">{letter}</text><text x="{}" y="{y}">{}</text>"#,
            top + 3 * CELL + MARGIN / 2,
            MARGIN / 2,
            i + 1
        );
    }
    s.push_str("</g>\n");
    let _ = writeln!(
        s,
        r##"<text x="{}" y="{}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="16" font-weight="bold" fill="#333" text-anchor="middle">{status}</text>"##,
        width / 2,
        height - CAPTION / 2 + 4
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(moves: &str) -> Game {
        let mut g = Game::new();
        for m in moves.split_whitespace() {
            g.play(Cell::parse(m).unwrap()).unwrap();
        }
        g
    }

    #[test]
    fn issue43_02_a_tictactoe_picture_has_coordinates_marks_and_its_result() {
        let playing = render_svg(&game("b2 a1"));
        assert_eq!(playing.matches("<path").count(), 1, "{playing}");
        assert_eq!(playing.matches("<circle").count(), 1, "{playing}");
        for label in [">a<", ">b<", ">c<", ">1<", ">2<", ">3<"] {
            assert!(playing.contains(label), "{label} missing: {playing}");
        }
        assert!(playing.contains(">X to move</text>"), "{playing}");
        // X wins down the b column.
        let won = render_svg(&game("b2 a1 b1 c1 b3"));
        let result = game("b2 a1 b1 c1 b3").result().unwrap().to_string();
        assert!(won.contains(&format!(">{result}</text>")), "{won}");
        assert!(
            won.contains(r##"stroke="#2a2""##),
            "the winning line: {won}"
        );
    }
}
