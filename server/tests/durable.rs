//! Durable state (issue #15): a server built again on the same store gives each principal
//! back its kept instances — adopted on reconnect, not opened again (§4.6, vector 9) —
//! and its ended records (§4.3); an instance whose logic is not kept, or whose state
//! cannot be read back, ends with a record saying why, and the rest load.
//!
//! The restart is in-process on one [`MemoryStore`] (the `redb` file store is tested on
//! its own and through the arcade binary, killed with SIGKILL, in `games/tests/`).

use crate::support;

use mcpl_protocol::mcp::Tool;
use mcpl_server::{
    Durable, InstanceContext, InstanceLogic, MemoryStore, REASON_NOT_KEPT, Reply, Server, Started,
    Store, ToolCall, Toolset,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use support::{TestClient, hinted, open, request};

/// A durable counter: `bump` counts, `finish` ends it.
#[derive(Serialize, Deserialize)]
struct Counter {
    n: u64,
}

impl InstanceLogic for Counter {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        if call.tool() == "finish" {
            cx.end(format!("finished at {}", self.n));
            return Reply::text("Over.");
        }
        self.n += 1;
        Reply::text(self.n.to_string())
    }
}

impl Durable for Counter {
    const FORMAT: u32 = 1;
}

/// The same counter in a later format that cannot read the first.
#[derive(Serialize, Deserialize)]
struct CounterV2 {
    count: u64,
}

impl InstanceLogic for CounterV2 {
    fn call(&mut self, _: ToolCall, _: &mut InstanceContext) -> Reply {
        self.count += 1;
        Reply::text(self.count.to_string())
    }
}

impl Durable for CounterV2 {
    const FORMAT: u32 = 2;
}

/// A scratchpad that does not opt in: lost in a restart.
struct Scratch;

impl InstanceLogic for Scratch {
    fn call(&mut self, _: ToolCall, _: &mut InstanceContext) -> Reply {
        Reply::text("scribbled")
    }
}

fn tool(name: &str) -> Tool {
    Tool::new(name, name, json!({"type": "object"}))
}

fn server(store: Arc<MemoryStore>, v2: bool) -> Server {
    let counter = Toolset::new("counter")
        .instances()
        .hidden_tool(tool("bump"))
        .tool(tool("finish"));
    let counter = if v2 {
        counter
            .on_open(|_, _| Ok(Started::durable(CounterV2 { count: 0 })))
            .durable::<CounterV2>()
    } else {
        counter
            .on_open(|o, cx| {
                cx.show(o.opener(), "bump");
                Ok(Started::durable(Counter { n: 0 }))
            })
            .durable::<Counter>()
    };
    let scratch = Toolset::new("scratch")
        .instances()
        .tool(tool("scribble"))
        .on_open(|_, _| Ok(Started::new(Scratch)));
    Server::builder("durable-test", "0.1.0")
        .toolset(counter)
        .toolset(scratch)
        .store(store)
        .build()
        .unwrap()
}

async fn call_in(c: &mut TestClient, id: i64, tool: &str, instance: &str) -> Value {
    c.exchange(request(
        json!(id),
        "tools/call",
        json!({"name": tool, "arguments": {}, "_meta": {"mcpl/instance": instance}}),
    ))
    .await
}

/// The first text block of a call's result.
fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {reply:#}"))
}

async fn list(c: &mut TestClient) -> Value {
    c.exchange(request(json!("list"), "toolsets/list", json!({})))
        .await["result"]
        .clone()
}

/// `toolset:instance` of a `toolsets/list` entry (open or ended).
fn key(r: &Value) -> String {
    format!(
        "{}:{}",
        r["toolset"].as_str().unwrap(),
        r["instance"].as_str().unwrap()
    )
}

/// `(toolset:instance, reason)` of every ended record in a `toolsets/list` result.
fn ended(list: &Value) -> Vec<(String, String)> {
    list["ended"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| (key(r), r["reason"].as_str().unwrap().to_owned()))
        .collect()
}

