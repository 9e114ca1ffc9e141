//! Tactical rules applied before any search: capture, and rescue chains in
//! atari when a short ladder read says the rescue works.

use rand::Rng;

use crate::go::Board;
use crate::go::Color;

/// Positions a ladder read may visit; ladders on small boards are short,
/// and an unfinished read counts as an escape.
const LADDER_NODES: u32 = 400;

/// A tactical move and what it achieves.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tactic {
    pub pos: usize,
    pub captured: usize,
    pub saved: usize,
}

/// The candidate that captures plus rescues the most stones, ties broken at
/// random; `None` when no candidate does either.
pub(super) fn best_tactic<R: Rng + ?Sized>(
    board: &Board,
    me: Color,
    candidates: &[usize],
    rng: &mut R,
) -> Option<Tactic> {
    let in_atari = own_chains_in_atari(board, me);
    let mut best: Option<Tactic> = None;
    let mut ties = 0u32;
    for &pos in candidates {
        let captured = board.capture_count(pos, me);
        let touches_atari = in_atari.iter().any(|&(_, lib, _)| lib == pos);
        if captured == 0 && !touches_atari {
            continue;
        }
        let mut after = board.clone();
        after.play(pos, me, |_| {});
        let libs = after.liberties(pos, 2).count;
        // Taking stones only to be taken back bigger (snapback) gains nothing.
        if libs == 1 && after.chain_len(pos) > captured {
            continue;
        }
        let saved: usize = in_atari
            .iter()
            .filter(|&&(stone, _, _)| escaped(&after, stone))
            .map(|&(_, _, len)| len)
            .sum();
        let value = captured + saved;
        if value == 0 {
            continue;
        }
        let current = best.map_or(0, |t| t.captured + t.saved);
        if value > current {
            best = Some(Tactic {
                pos,
                captured,
                saved,
            });
            ties = 1;
        } else if value == current {
            // Reservoir sampling keeps every tied move equally likely.
            ties += 1;
            if rng.random_range(0..ties) == 0 {
                best = Some(Tactic {
                    pos,
                    captured,
                    saved,
                });
            }
        }
    }
    best
}

/// Whether a stone of `me` at `pos` would leave a chain of two or more
/// stones with a single liberty. Single-stone self-ataris stay allowed:
/// throw-ins and ko captures are useful ones.
pub(super) fn self_ataris_group(board: &Board, pos: usize, me: Color) -> bool {
    let mut after = board.clone();
    after.play(pos, me, |_| {});
    after.chain_len(pos) >= 2 && after.liberties(pos, 2).count == 1
}

/// (a stone, its only liberty, chain length) for each of `me`'s chains in
/// atari.
fn own_chains_in_atari(board: &Board, me: Color) -> Vec<(usize, usize, usize)> {
    board
        .all_positions()
        .filter(|&pos| {
            board.cell(pos).color() == Some(me)
                && board.chain_head(pos) == pos
                && board.in_atari(pos)
        })
        .map(|pos| (pos, board.liberties(pos, 1).points[0], board.chain_len(pos)))
        .collect()
}

/// Whether the chain through `stone` (which was in atari before the move
/// that produced `board`) is now safe: three or more liberties, or two that
/// a ladder cannot take away.
fn escaped(board: &Board, stone: usize) -> bool {
    if board.cell(stone).color().is_none() {
        return false;
    }
    match board.liberties(stone, 3).count {
        0 | 1 => false,
        2 => {
            let mut nodes = LADDER_NODES;
            !ladder_captures(board, stone, &mut nodes)
        }
        _ => true,
    }
}

/// Whether the attacker, moving first, captures the two-liberty chain
/// through `stone` by repeated ataris.
fn ladder_captures(board: &Board, stone: usize, nodes: &mut u32) -> bool {
    let Some(defender) = board.cell(stone).color() else {
        return true;
    };
    if *nodes == 0 {
        return false;
    }
    *nodes -= 1;
    let libs = board.liberties(stone, 3);
    if libs.count != 2 {
        return libs.count < 2;
    }
    let attacker = defender.opponent();
    libs.points[..2].iter().any(|&atari| {
        if board.check(atari, attacker).is_err() {
            return false;
        }
        let mut after = board.clone();
        after.play(atari, attacker, |_| {});
        !defender_escapes(&after, stone, nodes)
    })
}

/// Whether the defender, to move with the chain through `stone` in atari,
/// gets out by capturing an adjacent attacker chain or by extending.
fn defender_escapes(board: &Board, stone: usize, nodes: &mut u32) -> bool {
    let Some(defender) = board.cell(stone).color() else {
        return false;
    };
    if *nodes == 0 {
        return true;
    }
    *nodes -= 1;
    let libs = board.liberties(stone, 2);
    if libs.count >= 2 {
        return true;
    }
    let attacker = Some(defender.opponent());
    let mut tries: Vec<usize> = Vec::with_capacity(4);
    for s in board.chain_stones(stone) {
        for n in board.neighbors(s) {
            if board.cell(n).color() == attacker && board.in_atari(n) {
                let lib = board.liberties(n, 1).points[0];
                if !tries.contains(&lib) {
                    tries.push(lib);
                }
            }
        }
    }
    if libs.count == 1 && !tries.contains(&libs.points[0]) {
        tries.push(libs.points[0]);
    }
    tries.into_iter().any(|mv| {
        if board.check(mv, defender).is_err() {
            return false;
        }
        let mut after = board.clone();
        after.play(mv, defender, |_| {});
        match after.liberties(stone, 3).count {
            0 | 1 => false,
            2 => !ladder_captures(&after, stone, nodes),
            _ => true,
        }
    })
}
