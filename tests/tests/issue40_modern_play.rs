//! Issue #40, "Done when" 2: the project's host (`mcpl_host`'s Host, as a library: the
//! agent's view through the meta-tools) and the real `mcpl-arcade` binary play the demo's
//! games against the bot on the modern era (MCP 2026-07-28, under RFC-014's stateless
//! profile, `docs/rfc014-stateless.md`), over stdio (the host spawns `mcpl-arcade serve
//! --stdio --principal ann`) and over Streamable HTTP (the arcade on a free loopback port,
//! the host with `ann`'s bearer token): a Go game on 9×9, some moves then a resignation; a
//! tic-tac-toe game to its end; and a Go game closed unfinished (§4.2: resigned by closing).
//!
//! Checked on each transport: the link speaks the modern era with the profile (the host sent
//! `server/discover` and never `initialize`, each call carries the protocol version and the
//! host's mark; the arcade answered each call with stamped hints, profile §3.3); the model's
//! tool list is byte-identical from the first listing to the end (§6, profile vector S16);
//! each end is told to the agent once (§4.3, S11); and at the end the host's view equals
//! the server's statement (a `toolsets/list` the relay saw the arcade answer).

use mcpl_host::host::{Host, HostConfig, HostHandle, ServerConfig};
use mcpl_host::link::EraPolicy;
use mcpl_protocol::modern::{MODERN_PROTOCOL_VERSION, PROTOCOL_VERSION_KEY};
use mcpl_protocol::stateless::SINCE;
use mcpl_testkit::within;
use mcpl_tests::host_relay::{Relay, ok, settled_after, shown};
use mcpl_tests::interop::arcade_bin;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::process::Stdio;

/// The arcade's name in the host.
const SERVER: &str = "arcade";
/// The principal the host plays as.
const PLAYER: &str = "ann";
/// `ann`'s bearer token on the HTTP listener.
const TOKEN: &str = "ann-secret";
/// The arcade's bot, small and seeded: the games are the same on every run.
const BOT: [&str; 4] = ["--bot-playouts", "48", "--seed", "7"];

/// A host of `ann` at `url` on the modern era, through `relay`.
fn start_host(url: &str, relay: &Relay) -> HostHandle {
    let mut server = ServerConfig::new(SERVER, relay.connector(url, TOKEN));
    server.link.era = EraPolicy::Modern;
    Host::start(HostConfig::new(vec![server])).expect("a valid host configuration")
}

/// The model's tool list now, as the model is given it.
async fn tool_list(host: &HostHandle) -> String {
    within(host.tools_json()).await.expect("the host runs")
}

/// What the host believes open on the arcade.
fn open_now(host: &HostHandle) -> BTreeSet<(String, Option<String>)> {
    host.status()
        .server(SERVER)
        .map(|s| s.open.iter().cloned().collect())
        .unwrap_or_default()
}

fn game(toolset: &str, instance: &str) -> (String, Option<String>) {
    (toolset.to_owned(), Some(instance.to_owned()))
}

/// The legal moves `tool`'s definition in `instance` lists now (§5.1: the arcade's `move`
/// enum); empty when the tool is not offered (not the player's turn, or the game is over).
pub(crate) async fn legal(host: &HostHandle, tool: &str, instance: &str) -> Vec<String> {
    let def = within(host.definition(Some(SERVER), tool, Some(instance)))
        .await
        .expect("the host runs");
    def.map(|t| {
        t.input_schema["properties"]["move"]["enum"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    })
    .unwrap_or_default()
}

/// The agent's `act` of `tool` in `instance` with `args`, which must succeed; its text.
async fn act(host: &HostHandle, tool: &str, instance: &str, args: Value) -> String {
    ok(
        host,
        "toolsets--act",
        json!({"tool": tool, "instance": instance, "args": args}),
    )
    .await
}

/// The model's tool list, taken first and compared after every step of the play.
struct Unchanged<'a> {
    host: &'a HostHandle,
    first: String,
    steps: usize,
}

