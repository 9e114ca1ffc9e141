//! RFC-014 at its boundaries, on the host side: what another implementation's server may
//! send that the happy paths never do. Each test is named for the boundary it proves
//! (`boundary_NN_…`, the items of the project's issue on RFC-014's boundaries), against a
//! scripted server over a real WebSocket.

mod support;

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
        let req = conn.request("tools/call").await;
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
        let req = conn.request("tools/call").await;
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
