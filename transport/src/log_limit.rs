//! Rate-limited warnings, for whatever a peer can trigger as often as it likes (a malformed
//! message, a refused push, an accept that fails while out of file descriptors).
//!
//! A [`LogLimiter`] lets through at most `burst` events per `interval`; the rest are counted,
//! and the next event let through reports how many were held back since the last one. So a
//! flood costs one line per interval plus a count, never one line per event.
//!
//! Time is an argument: the caller passes `now` (tests move it by hand).

use std::time::{Duration, Instant};

/// Lets through at most `burst` events per interval and counts the rest.
#[derive(Debug, Clone)]
pub struct LogLimiter {
    burst: u32,
    interval: Duration,
    window: Option<Instant>,
    in_window: u32,
    suppressed: u64,
}

impl LogLimiter {
    /// At most `burst` (at least 1) events per `interval`.
    pub fn new(burst: u32, interval: Duration) -> Self {
        LogLimiter {
            burst: burst.max(1),
            interval,
            window: None,
            in_window: 0,
            suppressed: 0,
        }
    }

    /// The default for per-peer warnings: 5 lines per 10 seconds.
    pub fn per_peer() -> Self {
        LogLimiter::new(5, Duration::from_secs(10))
    }

    /// One event at `now`: `Some(n)` when it may be logged, `n` being how many were held
    /// back since the last one let through; `None` when it is held back (and counted).
    pub fn admit(&mut self, now: Instant) -> Option<u64> {
        let fresh = self
            .window
            .is_none_or(|start| now.saturating_duration_since(start) >= self.interval);
        if fresh {
            self.window = Some(now);
            self.in_window = 0;
        }
        if self.in_window >= self.burst {
            self.suppressed += 1;
            return None;
        }
        self.in_window += 1;
        Some(std::mem::take(&mut self.suppressed))
    }

    /// Events held back and not yet reported.
    pub fn pending(&self) -> u64 {
        self.suppressed
    }
}

/// Logs a WARN through a [`LogLimiter`]: at most its burst per interval, the next line let
/// through carrying `suppressed = n`.
#[macro_export]
macro_rules! warn_limited {
    ($limiter:expr, $($arg:tt)+) => {
        if let Some(suppressed) = $limiter.admit(::std::time::Instant::now()) {
            ::tracing::warn!(suppressed, $($arg)+);
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_one_burst_per_interval_and_a_count() {
        let t0 = Instant::now();
        let mut l = LogLimiter::new(2, Duration::from_secs(10));
        assert_eq!(l.admit(t0), Some(0));
        assert_eq!(l.admit(t0), Some(0));
        let held = (0..50_000).filter(|_| l.admit(t0).is_none()).count();
        assert_eq!(held, 50_000);
        assert_eq!(l.pending(), 50_000);
        assert_eq!(l.admit(t0 + Duration::from_secs(9)), None);
        assert_eq!(l.admit(t0 + Duration::from_secs(10)), Some(50_001));
        assert_eq!(l.admit(t0 + Duration::from_secs(10)), Some(0));
        assert_eq!(l.admit(t0 + Duration::from_secs(11)), None);
    }
}
