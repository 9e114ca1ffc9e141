//! RFC-014 at its boundaries, end to end: the project's real server (the tests' arcade,
//! written on the SDK) and its real host (`mcpl_host::host::Host`), over a real WebSocket
//! on loopback. Between them a [`Relay`] passes every message on, and can drop the link
//! (a reconnect) or hold back the server's connect-time statement. Each test is named for
//! the item of the project's issue on RFC-014's boundaries that it proves
//! (`boundary_NN_…`); the host-only and server-only tests of the same items are in
//! `host/tests/boundaries.rs` and `server_wire_rules.rs`.

use mcpl_host::host::{Host, HostConfig, HostHandle, ServerConfig};
use mcpl_host::link::BackoffConfig;
use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{ServerBuilder, ToolContext, ToolError};
use mcpl_testkit::within;
use mcpl_tests::host_relay::{self as host_relay, Relay, agent, ok, shown};
use mcpl_tests::server_support::{Arcade, Harness, arcade_server_with, call, says};
use serde::Deserialize;
use serde_json::json;
use std::path::Path;
use std::time::Duration;

// ---- the server and the host -------------------------------------------------------------

/// Waits until the arcade is settled (statement read, no recovery) on a connection after
/// `after`; returns its epoch.
async fn settled_after(host: &HostHandle, after: u64) -> u64 {
    host_relay::settled_after(host, "arcade", after).await
}

#[derive(Deserialize)]
struct Rematch {
    instance: String,
}

/// `rematch`, for the arcade: a tool handler that closes a Nim instance and opens it again
/// under the same name (§4.2, a "restart"), both on behalf of its caller.
fn with_rematch(builder: ServerBuilder) -> ServerBuilder {
    let schema = json!({"type": "object", "properties": {"instance": {"type": "string"}},
        "required": ["instance"]});
    builder.tool(
        Tool::new("rematch", "Starts a Nim game again", schema),
        |ctx: ToolContext, args: Rematch| async move {
            ctx.close_toolset("nim", Some(&args.instance)).await?;
            ctx.open_toolset("nim", Some(&args.instance), Some(json!({"pile": 9})))
                .await?;
            Ok::<_, ToolError>(CallToolResult::text("A new game."))
        },
    )
}

/// A host of `who` with the arcade, through `relay`, reconnecting within 10–40 ms.
fn start_host(h: &Harness, relay: &Relay, who: &str, state_dir: Option<&Path>) -> HostHandle {
    let mut server = ServerConfig::new("arcade", relay.connector(h.url(), who));
    server.link.backoff = BackoffConfig {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(40),
        jitter: 0.0,
        seed: Some(7),
        ..Default::default()
    };
    let mut config = HostConfig::new(vec![server]);
    if let Some(dir) = state_dir {
        config = config.with_state_dir(dir);
    }
    Host::start(config).expect("a valid host configuration")
}

// ---- the items -----------------------------------------------------------------------------

/// Item 1: a handler that closes an instance and opens it again under its name. The server
/// never puts the close and the re-open in one message, and the host applies a message's
/// `toolsets` before its `tools`: the agent plays the new game at once.
#[actix::test]
async fn boundary_01_a_handlers_restart_leaves_the_game_playable() {
    within(async {
        let h = arcade_server_with(with_rematch).await;
        let relay = Relay::new();
        let host = start_host(&h, &relay, "alice", None);
        settled_after(&host, 0).await;
        ok(
            &host,
            "toolsets--open",
            json!({"toolset": "nim", "instance": "g1", "options": {"pile": 9}}),
        )
        .await;
        ok(
            &host,
            "toolsets--act",
            json!({"tool": "take", "instance": "g1", "args": {"count": 1}}),
        )
        .await;

        let said = ok(&host, "arcade--rematch", json!({"instance": "g1"})).await;
        assert!(said.contains("A new game."), "{said}");
        let played = ok(
            &host,
            "toolsets--act",
            json!({"tool": "take", "instance": "g1", "args": {"count": 2}}),
        )
        .await;
        assert!(
            played.contains("You took 2; bot took 3; 4 left"),
            "a new pile of 9: {played}"
        );
        host.stop().await;
    })
    .await;
}

/// Item 3, first half: a close the host asked for leaves no ended record, so after a
/// reconnect the statement does not report the host's own close as an end "while it was
/// away", and the agent is not told it twice.
#[actix::test]
async fn boundary_03_after_a_reconnect_the_hosts_own_close_is_not_told_as_an_end() {
    within(async {
        let h = arcade_server_with(|b| b).await;
        let relay = Relay::new();
        let host = start_host(&h, &relay, "alice", None);
        let epoch = settled_after(&host, 0).await;
        ok(
            &host,
            "toolsets--open",
            json!({"toolset": "nim", "instance": "g1"}),
        )
        .await;
        ok(
            &host,
            "toolsets--close",
            json!({"toolset": "nim", "instance": "g1"}),
        )
        .await;
        shown(&host).await;

        relay.cut();
        settled_after(&host, epoch).await;
        let after = shown(&host).await;
        assert!(
            !after.contains("nim:g1"),
            "the host's own close told again: {after}"
        );
        host.stop().await;
    })
    .await;
}

