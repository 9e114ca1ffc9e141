//! Issue #36, items 10 and 12, from outside: raw JSON-RPC on a real socket against the
//! SDK's server. Each test is named after the item it holds.

use mcpl_tests::server_support::*;
use serde_json::json;

/// Item 10 (§4.5 **\[project\]**, `server-core/src/session/inbound.rs`): an
/// `mcpl/instance` that is not a string is refused -32602, not taken for an absent one and
/// run in the only open instance.
#[actix::test]
async fn issue36_10_a_non_string_mcpl_instance_is_refused_32602_not_routed_to_the_only_instance() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    let opened = alice
        .exchange(open(1, "nim", Some("t9"), Some(json!({"pile": 1}))))
        .await;
    assert!(opened.get("result").is_some(), "{opened:#}");
    for (i, bad) in [json!(9), json!(["t9"]), json!({}), json!(true)]
        .into_iter()
        .enumerate()
    {
        let id = 10 + i as i64;
        let got = alice
            .exchange(request(
                json!(id),
                "tools/call",
                json!({"name": "take", "arguments": {"count": 1}, "_meta": {"mcpl/instance": bad}}),
            ))
            .await;
        assert_eq!(got["id"], id, "{got:#}");
        assert_eq!(got["error"]["code"], -32602, "{bad}: {got:#}");
    }
    // Nothing was taken: the one stone is still there to win with.
    let took = alice
        .exchange(call_in(20, "take", json!({"count": 1}), "t9"))
        .await;
    assert_eq!(
        took["result"]["content"][0]["text"], "You took the last stone and won.",
        "{took:#}"
    );
}

/// Item 13 (§8): an MCPL host without `toolHints` is pushed an invitation but no
/// suggestion; the event's text names the compat tool it has and the arguments to call it
/// with, and calling it so joins the game.
#[actix::test]
async fn issue36_13_a_challenge_to_a_host_without_tool_hints_names_its_compat_tool() {
    let h = arcade_server().await;
    let mut bob = h.connect("bob").await;
    bob.handshake(false, Some(&["tools", "pushEvents"])).await;
    let mut alice = h.hinted("alice").await;
    alice
        .exchange(open(
            1,
            "nim",
            Some("g1"),
            Some(json!({"pile": 5, "opponent": "bob"})),
        ))
        .await;
    let pushed = bob.recv().await;
    assert_eq!(pushed["method"], "push/event", "{pushed:#}");
    let said = pushed["params"]["payload"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {pushed:#}"))
        .to_owned();
    assert!(!said.contains("open nim:"), "{said}");
    let args = said
        .split_once("(call toolset_open ")
        .and_then(|(_, rest)| rest.strip_suffix(" to join)"))
        .unwrap_or_else(|| panic!("names no compat tool: {said}"));
    let args: serde_json::Value = serde_json::from_str(args).expect("JSON arguments");
    assert_eq!(args, json!({"toolset": "nim", "instance": "g1"}));
    bob.accept_push(1).await;
    let joined = bob.exchange(call(2, "toolset_open", args)).await;
    let text = joined["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("Opened nim:g1 (Nim vs alice)"),
        "{joined:#}"
    );
}
