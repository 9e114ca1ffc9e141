//! The MCPL base (SPEC.md 0.5, RFC-002, RFC-003) at the host's edge, tried as another
//! implementation's server would: a raw WebSocket server writing exact JSON, shapes from the
//! spec's text (and from what Anarchid/mcpl-core 0.1 is known to send), against the real
//! Host. Each test is named after the section whose rule it proves.

use crate::support;

use mcpl_host::host::{HostHandle, ServerConfig, Shown};
use mcpl_host::link::{Connector, POLICY_RETRIES};
use mcpl_testkit::msg::{error_code, is_method};
use mcpl_testkit::within;
use mcpl_testkit::ws::{Listener, Peer};
use mcpl_transport::ClientOptions;
use serde_json::{Value, json};
use std::time::Duration;
use support::server::start_host;
use tokio::sync::mpsc::UnboundedReceiver;

const HOLD: Duration = Duration::from_millis(250);

/// A server's `initialize` result with this MCPL manifest (and MCP tools).
fn init_result(version: &str, manifest: Value) -> Value {
    json!({"protocolVersion": version,
           "capabilities": {"tools": {}, "experimental": {"mcpl": manifest}},
           "serverInfo": {"name": "another-server", "version": "0.1"}})
}

/// A conforming manifest: pushes under `news`.
fn news_manifest() -> Value {
    json!({"version": "0.5", "pushEvents": true,
           "featureSets": {"news": {"description": "Headlines", "uses": ["pushEvents"]}}})
}

fn echo_tool() -> Value {
    json!({"name": "echo", "description": "Says it back",
           "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}})
}

/// A host linked to a raw server, `tweak` applied to its configuration of that server.
async fn rig(tweak: impl FnOnce(&mut ServerConfig)) -> (HostHandle, Peer) {
    let listener = Listener::bind().await;
    let connector = Connector::url(listener.url(), ClientOptions::default());
    let host = start_host(connector, HOLD, tweak);
    let mut peer = listener.accept().await;
    support::refuse_the_probe(&mut peer).await;
    (host, peer)
}

/// Plays the server's side of the handshake up to the host's policy request, and returns
/// that request.
async fn up_to_policy(peer: &mut Peer, init: Value) -> Value {
    let req = peer.expect_request("initialize").await;
    peer.reply(&req, init).await;
    peer.expect_request("notifications/initialized").await;
    peer.expect_request("featureSets/update").await
}

/// Answers the policy with `receipt`, then the tool listing with `echo`.
async fn finish(peer: &mut Peer, policy: &Value, receipt: Value) {
    peer.reply(policy, receipt).await;
    let list = peer.expect_request("tools/list").await;
    peer.reply(&list, json!({"tools": [echo_tool()]})).await;
}

/// A push of `event` under `feature_set`; returns the host's answer.
async fn push(peer: &mut Peer, id: &str, feature_set: &str, event: &str, content: Value) -> Value {
    peer.send(
        &json!({"jsonrpc": "2.0", "id": id, "method": "push/event", "params": {
        "featureSet": feature_set, "eventId": event, "timestamp": "2026-12-01T12:00:00Z",
        "payload": {"content": content}}}),
    )
    .await;
    peer.next_where(|v| v["id"] == id && v.get("method").is_none())
        .await
}

fn text(s: &str) -> Value {
    json!([{"type": "text", "text": s}])
}

/// Waits until the host's link to the server is ready and its tool listed.
async fn ready(host: &HostHandle) {
    host.wait_for(|s| {
        s.server("arcade")
            .is_some_and(|a| a.ready && a.listed_tools == 1)
    })
    .await
    .expect("the host runs");
}

/// What the host shows the agent outside results, read until a message containing
/// `needle` is shown; returns every message read.
async fn shown_until(told: &mut UnboundedReceiver<Shown>, needle: &str) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        let s = told.recv().await.expect("the host runs");
        let done = s.text.contains(needle);
        seen.push(s.text);
        if done {
            return seen;
        }
    }
}

