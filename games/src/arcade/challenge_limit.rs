//! How often one player may challenge the same other player: each challenge pushes an
//! invitation to every connection of the invitee (§4.6), and withdrawing it (resigning
//! before the invitee joined) costs nothing, so without a bound a challenger could push
//! hundreds a second at someone.
//!
//! **\[project\]** (RFC-014 §4.6 and SPEC §9 set no rate for invitations or pushes): at
//! most [`MAX_PER_WINDOW`] challenges from one player to the same invitee in any
//! [`WINDOW`]; past it the challenge is refused with the time until the oldest one leaves
//! the window. A refused challenge is not counted, and other pairs are not affected.
//!
//! Pure: the time is an argument.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, SystemTime};

/// The most challenges from one player to the same invitee in a [`WINDOW`].
pub const MAX_PER_WINDOW: usize = 5;

/// The sliding window [`MAX_PER_WINDOW`] counts in.
pub const WINDOW: Duration = Duration::from_secs(10 * 60);

/// The challenges sent recently, per (challenger, invitee).
#[derive(Debug, Default)]
pub struct ChallengeLimit {
    sent: BTreeMap<(String, String), VecDeque<SystemTime>>,
}

impl ChallengeLimit {
    /// Counts a challenge from `challenger` to `invitee` at `now`, or refuses it: `Err`
    /// holds how long until one more is allowed.
    pub fn admit(
        &mut self,
        challenger: &str,
        invitee: &str,
        now: SystemTime,
    ) -> Result<(), Duration> {
        // Forget what left the window, for every pair: the map holds only pairs active in
        // the last WINDOW, at most MAX_PER_WINDOW times each.
        self.sent.retain(|_, times| {
            while times.front().is_some_and(|t| age(*t, now) >= WINDOW) {
                times.pop_front();
            }
            !times.is_empty()
        });
        let times = self
            .sent
            .entry((challenger.to_owned(), invitee.to_owned()))
            .or_default();
        if times.len() >= MAX_PER_WINDOW {
            let oldest = times.front().copied().unwrap_or(now);
            return Err(WINDOW.saturating_sub(age(oldest, now)));
        }
        times.push_back(now);
        Ok(())
    }
}

/// How long ago `then` was; a clock that went back counts as no time.
fn age(then: SystemTime, now: SystemTime) -> Duration {
    now.duration_since(then).unwrap_or(Duration::ZERO)
}

/// A wait in words, rounded up to the second ("4 min 10 s", "12 s").
pub fn wait_text(wait: Duration) -> String {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let secs = secs.max(1);
    match (secs / 60, secs % 60) {
        (0, s) => format!("{s} s"),
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 + secs)
    }

    #[test]
    fn a_pair_gets_its_bound_per_window_and_is_told_when_to_try_again() {
        let mut l = ChallengeLimit::default();
        for i in 0..MAX_PER_WINDOW as u64 {
            assert_eq!(l.admit("alice", "bob", at(i * 10)), Ok(()));
        }
        // The oldest (at 0) leaves the window at WINDOW.
        assert_eq!(
            l.admit("alice", "bob", at(100)),
            Err(WINDOW - Duration::from_secs(100))
        );
        // Refusals do not count: the wait does not grow.
        assert_eq!(
            l.admit("alice", "bob", at(200)),
            Err(WINDOW - Duration::from_secs(200))
        );
        // Other pairs are not affected.
        assert_eq!(l.admit("alice", "carol", at(200)), Ok(()));
        assert_eq!(l.admit("bob", "alice", at(200)), Ok(()));
        // Once the oldest left, one more.
        let w = WINDOW.as_secs();
        assert_eq!(l.admit("alice", "bob", at(w)), Ok(()));
        assert_eq!(l.admit("alice", "bob", at(w)), Err(Duration::from_secs(10)));
    }

    #[test]
    fn pairs_quiet_for_a_window_are_forgotten() {
        let mut l = ChallengeLimit::default();
        l.admit("alice", "bob", at(0)).unwrap();
        l.admit("carol", "bob", at(0)).unwrap();
        assert_eq!(l.sent.len(), 2);
        l.admit("dave", "bob", at(WINDOW.as_secs())).unwrap();
        assert_eq!(l.sent.len(), 1);
    }

    #[test]
    fn a_clock_that_goes_back_does_not_open_the_bound() {
        let mut l = ChallengeLimit::default();
        for _ in 0..MAX_PER_WINDOW {
            l.admit("alice", "bob", at(500)).unwrap();
        }
        assert_eq!(l.admit("alice", "bob", at(0)), Err(WINDOW));
    }

    #[test]
    fn waits_are_said_in_whole_seconds_rounded_up() {
        assert_eq!(wait_text(Duration::from_millis(10)), "1 s");
        assert_eq!(wait_text(Duration::from_secs(12)), "12 s");
        assert_eq!(wait_text(Duration::from_secs(240)), "4 min");
        assert_eq!(wait_text(Duration::from_millis(249_500)), "4 min 10 s");
    }
}
