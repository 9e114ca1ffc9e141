//! The deterministic mode's links: each connection a host makes is an in-memory pair to
//! the arcade (`mcpl_transport::memory::pair`), with a filter between the pair's client end
//! and the host that plays the chaos — seeded, on virtual time, no sockets:
//!
//! - **Unordered** links (Streamable HTTP's stand-in) deliver the server's messages the way
//!   an HTTP client reads them: responses each on a stream of their own (a POST's), all
//!   else on one ordered stream (the GET stream), each delivery held back per
//!   [`Delays`] (`chaos::sample_delay`), so hint changes arrive out of rev order and the
//!   host must hold early revs (§5.2).
//! - **Ordered** links (WebSocket's stand-in) deliver in order, sometimes twice (a
//!   duplicated frame).
//! - Any link may be **cut**: after a seeded random life, or by a mass drop of every
//!   connection at once. Both directions close, the server's session ends, and the host's
//!   link reconnects through the same [`Connector`].
//!
//! Once [`LinkShared::calm`] is set (the drain), nothing is delayed, duplicated or cut.
//!
//! One task per connection does all of it, choosing with a biased `select!` and releasing
//! held messages in (time, arrival) order, so that one seed gives one schedule.

use crate::chaos::{Calm, DelayStats, Delays, sample_delay};
use mcpl_games::arcade::Arcade;
use mcpl_host::link::Connector;
use mcpl_protocol::Message;
use mcpl_transport::delivery::StreamOrigin;
use mcpl_transport::{Connection, Inbound, Outbound, Principal, StreamId, memory};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, sleep_until};

/// The queue depth between the filter and the host, each way.
const DEPTH: usize = 1024;

/// The chaos one kind of link suffers.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LinkChaos {
    /// The mean life of a connection (exponential) before it is cut; `None`: never.
    pub mean_life: Option<Duration>,
    /// Delays of the server's messages; set, the link is unordered.
    pub delays: Option<Delays>,
    /// The chance a server's message is delivered twice (ordered links).
    pub duplicate: f64,
}

/// What every link of a run shares: the calm switch, the mass-drop signal, counters.
#[derive(Debug)]
pub struct LinkShared {
    /// Once set, no more chaos.
    pub calm: Calm,
    /// The live connections' mass-drop signals, in the order they were made.
    mass: Mutex<Vec<oneshot::Sender<()>>>,
    /// Messages held back.
    pub delays: DelayStats,
    /// Connections made.
    pub connections: AtomicU64,
    /// Connections cut at the end of their life.
    pub dropped: AtomicU64,
    /// Connections cut by mass drops.
    pub mass_dropped: AtomicU64,
    /// Messages delivered twice.
    pub duplicated: AtomicU64,
}

impl Default for LinkShared {
    fn default() -> Self {
        LinkShared {
            calm: Calm::default(),
            mass: Mutex::new(Vec::new()),
            delays: DelayStats::default(),
            connections: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            mass_dropped: AtomicU64::new(0),
            duplicated: AtomicU64::new(0),
        }
    }
}

impl LinkShared {
    /// Cuts every connection live now, in the order they were made (one `watch` for all
    /// would wake them in an order of tokio's choosing).
    pub fn mass_drop(&self) {
        let live = std::mem::take(&mut *self.mass.lock().unwrap_or_else(PoisonError::into_inner));
        for signal in live {
            let _ = signal.send(());
        }
    }

    /// A new connection's mass-drop signal.
    fn on_mass_drop(&self) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        let mut live = self.mass.lock().unwrap_or_else(PoisonError::into_inner);
        live.retain(|s| !s.is_closed());
        live.push(tx);
        rx
    }
}

/// A connector for principal `name`: each attempt a fresh in-memory connection to
/// `arcade`, through the filter (ordered unless `chaos.delays` is set), its chaos drawn
/// from a generator seeded with `seed`.
pub fn connector(
    arcade: Arcade,
    name: &str,
    chaos: LinkChaos,
    seed: u64,
    shared: Arc<LinkShared>,
) -> Connector {
    let rng = Mutex::new(StdRng::seed_from_u64(seed));
    let name = name.to_owned();
    Connector::from_fn(move || {
        let (life, seed) = {
            let mut rng = rng.lock().unwrap_or_else(PoisonError::into_inner);
            let life = chaos.mean_life.map(|mean| {
                // Exponential: a connection's chance to be cut does not grow with its age.
                let u: f64 = rng.random();
                mean.mul_f64(-(1.0 - u).ln())
            });
            (life, rng.random::<u64>())
        };
        let (arcade, shared, name) = (arcade.clone(), shared.clone(), name.clone());
        Box::pin(async move {
            let ordered = chaos.delays.is_none();
            let (client, server) = memory::pair(Principal::Named(name), ordered);
            arcade.serve(server);
            shared.connections.fetch_add(1, Ordering::Relaxed);
            Ok(filter(client, chaos, life, seed, shared))
        })
    })
}

