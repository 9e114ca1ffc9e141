//! Who plays what in a deterministic run: the load run's mix ([`crate::load::policy_for`])
//! without anything that searches Go on tokio's blocking pool, whose threads the paused
//! clock does not schedule: games against the bot are tic-tac-toe (its bot is perfect and
//! instant, moving in the caller's own step), Go is played between agents only, and Go
//! moves are chosen at random from the `play` definition, never by the engine.

use crate::agent::{GameKind, Mover, Plan, Policy};
use crate::load::policy_for;
use std::time::Duration;

/// Go moves a random player makes before it only passes (so its games end).
const GO_PASS_AFTER: u32 = 20;

/// The policy of agent `i` of `n` in a deterministic run. See the module docs.
pub fn det_policy_for(i: usize, n: usize, names: &[String], think: Duration) -> Policy {
    let mut p = policy_for(i, n, names, think);
    for plan in &mut p.plans {
        if *plan == Plan::Bot(GameKind::Go9) {
            *plan = Plan::Bot(GameKind::TicTacToe);
        }
    }
    if matches!(p.go, Mover::Engine { .. }) {
        p.go = Mover::Random {
            pass_after: GO_PASS_AFTER,
        };
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_go_against_the_bot_and_no_go_engine() {
        let n = 50;
        let names: Vec<String> = (0..n).map(|i| format!("p{i:04}")).collect();
        let policies: Vec<Policy> = (0..n)
            .map(|i| det_policy_for(i, n, &names, Duration::ZERO))
            .collect();
        for p in &policies {
            assert!(!p.plans.contains(&Plan::Bot(GameKind::Go9)), "{p:?}");
            assert!(matches!(p.go, Mover::Random { .. }), "{p:?}");
        }
        // Go is still played, between agents.
        assert!(policies.iter().any(|p| p.plans.contains(&Plan::Challenge {
            opponent: Some(names[3].clone()),
            game: GameKind::Go9
        })));
    }
}
