//! Issue #41 item 4: legacy WebSocket connections (and event streams) stay where they
//! land. Three `mcpl-arcade serve --postgres URL --nats URL --node NAME` processes on a
//! private PostgreSQL and `nats-server`; `n1` owns the arcade and the standbys `n2` and
//! `n3` carry their clients' long-lived connections to it through tunnels over NATS:
//!
//! - two legacy WebSocket clients, one on each standby, play tic-tac-toe to the end
//!   through the lobby, each told of the other's moves by pushes through its tunnel;
//! - a legacy Streamable HTTP session on a standby gets its pushes on its `GET` event
//!   stream, and a modern `subscriptions/listen` stream on the other standby gets its
//!   `notifications/mcpl/hints`, both through tunnels;
//! - the owner SIGKILLed: the tunneled WebSocket connection and listen stream are closed
//!   promptly (awaited), and a client connecting again through a standby after the
//!   takeover finds its game where it was and plays on.
//!
//! Every process is killed by its own id; nothing sleeps.

use crate::issue41_02_arcade_nodes::{Node, TTL_MS, call, modern};
use crate::support::{Client, text_of};

use mcpl_testkit::nats::Nats;
use mcpl_testkit::postgres::Postgres;
use mcpl_testkit::within;
use mcpl_transport::{ClientOptions, http, ws};
use serde_json::{Value, json};
use std::time::Instant;

const PLAY: &str = "tictactoe_play";

/// PostgreSQL, NATS and three nodes listening for WebSocket and Streamable HTTP: `n1`
/// owns the arcade, `n2` and `n3` forward to it.
async fn cluster() -> (Postgres, Nats, Vec<Node>) {
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let n1 = Node::start_listening("n1", &pg.url(), &nats.url(), TTL_MS, true).await;
    n1.owns().await;
    let n2 = Node::start_listening("n2", &pg.url(), &nats.url(), TTL_MS, true).await;
    let n3 = Node::start_listening("n3", &pg.url(), &nats.url(), TTL_MS, true).await;
    n2.forwards_to("n1").await;
    n3.forwards_to("n1").await;
    (pg, nats, vec![n1, n2, n3])
}

/// A legacy connection of `who` to `url` (WebSocket or Streamable HTTP) that advertised
/// `toolHints`, was granted `tools` and `pushEvents`, and read `toolsets/list`.
pub(crate) async fn hinted(url: &str, who: &str) -> Client {
    let opts = ClientOptions {
        token: Some(who.to_owned()),
        ..Default::default()
    };
    let conn = if url.starts_with("ws") {
        ws::connect(url, &opts).await.expect("connected")
    } else {
        http::connect(url, &opts).await.expect("connected")
    };
    let mut c = Client::from_connection(conn);
    c.handshake(true, &["tools", "pushEvents"]).await;
    c.list().await;
    c
}

/// alice challenges bob to tic-tac-toe `t1` (the game opens on her side); bob is told by
/// a push's suggestion and joins; alice is told by a push that he accepted.
pub(crate) async fn challenged_and_accepted(alice: &mut Client, bob: &mut Client) {
    let opened = alice
        .open("tictactoe", Some("t1"), json!({"opponent": "bob"}))
        .await;
    assert_eq!(
        opened["result"]["title"], "Tic-tac-toe vs bob",
        "{opened:#}"
    );
    let invited = bob.next_push().await;
    assert_eq!(
        invited["params"]["hints"]["suggest"][0]["reason"],
        "alice challenges you to Tic-tac-toe, you play O",
        "{invited:#}"
    );
    let joined = bob.open("tictactoe", Some("t1"), Value::Null).await;
    assert_eq!(joined["result"]["title"], "Tic-tac-toe vs alice");
    let accepted = alice.next_push().await;
    assert!(
        text_of(&accepted).starts_with("bob accepted your challenge"),
        "{accepted:#}"
    );
}

pub(crate) fn ws_of(n: &Node) -> &str {
    n.ws.as_deref().expect("the node listens for WebSocket")
}

