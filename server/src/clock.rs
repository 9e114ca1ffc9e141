//! Where the actors get the time: a [`Clock`] passed in, never a clock call inside the
//! cores (the cores take `now` as an argument).
//!
//! The server reads its clock for ended records (`at`, expiry after the TTL, §4.3) and push
//! timestamps. [`SystemClock`] is the default; [`ManualClock`] is for tests and simulations
//! that move time themselves (an ended record expiring after an hour, without waiting one).

use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

/// A source of the current time.
pub trait Clock: Send + Sync + 'static {
    /// Now.
    fn now(&self) -> SystemTime;
}

/// The system's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that stands still until told to move.
pub struct ManualClock {
    now: Mutex<SystemTime>,
}

impl ManualClock {
    /// A clock showing `start`.
    pub fn new(start: SystemTime) -> Self {
        ManualClock {
            now: Mutex::new(start),
        }
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        *now += by;
    }

    /// Sets the clock to `to`.
    pub fn set(&self, to: SystemTime) {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner) = to;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ManualClock").field(&self.now()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn a_manual_clock_moves_only_when_told() {
        let start = UNIX_EPOCH + Duration::from_secs(1_796_040_000);
        let c = ManualClock::new(start);
        assert_eq!(c.now(), start);
        c.advance(Duration::from_secs(3600));
        assert_eq!(c.now(), start + Duration::from_secs(3600));
        c.set(start);
        assert_eq!(c.now(), start);
    }
}
