//! Issue #37 ("Hardening, second round") item 5: the host bounds what it puts before the
//! agent — what one turn shows, what `look` prints, and the transcript it keeps — and says
//! what it left out. A scripted server over a real WebSocket states 5,000 open instances
//! and sends 3,000 pushes of 1 KB, raw JSON, against the real host.

use crate::support;

use mcpl_host::host::{HostHandle, Shown, ShownKind};
use mcpl_host::state::conversation::DEFAULT_HISTORY_BYTES;
use mcpl_host::state::host_core::DEFAULT_MAX_TURN_BYTES;
use mcpl_host::state::meta_tools::DEFAULT_MAX_LOOK_BYTES;
use mcpl_testkit::within;
use serde_json::{Value, json};
use std::time::Duration;
use support::server::*;

const HOLD: Duration = Duration::from_millis(250);

/// A push's text: about 1 KB.
fn kilobyte(i: usize) -> String {
    format!("move {i}: {}", "x".repeat(1000))
}

/// The bytes of what was shown outside tool results.
fn shown_bytes(shown: &[Shown]) -> usize {
    shown
        .iter()
        .filter(|s| s.kind != ShownKind::ToolResult)
        .map(|s| s.text.len())
        .sum()
}

/// Every message's bytes.
fn all_bytes(shown: &[Shown]) -> usize {
    shown.iter().map(|s| s.text.len()).sum()
}

/// A statement with `n` game instances open (`g0`…), `play` and `resign` visible in each.
fn many_open(n: usize, rev: u64) -> Value {
    let mut open = vec![json!({"toolset": "lobby"})];
    let mut tools = vec![vis("seek", None, true)];
    for i in 0..n {
        let name = format!("g{i}");
        open.push(json!({"toolset": "game", "instance": name, "title": "Go 9x9"}));
        tools.push(vis("play", Some(&name), true));
        tools.push(vis("resign", Some(&name), true));
    }
    statement(rev, json!(open), json!([]), json!(tools))
}

/// Sends `tools/hints` at `rev` with no change and waits until the host applied it: every
/// message written before it was handled (one link reads and hands on in order).
async fn sync(conn: &mut Conn, host: &HostHandle, rev: u64) {
    conn.hints(changes(rev, json!([]), json!([]))).await;
    hints_until(host, |h| h.last_rev >= rev).await;
}

