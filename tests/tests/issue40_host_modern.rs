//! Issue #40 item 3 from the host's side: `mcpl_host`'s Host against the project's real
//! server (the conformance fixture, `mcpl_tests::fixture`, on a loopback WebSocket) in the
//! modern era (MCP 2026-07-28) under RFC-014's stateless profile
//! (`docs/rfc014-stateless.md`): every request declares `mcpl/core` and carries the
//! link's mark and grant, every result's and stream message's stamped hints go through
//! the link's `StampedView`, and what the agent sees is fed from it as on legacy. Between
//! host and server a relay passes every message on and can cut the connection (the
//! `mcpl/hints` stream with it); the host reconnects and reopens the stream from its mark.
//! Each test is named for the profile's vector it proves (S11, S15, S16).

use mcpl_host::host::{Host, HostConfig, HostHandle, ServerConfig};
use mcpl_host::link::{BackoffConfig, EraPolicy};
use mcpl_testkit::within;
use mcpl_tests::conformance::contract::DEFAULT_TOKEN;
use mcpl_tests::fixture::{Choices, LATER_END_REASON, serve_ws_here};
use mcpl_tests::host_relay::{self as host_relay, Relay, ok, shown};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

// ---- the host ----------------------------------------------------------------------------

/// Waits until the fixture is settled (statement read, no recovery) on a connection after
/// `after`; returns its epoch.
async fn settled_after(host: &HostHandle, after: u64) -> u64 {
    host_relay::settled_after(host, "fixture", after).await
}

/// A host of the fixture's named principal in `era`, through `relay`, reconnecting within
/// 10–40 ms.
fn start_host(url: &str, relay: &Relay, era: EraPolicy) -> HostHandle {
    let mut server = ServerConfig::new("fixture", relay.connector(url, DEFAULT_TOKEN));
    server.link.era = era;
    server.link.backoff = BackoffConfig {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(40),
        jitter: 0.0,
        seed: Some(7),
        ..Default::default()
    };
    Host::start(HostConfig::new(vec![server])).expect("a valid host configuration")
}

/// What the host believes open on the fixture, in order.
fn open_now(host: &HostHandle) -> BTreeSet<(String, Option<String>)> {
    host.status()
        .server("fixture")
        .map(|s| s.open.iter().cloned().collect())
        .unwrap_or_default()
}

/// Waits until the host believes `pred` of what is open on the fixture.
async fn wait_open(host: &HostHandle, pred: impl Fn(&BTreeSet<(String, Option<String>)>) -> bool) {
    within(host.wait_for(|s| {
        s.server("fixture")
            .is_some_and(|f| pred(&f.open.iter().cloned().collect()))
    }))
    .await
    .expect("the host runs");
}

fn game(instance: &str) -> (String, Option<String>) {
    ("game".to_owned(), Some(instance.to_owned()))
}

/// A small seeded generator (splitmix64): the sequence is the seed's.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The seed of a random test: `S16_SEED` when set, else the time's; printed, so that a
/// failure can be run again.
fn seed() -> u64 {
    let seed = std::env::var("S16_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0)
        });
    eprintln!("S16 seed: {seed} (run again with S16_SEED={seed})");
    seed
}

// ---- the vectors ---------------------------------------------------------------------------

