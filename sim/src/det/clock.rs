//! The server's clock in the deterministic mode: a fixed start plus tokio's (paused,
//! virtual) time since the run began, so ended records' ids and times and push timestamps
//! are the same in every replay of a seed.

use mcpl_server::Clock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::time::Instant;

/// 2026-01-01T00:00:00Z, the wall time a deterministic run starts at.
pub const START: Duration = Duration::from_secs(1_767_225_600);

/// See the module docs.
#[derive(Debug, Clone, Copy)]
pub struct VirtualClock {
    start: Instant,
}

impl VirtualClock {
    /// A clock showing 2026-01-01T00:00:00Z now (tokio's now: call it inside the runtime).
    pub fn starting_now() -> Self {
        VirtualClock {
            start: Instant::now(),
        }
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> SystemTime {
        UNIX_EPOCH + START + self.start.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn it_moves_with_tokios_clock_only() {
        let c = VirtualClock::starting_now();
        assert_eq!(c.now(), UNIX_EPOCH + START);
        tokio::time::sleep(Duration::from_secs(90)).await;
        assert_eq!(c.now(), UNIX_EPOCH + START + Duration::from_secs(90));
    }
}
