//! A self-contained SVG picture of a Go position.

use std::fmt::Write as _;

use super::coord::{COLUMN_LETTERS, Color, Move, Point};
use super::game::Game;

/// Distance between lines, in SVG user units.
const CELL: u32 = 32;
/// Room around the grid for the coordinates.
const MARGIN: u32 = 40;

/// Room below the board for the caption: whose turn or the result, then the count of a
/// game that ended by passing (or the captures so far).
const CAPTION: u32 = 52;

/// Draws `game` as a standalone SVG document: a wooden board with grid
/// lines, star points, shaded stones, a ring on the last stone played (white
/// on a Black stone, black on a White stone), column letters and row numbers
/// on all four sides drawn over everything (issue #43: no stone hides them),
/// and a caption below the board — whose turn it is or the result, and the
/// area count of a game that ended by passing or the captures so far. No
/// external fonts, images or scripts are referenced.
pub fn render_svg(game: &Game) -> String {
    let status = match game.result() {
        Some(result) => format!("game over, {result}"),
        None => format!("{} to move", game.to_move()),
    };
    draw(game, &status)
}

/// [`render_svg`] for a game that ended in a way the position does not show (a player
/// resigned through the arcade's table, which keeps the resignation itself): `result`
/// ("Black (alice) wins by resignation") is the caption's first line.
pub fn render_svg_with_result(game: &Game, result: &str) -> String {
    draw(game, &format!("game over, {result}"))
}

/// The picture, `status` its title and its caption's first line.
fn draw(game: &Game, status: &str) -> String {
    let board = game.board();
    let size = board.size();
    let n = u32::from(size.lines());
    let extent = 2 * MARGIN + (n - 1) * CELL;
    let height = extent + CAPTION;
    let at = |i: u32| MARGIN + i * CELL;
    // SVG's y axis points down; row 0 is the bottom line.
    let y_of = |row: u8| at(n - 1 - u32::from(row));
    // Names in a result ("Black (alice) wins …") come from players: escaped here.
    let label = escape(status).replace('"', "&quot;");
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {extent} {height}" width="{extent}" height="{height}" role="img" aria-label="{size} Go board, {label}">"#
    );
    let _ = writeln!(svg, "<title>{size} Go board, {label}</title>");
    svg.push_str(concat!(
        "<defs>\n",
        r##"<linearGradient id="wood" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#e8c27a"/><stop offset="0.5" stop-color="#dcb35c"/><stop offset="1" stop-color="#c9a04a"/></linearGradient>"##,
        "\n",
        r##"<radialGradient id="black-stone" cx="0.35" cy="0.35" r="0.7"><stop offset="0" stop-color="#666"/><stop offset="1" stop-color="#0a0a0a"/></radialGradient>"##,
        "\n",
        r##"<radialGradient id="white-stone" cx="0.35" cy="0.35" r="0.7"><stop offset="0" stop-color="#ffffff"/><stop offset="1" stop-color="#cfcfcf"/></radialGradient>"##,
        "\n</defs>\n",
    ));
    let _ = writeln!(
        svg,
        r##"<rect x="0" y="0" width="{extent}" height="{height}" rx="6" fill="#f4ead2"/>"##
    );
    let _ = writeln!(
        svg,
        r##"<rect x="0" y="0" width="{extent}" height="{extent}" rx="6" fill="url(#wood)" stroke="#8a6a2a" stroke-width="2"/>"##
    );

    let (first, last) = (at(0), at(n - 1));
    svg.push_str(r##"<g stroke="#3b2a12" stroke-width="1" stroke-linecap="square">"##);
    svg.push('\n');
    for i in 0..n {
        let p = at(i);
        let _ = writeln!(svg, r#"<line x1="{first}" y1="{p}" x2="{last}" y2="{p}"/>"#);
        let _ = writeln!(svg, r#"<line x1="{p}" y1="{first}" x2="{p}" y2="{last}"/>"#);
    }
    svg.push_str("</g>\n");

    svg.push_str(r##"<g fill="#3b2a12">"##);
    svg.push('\n');
    for p in size.hoshi() {
        let _ = writeln!(
            svg,
            r#"<circle cx="{}" cy="{}" r="3.5"/>"#,
            at(u32::from(p.col())),
            y_of(p.row())
        );
    }
    svg.push_str("</g>\n");

    let radius = f64::from(CELL) * 0.47;
    for row in 0..size.lines() {
        for col in 0..size.lines() {
            let p = Point::new(col, row);
            let Some(color) = board.get(p) else { continue };
            let (fill, stroke) = match color {
                Color::Black => ("url(#black-stone)", "#000"),
                Color::White => ("url(#white-stone)", "#777"),
            };
            let _ = writeln!(
                svg,
                r#"<circle cx="{}" cy="{}" r="{radius:.1}" fill="{fill}" stroke="{stroke}" stroke-width="1"/>"#,
                at(u32::from(col)),
                y_of(row)
            );
        }
    }

    if let Some(played) = game.last_move()
        && let Move::Play(p) = played.mv
    {
        let ring = match played.color {
            Color::Black => "#fff",
            Color::White => "#000",
        };
        let _ = writeln!(
            svg,
            r#"<circle cx="{}" cy="{}" r="{:.1}" fill="none" stroke="{ring}" stroke-width="2.5"/>"#,
            at(u32::from(p.col())),
            y_of(p.row()),
            f64::from(CELL) * 0.22
        );
    }
    svg.push_str(
        r##"<g font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="14" fill="#3b2a12" text-anchor="middle" dominant-baseline="central">"##,
    );
    svg.push('\n');
    // Outside the reach of an edge stone (radius 0.47 cells from the first line).
    let near = MARGIN / 2 - 3;
    let far = extent - near;
    for i in 0..size.lines() {
        let letter = char::from(COLUMN_LETTERS[usize::from(i)]);
        let x = at(u32::from(i));
        let y = y_of(i);
        let number = u32::from(i) + 1;
        let _ = writeln!(
            svg,
            r#"<text x="{x}" y="{near}">{letter}</text><text x="{x}" y="{far}">{letter}</text>"#
        );
        let _ = writeln!(
            svg,
            r#"<text x="{near}" y="{y}">{number}</text><text x="{far}" y="{y}">{number}</text>"#
        );
    }
    svg.push_str("</g>\n");

    caption(&mut svg, game, status, extent);
    svg.push_str("</svg>\n");
    svg
}

/// The caption under the board: `status` (whose turn, or the result), then the count of
/// a game that ended by passing, or the captures so far.
fn caption(svg: &mut String, game: &Game, status: &str, extent: u32) {
    let detail = match game.result().and_then(|r| r.score) {
        Some(score) => score.to_string(),
        None => format!(
            "Captures: Black {}, White {}",
            game.captures(Color::Black),
            game.captures(Color::White)
        ),
    };
    let mid = extent / 2;
    let first = extent + 18;
    let second = extent + 38;
    let _ = writeln!(
        svg,
        r##"<g font-family="DejaVu Sans, Helvetica, Arial, sans-serif" fill="#3b2a12" text-anchor="middle"><text x="{mid}" y="{first}" font-size="15" font-weight="bold">{}</text><text x="{mid}" y="{second}" font-size="13">{}</text></g>"##,
        escape(&capitalised(status)),
        escape(&detail)
    );
}

/// `text` with its first letter upper-case ("game over, …" starts a caption).
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    })
}

/// `text` safe inside an SVG text node.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
