//! Faults (issue 7): the server process killed with SIGKILL and restarted mid-game, a link
//! dropped while a call is in flight, and the host restarted on its state directory.
//!
//! The server is a real `mcpl-fixture-server` child over WebSocket (its `game` toolset has
//! instances, a call that waits, a tool that flips a sibling's visibility and one that
//! ends the instance from outside). The host is a real [`Host`] that reaches it through the
//! workspace's fault proxy (`mcpl_testkit::proxy`), reading the WebSocket frames: it logs
//! every message the host writes (so a test counts the host's `toolsets/open` after a
//! restart) and can cut the link at a chosen message from the server (so a test drops a
//! link exactly when a result is on its way).
//!
//! Nothing sleeps: each wait is on the host's status, the proxy's log, or a child's pipe,
//! under a deadline only a failing test reaches.

use mcpl_host::host::{Host, HostConfig, HostHandle, ServerConfig};
use mcpl_host::link::{BackoffConfig, Connector};
use mcpl_testkit::proxy::{Direction, Faults, Frame, Proxy, Verdict};
use mcpl_testkit::within;
use mcpl_tests::interop::{Killed, started_with_first_line};
use mcpl_transport::ClientOptions;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

const SERVER: &str = env!("CARGO_BIN_EXE_mcpl-fixture-server");
/// The fixture's named principal: its connections share toolsets (and keep them across a
/// dropped link).
const TOKEN: &str = mcpl_tests::conformance::contract::DEFAULT_TOKEN;

// ---- the server process ----------------------------------------------------------------

/// A fixture server child, killed (SIGKILL) when dropped.
struct ServerProcess(Killed);

impl ServerProcess {
    /// Starts the server on `addr` (port 0 picks one); returns it and the address it bound.
    fn start(addr: &str) -> (ServerProcess, String) {
        let mut command = Command::new(SERVER);
        command.args(["--ws", addr]).stderr(Stdio::null());
        let (guard, line) = started_with_first_line(command);
        let bound = line
            .strip_prefix("ws://")
            .unwrap_or_else(|| panic!("not the URL line: {line:?}"))
            .to_owned();
        (ServerProcess(guard), bound)
    }

    /// SIGKILL, and reap it.
    fn kill(mut self) {
        self.0.0.kill().expect("SIGKILL");
        self.0.0.wait().expect("reaped");
    }
}

// ---- the proxy ---------------------------------------------------------------------------

type CutRule = Box<dyn Fn(&Value) -> bool + Send>;

/// What the proxy saw and may do, as [`Faults`] on the WebSocket frames it carries.
#[derive(Default)]
struct Watch {
    /// Every message the host wrote: (the proxy's connection number from 1, the message).
    log: Mutex<Vec<(u64, Value)>>,
    logged: watch::Sender<usize>,
    /// When set, the first message from the server it picks is not delivered: the link is
    /// cut there (and the rule is spent).
    cut: Mutex<Option<CutRule>>,
    /// The connection the rule cut.
    cut_on: Mutex<Option<u64>>,
}

impl Faults for Watch {
    fn websocket(&self) -> bool {
        true
    }

    fn frame(&self, conn: u64, direction: Direction, frame: &Frame<'_>) -> Verdict {
        let Some(v) = frame.text().and_then(|t| serde_json::from_str(t).ok()) else {
            return Verdict::Pass;
        };
        match direction {
            Direction::Up => {
                self.log.lock().unwrap().push((conn, v));
                self.logged.send_modify(|c| *c += 1);
                Verdict::Pass
            }
            Direction::Down => {
                let mut rule = self.cut.lock().unwrap();
                if rule.as_ref().is_some_and(|picks| picks(&v)) {
                    *rule = None;
                    *self.cut_on.lock().unwrap() = Some(conn);
                    // Both ends cut: the host reads the link's end, the server too.
                    Verdict::Cut
                } else {
                    Verdict::Pass
                }
            }
        }
    }
}

/// The workspace's fault proxy in front of the fixture server, watching each message.
struct Splice {
    proxy: Proxy,
    watch: Arc<Watch>,
}

