//! `mcpl-surface serve` over a real stdio pipe, driven with raw JSON-RPC lines in the MCP
//! spec's shapes, in front of the real `mcpl-arcade` binary: the handshake, a stable tool
//! list of the four meta-tools, a whole tic-tac-toe game through them, protocol errors, and
//! a push (another player's challenge) told once as `notifications/message` and once in the
//! next result.

use crate::support;

use serde_json::{Value, json};
use support::proxy::Proxy;
use support::{
    StdioClient, arcade, arcade_of_alice_and_bob, proxied_arcade_config, since_previous_call,
    stdio_arcade, stdio_arcade_config, text, write_config, ws_arcade_of_alice,
};

const META: [&str; 4] = [
    "toolsets--open",
    "toolsets--act",
    "toolsets--look",
    "toolsets--close",
];

fn names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_raw_client_plays_tictactoe_through_the_four_meta_tools() {
    let dir = tempfile::tempdir().unwrap();
    let config = stdio_arcade_config(dir.path(), "alice");
    let mut c = StdioClient::start(&config, &[]);

    let init = c.handshake().await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "mcpl-surface");
    assert_eq!(
        init["result"]["capabilities"]["tools"]["listChanged"], false,
        "{init}"
    );
    assert!(init["result"]["capabilities"]["logging"].is_object());

    let list = c.request("tools/list", json!({})).await;
    // Every arcade tool is in a toolset: only the meta-tools are listed.
    assert_eq!(names(&list), META, "{list}");
    for tool in list["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()));
    }

    let look = c.call("toolsets--look", json!({})).await;
    assert_ne!(look["isError"], true, "{look}");
    assert!(text(&look).contains("[arcade]"), "{look}");
    assert!(text(&look).contains("tictactoe"), "{look}");

    let opened = c
        .call(
            "toolsets--open",
            json!({"toolset": "tictactoe", "instance": "t1"}),
        )
        .await;
    assert_ne!(opened["isError"], true, "{opened}");
    assert!(
        text(&opened).contains("Opened [arcade/tictactoe:t1]"),
        "{opened}"
    );
    assert!(opened.get("_meta").is_none(), "no host keys: {opened}");

    let last = support::play_tictactoe(&mut c, "t1").await;
    // The perfect bot never loses.
    assert!(
        last.contains("O (bot) wins") || last.contains("Draw"),
        "{last}"
    );

    // The list is byte for byte what it was: the game's tools came and went (vector 12).
    let again = c.request("tools/list", json!({})).await;
    assert_eq!(again["result"].to_string(), list["result"].to_string());

    // Protocol errors are answered, and the session goes on.
    let unknown = c.request("resources/list", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    c.write_line("{not json").await;
    let parse = c.read().await;
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert_eq!(parse["id"], Value::Null);
    let bad = c.request("tools/call", json!({"arguments": {}})).await;
    assert_eq!(bad["error"]["code"], -32602, "no name: {bad}");
    let cursor = c.request("tools/list", json!({"cursor": "x"})).await;
    assert_eq!(cursor["error"]["code"], -32602, "{cursor}");
    let ping = c.request("ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));

    assert_eq!(
        c.close().await,
        Some(0),
        "stdin closed: the surface host ends"
    );
}

#[tokio::test]
async fn requests_before_initialize_are_refused_and_a_second_initialize_too() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        "surface.json",
        &json!({"mcpServers": {"arcade": {"command": arcade(), "args": ["serve", "--in-memory", "--stdio"]}}}),
    );
    let mut c = StdioClient::start(&config, &[]);
    let early = c.request("tools/list", json!({})).await;
    assert_eq!(early["error"]["code"], -32600, "{early}");
    assert!(
        early["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize first")
    );
    c.handshake().await;
    let twice = c.handshake().await;
    assert_eq!(twice["error"]["code"], -32600, "{twice}");
    assert_eq!(c.close().await, Some(0));
}

