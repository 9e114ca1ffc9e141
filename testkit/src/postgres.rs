//! A private PostgreSQL for one test (issue #41): [`Postgres::start`] makes a cluster with
//! `initdb` in a temporary directory and runs `postgres` on it on a free loopback port,
//! TCP only; dropping it stops that server, by its own process id, and removes the
//! directory. Nothing depends on a PostgreSQL running on the machine.
//!
//! The binaries are found as `pg_config --bindir` says, else in Debian's
//! `/usr/lib/postgresql/VERSION/bin` (the newest), else on `PATH`. `initdb` refuses to run
//! as root: run as root (CI), the cluster is made and served as the unprivileged user
//! `postgres` (Debian's package creates it) or, without one, `nobody`, and the directory
//! is given to that user.
//!
//! [`Postgres::stop_immediate`] stops it as `pg_ctl stop -m immediate` does (SIGQUIT to the
//! postmaster, by its own process id: no checkpoint, crash recovery at the next start) and
//! [`Postgres::restart`] starts it again on the same data and port, for the tests of a
//! database going away mid-game (issue #41).
//!
//! Ready means the server said so: its log's "database system is ready to accept
//! connections" line is awaited (within [`START_LIMIT`]), as a binary's `listening on`
//! line is, then a connection to its port is made; nothing sleeps.

use crate::server_log::{Started, free_port, tail, watch};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// How long the server may take to be ready before [`Postgres::start`] fails.
pub const START_LIMIT: Duration = Duration::from_secs(60);

/// How many lines of the server's log are kept for error messages.
const LOG_KEPT: usize = 60;

/// A PostgreSQL server of one test. See the module docs.
pub struct Postgres {
    child: Child,
    port: u16,
    log: Arc<Mutex<Vec<String>>>,
    /// The directory of its binaries.
    bin: PathBuf,
    /// Its data directory.
    data: PathBuf,
    /// The user it runs as (`None`: this process's).
    user: Option<(u32, u32)>,
    /// Removed once the server stopped (declared last: dropped after `Drop::drop`).
    _dir: tempfile::TempDir,
}

impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Postgres")
            .field("pid", &self.child.id())
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

/// The directory holding `initdb` and `postgres`: `pg_config --bindir`, Debian's
/// `/usr/lib/postgresql/*/bin` (the newest version first), then `PATH`.
pub fn bindir() -> Option<PathBuf> {
    let has_both = |dir: &Path| dir.join("initdb").is_file() && dir.join("postgres").is_file();
    let from_pg_config = Command::new("pg_config")
        .arg("--bindir")
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let mut debian: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((version, e.path().join("bin")))
        })
        .collect();
    debian.sort_by_key(|(version, _)| std::cmp::Reverse(*version));
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    from_pg_config
        .into_iter()
        .chain(debian.into_iter().map(|(_, dir)| dir))
        .chain(on_path)
        .find(|dir| has_both(dir))
}

/// The user the server runs as: `None` for this process's own; when it is root, the
/// unprivileged `postgres` (else `nobody`): `(uid, gid)`.
fn server_user() -> std::io::Result<Option<(u32, u32)>> {
    if !nix::unistd::geteuid().is_root() {
        return Ok(None);
    }
    for name in ["postgres", "nobody"] {
        if let Ok(Some(user)) = nix::unistd::User::from_name(name) {
            return Ok(Some((user.uid.as_raw(), user.gid.as_raw())));
        }
    }
    Err(std::io::Error::other(
        "running as root, and initdb refuses root: no unprivileged user `postgres` or \
         `nobody` to run PostgreSQL as (install Debian's `postgresql` package, which creates \
         `postgres`)",
    ))
}

