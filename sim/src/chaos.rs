//! The chaos levels, and the Streamable HTTP delivery delays.
//!
//! | level | what |
//! |---|---|
//! | 0 | none: agents connect straight to the arcade |
//! | 1 | a proxy in front; connections cut at random (mean life 20 s); Streamable HTTP deliveries delayed per stream so hint changes arrive out of rev order, mostly within the hold window |
//! | 2 (default) | level 1, plus duplicated WebSocket frames (1 %), some delays past the hold window (expiries, recoveries), one mass drop at 40 % of the run and one server restart at 70 % |
//! | 3 | shorter lives (5 s), more delays and duplicates, a second mass drop |
//!
//! The agents on MCP 2026-07-28 with hints (`--modern-hints`, [`crate::load::hinted`]) reach
//! the arcade through a proxy of their own, with the level's random cuts (their listen
//! streams with them) and, at levels 2 and 3, **answers lost** ([`answer_loss`]): a request
//! reached the arcade and was served, and its answer is cut as it starts. Their delivery
//! delays, mass drops and restarts are the level's.
//!
//! With `--nodes N` (issue #41, [`crate::nodes`]) the arcade is N processes behind a load
//! balancer, and from level 2 a restart is a **node death** instead: a node killed
//! (SIGKILL) and started again — the owner at 25 % of the run, then the owner or a standby
//! at the level's restart (`--ownership principal`: the node running the most games, then
//! it or another) — and NATS is killed and started again at 50 %.
//!
//! Every fault stops at the drain ([`Calm`]), so the end is checked on a quiet run.

use crate::proxy::Faults;
use mcpl_transport::delivery::{Delivery, DeliveryHook, StreamOrigin};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Delays for Streamable HTTP deliveries, per kind of stream.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Delays {
    /// The chance a GET-stream message is held back, and for at most how long.
    pub get: (f64, Duration),
    /// The chance a POST response is held back, and for at most how long.
    pub post: (f64, Duration),
    /// The chance a held-back message waits past the host's hold window (250 ms) instead.
    pub late: f64,
}

/// A chaos level's plan. See the module docs.
#[derive(Debug, Clone, PartialEq)]
pub struct ChaosPlan {
    /// The level.
    pub level: u8,
    /// A proxy in front of the listeners, with these faults for WebSocket and for HTTP.
    pub proxy: Option<(Faults, Faults)>,
    /// Delays for Streamable HTTP deliveries.
    pub delays: Option<Delays>,
    /// When to cut every connection at once, as fractions of the run.
    pub mass_drops: Vec<f64>,
    /// When to restart the server, as fractions of the run.
    pub restarts: Vec<f64>,
}

impl ChaosPlan {
    /// The plan for a level (levels above 3 are 3).
    pub fn level(level: u8) -> Self {
        let faults = |life: u64, dup: f64| {
            (
                Faults {
                    mean_life: Some(Duration::from_secs(life)),
                    duplicate: dup,
                    websocket: true,
                },
                Faults {
                    mean_life: Some(Duration::from_secs(life)),
                    duplicate: 0.0,
                    websocket: false,
                },
            )
        };
        let ms = Duration::from_millis;
        match level {
            0 => ChaosPlan {
                level,
                proxy: None,
                delays: None,
                mass_drops: Vec::new(),
                restarts: Vec::new(),
            },
            1 => ChaosPlan {
                level,
                proxy: Some(faults(20, 0.0)),
                delays: Some(Delays {
                    get: (0.3, ms(150)),
                    post: (0.2, ms(80)),
                    late: 0.0,
                }),
                mass_drops: Vec::new(),
                restarts: Vec::new(),
            },
            2 => ChaosPlan {
                level,
                proxy: Some(faults(20, 0.01)),
                delays: Some(Delays {
                    get: (0.3, ms(150)),
                    post: (0.2, ms(80)),
                    late: 0.02,
                }),
                mass_drops: vec![0.4],
                restarts: vec![0.7],
            },
            _ => ChaosPlan {
                level: 3,
                proxy: Some(faults(5, 0.03)),
                delays: Some(Delays {
                    get: (0.5, ms(200)),
                    post: (0.3, ms(120)),
                    late: 0.05,
                }),
                mass_drops: vec![0.3, 0.6],
                restarts: vec![0.8],
            },
        }
    }
}

