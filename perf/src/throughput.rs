//! Light `tools/call` per second across many connections, pipelined: each connection keeps
//! `in_flight` calls outstanding, sending the next as each answer comes.
//!
//! Servers are measured in turn, window by window, over connections made once
//! ([`alternate`]). Every connection is made and initialized first; then a window starts
//! all of one server's at once. With a duration, the rate is what was answered between
//! the end of the warm-up and the end of the window (the counter is read at both); then
//! no new call is sent, and what is outstanding is awaited. With a call budget (tests),
//! each connection sends its share and the rate is the total over the elapsed time.
//! Either way every call must be answered once, with the light tool's text: the counts
//! say so.

use super::PerfError;
use super::client::{self, Answer};
use super::http_load::{Headers, HttpSession, Lane, Outcome};
use super::proc;
use mcpl_transport::Connection;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

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
    /// What became of the calls sent (written beside the other members).
    #[serde(flatten)]
    pub tally: Tally,
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

/// What became of the calls sent, by one connection or in a whole figure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
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
}

impl<'a> std::iter::Sum<&'a Tally> for Tally {
    /// The tallies added: connections' into a window's, windows' into a figure's.
    fn sum<I: Iterator<Item = &'a Tally>>(all: I) -> Tally {
        all.fold(Tally::default(), |t, o| Tally {
            sent: t.sent + o.sent,
            answered: t.answered + o.answered,
            wrong: t.wrong + o.wrong,
            unexpected: t.unexpected + o.unexpected,
            lost: t.lost + o.lost,
        })
    }
}

