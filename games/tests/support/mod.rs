//! Support for the arcade's tests: an [`Arcade`] on a real WebSocket listener on
//! 127.0.0.1:0, and a minimal host on the one raw peer (`mcpl_testkit`) that keeps what
//! RFC-014 tells a host — every hint change applied in read order, revs checked
//! consecutive (an ordered link, §5.2) — so a test can ask "is `go_play` visible in `g1` now, and with which moves?".
//!
//! `host.rs` plays through the project's own host instead, as an agent does.
//!
//! Nothing here sleeps: reads await the next message, bounded by a limit only a failing
//! test reaches. [`Client::quiet`] shows nothing more is on its way: a `tools/list`
//! travels behind every change already sent to the connection and takes no rev.

#![allow(dead_code)] // each test file uses a different part

pub mod browser;
pub mod host;

use mcpl_games::arcade::listen::{self, Listener};
use mcpl_games::arcade::{Arcade, ArcadeConfig, BotBudget, BotSettings};
use mcpl_testkit::msg;
use mcpl_testkit::within;
use mcpl_transport::testkit::{TestEnd, TestPeer};
use mcpl_transport::{ClientOptions, ServerOptions, ws};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::process::{Child, Command};

/// The `mcpl-arcade` binary, built for the tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_mcpl-arcade");

/// How long a read waits before failing the test.
pub const LIMIT: Duration = Duration::from_secs(30);

/// The players every test arcade knows; each presents its name as its token.
pub const PLAYERS: [&str; 3] = ["alice", "bob", "carol"];

/// Bot settings for tests: a small playout budget and a seed, so games are fast and
/// repeatable.
pub fn test_bot() -> BotSettings {
    BotSettings {
        budget: BotBudget::Playouts(48),
        seed: Some(20_261_130),
    }
}

/// An arcade served on a WebSocket on 127.0.0.1:0.
pub struct Harness {
    pub arcade: Arcade,
    pub listener: Listener,
}

impl Harness {
    /// The arcade with [`test_bot`], players alice, bob and carol, and anonymous
    /// connections allowed (`connect_anonymous`).
    pub async fn start() -> Harness {
        Self::with(ArcadeConfig {
            bot: test_bot(),
            players: PLAYERS.iter().map(|p| p.to_string()).collect(),
            ..Default::default()
        })
        .await
    }

    /// The arcade with `config`; alice, bob, carol and every player it configures may
    /// connect, each with its name as its token.
    pub async fn with(config: ArcadeConfig) -> Harness {
        let mut opts = ServerOptions {
            ws_ping_interval: None,
            allow_anonymous: true,
            ..Default::default()
        };
        for p in PLAYERS
            .iter()
            .copied()
            .chain(config.players.iter().map(String::as_str))
        {
            opts.tokens.insert(p.to_owned(), p.to_owned());
        }
        let arcade = Arcade::new(config).expect("a valid arcade");
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let listener = listen::ws(&arcade, addr, Arc::new(opts))
            .await
            .expect("bind");
        Harness { arcade, listener }
    }

    /// A new connection of `who`, before any handshake.
    pub async fn connect(&self, who: &str) -> Client {
        self.connect_with(Some(who)).await
    }

    /// A connection without a token: its own anonymous principal.
    pub async fn connect_anonymous(&self) -> Client {
        self.connect_with(None).await
    }

    async fn connect_with(&self, token: Option<&str>) -> Client {
        let opts = ClientOptions {
            token: token.map(str::to_owned),
            ..Default::default()
        };
        let conn = ws::connect(self.listener.url(), &opts)
            .await
            .expect("connect");
        Client::from_connection(conn)
    }

    /// A connection of `who` that advertised `toolHints`, was granted `tools` and
    /// `pushEvents`, and read `toolsets/list` (as a host does first, §4.3).
    pub async fn hinted(&self, who: &str) -> Client {
        let mut c = self.connect(who).await;
        c.handshake(true, &["tools", "pushEvents"]).await;
        c.list().await;
        c
    }

    /// Waits until the arcade has exactly `n` live sessions.
    pub async fn sessions(&self, n: usize) {
        let mut w = self.arcade.server().watch_sessions();
        within(w.wait_for(|live| *live == n)).await.unwrap();
    }
}

/// Starts `mcpl-arcade serve --in-memory` with `args`; returns the child (killed when
/// dropped) and the URLs of its first `listeners` `listening on` lines.
pub async fn serve(args: &[&str], listeners: usize) -> (Child, Vec<String>) {
    serve_kept(None, args, listeners).await
}

/// As [`serve`], keeping its games in `data_dir` (`--data-dir`; none: `--in-memory`).
pub async fn serve_kept(
    data_dir: Option<&std::path::Path>,
    args: &[&str],
    listeners: usize,
) -> (Child, Vec<String>) {
    let mut command = Command::new(BIN);
    command.arg("serve");
    match data_dir {
        Some(dir) => command.arg("--data-dir").arg(dir),
        None => command.arg("--in-memory"),
    };
    let mut child = command
        .args(args)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let urls = mcpl_testkit::process::listening(&mut child, listeners).await;
    (child, urls)
}