impl Splice {
    /// A proxy to the server at `addr`.
    async fn start(addr: &str) -> Self {
        let watch = Arc::new(Watch::default());
        let upstream = addr.parse().expect("a socket address");
        let proxy = Proxy::start_with(upstream, watch.clone())
            .await
            .expect("the proxy binds");
        Splice { proxy, watch }
    }

    /// A connector to the server as the fixture's named principal, through this proxy.
    fn connector(&self) -> Connector {
        let opts = ClientOptions {
            token: Some(TOKEN.to_owned()),
            ..Default::default()
        };
        Connector::url(format!("ws://{}", self.proxy.addr()), opts)
    }

    /// Connections the proxy accepted so far (each one's number is its place in this count).
    fn connections(&self) -> u64 {
        self.proxy.stats().accepted
    }

    /// Cuts the link at the first message from the server that `rule` picks.
    fn cut_at(&self, rule: impl Fn(&Value) -> bool + Send + 'static) {
        *self.watch.cut.lock().unwrap() = Some(Box::new(rule));
    }

    /// The connection the last [`Splice::cut_at`] rule cut.
    fn cut_connection(&self) -> u64 {
        self.watch.cut_on.lock().unwrap().expect("a link was cut")
    }

    /// Waits until the host has written a message `pick` picks; returns its connection.
    async fn wrote(&self, mut pick: impl FnMut(&Value) -> bool) -> u64 {
        let mut rx = self.watch.logged.subscribe();
        let mut seen = 0;
        loop {
            {
                let log = self.watch.log.lock().unwrap();
                if let Some((n, _)) = log[seen..].iter().find(|(_, v)| pick(v)) {
                    return *n;
                }
                seen = log.len();
            }
            within(rx.changed()).await.expect("the proxy lives");
        }
    }

    /// The requests of `method` the host wrote on connections `from` and later.
    fn requests(&self, method: &str, from: u64) -> Vec<Value> {
        self.watch
            .log
            .lock()
            .unwrap()
            .iter()
            .filter(|(n, v)| *n >= from && v["method"] == method && v.get("id").is_some())
            .map(|(_, v)| v.clone())
            .collect()
    }
}

// ---- the host ----------------------------------------------------------------------------

/// A host with one server, `fixture`, reconnecting within 10–200 ms.
fn start_host(connector: Connector, state_dir: Option<&Path>) -> HostHandle {
    let mut server = ServerConfig::new("fixture", connector);
    server.link.backoff = BackoffConfig {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(200),
        jitter: 0.0,
        seed: Some(7),
        ..Default::default()
    };
    let mut config = HostConfig::new(vec![server]);
    config.retry_delay = Duration::from_millis(50);
    if let Some(dir) = state_dir {
        config = config.with_state_dir(dir);
    }
    Host::start(config).expect("a valid host configuration")
}

/// Waits until `fixture` is settled on a connection after `after`; returns its epoch.
async fn settled_after(host: &HostHandle, after: u64) -> u64 {
    let s = within(host.wait_for(|s| {
        s.server("fixture").is_some_and(|f| {
            f.settled && f.epoch > after && f.hints.as_ref().is_some_and(|h| !h.recovering)
        })
    }))
    .await
    .expect("the host runs");
    s.server("fixture").unwrap().epoch
}

fn is_open(host: &HostHandle, instance: &str) -> bool {
    host.status().server("fixture").is_some_and(|f| {
        f.open
            .iter()
            .any(|(t, i)| t == "game" && i.as_deref() == Some(instance))
    })
}

/// The agent's call; its result's text, which must not be an error.
async fn ok(host: &HostHandle, tool: &str, args: Value) -> String {
    let r = within(host.call(tool, args.clone()))
        .await
        .expect("the host runs");
    assert!(!r.is_error, "{tool} {args}: {r:?}");
    r.joined_text()
}