/// Item 3, second half: a server that reports an end without an `ended` id (the RFC does
/// not require one) and later lists its record: the host tells the end once — across a
/// reconnect, and across a host restart with its state directory.
#[actix::test]
async fn boundary_03_an_end_reported_without_an_id_is_told_once() {
    within(async {
        let h = arcade_server_with(|b| b.ended_ids_on_closes(false)).await;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let relay = Relay::new();
        let host = start_host(&h, &relay, "alice", Some(dir.path()));
        let epoch = settled_after(&host, 0).await;
        ok(
            &host,
            "toolsets--open",
            json!({"toolset": "nim", "instance": "g1", "options": {"pile": 1}}),
        )
        .await;
        let won = ok(
            &host,
            "toolsets--act",
            json!({"tool": "take", "instance": "g1", "args": {"count": 1}}),
        )
        .await;
        assert!(won.contains("alice wins by taking the last stone"), "{won}");
        shown(&host).await;

        relay.cut();
        settled_after(&host, epoch).await;
        let after = shown(&host).await;
        assert!(!after.contains("nim:g1"), "the end was told again: {after}");
        host.stop().await;

        let again = start_host(&h, &relay, "alice", Some(dir.path()));
        settled_after(&again, 0).await;
        let restarted = shown(&again).await;
        assert!(
            !restarted.contains("nim:g1"),
            "told again after a restart: {restarted}"
        );
        again.stop().await;
    })
    .await;
}

/// Item 4: a plain MCP client and the host on one principal. The plain client's implicit
/// open of `solo` does not reach the host; the host opening `solo` gets the instance the
/// plain client uses; the host closing it does not strand the plain client.
#[actix::test]
async fn boundary_04_a_plain_client_and_the_host_on_one_principal_do_not_strand_each_other() {
    within(async {
        let h = arcade_server_with(|b| b).await;
        let relay = Relay::new();
        let host = start_host(&h, &relay, "alice", None);
        settled_after(&host, 0).await;
        shown(&host).await;
        let rev = host
            .status()
            .server("arcade")
            .unwrap()
            .hints
            .clone()
            .unwrap()
            .last_rev;

        let mut plain = h.connect("alice").await;
        plain.handshake_plain().await;
        plain
            .expect_after(
                call(1, "solo_hint", json!({})),
                says(json!(1), "Leave your opponent a multiple of four."),
            )
            .await;
        // Behind whatever the server sent the host before that answer: a call of its own.
        ok(&host, "arcade--echo", json!({"text": "barrier"})).await;
        let hints = host
            .status()
            .server("arcade")
            .unwrap()
            .hints
            .clone()
            .unwrap();
        assert_eq!(hints.last_rev, rev, "nothing reached the host");
        assert!(!shown(&host).await.contains("solo"));
        let refused = agent(&host, "toolsets--act", json!({"tool": "solo_hint"})).await;
        assert!(refused.is_error, "{}", refused.joined_text());

        // Opening it: the plain client's instance, with what its call revealed.
        let opened = ok(&host, "toolsets--open", json!({"toolset": "solo"})).await;
        assert!(opened.contains("Opened [arcade/solo]"), "{opened}");
        assert!(opened.contains("Usable: solo_answer"), "{opened}");
        ok(&host, "toolsets--act", json!({"tool": "solo_answer"})).await;

        // Closing it does not strand the plain client, and its implicit re-open is unseen.
        ok(&host, "toolsets--close", json!({"toolset": "solo"})).await;
        shown(&host).await;
        plain
            .expect_after(
                call(2, "solo_hint", json!({})),
                says(json!(2), "Leave your opponent a multiple of four."),
            )
            .await;
        ok(&host, "arcade--echo", json!({"text": "barrier"})).await;
        let after = shown(&host).await;
        assert!(!after.contains("Opened [arcade/solo]"), "{after}");
        host.stop().await;
    })
    .await;
}

/// Item 7: after a reconnect, until the statement is read the host does not know what the
/// server kept open; a call made then waits for the statement and plays the kept game
/// instead of being refused as "not usable".
#[actix::test]
async fn boundary_07_after_a_reconnect_a_call_waits_for_the_statement() {
    within(async {
        let h = arcade_server_with(|b| b).await;
        let relay = Relay::new();
        let host = start_host(&h, &relay, "alice", None);
        let epoch = settled_after(&host, 0).await;
        ok(
            &host,
            "toolsets--open",
            json!({"toolset": "nim", "instance": "g1", "options": {"pile": 9}}),
        )
        .await;

        relay.hold_statements();
        relay.cut();
        within(host.wait_for(|s| {
            s.server("arcade").is_some_and(|a| {
                a.epoch > epoch && a.ready && a.hints.as_ref().is_some_and(|h| h.connecting)
            })
        }))
        .await
        .unwrap();
        let play = tokio::spawn({
            let host = host.clone();
            async move {
                host.call(
                    "toolsets--act",
                    json!({"tool": "take", "instance": "g1", "args": {"count": 2}}),
                )
                .await
            }
        });
        within(host.wait_for(|s| s.calls_waiting == 1))
            .await
            .unwrap();
        relay.release();
        let r = within(play).await.unwrap().unwrap();
        assert!(!r.is_error, "{}", r.joined_text());
        assert!(
            r.joined_text().contains("You took 2"),
            "{}",
            r.joined_text()
        );
        host.stop().await;
    })
    .await;
}
