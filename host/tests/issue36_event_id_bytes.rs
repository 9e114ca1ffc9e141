//! Issue #36 item 3, from outside: a scripted server over a real WebSocket pushes events
//! whose `eventId`s are a megabyte each, and the bytes the process holds afterwards are
//! counted. This binary's global allocator counts the bytes live (which is why the test
//! has a binary of its own); each id was kept whole in several tables before.

mod support;

use mcpl_testkit::alloc::Counting;
use mcpl_testkit::within;
use serde_json::json;
use std::time::Duration;
use support::server::*;

#[global_allocator]
static COUNTING: Counting = Counting;

const MIB: usize = 1 << 20;

#[actix::test]
async fn issue36_03_long_event_ids_cost_the_host_a_bounded_number_of_bytes() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, Duration::from_millis(250)).await;
        // One long push first, so buffers that grow to a message's size once (the
        // transports' read and write buffers) are counted in the baseline.
        conn.push(1, &format!("warm-{}", "x".repeat(MIB)), "warm", None)
            .await;
        conn.answer_to(1).await;
        host.transcript().await.unwrap();
        nothing_else_was_sent(&host, &mut conn).await;
        let before = Counting::live();
        const PUSHES: usize = 40;
        for i in 0..PUSHES {
            let id = format!("ev-{i}-{}", "x".repeat(MIB));
            conn.push(100 + i as i64, &id, &format!("event {i}"), None)
                .await;
            assert_eq!(
                conn.answer_to(100 + i as i64).await["result"],
                json!({"accepted": true})
            );
        }
        nothing_else_was_sent(&host, &mut conn).await;
        let shown = host.transcript().await.unwrap();
        assert_eq!(
            shown.iter().filter(|s| s.text.contains("event ")).count(),
            PUSHES,
            "every push is shown: {}",
            texts(&shown)
        );
        drop(shown);
        let grown = Counting::live() - before;
        // Before the fix each id stayed whole in three tables: 120 MiB and more here.
        assert!(
            grown < (8 * MIB) as isize,
            "{PUSHES} pushes with 1 MiB ids left {} KiB more in use",
            grown / 1024
        );
        host.stop().await;
    })
    .await;
}
