//! The reconnect delay: capped exponential backoff with jitter. Pure: no clock, and the
//! randomness comes from a seedable generator so a test or a simulator run repeats exactly.

use super::config::BackoffConfig;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::Duration;

/// The sequence of delays between connection attempts.
///
/// The base delay starts at `initial` and doubles after each use up to `max`; jitter takes
/// a random fraction of at most `jitter` off it, so the delay never exceeds `max` and
/// many hosts restarted together spread out instead of reconnecting in step.
#[derive(Debug)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    jitter: f64,
    next_base: Duration,
    rng: StdRng,
}

impl Backoff {
    /// A fresh sequence. With `config.seed` unset the generator is seeded from the OS.
    pub fn new(config: &BackoffConfig) -> Self {
        let seed = config.seed.unwrap_or_else(rand::random);
        let max = config.max.max(config.initial);
        Backoff {
            initial: config.initial,
            max,
            jitter: config.jitter.clamp(0.0, 1.0),
            next_base: config.initial,
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// The delay before the next attempt; the following one grows.
    pub fn next_delay(&mut self) -> Duration {
        let base = self.next_base;
        self.next_base = base.saturating_mul(2).min(self.max);
        if self.jitter == 0.0 {
            return base;
        }
        let cut: f64 = self.rng.random::<f64>() * self.jitter;
        base.mul_f64(1.0 - cut)
    }

    /// Starts over from `initial` (after a successful handshake).
    pub fn reset(&mut self) {
        self.next_base = self.initial;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(jitter: f64, seed: u64) -> BackoffConfig {
        BackoffConfig {
            initial: Duration::from_millis(250),
            max: Duration::from_secs(2),
            jitter,
            seed: Some(seed),
            ..Default::default()
        }
    }

    #[test]
    fn doubles_up_to_the_cap_and_resets() {
        let mut b = Backoff::new(&config(0.0, 1));
        let ms: Vec<u128> = (0..6).map(|_| b.next_delay().as_millis()).collect();
        assert_eq!(ms, [250, 500, 1000, 2000, 2000, 2000]);
        b.reset();
        assert_eq!(b.next_delay(), Duration::from_millis(250));
    }

    #[test]
    fn jitter_stays_within_its_fraction_below_the_base_and_repeats_per_seed() {
        for seed in 0..50u64 {
            let mut a = Backoff::new(&config(0.5, seed));
            let mut b = Backoff::new(&config(0.5, seed));
            let mut base = Duration::from_millis(250);
            for _ in 0..8 {
                let d = a.next_delay();
                assert_eq!(d, b.next_delay(), "seed {seed}: same seed, same delays");
                assert!(
                    d <= base && d >= base / 2,
                    "seed {seed}: {d:?} outside [{:?}, {base:?}]",
                    base / 2
                );
                base = (base * 2).min(Duration::from_secs(2));
            }
        }
    }

    #[test]
    fn different_seeds_give_different_delays() {
        let mut a = Backoff::new(&config(0.5, 1));
        let mut b = Backoff::new(&config(0.5, 2));
        let da: Vec<_> = (0..4).map(|_| a.next_delay()).collect();
        let db: Vec<_> = (0..4).map(|_| b.next_delay()).collect();
        assert_ne!(da, db);
    }

    #[test]
    fn a_max_below_initial_is_treated_as_initial() {
        let mut b = Backoff::new(&BackoffConfig {
            max: Duration::from_millis(10),
            ..config(0.0, 1)
        });
        assert_eq!(b.next_delay(), Duration::from_millis(250));
        assert_eq!(b.next_delay(), Duration::from_millis(250));
    }
}
