//! A fault-injecting TCP proxy on loopback, in front of one of the arcade's listeners.
//!
//! - **Drops**: each connection may be given a lifetime, after which both sides are cut
//!   (a host sees its WebSocket close, or an HTTP request or GET stream fail).
//! - **Mass drop**: [`Proxy::drop_all`] cuts every connection at once.
//! - **Duplicated frames** (WebSocket only): after the upgrade, server → client bytes are
//!   read as WebSocket frames (unmasked, as a server sends them) and a complete text frame
//!   is sometimes written twice: the host reads the same message twice.
//! - **Upstream**: [`Proxy::set_upstream`] points new connections elsewhere (the arcade's
//!   new listener after a restart) while the proxy keeps its address.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What the proxy does to connections.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Faults {
    /// The mean lifetime of a connection before it is cut (`None`: never cut).
    pub mean_life: Option<Duration>,
    /// The chance that a complete server → client WebSocket text frame is sent twice.
    pub duplicate: f64,
    /// Read server → client bytes as WebSocket frames (needed for `duplicate`).
    pub websocket: bool,
}

impl Faults {
    /// No faults.
    pub fn none() -> Self {
        Faults {
            mean_life: None,
            duplicate: 0.0,
            websocket: false,
        }
    }
}

/// What the proxy did.
#[derive(Debug, Default)]
pub struct ProxyStats {
    /// Connections accepted.
    pub accepted: AtomicU64,
    /// Connections cut by a drop (their lifetime ran out).
    pub dropped: AtomicU64,
    /// Connections cut by a mass drop.
    pub mass_dropped: AtomicU64,
    /// Frames sent twice.
    pub duplicated: AtomicU64,
}

struct Shared {
    upstream: Mutex<SocketAddr>,
    faults: Faults,
    rng: Mutex<StdRng>,
    /// Bumped by a mass drop: every connection watches it.
    generation: watch::Sender<u64>,
    stats: ProxyStats,
    /// Once set, nothing more is cut or duplicated (but by a mass drop).
    calm: std::sync::atomic::AtomicBool,
}

/// The proxy. Dropping it stops accepting; connections already made are cut too.
pub struct Proxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
        self.shared.generation.send_modify(|g| *g += 1);
    }
}

impl Proxy {
    /// A proxy on 127.0.0.1:0 forwarding to `upstream` with these faults, its choices
    /// seeded.
    pub async fn start(upstream: SocketAddr, faults: Faults, seed: u64) -> io::Result<Proxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            upstream: Mutex::new(upstream),
            faults,
            rng: Mutex::new(StdRng::seed_from_u64(seed)),
            generation: watch::channel(0).0,
            stats: ProxyStats::default(),
            calm: std::sync::atomic::AtomicBool::new(false),
        });
        let s = shared.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                s.stats.accepted.fetch_add(1, Ordering::Relaxed);
                tokio::spawn(connection(s.clone(), client));
            }
        });
        Ok(Proxy { addr, shared, task })
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Points new connections at `upstream`.
    pub fn set_upstream(&self, upstream: SocketAddr) {
        *self
            .shared
            .upstream
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = upstream;
    }

    /// Cuts every connection now.
    pub fn drop_all(&self) {
        self.shared.generation.send_modify(|g| *g += 1);
    }

    /// Stops cutting and duplicating (a mass drop still cuts).
    pub fn calm(&self) {
        self.shared.calm.store(true, Ordering::Relaxed);
    }

    /// What it did.
    pub fn stats(&self) -> &ProxyStats {
        &self.shared.stats
    }
}

impl Shared {
    fn life(&self) -> Option<Duration> {
        let mean = self.faults.mean_life?;
        let u: f64 = self
            .rng
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .random_range(0.0001..1.0);
        Some(mean.mul_f64(-u.ln()))
    }

    fn is_calm(&self) -> bool {
        self.calm.load(Ordering::Relaxed)
    }

    fn duplicate(&self) -> bool {
        !self.is_calm()
            && self.faults.duplicate > 0.0
            && self
                .rng
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .random_bool(self.faults.duplicate.min(1.0))
    }
}