/// Vector S16 (profile §5, RFC-014 §6): the model's tool list is byte-identical before and
/// after any sequence of modern results and streams cut and reopened — here a seeded
/// random one of opens, closes, moves, own definitions changed, flips (in a call's result,
/// or in a step of the server's own that only the stream or a later result tells), and cuts of the
/// connection with its `mcpl/hints` stream. Opening and closing go as modern requests
/// through the meta-tools; at the end the host's belief has converged on the model's:
/// what is open, and which instances show `game_secret`.
#[actix::test]
async fn s16_model_tool_list_byte_identical_across_modern_results() {
    let seed = seed();
    within(async {
        let server = serve_ws_here(Choices::Fixture).await;
        let relay = Relay::new();
        let host = start_host(server.url(), &relay, EraPolicy::Modern);
        let mut epoch = settled_after(&host, 0).await;
        let before = within(host.tools_json()).await.expect("the host runs");
        for meta in [
            "toolsets--open",
            "toolsets--act",
            "toolsets--look",
            "toolsets--close",
        ] {
            assert!(before.contains(&format!("\"name\":\"{meta}\"")), "{before}");
        }
        for dynamic in ["game_secret", "game_flip", "game_move"] {
            assert!(
                !before.contains(&format!("\"{dynamic}\"")),
                "dynamic tools stay out: {before}"
            );
        }
        let mut rng = Rng(seed);
        // The model: each open instance and whether it shows game_secret.
        let mut open: BTreeMap<String, bool> = BTreeMap::new();
        let names = ["g0", "g1", "g2", "g3"];
        for step in 0..40 {
            let name = names[rng.below(names.len())];
            let op = rng.below(6);
            match (op, open.get(name).copied()) {
                (_, None) if op != 5 => {
                    ok(
                        &host,
                        "toolsets--open",
                        json!({"toolset": "game", "instance": name}),
                    )
                    .await;
                    open.insert(name.to_owned(), false);
                }
                (0, Some(_)) => {
                    ok(
                        &host,
                        "toolsets--close",
                        json!({"toolset": "game", "instance": name}),
                    )
                    .await;
                    open.remove(name);
                }
                (1 | 2, Some(secret)) => {
                    let (tool, flips) = if op == 1 {
                        ("game_flip", true)
                    } else {
                        ("game_later", true)
                    };
                    ok(
                        &host,
                        "toolsets--act",
                        json!({"tool": tool, "instance": name, "args": {}}),
                    )
                    .await;
                    open.insert(name.to_owned(), secret ^ flips);
                }
                (3, Some(_)) => {
                    // An instance's own definition changes (a stamped entry with one).
                    ok(
                        &host,
                        "toolsets--act",
                        json!({"tool": "game_grow", "instance": name, "args": {}}),
                    )
                    .await;
                }
                (4, Some(_)) => {
                    ok(
                        &host,
                        "toolsets--act",
                        json!({"tool": "game_move", "instance": name, "args": {"n": 1}}),
                    )
                    .await;
                }
                _ => {
                    relay.cut();
                    epoch = settled_after(&host, epoch).await;
                }
            }
            let now = within(host.tools_json()).await.expect("the host runs");
            assert_eq!(
                now, before,
                "seed {seed}, step {step}: the model's tool list changed"
            );
        }
        // Every change reaches the host: a stream's, or the next result's delta (a flip in
        // a step of the server's own may follow the call that asked for it).
        let want: BTreeSet<(String, Option<String>)> = open
            .keys()
            .map(|g| game(g))
            .chain([("lobby".to_owned(), None)])
            .collect();
        loop {
            ok(&host, "fixture--echo", json!({"text": "sync"})).await;
            let mut agree = open_now(&host) == want;
            for (g, secret) in &open {
                let seen = within(host.is_visible("fixture", "game_secret", Some(g)))
                    .await
                    .expect("the host runs");
                agree &= seen == Some(*secret);
            }
            if agree {
                break;
            }
        }
        let after = within(host.tools_json()).await.expect("the host runs");
        assert_eq!(after, before, "seed {seed}: the model's tool list changed");
        let since: Vec<u64> = relay
            .sent("tools/call")
            .iter()
            .filter_map(|r| r["params"]["_meta"]["mcpl/since"].as_u64())
            .collect();
        assert!(
            !since.is_empty() && since.windows(2).all(|w| w[0] <= w[1]),
            "seed {seed}: the mark only grows: {since:?}"
        );
        // One stream per connection, each asking for `mcpl/hints` from the mark then held.
        let listens = relay.sent("subscriptions/listen");
        assert_eq!(listens.len() as u64, epoch, "seed {seed}: {listens:?}");
        for (i, l) in listens.iter().enumerate() {
            assert_eq!(l["params"]["notifications"]["mcpl/hints"], true, "{l}");
            let since = l["params"]["_meta"]["mcpl/since"].as_u64().expect("a mark");
            assert!(
                i == 0 || since > 0,
                "seed {seed}: a reopened stream starts from the mark: {l}"
            );
        }
        host.stop().await;
    })
    .await;
}

