//! Reconnection after a mass drop: many hosts (the real [`Host`](mcpl_host::host::Host),
//! one per agent, its own principal) connected to the arcade over WebSocket through the
//! sim's proxy, each with a tic-tac-toe game open against the bot; the proxy cuts every
//! connection at once; each host is timed until it is connected again **and
//! resynchronised**: its status shows a later connection (epoch), settled — tools listed
//! and the connect-time `toolsets/list` read (§4.3) — with its game among the open
//! instances again. Observed through [`HostHandle::wait_for`]; nothing peeks inside.
//!
//! Threads: the arcade has its arbiter (given), the proxy one, the hosts
//! `host_threads` more; the waiting is done on the caller's. Past what one process may
//! hold open (four sockets a host), the hosts run in child processes of up to 4,000,
//! each with its proxy and its own `host_threads`; the arcade stays in this one.

use super::PerfError;
use super::child::Child;
use super::proc;
use actix::{Arbiter, ArbiterHandle};
use mcpl_games::arcade::{ArcadeConfig, BotBudget, BotSettings};
use mcpl_host::host::{HostHandle, HostStatus};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sim::arcade::ArcadeService;
use sim::hosts::{LinkKnobs, SERVER, start_host};
use sim::proxy::Faults;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
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
    /// Child processes the hosts ran in (0: in the measuring process, beside the arcade).
    #[serde(default)]
    pub host_processes: usize,
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

/// Hosts one process holds when the arcade runs beside them: four sockets each (the
/// host's, the proxy's two, the arcade's).
const FILES_PER_HOST_BESIDE: u64 = 4;
/// Hosts one child process holds (three sockets each: the host's and the proxy's two),
/// so that a process stays under the 20,000 open files a shell commonly allows.
pub const HOSTS_PER_CHILD: usize = 4_000;
/// Open files kept for everything else (listeners, the store, standard streams).
const SPARE_FILES: u64 = 1_024;

/// What one group of hosts, behind a proxy of its own, measured (in this process, or in
/// a child process that prints it as JSON).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GroupFigures {
    /// Hosts in the group.
    pub hosts: usize,
    /// Hosts with their game open when the drop came.
    pub opened: usize,
    /// Connections its proxy cut.
    pub cut: u64,
    /// Each host that came back: milliseconds from the drop until it was resynchronised.
    pub back_ms: Vec<f64>,
    /// CPU seconds the group's host threads used meanwhile.
    pub hosts_cpu_secs: f64,
    /// CPU seconds its proxy's thread used meanwhile.
    pub proxy_cpu_secs: f64,
}