/// Everything the agent was shown since the last look, as one text.
async fn shown(host: &HostHandle) -> String {
    let shown = host.transcript().await.expect("the host runs");
    shown
        .iter()
        .map(|s| s.text.as_str())
        .collect::<Vec<_>>()
        .join("\n---\n")
}

fn act(tool: &str, args: Value) -> Value {
    json!({"tool": tool, "instance": "g1", "args": args})
}

fn is_call_of(tool: &'static str) -> impl Fn(&Value) -> bool {
    move |v| v["method"] == "tools/call" && v["params"]["name"] == tool
}

// ---- (a) the server killed and restarted mid-game --------------------------------------

#[actix::test]
async fn a_server_killed_mid_game_is_reconnected_reread_told_once_and_never_reopened() {
    let (server, addr) = ServerProcess::start("127.0.0.1:0");
    let proxy = Splice::start(&addr).await;
    let host = start_host(proxy.connector(), None);
    let first = settled_after(&host, 0).await;

    ok(
        &host,
        "toolsets--open",
        json!({"toolset": "game", "instance": "g1"}),
    )
    .await;
    let moved = ok(&host, "toolsets--act", act("game_move", json!({"n": 1}))).await;
    assert!(moved.ends_with("Moved 1."), "{moved}");
    ok(&host, "toolsets--act", act("game_flip", json!({}))).await;
    shown(&host).await;

    // A call in flight (game_wait answers only when poked) when the process is killed.
    let waiting = tokio::spawn({
        let host = host.clone();
        async move {
            host.call("toolsets--act", act("game_wait", json!({})))
                .await
        }
    });
    proxy.wrote(is_call_of("game_wait")).await;
    server.kill();
    let r = within(waiting).await.unwrap().expect("the host runs");
    assert!(r.is_error, "{r:?}");
    let why = r.joined_text();
    assert!(
        why.contains("fixture is not reachable")
            && why.contains("the connection went before the response"),
        "the failure names the disconnect: {why}"
    );

    // Restarted on the same address, with nothing of the game left.
    let (_server, again) = ServerProcess::start(&addr);
    assert_eq!(again, addr);
    let second = settled_after(&host, first).await;
    let reconnected = proxy.connections();
    assert!(!is_open(&host, "g1"));
    let t = shown(&host).await;
    assert_eq!(
        t.matches("Closed [fixture/game:g1]").count(),
        1,
        "told once: {t}"
    );
    assert!(!t.contains("Opened [fixture/game:g1]"), "{t}");
    assert_eq!(
        proxy.requests("toolsets/list", reconnected).len(),
        1,
        "toolsets/list re-read on the new connection"
    );

    // Another drop of the link: nothing is told again.
    proxy.cut_at(|v| v["method"] == "ping" || v.get("result").is_some());
    let _ = host.call("fixture--echo", json!({"text": "cut"})).await;
    let third = settled_after(&host, second).await;
    assert!(third > second);
    let t = shown(&host).await;
    assert!(
        !t.contains("[fixture/game:g1]"),
        "nothing about g1 again: {t}"
    );

    // The host never opened anything by itself: the agent's one open is the only one.
    let opens = proxy.requests("toolsets/open", 1);
    assert_eq!(opens.len(), 1, "{opens:?}");
    assert_eq!(
        opens[0]["params"],
        json!({"toolset": "game", "instance": "g1"})
    );
    // And the agent can start over.
    ok(
        &host,
        "toolsets--open",
        json!({"toolset": "game", "instance": "g2"}),
    )
    .await;
    host.stop().await;
}

// ---- (b) a link dropped while a call is in flight ------------------------------------