impl<'a> Unchanged<'a> {
    async fn first(host: &'a HostHandle) -> Self {
        let first = tool_list(host).await;
        Unchanged {
            host,
            first,
            steps: 0,
        }
    }

    /// Asserts the model's tool list is byte-identical to the first one, after `step`.
    async fn after(&mut self, step: &str) {
        self.steps += 1;
        let now = tool_list(self.host).await;
        assert_eq!(
            now, self.first,
            "the model's tool list changed after {step}"
        );
    }
}

/// How many times the agent was told that `marker` ended, with its reason (§4.3: once):
/// "Closed [m]: reason" for an instance it believed open, "Ended [m] at …: reason" for one
/// it did not. A close's own acknowledgment ("Closed [m].", no reason) tells no end.
fn ends_told(transcript: &str, marker: &str) -> usize {
    transcript.matches(&format!("Ended {marker} at ")).count()
        + transcript.matches(&format!("Closed {marker}: ")).count()
}

/// The demo's games against the bot, through the meta-tools, on the link `relay` sees.
async fn play_the_demo(host: &HostHandle, relay: &Relay) {
    settled_after(host, SERVER, 0).await;
    let mut list = Unchanged::first(host).await;
    for meta in [
        "toolsets--open",
        "toolsets--act",
        "toolsets--look",
        "toolsets--close",
    ] {
        assert!(
            list.first.contains(&format!("\"name\":\"{meta}\"")),
            "{}",
            list.first
        );
    }
    for dynamic in ["go_play", "tictactoe_play", "go_resign"] {
        assert!(
            !list.first.contains(&format!("\"{dynamic}\"")),
            "a game's tools stay out of the model's list: {}",
            list.first
        );
    }

    // Go 9×9 against the bot: five moves, then a resignation.
    let opened = ok(
        host,
        "toolsets--open",
        json!({"toolset": "go", "instance": "go-1",
               "options": {"opponent": "bot", "size": 9, "color": "black"}}),
    )
    .await;
    assert!(opened.contains("You play Black"), "{opened}");
    list.after("opening go-1").await;
    for i in 0..5 {
        // The bot's answer came with the last result (the arcade defers the mover's call
        // until its move), and its hints made `go_play` visible again (profile §3.3).
        let moves = legal(host, "go_play", "go-1").await;
        assert!(
            !moves.is_empty(),
            "Black's turn, move {i}: no legal move offered"
        );
        let mv = &moves[(i * 17 + 5) % moves.len()];
        let said = act(host, "go_play", "go-1", json!({"move": mv})).await;
        assert!(said.contains("bot (White)"), "move {i} ({mv}): {said}");
        list.after(&format!("go move {i}")).await;
    }
    let resigned = act(host, "go_resign", "go-1", json!({})).await;
    assert!(resigned.contains("Game over:"), "{resigned}");
    list.after("resigning go-1").await;
    assert!(
        !open_now(host).contains(&game("go", "go-1")),
        "the resignation's result ended go-1: {:?}",
        open_now(host)
    );

    // Tic-tac-toe against the (perfect) bot, to its end.
    let opened = ok(
        host,
        "toolsets--open",
        json!({"toolset": "tictactoe", "instance": "ttt-1",
               "options": {"opponent": "bot", "color": "x"}}),
    )
    .await;
    list.after("opening ttt-1").await;
    assert!(!opened.is_empty());
    let mut played = 0;
    while open_now(host).contains(&game("tictactoe", "ttt-1")) {
        assert!(played < 5, "tic-tac-toe has at most five moves of X's");
        let moves = legal(host, "tictactoe_play", "ttt-1").await;
        assert!(!moves.is_empty(), "X's turn, move {played}: no legal move");
        act(host, "tictactoe_play", "ttt-1", json!({"move": moves[0]})).await;
        played += 1;
        list.after(&format!("tic-tac-toe move {played}")).await;
    }
    assert!(
        played >= 3,
        "a game of tic-tac-toe ends after X's third move at the soonest"
    );

    // A game closed unfinished: the close resigns it (its end is the close's).
    ok(
        host,
        "toolsets--open",
        json!({"toolset": "go", "instance": "go-2", "options": {"opponent": "bot", "size": 9}}),
    )
    .await;
    list.after("opening go-2").await;
    ok(
        host,
        "toolsets--close",
        json!({"toolset": "go", "instance": "go-2"}),
    )
    .await;
    list.after("closing go-2").await;

    // Each end was told to the agent once; and each open and the close said once, though
    // the `mcpl/hints` stream may tell a change before the result of the request that
    // made it (the presenter's `told_while_waiting`).
    let told = shown(host).await;
    for marker in [
        "[arcade/go:go-1]",
        "[arcade/tictactoe:ttt-1]",
        "[arcade/go:go-2]",
    ] {
        assert_eq!(ends_told(&told, marker), 1, "{marker}: {told}");
        assert_eq!(
            told.matches(&format!("Opened {marker}")).count(),
            1,
            "{marker}: {told}"
        );
    }
    assert_eq!(
        told.matches("Closed [arcade/go:go-2]").count(),
        1,
        "the close said once: {told}"
    );

    // The host's view converges on the server's statement: a `toolsets/list` of the
    // test's own on the host's link, as the host's first one went but from mark 0 (a full
    // statement, profile §3.3), answered to the test alone.
    let look = ok(host, "toolsets--look", json!({})).await;
    list.after("a look").await;
    let mut ask = relay
        .sent("toolsets/list")
        .first()
        .cloned()
        .expect("the host read a statement");
    ask["id"] = json!("the-test-1");
    ask["params"]["_meta"][SINCE] = json!(0);
    let statement = within(relay.ask(ask))
        .await
        .expect("the arcade answers the test's toolsets/list");
    assert_eq!(
        statement["result"]["_meta"]["mcpl/hints"]["statement"], true,
        "{statement}"
    );
    let stated: BTreeSet<(String, Option<String>)> = statement["result"]["open"]
        .as_array()
        .expect("open")
        .iter()
        .map(|t| {
            (
                t["toolset"].as_str().expect("a toolset").to_owned(),
                t["instance"].as_str().map(str::to_owned),
            )
        })
        .collect();
    assert_eq!(
        stated,
        BTreeSet::from([("lobby".to_owned(), None)]),
        "{statement}"
    );
    assert_eq!(open_now(host), stated, "the host's view is the server's");
    let ended: BTreeSet<String> = statement["result"]["ended"]
        .as_array()
        .expect("ended")
        .iter()
        .filter_map(|r| r["instance"].as_str().map(str::to_owned))
        .collect();
    // §4.3: the ends the host did not cause keep records; the close it asked for does not
    // (its instance is a closed entry of the statement's hints).
    assert_eq!(
        ended,
        BTreeSet::from(["go-1".to_owned(), "ttt-1".to_owned()]),
        "{statement}"
    );
    let closed = statement["result"]["_meta"]["mcpl/hints"]["toolsets"]
        .as_array()
        .expect("the statement's toolsets")
        .iter()
        .any(|t| t["instance"] == "go-2" && t["state"] == "closed");
    assert!(closed, "go-2 closed: {statement}");
    for instance in ["go-1", "ttt-1", "go-2"] {
        assert!(
            look.contains(&format!(":{instance}]: ")),
            "the look lists {instance} ended: {look}"
        );
    }
    assert!(look.contains("Ended"), "{look}");
    let after = shown(host).await;
    for marker in [
        "[arcade/go:go-1]",
        "[arcade/tictactoe:ttt-1]",
        "[arcade/go:go-2]",
    ] {
        assert_eq!(ends_told(&after, marker), 0, "told again: {after}");
    }
    assert!(list.steps >= 12, "{} steps", list.steps);
    let last = tool_list(host).await;
    assert_eq!(last, list.first, "the model's tool list changed by the end");
}

