//! A backing server behind the surface host drops, or restarts: the client is told once
//! (as `notifications/message` and in its next result) and carries on. A dropped
//! connection comes back with the game still open at the arcade, adopted from its own
//! statement (vector 9, through the surface host), and the game goes on to its end; a
//! restarted arcade has forgotten the game, and the host tells it closed, once.
//!
//! The arcade is reached over WebSocket through a TCP proxy in the test, which cuts the
//! connection (a drop) or is pointed at a new arcade (a restart).

use crate::support;

use serde_json::json;
use support::proxy::Proxy;
use support::{StdioClient, proxied_arcade_config, since_previous_call, text, ws_arcade_of_alice};

/// A surface host over stdio whose one server is the arcade through `proxy`; its client,
/// with a tic-tac-toe game `t1` open and one move played.
async fn client_with_a_game(dir: &std::path::Path, proxy: &Proxy) -> StdioClient {
    let config = proxied_arcade_config(dir, proxy);
    let mut c = StdioClient::ready(&config, &[]).await;
    let opened = c
        .call(
            "toolsets--open",
            json!({"toolset": "tictactoe", "instance": "t1"}),
        )
        .await;
    assert!(
        text(&opened).contains("Opened [arcade/tictactoe:t1]"),
        "{opened}"
    );
    let moved = c
        .call(
            "toolsets--act",
            json!({"tool": "tictactoe_play", "instance": "t1", "args": {"move": "b2"}}),
        )
        .await;
    assert!(text(&moved).contains("You played b2."), "{moved}");
    c
}

/// Waits for a `notifications/message` whose text contains `needle`; its text.
async fn logged(c: &mut StdioClient, needle: &str) -> String {
    loop {
        let n = c.notification("notifications/message").await;
        let t = n["params"]["data"]["text"].as_str().unwrap().to_owned();
        if t.contains(needle) {
            return t;
        }
    }
}

#[tokio::test]
async fn a_dropped_connection_is_told_once_and_the_game_is_adopted_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (_arcade, addr) = ws_arcade_of_alice().await;
    let proxy = Proxy::start(addr).await.unwrap();
    let mut c = client_with_a_game(dir.path(), &proxy).await;

    proxy.cut_all();
    // Back, with the game the arcade kept: adopted from its statement, not opened again.
    let back = logged(&mut c, "[arcade/tictactoe:t1]").await;
    assert!(
        back.contains("connected again") || back.contains("was lost and is back"),
        "{back}"
    );
    // The next result tells the loss once, and the return with what was adopted.
    let look = c.call("toolsets--look", json!({})).await;
    let t = text(&look);
    let news = since_previous_call(&t);
    assert_eq!(news.matches("was lost").count(), 1, "{news}");
    assert!(news.contains("[arcade/tictactoe:t1]"), "{news}");
    // The game goes on to its end.
    let last = support::play_tictactoe(&mut c, "t1").await;
    assert!(
        last.contains("O (bot) wins") || last.contains("Draw"),
        "{last}"
    );
    let after = c.call("toolsets--look", json!({})).await;
    assert!(!text(&after).contains("was lost"), "told once: {after}");
    assert_eq!(c.close().await, Some(0));
}

#[tokio::test]
async fn a_restarted_server_is_told_once_and_the_game_it_forgot_is_told_closed() {
    let dir = tempfile::tempdir().unwrap();
    let (mut first, addr) = ws_arcade_of_alice().await;
    let proxy = Proxy::start(addr).await.unwrap();
    let mut c = client_with_a_game(dir.path(), &proxy).await;

    first.kill().await.unwrap();
    let lost = logged(&mut c, "was lost").await;
    assert!(lost.contains("the connection to arcade was lost"), "{lost}");
    let (_second, addr) = ws_arcade_of_alice().await;
    proxy.set_upstream(addr);
    let back = logged(&mut c, "connected again").await;
    assert!(
        !back.contains("[arcade/tictactoe:t1]"),
        "the new arcade has no t1: {back}"
    );

    let look = c.call("toolsets--look", json!({})).await;
    let t = text(&look);
    let news = since_previous_call(&t);
    assert_eq!(news.matches("was lost").count(), 1, "{news}");
    assert_eq!(news.matches("connected again").count(), 1, "{news}");
    assert_eq!(
        news.matches("Closed [arcade/tictactoe:t1]").count(),
        1,
        "the forgotten game told closed once: {news}"
    );
    let again = c.call("toolsets--look", json!({})).await;
    assert!(
        !text(&again).contains("connected again"),
        "told once: {again}"
    );
    // The game is gone with the old arcade: a move is refused, and a new game can be opened.
    let moved = c
        .call(
            "toolsets--act",
            json!({"tool": "tictactoe_play", "instance": "t1", "args": {"move": "a1"}}),
        )
        .await;
    assert_eq!(moved["isError"], true, "{moved}");
    let opened = c
        .call(
            "toolsets--open",
            json!({"toolset": "tictactoe", "instance": "t2"}),
        )
        .await;
    assert!(
        text(&opened).contains("Opened [arcade/tictactoe:t2]"),
        "{opened}"
    );
    assert_eq!(c.close().await, Some(0));
}