/// What a host has been told, as this client applied it.
#[derive(Debug, Default)]
pub struct HintView {
    /// The last rev applied.
    pub rev: u64,
    /// (tool, instance) pairs visible.
    pub visible: BTreeSet<(String, Option<String>)>,
    /// (tool, instance) → the instance's own input schema.
    pub schemas: BTreeMap<(String, Option<String>), Value>,
    /// (tool, instance) → the instance's own description.
    pub descriptions: BTreeMap<(String, Option<String>), String>,
    /// (toolset, instance) → "open" / "closed" entries, last one wins.
    pub toolsets: BTreeMap<(String, Option<String>), Value>,
    /// Every suggestion, in order.
    pub suggestions: Vec<Value>,
}

impl HintView {
    /// Applies one message's hint changes; `statement` for a `toolsets/list` result (a full
    /// statement replaces the dynamic state, §4.3). Revs must be consecutive (an ordered
    /// link), except a statement, which takes the next one too.
    fn apply(&mut self, changes: &Value, statement: bool) {
        let rev = changes["rev"].as_u64().expect("hint changes carry a rev");
        assert_eq!(rev, self.rev + 1, "revs must be consecutive: {changes:#}");
        self.rev = rev;
        if statement {
            self.visible.clear();
            self.schemas.clear();
            self.descriptions.clear();
        }
        for t in changes["tools"].as_array().into_iter().flatten() {
            let key = (
                t["name"].as_str().unwrap().to_owned(),
                t["instance"].as_str().map(str::to_owned),
            );
            match t["visible"].as_bool() {
                Some(true) => {
                    self.visible.insert(key.clone());
                }
                Some(false) => {
                    self.visible.remove(&key);
                }
                None => {}
            }
            if let Some(d) = t["definition"]["description"].as_str() {
                self.descriptions.insert(key.clone(), d.to_owned());
            }
            if let Some(schema) = t["definition"].get("inputSchema") {
                self.schemas.insert(key, schema.clone());
            }
        }
        for ts in changes["toolsets"].as_array().into_iter().flatten() {
            let key = (
                ts["toolset"].as_str().unwrap().to_owned(),
                ts["instance"].as_str().map(str::to_owned),
            );
            if ts["state"] == "closed" {
                self.visible.retain(|(_, i)| *i != key.1);
            }
            self.toolsets.insert(key, ts.clone());
        }
        self.suggestions
            .extend(changes["suggest"].as_array().into_iter().flatten().cloned());
    }

    /// True when `tool` is visible in `instance`.
    pub fn is_visible(&self, tool: &str, instance: &str) -> bool {
        self.visible
            .contains(&(tool.to_owned(), Some(instance.to_owned())))
    }

