//! A fault-injecting TCP proxy on loopback: the one the suites and the simulator put
//! between a host and a server to break the connection on purpose.
//!
//! Bytes pass both ways unchanged (a half-close passes too) until the proxy is told to
//! do otherwise:
//!
//! | fault | how |
//! |---|---|
//! | cut every connection now | [`Proxy::cut_all`] (and dropping the proxy) |
//! | hold what the server sends, then let it through | [`Proxy::hold`], [`Proxy::release`] |
//! | send new connections elsewhere (a restarted server) | [`Proxy::set_upstream`] |
//! | cut a connection when its lifetime runs out | [`Faults::lifetime`] |
//! | per WebSocket frame (a fragmented message's frames together): pass it, send it twice, or cut the connection there (the frame not delivered) | [`Faults::websocket`], [`Faults::frame`] |
//! | per HTTP answer: pass it, or cut the connection as it starts (the request was served, its answer is lost) | [`Faults::answer`] |
//!
//! [`Proxy::calm`] stops the scheduled faults (lifetimes, frame and answer verdicts) for the rest
//! of a run; [`Proxy::stats`] counts what the proxy did. A connection whose upstream
//! refuses is closed at once. A cut closes both sockets: each side reads the end of the
//! stream (no WebSocket close frame, no HTTP response).

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Which way bytes travel through the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the client (who connected to the proxy) to the server.
    Up,
    /// From the server to the client.
    Down,
}

/// One whole WebSocket frame as it crossed the proxy, its payload unmasked; a message sent
/// in fragments comes as one, its payloads joined (its first frame's opcode, FIN set).
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// The FIN bit: the last frame of its message.
    pub fin: bool,
    /// The opcode (1 text, 2 binary, 8 close, 9 ping, 10 pong, 0 continuation).
    pub opcode: u8,
    /// The payload, unmasked.
    pub payload: &'a [u8],
}

impl Frame<'_> {
    /// The text of a whole text message in one frame (FIN set, opcode 1), if it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        (self.fin && self.opcode == 1)
            .then(|| std::str::from_utf8(self.payload).ok())
            .flatten()
    }
}

/// What the proxy does with one WebSocket frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Deliver it.
    Pass,
    /// Deliver it twice (the reader gets the same message twice).
    Twice,
    /// Do not deliver it: cut the connection here, both ways.
    Cut,
}

/// The faults a proxy schedules on its own: each connection's lifetime, and a verdict on
/// each WebSocket frame. Every method has a harmless default; `()` is no faults at all.
pub trait Faults: Send + Sync + 'static {
    /// How long connection `conn` (numbered from 1 in the order the proxy accepted them)
    /// lives before the proxy cuts it; `None`: it is never cut for its age.
    fn lifetime(&self, conn: u64) -> Option<Duration> {
        let _ = conn;
        None
    }

    /// Whether to read the bytes after a WebSocket upgrade as frames, asking
    /// [`Faults::frame`] about each. Otherwise bytes are copied as they come (cheaper).
    fn websocket(&self) -> bool {
        false
    }

    /// The verdict on a whole WebSocket frame travelling `direction` on connection `conn`
    /// (asked only when [`Faults::websocket`] is true, and not once the proxy is calm).
    fn frame(&self, conn: u64, direction: Direction, frame: &Frame<'_>) -> Verdict {
        let _ = (conn, direction, frame);
        Verdict::Pass
    }

    /// The verdict on an HTTP answer starting on connection `conn` (a server → client read
    /// that begins with `HTTP/`, on a connection not read as WebSocket frames): [`Verdict::Cut`]
    /// cuts the connection before any of it is delivered — the server took the request and
    /// answered, the client reads the end of the stream instead. Not asked once the proxy
    /// is calm; [`Verdict::Twice`] passes it once.
    fn answer(&self, conn: u64) -> Verdict {
        let _ = conn;
        Verdict::Pass
    }
}

impl Faults for () {}

/// Faults the test keeps a handle on too (to read what they saw, or to arm them later).
impl<T: Faults + ?Sized> Faults for Arc<T> {
    fn lifetime(&self, conn: u64) -> Option<Duration> {
        (**self).lifetime(conn)
    }

    fn websocket(&self) -> bool {
        (**self).websocket()
    }

    fn frame(&self, conn: u64, direction: Direction, frame: &Frame<'_>) -> Verdict {
        (**self).frame(conn, direction, frame)
    }

    fn answer(&self, conn: u64) -> Verdict {
        (**self).answer(conn)
    }
}

