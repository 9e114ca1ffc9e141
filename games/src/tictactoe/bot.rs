//! Perfect play by negamax over every reachable position.
//!
//! Tic-tac-toe has only 5,478 reachable positions, so the first query
//! solves them all into a table (a few milliseconds) and every later query
//! is a lookup. Values prefer faster wins and slower losses, so the bot
//! finishes a won game promptly and makes a lost one as long as possible.

use std::sync::OnceLock;

use rand::Rng;

use super::{Cell, Game, LINES, Mark};

/// Positions are encoded in base 3 (0 empty, 1 X, 2 O), cell `i` as digit `i`.
const STATES: usize = 19_683;

/// Marks a table slot for a position that is not reachable.
const UNKNOWN: i8 = i8::MIN;

/// The game-theoretic value of `game` for the side to move: positive if it
/// can force a win, negative if the opponent can, 0 for a draw with best
/// play. The magnitude is one more than the number of empty cells left when
/// the game ends, so quicker wins score higher.
pub fn value(game: &Game) -> i8 {
    lookup(game.cells())
}

/// Every move that keeps the best achievable value for the side to move,
/// in [`Cell::ALL`] order. Empty once the game is over.
pub fn best_moves(game: &Game) -> Vec<Cell> {
    let cells = game.cells();
    let mover = game.to_move();
    let scored: Vec<(Cell, i8)> = game
        .legal_moves()
        .into_iter()
        .map(|cell| {
            let mut next = *cells;
            next[cell.index()] = Some(mover);
            (cell, -lookup(&next))
        })
        .collect();
    let Some(best) = scored.iter().map(|&(_, v)| v).max() else {
        return Vec::new();
    };
    scored
        .into_iter()
        .filter(|&(_, v)| v == best)
        .map(|(cell, _)| cell)
        .collect()
}

/// A perfect move, chosen at random among equally good ones so that games
/// against the bot vary. `None` once the game is over.
pub fn choose_move<R: Rng + ?Sized>(game: &Game, rng: &mut R) -> Option<Cell> {
    let moves = best_moves(game);
    if moves.is_empty() {
        None
    } else {
        Some(moves[rng.random_range(0..moves.len())])
    }
}

fn lookup(cells: &[Option<Mark>; 9]) -> i8 {
    let v = table()[encode(cells)];
    // `Game` can only reach positions the solver visited; recompute rather
    // than trust a sentinel should that ever change.
    if v == UNKNOWN {
        solve(cells, &mut vec![UNKNOWN; STATES])
    } else {
        v
    }
}

fn table() -> &'static [i8] {
    static TABLE: OnceLock<Vec<i8>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = vec![UNKNOWN; STATES];
        solve(&[None; 9], &mut table);
        table
    })
}

fn encode(cells: &[Option<Mark>; 9]) -> usize {
    cells.iter().rev().fold(0, |acc, c| {
        acc * 3
            + match c {
                None => 0,
                Some(Mark::X) => 1,
                Some(Mark::O) => 2,
            }
    })
}

fn solve(cells: &[Option<Mark>; 9], table: &mut [i8]) -> i8 {
    let key = encode(cells);
    if table[key] != UNKNOWN {
        return table[key];
    }
    let empty = cells.iter().filter(|c| c.is_none()).count();
    let won = LINES
        .iter()
        .any(|&[a, b, c]| cells[a].is_some() && cells[a] == cells[b] && cells[b] == cells[c]);
    let v = if won {
        // Only the player who just moved can have completed a line.
        -(empty as i8 + 1)
    } else if empty == 0 {
        0
    } else {
        let mover = if empty % 2 == 1 { Mark::X } else { Mark::O };
        let mut best = i8::MIN + 1;
        for i in 0..9 {
            if cells[i].is_none() {
                let mut next = *cells;
                next[i] = Some(mover);
                best = best.max(-solve(&next, table));
            }
        }
        best
    };
    table[key] = v;
    v
}
