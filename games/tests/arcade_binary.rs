//! The `mcpl-arcade` binary, spawned for real: its flags, the tokens file, the refusal to
//! listen on the network without tokens unless `--allow-anonymous`, several listeners
//! sharing one arcade, stdio as one principal, and `render`. Each listener's address is
//! read from the `listening on` line the binary prints; nothing sleeps.

use crate::support;

use mcpl_testkit::within;
use mcpl_transport::{ClientOptions, TransportError, http, ws};
use serde_json::json;
use std::process::Stdio;
use support::{BIN, Client, serve, text_of};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdout, Command};

/// Runs the binary to completion; its exit code and stderr.
async fn run(args: &[&str], stdin: &[u8]) -> (Option<i32>, String, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).await.unwrap();
    drop(input);
    let out = within(child.wait_with_output()).await.unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn token(t: &str) -> ClientOptions {
    ClientOptions {
        token: Some(t.to_owned()),
        ..Default::default()
    }
}

#[actix::test]
async fn the_network_needs_a_token_unless_anonymous_is_allowed() {
    let (code, _, err) = run(&["serve", "--in-memory", "--ws", "127.0.0.1:0"], b"").await;
    assert_eq!(code, Some(2));
    assert!(err.contains("--allow-anonymous"), "{err}");
    let (code, _, err) = run(&["serve", "--in-memory", "--http", "127.0.0.1:0"], b"").await;
    assert_eq!(code, Some(2), "{err}");
    let (code, _, err) = run(&["serve", "--in-memory"], b"").await;
    assert_eq!(code, Some(2));
    assert!(err.contains("nothing to serve"), "{err}");
    let (code, _, err) = run(
        &[
            "serve",
            "--in-memory",
            "--ws",
            "127.0.0.1:0",
            "--principal",
            "x",
        ],
        b"",
    )
    .await;
    assert_eq!(code, Some(2));
    assert!(err.contains("--stdio"), "{err}");

    // With --allow-anonymous, a connection without a token is its own principal.
    let (_child, urls) = serve(&["--ws", "127.0.0.1:0", "--allow-anonymous"], 1).await;
    assert!(urls[0].starts_with("ws://127.0.0.1:"), "{urls:?}");
    let mut a = Client::from_connection(
        ws::connect(&urls[0], &ClientOptions::default())
            .await
            .unwrap(),
    );
    a.handshake(true, &["tools", "pushEvents"]).await;
    a.list().await;
    let opened = a.open("tictactoe", Some("t"), json!({})).await;
    assert_eq!(
        opened["result"]["title"], "Tic-tac-toe vs bot",
        "{opened:#}"
    );
    // Another anonymous connection shares nothing with the first (§4.6).
    let mut b = Client::from_connection(
        ws::connect(&urls[0], &ClientOptions::default())
            .await
            .unwrap(),
    );
    b.handshake(true, &["tools", "pushEvents"]).await;
    assert_eq!(
        b.list().await["open"],
        json!([{"toolset": "lobby", "title": "Lobby"}])
    );
    let r = b
        .call(
            "challenge",
            json!({"opponent": "anon-1", "game": "go"}),
            None,
        )
        .await;
    assert_eq!(r["isError"], true);
}

#[actix::test]
async fn a_tokens_file_and_two_listeners_serve_one_arcade() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens");
    std::fs::write(&file, "# the players\nalice = sa\n\nbob=sb\n").unwrap();
    let file = file.to_str().unwrap();
    let (_child, urls) = serve(
        &[
            "--ws",
            "127.0.0.1:0",
            "--http",
            "127.0.0.1:0",
            "--tokens-file",
            file,
            "--token",
            "carol=sc",
            "--bot-playouts",
            "16",
            "--seed",
            "3",
        ],
        2,
    )
    .await;
    assert!(urls[0].starts_with("ws://"), "{urls:?}");
    assert!(
        urls[1].starts_with("http://") && urls[1].ends_with("/mcp"),
        "{urls:?}"
    );

    // Unknown or missing tokens are refused at the door.
    let e = ws::connect(&urls[0], &token("nope")).await.unwrap_err();
    assert!(matches!(e, TransportError::Unauthorized), "{e:?}");
    let e = ws::connect(&urls[0], &ClientOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(e, TransportError::Unauthorized), "{e:?}");

    // alice on WebSocket, bob on Streamable HTTP (as a plain MCP host): one arcade.
    let mut alice = Client::from_connection(ws::connect(&urls[0], &token("sa")).await.unwrap());
    alice.handshake(true, &["tools", "pushEvents"]).await;
    alice.list().await;
    let mut bob = Client::from_connection(http::connect(&urls[1], &token("sb")).await.unwrap());
    let init = bob.handshake_plain().await;
    assert_eq!(init["serverInfo"]["name"], "mcpl-arcade");
    let games = bob.call("games", json!({}), None).await;
    assert_eq!(
        games["structuredContent"]["online"],
        json!(["alice"]),
        "{games:#}"
    );
    let games = alice.call("games", json!({}), None).await;
    assert_eq!(
        games["structuredContent"]["online"],
        json!(["bob"]),
        "{games:#}"
    );
    // carol, from --token, may be challenged although she never connected.
    let r = alice
        .call(
            "challenge",
            json!({"opponent": "carol", "game": "tictactoe"}),
            None,
        )
        .await;
    assert_ne!(r["isError"], true, "{r:#}");

    // The bot plays Go with the configured budget.
    alice.open("go", Some("g"), json!({})).await;
    let r = alice
        .call("go_play", json!({"move": "E5"}), Some("g"))
        .await;
    assert!(text_of(&r).contains("bot (White) "), "{r:#}");
}

