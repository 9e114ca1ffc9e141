//! RFC-014 at its boundaries, on the host side: what another implementation's server may
//! send that the happy paths never do. Each test is named for the boundary it proves
//! (`boundary_NN_…`, the items of the project's issue on RFC-014's boundaries), against a
//! scripted server over a real WebSocket.

use crate::support;

use mcpl_testkit::within;
use mcpl_transport::ClientOptions;
use serde_json::json;
use std::time::Duration;
use support::server::*;

const HOLD: Duration = Duration::from_millis(250);

/// §5.1: an entry this host cannot read (a presence of "pinned") is ignored alone; the
/// result reaches the agent, the rest of its changes apply on its rev, and the rev order
/// goes on without a recovery.
#[actix::test]
async fn boundary_05_one_unreadable_hint_entry_costs_only_itself() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        open_game(&host, &mut conn, "g1", 2).await;
        let call = spawn_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "args": {"move": "D4"}}),
        );
        let req = conn.expect_next("tools/call").await;
        conn.reply(
            &req,
            json!({"content": [{"type": "text", "text": "Black D4."}],
            "_meta": {"mcpl/hints": {"rev": 3, "tools": [
                {"name": "x", "presence": "pinned"},
                vis("play", Some("g1"), false)]}}}),
        )
        .await;
        let r = call.await.unwrap();
        assert!(
            !r.is_error && r.joined_text().contains("Black D4."),
            "{r:?}"
        );
        hints_until(&host, |h| h.last_rev == 3).await;
        assert!(
            !is_usable(&host, "play").await,
            "the readable entry applied"
        );
        // The next rev follows on: no gap, no recovery.
        conn.hints(changes(
            4,
            json!([vis("play", Some("g1"), true)]),
            json!([]),
        ))
        .await;
        hints_until(&host, |h| h.last_rev == 4).await;
        assert!(is_usable(&host, "play").await);
        nothing_else_was_sent(&host, &mut conn).await;
        assert_eq!(conn.count("toolsets/list"), 1, "only the connect-time read");
        host.stop().await;
    })
    .await;
}

/// §5.2 [project]: hint changes that cannot be read at all (no rev) may have been a change:
/// the state is read again, and the result still reaches the agent.
#[actix::test]
async fn boundary_05_hints_without_a_rev_start_a_recovery_and_keep_the_result() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        open_game(&host, &mut conn, "g1", 2).await;
        let call = spawn_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "args": {"move": "D4"}}),
        );
        let req = conn.expect_next("tools/call").await;
        conn.reply(
            &req,
            json!({"content": [{"type": "text", "text": "Black D4."}],
            "_meta": {"mcpl/hints": {"tools": [vis("play", Some("g1"), false)]}}}),
        )
        .await;
        let r = call.await.unwrap();
        assert!(
            !r.is_error && r.joined_text().contains("Black D4."),
            "{r:?}"
        );
        conn.serve_recovery(
            statement(
                3,
                json!([{"toolset": "lobby"}, {"toolset": "game", "instance": "g1"}]),
                json!([]),
                json!([vis("seek", None, true)]),
            ),
            &arcade_tools(),
            3,
        )
        .await;
        hints_until(&host, |h| h.last_rev == 3 && !h.recovering).await;
        host.stop().await;
    })
    .await;
}

/// The game g1 open with play and resign visible in it, as a connect-time statement at
/// `rev` (the server kept it across the reconnect).
fn kept_game(rev: u64) -> serde_json::Value {
    statement(
        rev,
        json!([{"toolset": "lobby"}, {"toolset": "game", "instance": "g1"}]),
        json!([]),
        json!([
            vis("seek", None, true),
            vis("roam", None, true),
            vis("play", Some("g1"), true),
            vis("resign", Some("g1"), true)
        ]),
    )
}

/// Serves a reconnect's handshake and `tools/list`, and returns the connect-time
/// `toolsets/list` request unanswered.
async fn reconnect_without_statement(conn: &mut Conn) -> serde_json::Value {
    conn.handshake(arcade_init()).await;
    let mut stmt = None;
    let mut listed = false;
    while !(listed && stmt.is_some()) {
        let m = conn.next_non_notification().await;
        match m["method"].as_str() {
            Some("tools/list") => {
                conn.reply(&m, tools_page(&arcade_tools(), 1)).await;
                listed = true;
            }
            Some("toolsets/list") => stmt = Some(m),
            _ => panic!("unexpected at connect: {m}"),
        }
    }
    stmt.unwrap()
}

/// §4.3, §4.4 [project]: after a reconnect, until the connect-time statement is read the
/// host does not know what the server kept open. A meta-tool call made then waits for the
/// statement, and is planned on it: the game the server kept is played, not refused as
/// "not usable".
#[actix::test]
async fn boundary_07_a_call_made_before_the_statement_waits_for_it() {
    within(async {
        let (mut server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        open_game(&host, &mut conn, "g1", 2).await;
        drop(conn);
        let mut conn = server.accept().await;
        let stmt = reconnect_without_statement(&mut conn).await;
        host.wait_for(|s| s.server("arcade").is_some_and(|a| a.epoch == 2 && a.ready))
            .await
            .unwrap();

        let call = spawn_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "args": {"move": "Q16"}}),
        );
        host.wait_for(|s| s.calls_waiting == 1).await.unwrap();
        conn.reply(&stmt, kept_game(1)).await;

        let req = conn.next_request().await;
        assert_eq!(req["method"], "tools/call", "{req}");
        assert_eq!(req["params"]["_meta"], json!({"mcpl/instance": "g1"}));
        conn.reply(
            &req,
            json!({"content": [{"type": "text", "text": "Black Q16."}]}),
        )
        .await;
        let r = call.await.unwrap();
        assert!(
            !r.is_error && r.joined_text().contains("Black Q16."),
            "{r:?}"
        );
        assert_eq!(host.status().calls_waiting, 0);
        host.stop().await;
    })
    .await;
}

/// The wait is bounded: a server that never states what is open does not hold the agent's
/// call past `HostConfig::statement_wait`; the call is then planned on what the host knows.
#[actix::test]
async fn boundary_07_a_statement_that_never_comes_holds_a_call_only_for_the_wait() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host_with(
            server.connector(ClientOptions::default()),
            HOLD,
            |_| {},
            |config| config.statement_wait = Duration::from_millis(100),
        );
        let mut conn = server.accept().await;
        let _stmt = reconnect_without_statement(&mut conn).await;
        host.wait_for(|s| s.server("arcade").is_some_and(|a| a.ready))
            .await
            .unwrap();
        let (err, text) = local_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "args": {"move": "Q16"}}),
        )
        .await;
        assert!(err, "{text}");
        assert_eq!(host.status().calls_waiting, 0);
        assert_eq!(conn.count("tools/call"), 0, "nothing was sent");
        host.stop().await;
    })
    .await;
}
