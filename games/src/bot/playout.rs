//! Random playouts: both sides play random legal non-eye moves until
//! neither has one, then the board is counted.

use rand::Rng;

use crate::go::{Board, Color};

/// Runs a random game from `board` with `to_move` to play and returns the
/// winner by area count with `komi` (`None` for a tie). `first_mover`
/// (indexed by board cell) records who played each empty point first:
/// cells still `None` are set as moves are made, feeding all-moves-as-first
/// statistics.
pub(super) fn playout<R: Rng + ?Sized>(
    board: &mut Board,
    mut to_move: Color,
    komi: f32,
    first_mover: &mut [Option<Color>],
    rng: &mut R,
) -> Option<Color> {
    // Superko is ignored in playouts; this cap ends the rare long cycle.
    let max_moves = board.size().points() * 3;
    let mut passes = 0;
    for _ in 0..max_moves {
        match random_move(board, to_move, rng) {
            Some(pos) => {
                first_mover[pos].get_or_insert(to_move);
                board.play(pos, to_move, |_| {});
                passes = 0;
            }
            None => {
                passes += 1;
                if passes == 2 {
                    break;
                }
            }
        }
        to_move = to_move.opponent();
    }
    super::area_winner(board, komi)
}

/// A random legal point for `color` that is not its own eye. Scans the
/// empty points from a random start, which is slightly biased towards
/// points after illegal ones but far cheaper than collecting all moves.
pub(super) fn random_move<R: Rng + ?Sized>(
    board: &Board,
    color: Color,
    rng: &mut R,
) -> Option<usize> {
    let empties = board.empties();
    let n = empties.len();
    if n == 0 {
        return None;
    }
    let start = rng.random_range(0..n);
    (0..n)
        .map(|i| usize::from(empties[(start + i) % n]))
        .find(|&pos| !board.is_eye(pos, color) && board.check(pos, color).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::go::BoardSize;
    use rand::{SeedableRng, rngs::StdRng};

    #[test]
    fn playouts_end_with_only_eyes_left() {
        let seed = 11;
        let mut rng = StdRng::seed_from_u64(seed);
        for size in BoardSize::ALL {
            for _ in 0..5 {
                let mut board = Board::new(size);
                let mut first = vec![None; board.cell_count()];
                playout(&mut board, Color::Black, 7.5, &mut first, &mut rng);
                assert!(first.contains(&Some(Color::Black)));
                assert!(first.contains(&Some(Color::White)));
                for color in [Color::Black, Color::White] {
                    assert_eq!(
                        random_move(&board, color, &mut rng),
                        None,
                        "seed {seed}, {size}"
                    );
                }
                // Nearly every point ends up owned, so area counting is exact.
                let score = crate::go::AreaScore::count(&board, 7.5);
                assert!(
                    score.neutral * 10 < size.points() as u32,
                    "seed {seed}: {score}"
                );
            }
        }
    }
}