/// The link `relay` saw was the modern era with the profile: the host probed with
/// `server/discover` and never sent `initialize`; every `tools/call`, `toolsets/open`,
/// `toolsets/close` and `toolsets/list` named 2026-07-28 and the host's mark; the arcade
/// answered each with stamped hints (profile §3.3), and the
/// host held a hint state (hints counted: not a plain MCP link).
fn assert_modern_profile(host: &HostHandle, relay: &Relay) {
    let sent = relay.sent_all();
    let methods: Vec<&str> = sent.iter().filter_map(|m| m["method"].as_str()).collect();
    assert_eq!(methods.first(), Some(&"server/discover"), "{methods:?}");
    assert!(
        !methods.contains(&"initialize"),
        "a legacy handshake: {methods:?}"
    );
    let calls: Vec<Value> = [
        "toolsets/list",
        "toolsets/open",
        "tools/call",
        "toolsets/close",
    ]
    .into_iter()
    .flat_map(|m| relay.sent(m))
    .collect();
    // The connect-time statement, 3 opens, 5 Go moves and the resignation, 3 or more
    // tic-tac-toe moves, the close.
    assert!(calls.len() >= 14, "{} requests: {calls:?}", calls.len());
    let mut ids = Vec::new();
    for c in &calls {
        let meta = &c["params"]["_meta"];
        assert_eq!(meta[PROTOCOL_VERSION_KEY], MODERN_PROTOCOL_VERSION, "{c}");
        assert!(meta[SINCE].is_u64(), "the host's mark on every call: {c}");
        ids.push(c["id"].clone());
    }
    let received = relay.received();
    for id in &ids {
        let answer = received
            .iter()
            .find(|m| &m["id"] == id && m.get("method").is_none())
            .unwrap_or_else(|| panic!("no answer to call {id}"));
        assert!(
            answer["result"]["_meta"]["mcpl/hints"]["version"].is_u64(),
            "a modern result with stamped hints: {answer}"
        );
    }
    let status = host.status();
    let arcade = status.server(SERVER).expect("configured");
    assert!(arcade.hints_count && arcade.hints.is_some(), "{arcade:?}");
}