impl Throughput {
    /// True when every call sent was answered once, rightly.
    pub fn complete(&self) -> bool {
        let t = &self.tally;
        t.answered == t.sent && t.wrong == 0 && t.unexpected == 0 && t.lost == 0
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
            tally: runs.iter().map(|t| &t.tally).sum(),
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

/// A server measured in turn with others ([`alternate`]).
#[derive(Debug, Clone)]
pub struct Target {
    /// Where it listens.
    pub url: String,
    /// The names of its threads, for its CPU figure ([`proc::thread_cpu`]).
    pub server_threads: &'static str,
    /// Over Streamable HTTP: its clients are modern (MCP 2026-07-28: no handshake, no
    /// session, `_meta` on every request; [`HttpSession::modern`]).
    pub modern: bool,
}

/// How long a target's calls run unmeasured at the start of each window after its first,
/// so that its pipelines are full again when the window opens.
const RAMP: Duration = Duration::from_millis(100);

/// What a driver task sends calls on, window after window.
enum Driven {
    /// A connection of mcpl-transport's client, `in_flight` calls outstanding on it.
    Connection {
        conn: Connection,
        in_flight: usize,
        budget: Option<u64>,
    },
    /// A Streamable HTTP session's lane (`http_load.rs`): one call at a time, ids
    /// `next_id`, `next_id + step`, ….
    Lane {
        lane: Lane,
        headers: Arc<Headers>,
        next_id: i64,
        step: i64,
        budget: Option<u64>,
    },
}

impl Driven {
    /// Runs each window it is told to on `go` until [`FINISH`], sending its counts.
    async fn run(
        mut self,
        mut go: watch::Receiver<u64>,
        done: mpsc::UnboundedSender<Tally>,
        answered: Arc<AtomicU64>,
        stop: Arc<AtomicBool>,
    ) {
        let mut ran = 0;
        while let Ok(next) = go.wait_for(|w| *w != ran).await.map(|w| *w) {
            if next == FINISH {
                break;
            }
            ran = next;
            let counts = match &mut self {
                Driven::Connection {
                    conn,
                    in_flight,
                    budget,
                } => drive(conn, *in_flight, *budget, &answered, &stop).await,
                Driven::Lane {
                    lane,
                    headers,
                    next_id,
                    step,
                    budget,
                } => {
                    let ids = (next_id, *step);
                    drive_lane(lane, headers, ids, *budget, &answered, &stop).await
                }
            };
            if done.send(counts).is_err() {
                break;
            }
        }
    }
}

/// One target's connections and their drivers.
struct Side {
    threads: &'static str,
    answered: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    /// The window to run (1, 2, …); [`FINISH`] ends the drivers.
    go: watch::Sender<u64>,
    /// Each driver's counts, once it has drained a window.
    done: mpsc::UnboundedReceiver<Tally>,
    /// One per connection, or per lane over HTTP; each window awaits every one's counts.
    drivers: Vec<tokio::task::JoinHandle<()>>,
}

const FINISH: u64 = u64::MAX;

/// `rounds` windows of `shape` against each of `targets` in turn (the first, the second,
/// …, the first again), each connection presenting one of `tokens`; each target's figure
/// over its windows ([`Throughput::over`]). Call on the client runtime: the connections'
/// tasks run where this does.
///
/// Every target's connections are made and initialized once, before the first window, and
/// kept: a window starts its target's connections (after `shape.warmup` the first time,
/// 0.1 s after), reads the counter at both ends, then stops them and awaits what each
/// has outstanding before the next target's window opens, so no two targets' calls ever
/// overlap. Windows can so be short and many: a machine whose other work comes and goes
/// (a build beside) falls on every target alike. With a call budget (tests), each window
/// sends the budget and lasts until it is answered.
pub async fn alternate(
    targets: &[Target],
    tokens: &[String],
    shape: &LoadShape,
    rounds: usize,
) -> Result<Vec<Throughput>, PerfError> {
    let n = shape.connections.max(1);
    if tokens.len() < n {
        return Err(PerfError::Config("fewer tokens than connections"));
    }
    let mut sides = Vec::with_capacity(targets.len());
    for target in targets {
        sides.push(open_side(target, &tokens[..n], shape).await?);
    }
    let mut windows: Vec<Vec<Throughput>> = vec![Vec::with_capacity(rounds); targets.len()];
    for round in 0..rounds {
        for (side, windows) in sides.iter_mut().zip(&mut windows) {
            let warmup = if round == 0 { shape.warmup } else { RAMP };
            windows.push(window(side, n, shape, round as u64 + 1, warmup).await?);
        }
    }
    for side in sides {
        let _ = side.go.send(FINISH);
        for driver in side.drivers {
            driver
                .await
                .map_err(|_| PerfError::Internal("a driver panicked"))?;
        }
    }
    Ok(windows.into_iter().map(|w| Throughput::over(&w)).collect())
}

/// Connects and initializes `tokens.len()` connections to `target`, each with a driver
/// waiting for its first window.
async fn open_side(
    target: &Target,
    tokens: &[String],
    shape: &LoadShape,
) -> Result<Side, PerfError> {
    let answered = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(true));
    let (go, go_rx) = watch::channel(0u64);
    let (done_tx, done) = mpsc::unbounded_channel();
    let budgets = share(shape.calls, tokens.len());
    let in_flight = shape.in_flight.max(1);
    let http = target.url.starts_with("http://");
    let mut drivers = Vec::with_capacity(tokens.len() * if http { in_flight } else { 1 });
    let mut spawn = |driven: Driven| {
        let (answered, stop, go, done) = (
            answered.clone(),
            stop.clone(),
            go_rx.clone(),
            done_tx.clone(),
        );
        drivers.push(tokio::spawn(driven.run(go, done, answered, stop)));
    };
    for (token, budget) in tokens.iter().zip(budgets) {
        if http {
            // A lane per call in flight (`http_load.rs`), the session's budget shared out.
            let session = if target.modern {
                HttpSession::modern(&target.url, token, in_flight).await?
            } else {
                HttpSession::open(&target.url, token, in_flight).await?
            };
            let headers = Arc::new(session.headers);
            let step = session.lanes.len();
            let budgets = share(budget, step);
            for ((k, lane), budget) in session.lanes.into_iter().enumerate().zip(budgets) {
                spawn(Driven::Lane {
                    lane,
                    headers: headers.clone(),
                    next_id: k as i64 + 1,
                    step: step as i64,
                    budget,
                });
            }
        } else {
            let mut conn = client::connect(&target.url, token).await?;
            client::handshake(&mut conn, false).await?;
            spawn(Driven::Connection {
                conn,
                in_flight,
                budget,
            });
        }
    }
    Ok(Side {
        threads: target.server_threads,
        answered,
        stop,
        go,
        done,
        drivers,
    })
}

/// Runs window `number` of `side`: its `n` connections start, run `warmup` unmeasured and
/// then `shape.window` measured (or each its budget), stop and drain.
async fn window(
    side: &mut Side,
    n: usize,
    shape: &LoadShape,
    number: u64,
    warmup: Duration,
) -> Result<Throughput, PerfError> {
    let cpu = |threads| {
        (
            proc::thread_cpu(threads),
            proc::thread_cpu(proc::CLIENT_THREADS),
        )
    };
    let answered = side.answered.clone();
    let read = || (Instant::now(), answered.load(Ordering::Relaxed));
    side.stop.store(false, Ordering::Relaxed);
    let _ = side.go.send(number);
    let mut counts = Vec::with_capacity(n);
    let (from, cpu_from, to, cpu_to);
    if shape.calls.is_some() {
        // With a budget the window is the whole run.
        (from, cpu_from) = (read(), cpu(side.threads));
        collect(side, &mut counts).await?;
        (to, cpu_to) = (read(), cpu(side.threads));
    } else {
        tokio::time::sleep(warmup).await;
        (from, cpu_from) = (read(), cpu(side.threads));
        tokio::time::sleep(shape.window).await;
        (to, cpu_to) = (read(), cpu(side.threads));
        side.stop.store(true, Ordering::Relaxed);
        collect(side, &mut counts).await?;
    }
    Ok(summary(shape, n, &counts, from, to, cpu_from, cpu_to))
}

/// Awaits the counts of each of the side's drivers for the window that is ending.
/// A driver that does not report is stuck or gone: each waits at most [`STALL`] for an
/// answer, so twice that is beyond any that works.
async fn collect(side: &mut Side, counts: &mut Vec<Tally>) -> Result<(), PerfError> {
    let n = side.drivers.len();
    let all = async {
        while counts.len() < n {
            match side.done.recv().await {
                Some(c) => counts.push(c),
                None => return Err(PerfError::Internal("a driver ended early")),
            }
        }
        Ok(())
    };
    tokio::time::timeout(2 * STALL, all)
        .await
        .map_err(|_| PerfError::Stalled("a connection did not drain its window"))?
}

/// `calls` shared out over `n` connections (the first ones take the remainder); `None`
/// each without a budget.
fn share(calls: Option<u64>, n: usize) -> Vec<Option<u64>> {
    let n64 = n as u64;
    (0..n64)
        .map(|i| calls.map(|c| c / n64 + u64::from(i < c % n64)))
        .collect()
}

/// One window's figure: `n` connections' `counts`, the counter and CPU at both ends.
fn summary(
    shape: &LoadShape,
    n: usize,
    counts: &[Tally],
    (from, at_from): (Instant, u64),
    (to, at_to): (Instant, u64),
    cpu_from: (Duration, Duration),
    cpu_to: (Duration, Duration),
) -> Throughput {
    let secs = to.duration_since(from).as_secs_f64();
    let measured = at_to - at_from;
    Throughput {
        connections: n,
        in_flight_per_connection: shape.in_flight.max(1),
        in_flight: n * shape.in_flight.max(1),
        tally: counts.iter().sum(),
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

/// Sends light calls one after the other on `lane` until `stop` (or the budget is spent),
/// ids from `ids.0` by `ids.1`. A call the connection failed under is lost, and the lane
/// connects again; one unanswered for [`STALL`] is lost and ends the window.
async fn drive_lane(
    lane: &mut Lane,
    headers: &Headers,
    (next_id, step): (&mut i64, i64),
    budget: Option<u64>,
    answered: &AtomicU64,
    stop: &AtomicBool,
) -> Tally {
    let mut c = Tally::default();
    while !stop.load(Ordering::Relaxed) && budget.is_none_or(|b| c.sent < b) {
        let id = *next_id;
        *next_id += step;
        c.sent += 1;
        let outcome = tokio::time::timeout(STALL, lane.call(headers, id)).await;
        match outcome {
            Ok(Outcome::Answered(answer)) => {
                let (Answer::Ok(got) | Answer::Wrong(got)) = answer;
                if got != id {
                    c.unexpected += 1;
                    c.lost += 1;
                    continue;
                }
                match answer {
                    Answer::Ok(_) => c.answered += 1,
                    Answer::Wrong(_) => c.wrong += 1,
                }
                answered.fetch_add(1, Ordering::Relaxed);
            }
            // An error status, or a success with no answer in it.
            Ok(Outcome::NoAnswer) => {
                c.wrong += 1;
                answered.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Outcome::Failed) | Err(_) => {
                c.lost += 1;
                // The connection failed, or holds a request never answered: a new one.
                match Lane::connect(headers.addr()).await {
                    Ok(fresh) => *lane = fresh,
                    Err(e) => {
                        tracing::warn!(error = %e, "a lane could not connect again");
                        break;
                    }
                }
                if outcome.is_err() {
                    break;
                }
            }
        }
    }
    c
}

/// Sends light call `next_id` on `conn`, counts it sent and outstanding and moves
/// `next_id` on; false when the connection is gone.
async fn send_next(
    conn: &mut Connection,
    next_id: &mut i64,
    outstanding: &mut HashSet<i64>,
    c: &mut Tally,
) -> bool {
    if conn
        .outbound
        .send(client::light_call(*next_id))
        .await
        .is_err()
    {
        return false;
    }
    outstanding.insert(*next_id);
    *next_id += 1;
    c.sent += 1;
    true
}

/// Keeps `in_flight` calls outstanding on `conn` until `stop` (or the budget is spent),
/// then awaits what is outstanding.
async fn drive(
    conn: &mut Connection,
    in_flight: usize,
    budget: Option<u64>,
    answered: &AtomicU64,
    stop: &AtomicBool,
) -> Tally {
    let mut c = Tally::default();
    let mut outstanding: HashSet<i64> = HashSet::with_capacity(in_flight * 2);
    let mut next_id: i64 = 1;
    let more = |c: &Tally| !stop.load(Ordering::Relaxed) && budget.is_none_or(|b| c.sent < b);
    for _ in 0..in_flight {
        if !more(&c) {
            break;
        }
        if !send_next(conn, &mut next_id, &mut outstanding, &mut c).await {
            break;
        }
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
        if more(&c) && !send_next(conn, &mut next_id, &mut outstanding, &mut c).await {
            break;
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
            tally: Tally {
                sent,
                answered: sent - lost,
                lost,
                ..Tally::default()
            },
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
        assert_eq!((over.tally.sent, over.tally.lost), (4_300, 1));
        assert!(
            !over.complete(),
            "a call lost in any window makes the figure incomplete"
        );
        assert_eq!(over.server_cpu_secs, 1.5);
        assert_eq!(over.connections, 2);
        assert_eq!(Throughput::over(&[]), Throughput::default());
    }
}
