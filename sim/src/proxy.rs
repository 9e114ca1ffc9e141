//! The chaos runs' fault proxy: the one TCP proxy of the workspace
//! ([`mcpl_testkit::proxy::Proxy`]) in front of one of the arcade's listeners, with the
//! chaos level's faults chosen by a seeded random source:
//!
//! - **Drops**: each connection is given a random lifetime (exponential around
//!   [`Faults::mean_life`]), after which both sides are cut (a host sees its WebSocket
//!   close, or an HTTP request or GET stream fail).
//! - **Mass drop**: [`Proxy::cut_all`] cuts every connection at once.
//! - **Duplicated frames** (WebSocket only): a complete server → client text frame is
//!   sometimes written twice: the host reads the same message twice.
//! - **Lost answers** ([`start_losing`]): an HTTP answer is cut as it starts, with a
//!   chance — the request was served, the client reads the end of the stream instead.
//! - **Upstream**: [`Proxy::set_upstream`] points new connections elsewhere (the arcade's
//!   new listener after a restart) while the proxy keeps its address.

use mcpl_testkit::proxy::{Direction, Frame, Verdict};
pub use mcpl_testkit::proxy::{Proxy, Stats};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::io;
use std::net::SocketAddr;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

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

/// A proxy on 127.0.0.1:0 forwarding to `upstream` with these faults, its choices seeded.
pub async fn start(upstream: SocketAddr, faults: Faults, seed: u64) -> io::Result<Proxy> {
    start_losing(upstream, faults, 0.0, seed).await
}

/// [`start`], and each HTTP answer lost with chance `lose` (cut as it starts).
pub async fn start_losing(
    upstream: SocketAddr,
    faults: Faults,
    lose: f64,
    seed: u64,
) -> io::Result<Proxy> {
    let seeded = Seeded {
        faults,
        lose,
        rng: Mutex::new(StdRng::seed_from_u64(seed)),
    };
    Proxy::start_with(upstream, seeded).await
}

/// [`Faults`] as the proxy asks about them, drawn from one seeded source.
struct Seeded {
    faults: Faults,
    /// The chance an HTTP answer is lost.
    lose: f64,
    rng: Mutex<StdRng>,
}

impl Seeded {
    fn draw<T>(&self, f: impl FnOnce(&mut StdRng) -> T) -> T {
        f(&mut self.rng.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl mcpl_testkit::proxy::Faults for Seeded {
    fn lifetime(&self, _conn: u64) -> Option<Duration> {
        let mean = self.faults.mean_life?;
        let u: f64 = self.draw(|r| r.random_range(0.0001..1.0));
        Some(mean.mul_f64(-u.ln()))
    }

    fn websocket(&self) -> bool {
        self.faults.websocket && self.faults.duplicate > 0.0
    }

    fn frame(&self, _conn: u64, direction: Direction, frame: &Frame<'_>) -> Verdict {
        // A whole text message (FIN set, text opcode): safe to repeat.
        let whole_text = frame.fin && frame.opcode == 1;
        if direction == Direction::Down
            && whole_text
            && self.draw(|r| r.random_bool(self.faults.duplicate.min(1.0)))
        {
            Verdict::Twice
        } else {
            Verdict::Pass
        }
    }

    fn answer(&self, _conn: u64) -> Verdict {
        if self.lose > 0.0 && self.draw(|r| r.random_bool(self.lose.min(1.0))) {
            Verdict::Cut
        } else {
            Verdict::Pass
        }
    }
}