/// What a proxy did so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Connections accepted (also those whose upstream refused).
    pub accepted: u64,
    /// Connections cut because their lifetime ran out.
    pub lifetime_cuts: u64,
    /// Connections cut by [`Proxy::cut_all`].
    pub mass_cuts: u64,
    /// Connections cut by a frame's [`Verdict::Cut`].
    pub frame_cuts: u64,
    /// Frames sent twice.
    pub duplicated: u64,
    /// Connections cut as an HTTP answer started ([`Faults::answer`]).
    pub answer_cuts: u64,
    /// Accepts that failed (out of file descriptors, say); the proxy went on accepting.
    pub accept_failures: u64,
}

#[derive(Default)]
struct Counters {
    accepted: AtomicU64,
    lifetime_cuts: AtomicU64,
    mass_cuts: AtomicU64,
    frame_cuts: AtomicU64,
    duplicated: AtomicU64,
    answer_cuts: AtomicU64,
    accept_failures: AtomicU64,
}

struct Shared {
    upstream: Mutex<SocketAddr>,
    faults: Box<dyn Faults>,
    /// Bumped by a mass cut: every connection watches it.
    generation: watch::Sender<u64>,
    /// True while server → client bytes are held.
    held: watch::Sender<bool>,
    /// Once set, lifetimes cut nothing and frames are not asked about.
    calm: AtomicBool,
    counters: Counters,
}

/// The proxy: listens on 127.0.0.1 and forwards each connection to its upstream.
/// Dropping it stops accepting and cuts the connections it made.
pub struct Proxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
        self.cut_all();
    }
}

impl Proxy {
    /// A proxy with no faults of its own (cut, hold and redirect it by hand).
    pub async fn start(upstream: SocketAddr) -> io::Result<Proxy> {
        Self::start_with(upstream, ()).await
    }

    /// A proxy that also schedules `faults`.
    pub async fn start_with(upstream: SocketAddr, faults: impl Faults) -> io::Result<Proxy> {
        // The accept queue as long as the system allows, as the transport's listeners ask
        // (`mcpl_transport::accept::LISTEN_BACKLOG`): a mass reconnection through the proxy
        // waits its turn instead of its SYNs being dropped and retried a second later.
        let socket = TcpSocket::new_v4()?;
        socket.bind((Ipv4Addr::LOCALHOST, 0).into())?;
        let listener = socket.listen(65_535)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            upstream: Mutex::new(upstream),
            faults: Box::new(faults),
            generation: watch::channel(0).0,
            held: watch::channel(false).0,
            calm: AtomicBool::new(false),
            counters: Counters::default(),
        });
        let s = shared.clone();
        let task = tokio::spawn(async move {
            loop {
                let failures = &s.counters.accept_failures;
                let client = accept_past_errors(|| listener.accept(), failures).await;
                let n = s.counters.accepted.fetch_add(1, Ordering::Relaxed) + 1;
                // Subscribed here, not in the task: a cut right after the accept reaches it.
                let cut = s.generation.subscribe();
                tokio::spawn(connection(s.clone(), client.0, n, cut));
            }
        });
        Ok(Proxy { addr, shared, task })
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Sends connections accepted from now on to `upstream` (those made stay where they are).
    pub fn set_upstream(&self, upstream: SocketAddr) {
        *self
            .shared
            .upstream
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = upstream;
    }

    /// Cuts every connection made so far, both ways.
    pub fn cut_all(&self) {
        self.shared.generation.send_modify(|g| *g += 1);
    }

    /// Holds what servers send from now on, on every connection (clients' bytes still go
    /// through).
    pub fn hold(&self) {
        self.shared.held.send_replace(true);
    }

    /// Lets through what was held, and what comes after.
    pub fn release(&self) {
        self.shared.held.send_replace(false);
    }

    /// Stops the scheduled faults for good: lifetimes cut nothing more and frames pass
    /// unasked ([`Proxy::cut_all`] and [`Proxy::hold`] still work).
    pub fn calm(&self) {
        self.shared.calm.store(true, Ordering::Relaxed);
    }

    /// What it did so far.
    pub fn stats(&self) -> Stats {
        let c = &self.shared.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Stats {
            accepted: get(&c.accepted),
            lifetime_cuts: get(&c.lifetime_cuts),
            mass_cuts: get(&c.mass_cuts),
            frame_cuts: get(&c.frame_cuts),
            duplicated: get(&c.duplicated),
            answer_cuts: get(&c.answer_cuts),
            accept_failures: get(&c.accept_failures),
        }
    }
}

impl Shared {
    fn is_calm(&self) -> bool {
        self.calm.load(Ordering::Relaxed)
    }
}

/// A pump stopped because a verdict cut the connection: a frame's, or an answer's.
enum FrameCut {
    /// A WebSocket frame's ([`Faults::frame`]).
    Frame,
    /// An HTTP answer's ([`Faults::answer`]).
    Answer,
}

