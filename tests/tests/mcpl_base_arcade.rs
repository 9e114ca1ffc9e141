//! The MCPL base (SPEC.md 0.5 and RFC-001..003) at the arcade's edge, tried as another
//! implementation's host would: raw JSON text frames on a real WebSocket, shapes from the
//! spec's text, nothing decoded through this project's types. Each test is named after the
//! section whose rule it proves.
//!
//! A push in these tests is provoked the way a real game provokes one: bob challenges
//! alice from the lobby, and alice's connections are told with the challenge's event
//! (RFC-014 §5.3) — as `push/event` where she may be pushed to, as `tools/hints` where not.

use mcpl_games::arcade::listen::{self, Listener};
use mcpl_games::arcade::{Arcade, ArcadeConfig};
use mcpl_protocol::digest::revision_of_value;
use mcpl_testkit::msg::{error_code, is_method};
use mcpl_testkit::ws::Peer;
use mcpl_transport::ServerOptions;
use serde_json::{Value, json};
use std::sync::Arc;

/// The capability paths of SPEC §6.2 / Appendix B.2, as the spec's text lists them.
const VOCABULARY: [&str; 17] = [
    "pushEvents",
    "tools",
    "modelInfo",
    "inferenceRequest",
    "inferenceRequest.streaming",
    "inferenceLifecycle",
    "contextHooks.beforeInference.observe",
    "contextHooks.beforeInference.inject.system",
    "contextHooks.beforeInference.inject.beforeUser",
    "contextHooks.beforeInference.inject.afterUser",
    "channels.register",
    "channels.lifecycle",
    "channels.publish",
    "channels.incoming",
    "channels.streaming",
    "channels.acknowledge",
    "channels.typing",
];

struct Fixture {
    _arcade: Arcade,
    listener: Listener,
}

impl Fixture {
    async fn start() -> Fixture {
        let arcade = Arcade::new(ArcadeConfig {
            players: vec!["alice".into(), "bob".into()],
            ..Default::default()
        })
        .expect("a valid arcade");
        let mut opts = ServerOptions {
            ws_ping_interval: None,
            ..Default::default()
        };
        for who in ["alice", "bob"] {
            opts.tokens.insert(who.to_owned(), who.to_owned());
        }
        let listener = listen::ws(&arcade, "127.0.0.1:0".parse().unwrap(), Arc::new(opts))
            .await
            .expect("bind");
        Fixture {
            _arcade: arcade,
            listener,
        }
    }

    async fn connect(&self, who: &str) -> Peer {
        Peer::connect(self.listener.url(), Some(who)).await
    }

    /// `who` through `initialize` (advertising `mcpl` as given) and `initialized`; returns
    /// the initialize result.
    async fn initialized(&self, who: &str, mcpl: Value) -> (Peer, Value) {
        let mut p = self.connect(who).await;
        let init = p
            .request(
                "initialize",
                json!({"protocolVersion": "2025-11-25",
                       "capabilities": {"experimental": {"mcpl": mcpl}},
                       "clientInfo": {"name": "another-host", "version": "0.1"}}),
            )
            .await;
        assert!(init.get("result").is_some(), "{init}");
        p.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        (p, init["result"].clone())
    }

    /// An MCPL host with `toolHints`, through the initial policy `grant`; returns the
    /// receipt (or the error answer).
    async fn granted(&self, who: &str, grant: Value) -> (Peer, Value) {
        let (mut p, _) = self
            .initialized(
                who,
                json!({"version": "0.5", "toolHints": true, "featureSets": true}),
            )
            .await;
        let receipt = p.request("featureSets/update", grant).await;
        (p, receipt)
    }
}

/// bob challenges alice to tic-tac-toe; returns the instance name of the challenge.
async fn bob_challenges_alice(f: &Fixture) -> (Peer, String) {
    let (mut bob, _) = f
        .granted(
            "bob",
            json!({"effectiveCapabilities": ["tools", "pushEvents"]}),
        )
        .await;
    let r = bob
        .request(
            "tools/call",
            json!({"name": "challenge", "arguments": {"opponent": "alice", "game": "tictactoe"}}),
        )
        .await;
    assert_ne!(r["result"]["isError"], json!(true), "{r}");
    let opened = r["result"]["_meta"]["mcpl/hints"]["toolsets"]
        .as_array()
        .and_then(|t| t.iter().find(|e| e["state"] == "open"))
        .expect("the challenge opened the game for bob")
        .clone();
    (bob, opened["instance"].as_str().unwrap().to_owned())
}