#[actix::test]
async fn spec_5_2_the_host_advertises_feature_sets_and_grants_the_intersection() {
    within(async {
        let (host, mut peer) = rig(|c| c.link.grant = vec!["*".into()]).await;
        let init = peer.expect_request("initialize").await;
        assert_eq!(
            init["params"]["capabilities"]["experimental"]["mcpl"]["featureSets"],
            json!(true)
        );
        peer.reply(&init, init_result("2025-11-25", news_manifest()))
            .await;
        peer.expect_request("notifications/initialized").await;
        let policy = peer.expect_request("featureSets/update").await;
        // §5.4: the host's `*` policy intersected with what the server advertises (MCP
        // tools, pushEvents), sent as concrete paths: never `*` itself.
        assert_eq!(
            policy["params"],
            json!({"effectiveCapabilities": ["pushEvents", "tools"]})
        );
        finish(&mut peer, &policy, json!({"accepted": true})).await;
        ready(&host).await;
        host.stop().await;
    })
    .await;
}

/// Anarchid/mcpl-core 0.1 sends `featureSets` as an array of `{name, …}` and no
/// `version`; SPEC §6.4 disables what an invalid declaration declares and nothing else.
#[actix::test]
async fn spec_6_4_an_array_feature_sets_disables_those_sets_and_nothing_else() {
    within(async {
        let (host, mut peer) = rig(|_| {}).await;
        let manifest = json!({"pushEvents": true,
            "featureSets": [{"name": "chat", "description": "Chat", "uses": ["pushEvents"]}]});
        let policy = up_to_policy(&mut peer, init_result("2025-11-25", manifest)).await;
        // The host names the set it reads as invalid, so the server need not push under it.
        assert_eq!(
            policy["params"],
            json!({"effectiveCapabilities": ["pushEvents", "tools"], "disabled": ["chat"]})
        );
        finish(&mut peer, &policy, json!({"accepted": true})).await;
        ready(&host).await;
        // The MCP tools work as ever.
        let call = tokio::spawn({
            let host = host.clone();
            async move { host.call("arcade--echo", json!({"text": "hi"})).await }
        });
        let req = peer.expect_request("tools/call").await;
        peer.reply(&req, json!({"content": text("hi")})).await;
        assert_eq!(call.await.unwrap().unwrap().joined_text(), "hi");
        // A push under the invalid set: declared but not enabled, -32001 (Appendix A).
        let answer = push(&mut peer, "p1", "chat", "e1", text("hello")).await;
        assert_eq!(error_code(&answer), Some(-32001), "{answer}");
        assert_eq!(answer["error"]["data"]["featureSet"], "chat");
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn spec_6_4_a_string_uses_disables_that_set_and_the_connection_goes_on() {
    within(async {
        let (host, mut peer) = rig(|_| {}).await;
        let manifest = json!({"version": "0.5", "pushEvents": true, "featureSets": {
            "chat": {"description": "Chat", "uses": "pushEvents"},
            "news": {"description": "Headlines", "uses": ["pushEvents"]}}});
        let policy = up_to_policy(&mut peer, init_result("2025-11-25", manifest)).await;
        assert_eq!(policy["params"]["disabled"], json!(["chat"]));
        finish(&mut peer, &policy, json!({"accepted": true})).await;
        ready(&host).await;
        assert_eq!(
            error_code(&push(&mut peer, "p1", "chat", "e1", text("x")).await),
            Some(-32001)
        );
        let ok = push(&mut peer, "p2", "news", "e2", text("Extra!")).await;
        assert_eq!(ok["result"]["accepted"], true, "{ok}");
        host.stop().await;
    })
    .await;
}

/// SPEC §5.3: until the initial policy exchange completes, inbound privileged methods are
/// rejected; -32002 names the capability (§6.6).
#[actix::test]
async fn spec_5_3_a_push_before_the_initial_receipt_is_refused() {
    within(async {
        let (host, mut peer) = rig(|_| {}).await;
        let policy = up_to_policy(&mut peer, init_result("2025-11-25", news_manifest())).await;
        let early = push(&mut peer, "p0", "news", "e0", text("too soon")).await;
        assert_eq!(error_code(&early), Some(-32002), "{early}");
        assert_eq!(early["error"]["data"]["capability"], "pushEvents");
        finish(&mut peer, &policy, json!({"accepted": true})).await;
        ready(&host).await;
        let ok = push(&mut peer, "p1", "news", "e1", text("now")).await;
        assert_eq!(ok["result"]["accepted"], true, "{ok}");
        host.stop().await;
    })
    .await;
}

/// SPEC §6.6 and Appendix A: -32003 for an undeclared feature set, -32002 with
/// `data.capability` for a denied capability or a `uses` that does not declare it.
#[actix::test]
async fn spec_6_6_refusals_carry_the_documented_codes() {
    within(async {
        let (host, mut peer) = rig(|_| {}).await;
        let manifest = json!({"version": "0.5", "pushEvents": true, "featureSets": {
            "news": {"description": "Headlines", "uses": ["pushEvents"]},
            "quiet": {"description": "Tools only", "uses": ["tools"]}}});
        let policy = up_to_policy(&mut peer, init_result("2025-11-25", manifest)).await;
        finish(&mut peer, &policy, json!({"accepted": true})).await;
        ready(&host).await;
        let undeclared = push(&mut peer, "p1", "weather", "e1", text("rain")).await;
        assert_eq!(error_code(&undeclared), Some(-32003), "{undeclared}");
        assert_eq!(undeclared["error"]["data"]["featureSet"], "weather");
        // `quiet` never declared pushEvents: a declaration mismatch (§6.4 rule 2).
        let mismatch = push(&mut peer, "p2", "quiet", "e2", text("psst")).await;
        assert_eq!(error_code(&mismatch), Some(-32002), "{mismatch}");
        assert_eq!(mismatch["error"]["data"]["capability"], "pushEvents");
        host.stop().await;
    })
    .await;

    within(async {
        // A host whose policy leaves pushEvents out.
        let (host, mut peer) = rig(|c| c.link.grant = vec!["tools".into()]).await;
        let policy = up_to_policy(&mut peer, init_result("2025-11-25", news_manifest())).await;
        assert_eq!(
            policy["params"],
            json!({"effectiveCapabilities": ["tools"], "deniedCapabilities": ["pushEvents"]})
        );
        finish(&mut peer, &policy, json!({"accepted": true})).await;
        ready(&host).await;
        let denied = push(&mut peer, "p1", "news", "e1", text("x")).await;
        assert_eq!(error_code(&denied), Some(-32002), "{denied}");
        assert_eq!(denied["error"]["data"]["capability"], "pushEvents");
        host.stop().await;
    })
    .await;
}

/// SPEC §9.4: events are de-duplicated by `eventId`: a re-send is answered, not shown again.
#[actix::test]
async fn spec_9_4_a_repeated_event_id_is_shown_once() {
    within(async {
        let (host, mut peer) = rig(|_| {}).await;
        let policy = up_to_policy(&mut peer, init_result("2025-11-25", news_manifest())).await;
        finish(&mut peer, &policy, json!({"accepted": true})).await;
        ready(&host).await;
        let mut told = host.subscribe();
        for id in ["p1", "p2"] {
            let a = push(&mut peer, id, "news", "same-event", text("Volcano erupts")).await;
            assert_eq!(a["result"]["accepted"], true, "{a}");
        }
        let b = push(&mut peer, "p3", "news", "other-event", text("Sun rises")).await;
        assert_eq!(b["result"]["accepted"], true);
        // The host handles one server's pushes in order: by the time the third is shown,
        // the repeat was handled too.
        let seen = shown_until(&mut told, "Sun rises").await;
        assert_eq!(
            seen.iter().filter(|t| t.contains("Volcano erupts")).count(),
            1,
            "{seen:?}"
        );
        host.stop().await;
    })
    .await;
}

/// SPEC §10.3, B.1: media by `uri`, and a resource by `uri`, are content.
#[actix::test]
async fn spec_10_3_media_and_resources_by_uri_are_accepted() {
    within(async {
        let (host, mut peer) = rig(|_| {}).await;
        let policy = up_to_policy(&mut peer, init_result("2025-11-25", news_manifest())).await;
        finish(&mut peer, &policy, json!({"accepted": true})).await;
        ready(&host).await;
        let mut told = host.subscribe();
        let content = json!([
            {"type": "text", "text": "Tonight's sky"},
            {"type": "image", "uri": "https://example.com/sky.png"},
            {"type": "resource", "uri": "memory://facts/12345"},
            {"type": "hologram", "frames": 3}
        ]);
        let a = push(&mut peer, "p1", "news", "e1", content).await;
        assert_eq!(a["result"]["accepted"], true, "{a}");
        let seen = shown_until(&mut told, "Tonight's sky").await.join("\n");
        // Server-authored strings are quoted (§7: attributed and bounded).
        assert!(
            seen.contains(r#"[image, "https://example.com/sky.png"]"#),
            "{seen}"
        );
        assert!(
            seen.contains(r#"[resource "memory://facts/12345"]"#),
            "{seen}"
        );
        assert!(seen.contains(r#"["hologram" content]"#), "{seen}");
        host.stop().await;
    })
    .await;
}

/// SPEC §16.1: a bare tag is not a tag; the push is admitted all the same (tags are
/// never part of admission, §16.6).
#[actix::test]
async fn spec_16_1_a_bare_tag_does_not_cost_the_push() {
    within(async {
        let (host, mut peer) = rig(|_| {}).await;
        let policy = up_to_policy(&mut peer, init_result("2025-11-25", news_manifest())).await;
        finish(&mut peer, &policy, json!({"accepted": true})).await;
        ready(&host).await;
        peer.send(
            &json!({"jsonrpc": "2.0", "id": "t", "method": "push/event", "params": {
            "featureSet": "news", "eventId": "e1", "timestamp": "2026-12-01T12:00:00Z",
            "tags": ["mention", "chat:mention"], "payload": {"content": text("hey")}}}),
        )
        .await;
        let a = peer.next_where(|v| v["id"] == "t").await;
        assert_eq!(a["result"]["accepted"], true, "{a}");
        host.stop().await;
    })
    .await;
}

/// A server answering `2024-11-05` is served (MCPL is an extension of any MCP version).
#[actix::test]
async fn mcp_a_2024_11_05_server_is_served() {
    within(async {
        let (host, mut peer) = rig(|_| {}).await;
        let policy = up_to_policy(&mut peer, init_result("2024-11-05", news_manifest())).await;
        finish(&mut peer, &policy, json!({"accepted": true})).await;
        ready(&host).await;
        assert!(
            host.tools()
                .await
                .unwrap()
                .iter()
                .any(|t| t.name == "arcade--echo")
        );
        host.stop().await;
    })
    .await;
}

/// RFC-002 §12: a legacy server that never answers the initial policy times out and is
/// served as plain MCP — its tools kept, MCPL off — rather than dropped. Issue #42: first
/// the host gives it [`POLICY_RETRIES`] more connections, closing each unanswered one (a
/// server too busy to answer in time has not refused MCPL).
#[actix::test]
async fn rfc002_12_a_server_that_never_answers_the_policy_is_served_as_plain_mcp() {
    within(async {
        let listener = Listener::bind().await;
        let connector = Connector::url(listener.url(), ClientOptions::default());
        let host = start_host(connector, HOLD, |c| {
            c.link.handshake_timeout = Duration::from_millis(300)
        });
        for n in 0..POLICY_RETRIES {
            let mut peer = listener.accept().await;
            if n == 0 {
                // Found legacy once, the host probes no more.
                support::refuse_the_probe(&mut peer).await;
            }
            let _unanswered =
                up_to_policy(&mut peer, init_result("2025-11-25", news_manifest())).await;
            peer.closed().await;
        }
        let mut peer = listener.accept().await;
        let _unanswered = up_to_policy(&mut peer, init_result("2025-11-25", news_manifest())).await;
        // After the timeout the host lists the tools and is ready.
        let list = peer.expect_request("tools/list").await;
        peer.reply(&list, json!({"tools": [echo_tool()]})).await;
        ready(&host).await;
        assert!(
            host.tools()
                .await
                .unwrap()
                .iter()
                .any(|t| t.name == "arcade--echo")
        );
        // MCPL is off: push/event is not a method of this connection.
        let a = push(&mut peer, "p1", "news", "e1", text("x")).await;
        assert_eq!(error_code(&a), Some(-32601), "{a}");
        host.stop().await;
    })
    .await;
}

/// SPEC §6.7 **\[project\]**: a policy request the transport lost (its Streamable HTTP POST
/// failed, which the transport answers `-32000` "connection closed") is not a refusal: the
/// host connects again and negotiates afresh, instead of serving an MCPL server as plain MCP
/// for a lost message.
#[actix::test]
async fn spec_6_7_a_policy_lost_in_transport_is_negotiated_again_on_a_new_connection() {
    within(async {
        let listener = Listener::bind().await;
        let connector = Connector::url(listener.url(), ClientOptions::default());
        let host = start_host(connector, HOLD, |_| {});
        let mut first = listener.accept().await;
        support::refuse_the_probe(&mut first).await;
        let policy = up_to_policy(&mut first, init_result("2025-11-25", news_manifest())).await;
        first
            .send(
                &json!({"jsonrpc": "2.0", "id": policy["id"], "error": {"code": -32000,
                "message": "Streamable HTTP: the POST failed: connection reset"}}),
            )
            .await;
        first.closed().await;

        let mut second = listener.accept().await;
        let policy = up_to_policy(&mut second, init_result("2025-11-25", news_manifest())).await;
        finish(&mut second, &policy, json!({"accepted": true})).await;
        ready(&host).await;
        let ok = push(&mut second, "p1", "news", "e1", text("MCPL is on")).await;
        assert_eq!(ok["result"]["accepted"], true, "{ok}");
        host.stop().await;
    })
    .await;
}

/// A receipt that refuses with `fallback: "mcp-only"` (SPEC §6.7) is the same: MCP goes on.
#[actix::test]
async fn spec_6_7_a_refusal_with_mcp_only_keeps_the_tools() {
    within(async {
        let (host, mut peer) = rig(|_| {}).await;
        let policy = up_to_policy(&mut peer, init_result("2025-11-25", news_manifest())).await;
        finish(
            &mut peer,
            &policy,
            json!({"accepted": false, "fallback": "mcp-only", "reason": "needs inject.system"}),
        )
        .await;
        ready(&host).await;
        assert!(
            host.tools()
                .await
                .unwrap()
                .iter()
                .any(|t| t.name == "arcade--echo")
        );
        host.stop().await;
    })
    .await;
}

/// SPEC §17.4: the fetched result is the manifest object itself. §17.5: a narrowing is
/// revoked host-first, then the server is told by a policy request.
#[actix::test]
async fn spec_17_5_a_bare_manifest_that_narrows_revokes_before_the_request() {
    within(async {
        let (host, mut peer) = rig(|_| {}).await;
        let policy = up_to_policy(&mut peer, init_result("2025-11-25", news_manifest())).await;
        finish(&mut peer, &policy, json!({"accepted": true})).await;
        ready(&host).await;
        peer.send(&json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
                          "params": {"revision": "sha256:next", "domains": ["capabilities"]}}))
            .await;
        let fetch = peer.expect_request("mcpl/manifest").await;
        // The new manifest no longer advertises pushEvents; bare, as §17.4 has it.
        peer.reply(
            &fetch,
            json!({"version": "0.5",
            "featureSets": {"news": {"description": "Headlines", "uses": ["pushEvents"]}}}),
        )
        .await;
        let narrowed = peer.expect_request("featureSets/update").await;
        assert_eq!(
            narrowed["params"],
            json!({"effectiveCapabilities": ["tools"]})
        );
        // Not answered yet, and already in force: a push is denied.
        let a = push(&mut peer, "p1", "news", "e1", text("x")).await;
        assert_eq!(error_code(&a), Some(-32002), "{a}");
        peer.reply(
            &narrowed,
            json!({"accepted": true, "mode": "degraded",
            "unavailableFeatures": [{"featureSet": "news", "missingCapabilities": ["pushEvents"],
                                     "effect": "disabled"}]}),
        )
        .await;
        host.stop().await;
    })
    .await;
}

/// SPEC §17.5, §6.7: an expansion takes effect only once its receipt came.
#[actix::test]
async fn spec_6_7_an_expansion_waits_for_its_receipt() {
    within(async {
        let (host, mut peer) = rig(|_| {}).await;
        let tools_only = json!({"version": "0.5",
            "featureSets": {"news": {"description": "Headlines", "uses": ["pushEvents"]}}});
        let policy = up_to_policy(&mut peer, init_result("2025-11-25", tools_only)).await;
        assert_eq!(policy["params"]["effectiveCapabilities"], json!(["tools"]));
        finish(&mut peer, &policy, json!({"accepted": true})).await;
        ready(&host).await;
        peer.send(&json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
                          "params": {"revision": "sha256:next", "domains": ["capabilities"]}}))
            .await;
        let fetch = peer.expect_request("mcpl/manifest").await;
        peer.reply(&fetch, news_manifest()).await;
        let widened = peer.expect_request("featureSets/update").await;
        assert_eq!(
            widened["params"],
            json!({"effectiveCapabilities": ["pushEvents", "tools"]})
        );
        let early = push(&mut peer, "p1", "news", "e1", text("x")).await;
        assert_eq!(
            error_code(&early),
            Some(-32002),
            "not before the receipt: {early}"
        );
        peer.reply(&widened, json!({"accepted": true})).await;
        // The receipt is read before the push that follows it on this ordered link.
        let now = push(&mut peer, "p2", "news", "e2", text("y")).await;
        assert_eq!(now["result"]["accepted"], true, "{now}");
        host.stop().await;
    })
    .await;
}

/// A legacy wrapped `{"manifest": {...}}` result (this project's own earlier form) is read
/// for what it wraps; anything else not a manifest object changes nothing.
#[actix::test]
async fn spec_17_4_a_wrapped_manifest_from_an_older_server_is_still_read() {
    within(async {
        let (host, mut peer) = rig(|_| {}).await;
        let policy = up_to_policy(&mut peer, init_result("2025-11-25", news_manifest())).await;
        finish(&mut peer, &policy, json!({"accepted": true})).await;
        ready(&host).await;
        peer.send(&json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
                          "params": {"revision": "sha256:next", "domains": ["capabilities"]}}))
            .await;
        let fetch = peer.expect_request("mcpl/manifest").await;
        peer.reply(&fetch, json!({"manifest": {"version": "0.5"}}))
            .await;
        let narrowed = peer.expect_request("featureSets/update").await;
        assert_eq!(
            narrowed["params"],
            json!({"effectiveCapabilities": ["tools"]})
        );
        assert!(!is_method(&narrowed, "mcpl/manifest"));
        host.stop().await;
    })
    .await;
}
