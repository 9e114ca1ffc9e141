//! A scripted RFC-014 server over a real transport (WebSocket or Streamable HTTP on
//! 127.0.0.1, port 0), for the Host's conformance vectors.
//!
//! The script is the test: it reads what the host wrote, in order, and writes what it
//! chooses — which is how it reorders (writes rev 3 before rev 2), duplicates (writes one
//! twice), drops (never writes one) and delays (writes later). Every message the host wrote
//! on a connection is kept in its log, so a test counts requests by method
//! (`toolsets/open` after a reconnect, `toolsets/list` in a recovery). On Streamable HTTP the
//! order across streams is the host side's to decide: [`Gate`] holds back chosen deliveries
//! through the transport's delivery hook.

use super::Peer;
use mcpl_host::host::{Host, HostConfig, HostHandle, ServerConfig, Shown};
use mcpl_host::link::{BackoffConfig, Connector};
use mcpl_testkit::msg;
use mcpl_transport::delivery::{Delivery, DeliveryHook, StreamOrigin};
use mcpl_transport::{
    ClientOptions, Connection, Principal, ServerOptions, ServerTls, http, memory, ws,
};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// Which transport the scripted server listens on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// WebSocket: ordered.
    Ws,
    /// Streamable HTTP: unordered across streams.
    Http,
    /// An in-process unordered pair, for tests on tokio's paused clock (real sockets and a
    /// paused clock do not mix: the clock jumps while a socket is on its way).
    MemoryUnordered,
    /// An in-process ordered pair (as stdio or WebSocket deliver), for tests on tokio's
    /// paused clock.
    MemoryOrdered,
}

enum Listener {
    Ws(ws::WsListener),
    Http(http::HttpListener),
    Memory(
        mpsc::UnboundedReceiver<Connection>,
        mpsc::UnboundedSender<Connection>,
        bool,
    ),
}

/// A listening scripted server.
pub struct ScriptedServer {
    listener: Listener,
    url: String,
}

impl ScriptedServer {
    /// Listens on 127.0.0.1, any port, letting in connections without a token (each its
    /// own principal) and never pinging.
    pub async fn bind(transport: Transport) -> Self {
        Self::bind_tls(transport, None).await
    }

    /// As [`ScriptedServer::bind`]; with `tls`, a network transport serves TLS and its URL
    /// is `wss://localhost:PORT/mcp` or `https://localhost:PORT/mcp`.
    pub async fn bind_tls(transport: Transport, tls: Option<ServerTls>) -> Self {
        let secure = tls.is_some();
        let opts = Arc::new(ServerOptions {
            allow_anonymous: true,
            ws_ping_interval: None,
            tls,
            ..Default::default()
        });
        let addr = "127.0.0.1:0".parse().unwrap();
        match transport {
            Transport::MemoryUnordered | Transport::MemoryOrdered => {
                let (tx, rx) = mpsc::unbounded_channel();
                let ordered = transport == Transport::MemoryOrdered;
                ScriptedServer {
                    listener: Listener::Memory(rx, tx, ordered),
                    url: "memory:".to_owned(),
                }
            }
            Transport::Ws => {
                let l = ws::bind(addr, opts).await.expect("bind a websocket port");
                let url = match secure {
                    true => format!("wss://localhost:{}/mcp", l.local_addr().port()),
                    false => format!("ws://{}/mcp", l.local_addr()),
                };
                ScriptedServer {
                    listener: Listener::Ws(l),
                    url,
                }
            }
            Transport::Http => {
                let l = http::bind(addr, "/mcp", opts)
                    .await
                    .expect("bind an http port");
                let url = match secure {
                    true => format!("https://localhost:{}/mcp", l.local_addr().port()),
                    false => format!("http://{}/mcp", l.local_addr()),
                };
                ScriptedServer {
                    listener: Listener::Http(l),
                    url,
                }
            }
        }
    }