#[actix::test]
async fn bad_tokens_are_refused_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens");
    std::fs::write(&file, "alice=sa\nbob\n").unwrap();
    let (code, _, err) = run(
        &[
            "serve",
            "--in-memory",
            "--ws",
            "127.0.0.1:0",
            "--tokens-file",
            file.to_str().unwrap(),
        ],
        b"",
    )
    .await;
    assert_eq!(code, Some(2));
    assert!(err.contains("line 2: expected NAME=SECRET"), "{err}");
    let (code, _, err) = run(
        &[
            "serve",
            "--in-memory",
            "--ws",
            "127.0.0.1:0",
            "--token",
            "alice=x",
            "--token",
            "bob=x",
        ],
        b"",
    )
    .await;
    assert_eq!(code, Some(2));
    assert!(err.contains("already the token of \"alice\""), "{err}");
    let (code, _, err) = run(
        &[
            "serve",
            "--in-memory",
            "--ws",
            "127.0.0.1:0",
            "--token",
            "bot=x",
        ],
        b"",
    )
    .await;
    assert_eq!(code, Some(2));
    assert!(err.contains("not a valid player name"), "{err}");
}

async fn read_json(lines: &mut tokio::io::Lines<BufReader<ChildStdout>>) -> serde_json::Value {
    let line = within(lines.next_line()).await.unwrap().expect("a line");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

#[actix::test]
async fn stdio_serves_one_principal_until_stdin_closes() {
    let mut child = Command::new(BIN)
        .args(["serve", "--in-memory", "--stdio", "--principal", "carol"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut err = BufReader::new(child.stderr.take().unwrap()).lines();
    // Where games are kept is said first (issue #43), then who is served.
    let said = within(err.next_line()).await.unwrap().unwrap();
    assert!(said.starts_with("mcpl-arcade: games are kept"), "{said}");
    let said = within(err.next_line()).await.unwrap().unwrap();
    assert_eq!(said, "serving stdio as carol");
    let send = |v: serde_json::Value| format!("{v}\n");
    stdin
        .write_all(
            send(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let init = read_json(&mut lines).await;
    assert_eq!(
        init["result"]["serverInfo"]["name"], "mcpl-arcade",
        "{init:#}"
    );
    stdin
        .write_all(
            send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).as_bytes(),
        )
        .await
        .unwrap();
    stdin
        .write_all(
            send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "games", "arguments": {}}}))
            .as_bytes(),
        )
        .await
        .unwrap();
    let games = read_json(&mut lines).await;
    assert_eq!(games["id"], 2, "{games:#}");
    assert!(
        text_of(&games["result"]).contains("Players online: nobody else."),
        "{games:#}"
    );
    drop(stdin);
    let status = within(child.wait()).await.unwrap();
    assert!(status.success(), "{status:?}");
}

#[actix::test]
async fn render_writes_svg_from_moves_or_a_board() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("board.svg");
    let (code, _, err) = run(
        &[
            "render",
            "--moves",
            "Moves: E5 C3 G7",
            "--out",
            out.to_str().unwrap(),
        ],
        b"",
    )
    .await;
    assert_eq!(code, Some(0), "{err}");
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(svg.contains("White to move"), "{svg}");

    let game =
        mcpl_games::arcade::render::game_from_moves(mcpl_games::go::BoardSize::Nine, 7.5, "E5 C3")
            .unwrap();
    let board = mcpl_games::go::render_ascii(&game);
    let (code, svg, err) = run(&["render", "--board", "-"], board.as_bytes()).await;
    assert_eq!(code, Some(0), "{err}");
    assert!(svg.starts_with("<svg"), "{svg}");

    let (code, _, err) = run(&["render", "--moves", "E5 E5"], b"").await;
    assert_eq!(code, Some(2));
    assert!(err.contains("move 2 (E5)"), "{err}");
    let (code, _, _) = run(&["render"], b"").await;
    assert_eq!(code, Some(2), "clap refuses a render without a position");
}

