//! The reads of a server's state (§4.3, §5.2): `toolsets/list` after every connect, and
//! recovery — `toolsets/list`, then `tools/list`, one at a time.
//!
//! Each result is applied where it is read — the statement in [`HostCore::read`], the
//! list in [`HostCore::listed`] — in read order with everything else. What
//! [`HostCore::read_done`] hears is only whether the request went through, so the next step
//! can follow: a statement that moved the hint state on to its `tools/list` step gets one;
//! a failed read (an error, no answer, a stale statement) is retried after a delay through
//! [`crate::state::HintState::handle_recovery_failed`]; a lost connection ends every read
//! (the next connection starts from its own statement).

#[cfg(test)]
use super::Jitter;
use super::{Action, HostCore, MAX_RETRY_DELAY, ReadOutcome, ReadStep, index};
use std::time::{Duration, Instant};
use tracing::{debug, warn};

impl HostCore {
    /// Asks the driver for a read of the current connection's state.
    pub(super) fn start_read(&mut self, server: &str, step: ReadStep) {
        let Some(slot) = index(&self.servers, server).map(|i| &mut self.servers[i]) else {
            return;
        };
        let token = slot.start_read(step);
        self.actions.push_back(Action::Read {
            server: server.to_owned(),
            epoch: slot.epoch,
            token,
            step,
        });
    }

    /// A read asked for by [`Action::Read`] came back (its result, if any, was read first).
    pub fn read_done(
        &mut self,
        server: &str,
        epoch: u64,
        token: u64,
        step: ReadStep,
        outcome: ReadOutcome,
    ) {
        let Some(slot) = index(&self.servers, server).map(|i| &mut self.servers[i]) else {
            return;
        };
        let Some(hints) = slot
            .hints
            .as_ref()
            .filter(|_| slot.is_current_read(epoch, token))
        else {
            debug!(server, ?step, "a superseded read came back");
            return;
        };
        match outcome {
            ReadOutcome::Gone => slot.read = None,
            ReadOutcome::Failed(e) => {
                warn!(server, ?step, error = %e, "a read of the server's state failed; reading again shortly");
                self.read_failed(server, epoch, token);
            }
            ReadOutcome::Answered if step == ReadStep::Statement && hints.awaits_tools_list() => {
                slot.read_failures = 0;
                self.start_read(server, ReadStep::ToolsList);
            }
            ReadOutcome::Answered if step == ReadStep::Statement && hints.awaits_statement() => {
                // Stale, or without its statement: it did not count.
                warn!(
                    server,
                    "a toolsets/list that did not count; reading again shortly"
                );
                self.read_failed(server, epoch, token);
            }
            ReadOutcome::Answered => {
                slot.read = None;
                slot.read_failures = 0;
            }
        }
    }

    /// Reads again after the retry delay, doubling with each failure in a row up to
    /// [`MAX_RETRY_DELAY`]: a server that keeps failing (or keeps stating a stale rev)
    /// costs a bounded, falling rate of reads. A random part of the wait, at most
    /// [`CoreConfig::retry_jitter`](super::CoreConfig::retry_jitter) of it, is taken off
    /// (**\[project\]**): hosts whose reads failed together — a server too busy to answer
    /// any of them (issue #42) — read again spread out rather than all at once.
    fn read_failed(&mut self, server: &str, epoch: u64, token: u64) {
        let Some(slot) = index(&self.servers, server).map(|i| &mut self.servers[i]) else {
            return;
        };
        slot.read_failures = slot.read_failures.saturating_add(1);
        let base = retry_delay(self.config.retry_delay, slot.read_failures);
        let delay = self.jitter.cut(base, self.config.retry_jitter);
        self.actions.push_back(Action::RetryAfter {
            server: server.to_owned(),
            epoch,
            token,
            delay,
        });
    }

    /// The wait asked for by [`Action::RetryAfter`] is over: if that read is still the
    /// one under way, the hint state hears it failed (and asks for its reads again).
    pub fn retry_due(&mut self, server: &str, epoch: u64, token: u64, now: Instant) {
        if index(&self.servers, server)
            .map(|i| &self.servers[i])
            .is_some_and(|s| s.is_current_read(epoch, token))
        {
            self.feed(server, now, |h, _| h.handle_recovery_failed());
        }
    }
}

/// The wait after `failures` failed reads in a row: `first`, doubled per failure after
/// the first, at most [`MAX_RETRY_DELAY`] (or `first`, if that is longer).
pub(super) fn retry_delay(first: Duration, failures: u32) -> Duration {
    let factor = 1u32 << failures.saturating_sub(1).min(16);
    first.saturating_mul(factor).min(MAX_RETRY_DELAY.max(first))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_jitter_stays_within_its_fraction_and_repeats_per_seed() {
        let base = Duration::from_secs(2);
        for seed in 0..50u64 {
            let (mut a, mut b) = (Jitter::new(seed), Jitter::new(seed));
            for _ in 0..20 {
                let d = a.cut(base, 0.5);
                assert_eq!(d, b.cut(base, 0.5), "seed {seed}: same seed, same waits");
                assert!(
                    d > base / 2 && d <= base,
                    "seed {seed}: {d:?} outside (1 s, 2 s]"
                );
            }
        }
        let mut none = Jitter::new(1);
        assert_eq!(none.cut(base, 0.0), base, "no jitter, the wait as it is");
        assert_eq!(none.cut(base, f64::NAN), base);
        let waits: std::collections::BTreeSet<Duration> =
            (0..50u64).map(|s| Jitter::new(s).cut(base, 0.5)).collect();
        assert!(waits.len() > 45, "50 seeds, {} distinct waits", waits.len());
    }

    #[test]
    fn the_retry_delay_doubles_per_failure_up_to_its_cap() {
        let first = Duration::from_millis(500);
        let delays: Vec<u64> = (1..=8)
            .map(|n| retry_delay(first, n).as_millis() as u64)
            .collect();
        assert_eq!(delays, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
        assert_eq!(retry_delay(first, u32::MAX), MAX_RETRY_DELAY);
        // A first delay over the cap is kept as it is.
        let long = Duration::from_secs(60);
        assert_eq!(retry_delay(long, 5), long);
    }
}