    /// The URL a host connects to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A connector to this server, with `options` for a real transport.
    pub fn connector(&self, options: ClientOptions) -> Connector {
        match &self.listener {
            Listener::Memory(_, accepted, ordered) => {
                let (accepted, ordered) = (accepted.clone(), *ordered);
                Connector::from_fn(move || {
                    let (client, server) = memory::pair(Principal::Named("alice".into()), ordered);
                    let _ = accepted.send(server);
                    Box::pin(async move { Ok(client) })
                })
            }
            _ => Connector::url(self.url.clone(), options),
        }
    }

    /// The next connection (an HTTP one with its first request waiting), its era probe
    /// answered as a legacy server does (`support::LegacyEnd`). On Streamable HTTP the
    /// probe is a modern POST, a connection of its own that ends with its answer: it is
    /// answered and the next connection is the one returned.
    pub async fn accept(&mut self) -> Conn {
        loop {
            let conn = self.accept_connection().await;
            let http = matches!(self.listener, Listener::Http(_));
            let mut peer = super::from_connection(conn);
            if !http {
                return peer;
            }
            let deadline = tokio::time::Instant::now() + peer.limit();
            match peer.read(deadline).await {
                Ok(first) => {
                    peer.keep(first);
                    return peer;
                }
                // The probe's own connection, answered and ended.
                Err(mcpl_testkit::ReadError::Closed(_)) => continue,
                Err(e) => panic!("the host's first request on Streamable HTTP: {e:?}"),
            }
        }
    }

    /// The next connection, its era probe shown to the test.
    pub async fn accept_showing_discover(&mut self) -> Conn {
        let conn = self.accept_connection().await;
        super::from_connection_modern(conn)
    }

    async fn accept_connection(&mut self) -> Connection {
        match &mut self.listener {
            Listener::Ws(l) => l.accept().await,
            Listener::Http(l) => l.accept().await,
            Listener::Memory(rx, _, _) => rx.recv().await,
        }
        .expect("the host connects")
    }
}

/// One connection's server end: the host tests' [`Peer`]. Everything the host wrote on it
/// is in its `log()`, so a test counts requests by method (`toolsets/open` after a
/// reconnect, `toolsets/list` in a recovery).
pub type Conn = Peer;

/// The scripted server's steps on a [`Conn`].
#[allow(async_fn_in_trait)] // the tests run on one thread; no Send bound is needed
pub trait ScriptedConn {
    /// The next message that is not a notification (the host's `notifications/cancelled`
    /// and the like are skipped).
    async fn next_non_notification(&mut self) -> Value;
    /// The next request the host wrote (notifications and the host's answers to the
    /// server's own requests are skipped).
    async fn next_request(&mut self) -> Value;
    /// The host's answer to the server's request `id` (what comes before it is skipped).
    async fn answer_to(&mut self, id: i64) -> Value;
    /// `tools/hints` with these changes.
    async fn hints(&mut self, changes: Value);
    /// A `push/event` request with id `id`.
    async fn push(&mut self, id: i64, event_id: &str, text: &str, hints: Option<Value>);
    /// The handshake: answers `initialize` with `init`, then takes
    /// `notifications/initialized` and answers `featureSets/update` (a server speaking
    /// MCPL) in whichever order they come (HTTP posts them concurrently).
    async fn handshake(&mut self, init: Value);
    /// The handshake, then the first `tools/list` (answered with `tools` naming rev
    /// `tools_rev`) and, where hints count, the connect-time `toolsets/list` (answered with
    /// `statement`), in whichever order they come.
    async fn connect(
        &mut self,
        init: Value,
        tools: Value,
        tools_rev: u64,
        statement: Option<Value>,
    );
    /// Serves a recovery (§5.2): `toolsets/list` first, answered with `statement`, then
    /// `tools/list`, answered with `tools` naming `tools_rev`. The host's answers to the
    /// server's own requests in between are skipped.
    async fn serve_recovery(&mut self, statement: Value, tools: &Value, tools_rev: u64);
}

impl ScriptedConn for Conn {
    async fn next_non_notification(&mut self) -> Value {
        loop {
            let m = self.recv().await;
            if m.get("id").is_some() {
                return m;
            }
        }
    }

    async fn next_request(&mut self) -> Value {
        loop {
            let m = self.recv().await;
            if m.get("id").is_some() && m.get("method").is_some() {
                return m;
            }
        }
    }