#[actix::test]
async fn a_call_whose_result_the_dropped_link_lost_fails_clearly_and_its_changes_are_learnt() {
    let (_server, addr) = ServerProcess::start("127.0.0.1:0");
    let proxy = Splice::start(&addr).await;
    let host = start_host(proxy.connector(), None);
    let first = settled_after(&host, 0).await;
    ok(
        &host,
        "toolsets--open",
        json!({"toolset": "game", "instance": "g1"}),
    )
    .await;
    shown(&host).await;

    // The server carries the flip out; its result is on the way when the link drops.
    proxy.cut_at(|v| {
        v["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("game_secret is now visible"))
    });
    let r = within(host.call("toolsets--act", act("game_flip", json!({}))))
        .await
        .expect("the host runs");
    assert!(r.is_error, "{r:?}");
    let why = r.joined_text();
    assert!(
        why.contains("the connection went before the response"),
        "the failure names the disconnect: {why}"
    );
    let reconnected = proxy.cut_connection() + 1;

    // The new connection's statement shows what the call did; the host adopts g1.
    settled_after(&host, first).await;
    assert!(is_open(&host, "g1"), "adopted");
    let t = shown(&host).await;
    assert!(
        t.contains("Usable: game_secret in [fixture/game:g1]"),
        "the agent learns the call's change: {t}"
    );
    assert!(
        !t.contains("Closed [fixture/game:g1]") && !t.contains("Opened [fixture/game:g1]"),
        "an adoption tells nothing about g1 itself: {t}"
    );
    let found = ok(&host, "toolsets--act", act("game_secret", json!({}))).await;
    assert!(found.ends_with("You found the secret."), "{found}");
    assert!(
        proxy.requests("toolsets/open", reconnected).is_empty(),
        "not re-opened"
    );
    assert_eq!(proxy.requests("toolsets/list", reconnected).len(), 1);
    host.stop().await;
}

// ---- (c) the host restarted ------------------------------------------------------------

/// Opens `instance` and ends it from outside (`game_later {end}`), explained by an event
/// or not; waits until the host has applied the end.
async fn open_and_end(host: &HostHandle, instance: &str, event: bool) {
    ok(
        host,
        "toolsets--open",
        json!({"toolset": "game", "instance": instance}),
    )
    .await;
    let args =
        json!({"tool": "game_later", "instance": instance, "args": {"end": true, "event": event}});
    ok(host, "toolsets--act", args).await;
    within(host.wait_for(|_| !is_open(host, instance)))
        .await
        .unwrap();
}

#[actix::test]
async fn a_restarted_host_never_tells_an_ended_record_twice() {
    let (_server, addr) = ServerProcess::start("127.0.0.1:0");
    let state = tempfile::tempdir().expect("a temporary directory");
    let proxy = Splice::start(&addr).await;

    // Host 1: g1 ends while it watches (a push carries the closed entry and its record id).
    let host = start_host(proxy.connector(), Some(state.path()));
    settled_after(&host, 0).await;
    open_and_end(&host, "g1", true).await;
    let t = shown(&host).await;
    assert!(t.contains("Closed [fixture/game:g1]"), "{t}");
    assert!(t.contains(mcpl_tests::fixture::LATER_END_REASON), "{t}");
    host.stop().await;

    // Host 2 on the same state: the server's record of g1 is in its statement, not told.
    let host = start_host(proxy.connector(), Some(state.path()));
    settled_after(&host, 0).await;
    let t = shown(&host).await;
    assert!(!t.contains("[fixture/game:g1]"), "told before: {t}");
    // g2 ends with no event: its closed entry comes as tools/hints.
    open_and_end(&host, "g2", false).await;
    assert!(shown(&host).await.contains("[fixture/game:g2]"));
    host.stop().await;

    // Host 3: neither is told again, however the first telling came.
    let host = start_host(proxy.connector(), Some(state.path()));
    settled_after(&host, 0).await;
    let t = shown(&host).await;
    assert!(
        !t.contains("[fixture/game:g1]") && !t.contains("[fixture/game:g2]"),
        "{t}"
    );
    host.stop().await;

    // A host without that state is told both: the records are there to tell.
    let fresh = tempfile::tempdir().expect("a temporary directory");
    let host = start_host(proxy.connector(), Some(fresh.path()));
    settled_after(&host, 0).await;
    let t = shown(&host).await;
    assert_eq!(t.matches("Ended [fixture/game:g1]").count(), 1, "{t}");
    assert_eq!(t.matches("Ended [fixture/game:g2]").count(), 1, "{t}");
    host.stop().await;
}
