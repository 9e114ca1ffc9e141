//! Single-client call latency: one connection, one light call at a time, each timed from
//! the send to the answer's arrival in the client, into an HDR histogram (1 ns to 60 s,
//! three significant digits). A warm-up comes first, unrecorded.
//!
//! [`paired`] times the server and its floor (the bare echo) **in the same minutes**: one
//! connection to each, calls made in alternating blocks ([`BLOCK`] calls to the server,
//! then as many to the echo, and so on), so whatever else the machine does while the
//! samples are taken — a build beside it, a thread that fell asleep — falls on both alike.
//! Within a block calls follow each other one at a time, so each side's threads stay as
//! awake as they would alone; the first call of a block, which wakes the side's threads
//! after the other side's turn, is not timed.
//!
//! The blocks are short so that a stall of the machine (a CPU taken away for a scheduler
//! slice: a few milliseconds, a hundred calls or more) tends to span both sides' blocks.
//! That does not remove every outlier beside a build: with blocks of 500 one run's p99
//! read ×13.9 the echo's, with blocks of 50 one read ×4.2, the other runs ×1.2–1.5
//! (issue #18).

use super::PerfError;
use super::client::{self, Answer};
use hdrhistogram::Histogram;
use mcpl_transport::Connection;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// How long one call may take before the run counts it lost.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Calls timed on one side before the other's turn ([`paired`]).
pub const BLOCK: u64 = 50;

/// The latency figures, in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Calls timed.
    pub calls: u64,
    /// Of those, answered with the light tool's text.
    pub answered: u64,
    /// The median.
    pub p50_us: f64,
    /// The 90th percentile.
    pub p90_us: f64,
    /// The 99th percentile.
    pub p99_us: f64,
    /// The 99.9th percentile.
    pub p999_us: f64,
    /// The slowest.
    pub max_us: f64,
    /// The mean.
    pub mean_us: f64,
    /// The one CPU every thread of the measurement ran on, if pinned
    /// ([`super::proc::pin_to_one_cpu`]).
    #[serde(default)]
    pub pinned_cpu: Option<usize>,
}

/// One timed connection: its calls' histogram and counts.
struct Timer {
    conn: Connection,
    histogram: Histogram<u64>,
    next_id: i64,
    calls: u64,
    answered: u64,
}

impl Timer {
    async fn open(url: &str, token: &str) -> Result<Self, PerfError> {
        let mut conn = client::connect(url, token).await?;
        client::handshake(&mut conn, false).await?;
        Ok(Timer {
            conn,
            histogram: Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
                .map_err(|_| PerfError::Internal("the histogram's bounds"))?,
            next_id: 1,
            calls: 0,
            answered: 0,
        })
    }

    /// Makes `n` calls one at a time; `record`: into the histogram and counts.
    async fn calls(&mut self, n: u64, record: bool) -> Result<(), PerfError> {
        for _ in 0..n {
            let id = self.next_id;
            self.next_id += 1;
            let sent = Instant::now();
            self.conn
                .outbound
                .send(client::light_call(id))
                .await
                .map_err(|_| PerfError::Closed("while timing calls"))?;
            let inbound = &mut self.conn.inbound;
            let answer = async {
                loop {
                    match inbound.recv().await {
                        None => return None,
                        Some(item) => match client::answer_of(&item) {
                            Some(Answer::Ok(got)) if got == id => return Some(true),
                            Some(Answer::Wrong(got)) if got == id => return Some(false),
                            _ => {}
                        },
                    }
                }
            };
            let right = tokio::time::timeout(CALL_TIMEOUT, answer)
                .await
                .map_err(|_| PerfError::Stalled("a timed call got no answer"))?
                .ok_or(PerfError::Closed("while timing calls"))?;
            let took = sent.elapsed();
            if record {
                self.calls += 1;
                self.answered += u64::from(right);
                self.histogram
                    .saturating_record(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX).max(1));
            }
        }
        Ok(())
    }

    fn figures(&self) -> Latency {
        let h = &self.histogram;
        let us = |ns: u64| ns as f64 / 1000.0;
        Latency {
            calls: self.calls,
            answered: self.answered,
            p50_us: us(h.value_at_quantile(0.50)),
            p90_us: us(h.value_at_quantile(0.90)),
            p99_us: us(h.value_at_quantile(0.99)),
            p999_us: us(h.value_at_quantile(0.999)),
            max_us: us(h.max()),
            mean_us: h.mean() / 1000.0,
            pinned_cpu: None,
        }
    }
}

/// Times `calls` light calls to the server at `url` and as many to the floor at
/// `floor_url`, in alternating blocks of [`BLOCK`] (module docs), after `warmup` untimed
/// ones each and one untimed call before every block; returns the server's figures, then
/// the floor's. Call on the client runtime.
pub async fn paired(
    url: &str,
    floor_url: &str,
    token: &str,
    warmup: u64,
    calls: u64,
) -> Result<(Latency, Latency), PerfError> {
    let mut ours = Timer::open(url, token).await?;
    let mut floor = Timer::open(floor_url, token).await?;
    ours.calls(warmup, false).await?;
    floor.calls(warmup, false).await?;
    let mut left = calls;
    while left > 0 {
        let n = left.min(BLOCK);
        for side in [&mut ours, &mut floor] {
            side.calls(1, false).await?;
            side.calls(n, true).await?;
        }
        left -= n;
    }
    Ok((ours.figures(), floor.figures()))
}