/// alice's connection `alice` accepts bob's challenge by opening the game (alice plays O);
/// returns bob and the instance.
async fn a_game(f: &Fixture, alice: &mut Peer) -> (Peer, String) {
    let (bob, instance) = bob_challenges_alice(f).await;
    let r = alice
        .request(
            "toolsets/open",
            json!({"toolset": "tictactoe", "instance": instance}),
        )
        .await;
    assert!(r.get("result").is_some(), "{r}");
    (bob, instance)
}

/// bob (X) plays `at`.
async fn bob_plays(bob: &mut Peer, instance: &str, at: &str) {
    let r = bob
        .request(
            "tools/call",
            json!({"name": "tictactoe_play", "arguments": {"move": at},
                   "_meta": {"mcpl/instance": instance}}),
        )
        .await;
    assert_ne!(r["result"]["isError"], json!(true), "{r}");
}

/// The message that tells alice's connection it is her turn (bob moved): a push whose
/// hints, or a `tools/hints` whose changes, make `tictactoe_play` visible.
async fn told_her_turn(alice: &mut Peer) -> Value {
    alice
        .next_where(|v| {
            let changes = if is_method(v, "push/event") {
                &v["params"]["hints"]["tools"]
            } else if is_method(v, "tools/hints") {
                &v["params"]["tools"]
            } else {
                return false;
            };
            changes
                .as_array()
                .into_iter()
                .flatten()
                .any(|t| t["name"] == "tictactoe_play" && t["visible"] == json!(true))
        })
        .await
}

/// The next message alice is told the challenge by: a push or `tools/hints`.
async fn told(alice: &mut Peer) -> Value {
    alice
        .next_where(|v| is_method(v, "push/event") || is_method(v, "tools/hints"))
        .await
}

#[actix::test]
async fn spec_17_4_mcpl_manifest_answers_the_manifest_object_itself() {
    let f = Fixture::start().await;
    let (mut p, init) = f
        .granted(
            "alice",
            json!({"effectiveCapabilities": ["tools", "pushEvents"]}),
        )
        .await;
    let _ = init;
    let (mut q, init) = f
        .initialized("bob", json!({"version": "0.5", "toolHints": true}))
        .await;
    let at_init = init["capabilities"]["experimental"]["mcpl"].clone();
    let fetched = q.request("mcpl/manifest", json!({})).await["result"].clone();
    // §17.4: the result *is* the experimental.mcpl object, the same shape as initialize's.
    assert_eq!(fetched, at_init);
    assert_eq!(fetched["version"], "0.5");
    assert!(
        fetched.get("manifest").is_none(),
        "not re-wrapped: {fetched}"
    );
    // §17.2: its revision is the digest of the rest.
    assert_eq!(
        fetched["revision"],
        json!(revision_of_value(&fetched).unwrap())
    );
    let other = p.request("mcpl/manifest", json!({})).await;
    assert_eq!(other["result"], fetched);
}

#[actix::test]
async fn spec_6_2_every_feature_set_has_a_description_and_uses_from_the_vocabulary() {
    let f = Fixture::start().await;
    let (_p, init) = f
        .initialized("alice", json!({"version": "0.5", "toolHints": true}))
        .await;
    let sets = init["capabilities"]["experimental"]["mcpl"]["featureSets"]
        .as_object()
        .expect("featureSets is an object keyed by name (§6.1)");
    assert!(!sets.is_empty());
    for (name, decl) in sets {
        assert!(
            decl["description"].is_string(),
            "{name}: B.2 requires a description"
        );
        let uses = decl["uses"].as_array().expect("uses is an array");
        assert!(!uses.is_empty(), "{name}");
        for u in uses {
            assert!(VOCABULARY.contains(&u.as_str().unwrap()), "{name}: {u}");
        }
    }
}

#[actix::test]
async fn spec_5_4_a_star_grants_every_depth_one_path() {
    let f = Fixture::start().await;
    let (mut alice, receipt) = f
        .granted("alice", json!({"effectiveCapabilities": ["*"]}))
        .await;
    // `*` grants `tools` and `pushEvents`, all the arcade's feature set uses: nothing
    // degraded, so no `mode` (§6.7: an absent field cannot be misread).
    assert_eq!(receipt["result"], json!({"accepted": true}), "{receipt}");
    let (_bob, instance) = bob_challenges_alice(&f).await;
    let push = told(&mut alice).await;
    assert_eq!(push["method"], "push/event", "{push}");
    assert_eq!(push["params"]["featureSet"], "default");
    assert_eq!(push["params"]["instance"], instance.as_str());
    // §16.1: every tag is namespace:value.
    for tag in push["params"]["tags"].as_array().into_iter().flatten() {
        let tag = tag.as_str().unwrap();
        assert!(
            tag.split_once(':')
                .is_some_and(|(ns, v)| !ns.is_empty() && !v.is_empty()),
            "{tag}"
        );
    }
}