/// Over stdio: the host spawns `mcpl-arcade serve --stdio` as `ann`, speaks 2026-07-28
/// with the profile, and the demo's games are played with the model's tool list unchanged.
#[actix::test]
async fn modern_host_plays_the_demo_with_the_arcade_over_stdio() {
    let bin = arcade_bin().to_str().expect("a UTF-8 path").to_owned();
    let url = format!(
        "stdio:{bin} serve --stdio --principal {PLAYER} --in-memory {}",
        BOT.join(" ")
    );
    let relay = Relay::new();
    let host = start_host(&url, &relay);
    play_the_demo(&host, &relay).await;
    assert_modern_profile(&host, &relay);
    within(host.stop()).await;
}

/// Over Streamable HTTP: the arcade listens on a free loopback port, the host presents
/// `ann`'s bearer token, speaks 2026-07-28 with the profile, and the demo's games are
/// played with the model's tool list unchanged.
#[actix::test]
async fn modern_host_plays_the_demo_with_the_arcade_over_http() {
    let mut arcade = tokio::process::Command::new(arcade_bin())
        .args(["serve", "--http", "127.0.0.1:0", "--in-memory"])
        .args(["--token", &format!("{PLAYER}={TOKEN}")])
        .args(BOT)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the arcade starts");
    let url = mcpl_testkit::process::listening(&mut arcade, 1)
        .await
        .remove(0);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let relay = Relay::new();
    let host = start_host(&url, &relay);
    play_the_demo(&host, &relay).await;
    assert_modern_profile(&host, &relay);
    within(host.stop()).await;
    arcade.kill().await.expect("the arcade stops");
}