/// Starts `hosts` hosts against an arcade served on `arbiter`, opens a game in each,
/// drops every connection at once, and times the resynchronisation against `limit`.
/// Call inside an actix system.
///
/// Where this process may hold every host's four sockets, the hosts run here on
/// `host_threads` arbiters behind one proxy. Past that (10,000 hosts need 40,000 open
/// files), or when `per_process` asks for it, they run in child processes of `exe`
/// (`sim-perf drop-hosts`), at most `per_process` (default [`HOSTS_PER_CHILD`]) each with
/// a proxy of its own and `host_threads` arbiters; every child cuts its connections when
/// told, all at once, and reports its figures.
pub async fn run(
    hosts: usize,
    host_threads: usize,
    limit: Duration,
    arbiter: ArbiterHandle,
    exe: Option<&Path>,
    per_process: Option<usize>,
) -> Result<MassDrop, PerfError> {
    let names = super::light::tokens("h", hosts);
    let config = ArcadeConfig {
        bot: BotSettings {
            budget: BotBudget::Playouts(8),
            seed: Some(1),
        },
        ..Default::default()
    };
    let beside = match per_process {
        Some(_) => Err(std::io::Error::other("child processes were asked for")),
        None => proc::room_for_files(hosts as u64 * FILES_PER_HOST_BESIDE + SPARE_FILES),
    };
    let per_process = per_process.unwrap_or(HOSTS_PER_CHILD).max(1);
    let exe = match (beside, exe) {
        (Ok(_), _) => None,
        (Err(_), Some(exe)) => {
            // The arcade's end of every connection stays here.
            proc::room_for_files(hosts as u64 + SPARE_FILES).map_err(PerfError::Io)?;
            Some(exe)
        }
        (Err(e), None) => return Err(PerfError::Io(e)),
    };
    let server_tid = tid_of(&arbiter).await;
    let service = ArcadeService::start(config, &names, Some(arbiter)).await?;
    let server_cpu = || server_tid.map_or(0.0, |t| proc::tid_cpu(t).as_secs_f64());
    let (groups, server_cpu_secs, processes) = match exe {
        None => {
            let (ready_tx, ready_rx) = oneshot::channel();
            let (go_tx, go_rx) = oneshot::channel();
            let group = host_group(
                names,
                0,
                service.ws_addr(),
                host_threads,
                |_| {
                    let _ = ready_tx.send(());
                },
                async {
                    let _ = go_rx.await;
                },
            );
            let drive = async {
                ready_rx
                    .await
                    .map_err(|_| PerfError::Internal("the hosts never got ready"))?;
                let before = server_cpu();
                let _ = go_tx.send(());
                Ok::<f64, PerfError>(before)
            };
            let (group, before) = futures_util::future::join(group, drive).await;
            let (group, before) = (group?, before?);
            (vec![group], server_cpu() - before, 0)
        }
        Some(exe) => {
            let url = service.ws_url();
            let mut children = Vec::new();
            for first in (0..hosts).step_by(per_process) {
                let count = per_process.min(hosts - first);
                let args = [
                    "drop-hosts".to_owned(),
                    format!("--url={url}"),
                    format!("--total={hosts}"),
                    format!("--first={first}"),
                    format!("--count={count}"),
                    format!("--threads={host_threads}"),
                ];
                children.push(Child::start(exe, &args)?);
            }
            for child in &mut children {
                child.ready(SETUP_LIMIT * 2, 1).await?;
            }
            let before = server_cpu();
            for child in &mut children {
                child.send_line("go").await?;
            }
            let mut groups = Vec::with_capacity(children.len());
            for child in &mut children {
                let line = child
                    .line(GIVE_UP + SETUP_LIMIT, "a host process never reported")
                    .await?;
                let group = serde_json::from_str(&line).map_err(|_| PerfError::ChildSaid(line))?;
                groups.push(group);
                child.wait(Duration::from_secs(30)).await;
            }
            let processes = children.len();
            (groups, server_cpu() - before, processes)
        }
    };
    Ok(figures(hosts, &groups, limit, server_cpu_secs, processes))
}

/// One group of hosts: starts a proxy to the arcade at `upstream` and a host per name
/// (their jitter seeded from `first`, the first one's place among every host), opens
/// each one's game, says how many are open through `ready`, waits for `go`, cuts every
/// connection, and times each host until it is back and resynchronised.
pub async fn host_group(
    names: Vec<String>,
    first: usize,
    upstream: SocketAddr,
    host_threads: usize,
    ready: impl FnOnce(usize),
    go: impl Future<Output = ()>,
) -> Result<GroupFigures, PerfError> {
    let proxy_thread = Arbiter::new();
    let (tx, rx) = oneshot::channel();
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
        (host_tids.iter().map(of).sum::<f64>(), of(&proxy_tid))
    };
    let handles = start_hosts(&names, first, &url, &workers).await?;

    let opened = open_games(&handles).await;
    ready(opened.iter().filter(|o| **o).count());
    go.await;
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
    let cut = proxy.stats().mass_cuts;

    for h in &handles {
        h.stop().await;
    }
    drop(proxy);
    proxy_thread.stop();
    for w in &workers {
        w.stop();
    }
    Ok(GroupFigures {
        hosts: names.len(),
        opened: opened.iter().filter(|o| **o).count(),
        cut,
        back_ms: times
            .iter()
            .flatten()
            .map(|t| t.as_secs_f64() * 1000.0)
            .collect(),
        hosts_cpu_secs: cpu_after.0 - cpu_before.0,
        proxy_cpu_secs: cpu_after.1 - cpu_before.1,
    })
}