    async fn answer_to(&mut self, id: i64) -> Value {
        loop {
            let m = self.recv().await;
            if m.get("method").is_none() && m["id"] == json!(id) {
                return m;
            }
        }
    }

    async fn hints(&mut self, changes: Value) {
        self.send(msg::hints(changes)).await;
    }

    async fn push(&mut self, id: i64, event_id: &str, text: &str, hints: Option<Value>) {
        let mut params = json!({
            "featureSet": "arcade.games", "eventId": event_id,
            "timestamp": "2026-11-30T12:00:00Z", "tags": ["surface:turn"],
            "payload": {"content": [msg::text(text)]},
            "toolset": "game", "instance": "g1"
        });
        if let Some(h) = hints {
            params["hints"] = h;
        }
        self.send(msg::request(id, "push/event", params)).await;
    }

    async fn handshake(&mut self, init: Value) {
        let req = self.expect_next("initialize").await;
        self.reply(&req, init.clone()).await;
        let mcpl = init["capabilities"]["experimental"].get("mcpl").is_some();
        let mut initialized = false;
        let mut granted = !mcpl;
        while !(initialized && granted) {
            let m = self.recv().await;
            match m["method"].as_str() {
                Some("notifications/initialized") => initialized = true,
                Some("featureSets/update") => {
                    self.reply(&m, json!({"accepted": true})).await;
                    granted = true;
                }
                _ => panic!("unexpected during the handshake: {m}"),
            }
        }
    }

    async fn connect(
        &mut self,
        init: Value,
        tools: Value,
        tools_rev: u64,
        statement: Option<Value>,
    ) {
        self.handshake(init).await;
        let mut listed = false;
        let mut stated = statement.is_none();
        while !(listed && stated) {
            let m = self.next_non_notification().await;
            match m["method"].as_str() {
                Some("tools/list") => {
                    self.reply(&m, tools_page(&tools, tools_rev)).await;
                    listed = true;
                }
                Some("toolsets/list") => {
                    let s = statement.clone().expect("no toolsets/list expected");
                    self.reply(&m, s).await;
                    stated = true;
                }
                _ => panic!("unexpected at connect: {m}"),
            }
        }
    }

    async fn serve_recovery(&mut self, statement: Value, tools: &Value, tools_rev: u64) {
        let stmt = self.next_request().await;
        assert_eq!(
            stmt["method"], "toolsets/list",
            "a recovery reads toolsets/list first"
        );
        self.reply(&stmt, statement).await;
        let list = self.next_request().await;
        assert_eq!(list["method"], "tools/list", "then tools/list");
        self.reply(&list, tools_page(tools, tools_rev)).await;
    }
}

/// A `tools/list` page with every tool, naming `rev`.
pub fn tools_page(tools: &Value, rev: u64) -> Value {
    json!({"tools": tools, "_meta": {"mcpl/rev": rev}})
}

/// The arcade's manifest: the lobby (open by default) and Go games (instanced), hints on.
pub fn arcade_manifest() -> Value {
    json!({
        "version": "0.5", "toolHints": true, "pushEvents": true,
        "featureSets": {"arcade.games": {"description": "Games", "uses": ["pushEvents"]}},
        "toolsets": {
            "lobby": {"title": "Lobby", "summary": "Find games and opponents", "default": "open"},
            "game": {"title": "Go", "summary": "A game of Go", "default": "closed", "instances": true,
                     "options": {"type": "object", "properties": {"size": {"enum": [9, 13, 19]}}}}
        },
        "surface": {"title": "Arcade", "summary": "Games"}
    })
}

/// An `initialize` result with this manifest (`None`: a plain MCP server).
pub fn init_with(manifest: Option<Value>) -> Value {
    let mut caps = json!({"tools": {"listChanged": true}});
    if let Some(m) = manifest {
        caps["experimental"] = json!({"mcpl": m});
    }
    json!({"protocolVersion": "2025-11-25", "capabilities": caps,
           "serverInfo": {"name": "arcade", "version": "1.0.0"}})
}