async fn connection(s: Arc<Shared>, client: TcpStream, n: u64, mut cut: watch::Receiver<u64>) {
    let upstream = *s.upstream.lock().unwrap_or_else(PoisonError::into_inner);
    // Nothing listening upstream: the client's connection is closed.
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let life = s.faults.lifetime(n);
    let (cr, cw) = client.into_split();
    let (sr, sw) = server.into_split();
    let pumps = async {
        tokio::try_join!(
            pump(&s, n, Direction::Up, cr, sw),
            pump(&s, n, Direction::Down, sr, cw)
        )
    };
    let lifetime = async {
        match life {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
        if s.is_calm() {
            std::future::pending::<()>().await;
        }
    };
    let counter = tokio::select! {
        ended = pumps => match ended {
            Ok(_) => return,
            Err(FrameCut::Frame) => &s.counters.frame_cuts,
            Err(FrameCut::Answer) => &s.counters.answer_cuts,
        },
        () = lifetime => &s.counters.lifetime_cuts,
        _ = cut.changed() => &s.counters.mass_cuts,
    };
    counter.fetch_add(1, Ordering::Relaxed);
    // Returning drops the pumps and with them all four halves: both sockets close.
}

/// The most one read of a pump takes.
const CHUNK: usize = 16 * 1024;

/// Copies `from` to `to` until `from` ends, then shuts `to`'s writing side. Server →
/// client bytes wait while the proxy holds them. Frame by frame after a WebSocket upgrade
/// when the faults ask for it.
async fn pump(
    s: &Shared,
    n: u64,
    direction: Direction,
    from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
) -> Result<(), FrameCut> {
    let mut held = s.held.subscribe();
    let mut buf: Vec<u8> = Vec::new();
    // Before the upgrade (and for good, if there is none): bytes as they come.
    let mut framing = s.faults.websocket() && !s.is_calm();
    let mut head_seen = false;
    // The frames of a fragmented message so far (see below).
    let mut fragments: Vec<Vec<u8>> = Vec::new();
    loop {
        // An idle connection holds no buffer (issue #42: a 16 KiB one per direction was
        // about 60 KiB of each simulated agent's share of the process, its HTTP host's
        // connections all proxied): wait until there are bytes, then read them into one
        // that lives until they are passed on.
        if from.readable().await.is_err() {
            break;
        }
        let mut chunk = Vec::with_capacity(CHUNK);
        let got = match from.try_read_buf(&mut chunk) {
            Ok(0) => break,
            Ok(got) => got,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(_) => break,
        };
        if direction == Direction::Down && held.wait_for(|h| !*h).await.is_err() {
            break;
        }
        if !framing {
            if direction == Direction::Down
                && chunk[..got].starts_with(b"HTTP/")
                && !s.is_calm()
                && s.faults.answer(n) == Verdict::Cut
            {
                return Err(FrameCut::Answer);
            }
            if to.write_all(&chunk[..got]).await.is_err() {
                return Ok(());
            }
            continue;
        }
        buf.extend_from_slice(&chunk[..got]);
        if !head_seen {
            let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            let head: Vec<u8> = buf.drain(..end + 4).collect();
            if to.write_all(&head).await.is_err() {
                return Ok(());
            }
            head_seen = true;
            framing = upgrades(direction, &head);
            if !framing {
                if to.write_all(&buf).await.is_err() {
                    return Ok(());
                }
                buf.clear();
                continue;
            }
        }
        while let Some(len) = frame_len(&buf) {
            let frame: Vec<u8> = buf.drain(..len).collect();
            let (fin, opcode) = (frame[0] & 0x80 != 0, frame[0] & 0x0f);
            // A message sent in fragments (RFC 6455 §5.4) is judged whole, once its last
            // fragment is in: its frames are held until then (control frames between
            // them pass at once), so that a verdict is about a message, as the reader
            // gets it.
            let data = opcode & 0x8 == 0;
            let frames = if data && (!fin || !fragments.is_empty()) {
                fragments.push(frame);
                if !fin {
                    continue;
                }
                std::mem::take(&mut fragments)
            } else {
                vec![frame]
            };
            let verdict = if s.is_calm() {
                Verdict::Pass
            } else {
                let payload: Vec<u8> = frames.iter().flat_map(|f| unmasked(f)).collect();
                let seen = Frame {
                    fin: true,
                    opcode: frames[0][0] & 0x0f,
                    payload: &payload,
                };
                s.faults.frame(n, direction, &seen)
            };
            let times = match verdict {
                Verdict::Pass => 1,
                Verdict::Twice => {
                    s.counters.duplicated.fetch_add(1, Ordering::Relaxed);
                    2
                }
                Verdict::Cut => return Err(FrameCut::Frame),
            };
            for _ in 0..times {
                for frame in &frames {
                    if to.write_all(frame).await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
        // Nothing of a frame left: the room a long one took is given back.
        if buf.is_empty() && buf.capacity() > CHUNK {
            buf = Vec::new();
        }
    }
    let _ = to.shutdown().await;
    Ok(())
}

/// Whether an HTTP head starts a WebSocket: a request asking to upgrade to it (up), or a
/// `101` answer (down).
fn upgrades(direction: Direction, head: &[u8]) -> bool {
    let head = String::from_utf8_lossy(head).to_ascii_lowercase();
    match direction {
        Direction::Up => head
            .lines()
            .any(|l| l.starts_with("upgrade:") && l.contains("websocket")),
        Direction::Down => head.starts_with("http/1.1 101"),
    }
}

/// The length of the complete WebSocket frame at the start of `buf`, if it is all there
/// (RFC 6455 §5.2).
pub fn frame_len(buf: &[u8]) -> Option<usize> {
    let (head, len) = frame_head(buf)?;
    let total = head.checked_add(len)?;
    (buf.len() >= total).then_some(total)
}

/// A frame's header length (mask key included) and payload length.
fn frame_head(buf: &[u8]) -> Option<(usize, usize)> {
    let second = *buf.get(1)?;
    let masked = second & 0x80 != 0;
    let (len, head) = match second & 0x7f {
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
    Some((head + if masked { 4 } else { 0 }, len))
}

/// The payload of the complete `frame`, unmasked.
fn unmasked(frame: &[u8]) -> Vec<u8> {
    let Some((head, _)) = frame_head(frame) else {
        return Vec::new();
    };
    let mut payload = frame[head..].to_vec();
    if frame[1] & 0x80 != 0 {
        let key = &frame[head - 4..head];
        for (i, b) in payload.iter_mut().enumerate() {
            *b ^= key[i % 4];
        }
    }
    payload
}

/// How long accepting pauses after an error that is not one connection's (as the
/// transport's listeners do, `mcpl_transport::accept`): closing connections may free what
/// it lacked.
const ACCEPT_PAUSE: Duration = Duration::from_millis(50);

/// The next connection `accept` gives, past its errors, each counted in `failures`: a
/// connection's own error (reset before it was taken) is skipped, any other (out of file
/// descriptors, under a simulator's thousands of connections) pauses [`ACCEPT_PAUSE`]. The
/// proxy never stops accepting while it lives: a listener gone would refuse every host's
/// next connection for the rest of a run, a fault no server makes.
async fn accept_past_errors<T, F>(mut accept: impl FnMut() -> F, failures: &AtomicU64) -> T
where
    F: Future<Output = io::Result<T>>,
{
    loop {
        match accept().await {
            Ok(accepted) => return accepted,
            Err(e) => {
                failures.fetch_add(1, Ordering::Relaxed);
                let one_connections = matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
                );
                if !one_connections {
                    tokio::time::sleep(ACCEPT_PAUSE).await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn accepting_goes_on_past_errors_and_pauses_on_lasting_ones() {
        // Out of file descriptors twice, a connection reset once, then a connection.
        let mut script = vec![
            Err(io::Error::from_raw_os_error(24)),
            Err(io::Error::from(io::ErrorKind::ConnectionReset)),
            Err(io::Error::from_raw_os_error(24)),
            Ok(7u32),
        ]
        .into_iter();
        let failures = AtomicU64::new(0);
        let t0 = tokio::time::Instant::now();
        let got = accept_past_errors(
            || std::future::ready(script.next().expect("a step")),
            &failures,
        )
        .await;
        assert_eq!(got, 7);
        assert_eq!(failures.load(Ordering::Relaxed), 3);
        assert_eq!(
            t0.elapsed(),
            ACCEPT_PAUSE * 2,
            "a pause per lasting error only"
        );
    }

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

    #[test]
    fn a_masked_payload_is_read_unmasked() {
        let key = [1u8, 2, 3, 4];
        let masked: Vec<u8> = b"hello"
            .iter()
            .zip(key.iter().cycle())
            .map(|(b, k)| b ^ k)
            .collect();
        let mut frame = vec![0x81, 0x80 | 5];
        frame.extend(key);
        frame.extend(masked);
        assert_eq!(unmasked(&frame), b"hello");
        assert_eq!(unmasked(&[0x81, 2, b'h', b'i']), b"hi");
    }

    #[test]
    fn only_an_upgrade_is_read_as_frames() {
        let ask = b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
        assert!(upgrades(Direction::Up, ask));
        assert!(!upgrades(
            Direction::Up,
            b"POST /mcp HTTP/1.1\r\nHost: x\r\n\r\n"
        ));
        assert!(upgrades(
            Direction::Down,
            b"HTTP/1.1 101 Switching Protocols\r\n\r\n"
        ));
        assert!(!upgrades(Direction::Down, b"HTTP/1.1 200 OK\r\n\r\n"));
    }
}
