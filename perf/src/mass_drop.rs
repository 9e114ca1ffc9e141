//! Reconnection after a mass drop: many hosts (the real [`Host`](mcpl_host::host::Host),
//! one per agent, its own principal) connected to the arcade over WebSocket through the
//! sim's proxy, each with a tic-tac-toe game open against the bot; the proxy cuts every
//! connection at once; each host is timed until it is connected again **and
//! resynchronised**: its status shows a later connection (epoch), settled — tools listed
//! and the connect-time `toolsets/list` read (§4.3) — with its game among the open
//! instances again. Observed through [`HostHandle::wait_for`]; nothing peeks inside.
//!
//! Threads: the arcade has its arbiter (given), the proxy one, the hosts
//! `host_threads` more; the waiting is done on the caller's.

use super::PerfError;
use super::proc;
use actix::{Arbiter, ArbiterHandle};
use mcpl_games::arcade::{ArcadeConfig, BotBudget, BotSettings};
use mcpl_host::host::{HostHandle, HostStatus};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sim::arcade::ArcadeService;
use sim::hosts::{LinkKnobs, SERVER, start_host};
use sim::proxy::Faults;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// The toolset each host has open.
const TOOLSET: &str = "tictactoe";
/// Its instance's name in every host (each host is its own principal).
const INSTANCE: &str = "perf";
/// How long the hosts may take to connect, and to open their games.
const SETUP_LIMIT: Duration = Duration::from_secs(120);
/// How long a host may take to come back before it counts as not resynchronised.
const GIVE_UP: Duration = Duration::from_secs(60);

/// The mass-drop figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MassDrop {
    /// Hosts started.
    pub hosts: usize,
    /// Hosts with their game open when the drop came.
    pub opened: usize,
    /// Connections the proxy cut.
    pub cut: u64,
    /// Hosts back and resynchronised (within a minute).
    pub resynced: usize,
    /// Of those, within the limit.
    pub within_limit: usize,
    /// The limit, in seconds.
    pub limit_secs: f64,
    /// `within_limit / opened`.
    pub fraction_within_limit: f64,
    /// Time to resynchronise, median, in milliseconds.
    pub p50_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// The slowest host that came back.
    pub max_ms: f64,
    /// From the drop until the last host came back, in seconds.
    pub resync_secs: f64,
    /// CPU seconds the arcade's thread used meanwhile (sessions and listeners).
    pub server_cpu_secs: f64,
    /// CPU seconds the hosts' threads used meanwhile.
    pub hosts_cpu_secs: f64,
    /// CPU seconds the proxy's thread used meanwhile.
    pub proxy_cpu_secs: f64,
}

/// Starts `hosts` hosts on `host_threads` arbiters against an arcade served on `arbiter`,
/// opens a game in each, drops every connection, and times the resynchronisation
/// against `limit`. Call inside an actix system.
pub async fn run(
    hosts: usize,
    host_threads: usize,
    limit: Duration,
    arbiter: ArbiterHandle,
) -> Result<MassDrop, PerfError> {
    // Four sockets a host in this process, and some to spare for the rest.
    proc::room_for_files(hosts as u64 * 4 + 1_024).map_err(PerfError::Io)?;
    let names = super::light::tokens("h", hosts);
    let config = ArcadeConfig {
        bot: BotSettings {
            budget: BotBudget::Playouts(8),
            seed: Some(1),
        },
        ..Default::default()
    };
    let server_tid = tid_of(&arbiter).await;
    let service = ArcadeService::start(config, &names, Some(arbiter)).await?;
    let proxy_thread = Arbiter::new();
    let (tx, rx) = oneshot::channel();
    let upstream = service.ws_addr();
    proxy_thread.spawn(async move {
        let _ = tx.send(sim::proxy::start(upstream, Faults::none(), 1).await);
    });
    let proxy = rx
        .await
        .map_err(|_| PerfError::Internal("the proxy's thread stopped"))?
        .map_err(PerfError::Io)?;
    let url = format!("ws://{}", proxy.addr());
    let workers: Vec<Arbiter> = (0..host_threads.max(1)).map(|_| Arbiter::new()).collect();
    let mut host_tids = Vec::new();
    for w in &workers {
        host_tids.push(tid_of(&w.handle()).await);
    }
    let proxy_tid = tid_of(&proxy_thread.handle()).await;
    let cpu = || {
        let of = |t: &Option<u32>| t.map_or(0.0, |t| proc::tid_cpu(t).as_secs_f64());
        (
            of(&server_tid),
            host_tids.iter().map(of).sum::<f64>(),
            of(&proxy_tid),
        )
    };
    let handles = start_hosts(&names, &url, &workers).await?;

    let opened = open_games(&handles).await;
    let before: Vec<u64> = handles.iter().map(|h| epoch(&h.status())).collect();
    let cpu_before = cpu();
    let dropped_at = Instant::now();
    proxy.cut_all();
    let waits = handles
        .iter()
        .zip(&before)
        .zip(&opened)
        .filter(|(_, open)| **open)
        .map(|((h, &e0), _)| async move {
            let back = h.wait_for(|s| resynced(s, e0));
            match tokio::time::timeout(GIVE_UP, back).await {
                Ok(Ok(_)) => Some(dropped_at.elapsed()),
                _ => None,
            }
        });
    let times: Vec<Option<Duration>> = futures_util::future::join_all(waits).await;
    let cpu_after = cpu();
    let used = (
        cpu_after.0 - cpu_before.0,
        cpu_after.1 - cpu_before.1,
        cpu_after.2 - cpu_before.2,
    );
    let cut = proxy.stats().mass_cuts;

    for h in &handles {
        h.stop().await;
    }
    drop(proxy);
    proxy_thread.stop();
    for w in &workers {
        w.stop();
    }
    Ok(figures(hosts, &opened, cut, &times, limit, used))
}