#[actix::test]
async fn a_bare_port_listens_on_loopback_and_a_host_name_is_refused() {
    // A port alone binds 127.0.0.1: serving other machines takes an explicit address.
    let (_child, urls) = serve(&["--ws", "0", "--http", "0", "--allow-anonymous"], 2).await;
    assert!(urls[0].starts_with("ws://127.0.0.1:"), "{urls:?}");
    assert!(urls[1].starts_with("http://127.0.0.1:"), "{urls:?}");
    let link = ws::connect(&urls[0], &ClientOptions::default()).await;
    assert!(link.is_ok(), "the loopback listener answers");

    let (code, _, err) = run(&["serve", "--in-memory", "--ws", "example.com:80"], b"").await;
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("names a host"), "{err}");
}

#[actix::test]
async fn an_authorization_server_is_named_in_401s_and_the_metadata() {
    let (_child, urls) = serve(
        &[
            "--http",
            "127.0.0.1:0",
            "--token",
            "alice=s3cret",
            "--authorization-server",
            "https://auth.example",
        ],
        1,
    )
    .await;
    let mcp = &urls[0];
    let http = reqwest::Client::new();
    let refused = within(
        http.post(mcp)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body("{}")
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(refused.status(), reqwest::StatusCode::UNAUTHORIZED);
    let base = mcp.strip_suffix("/mcp").unwrap();
    let metadata = format!("{base}/.well-known/oauth-protected-resource/mcp");
    assert_eq!(
        refused.headers()["www-authenticate"],
        format!("Bearer resource_metadata=\"{metadata}\"").as_str()
    );
    let doc: serde_json::Value = within(async { http.get(&metadata).send().await?.json().await })
        .await
        .unwrap();
    assert_eq!(doc["resource"], json!(mcp));
    assert_eq!(
        doc["authorization_servers"],
        json!(["https://auth.example"])
    );

    // Only Streamable HTTP serves metadata.
    let (code, _, err) = run(
        &[
            "serve",
            "--in-memory",
            "--ws",
            "127.0.0.1:0",
            "--token",
            "a=b",
            "--authorization-server",
            "https://auth.example",
        ],
        b"",
    )
    .await;
    assert_eq!(code, Some(2));
    assert!(err.contains("--http"), "{err}");
}

/// Bearer JWTs from an authorization server: a player is who the token's claim names (two
/// JWT players see each other by those names in the lobby); an expired or foreign-signed
/// token is refused with 401, on WebSocket and Streamable HTTP alike.
#[actix::test]
async fn a_jwt_player_plays_as_its_claim_names_and_an_expired_or_foreign_one_is_refused() {
    use mcpl_testkit::jwt::TestIssuer;
    const ISS: &str = "https://auth.example";
    const AUD: &str = "mcpl-arcade";
    let dir = tempfile::tempdir().unwrap();
    let issuer = TestIssuer::new("k1");
    let jwks = issuer.write_jwks(dir.path());
    let (_child, urls) = serve(
        &[
            "--ws",
            "127.0.0.1:0",
            "--http",
            "127.0.0.1:0",
            "--jwks",
            jwks.to_str().unwrap(),
            "--jwt-issuer",
            ISS,
            "--jwt-audience",
            AUD,
        ],
        2,
    )
    .await;
    let alice_jwt = issuer.token(ISS, AUD, "alice", 600);
    let mut alice =
        Client::from_connection(ws::connect(&urls[0], &token(&alice_jwt)).await.unwrap());
    alice.handshake(true, &["tools", "pushEvents"]).await;
    alice.list().await;
    let bob_jwt = issuer.token(ISS, AUD, "bob", 600);
    let mut bob = Client::from_connection(http::connect(&urls[1], &token(&bob_jwt)).await.unwrap());
    bob.handshake_plain().await;
    let games = bob.call("games", json!({}), None).await;
    assert_eq!(
        games["structuredContent"]["online"],
        json!(["alice"]),
        "{games:#}"
    );
    let games = alice.call("games", json!({}), None).await;
    assert_eq!(
        games["structuredContent"]["online"],
        json!(["bob"]),
        "{games:#}"
    );

    let expired = issuer.token(ISS, AUD, "alice", -3600);
    let foreign = TestIssuer::new("k1").token(ISS, AUD, "alice", 600);
    let other_audience = issuer.token(ISS, "another-server", "alice", 600);
    for bad in [&expired, &foreign, &other_audience] {
        let e = ws::connect(&urls[0], &token(bad)).await.unwrap_err();
        assert!(matches!(e, TransportError::Unauthorized), "{e:?}");
        let refused = within(
            reqwest::Client::new()
                .post(&urls[1])
                .bearer_auth(bad)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
                .send(),
        )
        .await
        .unwrap();
        assert_eq!(refused.status(), reqwest::StatusCode::UNAUTHORIZED);
    }

    // A JWKS that cannot be read stops the arcade, naming the file.
    let missing = dir.path().join("missing.json");
    let (code, _, err) = run(
        &[
            "serve",
            "--in-memory",
            "--ws",
            "127.0.0.1:0",
            "--jwks",
            missing.to_str().unwrap(),
            "--jwt-issuer",
            ISS,
            "--jwt-audience",
            AUD,
        ],
        b"",
    )
    .await;
    assert_ne!(code, Some(0));
    assert!(err.contains("missing.json"), "{err}");
}
