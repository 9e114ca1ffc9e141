//! A principal's record written in parts (issue #42 item 1): a step writes the core of the
//! record and only the parts that changed — each ended record once when it is made, its
//! tombstone once when its instance closes — never the whole list, so what a move writes
//! does not grow with the games a player has played. Measured through the server's own
//! count of the bytes handed to its store (`Server::store_stats`), not by timing.
//!
//! A record written whole, before parts, still loads, and is written in parts on its
//! next change; a restart restores the same ended records from the parts.

use crate::support;

use mcpl_protocol::mcp::Tool;
use mcpl_server::{
    Audience, Durable, InstanceContext, InstanceLogic, Loaded, MemoryStore, PrincipalConfig, Reply,
    Server, Started, Store, ToolCall, Toolset, Writes,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use support::{TestClient, hinted, open, request};

/// A durable game: `move` counts and shows or hides `peek` (a change of the player's
/// hints, so of its record, on every move); `finish` ends it, leaving its last view.
#[derive(Serialize, Deserialize)]
struct Game {
    n: u64,
}

impl InstanceLogic for Game {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        if call.tool() == "finish" {
            // A last view the size of a small board.
            let view = format!("final position after {} moves: {}", self.n, ".".repeat(160));
            cx.end_showing(format!("finished after {}", self.n), view);
            return Reply::text("Over.");
        }
        self.n += 1;
        cx.set_visible(Audience::All, "peek", self.n % 2 == 1);
        Reply::text(self.n.to_string())
    }
}

impl Durable for Game {
    const FORMAT: u32 = 1;
}

fn tool(name: &str) -> Tool {
    Tool::new(name, name, json!({"type": "object"}))
}

fn server(store: Arc<dyn Store>, config: PrincipalConfig) -> Server {
    let game = Toolset::new("game")
        .instances()
        .tool(tool("move"))
        .tool(tool("finish"))
        .hidden_tool(tool("peek"))
        .on_open(|_, _| Ok(Started::durable(Game { n: 0 })))
        .durable::<Game>();
    Server::builder("parts-test", "0.1.0")
        .toolset(game)
        .principal_config(config)
        .store(store)
        .build()
        .unwrap()
}

async fn call_in(c: &mut TestClient, id: i64, tool: &str, instance: &str) -> Value {
    let r = c
        .exchange(request(
            json!(id),
            "tools/call",
            json!({"name": tool, "arguments": {}, "_meta": {"mcpl/instance": instance}}),
        ))
        .await;
    assert!(r.get("result").is_some(), "{r:#}");
    r
}

/// Plays `n` games to their end (each leaves an ended record, with its last view, and a
/// tombstone).
async fn play_games(c: &mut TestClient, n: usize) {
    for i in 0..n {
        let name = format!("g{i}");
        let r = c.exchange(open(1, "game", Some(&name), None)).await;
        assert!(r.get("result").is_some(), "{r:#}");
        call_in(c, 2, "move", &name).await;
        call_in(c, 3, "finish", &name).await;
    }
}

/// The bytes handed to the store for what `step` does.
async fn bytes_of<F: Future<Output = ()>>(server: &Server, step: F) -> u64 {
    let before = server.store_stats().expect("a store").bytes;
    step.await;
    server.store_stats().expect("a store").bytes - before
}

/// What a move and a game's end write for a player who has played `games` games.
async fn written_after(games: usize) -> (u64, u64) {
    let store = Arc::new(MemoryStore::new());
    let server = server(store, PrincipalConfig::default());
    let (mut c, _s) = hinted(&server, "alice").await;
    play_games(&mut c, games).await;
    c.exchange(open(1, "game", Some("now"), None)).await;
    call_in(&mut c, 2, "move", "now").await;
    let a_move = bytes_of(&server, async {
        call_in(&mut c, 3, "move", "now").await;
    })
    .await;
    let an_end = bytes_of(&server, async {
        call_in(&mut c, 4, "finish", "now").await;
    })
    .await;
    (a_move, an_end)
}

#[actix::test]
async fn issue42_parts_01_a_move_writes_the_same_bytes_after_5_games_or_500() {
    let (move_5, end_5) = written_after(5).await;
    let (move_500, end_500) = written_after(500).await;
    eprintln!(
        "bytes handed to the store: a move {move_5} after 5 games, {move_500} after 500; \
         a game's end {end_5} after 5 games, {end_500} after 500"
    );
    // Written whole, the record of a player of 500 games weighs some 200 KiB (each ended
    // record with its last view, and each tombstone), written on every move.
    assert!(
        move_500 < 4096,
        "a move wrote {move_500} bytes after 500 games"
    );
    assert!(
        end_500 < 8192,
        "an end wrote {end_500} bytes after 500 games"
    );
    // Independent of the games played: the same parts, the numbers in them aside (a
    // version or a sequence number a digit longer).
    assert!(move_500.abs_diff(move_5) <= 16, "{move_5} vs {move_500}");
    assert!(end_500.abs_diff(end_5) <= 64, "{end_5} vs {end_500}");
}

/// `toolsets/list`'s ended records, as `(id, instance, reason)`, in its order.
async fn ended(c: &mut TestClient) -> Vec<(String, String, String)> {
    let r = c
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    r["result"]["ended"]
        .as_array()
        .unwrap_or_else(|| panic!("{r:#}"))
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (s("id"), s("instance"), s("reason"))
        })
        .collect()
}

/// Closes the client and awaits its session's end (its principal keeps its toolsets).
async fn leave(server: &Server, c: TestClient) {
    drop(c);
    server
        .watch_sessions()
        .wait_for(|n| *n == 0)
        .await
        .expect("the server is alive");
}

