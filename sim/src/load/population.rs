//! Who plays what in a load run: the mix of policies over the agents.

use crate::agent::{GameKind, Mover, Plan, Policy};
use std::time::Duration;

/// The policy of agent `i` of `n`: the first 40 % in pairs (even ones challenge the next,
/// odd ones accept 90 % of invitations), then random players against the bot, engine
/// players, clumsy ones, and players who challenge whoever is online.
pub fn policy_for(i: usize, n: usize, names: &[String], think: Duration) -> Policy {
    let share = |p: usize| n * p / 100;
    let pairs = share(40) & !1;
    let mut p = if i < pairs {
        let game = if (i / 2).is_multiple_of(2) {
            GameKind::TicTacToe
        } else {
            GameKind::Go9
        };
        if i.is_multiple_of(2) {
            Policy::social(game, Some(names[i + 1].clone()), 1.0)
        } else {
            Policy::host(0.9)
        }
    } else if i < pairs + share(30) {
        let game = if i.is_multiple_of(3) {
            GameKind::Go9
        } else {
            GameKind::TicTacToe
        };
        let mut p = Policy::random(game);
        p.max_open = 2;
        p.plans = vec![Plan::Bot(game), Plan::Bot(GameKind::TicTacToe)];
        p
    } else if i < pairs + share(40) {
        Policy::engine(GameKind::Go9, 24)
    } else if i < pairs + share(50) {
        Policy::clumsy(GameKind::TicTacToe, 0.2)
    } else {
        let mut p = Policy::social(GameKind::TicTacToe, None, 0.5);
        p.go = Mover::Random { pass_after: 20 };
        p
    };
    p.think = think;
    p.patience = Duration::from_secs(8);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_pair_challengers_with_their_partners() {
        let names: Vec<String> = (0..20).map(|i| format!("p{i:04}")).collect();
        let p0 = policy_for(0, 20, &names, Duration::ZERO);
        assert_eq!(
            p0.plans,
            [Plan::Challenge {
                opponent: Some("p0001".into()),
                game: GameKind::TicTacToe
            }]
        );
        assert!(policy_for(1, 20, &names, Duration::ZERO).plans.is_empty());
        assert!(policy_for(16, 20, &names, Duration::ZERO).clumsy > 0.0);
    }
}
