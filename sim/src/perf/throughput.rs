//! Light `tools/call` per second across many connections, pipelined: each connection keeps
//! `in_flight` calls outstanding, sending the next as each answer comes.
//!
//! Every connection is made and initialized first; then all start at once. With a
//! duration, the rate is what was answered between the end of the warm-up and the end
//! of the window (the counter is read at both); then no new call is sent, and what is
//! outstanding is awaited. With a call budget (tests), each connection sends its share
//! and the rate is the total over the elapsed time. Either way every call must be
//! answered once, with the light tool's text: the counts say so.

use super::PerfError;
use super::client::{self, Answer};
use super::proc;
use mcpl_transport::Connection;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How long a connection may wait for any answer before it counts as stalled.
const STALL: Duration = Duration::from_secs(30);

/// How much load, and for how long.
#[derive(Debug, Clone)]
pub struct LoadShape {
    /// Connections, each its own principal.
    pub connections: usize,
    /// Calls outstanding per connection.
    pub in_flight: usize,
    /// Unmeasured time first.
    pub warmup: Duration,
    /// The measured window.
    pub window: Duration,
    /// Instead of a window: this many calls in all, shared out over the connections.
    pub calls: Option<u64>,
}

/// What a run of load did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// Connections.
    pub connections: usize,
    /// Calls outstanding per connection.
    pub in_flight_per_connection: usize,
    /// Calls outstanding in all.
    pub in_flight: usize,
    /// Calls sent.
    pub sent: u64,
    /// Answers with the light tool's text.
    pub answered: u64,
    /// Answers that were errors, or not the light tool's.
    pub wrong: u64,
    /// Responses to no outstanding call (a duplicate, or an unknown id).
    pub unexpected: u64,
    /// Calls never answered (a connection closed or stalled).
    pub lost: u64,
    /// Calls answered in the measured window.
    pub measured_calls: u64,
    /// The measured window, in seconds.
    pub measured_secs: f64,
    /// Calls answered per second in the window.
    pub calls_per_sec: f64,
    /// CPU seconds the server's threads used in the window (0 where `/proc` is missing).
    pub server_cpu_secs: f64,
    /// CPU seconds the client threads used in the window.
    pub client_cpu_secs: f64,
    /// Where the figure is over several windows ([`Throughput::over`]): each window's
    /// calls per second, in the order measured.
    #[serde(default)]
    pub window_rates: Vec<f64>,
}

impl Throughput {
    /// True when every call sent was answered once, rightly.
    pub fn complete(&self) -> bool {
        self.answered == self.sent && self.wrong == 0 && self.unexpected == 0 && self.lost == 0
    }

    /// One figure over several runs of the same load (windows taken apart, [`super::run`]
    /// alternates them with the floor's): counts, measured calls, seconds and CPU summed,
    /// the rate over the sum; each run's rate kept in `window_rates`.
    pub fn over(runs: &[Throughput]) -> Throughput {
        let Some(first) = runs.first() else {
            return Throughput::default();
        };
        let sum_u = |f: fn(&Throughput) -> u64| runs.iter().map(f).sum::<u64>();
        let sum_f = |f: fn(&Throughput) -> f64| runs.iter().map(f).sum::<f64>();
        let (calls, secs) = (sum_u(|t| t.measured_calls), sum_f(|t| t.measured_secs));
        Throughput {
            connections: first.connections,
            in_flight_per_connection: first.in_flight_per_connection,
            in_flight: first.in_flight,
            sent: sum_u(|t| t.sent),
            answered: sum_u(|t| t.answered),
            wrong: sum_u(|t| t.wrong),
            unexpected: sum_u(|t| t.unexpected),
            lost: sum_u(|t| t.lost),
            measured_calls: calls,
            measured_secs: secs,
            calls_per_sec: if secs > 0.0 { calls as f64 / secs } else { 0.0 },
            server_cpu_secs: sum_f(|t| t.server_cpu_secs),
            client_cpu_secs: sum_f(|t| t.client_cpu_secs),
            window_rates: runs.iter().map(|t| t.calls_per_sec).collect(),
        }
    }

