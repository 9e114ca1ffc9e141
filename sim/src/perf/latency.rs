//! Single-client call latency: one connection, one light call at a time, each timed from
//! the send to the answer's arrival in the client, into an HDR histogram (1 ns to 60 s,
//! three significant digits). A warm-up comes first, unrecorded.

use super::PerfError;
use super::client::{self, Answer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// How long one call may take before the run counts it lost.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

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
}

/// Times `calls` light calls on one connection to `url` after `warmup` untimed ones. Call
/// on the client runtime.
pub async fn run(url: &str, token: &str, warmup: u64, calls: u64) -> Result<Latency, PerfError> {
    let mut conn = client::connect(url, token).await?;
    client::handshake(&mut conn, false).await?;
    let mut histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
        .map_err(|_| PerfError::Internal("the histogram's bounds"))?;
    let mut answered = 0;
    for i in 0..warmup + calls {
        let id = i64::try_from(i + 1).map_err(|_| PerfError::Config("too many calls"))?;
        let sent = Instant::now();
        conn.outbound
            .send(client::light_call(id))
            .await
            .map_err(|_| PerfError::Closed("while timing calls"))?;
        let answer = async {
            loop {
                match conn.inbound.recv().await {
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
        if i >= warmup {
            answered += u64::from(right);
            histogram.saturating_record(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX).max(1));
        }
    }
    let us = |ns: u64| ns as f64 / 1000.0;
    Ok(Latency {
        calls,
        answered,
        p50_us: us(histogram.value_at_quantile(0.50)),
        p90_us: us(histogram.value_at_quantile(0.90)),
        p99_us: us(histogram.value_at_quantile(0.99)),
        p999_us: us(histogram.value_at_quantile(0.999)),
        max_us: us(histogram.max()),
        mean_us: histogram.mean() / 1000.0,
    })
}