/// The arcade's `initialize` result.
pub fn arcade_init() -> Value {
    init_with(Some(arcade_manifest()))
}

/// A listed tool with `_meta`.
pub fn listed(name: &str, meta: Value, schema: Value) -> Value {
    let mut t =
        json!({"name": name, "description": format!("the {name} tool"), "inputSchema": schema});
    if meta.as_object().is_some_and(|m| !m.is_empty()) {
        t["_meta"] = meta;
    }
    t
}

/// `play`'s schema: one required string, `move`.
pub fn play_schema() -> Value {
    json!({"type": "object", "properties": {"move": {"type": "string"}},
           "required": ["move"], "additionalProperties": false})
}

/// clock: static; seek: lobby; play, resign: game (instanced); scratch: the undeclared
/// group `notes`; roam: dynamic outside toolsets.
pub fn arcade_tools() -> Value {
    let any = json!({"type": "object"});
    json!([
        listed("clock", json!({}), any.clone()),
        listed("seek", json!({"mcpl/toolset": "lobby"}), any.clone()),
        listed("play", json!({"mcpl/toolset": "game"}), play_schema()),
        listed("resign", json!({"mcpl/toolset": "game"}), any.clone()),
        listed("scratch", json!({"mcpl/toolset": "notes"}), any.clone()),
        listed("roam", json!({"mcpl/presence": "dynamic"}), any),
    ])
}

/// A visibility entry.
pub fn vis(tool: &str, instance: Option<&str>, visible: bool) -> Value {
    let mut v = json!({"name": tool, "visible": visible});
    if let Some(i) = instance {
        v["instance"] = json!(i);
    }
    v
}

/// Hint changes at `rev`.
pub fn changes(rev: u64, tools: Value, toolsets: Value) -> Value {
    json!({"rev": rev, "tools": tools, "toolsets": toolsets})
}

/// A `toolsets/list` result: `open` records, `ended` records, and the statement at `rev`
/// stating `tools` visible.
pub fn statement(rev: u64, open: Value, ended: Value, tools: Value) -> Value {
    json!({"open": open, "ended": ended, "_meta": {"mcpl/hints": {"rev": rev, "tools": tools}}})
}

/// The lobby open, `seek` and `roam` visible, at `rev`.
pub fn lobby_statement(rev: u64) -> Value {
    statement(
        rev,
        json!([{"toolset": "lobby"}]),
        json!([]),
        json!([vis("seek", None, true), vis("roam", None, true)]),
    )
}

/// The lobby and game instance `name` open, `seek`, `roam`, `play` and `resign` visible, at
/// `rev`.
pub fn game_statement(name: &str, rev: u64) -> Value {
    statement(
        rev,
        json!([{"toolset": "lobby"}, {"toolset": "game", "instance": name, "title": "Go 9x9"}]),
        json!([]),
        json!([
            vis("seek", None, true),
            vis("roam", None, true),
            vis("play", Some(name), true),
            vis("resign", Some(name), true)
        ]),
    )
}

/// A `toolsets/open` result for game instance `name` at `rev`: open, `play` and `resign`
/// visible in it.
pub fn game_opened(name: &str, rev: u64) -> Value {
    json!({
        "instance": name, "title": "Go 9x9",
        "content": [{"type": "text", "text": format!("A fresh 9x9 board for {name}.")}],
        "_meta": {"mcpl/hints": changes(rev,
            json!([vis("play", Some(name), true), vis("resign", Some(name), true)]),
            json!([{"toolset": "game", "instance": name, "state": "open"}]))}
    })
}

/// The host's side: a [`Host`] with one server named `arcade` reached through
/// `connector`, reconnecting after 10 ms, with `hold` as its hold window and `tweak` applied
/// to its server configuration.
pub fn start_host(
    connector: Connector,
    hold: Duration,
    tweak: impl FnOnce(&mut ServerConfig),
) -> HostHandle {
    start_host_in(connector, hold, None, tweak)
}