    /// Calls per second of server CPU: what the server would serve with a core to itself.
    pub fn calls_per_server_cpu_sec(&self) -> f64 {
        if self.server_cpu_secs > 0.0 {
            self.measured_calls as f64 / self.server_cpu_secs
        } else {
            0.0
        }
    }
}

/// One connection's counts.
#[derive(Debug, Default)]
struct ConnCounts {
    sent: u64,
    answered: u64,
    wrong: u64,
    unexpected: u64,
    lost: u64,
}

/// Runs `shape` against `url`, each connection presenting one of `tokens`; the server's
/// threads are those named `server_threads…` (for the CPU figure). Call on the client
/// runtime: the connections' tasks run where this does.
pub async fn run(
    url: &str,
    tokens: &[String],
    shape: &LoadShape,
    server_threads: &str,
) -> Result<Throughput, PerfError> {
    let n = shape.connections.max(1);
    if tokens.len() < n {
        return Err(PerfError::Config("fewer tokens than connections"));
    }
    let mut conns = Vec::with_capacity(n);
    for token in &tokens[..n] {
        let mut conn = client::connect(url, token).await?;
        client::handshake(&mut conn, false).await?;
        conns.push(conn);
    }
    let answered = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (go_tx, go_rx) = watch::channel(false);
    let budgets = share(shape.calls, n);
    let drivers: Vec<_> = conns
        .into_iter()
        .zip(budgets)
        .map(|(conn, budget)| {
            let (answered, stop, mut go) = (answered.clone(), stop.clone(), go_rx.clone());
            let in_flight = shape.in_flight.max(1);
            tokio::spawn(async move {
                let _ = go.wait_for(|g| *g).await;
                drive(conn, in_flight, budget, &answered, &stop).await
            })
        })
        .collect();
    let cpu = || {
        (
            proc::thread_cpu(server_threads),
            proc::thread_cpu(proc::CLIENT_THREADS),
        )
    };
    let read = || (Instant::now(), answered.load(Ordering::Relaxed));
    let _ = go_tx.send(true);
    if shape.calls.is_some() {
        // With a budget the window is the whole run.
        let (from, cpu_from) = ((Instant::now(), 0), cpu());
        let counts = join(drivers).await?;
        let (to, cpu_to) = (read(), cpu());
        return Ok(summary(shape, &counts, from, to, cpu_from, cpu_to));
    }
    tokio::time::sleep(shape.warmup).await;
    let (from, cpu_from) = (read(), cpu());
    tokio::time::sleep(shape.window).await;
    let (to, cpu_to) = (read(), cpu());
    stop.store(true, Ordering::Relaxed);
    let counts = join(drivers).await?;
    Ok(summary(shape, &counts, from, to, cpu_from, cpu_to))
}

async fn join(
    drivers: Vec<tokio::task::JoinHandle<ConnCounts>>,
) -> Result<Vec<ConnCounts>, PerfError> {
    let mut counts = Vec::with_capacity(drivers.len());
    for d in drivers {
        counts.push(
            d.await
                .map_err(|_| PerfError::Internal("a driver panicked"))?,
        );
    }
    Ok(counts)
}

/// `calls` shared out over `n` connections (the first ones take the remainder); `None`
/// each without a budget.
fn share(calls: Option<u64>, n: usize) -> Vec<Option<u64>> {
    let n64 = n as u64;
    (0..n64)
        .map(|i| calls.map(|c| c / n64 + u64::from(i < c % n64)))
        .collect()
}

