//! Issue #40, events on the modern era (`docs/rfc014-stateless.md` §3.5, vector S20): two
//! hinted modern agents — the project's host as a library, each on its own link to the
//! real `mcpl-arcade` binary over Streamable HTTP with its own bearer token — and the
//! lobby's challenge, which on legacy is a `push/event` request. Here it travels as
//! `notifications/mcpl/event` on the invitee's `subscriptions/listen` stream (opened with
//! `mcpl/events` under a grant with `pushEvents`). `ann` challenges `bob` to tic-tac-toe;
//! `bob` is told of the invitation through the stream, accepts by opening the game, and
//! they play it to its end, each move's "your turn" reaching the idle player through its
//! stream. Checked: the invitation arrived on bob's stream and was shown once; each end is
//! told to each player once; each model's tool list is byte-identical throughout (§6,
//! vector S16).

use mcpl_host::host::{Host, HostConfig, HostHandle, ServerConfig, Shown};
use mcpl_host::link::EraPolicy;
use mcpl_testkit::within;
use mcpl_tests::host_relay::{Relay, ok, settled_after, shown};
use mcpl_tests::interop::arcade_bin;
use serde_json::{Value, json};
use std::process::Stdio;
use tokio::sync::mpsc;

const SERVER: &str = "arcade";

/// A player: its host, what it is shown as it is shown, its relay and its first tool list.
struct Player {
    name: &'static str,
    host: HostHandle,
    told: mpsc::UnboundedReceiver<Shown>,
    relay: Relay,
    first_list: String,
    steps: usize,
}

impl Player {
    /// A host of `name` (bearer token `NAME-secret`) at `url` on the modern era.
    async fn start(name: &'static str, url: &str) -> Player {
        let relay = Relay::new();
        let mut server = ServerConfig::new(SERVER, relay.connector(url, &format!("{name}-secret")));
        server.link.era = EraPolicy::Modern;
        let host = Host::start(HostConfig::new(vec![server])).expect("a valid host configuration");
        let told = host.subscribe();
        settled_after(&host, SERVER, 0).await;
        let first_list = within(host.tools_json()).await.expect("the host runs");
        Player {
            name,
            host,
            told,
            relay,
            first_list,
            steps: 0,
        }
    }

    /// Asserts the model's tool list is byte-identical to the first one, after `step`.
    async fn unchanged_after(&mut self, step: &str) {
        self.steps += 1;
        let now = within(self.host.tools_json()).await.expect("the host runs");
        assert_eq!(
            now, self.first_list,
            "{}'s model tool list changed after {step}",
            self.name
        );
    }

    /// Waits for the next message shown to the agent whose text has `needle`.
    async fn told_of(&mut self, needle: &str) -> String {
        within(async {
            loop {
                let s = self.told.recv().await.expect("the host runs");
                if s.text.contains(needle) {
                    return s.text;
                }
            }
        })
        .await
    }

    /// The legal moves of `tictactoe_play` in `instance` now (empty when not offered: not
    /// this player's turn, or the game is over).
    async fn legal(&self, instance: &str) -> Vec<String> {
        let visible = within(
            self.host
                .is_visible(SERVER, "tictactoe_play", Some(instance)),
        )
        .await
        .expect("the host runs");
        if visible != Some(true) {
            return Vec::new();
        }
        crate::issue40_modern_play::legal(&self.host, "tictactoe_play", instance).await
    }

    /// Whether the host believes `tictactoe:instance` open.
    fn has_open(&self, instance: &str) -> bool {
        self.host.status().server(SERVER).is_some_and(|s| {
            s.open
                .iter()
                .any(|(t, i)| t == "tictactoe" && i.as_deref() == Some(instance))
        })
    }
}

/// How many times the agent was told that `marker` ended (§4.3: once).
fn ends_told(transcript: &str, marker: &str) -> usize {
    transcript.matches(&format!("Ended {marker} at ")).count()
        + transcript.matches(&format!("Closed {marker}: ")).count()
}

/// The instance named in a shown event's header `Event from arcade about [arcade/tictactoe:NAME]:`.
fn instance_in(text: &str) -> String {
    let from = text
        .find("[arcade/tictactoe:")
        .unwrap_or_else(|| panic!("no tic-tac-toe marker in {text}"))
        + "[arcade/tictactoe:".len();
    let to = from + text[from..].find(']').expect("a closed marker");
    text[from..to].to_owned()
}