#[actix::test]
async fn issue41_04_two_websocket_clients_on_standbys_play_to_the_end_told_by_pushes() {
    let (_pg, _nats, nodes) = cluster().await;
    let mut alice = hinted(ws_of(&nodes[1]), "alice").await;
    let mut bob = hinted(ws_of(&nodes[2]), "bob").await;

    // alice, on n2, challenges bob; bob, on n3, is invited by a push through his tunnel.
    challenged_and_accepted(&mut alice, &mut bob).await;
    assert!(
        alice.hints.is_visible(PLAY, "t1"),
        "her turn, by the push's hints"
    );

    // X takes column a; each move reaches the other by a push giving the turn.
    let script = [
        (true, "a1"),
        (false, "b1"),
        (true, "a2"),
        (false, "b2"),
        (true, "a3"),
    ];
    for (i, (is_alice, cell)) in script.into_iter().enumerate() {
        let (mover, other, name) = if is_alice {
            (&mut alice, &mut bob, "alice (X)")
        } else {
            (&mut bob, &mut alice, "bob (O)")
        };
        assert!(mover.hints.moves(PLAY, "t1").contains(&cell.to_owned()));
        let r = mover.call(PLAY, json!({"move": cell}), Some("t1")).await;
        assert!(
            text_of(&r).starts_with(&format!("You played {cell}.")),
            "{r:#}"
        );
        let push = other.next_push().await;
        assert!(
            text_of(&push).starts_with(&format!("{name} played {cell}.")),
            "{push:#}"
        );
        if i + 1 < script.len() {
            assert!(other.hints.is_visible(PLAY, "t1"), "the turn is told");
        } else {
            assert!(text_of(&push).contains("X (alice) wins"), "{push:#}");
        }
    }
    assert!(
        !nodes[1].has_said("owns the arcade") && !nodes[2].has_said("owns the arcade"),
        "the standbys served nothing themselves"
    );
    // The health checks count them: each standby opened one tunnel, the owner accepted
    // both.
    assert_eq!(tunnel_counts(&nodes[0]).await, (200, 0, 2));
    assert_eq!(tunnel_counts(&nodes[1]).await, (503, 1, 0));
    assert_eq!(tunnel_counts(&nodes[2]).await, (503, 1, 0));
}

/// A node's health check (`GET /mcpl/owner`): its status and the tunnels it says it
/// opened and accepted.
pub(crate) async fn tunnel_counts(n: &Node) -> (u16, u64, u64) {
    use mcpl_games::arcade::node::{OWNER_PATH, TUNNELS_ACCEPTED, TUNNELS_OPENED};
    let url = format!("{}{OWNER_PATH}", n.url.trim_end_matches("/mcp"));
    let resp = within(reqwest::get(&url))
        .await
        .expect("the check is answered");
    let count = |h: &str| {
        resp.headers()
            .get(h)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {h} in {resp:?}"))
    };
    (
        resp.status().as_u16(),
        count(TUNNELS_OPENED),
        count(TUNNELS_ACCEPTED),
    )
}

/// A `subscriptions/listen` stream of `who` (modern, SSE) on `url`, holding every change
/// up to `since`, read message by message.
struct Listen {
    resp: reqwest::Response,
    buf: String,
}

impl Listen {
    async fn open(http: &reqwest::Client, url: &str, who: &str, since: u64) -> Listen {
        let mut body = modern(
            5,
            "subscriptions/listen",
            json!({"notifications": {"mcpl/hints": true}}),
        );
        let meta = &mut body["params"]["_meta"];
        meta["io.modelcontextprotocol/clientCapabilities"] = json!({"extensions": {"mcpl/core":
            {"version": "0.5", "toolHints": true, "pushEvents": true}}});
        meta["mcpl/since"] = json!(since);
        let resp = within(
            http.post(url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "subscriptions/listen")
                .header("authorization", format!("Bearer {who}"))
                .body(body.to_string())
                .send(),
        )
        .await
        .expect("the stream opens");
        assert_eq!(resp.status(), 200, "{resp:?}");
        Listen {
            resp,
            buf: String::new(),
        }
    }

    /// The next message (one SSE event's data); `None` once the stream ended, or broke.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(at) = self.buf.find("\n\n") {
                let event: String = self.buf.drain(..at + 2).collect();
                let data: String = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if data.is_empty() {
                    continue;
                }
                return Some(
                    serde_json::from_str(&data).unwrap_or_else(|e| panic!("{e}: {event:?}")),
                );
            }
            let chunk = within(self.resp.chunk()).await.ok()??;
            self.buf
                .push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
        }
    }

    /// The next `notifications/mcpl/hints` whose changes (of tools or toolsets) name
    /// `instance`.
    async fn hints_of(&mut self, instance: &str) -> Value {
        within(self.hints_of_unbounded(instance)).await
    }

    async fn hints_of_unbounded(&mut self, instance: &str) -> Value {
        loop {
            let m = self.next().await.expect("the stream goes on");
            let names = ["tools", "toolsets"].iter().any(|k| {
                m["params"][k]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|e| e["instance"] == instance))
            });
            if m["method"] == "notifications/mcpl/hints" && names {
                return m;
            }
        }
    }
}