async fn connection(s: Arc<Shared>, client: TcpStream) {
    let upstream = *s.upstream.lock().unwrap_or_else(PoisonError::into_inner);
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let mut cut = s.generation.subscribe();
    let life = s.life();
    let (cr, cw) = client.into_split();
    let (sr, sw) = server.into_split();
    let mut up = tokio::spawn(pump_plain(cr, sw));
    let mut down = tokio::spawn(pump_down(s.clone(), sr, cw));
    let lifetime = async {
        match life {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
        if s.is_calm() {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        _ = lifetime => { s.stats.dropped.fetch_add(1, Ordering::Relaxed); }
        _ = cut.changed() => { s.stats.mass_dropped.fetch_add(1, Ordering::Relaxed); }
        _ = async { let _ = (&mut up).await; let _ = (&mut down).await; } => {}
    }
    // Dropping the halves closes both sockets.
    up.abort();
    down.abort();
}

async fn pump_plain(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown().await;
}

/// Server → client: plain, or frame by frame after a WebSocket upgrade.
async fn pump_down(
    s: Arc<Shared>,
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
) {
    if !s.faults.websocket || s.faults.duplicate <= 0.0 {
        return pump_plain(from, to).await;
    }
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 16 * 1024];
    let mut upgraded = false;
    loop {
        let n = match from.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        if !upgraded {
            let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            let head: Vec<u8> = buf.drain(..end + 4).collect();
            if to.write_all(&head).await.is_err() {
                return;
            }
            upgraded = true;
        }
        while let Some(len) = frame_len(&buf) {
            let frame: Vec<u8> = buf.drain(..len).collect();
            if to.write_all(&frame).await.is_err() {
                return;
            }
            // FIN set, text opcode: a whole message, safe to repeat.
            if frame[0] == 0x81 && s.duplicate() {
                s.stats.duplicated.fetch_add(1, Ordering::Relaxed);
                if to.write_all(&frame).await.is_err() {
                    return;
                }
            }
        }
    }
    let _ = to.shutdown().await;
}

/// The length of the complete WebSocket frame at the start of `buf`, if it is all there.
pub fn frame_len(buf: &[u8]) -> Option<usize> {
    if buf.len() < 2 {
        return None;
    }
    let masked = buf[1] & 0x80 != 0;
    let (len, head) = match buf[1] & 0x7f {
        126 => (
            usize::from(u16::from_be_bytes([*buf.get(2)?, *buf.get(3)?])),
            4,
        ),
        127 => {
            let b: [u8; 8] = buf.get(2..10)?.try_into().ok()?;
            (usize::try_from(u64::from_be_bytes(b)).ok()?, 10)
        }
        n => (usize::from(n), 2),
    };
    let total = head + if masked { 4 } else { 0 } + len;
    (buf.len() >= total).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_measured_by_their_header() {
        assert_eq!(frame_len(&[0x81, 3, b'a', b'b', b'c', 0x81]), Some(5));
        assert_eq!(frame_len(&[0x81, 3, b'a']), None);
        let mut long = vec![0x81, 126, 0x01, 0x00];
        long.extend(vec![0u8; 256]);
        assert_eq!(frame_len(&long), Some(260));
        assert_eq!(frame_len(&long[..100]), None);
        assert_eq!(frame_len(&[0x81, 0x82, 1, 2, 3, 4, 9, 9]), Some(8));
    }

    #[tokio::test]
    async fn bytes_pass_and_a_mass_drop_cuts_every_connection() {
        let echo = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let upstream = echo.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut c, _)) = echo.accept().await {
                tokio::spawn(async move {
                    let (mut r, mut w) = c.split();
                    let _ = tokio::io::copy(&mut r, &mut w).await;
                });
            }
        });
        let proxy = Proxy::start(upstream, Faults::none(), 1).await.unwrap();
        let mut a = TcpStream::connect(proxy.addr()).await.unwrap();
        let mut b = TcpStream::connect(proxy.addr()).await.unwrap();
        a.write_all(b"ping").await.unwrap();
        let mut got = [0u8; 4];
        a.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping");
        b.write_all(b"x").await.unwrap();
        b.read_exact(&mut got[..1]).await.unwrap();
        proxy.drop_all();
        assert_eq!(a.read(&mut got).await.unwrap_or(0), 0, "cut");
        assert_eq!(b.read(&mut got).await.unwrap_or(0), 0, "cut");
        assert_eq!(proxy.stats().mass_dropped.load(Ordering::Relaxed), 2);
    }
}