/// The arcade on Streamable HTTP with two players; a surface host for each, its client
/// ready: the handshake done and the tools listed (so both are online at the arcade).
async fn two_players(dir: &std::path::Path) -> (tokio::process::Child, StdioClient, StdioClient) {
    let (arcade, url) = arcade_of_alice_and_bob().await;
    let config = |who: &str| {
        write_config(
            dir,
            &format!("{who}.json"),
            &json!({"mcpServers": {"arcade": {
                "url": url,
                "headers": {"Authorization": format!("Bearer {who}-arcade-secret")}
            }}}),
        )
    };
    let alice = StdioClient::ready(&config("alice"), &[]).await;
    let bob = StdioClient::ready(&config("bob"), &[]).await;
    (arcade, alice, bob)
}

#[tokio::test]
async fn a_challenge_reaches_a_plain_client_as_a_notification_and_in_its_next_result_once() {
    let dir = tempfile::tempdir().unwrap();
    let (_arcade, mut alice, mut bob) = two_players(dir.path()).await;

    let sent = bob
        .call(
            "toolsets--act",
            json!({"tool": "challenge", "args": {"opponent": "alice", "game": "tictactoe"}}),
        )
        .await;
    assert_ne!(sent["isError"], true, "{sent}");
    assert!(text(&sent).contains("You challenged alice"), "{sent}");

    // The lobby's notice at connect comes first; then bob's challenge.
    let note = loop {
        let n = alice.notification("notifications/message").await;
        if n["params"]["data"]["text"]
            .as_str()
            .unwrap()
            .contains("bob")
        {
            break n;
        }
    };
    let data = &note["params"]["data"];
    assert_eq!(note["params"]["logger"], "mcpl-surface", "{note}");
    assert_eq!(data["server"], "arcade", "{note}");
    let event = data["text"].as_str().unwrap().to_owned();
    assert!(event.contains("bob"), "{note}");

    let next = alice.call("toolsets--look", json!({})).await;
    let t = text(&next);
    let news = since_previous_call(&t);
    let first = event.lines().next().unwrap();
    assert!(news.contains(first), "the event in words: {news}");
    assert!(
        news.contains("bob challenges you to Tic-tac-toe"),
        "the suggestion: {news}"
    );
    let after = alice.call("toolsets--look", json!({})).await;
    assert!(
        !text(&after).contains("Since your previous call:"),
        "told once: {after}"
    );
    assert_eq!(alice.close().await, Some(0));
    assert_eq!(bob.close().await, Some(0));
}

#[tokio::test]
async fn an_open_game_whose_announcement_left_the_window_is_restated_in_a_result() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        "surface.json",
        &json!({"mcpServers": {"arcade": stdio_arcade("alice")},
                "surface": {"windowMessages": 6}}),
    );
    let mut c = StdioClient::ready(&config, &[]).await;
    let opened = c
        .call(
            "toolsets--open",
            json!({"toolset": "tictactoe", "instance": "t1"}),
        )
        .await;
    assert!(text(&opened).contains("Usable: tictactoe_play in [arcade/tictactoe:t1]"));
    // Calls that say nothing of the game push its announcement out of the window; MCP has
    // no compaction to report, so the window stands for it (§8.3).
    let reminder_of_t1 = |t: &str| {
        t.split_once("Reminder:")
            .is_some_and(|(_, r)| r.contains("[arcade/tictactoe:t1]"))
    };
    let mut reminded = None;
    for call in 0..20 {
        let r = c.call("toolsets--act", json!({"tool": "games"})).await;
        if reminder_of_t1(&text(&r)) {
            reminded = Some((call, text(&r)));
            break;
        }
    }
    let (call, reminder) = reminded.expect("a reminder of t1 within 20 calls");
    assert!(
        call >= 3,
        "not while the announcement is in view: call {call}"
    );
    let reminder = reminder.split_once("Reminder:").unwrap().1;
    assert!(reminder.contains("tictactoe_play"), "{reminder}");
    let next = c.call("toolsets--act", json!({"tool": "games"})).await;
    assert!(!reminder_of_t1(&text(&next)), "once: {next}");
    assert_eq!(c.close().await, Some(0));
}