#[actix::test]
async fn issue37_05_one_turn_and_a_look_are_bounded_and_say_what_they_left_out() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host(server.connector(Default::default()), HOLD, |_| {});
        let mut conn = server.accept().await;
        conn.connect(arcade_init(), arcade_tools(), 0, Some(many_open(5_000, 1)))
            .await;
        settled(&host, 1, 1, 6).await;

        // Turn 0: the connect-time notice of 5,000 instances, cut to what a turn shows.
        let t0 = host.transcript().await.unwrap();
        let b0 = shown_bytes(&t0);
        assert!(b0 <= DEFAULT_MAX_TURN_BYTES, "turn 0 showed {b0} bytes");
        let t = texts(&t0);
        assert!(
            t.contains("more lines left out here"),
            "{}",
            &t[t.len() - 600..]
        );
        assert!(
            t.contains("the rest are left out"),
            "{}",
            &t[t.len() - 600..]
        );

        // Turn 1: 3,000 pushes of 1 KB.
        let told = host.start_turn().await.unwrap();
        assert!(
            told.is_none(),
            "the announcements are still in view: {told:?}"
        );
        for i in 0..3_000 {
            conn.push(100 + i as i64, &format!("e{i}"), &kilobyte(i), None)
                .await;
        }
        sync(&mut conn, &host, 2).await;
        let t1 = host.transcript().await.unwrap();
        let b1 = shown_bytes(&t1);
        assert!(b1 <= DEFAULT_MAX_TURN_BYTES, "turn 1 showed {b1} bytes");
        let pushes = t1.iter().filter(|s| s.kind == ShownKind::Push).count();
        assert!(pushes > 20, "a turn is still useful: {pushes} events shown");
        assert!(texts(&t1).contains("the rest are left out"));
        assert!(
            texts(&t1).contains("move 0: "),
            "the first events are shown"
        );
        assert!(!texts(&t1).contains("move 2999: "), "the last are left out");

        // Turn 2 opens with what turn 1 left out; the reminder is cut to fit.
        let _ = host.start_turn().await.unwrap();
        let t2 = host.transcript().await.unwrap();
        let b2 = shown_bytes(&t2);
        assert!(b2 <= DEFAULT_MAX_TURN_BYTES, "turn 2 showed {b2} bytes");
        let left = 3_000 - pushes;
        let t = texts(&t2);
        assert!(
            t.contains(&format!(
                "since your previous turn or call, {left} events were left out"
            )),
            "{t}"
        );
        assert!(t.contains("toolsets--look shows what is open"), "{t}");
        eprintln!("shown: turn 0 {b0} B, turn 1 {b1} B ({pushes} events), turn 2 {b2} B");

        // A look at everything is bounded, counts what it left out and says how to narrow.
        let (err, look) = local_call(&host, "toolsets--look", json!({})).await;
        assert!(!err, "{look}");
        assert!(
            look.len() <= DEFAULT_MAX_LOOK_BYTES,
            "look printed {} bytes",
            look.len()
        );
        assert!(look.contains("- [arcade/game:g0]"), "{}", &look[..300]);
        eprintln!("look: {} B", look.len());
        let tail = &look[look.len() - 400..];
        assert!(tail.contains("open toolsets or instances"), "{tail}");
        assert!(tail.contains("usable tools"), "{tail}");
        assert!(tail.contains("a look shows at most"), "{tail}");
        assert!(
            tail.contains("toolsets--look takes `server`, `toolset`, `instance` and `tool`"),
            "{tail}"
        );
        assert!(
            tail.contains(r#"(the first not listed: toolsets--look {"instance":"g"#),
            "{tail}"
        );
        // Narrowed, the last instance is listed whole.
        let (err, one) = local_call(
            &host,
            "toolsets--look",
            json!({"toolset": "game", "instance": "g4999"}),
        )
        .await;
        assert!(!err, "{one}");
        assert!(one.contains("- [arcade/game:g4999]"), "{one}");
        assert!(one.contains("play"), "{one}");
        assert!(!one.contains("not listed"), "{one}");
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn issue37_05_the_transcript_is_bounded_in_bytes() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host(server.connector(Default::default()), HOLD, |_| {});
        let mut conn = server.accept().await;
        conn.connect(arcade_init(), arcade_tools(), 0, Some(lobby_statement(1)))
            .await;
        settled(&host, 1, 1, 6).await;
        // 3,000 pushes of 1 KB, 20 between two of the agent's calls: each turn shows all
        // of its 20, and what the host keeps of them is bounded in bytes.
        let mut rev = 1;
        for round in 0..150 {
            for i in 0..20 {
                let n = round * 20 + i;
                conn.push(100 + n as i64, &format!("e{n}"), &kilobyte(n), None)
                    .await;
            }
            rev += 1;
            sync(&mut conn, &host, rev).await;
            // The agent acts (a look at the lobby, answered by the host).
            let (err, look) =
                local_call(&host, "toolsets--look", json!({"toolset": "lobby"})).await;
            assert!(!err, "{look}");
        }
        let t = host.transcript().await.unwrap();
        let bytes = all_bytes(&t);
        assert!(
            bytes <= DEFAULT_HISTORY_BYTES,
            "the transcript kept {bytes} bytes"
        );
        assert!(t.first().unwrap().seq > 0, "the oldest were dropped");
        eprintln!("transcript: {bytes} B in {} messages", t.len());
        assert!(texts(&t).contains("move 2999: "), "the newest are kept");
        assert!(
            !texts(&t).contains("were left out"),
            "no turn was over its bound"
        );
        host.stop().await;
    })
    .await;
}