#[actix::test]
async fn issue41_04_a_get_event_stream_and_a_listen_stream_on_standbys_get_their_events() {
    let (_pg, _nats, nodes) = cluster().await;
    // alice: a legacy Streamable HTTP session on n2 (its POSTs forwarded, its GET stream
    // tunneled). bob: a modern listen stream on n3, tunneled, and modern POSTs.
    let mut alice = hinted(&nodes[1].url, "alice").await;
    let http = reqwest::Client::new();
    let mut bobs = Listen::open(&http, &nodes[2].url, "bob", 0).await;

    // bob challenges alice: she is invited on her GET stream, a request she answers.
    let sent = call(
        &http,
        &nodes[2].url,
        "bob",
        "challenge",
        json!({"opponent": "alice", "game": "tictactoe"}),
    )
    .await;
    let game = sent["structuredContent"]["instance"]
        .as_str()
        .expect("an instance")
        .to_owned();
    let invited = alice.next_push().await;
    assert_eq!(
        invited["params"]["hints"]["suggest"][0]["instance"], game,
        "{invited:#}"
    );
    // bob's stream tells him of his own open.
    let told = bobs.hints_of(&game).await;
    assert!(told["params"]["version"].is_u64(), "{told:#}");

    // alice accepts over her session: bob's stream gives him his turn (the challenger
    // plays X); he plays, and alice is told on her GET stream; his stream takes his turn
    // away.
    let joined = alice.open("tictactoe", Some(&game), Value::Null).await;
    assert!(joined.get("result").is_some(), "{joined:#}");
    let his_turn = bobs.hints_of(&game).await;
    assert_eq!(play_visible(&his_turn, &game), Some(true), "{his_turn:#}");
    let r = call(
        &http,
        &nodes[2].url,
        "bob",
        PLAY,
        json!({"move": "b2", "instance": game}),
    )
    .await;
    assert!(text_of(&r).starts_with("You played b2."), "{r:#}");
    let push = alice.next_push().await;
    assert!(text_of(&push).starts_with("bob (X) played b2."), "{push:#}");
    assert!(alice.hints.is_visible(PLAY, &game), "her turn, told");
    let played = bobs.hints_of(&game).await;
    assert_eq!(play_visible(&played, &game), Some(false), "{played:#}");
}

/// Whether a hints message shows `tictactoe_play` of `instance` (`None`: it says nothing
/// of it).
fn play_visible(m: &Value, instance: &str) -> Option<bool> {
    m["params"]["tools"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == PLAY && t["instance"] == instance)
        .and_then(|t| t["visible"].as_bool())
}

#[actix::test]
async fn issue41_04_the_owner_sigkilled_closes_tunneled_connections_and_a_reconnect_plays_on() {
    let (_pg, _nats, mut nodes) = cluster().await;
    let mut alice = hinted(ws_of(&nodes[1]), "alice").await;
    alice.open("go", Some("g1"), json!({})).await;
    let r = alice
        .call("go_play", json!({"move": "E5"}), Some("g1"))
        .await;
    assert!(text_of(&r).contains("bot (White) "), "{r:#}");
    let before = text_of(&alice.call("go_board", json!({}), Some("g1")).await);
    let http = reqwest::Client::new();
    let mut listening = Listen::open(&http, &nodes[2].url, "alice", 0).await;

    // The owner dies: both tunneled connections are closed, without waiting for the
    // takeover (the keepalive finds nobody on the tunnels' subjects).
    let killed = Instant::now();
    nodes[0].child.kill().await.expect("n1 is killed (SIGKILL)");
    let closed = within(alice.closed()).await;
    let ws_closed = killed.elapsed();
    while within(listening.next()).await.is_some() {}
    let listen_closed = killed.elapsed();
    eprintln!(
        "after the kill: the WebSocket closed in {ws_closed:?}, the listen stream in {listen_closed:?} ({closed:?}, lease {TTL_MS} ms)"
    );

    // A standby takes over; alice connects again through n2 (standing by, or the new
    // owner): g1 is open where it was, and goes on.
    let (n2, n3) = (&nodes[1], &nodes[2]);
    let line = |n: &Node| format!("node {:?} owns the arcade and serves it", n.name);
    let (l2, l3) = (line(n2), line(n3));
    let (mut w2, mut w3) = (n2.log.clone(), n3.log.clone());
    within(async {
        tokio::select! {
            _ = w2.wait_for(|lines| lines.iter().any(|l| l.contains(&l2))) => {}
            _ = w3.wait_for(|lines| lines.iter().any(|l| l.contains(&l3))) => {}
        }
    })
    .await;
    let (owner, other) = if n2.has_said(&l2) { (n2, n3) } else { (n3, n2) };
    other.forwards_to(&owner.name).await;
    eprintln!(
        "{} took over {:?} after the kill",
        owner.name,
        killed.elapsed()
    );
    let mut again = hinted(ws_of(other), "alice").await;
    assert!(
        again.hints.is_visible("go_play", "g1"),
        "alice's turn, as kept"
    );
    let after = text_of(&again.call("go_board", json!({}), Some("g1")).await);
    assert_eq!(after, before, "the same position");
    let mv = again
        .hints
        .moves("go_play", "g1")
        .into_iter()
        .find(|m| m != "pass")
        .expect("a legal point");
    let r = again.call("go_play", json!({"move": mv}), Some("g1")).await;
    assert!(text_of(&r).contains("bot (White) "), "{r:#}");
}
