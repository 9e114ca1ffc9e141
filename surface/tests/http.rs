//! `mcpl-surface serve --http`: Streamable HTTP, where each client presents the surface
//! host's own bearer token and is served as the principal the operator configured for it,
//! reaching the arcade with that principal's credentials. Two clients of one surface host
//! play each other through the lobby: the challenge's suggestion shown in a result, the
//! accept, the moves told as they happen, and the end told once.

use crate::support;

use serde_json::{Value, json};
use support::{
    HttpClient, arcade_of_alice_and_bob, since_previous_call, surface_of_alice_and_bob, text,
};

/// The arcade on Streamable HTTP with its own tokens for alice and bob, and a surface host
/// whose clients are alice and bob, each with the surface's token and the arcade's.
async fn setup(dir: &std::path::Path) -> (Vec<tokio::process::Child>, String) {
    let (arcade, arcade_url) = arcade_of_alice_and_bob().await;
    let (surface, url) = surface_of_alice_and_bob(dir, &arcade_url, Some(&dir.join("state"))).await;
    (vec![arcade, surface], url)
}

/// The arguments of the `toolsets--open` a suggestion in `text` proposes.
fn accept_args(text: &str) -> Value {
    let at = text
        .find("To accept, call toolsets--open ")
        .unwrap_or_else(|| panic!("no suggestion in {text}"));
    let rest = &text[at + "To accept, call toolsets--open ".len()..];
    let line = rest.lines().next().unwrap().trim_end_matches('.');
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// Plays one move in `instance`: the first cell of the fixed order that the result does not
/// refuse. The result's text.
async fn mark(c: &mut HttpClient, instance: &str) -> String {
    for cell in ["b2", "a1", "c3", "a3", "c1", "b1", "b3", "a2", "c2"] {
        let r = c
            .call(
                "toolsets--act",
                json!({"tool": "tictactoe_play", "instance": instance, "args": {"move": cell}}),
            )
            .await;
        if r["isError"] != true {
            return text(&r);
        }
    }
    panic!("no cell was accepted in {instance}");
}

#[tokio::test]
async fn two_clients_of_one_surface_host_play_each_other_through_the_lobby() {
    let dir = tempfile::tempdir().unwrap();
    let (_children, url) = setup(dir.path()).await;
    let mut alice = HttpClient::connect(&url, "alice-surface-secret").await;
    let mut bob = HttpClient::connect(&url, "bob-surface-secret").await;
    let list = alice.request("tools/list", json!({})).await;
    let bobs = bob.request("tools/list", json!({})).await;
    assert_eq!(list["result"], bobs["result"]);

    // Each is its own principal at the arcade: each sees the other online.
    let games = alice.call("toolsets--act", json!({"tool": "games"})).await;
    assert!(text(&games).contains("Players online: bob"), "{games}");

    let sent = alice
        .call(
            "toolsets--act",
            json!({"tool": "challenge", "args": {"opponent": "bob", "game": "tictactoe"}}),
        )
        .await;
    assert!(text(&sent).contains("You challenged bob"), "{sent}");

    // Bob is told as it happens, and the suggestion is in his next result.
    bob.logged("alice challenges you").await;
    let looked = bob.call("toolsets--look", json!({})).await;
    let news = text(&looked);
    let news = since_previous_call(&news);
    assert!(
        news.contains("alice challenges you to Tic-tac-toe"),
        "{news}"
    );
    let accept = accept_args(news);
    let instance = accept["instance"].as_str().unwrap().to_owned();
    let joined = bob.call("toolsets--open", accept.clone()).await;
    assert_ne!(joined["isError"], true, "{joined}");
    assert!(
        text(&joined).contains(&format!("[arcade/tictactoe:{instance}]")),
        "{joined}"
    );
    alice.logged("bob").await;

    // Alice is X and moves first; each waits to be told of the other's move.
    let mut players = [alice, bob];
    let mut last = String::new();
    for turn in 0..9 {
        let (me, them) = (turn % 2, (turn + 1) % 2);
        last = mark(&mut players[me], &instance).await;
        if last.contains("Game over:") {
            // The other is told the end once: as it happens, and in its next result.
            let told = players[them].logged("Game over").await;
            assert!(told.contains(&instance), "{told}");
            let next = players[them].call("toolsets--look", json!({})).await;
            assert_eq!(
                text(&next).matches("Game over").count(),
                1,
                "told once: {next}"
            );
            let again = players[them].call("toolsets--look", json!({})).await;
            assert!(!text(&again).contains("Game over"), "not again: {again}");
            break;
        }
        // The other is told as it happens: the board, and that it is its move.
        let told = players[them].logged("Your move").await;
        assert!(
            told.contains(&format!("[arcade/tictactoe:{instance}]")),
            "{told}"
        );
    }
    let [mut alice, _bob] = players;
    assert!(last.contains("Game over:"), "{last}");

    // A client names a configured server, never a URL.
    let far = alice
        .call(
            "toolsets--open",
            json!({"server": "http://127.0.0.1:1/mcp", "toolset": "go"}),
        )
        .await;
    assert_eq!(far["isError"], true, "{far}");
}

#[tokio::test]
async fn a_client_without_the_surface_hosts_token_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_children, url) = setup(dir.path()).await;
    for token in [Some("alice-arcade-secret"), Some("wrong"), None] {
        let opts = mcpl_transport::ClientOptions {
            token: token.map(str::to_owned),
            ..Default::default()
        };
        let mut conn = mcpl_transport::http::connect(&url, &opts).await.unwrap();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                          "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "x", "version": "0"}}});
        let _ = conn
            .outbound
            .send(mcpl_protocol::Message::from_value(init).unwrap())
            .await;
        // The session is refused with 401: the client's transport answers its own request
        // with the HTTP status.
        let read = mcpl_testkit::within(conn.inbound.recv()).await;
        let Some(mcpl_transport::Inbound::Message { message, .. }) = read else {
            panic!("{token:?}: {read:?}");
        };
        let answer: Value = serde_json::from_str(&message.encode()).unwrap();
        assert_eq!(
            answer["error"]["data"]["httpStatus"], 401,
            "{token:?}: {answer}"
        );
    }
}