/// The store's parts of `who`, by name.
fn parts_of<'a>(loaded: &'a Loaded, who: &str) -> Vec<(&'a str, &'a [u8])> {
    loaded
        .parts
        .iter()
        .filter(|(p, _, _)| p == who)
        .map(|(_, n, b)| (n.as_str(), b.as_slice()))
        .collect()
}

#[actix::test]
async fn issue42_parts_02_parts_follow_the_log_and_a_restart_restores_the_same_ended_records() {
    let store = Arc::new(MemoryStore::new());
    // Three ended records kept at most: the oldest pushed out goes from the store too.
    let config = PrincipalConfig {
        max_ended: 3,
        max_tombstones: 2,
        ..PrincipalConfig::default()
    };
    let first = server(store.clone(), config.clone());
    let (mut c, _s) = hinted(&first, "alice").await;
    play_games(&mut c, 5).await;
    let before = ended(&mut c).await;
    assert_eq!(before.len(), 3, "{before:?}");
    let loaded = store.load().unwrap();
    let names: Vec<&str> = parts_of(&loaded, "alice").iter().map(|(n, _)| *n).collect();
    let ended_parts: Vec<&&str> = names.iter().filter(|n| n.starts_with("ended/")).collect();
    let closed_parts: Vec<&&str> = names.iter().filter(|n| n.starts_with("closed/")).collect();
    assert_eq!(ended_parts.len(), 3, "{names:?}");
    assert_eq!(closed_parts.len(), 2, "{names:?}");
    // The core holds none of them.
    let core: Value = serde_json::from_slice(&loaded.principals[0].1).unwrap();
    assert_eq!(core["state"]["ended"], json!([]), "{core:#}");
    assert_eq!(core["state"]["stamps"]["tombstones"], json!([]), "{core:#}");
    leave(&first, c).await;
    drop(first);

    let second = server(store.clone(), config);
    let (mut c, _s) = hinted(&second, "alice").await;
    assert_eq!(
        ended(&mut c).await,
        before,
        "the same records, in the same order"
    );
    leave(&second, c).await;
}

/// `loaded`, with each principal's record written whole as before parts: its ended
/// records and tombstones in itself, no parts.
fn whole(loaded: &Loaded) -> Loaded {
    let principals = loaded
        .principals
        .iter()
        .map(|(name, core)| {
            let mut core: Value = serde_json::from_slice(core).unwrap();
            let parts = parts_of(loaded, name);
            let value = |b: &[u8]| serde_json::from_slice::<Value>(b).unwrap();
            core["state"]["ended"] = parts
                .iter()
                .filter(|(n, _)| n.starts_with("ended/"))
                .map(|(_, b)| value(b))
                .collect();
            core["state"]["stamps"]["tombstones"] = parts
                .iter()
                .filter(|(n, _)| n.starts_with("closed/"))
                .map(|(_, b)| {
                    let mut t = value(b);
                    let key = t["key"].take();
                    t.as_object_mut().unwrap().remove("key");
                    json!([key, t])
                })
                .collect();
            (name.clone(), serde_json::to_vec(&core).unwrap())
        })
        .collect();
    Loaded {
        principals,
        instances: loaded.instances.clone(),
        parts: Vec::new(),
    }
}

#[actix::test]
async fn issue42_parts_03_a_record_written_whole_loads_and_is_written_in_parts_on_its_next_change()
{
    let store = Arc::new(MemoryStore::new());
    let first = server(store.clone(), PrincipalConfig::default());
    let (mut c, _s) = hinted(&first, "alice").await;
    play_games(&mut c, 4).await;
    c.exchange(open(1, "game", Some("on"), None)).await;
    call_in(&mut c, 2, "move", "on").await;
    let before = ended(&mut c).await;
    leave(&first, c).await;
    drop(first);

    // The same state, as a server before parts wrote it.
    let old = whole(&store.load().unwrap());
    let whole_store = Arc::new(MemoryStore::new());
    whole_store
        .commit(&[Writes {
            principals: old
                .principals
                .iter()
                .map(|(n, b)| (n.clone(), Some(b.clone())))
                .collect(),
            instances: old
                .instances
                .iter()
                .map(|(i, b)| (*i, Some(b.clone())))
                .collect(),
            parts: Vec::new(),
        }])
        .unwrap();
    let bytes_whole = old.principals[0].1.len();

    let second = server(whole_store.clone(), PrincipalConfig::default());
    let (mut c, _s) = hinted(&second, "alice").await;
    assert_eq!(ended(&mut c).await, before, "read whole, the same records");
    // Its next change writes it in parts: the core, every ended record, every tombstone.
    assert_eq!(text(&call_in(&mut c, 3, "move", "on").await), "2");
    let loaded = whole_store.load().unwrap();
    let parts = parts_of(&loaded, "alice");
    assert_eq!(
        parts
            .iter()
            .filter(|(n, _)| n.starts_with("ended/"))
            .count(),
        4
    );
    assert_eq!(
        parts
            .iter()
            .filter(|(n, _)| n.starts_with("closed/"))
            .count(),
        4
    );
    assert!(
        loaded.principals[0].1.len() < bytes_whole,
        "the core no longer holds them"
    );
    // And the move after writes none of them again.
    let again = bytes_of(&second, async {
        call_in(&mut c, 4, "move", "on").await;
    })
    .await;
    assert!(again < 2048, "{again}");
    leave(&second, c).await;
    drop(second);

    // Read back from its parts, the same again.
    let third = server(whole_store, PrincipalConfig::default());
    let (mut c, _s) = hinted(&third, "alice").await;
    assert_eq!(ended(&mut c).await, before);
    assert_eq!(text(&call_in(&mut c, 5, "move", "on").await), "4");
    leave(&third, c).await;
}

/// The first text block of a call's result.
fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {reply:#}"))
}