impl Postgres {
    /// Makes a cluster in a temporary directory and serves it on a free loopback port,
    /// returning once it accepts connections. The superuser is `postgres`, let in without
    /// a password from loopback (`trust`): [`Postgres::url`]. Fails with what went wrong
    /// (no binaries, `initdb`'s output, the server's log).
    pub fn start() -> std::io::Result<Postgres> {
        let bin = bindir().ok_or_else(|| {
            std::io::Error::other(
                "PostgreSQL's initdb and postgres were not found (pg_config --bindir, \
                 /usr/lib/postgresql/*/bin, PATH): install Debian's `postgresql` package",
            )
        })?;
        let user = server_user()?;
        let dir = tempfile::Builder::new().prefix("mcpl-pg-").tempdir()?;
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))?;
        }
        let data = dir.path().join("data");
        let cwd = dir.path().to_owned();
        let as_user = move |command: &mut Command| {
            command.current_dir(&cwd);
            if let Some((uid, gid)) = user {
                command.uid(uid).gid(gid);
            }
        };
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "--locale=C",
                "-E",
                "UTF8",
            ])
            .stdin(Stdio::null());
        as_user(&mut initdb);
        let made = initdb.output()?;
        if !made.status.success() {
            return Err(std::io::Error::other(format!(
                "initdb failed ({}):\n{}{}",
                made.status,
                String::from_utf8_lossy(&made.stdout),
                String::from_utf8_lossy(&made.stderr)
            )));
        }
        // Another process may take the free port before the server does: a few tries.
        let mut last = String::new();
        for _ in 0..5 {
            let port = free_port()?;
            let log = Arc::new(Mutex::new(Vec::new()));
            let (mut child, started) = spawn(&bin, &data, dir.path(), user, port, &log)?;
            match started.recv_timeout(START_LIMIT) {
                Ok(Started::Ready) => {
                    let pg = Postgres {
                        child,
                        port,
                        log,
                        bin,
                        data,
                        user,
                        _dir: dir,
                    };
                    // Dropping `pg` on an error stops the server.
                    pg.connectable()?;
                    return Ok(pg);
                }
                Ok(Started::Stopped) => {
                    let _ = child.wait();
                    last = tail(&log);
                    if !(last.contains("could not bind") || last.contains("in use")) {
                        return Err(std::io::Error::other(format!(
                            "postgres stopped before it was ready:\n{last}"
                        )));
                    }
                }
                Err(_) => {
                    stop(&mut child);
                    return Err(std::io::Error::other(format!(
                        "postgres was not ready within {START_LIMIT:?}:\n{}",
                        tail(&log)
                    )));
                }
            }
        }
        Err(std::io::Error::other(format!(
            "postgres found no free port in 5 tries:\n{last}"
        )))
    }

    /// A connection to its port can be made (within [`START_LIMIT`]).
    fn connectable(&self) -> std::io::Result<()> {
        TcpStream::connect_timeout(
            &SocketAddr::from((Ipv4Addr::LOCALHOST, self.port)),
            START_LIMIT,
        )
        .map(drop)
    }

    /// Stops the server as `pg_ctl stop -m immediate` does: SIGQUIT to the postmaster, by
    /// its own process id (it ends its backends at once, with no checkpoint: the next
    /// start recovers from the WAL, as after a crash), then waits for it to exit. Clients'
    /// connections are cut; nothing committed is lost. Nothing happens when it is stopped.
    pub fn stop_immediate(&mut self) {
        stop(&mut self.child);
    }

    /// Starts the server again on the same data directory and port, returning once it
    /// accepts connections (after its crash recovery, when it was stopped immediately).
    /// Stops it first when it runs. Fails with its log when it does not start (the port
    /// taken meanwhile by another process, say).
    pub fn restart(&mut self) -> std::io::Result<()> {
        stop(&mut self.child);
        let cwd = self
            .data
            .parent()
            .map_or_else(|| self.data.clone(), Path::to_path_buf);
        let (mut child, started) =
            spawn(&self.bin, &self.data, &cwd, self.user, self.port, &self.log)?;
        match started.recv_timeout(START_LIMIT) {
            Ok(Started::Ready) => {
                self.child = child;
                self.connectable()
            }
            Ok(Started::Stopped) => {
                let _ = child.wait();
                Err(std::io::Error::other(format!(
                    "postgres stopped before it was ready again:\n{}",
                    tail(&self.log)
                )))
            }
            Err(_) => {
                stop(&mut child);
                Err(std::io::Error::other(format!(
                    "postgres was not ready again within {START_LIMIT:?}:\n{}",
                    tail(&self.log)
                )))
            }
        }
    }

    /// One server shared by the tests of a test binary that run at once: the one running,
    /// else a new one. It stops once the last test holding it drops it (a static would
    /// never be dropped, and would leave the server running past the tests). Tests
    /// sharing it keep apart by database ([`Postgres::url_of`], made with `CREATE
    /// DATABASE`) or by keys.
    pub fn shared() -> std::io::Result<Arc<Postgres>> {
        static SHARED: Mutex<std::sync::Weak<Postgres>> = Mutex::new(std::sync::Weak::new());
        let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(pg) = shared.upgrade() {
            return Ok(pg);
        }
        let pg = Arc::new(Postgres::start()?);
        *shared = Arc::downgrade(&pg);
        Ok(pg)
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`: the superuser, on the database
    /// every cluster has.
    pub fn url(&self) -> String {
        self.url_of("postgres")
    }

    /// The URL of the database `name` on this server, as the superuser.
    pub fn url_of(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// The server's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's process id (the postmaster's).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last lines of the server's log, for a failing test's message.
    pub fn log_tail(&self) -> String {
        tail(&self.log)
    }
}

/// Runs `postgres` on `data` at 127.0.0.1:`port` (TCP only) as `user`, its log read into
/// `log`: the child, and what its log says while it starts.
fn spawn(
    bin: &Path,
    data: &Path,
    cwd: &Path,
    user: Option<(u32, u32)>,
    port: u16,
    log: &Arc<Mutex<Vec<String>>>,
) -> std::io::Result<(Child, std::sync::mpsc::Receiver<Started>)> {
    let mut server = Command::new(bin.join("postgres"));
    server
        .arg("-D")
        .arg(data)
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args([
            "-c",
            "unix_socket_directories=",
            "-c",
            "lc_messages=C",
            "-c",
            "logging_collector=off",
            "-c",
            "shared_buffers=16MB",
            "-c",
            "max_connections=50",
        ])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some((uid, gid)) = user {
        server.uid(uid).gid(gid);
    }
    let mut child = server.spawn()?;
    let stderr = child.stderr.take().expect("stderr is piped");
    let ready = "database system is ready to accept connections";
    match watch("mcpl-pg-log", stderr, ready, log.clone(), LOG_KEPT) {
        Ok(started) => Ok((child, started)),
        Err(e) => {
            stop(&mut child);
            Err(e)
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

/// Stops a server by its own pid: SIGQUIT, PostgreSQL's immediate shutdown (the postmaster
/// ends its backends and exits; it kills any that linger itself), then waits for it.
fn stop(child: &mut Child) {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return;
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    if nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGQUIT).is_err() {
        let _ = child.kill();
    }
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_starts_accepts_connections_and_is_gone_once_dropped() {
        let pg = Postgres::start().expect("PostgreSQL starts");
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, pg.port()));
        TcpStream::connect(addr).expect("it accepts connections");
        let pid = pg.pid();
        assert!(pg.url().ends_with(&format!(":{}/postgres", pg.port())));
        drop(pg);
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "the server's process is gone"
        );
        assert!(TcpStream::connect(addr).is_err(), "its port is closed");
    }

    #[test]
    fn a_server_stopped_immediately_starts_again_on_its_port() {
        let mut pg = Postgres::start().expect("PostgreSQL starts");
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, pg.port()));
        let first = pg.pid();
        pg.stop_immediate();
        assert!(
            !Path::new(&format!("/proc/{first}")).exists(),
            "the server's process is gone"
        );
        assert!(TcpStream::connect(addr).is_err(), "its port is closed");
        pg.restart().expect("it starts again");
        assert_ne!(pg.pid(), first);
        TcpStream::connect(addr).expect("it accepts connections on the same port");
    }
}
