//! Ended-record ids are never reused (§4.3, vector 13): a host tells its agent about each id
//! once, so an id the server issued again would hide a new end from the agent.
//!
//! The clock stands still here (a [`ManualClock`], as in the simulator's deterministic
//! mode), so a principal forgotten and re-created — its last connection closed, nothing
//! kept (`keep_toolsets(false)`), its records expired (`ended_ttl(0)`) — starts again at
//! the very same time, and so does a server built again in the same process (a restart).

use crate::support;

use mcpl_protocol::mcp::Tool;
use mcpl_server::{
    InstanceContext, InstanceLogic, ManualClock, Reply, Server, Started, ToolCall, Toolset,
};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};
use support::{call, forgotten, hinted, open, request};

struct Game;

impl InstanceLogic for Game {
    fn call(&mut self, _: ToolCall, cx: &mut InstanceContext) -> Reply {
        cx.end("finished");
        Reply::text("Over.")
    }
}

fn server(clock: Arc<ManualClock>) -> Server {
    let game = Toolset::new("game")
        .instances()
        .tool(Tool::new(
            "finish",
            "Ends the game",
            json!({"type": "object"}),
        ))
        .on_open(|_, _| Ok(Started::new(Game)));
    Server::builder("test-server", "0.1.0")
        .toolset(game)
        .keep_toolsets(false)
        .ended_ttl(Duration::ZERO)
        .clock(clock)
        .build()
        .unwrap()
}

fn still_clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(
        UNIX_EPOCH + Duration::from_secs(1_796_040_000),
    ))
}

/// Every ended id a message states: a `toolsets/list` result's records and the `ended` of
/// each closed entry of the hint changes it carries.
fn ended_ids(message: &Value) -> Vec<String> {
    let result = &message["result"];
    let listed = result["ended"].as_array().into_iter().flatten();
    let hints = &result["_meta"]["mcpl/hints"];
    let closed = hints["toolsets"].as_array().into_iter().flatten();
    listed
        .map(|r| &r["id"])
        .chain(closed.map(|t| &t["ended"]))
        .filter_map(|id| id.as_str().map(str::to_owned))
        .collect()
}

/// One life of the principal: list, a game finished by its logic, one closed by the host
/// (asked for: no record, §4.3 revision 4), one still open when the connection goes;
/// returns the ended ids it was told.
async fn one_life(server: &Server) -> Vec<String> {
    let (mut a, _session) = hinted(server, "alice").await;
    let mut seen = ended_ids(
        &a.exchange(request(json!(1), "toolsets/list", json!({})))
            .await,
    );
    a.exchange(open(2, "game", Some("g1"), None)).await;
    let finished = a
        .exchange(call(3, "finish", json!({})).with_instance("g1"))
        .await;
    let told = ended_ids(&finished);
    assert_eq!(told.len(), 1, "the end of g1 is told: {finished:#}");
    seen.extend(told);
    a.exchange(open(4, "game", Some("g2"), None)).await;
    let closed = a
        .exchange(request(
            json!(5),
            "toolsets/close",
            json!({"toolset": "game", "instance": "g2"}),
        ))
        .await;
    assert_eq!(
        closed["result"]["_meta"]["mcpl/hints"]["toolsets"][0]["state"], "closed",
        "the close of g2 is told: {closed:#}"
    );
    assert_eq!(ended_ids(&closed), Vec::<String>::new(), "without a record");
    // Ended by the connection going (nothing is kept), told to nobody.
    a.exchange(open(6, "game", Some("g3"), None)).await;
    drop(a);
    seen
}

trait WithInstance {
    fn with_instance(self, instance: &str) -> Self;
}

impl WithInstance for Value {
    /// Names the instance a `tools/call` goes to (§4.5).
    fn with_instance(mut self, instance: &str) -> Self {
        self["params"]["_meta"] = json!({"mcpl/instance": instance});
        self
    }
}

fn assert_distinct(ids: &[String]) {
    let distinct: BTreeSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len(), "an ended id was reused: {ids:?}");
}

#[actix::test]
async fn a_forgotten_principal_never_gets_an_id_it_was_told_before() {
    tokio::time::pause();
    let server = server(still_clock());
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.extend(one_life(&server).await);
        forgotten(&server).await;
    }
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert_distinct(&ids);
}

#[actix::test]
async fn a_server_built_again_at_the_same_time_issues_new_ids() {
    tokio::time::pause();
    let clock = still_clock();
    let mut ids = Vec::new();
    for _ in 0..3 {
        // A restart: a new server, the same principal, the same time on the clock.
        let server = server(clock.clone());
        ids.extend(one_life(&server).await);
        forgotten(&server).await;
    }
    assert_distinct(&ids);
}