/// The chance, at chaos `level`, that an answer to a hinted modern agent is lost (its
/// connection cut as the answer starts): none below level 2, 3 % at 2, 8 % at 3.
/// **\[project\]** Modern requests each have a connection of their own, so this is the
/// share of requests whose answer is lost.
pub fn answer_loss(level: u8) -> f64 {
    match level {
        0 | 1 => 0.0,
        2 => 0.03,
        _ => 0.08,
    }
}

/// A switch every fault watches: once calm, nothing is delayed any more.
#[derive(Debug, Default)]
pub struct Calm(AtomicBool);

impl Calm {
    /// Turns faults off.
    pub fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// True once faults are off.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// How many deliveries the hooks held back.
#[derive(Debug, Default)]
pub struct DelayStats {
    /// GET-stream messages held back.
    pub get: AtomicU64,
    /// POST responses held back.
    pub post: AtomicU64,
    /// Held past the hold window.
    pub late: AtomicU64,
}

/// A delivery hook delaying one link's messages per [`Delays`], seeded, until `calm`.
pub fn delivery_hook(
    delays: Delays,
    seed: u64,
    calm: Arc<Calm>,
    stats: Arc<DelayStats>,
) -> DeliveryHook {
    seeing_hook(Some(delays), seed, calm, stats, |_| {})
}

/// A delivery hook that shows `see` each delivery, then delays it per `delays` (none: no
/// delay), seeded, until `calm`.
pub fn seeing_hook(
    delays: Option<Delays>,
    seed: u64,
    calm: Arc<Calm>,
    stats: Arc<DelayStats>,
    see: impl Fn(&Delivery<'_>) + Send + Sync + 'static,
) -> DeliveryHook {
    let rng = Mutex::new(StdRng::seed_from_u64(seed));
    DeliveryHook::new(move |d: &Delivery<'_>| {
        see(d);
        let delay = match delays {
            Some(delays) if !calm.is_set() => {
                let mut rng = rng.lock().unwrap_or_else(PoisonError::into_inner);
                sample_delay(&delays, d.origin, &mut rng, &stats)
            }
            _ => Duration::ZERO,
        };
        async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
        }
    })
}

/// How long one delivery from a stream of kind `origin` is held back per [`Delays`]
/// (often zero), counted in `stats`.
pub fn sample_delay(
    delays: &Delays,
    origin: StreamOrigin,
    rng: &mut StdRng,
    stats: &DelayStats,
) -> Duration {
    let (p, max) = match origin {
        StreamOrigin::GetStream => delays.get,
        StreamOrigin::PostResponse => delays.post,
    };
    if !rng.random_bool(p) {
        return Duration::ZERO;
    }
    match origin {
        StreamOrigin::GetStream => stats.get.fetch_add(1, Ordering::Relaxed),
        StreamOrigin::PostResponse => stats.post.fetch_add(1, Ordering::Relaxed),
    };
    if rng.random_bool(delays.late) {
        stats.late.fetch_add(1, Ordering::Relaxed);
        Duration::from_millis(rng.random_range(300..600))
    } else {
        max.mul_f64(rng.random::<f64>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_grow_and_stop_at_three() {
        assert!(ChaosPlan::level(0).proxy.is_none());
        let two = ChaosPlan::level(2);
        assert_eq!((two.mass_drops.len(), two.restarts.len()), (1, 1));
        assert_eq!(ChaosPlan::level(9).level, 3);
        assert_eq!(answer_loss(1), 0.0);
        assert!(answer_loss(3) > answer_loss(2) && answer_loss(2) > 0.0);
        assert!(
            ChaosPlan::level(3).proxy.unwrap().0.mean_life
                < ChaosPlan::level(1).proxy.unwrap().0.mean_life
        );
    }
}
