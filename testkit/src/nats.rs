//! A private NATS server for a test (issue #41): [`Nats::start`] runs `nats-server -a
//! 127.0.0.1 -p PORT` on a free loopback port (no configuration file, no JetStream) and
//! returns once it accepts connections; [`Nats::stop`] kills it by its own process id and
//! [`Nats::restart`] starts it again on the same port, for the chaos tests (a client's
//! reconnection finds it where it was); dropping it kills it.
//!
//! The binary is `nats-server` on `PATH`, else Debian's `/usr/sbin/nats-server` (the
//! package `nats-server`). Ready means the server said so: its log's "Server is ready"
//! line is awaited (within [`START_LIMIT`]), then a connection to its port is made;
//! nothing sleeps.

use crate::server_log::{Started, free_port, tail, watch};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long the server may take to be ready before [`Nats::start`] fails.
pub const START_LIMIT: Duration = Duration::from_secs(30);

/// How many lines of the server's log are kept for error messages.
const LOG_KEPT: usize = 40;

/// A NATS server of one test. See the module docs.
pub struct Nats {
    /// `None` while stopped.
    child: Option<Child>,
    bin: PathBuf,
    port: u16,
    log: Arc<Mutex<Vec<String>>>,
}

impl std::fmt::Debug for Nats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nats")
            .field("pid", &self.pid())
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

/// `nats-server`: on `PATH`, else Debian's `/usr/sbin/nats-server`.
pub fn binary() -> Option<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
        .map(|dir| dir.join("nats-server"))
        .find(|path| path.is_file())
}

impl Nats {
    /// Starts `nats-server` on a free loopback port and returns once it accepts
    /// connections. Fails with what went wrong (no binary, the server's log).
    pub fn start() -> std::io::Result<Nats> {
        let bin = binary().ok_or_else(|| {
            std::io::Error::other(
                "nats-server was not found (PATH, /usr/sbin): install Debian's `nats-server` \
                 package",
            )
        })?;
        let mut last = String::new();
        // Another process may take the free port before the server does: a few tries.
        for _ in 0..5 {
            let mut nats = Nats {
                child: None,
                bin: bin.clone(),
                port: free_port()?,
                log: Arc::default(),
            };
            match nats.run() {
                Ok(()) => return Ok(nats),
                Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => last = e.to_string(),
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::other(format!(
            "nats-server found no free port in 5 tries:\n{last}"
        )))
    }

    /// Runs the server on `self.port` until it is ready.
    fn run(&mut self) -> std::io::Result<()> {
        let mut child = Command::new(&self.bin)
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        let stderr = child.stderr.take().expect("stderr is piped");
        let log = self.log.clone();
        let started = match watch("mcpl-nats-log", stderr, "Server is ready", log, LOG_KEPT) {
            Ok(started) => started,
            Err(e) => {
                kill(&mut child);
                return Err(e);
            }
        };
        match started.recv_timeout(START_LIMIT) {
            Ok(Started::Ready) => {
                self.child = Some(child);
                TcpStream::connect_timeout(
                    &SocketAddr::from((Ipv4Addr::LOCALHOST, self.port)),
                    START_LIMIT,
                )?;
                Ok(())
            }
            Ok(Started::Stopped) => {
                let _ = child.wait();
                let log = self.log_tail();
                let kind = if log.contains("address already in use") {
                    std::io::ErrorKind::AddrInUse
                } else {
                    std::io::ErrorKind::Other
                };
                Err(std::io::Error::new(
                    kind,
                    format!("nats-server stopped before it was ready:\n{log}"),
                ))
            }
            Err(_) => {
                kill(&mut child);
                Err(std::io::Error::other(format!(
                    "nats-server was not ready within {START_LIMIT:?}:\n{}",
                    self.log_tail()
                )))
            }
        }
    }

    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// The server's port on 127.0.0.1 (the same across [`Nats::restart`]).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's process id; `None` while stopped.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the server by its own process id (SIGKILL: what it had in flight is lost)
    /// and waits for it to be gone. Stopping a stopped server does nothing.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill(&mut child);
        }
    }

    /// Starts the server again on the same port (stopping it first if it runs) and
    /// returns once it accepts connections. Fails when the port was taken meanwhile or
    /// the server does not start.
    pub fn restart(&mut self) -> std::io::Result<()> {
        self.stop();
        self.run()
    }

    /// The last lines of the server's log, for a failing test's message.
    pub fn log_tail(&self) -> String {
        tail(&self.log)
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Kills a server by its own pid and waits for it.
fn kill(child: &mut Child) {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return;
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
/// Whether a process with this id is still there (not yet reaped, or running).
fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_starts_stops_restarts_on_its_port_and_is_gone_once_dropped() {
        let mut nats = Nats::start().expect("nats-server starts");
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, nats.port()));
        TcpStream::connect(addr).expect("it accepts connections");
        assert_eq!(nats.url(), format!("nats://127.0.0.1:{}", nats.port()));
        let first = nats.pid().expect("running");
        nats.stop();
        assert!(!alive(first), "the server's process is gone");
        assert!(nats.pid().is_none());
        assert!(TcpStream::connect(addr).is_err(), "its port is closed");
        nats.restart().expect("it starts again");
        let second = nats.pid().expect("running again");
        assert_ne!(first, second);
        TcpStream::connect(addr).expect("it accepts connections on the same port");
        drop(nats);
        assert!(!alive(second), "the server's process is gone once dropped");
        assert!(TcpStream::connect(addr).is_err(), "its port is closed");
    }
}