    /// The moves `tool`'s instance definition lists in `instance`.
    pub fn moves(&self, tool: &str, instance: &str) -> Vec<String> {
        self.schemas
            .get(&(tool.to_owned(), Some(instance.to_owned())))
            .and_then(|s| s["properties"]["move"]["enum"].as_array())
            .map(|a| a.iter().map(|m| m.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default()
    }

    /// The last toolset entry for `toolset:instance`.
    pub fn toolset(&self, toolset: &str, instance: &str) -> Option<&Value> {
        self.toolsets
            .get(&(toolset.to_owned(), Some(instance.to_owned())))
    }
}

/// A minimal host on the one raw peer of the tests (`mcpl_testkit`, on the test's end of
/// a connection): it answers pushes (accepting them), applies hint changes as it reads
/// them, and keeps the messages it read but nobody has asked for yet.
pub struct Client {
    raw: TestPeer,
    /// Read (and applied) and not yet taken, in read order.
    unread: VecDeque<Value>,
    /// Hint state (for a hinted connection).
    pub hints: HintView,
    /// Every push read, in order (also left in `unread` until taken).
    pub pushes: Vec<Value>,
    /// Request ids sent and the methods they call (a `toolsets/list` result is a full
    /// statement).
    methods: BTreeMap<i64, String>,
}

impl Client {
    /// A client on a connection made elsewhere (another transport, another server).
    pub fn from_connection(conn: mcpl_transport::Connection) -> Self {
        Client {
            raw: TestEnd::peer(conn).with_limit(LIMIT),
            unread: VecDeque::new(),
            hints: HintView::default(),
            pushes: Vec::new(),
            methods: BTreeMap::new(),
        }
    }

    /// Sends one message given as JSON.
    pub async fn send(&mut self, v: Value) {
        self.raw.send(v).await;
    }

    /// Reads one message from the link: answers a push, applies hints, and keeps it.
    async fn read(&mut self) -> Value {
        let deadline = self.raw.deadline();
        let v = match self.raw.read(deadline).await {
            Ok(v) => v,
            Err(e) => panic!("no message from the server: {e:?}"),
        };
        match v["method"].as_str() {
            Some("push/event") => {
                if let Some(h) = v["params"].get("hints") {
                    self.hints.apply(h, false);
                }
                self.pushes.push(v.clone());
                self.raw.reply(&v, json!({"accepted": true})).await;
            }
            Some("tools/hints") => self.hints.apply(&v["params"], false),
            Some(_) => {}
            // A response: its hints apply as it is read (§5.2), like every carrier's.
            None => {
                let method = v["id"].as_i64().and_then(|id| self.methods.remove(&id));
                if let Some(h) = v["result"]["_meta"].get("mcpl/hints") {
                    self.hints
                        .apply(h, method.as_deref() == Some("toolsets/list"));
                }
            }
        }
        v
    }

    /// The next message not yet taken.
    pub async fn recv(&mut self) -> Value {
        match self.unread.pop_front() {
            Some(v) => v,
            None => self.read().await,
        }
    }

    /// The next message matching `pred`, leaving the others unread.
    pub async fn next_where(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.unread.iter().position(&pred) {
            return self.unread.remove(i).unwrap();
        }
        loop {
            let v = self.read().await;
            if pred(&v) {
                return v;
            }
            self.unread.push_back(v);
        }
    }

    /// The next `push/event` (already accepted).
    pub async fn next_push(&mut self) -> Value {
        self.next_where(|v| v["method"] == "push/event").await
    }

    /// Reads until the server ends the connection (messages read meanwhile are kept
    /// unread, not applied) and says how.
    pub async fn closed(&mut self) -> mcpl_testkit::Closed {
        self.raw.closed().await
    }

    /// The next `tools/hints` notification.
    pub async fn next_hints(&mut self) -> Value {
        self.next_where(|v| v["method"] == "tools/hints").await
    }

    /// Sends a request and returns its response (hints in a result are applied).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.raw.take_id();
        self.methods
            .insert(id.as_i64().expect("numbered ids"), method.to_owned());
        self.send(msg::request(id.clone(), method, params)).await;
        self.next_where(|v| v["id"] == id && v.get("method").is_none())
            .await
    }

    /// The MCPL handshake: `initialize` (with `toolHints` when asked),
    /// `notifications/initialized`, and the `featureSets/update` grant. Returns the
    /// `initialize` result.
    pub async fn handshake(&mut self, tool_hints: bool, grant: &[&str]) -> Value {
        let init = self
            .request(
                "initialize",
                msg::initialize_params(msg::mcpl_capabilities(tool_hints), "arcade-test"),
            )
            .await;
        assert!(init.get("result").is_some(), "{init:#}");
        self.send(msg::initialized()).await;
        let receipt = self
            .request(
                "featureSets/update",
                json!({"effectiveCapabilities": grant}),
            )
            .await;
        assert_eq!(receipt["result"]["accepted"], true, "{receipt:#}");
        init["result"].clone()
    }

    /// The plain MCP handshake (no `experimental.mcpl`).
    pub async fn handshake_plain(&mut self) -> Value {
        let init = self
            .request(
                "initialize",
                msg::initialize_params(json!({}), "plain-test"),
            )
            .await;
        self.send(msg::initialized()).await;
        init["result"].clone()
    }

    /// `toolsets/list` (a full statement).
    pub async fn list(&mut self) -> Value {
        let r = self.request("toolsets/list", json!({})).await;
        r["result"].clone()
    }

    /// `toolsets/open` (`options` left out when null); returns the whole response.
    pub async fn open(&mut self, toolset: &str, instance: Option<&str>, options: Value) -> Value {
        let options = (!options.is_null()).then_some(options);
        self.request(
            "toolsets/open",
            msg::open_params(toolset, instance, options),
        )
        .await
    }

    /// `tools/call` of `tool` in `instance` (`mcpl/instance`, §4.5); returns the result.
    pub async fn call(&mut self, tool: &str, args: Value, instance: Option<&str>) -> Value {
        let r = self
            .request("tools/call", msg::call_params(tool, args, instance))
            .await;
        assert!(r.get("result").is_some(), "a JSON-RPC error: {r:#}");
        r["result"].clone()
    }

    /// Shows that nothing else is on its way (module docs): everything before the barrier
    /// is read (and kept unread for the test).
    pub async fn quiet(&mut self) {
        self.request("tools/list", json!({})).await;
    }

    /// Messages read and not taken, emptied.
    pub fn take_unread(&mut self) -> Vec<Value> {
        self.unread.drain(..).collect()
    }
}

/// The text of a result's (or push's payload's) content blocks, joined.
pub fn text_of(v: &Value) -> String {
    let content = v
        .get("content")
        .or_else(|| v["params"]["payload"].get("content"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    content
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `mcpl/hints` a result carries.
pub fn hints_of(result: &Value) -> &Value {
    &result["_meta"]["mcpl/hints"]
}

/// The ended id a closed toolset entry of `changes` carries for `instance`.
pub fn ended_id(changes: &Value, instance: &str) -> Option<String> {
    changes["toolsets"]
        .as_array()?
        .iter()
        .find(|t| t["instance"] == instance && t["state"] == "closed")
        .and_then(|t| t["ended"].as_str())
        .map(str::to_owned)
}