/// The host's end of a connection whose traffic goes through [`pump`].
fn filter(
    client: Connection,
    chaos: LinkChaos,
    life: Option<Duration>,
    seed: u64,
    shared: Arc<LinkShared>,
) -> Connection {
    let (out_tx, out_rx) = mpsc::channel(DEPTH);
    let (in_tx, in_rx) = mpsc::channel(DEPTH);
    let info = client.info.clone();
    let pump = Pump {
        chaos,
        rng: StdRng::seed_from_u64(seed),
        shared,
        held: BTreeMap::new(),
        arrivals: 0,
        get_lane: Instant::now(),
        next_stream: 1,
    };
    tokio::spawn(pump.run(client, life, out_rx, in_tx));
    Connection {
        info,
        outbound: Outbound::new(out_tx),
        inbound: in_rx.into(),
    }
}

/// One connection's filter. See the module docs.
struct Pump {
    chaos: LinkChaos,
    rng: StdRng,
    shared: Arc<LinkShared>,
    /// Messages held back, by (release time, arrival number).
    held: BTreeMap<(Instant, u64), Inbound>,
    arrivals: u64,
    /// When the GET stream's last held message is released (its order is kept).
    get_lane: Instant,
    next_stream: u64,
}

impl Pump {
    async fn run(
        mut self,
        client: Connection,
        life: Option<Duration>,
        mut from_host: mpsc::Receiver<Message>,
        to_host: mpsc::Sender<Inbound>,
    ) {
        let mut to_server = Some(client.outbound);
        let mut from_server = client.inbound;
        let mut server_open = true;
        let mut mass = self.shared.on_mass_drop();
        let mut mass_pending = true;
        let mut cut_at = life.map(|l| Instant::now() + l);
        loop {
            let next = self.held.first_key_value().map(|(k, _)| k.0);
            tokio::select! {
                biased;
                () = to_host.closed() => break,
                () = sleep_until(cut_at.unwrap_or_else(Instant::now)), if cut_at.is_some() => {
                    cut_at = None;
                    if !self.shared.calm.is_set() {
                        self.shared.dropped.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                }
                r = &mut mass, if mass_pending => {
                    mass_pending = false;
                    if r.is_ok() && !self.shared.calm.is_set() {
                        self.shared.mass_dropped.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                }
                () = sleep_until(next.unwrap_or_else(Instant::now)), if next.is_some() => {
                    if !self.release(&to_host).await {
                        break;
                    }
                }
                m = from_server.recv(), if server_open => match m {
                    Some(m) => self.arrive(m),
                    None => server_open = false,
                },
                m = from_host.recv(), if to_server.is_some() => match (m, &to_server) {
                    (Some(m), Some(out)) => {
                        // The server gone: the host learns it when the inbound ends.
                        let _ = out.send(m).await;
                    }
                    _ => to_server = None,
                },
            }
            if !server_open && self.held.is_empty() {
                break;
            }
        }
        // Dropping both ends closes the server's session and the host's inbound.
    }

    /// Holds one message from the server until its release time.
    fn arrive(&mut self, m: Inbound) {
        let now = Instant::now();
        let calm = self.shared.calm.is_set();
        let Some(delays) = self.chaos.delays else {
            let twice = !calm
                && self.chaos.duplicate > 0.0
                && self.rng.random_bool(self.chaos.duplicate.min(1.0));
            if twice && let Inbound::Message { stream, message } = &m {
                self.shared.duplicated.fetch_add(1, Ordering::Relaxed);
                let copy = Inbound::Message {
                    stream: *stream,
                    message: message.clone(),
                };
                self.hold(now, copy);
            }
            self.hold(now, m);
            return;
        };
        let response = matches!(
            m,
            Inbound::Message {
                message: Message::Response(_),
                ..
            }
        );
        let origin = if response {
            StreamOrigin::PostResponse
        } else {
            StreamOrigin::GetStream
        };
        let delay = if calm {
            Duration::ZERO
        } else {
            sample_delay(&delays, origin, &mut self.rng, &self.shared.delays)
        };
        let m = match m {
            Inbound::Message { message, .. } if response => {
                // A response is its POST's own stream.
                let stream = StreamId(self.next_stream);
                self.next_stream += 1;
                Inbound::Message { stream, message }
            }
            other => other,
        };
        let at = if response {
            now + delay
        } else {
            self.get_lane = self.get_lane.max(now + delay);
            self.get_lane
        };
        self.hold(at, m);
    }

    fn hold(&mut self, at: Instant, m: Inbound) {
        self.held.insert((at, self.arrivals), m);
        self.arrivals += 1;
    }

    /// Delivers every held message whose time has come; false when the host is gone.
    async fn release(&mut self, to_host: &mpsc::Sender<Inbound>) -> bool {
        let now = Instant::now();
        while let Some(entry) = self.held.first_entry() {
            if entry.key().0 > now {
                break;
            }
            if to_host.send(entry.remove()).await.is_err() {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::jsonrpc::{Id, Notification, Response};

    fn note(n: i64) -> Message {
        Message::Notification(Notification {
            method: format!("n{n}"),
            params: None,
        })
    }

    fn response(n: i64) -> Message {
        Message::Response(Response::ok(Id::Number(n), serde_json::json!({})))
    }

    fn label(m: &Inbound) -> String {
        match m {
            Inbound::Message {
                message: Message::Notification(n),
                ..
            } => n.method.clone(),
            Inbound::Message {
                message: Message::Response(r),
                ..
            } => format!("r{:?}", r.id),
            other => format!("{other:?}"),
        }
    }

    /// A filtered pair with `server` the far end, whatever `chaos` says.
    fn pair(chaos: LinkChaos, life: Option<Duration>, seed: u64) -> (Connection, Connection) {
        let (client, server) = memory::pair(Principal::Named("p".into()), chaos.delays.is_none());
        let host = filter(client, chaos, life, seed, Arc::new(LinkShared::default()));
        (host, server)
    }

    #[tokio::test(start_paused = true)]
    async fn an_unordered_link_reorders_responses_and_keeps_the_get_streams_order() {
        let delays = Delays {
            get: (0.5, Duration::from_millis(100)),
            post: (0.5, Duration::from_millis(100)),
            late: 0.0,
        };
        let chaos = LinkChaos {
            delays: Some(delays),
            ..Default::default()
        };
        let mut reordered = false;
        for seed in 0..20 {
            let (mut host, server) = pair(chaos, None, seed);
            for i in 0..10 {
                server.outbound.send(note(i)).await.unwrap();
                server.outbound.send(response(i)).await.unwrap();
            }
            let mut got = Vec::new();
            for _ in 0..20 {
                got.push(label(&host.inbound.recv().await.unwrap()));
            }
            let notes: Vec<&String> = got.iter().filter(|l| l.starts_with('n')).collect();
            let want: Vec<String> = (0..10).map(|i| format!("n{i}")).collect();
            assert_eq!(notes, want.iter().collect::<Vec<_>>(), "seed {seed}");
            let sent: Vec<String> = (0..10)
                .flat_map(|i| [format!("n{i}"), format!("r{:?}", Some(Id::Number(i)))])
                .collect();
            reordered |= got != sent;
        }
        assert!(reordered, "some seed reorders");
    }

    #[tokio::test(start_paused = true)]
    async fn a_cut_closes_both_ends() {
        let (mut host, mut server) = pair(LinkChaos::default(), Some(Duration::from_secs(1)), 1);
        server.outbound.send(note(1)).await.unwrap();
        assert_eq!(label(&host.inbound.recv().await.unwrap()), "n1");
        // After its life the link is cut: both ends see the close.
        assert!(host.inbound.recv().await.is_none());
        assert!(server.inbound.recv().await.is_none());
        assert!(host.outbound.send(note(2)).await.is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn an_ordered_link_keeps_order_and_may_duplicate() {
        let chaos = LinkChaos {
            duplicate: 0.5,
            ..Default::default()
        };
        let (mut host, server) = pair(chaos, None, 3);
        for i in 0..20 {
            server.outbound.send(note(i)).await.unwrap();
        }
        drop(server);
        let mut got = Vec::new();
        while let Some(m) = host.inbound.recv().await {
            got.push(label(&m));
        }
        let mut dedup = got.clone();
        dedup.dedup();
        let want: Vec<String> = (0..20).map(|i| format!("n{i}")).collect();
        assert_eq!(dedup, want);
        assert!(got.len() > 20, "some were duplicated: {got:?}");
    }
}