#[actix::test]
async fn spec_5_4_a_star_never_reaches_a_deeper_path() {
    let f = Fixture::start().await;
    // `pushEvents.*` names depth-2 paths only: it grants nothing the arcade uses.
    let (mut alice, receipt) = f
        .granted(
            "alice",
            json!({"effectiveCapabilities": ["tools", "pushEvents.*"]}),
        )
        .await;
    assert_eq!(receipt["result"]["mode"], "degraded", "{receipt}");
    assert_eq!(
        receipt["result"]["missingCapabilities"],
        json!(["pushEvents"])
    );
    let _ = bob_challenges_alice(&f).await;
    assert_eq!(told(&mut alice).await["method"], "tools/hints");
}

#[actix::test]
async fn spec_5_4_a_path_granted_and_denied_is_malformed_and_fails_closed() {
    let f = Fixture::start().await;
    let (mut alice, refused) = f
        .granted(
            "alice",
            json!({"effectiveCapabilities": ["tools", "pushEvents"],
                   "deniedCapabilities": ["pushEvents"]}),
        )
        .await;
    assert_eq!(error_code(&refused), Some(-32602), "{refused}");
    assert_eq!(refused["error"]["data"]["capability"], "pushEvents");
    // The policy was rejected: the initial exchange has not completed, so nothing is
    // pushed (§5.3); bob's move reaches alice as tools/hints.
    let (mut bob, instance) = a_game(&f, &mut alice).await;
    bob_plays(&mut bob, &instance, "a1").await;
    assert_eq!(told_her_turn(&mut alice).await["method"], "tools/hints");
    // A well-formed policy then completes it, and the next move is pushed.
    let receipt = alice
        .request(
            "featureSets/update",
            json!({"effectiveCapabilities": ["tools", "pushEvents"]}),
        )
        .await;
    assert_eq!(receipt["result"], json!({"accepted": true}));
    let r = alice
        .request(
            "tools/call",
            json!({"name": "tictactoe_play", "arguments": {"move": "b2"},
                   "_meta": {"mcpl/instance": instance}}),
        )
        .await;
    assert_ne!(r["result"]["isError"], json!(true), "{r}");
    bob_plays(&mut bob, &instance, "c3").await;
    assert_eq!(told_her_turn(&mut alice).await["method"], "push/event");
}

#[actix::test]
async fn spec_6_7_a_notification_only_narrows_and_never_makes_ready() {
    let f = Fixture::start().await;
    let (mut alice, receipt) = f
        .granted(
            "alice",
            json!({"effectiveCapabilities": ["tools", "pushEvents"]}),
        )
        .await;
    assert_eq!(receipt["result"], json!({"accepted": true}));
    // A second connection of alice's that only ever sends the notification form: it
    // cannot establish a ready state, so nothing is pushed to it.
    let (mut notified, _) = f
        .initialized("alice", json!({"version": "0.5", "toolHints": true}))
        .await;
    notified
        .send(&json!({"jsonrpc": "2.0", "method": "featureSets/update",
                      "params": {"effectiveCapabilities": ["*"]}}))
        .await;
    let (mut bob, instance) = a_game(&f, &mut alice).await;
    bob_plays(&mut bob, &instance, "a1").await;
    assert_eq!(told_her_turn(&mut alice).await["method"], "push/event");
    assert_eq!(told_her_turn(&mut notified).await["method"], "tools/hints");

    // The ready connection narrowed by a notification: its `disabled` applies, its
    // widening does not — the only feature set that pushes is gone.
    alice
        .send(&json!({"jsonrpc": "2.0", "method": "featureSets/update",
                      "params": {"effectiveCapabilities": ["*"], "disabled": ["default"]}}))
        .await;
    let r = alice
        .request(
            "tools/call",
            json!({"name": "tictactoe_play", "arguments": {"move": "b2"},
                   "_meta": {"mcpl/instance": instance}}),
        )
        .await;
    assert_ne!(r["result"]["isError"], json!(true), "{r}");
    bob_plays(&mut bob, &instance, "c3").await;
    assert_eq!(told_her_turn(&mut alice).await["method"], "tools/hints");
}