#[tokio::test]
async fn a_log_level_above_notice_stops_the_log_messages_but_results_still_tell() {
    let dir = tempfile::tempdir().unwrap();
    let (_arcade, mut alice, mut bob) = two_players(dir.path()).await;
    let set = alice
        .request("logging/setLevel", json!({"level": "error"}))
        .await;
    assert_eq!(set["result"], json!({}), "{set}");
    let bad = alice
        .request("logging/setLevel", json!({"level": "loud"}))
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    alice.notifications.clear();

    bob.call(
        "toolsets--act",
        json!({"tool": "challenge", "args": {"opponent": "alice", "game": "tictactoe"}}),
    )
    .await;
    // Polled until the challenge is in a result: what was logged (nothing) came before it.
    let mut told = false;
    for _ in 0..50 {
        let r = alice.call("toolsets--act", json!({"tool": "games"})).await;
        if text(&r).contains("bob challenges you") {
            told = true;
            break;
        }
    }
    assert!(told, "the challenge reaches a result");
    assert!(
        alice
            .notifications
            .iter()
            .all(|n| n["method"] != "notifications/message"),
        "{:?}",
        alice.notifications
    );
}

#[tokio::test]
async fn a_cancelled_call_is_never_answered() {
    // The arcade's answers pass a proxy that holds them: the call cannot end before its
    // cancellation is read, however the threads are scheduled.
    let dir = tempfile::tempdir().unwrap();
    let (_arcade, addr) = ws_arcade_of_alice().await;
    let proxy = Proxy::start(addr).await.unwrap();
    let mut c = StdioClient::ready(&proxied_arcade_config(dir.path(), &proxy), &[]).await;
    proxy.hold();
    let call = json!({"jsonrpc": "2.0", "id": 100, "method": "tools/call",
                      "params": {"name": "toolsets--open",
                                 "arguments": {"toolset": "tictactoe", "instance": "t1"}}});
    c.send(&call).await;
    c.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 100, "reason": "changed my mind"}}),
    )
    .await;
    // Answered in order after the cancellation: the surface host has read it.
    let ping = c.request("ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
    proxy.release();
    // The arcade answered 100 first, on the same connection: had the surface host
    // answered it, `call` would have read that answer first, and failed on it.
    let t2 = c
        .call(
            "toolsets--open",
            json!({"toolset": "tictactoe", "instance": "t2"}),
        )
        .await;
    assert!(text(&t2).contains("Opened [arcade/tictactoe:t2]"), "{t2}");
    // The cancelled call ran on at the arcade: the game it opened is there.
    let look = c.call("toolsets--look", json!({})).await;
    assert!(text(&look).contains("[arcade/tictactoe:t1]"), "{look}");
    let rest = c.close_and_read_rest().await;
    assert!(rest.iter().all(|m| m["id"] != 100), "{rest:?}");
}

#[tokio::test]
async fn issue38_05_a_request_id_still_in_flight_is_refused_and_answered_once() {
    // The arcade's answers are held: call 100 is in flight when its id comes again.
    let dir = tempfile::tempdir().unwrap();
    let (_arcade, addr) = ws_arcade_of_alice().await;
    let proxy = Proxy::start(addr).await.unwrap();
    let mut c = StdioClient::ready(&proxied_arcade_config(dir.path(), &proxy), &[]).await;
    proxy.hold();
    let open = |instance: &str| {
        json!({"jsonrpc": "2.0", "id": 100, "method": "tools/call",
               "params": {"name": "toolsets--open",
                          "arguments": {"toolset": "tictactoe", "instance": instance}}})
    };
    c.send(&open("t1")).await;
    c.send(&open("t2")).await;
    // The second is refused at once, while the first is held, as the server SDK refuses it.
    let refused = c.response(100).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(
        refused["error"]["message"], "request id 100 is in use by a request still running",
        "{refused}"
    );
    proxy.release();
    let answered = c.response(100).await;
    assert!(
        text(&answered["result"]).contains("Opened [arcade/tictactoe:t1]"),
        "{answered}"
    );
    // Once answered, the id is free again; the refused request never ran.
    let again = c.call("toolsets--look", json!({})).await;
    assert!(text(&again).contains("[arcade/tictactoe:t1]"), "{again}");
    assert!(!text(&again).contains("tictactoe:t2"), "{again}");
    let rest = c.close_and_read_rest().await;
    assert!(rest.iter().all(|m| m["id"] != 100), "{rest:?}");
}

