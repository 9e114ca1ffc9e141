//! Area scoring: stones on the board plus empty regions that touch only
//! one colour. Stones are scored as they stand, so dead stones must be
//! captured in play before the game ends.

use std::fmt;

use super::board::{Board, Cell};
use super::coord::Color;

/// The area count of a position, with komi for White.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AreaScore {
    /// Black stones plus empty points reached only by Black.
    pub black_area: u32,
    /// White stones plus empty points reached only by White.
    pub white_area: u32,
    /// Empty points that touch both colours (or none), counted for nobody.
    pub neutral: u32,
    /// Points added to White's area.
    pub komi: f32,
}

impl AreaScore {
    /// Counts `board` with `komi` for White.
    pub fn count(board: &Board, komi: f32) -> AreaScore {
        let (black_area, white_area, neutral) = area(board);
        AreaScore {
            black_area,
            white_area,
            neutral,
            komi,
        }
    }

    /// Black's total.
    pub fn black(&self) -> f32 {
        self.black_area as f32
    }

    /// White's total, including komi.
    pub fn white(&self) -> f32 {
        self.white_area as f32 + self.komi
    }

    /// The side ahead and by how much, or `None` for an exact tie (jigo).
    pub fn leader(&self) -> Option<(Color, f32)> {
        let diff = self.black() - self.white();
        if diff > 0.0 {
            Some((Color::Black, diff))
        } else if diff < 0.0 {
            Some((Color::White, -diff))
        } else {
            None
        }
    }
}

impl fmt::Display for AreaScore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Black {} (area), White {} ({} area + {} komi)",
            format_points(self.black()),
            format_points(self.white()),
            self.white_area,
            format_points(self.komi)
        )
    }
}

/// Formats a score with at most one decimal, dropping a trailing `.0`, so
/// float noise from odd komi values never shows.
pub(crate) fn format_points(x: f32) -> String {
    let text = format!("{x:.1}");
    match text.strip_suffix(".0") {
        Some(whole) => whole.to_owned(),
        None => text,
    }
}

/// (black, white, neutral) area of `board`.
pub(crate) fn area(board: &Board) -> (u32, u32, u32) {
    let mut black = 0;
    let mut white = 0;
    let mut neutral = 0;
    let mut seen = vec![false; board.cell_count()];
    let mut stack = Vec::new();
    for pos in board.all_positions() {
        match board.cell(pos) {
            Cell::Black => black += 1,
            Cell::White => white += 1,
            Cell::Empty if !seen[pos] => {
                // Flood the empty region, noting which colours border it.
                let (mut size, mut touches_black, mut touches_white) = (0, false, false);
                seen[pos] = true;
                stack.push(pos);
                while let Some(p) = stack.pop() {
                    size += 1;
                    for n in board.neighbors(p) {
                        match board.cell(n) {
                            Cell::Empty if !seen[n] => {
                                seen[n] = true;
                                stack.push(n);
                            }
                            Cell::Black => touches_black = true,
                            Cell::White => touches_white = true,
                            _ => {}
                        }
                    }
                }
                match (touches_black, touches_white) {
                    (true, false) => black += size,
                    (false, true) => white += size,
                    _ => neutral += size,
                }
            }
            _ => {}
        }
    }
    (black, white, neutral)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_points() {
        assert_eq!(format_points(3.5), "3.5");
        assert_eq!(format_points(12.0), "12");
        assert_eq!(format_points(0.700_000_05), "0.7");
    }
}