#[actix::test]
async fn spec_5_3_enabled_is_an_allowlist_and_what_it_leaves_out_is_not_selected() {
    let f = Fixture::start().await;
    let (mut alice, receipt) = f
        .granted(
            "alice",
            json!({"effectiveCapabilities": ["tools", "pushEvents"], "enabled": []}),
        )
        .await;
    let unavailable = &receipt["result"]["unavailableFeatures"];
    assert_eq!(
        unavailable,
        &json!([{"featureSet": "default", "missingCapabilities": [], "effect": "disabled",
                 "reason": "not_selected"}]),
        "{receipt}"
    );
    let _ = bob_challenges_alice(&f).await;
    assert_eq!(told(&mut alice).await["method"], "tools/hints");
}

#[actix::test]
async fn spec_6_7_a_degraded_receipt_names_what_is_missing() {
    let f = Fixture::start().await;
    let (_alice, receipt) = f
        .granted("alice", json!({"effectiveCapabilities": ["tools"]}))
        .await;
    assert_eq!(
        receipt["result"],
        json!({"accepted": true, "mode": "degraded",
               "unavailableFeatures": [{"featureSet": "default", "missingCapabilities": ["pushEvents"],
                                        "effect": "disabled", "reason": "capability_denied"}],
               "missingCapabilities": ["pushEvents"]})
    );
}

#[actix::test]
async fn spec_5_3_absent_effective_capabilities_grants_nothing() {
    let f = Fixture::start().await;
    let (mut alice, receipt) = f.granted("alice", json!({})).await;
    assert_eq!(
        receipt["result"]["missingCapabilities"],
        json!(["pushEvents", "tools"])
    );
    let _ = bob_challenges_alice(&f).await;
    assert_eq!(told(&mut alice).await["method"], "tools/hints");
}

/// SPEC §3.2: a host the server does not understand as MCPL is served as MCP, never
/// refused; an MCPL object with members of unexpected types is read for what it says.
#[actix::test]
async fn spec_3_2_a_host_capability_of_an_unexpected_shape_is_served_not_refused() {
    let f = Fixture::start().await;
    for mcpl in [json!(true), json!("0.5"), json!([1, 2])] {
        let (mut p, init) = f.initialized("alice", mcpl.clone()).await;
        assert_eq!(init["protocolVersion"], "2025-11-25", "{mcpl}");
        // Served as a plain MCP host (RFC-014 §8): compat tools, no hint `_meta`.
        let list = p.request("tools/list", json!({})).await;
        let names: Vec<&str> = list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"toolset_open"), "{mcpl}: {names:?}");
        assert!(list["result"].get("_meta").is_none(), "{mcpl}");
    }
    // An object whose members have other types: an MCPL host, without toolHints.
    let (mut p, _) = f
        .initialized(
            "alice",
            json!({"version": 5, "toolHints": "yes", "pushEvents": {}}),
        )
        .await;
    let receipt = p
        .request(
            "featureSets/update",
            json!({"effectiveCapabilities": ["tools", "pushEvents"]}),
        )
        .await;
    assert_eq!(receipt["result"]["accepted"], true, "{receipt}");
    let list = p.request("tools/list", json!({})).await;
    assert!(
        list["result"].get("_meta").is_none(),
        "no toolHints: no mcpl/rev"
    );
}

/// JSON-RPC 2.0: a message is an object. A positional array is refused, and opens nothing.
#[actix::test]
async fn jsonrpc_a_positional_array_is_refused_and_opens_nothing() {
    let f = Fixture::start().await;
    let (mut alice, _) = f
        .granted(
            "alice",
            json!({"effectiveCapabilities": ["tools", "pushEvents"]}),
        )
        .await;
    alice
        .send_text(r#"["2.0", 3, "toolsets/open", {"toolset": "tictactoe"}]"#)
        .await;
    let refused = alice.recv().await;
    assert_eq!(
        (refused["id"].clone(), error_code(&refused)),
        (Value::Null, Some(-32600)),
        "{refused}"
    );
    // Params by position are refused too.
    let r = alice.request("toolsets/open", json!(["tictactoe"])).await;
    assert_eq!(error_code(&r), Some(-32602), "{r}");
    let list = alice.request("toolsets/list", json!({})).await;
    let open: Vec<&str> = list["result"]["open"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["toolset"].as_str().unwrap())
        .collect();
    assert_eq!(open, ["lobby"], "only the default-open lobby");
}