#[tokio::test]
async fn issue36_17_what_is_shown_before_initialized_is_logged_once_the_client_is_ready() {
    let dir = tempfile::tempdir().unwrap();
    let config = stdio_arcade_config(dir.path(), "alice");
    let mut c = StdioClient::start(&config, &[]);
    let init = c
        .request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw-test-client", "version": "0"}}),
        )
        .await;
    assert!(
        init["result"]["capabilities"]["logging"].is_object(),
        "{init}"
    );
    // The list waits for the arcade to settle, so the lobby's opening is shown before it
    // is answered — all before this client said it was ready, as a fast backing server
    // or a slow client makes it.
    let list = c.request("tools/list", json!({})).await;
    assert_eq!(names(&list), META, "{list}");
    assert!(
        c.notifications
            .iter()
            .all(|n| n["method"] != "notifications/message"),
        "nothing logged before notifications/initialized: {:?}",
        c.notifications
    );
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    // Read in order after `initialized`: what was held went out before this answer.
    let ping = c.request("ping", json!({})).await;
    assert_eq!(ping["result"], json!({}), "{ping}");
    let logged: Vec<&Value> = c
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/message")
        .collect();
    assert!(
        logged
            .iter()
            .any(|n| n["params"]["data"]["server"] == "arcade"
                && n["params"]["data"]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("Lobby"))),
        "the lobby's opening is logged: {:?}",
        c.notifications
    );
    // Once: later calls log nothing new of it.
    c.notifications.clear();
    c.call("toolsets--look", json!({})).await;
    assert!(
        c.notifications
            .iter()
            .all(|n| n["method"] != "notifications/message"),
        "{:?}",
        c.notifications
    );
    assert_eq!(c.close().await, Some(0));
}

#[tokio::test]
async fn issue36_14_a_session_s_first_look_announces_the_lobby_once() {
    let dir = tempfile::tempdir().unwrap();
    let config = stdio_arcade_config(dir.path(), "alice");
    // Ready: the tool list waits for the arcade to settle, so its connect notice (the
    // lobby opened, its tools usable) is shown before the first call.
    let mut c = StdioClient::ready(&config, &[]).await;
    let look = c.call("toolsets--look", json!({})).await;
    assert_ne!(look["isError"], true, "{look}");
    let t = text(&look);
    // The look lists the lobby and its tools; the connect notice said only that (opened,
    // usable), so it is not appended again.
    assert_eq!(t.matches("[arcade/lobby] \"Lobby\"").count(), 1, "{t}");
    assert_eq!(t.matches("games in [arcade/lobby]").count(), 1, "{t}");
    assert!(!t.contains("Opened [arcade/lobby]"), "{t}");
    // Told once, not lost: a first open's result still carries it.
    let mut d = StdioClient::ready(&config, &[]).await;
    let opened = d
        .call(
            "toolsets--open",
            json!({"server": "arcade", "toolset": "tictactoe"}),
        )
        .await;
    let t = text(&opened);
    assert_eq!(t.matches("Opened [arcade/lobby]").count(), 1, "{t}");
    assert_eq!(c.close().await, Some(0));
    assert_eq!(d.close().await, Some(0));
}