#[actix::test]
async fn modern_agents_play_a_lobby_challenge_told_through_their_event_streams() {
    let mut arcade = tokio::process::Command::new(arcade_bin())
        .args(["serve", "--http", "127.0.0.1:0", "--in-memory"])
        .args(["--token", "ann=ann-secret", "--token", "bob=bob-secret"])
        .args(["--bot-playouts", "48", "--seed", "7"])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the arcade starts");
    let url = mcpl_testkit::process::listening(&mut arcade, 1)
        .await
        .remove(0);
    let mut ann = Player::start("ann", &url).await;
    let mut bob = Player::start("bob", &url).await;

    // Each link's stream asked for events and the arcade agreed (profile §3.5).
    for p in [&ann, &bob] {
        let listen = p.relay.sent("subscriptions/listen");
        assert!(
            listen
                .iter()
                .any(|l| l["params"]["notifications"]["mcpl/events"] == true),
            "{}: {listen:?}",
            p.name
        );
        let acked = p.relay.received().into_iter().any(|m| {
            m["method"] == "notifications/subscriptions/acknowledged"
                && m["params"]["notifications"]["mcpl/events"] == true
        });
        assert!(acked, "{}'s events stream acknowledged", p.name);
    }

    // ann challenges bob from the lobby; bob, idle, is told through his stream.
    let challenged = ok(
        &ann.host,
        "toolsets--act",
        json!({"tool": "challenge", "args": {"opponent": "bob", "game": "tictactoe", "color": "x"}}),
    )
    .await;
    assert!(challenged.contains("has been invited"), "{challenged}");
    ann.unchanged_after("the challenge").await;
    let invitation = bob.told_of("Event from arcade").await;
    assert!(invitation.contains("challenges you"), "{invitation}");
    let bobs = instance_in(&invitation);
    let streamed: Vec<Value> = bob
        .relay
        .received()
        .into_iter()
        .filter(|m| m["method"] == "notifications/mcpl/event")
        .collect();
    assert!(
        streamed
            .iter()
            .any(|e| e["params"]["toolset"] == "tictactoe" && e["params"]["instance"] == bobs),
        "the invitation came on bob's stream: {streamed:?}"
    );
    bob.unchanged_after("the invitation").await;

    // bob accepts by opening the game under his name for it; ann's instance name is her own.
    let accepted = ok(
        &bob.host,
        "toolsets--open",
        json!({"toolset": "tictactoe", "instance": bobs}),
    )
    .await;
    assert!(!accepted.is_empty());
    bob.unchanged_after("accepting").await;
    let anns = ann
        .host
        .status()
        .server(SERVER)
        .and_then(|s| {
            s.open
                .iter()
                .find(|(t, _)| t == "tictactoe")
                .and_then(|(_, i)| i.clone())
        })
        .expect("ann's game is open");

    // They play to the end: whoever is offered moves plays the first; the other waits to
    // be told through its stream.
    let mut moves = 0;
    while ann.has_open(&anns) || bob.has_open(&bobs) {
        assert!(moves < 9, "tic-tac-toe has at most nine moves");
        let (a, b) = (ann.legal(&anns).await, bob.legal(&bobs).await);
        let (player, instance, legal) = match (a.is_empty(), b.is_empty()) {
            (false, _) => (&mut ann, anns.clone(), a),
            (true, false) => (&mut bob, bobs.clone(), b),
            (true, true) => {
                // Neither knows it is its turn yet, or the end is still on its way: the
                // next thing either is shown says which.
                tokio::select! {
                    s = ann.told.recv() => { s.expect("ann's host runs"); }
                    s = bob.told.recv() => { s.expect("bob's host runs"); }
                }
                continue;
            }
        };
        ok(
            &player.host,
            "toolsets--act",
            json!({"tool": "tictactoe_play", "instance": instance, "args": {"move": legal[0]}}),
        )
        .await;
        moves += 1;
        player.unchanged_after(&format!("move {moves}")).await;
    }
    assert!(
        moves >= 5,
        "a game of tic-tac-toe takes five moves at least"
    );

    // Each told the end once; the invitation shown to bob once; the lists unchanged.
    let ann_told = shown(&ann.host).await;
    let bob_told = shown(&bob.host).await;
    assert_eq!(
        ends_told(&ann_told, &format!("[arcade/tictactoe:{anns}]")),
        1,
        "{ann_told}"
    );
    assert_eq!(
        ends_told(&bob_told, &format!("[arcade/tictactoe:{bobs}]")),
        1,
        "{bob_told}"
    );
    assert_eq!(
        bob_told
            .matches(&format!("(open tictactoe:{bobs} to join)"))
            .count(),
        1,
        "the invitation shown once: {bob_told}"
    );
    assert_eq!(
        bob_told
            .matches(&format!("Suggestion from arcade (the host does not act on it): open [arcade/tictactoe:{bobs}]"))
            .count(),
        1,
        "its suggestion shown once: {bob_told}"
    );
    for p in [&mut ann, &mut bob] {
        p.unchanged_after("the end").await;
        assert!(p.steps >= 3, "{}: {} steps", p.name, p.steps);
    }
    within(ann.host.stop()).await;
    within(bob.host.stop()).await;
    arcade.kill().await.expect("the arcade stops");
}
