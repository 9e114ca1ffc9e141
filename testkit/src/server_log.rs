//! What the tests' database and bus servers ([`Postgres`](crate::postgres::Postgres),
//! [`Nats`](crate::nats::Nats)) share while they start: a free loopback port, and their
//! log read on a thread of its own until it says they are ready, its last lines kept for
//! a failing test's message.

use std::io::{BufRead as _, BufReader};
use std::net::{Ipv4Addr, TcpListener};
use std::process::ChildStderr;
use std::sync::{Arc, Mutex, PoisonError, mpsc};

/// A port free on loopback now.
pub(crate) fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

/// What a server's log said while it started.
pub(crate) enum Started {
    /// A line said it is ready.
    Ready,
    /// Its log ended (it stopped) before it was ready.
    Stopped,
}

/// Reads `stderr` to its end on a thread named `name` (or the server would block on a full
/// pipe), keeping its last `keep` lines in `kept`; the receiver is told [`Started::Ready`]
/// when a line contains `ready`, and [`Started::Stopped`] when the log ends.
pub(crate) fn watch(
    name: &str,
    stderr: ChildStderr,
    ready: &'static str,
    kept: Arc<Mutex<Vec<String>>>,
    keep: usize,
) -> std::io::Result<mpsc::Receiver<Started>> {
    let (said, started) = mpsc::channel();
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains(ready) {
                    let _ = said.send(Started::Ready);
                }
                let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
                if kept.len() == keep {
                    kept.remove(0);
                }
                kept.push(line);
            }
            let _ = said.send(Started::Stopped);
        })?;
    Ok(started)
}

/// The lines kept of a server's log, one string.
pub(crate) fn tail(log: &Mutex<Vec<String>>) -> String {
    log.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .join("\n")
}