/// The same, with a state directory.
pub fn start_host_in(
    connector: Connector,
    hold: Duration,
    state_dir: Option<&std::path::Path>,
    tweak: impl FnOnce(&mut ServerConfig),
) -> HostHandle {
    start_host_with(connector, hold, tweak, |config| {
        if let Some(dir) = state_dir {
            config.state_dir = Some(dir.to_owned());
        }
    })
}

/// The same, with `host_tweak` applied to the host's configuration.
pub fn start_host_with(
    connector: Connector,
    hold: Duration,
    tweak: impl FnOnce(&mut ServerConfig),
    host_tweak: impl FnOnce(&mut HostConfig),
) -> HostHandle {
    let mut server = ServerConfig::new("arcade", connector);
    server.link.backoff = BackoffConfig {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(40),
        jitter: 0.0,
        seed: Some(7),
        ..Default::default()
    };
    tweak(&mut server);
    let mut config = HostConfig::new(vec![server]).with_hold_window(hold);
    config.retry_delay = Duration::from_millis(50);
    host_tweak(&mut config);
    Host::start(config).expect("a valid host configuration")
}

/// Waits until `arcade` is settled on connection `epoch`: handshake done, its statement
/// read at `last_rev` or later, no recovery under way, `tools` tools listed.
pub async fn settled(host: &HostHandle, epoch: u64, last_rev: u64, tools: usize) {
    host.wait_for(|s| {
        s.server("arcade").is_some_and(|a| {
            a.epoch == epoch
                && a.ready
                && a.listed_tools == tools
                && a.hints
                    .as_ref()
                    .is_some_and(|h| !h.connecting && !h.recovering && h.last_rev >= last_rev)
        })
    })
    .await
    .expect("the host runs");
}

/// A call the agent makes, in the background (its request must be served by the test).
pub fn spawn_call(
    host: &HostHandle,
    name: &str,
    args: Value,
) -> tokio::task::JoinHandle<mcpl_protocol::CallToolResult> {
    let (host, name) = (host.clone(), name.to_owned());
    tokio::spawn(async move { host.call(&name, args).await.expect("the host runs") })
}

/// A scripted WebSocket server and a host connected to it and settled: the lobby open,
/// `seek` and `roam` visible, at rev 1.
pub async fn connected(transport: Transport, hold: Duration) -> (ScriptedServer, HostHandle, Conn) {
    connected_with(transport, hold, |_| {}).await
}

/// The same, with `tweak` applied to the server's configuration.
pub async fn connected_with(
    transport: Transport,
    hold: Duration,
    tweak: impl FnOnce(&mut ServerConfig),
) -> (ScriptedServer, HostHandle, Conn) {
    let mut server = ScriptedServer::bind(transport).await;
    let host = start_host(server.connector(ClientOptions::default()), hold, tweak);
    let mut conn = server.accept().await;
    conn.connect(arcade_init(), arcade_tools(), 0, Some(lobby_statement(1)))
        .await;
    settled(&host, 1, 1, 6).await;
    (server, host, conn)
}

/// The agent opens game instance `name` and the server answers with its usual result at
/// `rev` (play and resign visible in it). Returns the agent's result text.
pub async fn open_game(host: &HostHandle, conn: &mut Conn, name: &str, rev: u64) -> String {
    let call = spawn_call(
        host,
        "toolsets--open",
        json!({"toolset": "game", "instance": name}),
    );
    let req = conn.expect_next("toolsets/open").await;
    assert_eq!(req["params"], json!({"toolset": "game", "instance": name}));
    conn.reply(&req, game_opened(name, rev)).await;
    let r = call.await.unwrap();
    assert!(!r.is_error, "{r:?}");
    r.joined_text()
}

/// Proves the host wrote no request since the last one read (on an ordered link): the
/// agent calls `arcade--clock`, and the next request the server reads must be that call.
pub async fn nothing_else_was_sent(host: &HostHandle, conn: &mut Conn) {
    let call = spawn_call(host, "arcade--clock", json!({}));
    let req = conn.next_request().await;
    assert_eq!(
        (req["method"].as_str(), req["params"]["name"].as_str()),
        (Some("tools/call"), Some("clock")),
        "the host wrote something else first: {req}"
    );
    conn.reply(
        &req,
        json!({"content": [{"type": "text", "text": "12:00"}]}),
    )
    .await;
    assert_eq!(call.await.unwrap().joined_text(), "12:00");
}