fn summary(
    shape: &LoadShape,
    counts: &[ConnCounts],
    (from, at_from): (Instant, u64),
    (to, at_to): (Instant, u64),
    cpu_from: (Duration, Duration),
    cpu_to: (Duration, Duration),
) -> Throughput {
    let secs = to.duration_since(from).as_secs_f64();
    let measured = at_to - at_from;
    let sum = |f: fn(&ConnCounts) -> u64| counts.iter().map(f).sum::<u64>();
    Throughput {
        connections: counts.len(),
        in_flight_per_connection: shape.in_flight.max(1),
        in_flight: counts.len() * shape.in_flight.max(1),
        sent: sum(|c| c.sent),
        answered: sum(|c| c.answered),
        wrong: sum(|c| c.wrong),
        unexpected: sum(|c| c.unexpected),
        lost: sum(|c| c.lost),
        measured_calls: measured,
        measured_secs: secs,
        calls_per_sec: if secs > 0.0 {
            measured as f64 / secs
        } else {
            0.0
        },
        server_cpu_secs: (cpu_to.0.saturating_sub(cpu_from.0)).as_secs_f64(),
        client_cpu_secs: (cpu_to.1.saturating_sub(cpu_from.1)).as_secs_f64(),
        window_rates: Vec::new(),
    }
}

/// Keeps `in_flight` calls outstanding on `conn` until `stop` (or the budget is spent),
/// then awaits what is outstanding.
async fn drive(
    mut conn: Connection,
    in_flight: usize,
    budget: Option<u64>,
    answered: &AtomicU64,
    stop: &AtomicBool,
) -> ConnCounts {
    let mut c = ConnCounts::default();
    let mut outstanding: HashSet<i64> = HashSet::with_capacity(in_flight * 2);
    let mut next_id: i64 = 1;
    let more = |c: &ConnCounts| !stop.load(Ordering::Relaxed) && budget.is_none_or(|b| c.sent < b);
    for _ in 0..in_flight {
        if !more(&c) {
            break;
        }
        if conn
            .outbound
            .send(client::light_call(next_id))
            .await
            .is_err()
        {
            break;
        }
        outstanding.insert(next_id);
        next_id += 1;
        c.sent += 1;
    }
    while !outstanding.is_empty() {
        let item = match tokio::time::timeout(STALL, conn.inbound.recv()).await {
            Ok(Some(item)) => item,
            Ok(None) | Err(_) => break,
        };
        let id = match client::answer_of(&item) {
            None => continue,
            Some(Answer::Ok(id)) => {
                c.answered += 1;
                id
            }
            Some(Answer::Wrong(id)) => {
                c.wrong += 1;
                id
            }
        };
        if !outstanding.remove(&id) {
            c.unexpected += 1;
            continue;
        }
        answered.fetch_add(1, Ordering::Relaxed);
        if more(&c) {
            if conn
                .outbound
                .send(client::light_call(next_id))
                .await
                .is_err()
            {
                break;
            }
            outstanding.insert(next_id);
            next_id += 1;
            c.sent += 1;
        }
    }
    c.lost = outstanding.len() as u64;
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_shared_out_whole() {
        let shares = share(Some(10), 4);
        assert_eq!(shares, [Some(3), Some(3), Some(2), Some(2)]);
        assert_eq!(share(None, 2), [None, None]);
    }

    #[test]
    fn a_figure_over_windows_is_the_sum_of_calls_over_the_sum_of_seconds() {
        let window = |calls: u64, secs: f64, sent: u64, lost: u64| Throughput {
            connections: 2,
            in_flight_per_connection: 4,
            in_flight: 8,
            sent,
            answered: sent - lost,
            lost,
            measured_calls: calls,
            measured_secs: secs,
            calls_per_sec: calls as f64 / secs,
            server_cpu_secs: secs / 2.0,
            ..Default::default()
        };
        let over = Throughput::over(&[window(1_000, 1.0, 1_100, 0), window(3_000, 2.0, 3_200, 1)]);
        assert_eq!(over.measured_calls, 4_000);
        assert_eq!(over.measured_secs, 3.0);
        assert!((over.calls_per_sec - 4_000.0 / 3.0).abs() < 1e-9);
        assert_eq!(over.window_rates, [1_000.0, 1_500.0]);
        assert_eq!((over.sent, over.lost), (4_300, 1));
        assert!(
            !over.complete(),
            "a call lost in any window makes the figure incomplete"
        );
        assert_eq!(over.server_cpu_secs, 1.5);
        assert_eq!(over.connections, 2);
        assert_eq!(Throughput::over(&[]), Throughput::default());
    }
}