/// The id of the thread an arbiter runs on.
async fn tid_of(arbiter: &ArbiterHandle) -> Option<u32> {
    let (tx, rx) = oneshot::channel();
    arbiter.spawn(async move {
        let _ = tx.send(proc::current_tid());
    });
    rx.await.ok().flatten()
}

fn figures(
    hosts: usize,
    opened: &[bool],
    cut: u64,
    times: &[Option<Duration>],
    limit: Duration,
    (server_cpu_secs, hosts_cpu_secs, proxy_cpu_secs): (f64, f64, f64),
) -> MassDrop {
    let mut back: Vec<Duration> = times.iter().flatten().copied().collect();
    back.sort_unstable();
    let opened = opened.iter().filter(|o| **o).count();
    let within = back.iter().filter(|t| **t <= limit).count();
    let at = |q: f64| -> f64 {
        if back.is_empty() {
            return 0.0;
        }
        let i = ((back.len() - 1) as f64 * q).round() as usize;
        back[i.min(back.len() - 1)].as_secs_f64() * 1000.0
    };
    MassDrop {
        hosts,
        opened,
        cut,
        resynced: back.len(),
        within_limit: within,
        limit_secs: limit.as_secs_f64(),
        fraction_within_limit: within as f64 / opened.max(1) as f64,
        p50_ms: at(0.5),
        p99_ms: at(0.99),
        max_ms: at(1.0),
        resync_secs: back.last().map_or(0.0, Duration::as_secs_f64),
        server_cpu_secs,
        hosts_cpu_secs,
        proxy_cpu_secs,
    }
}

fn epoch(s: &HostStatus) -> u64 {
    s.server(SERVER).map_or(0, |x| x.epoch)
}

/// Back on a later connection, settled, the game open again.
fn resynced(s: &HostStatus, before: u64) -> bool {
    s.server(SERVER).is_some_and(|x| {
        x.epoch > before
            && x.settled
            && x.open
                .iter()
                .any(|(t, i)| t == TOOLSET && i.as_deref() == Some(INSTANCE))
    })
}

/// Starts a host per name, spread over `workers`, and waits for each to reach the arcade.
async fn start_hosts(
    names: &[String],
    url: &str,
    workers: &[Arbiter],
) -> Result<Vec<HostHandle>, PerfError> {
    let knobs = LinkKnobs::default();
    let mut pending = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let (tx, rx) = oneshot::channel();
        let (name, url, knobs) = (name.clone(), url.to_owned(), knobs.clone());
        workers[i % workers.len()].spawn(async move {
            let _ = tx.send(start_host(&name, &url, Some(&knobs), i as u64));
        });
        pending.push(rx);
    }
    let mut handles = Vec::with_capacity(names.len());
    for rx in pending {
        let h = rx
            .await
            .map_err(|_| PerfError::Internal("a host's thread stopped"))??;
        handles.push(h);
    }
    let contact = futures_util::future::join_all(handles.iter().map(|h| h.first_contact()));
    tokio::time::timeout(SETUP_LIMIT, contact)
        .await
        .map_err(|_| PerfError::Stalled("the hosts never all reached the arcade"))?;
    Ok(handles)
}

/// Opens the game in every host; true for each that has it open (as its status shows).
async fn open_games(handles: &[HostHandle]) -> Vec<bool> {
    let args = json!({"toolset": TOOLSET, "instance": INSTANCE, "options": {"opponent": "bot"}});
    let opens = handles.iter().map(|h| {
        let args = args.clone();
        async move {
            let opened = h.call("toolsets--open", args).await;
            if !opened.is_ok_and(|r| !r.is_error) {
                return false;
            }
            let shown = h.wait_for(|s| {
                s.server(SERVER).is_some_and(|x| {
                    x.open
                        .iter()
                        .any(|(t, i)| t == TOOLSET && i.as_deref() == Some(INSTANCE))
                })
            });
            tokio::time::timeout(SETUP_LIMIT, shown)
                .await
                .is_ok_and(|r| r.is_ok())
        }
    });
    futures_util::future::join_all(opens).await
}