/// `toolset:instance` of every open entry in a `toolsets/list` result.
fn open_names(list: &Value) -> Vec<String> {
    list["open"]
        .as_array()
        .into_iter()
        .flatten()
        .map(key)
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

#[actix::test]
async fn kept_instances_are_adopted_after_a_restart_and_ended_records_told() {
    let store = Arc::new(MemoryStore::new());
    let first = server(store.clone(), false);
    let (mut a, _s) = hinted(&first, "alice").await;
    a.exchange(open(1, "counter", Some("c1"), None)).await;
    assert_eq!(text(&call_in(&mut a, 2, "bump", "c1").await), "1");
    assert_eq!(text(&call_in(&mut a, 3, "bump", "c1").await), "2");
    a.exchange(open(4, "counter", Some("c2"), None)).await;
    let over = call_in(&mut a, 5, "finish", "c2").await;
    assert_eq!(text(&over), "Over.", "{over:#}");
    a.exchange(open(6, "scratch", Some("s1"), None)).await;
    let before = list(&mut a).await;
    leave(&first, a).await;

    // The restart: a new server on the same store.
    let second = server(store.clone(), false);
    let (mut a, _s) = hinted(&second, "alice").await;
    let after = list(&mut a).await;
    assert_eq!(open_names(&after), ["counter:c1"], "{after:#}");
    let mut ends = ended(&after);
    ends.sort();
    assert_eq!(
        ends,
        [
            ("counter:c2".to_owned(), "finished at 0".to_owned()),
            ("scratch:s1".to_owned(), REASON_NOT_KEPT.to_owned()),
        ],
        "{after:#}"
    );
    // The record told before the restart keeps its id.
    let id_before = &before["ended"][0]["id"];
    assert!(
        after["ended"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| &r["id"] == id_before),
        "{before:#}\n{after:#}"
    );
    assert_eq!(
        second.restored(),
        Some(mcpl_server::Restored {
            principals: 1,
            instances: 1,
            toolsets: [("counter".to_owned(), 1)].into(),
            lost: 1
        }),
        "c1 back; s1 lost; c2 had ended"
    );
    let adopted = a.exchange(open(7, "counter", Some("c1"), None)).await;
    assert_eq!(adopted["result"]["adopted"], true, "{adopted:#}");
    // The same position: the count goes on, and `bump` is still visible there.
    assert_eq!(text(&call_in(&mut a, 8, "bump", "c1").await), "3");
    // An ended game is not resurrected.
    let c2 = call_in(&mut a, 9, "bump", "c2").await;
    assert!(
        c2.get("error").is_some() || c2["result"]["isError"] == true,
        "{c2:#}"
    );
}

#[actix::test]
async fn unreadable_or_incompatible_state_ends_with_a_record_and_the_rest_load() {
    let store = Arc::new(MemoryStore::new());
    let first = server(store.clone(), false);
    let (mut a, _s) = hinted(&first, "alice").await;
    a.exchange(open(1, "counter", Some("c1"), None)).await;
    assert_eq!(text(&call_in(&mut a, 2, "bump", "c1").await), "1");
    a.exchange(open(3, "counter", Some("c2"), None)).await;
    leave(&first, a).await;

    // c1's record is damaged (a torn write, a disk error): it ends, c2 loads.
    let loaded = store.load().unwrap();
    let c1 = loaded
        .instances
        .iter()
        .find(|(_, r)| String::from_utf8_lossy(r).contains("\"c1\""))
        .map(|(id, _)| *id)
        .expect("c1's record");
    store.put_instance(c1, b"{\"toolset\": \"coun").unwrap();
    let second = server(store.clone(), false);
    let (mut a, _s) = hinted(&second, "alice").await;
    let after = list(&mut a).await;
    assert_eq!(open_names(&after), ["counter:c2"], "{after:#}");
    let ends = ended(&after);
    assert_eq!(ends.len(), 1, "{after:#}");
    assert_eq!(ends[0].0, "counter:c1");
    assert!(
        ends[0].1.contains("memory") && ends[0].1.contains("could not be read"),
        "the reason names the store and the problem: {}",
        ends[0].1
    );
    assert_eq!(text(&call_in(&mut a, 4, "bump", "c2").await), "1");
    leave(&second, a).await;

    // A server whose counter reads another format: c2 ends, naming both formats.
    let third = server(store, true);
    let (mut a, _s) = hinted(&third, "alice").await;
    let after = list(&mut a).await;
    assert_eq!(open_names(&after), Vec::<String>::new(), "{after:#}");
    let c2 = ended(&after)
        .into_iter()
        .find(|(k, _)| k == "counter:c2")
        .expect("c2 ended");
    assert!(
        c2.1.contains("format 1") && c2.1.contains("format 2"),
        "{}",
        c2.1
    );
}
