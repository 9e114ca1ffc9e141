//! Flat Monte-Carlo search with all-moves-as-first (AMAF / RAVE) sharing.
//!
//! Each candidate move is an arm; each sample plays that move and then a
//! random playout. Besides its own result, a playout also counts for every
//! candidate point the bot happened to play first during it (AMAF). Those
//! shared statistics are noisy but plentiful, which is what makes a few
//! hundred playouts useful on 81 candidates; as an arm's own visits grow,
//! its value shifts from the AMAF estimate to its own win rate.

use std::time::Instant;

use rand::Rng;
use rand::seq::SliceRandom;

use super::Budget;
use super::fastrng::FastRng;
use super::playout::playout;
use crate::go::{Board, Color};

/// Playouts between deadline checks: reading the clock is cheap but not
/// free, and one playout on 9×9 takes microseconds.
const CLOCK_EVERY: u32 = 16;

/// Virtual AMAF samples each arm starts with, so a lucky first playout or
/// two cannot make a move look certain.
const PRIOR_VISITS: f64 = 8.0;

/// Prior win rate of an ordinary move.
const PRIOR_NEUTRAL: f64 = 0.5;

/// Prior for a first-line move with no stone nearby: random playouts are
/// blind to how slow such moves are, which beginners would notice.
const PRIOR_EMPTY_EDGE: f64 = 0.1;

/// Own visits at which an arm's value is half its own win rate and half
/// its AMAF estimate (the RAVE equivalence parameter).
const RAVE_EQUIVALENCE: f64 = 300.0;

/// The search's preferred move and its statistics.
pub(super) struct Found {
    pub pos: usize,
    pub win_rate: f64,
    pub visits: u32,
    pub playouts: u32,
}

struct Arm {
    pos: usize,
    prior: f64,
    visits: u32,
    /// Wins count 1, ties (only possible with whole-number komi) 0.5.
    wins: f64,
    amaf_visits: u32,
    amaf_wins: f64,
}

impl Arm {
    fn win_rate(&self) -> f64 {
        if self.visits == 0 {
            0.5
        } else {
            self.wins / f64::from(self.visits)
        }
    }

    /// Blend of own and (prior-smoothed) AMAF win rates.
    fn value(&self) -> f64 {
        let n = f64::from(self.visits);
        let amaf = (self.amaf_wins + PRIOR_VISITS * self.prior)
            / (f64::from(self.amaf_visits) + PRIOR_VISITS);
        if self.visits == 0 {
            return amaf;
        }
        let beta = (RAVE_EQUIVALENCE / (3.0 * n + RAVE_EQUIVALENCE)).sqrt();
        (1.0 - beta) * self.wins / n + beta * amaf
    }
}

/// Runs playouts within `budget` and returns the most visited candidate
/// (`None` only when there are no candidates). `candidates` must be legal
/// for `me`.
pub(super) fn flat_ucb<R: Rng + ?Sized>(
    board: &Board,
    me: Color,
    komi: f32,
    candidates: &[usize],
    budget: Budget,
    exploration: f64,
    rng: &mut R,
) -> Option<Found> {
    let mut rng = FastRng::from_rng(rng);
    let mut arms: Vec<Arm> = candidates
        .iter()
        .map(|&pos| Arm {
            pos,
            prior: prior(board, pos),
            visits: 0,
            wins: 0.0,
            amaf_visits: 0,
            amaf_wins: 0.0,
        })
        .collect();
    // Ties in selection go to the earlier arm; shuffling keeps that from
    // favouring the bottom rows of the row-major candidate list.
    arms.shuffle(&mut rng);
    let mut first_mover = vec![None; board.cell_count()];
    let mut total = 0u32;
    while total < budget.playouts && !arms.is_empty() {
        if let Some(deadline) = budget.deadline
            && total.is_multiple_of(CLOCK_EVERY)
            && Instant::now() >= deadline
        {
            break;
        }
        let index = select(&arms, total, exploration);
        let pos = arms[index].pos;
        let mut scratch = board.clone();
        first_mover.fill(None);
        first_mover[pos] = Some(me);
        scratch.play(pos, me, |_| {});
        let winner = playout(
            &mut scratch,
            me.opponent(),
            komi,
            &mut first_mover,
            &mut rng,
        );
        let reward = match winner {
            Some(c) if c == me => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        };
        arms[index].visits += 1;
        arms[index].wins += reward;
        for arm in &mut arms {
            if first_mover[arm.pos] == Some(me) {
                arm.amaf_visits += 1;
                arm.amaf_wins += reward;
            }
        }
        total += 1;
    }
    // Most visits is the robust choice; the blended value breaks ties.
    let best = arms.iter().max_by(|a, b| {
        a.visits
            .cmp(&b.visits)
            .then(a.value().total_cmp(&b.value()))
    })?;
    Some(Found {
        pos: best.pos,
        win_rate: best.win_rate(),
        visits: best.visits,
        playouts: total,
    })
}

/// Highest blended value plus a UCB exploration bonus; deterministic, so
/// only playouts consume randomness. Ties go to the earlier candidate.
fn select(arms: &[Arm], total: u32, exploration: f64) -> usize {
    let log_total = f64::from(total.max(1)).ln();
    let mut best = 0;
    let mut best_score = f64::NEG_INFINITY;
    for (i, arm) in arms.iter().enumerate() {
        let bonus = exploration * (log_total / f64::from(arm.visits + 1)).sqrt();
        let score = arm.value() + bonus;
        if score > best_score {
            best = i;
            best_score = score;
        }
    }
    best
}

/// Prior win rate for playing at `pos`.
fn prior(board: &Board, pos: usize) -> f64 {
    let p = board.point(pos);
    let last = board.size().lines() - 1;
    let on_edge = p.col() == 0 || p.row() == 0 || p.col() == last || p.row() == last;
    if on_edge && !board.has_stone_within(pos, 2) {
        PRIOR_EMPTY_EDGE
    } else {
        PRIOR_NEUTRAL
    }
}