/// Waits until `arcade`'s hint state satisfies `ready`.
pub async fn hints_until(
    host: &HostHandle,
    mut ready: impl FnMut(&mcpl_host::host::HintSummary) -> bool,
) -> mcpl_host::host::HintSummary {
    let s = host
        .wait_for(|s| {
            s.server("arcade")
                .and_then(|a| a.hints.as_ref())
                .is_some_and(&mut ready)
        })
        .await
        .expect("the host runs");
    s.server("arcade").unwrap().hints.clone().unwrap()
}

/// The text of an agent's call made and answered locally (nothing sent), and whether it
/// is an error.
pub async fn local_call(host: &HostHandle, name: &str, args: Value) -> (bool, String) {
    let r = host.call(name, args).await.expect("the host runs");
    (r.is_error, r.joined_text())
}

/// True when `tool` is usable now somewhere, as `toolsets--look` tells the agent.
pub async fn is_usable(host: &HostHandle, tool: &str) -> bool {
    let (err, text) = local_call(host, "toolsets--look", json!({"tool": tool})).await;
    !err && text.contains(&format!("- {tool}")) && !text.contains("not usable right now")
}

/// The texts of shown messages, one per line block.
pub fn texts(shown: &[Shown]) -> String {
    shown
        .iter()
        .map(|s| s.text.as_str())
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// Holds back chosen deliveries of a Streamable HTTP client until released: the seam the
/// transport offers for reordering POST responses against the GET stream.
#[derive(Clone)]
pub struct Gate {
    rule: Arc<dyn Fn(&Delivery<'_>) -> bool + Send + Sync>,
    open: watch::Sender<bool>,
    held: Arc<Mutex<Option<mpsc::UnboundedSender<Value>>>>,
}

impl Gate {
    /// A gate holding every delivery `rule` picks (on any stream) until [`Gate::release`].
    /// The receiver hears of each message as it is held.
    pub fn new(
        rule: impl Fn(&Delivery<'_>) -> bool + Send + Sync + 'static,
    ) -> (Gate, mpsc::UnboundedReceiver<Value>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let (open, _) = watch::channel(false);
        let gate = Gate {
            rule: Arc::new(rule),
            open,
            held: Arc::new(Mutex::new(Some(tx))),
        };
        (gate, rx)
    }

    /// The client options that put this gate on the delivery path.
    pub fn options(&self) -> ClientOptions {
        let gate = self.clone();
        ClientOptions {
            delivery_hook: Some(DeliveryHook::new(move |d: &Delivery<'_>| {
                let hold = (gate.rule)(d);
                let mut open = gate.open.subscribe();
                if hold && let Some(tx) = gate.held.lock().unwrap().as_ref() {
                    let _ = tx.send(serde_json::to_value(d.message).unwrap());
                }
                async move {
                    if hold {
                        let _ = open.wait_for(|o| *o).await;
                    }
                }
            })),
            ..Default::default()
        }
    }

    /// Lets everything held through, and everything after.
    pub fn release(&self) {
        self.open.send_replace(true);
    }
}

/// A rule for [`Gate::new`]: the POST response carrying this result rev in its
/// `_meta["mcpl/hints"]`.
pub fn post_result_with_rev(rev: u64) -> impl Fn(&Delivery<'_>) -> bool + Send + Sync {
    move |d| {
        d.origin == StreamOrigin::PostResponse
            && serde_json::to_value(d.message)
                .is_ok_and(|v| v["result"]["_meta"]["mcpl/hints"]["rev"] == json!(rev))
    }
}

/// Whether the host's hint state for `arcade` holds `tool` visible in `instance`: what the
/// server told, as the host applied it (§5.2), read from its state rather than from what
/// the agent is shown.
pub async fn visible(host: &HostHandle, tool: &str, instance: Option<&str>) -> bool {
    host.is_visible("arcade", tool, instance)
        .await
        .expect("the host runs")
        .expect("hints count on arcade")
}