/// `sim-perf drop-hosts` (hidden), a child's side: the hosts `first..first + count` of
/// `total` as one [`host_group`] against the arcade at `url`; prints `ready N` (N with
/// their game open), cuts on a line (or the end) of standard input, and prints its
/// [`GroupFigures`] as one line of JSON.
pub async fn child_main(
    url: &str,
    total: usize,
    first: usize,
    count: usize,
    host_threads: usize,
) -> Result<(), PerfError> {
    proc::room_for_files(count as u64 * (FILES_PER_HOST_BESIDE - 1) + SPARE_FILES)
        .map_err(PerfError::Io)?;
    let upstream: SocketAddr = url
        .strip_prefix("ws://")
        .and_then(|a| a.parse().ok())
        .ok_or(PerfError::Config("drop-hosts takes ws://IP:PORT"))?;
    let names: Vec<String> = super::light::tokens("h", total)
        .into_iter()
        .skip(first)
        .take(count)
        .collect();
    let group = host_group(
        names,
        first,
        upstream,
        host_threads,
        |n| println!("ready {n}"),
        async {
            let mut line = String::new();
            let _ = BufReader::new(tokio::io::stdin())
                .read_line(&mut line)
                .await;
        },
    )
    .await?;
    let json = serde_json::to_string(&group)
        .map_err(|_| PerfError::Internal("the group's figures as JSON"))?;
    println!("{json}");
    Ok(())
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
    groups: &[GroupFigures],
    limit: Duration,
    server_cpu_secs: f64,
    host_processes: usize,
) -> MassDrop {
    let mut back: Vec<f64> = groups.iter().flat_map(|g| g.back_ms.clone()).collect();
    back.sort_unstable_by(f64::total_cmp);
    let opened = groups.iter().map(|g| g.opened).sum::<usize>();
    let limit_ms = limit.as_secs_f64() * 1000.0;
    let within = back.iter().filter(|t| **t <= limit_ms).count();
    let at = |q: f64| -> f64 {
        if back.is_empty() {
            return 0.0;
        }
        let i = ((back.len() - 1) as f64 * q).round() as usize;
        back[i.min(back.len() - 1)]
    };
    MassDrop {
        hosts,
        host_processes,
        opened,
        cut: groups.iter().map(|g| g.cut).sum(),
        resynced: back.len(),
        within_limit: within,
        limit_secs: limit.as_secs_f64(),
        fraction_within_limit: within as f64 / opened.max(1) as f64,
        p50_ms: at(0.5),
        p99_ms: at(0.99),
        max_ms: at(1.0),
        resync_secs: back.last().map_or(0.0, |ms| ms / 1000.0),
        server_cpu_secs,
        hosts_cpu_secs: groups.iter().map(|g| g.hosts_cpu_secs).sum(),
        proxy_cpu_secs: groups.iter().map(|g| g.proxy_cpu_secs).sum(),
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

/// Starts a host per name (`first` the first one's place among every host, for its seed),
/// spread over `workers`, and waits for each to reach the arcade.
async fn start_hosts(
    names: &[String],
    first: usize,
    url: &str,
    workers: &[Arbiter],
) -> Result<Vec<HostHandle>, PerfError> {
    let knobs = LinkKnobs::default();
    let mut pending = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let (tx, rx) = oneshot::channel();
        let (name, url, knobs) = (name.clone(), url.to_owned(), knobs.clone());
        workers[i % workers.len()].spawn(async move {
            let _ = tx.send(start_host(&name, &url, Some(&knobs), (first + i) as u64));
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
            match h.call("toolsets--open", args).await {
                Ok(r) if !r.is_error => {}
                Ok(r) => {
                    tracing::warn!(answer = ?r.content, "a host's game was not opened");
                    return false;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "a host's game was not opened");
                    return false;
                }
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