/// Vector S11, the host's side: a game ends in a step of the server's own, while the host
/// issues no request; the agent is told once. Neither a reconnect (its `toolsets/list`
/// names the ended record) nor a later `look` (which lists it) tells it again.
#[actix::test]
async fn s11_host_told_end_once_on_modern() {
    within(async {
        let server = serve_ws_here(Choices::Fixture).await;
        let relay = Relay::new();
        let host = start_host(server.url(), &relay, EraPolicy::Modern);
        let epoch = settled_after(&host, 0).await;
        ok(
            &host,
            "toolsets--open",
            json!({"toolset": "game", "instance": "g1"}),
        )
        .await;
        ok(
            &host,
            "toolsets--act",
            json!({"tool": "game_later", "instance": "g1", "args": {"end": true}}),
        )
        .await;
        wait_open(&host, |o| !o.contains(&game("g1"))).await;
        let told = shown(&host).await;
        assert_eq!(told.matches(LATER_END_REASON).count(), 1, "{told}");
        relay.cut();
        settled_after(&host, epoch).await;
        ok(&host, "fixture--echo", json!({"text": "later"})).await;
        let again = shown(&host).await;
        assert!(!again.contains(LATER_END_REASON), "told again: {again}");
        // A `look` (a `toolsets/list` of the agent's asking) lists it under "Ended", as
        // on legacy; nothing is told of it afterwards.
        let look = ok(&host, "toolsets--look", json!({})).await;
        assert!(look.contains(LATER_END_REASON), "{look}");
        ok(&host, "fixture--echo", json!({"text": "after look"})).await;
        let after = shown(&host).await;
        assert_eq!(
            after.matches(LATER_END_REASON).count(),
            1,
            "only the look's: {after}"
        );
        host.stop().await;
    })
    .await;
}

/// Vector S15, the host's side: one principal with a legacy host and a modern one. What
/// either opens or closes, the other sees — the legacy host on its next rev, the modern
/// host by stamp (here on its `mcpl/hints` stream, no request of its own).
#[actix::test]
async fn s15_host_modern_sees_legacy_change() {
    within(async {
        let server = serve_ws_here(Choices::Fixture).await;
        let relay = Relay::new();
        let modern = start_host(server.url(), &relay, EraPolicy::Modern);
        let legacy = start_host(server.url(), &relay, EraPolicy::Legacy);
        settled_after(&modern, 0).await;
        settled_after(&legacy, 0).await;
        ok(
            &legacy,
            "toolsets--open",
            json!({"toolset": "game", "instance": "from-legacy"}),
        )
        .await;
        wait_open(&modern, |o| o.contains(&game("from-legacy"))).await;
        ok(
            &modern,
            "toolsets--open",
            json!({"toolset": "game", "instance": "from-modern"}),
        )
        .await;
        wait_open(&legacy, |o| o.contains(&game("from-modern"))).await;
        ok(
            &legacy,
            "toolsets--close",
            json!({"toolset": "game", "instance": "from-modern"}),
        )
        .await;
        wait_open(&modern, |o| !o.contains(&game("from-modern"))).await;
        let said = ok(
            &modern,
            "toolsets--act",
            json!({"tool": "game_show", "instance": "from-legacy", "args": {}}),
        )
        .await;
        assert!(said.contains("from-legacy: size 3"), "{said}");
        modern.stop().await;
        legacy.stop().await;
    })
    .await;
}
