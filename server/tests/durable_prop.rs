//! Durable state under random play (issue #15): random sequences of opens, moves, ends,
//! closes and restarts — some from a store file cut short, as a crash or a full disk
//! leaves one — never panic, and never bring back an instance that ended or was closed
//! (§4.3). A restart from an intact file gives back exactly what was open, each instance
//! where it was.
//!
//! Each life of the server runs in an actix `System` of its own, on a thread of its own,
//! so that ending the life drops every actor and closes the `redb` file, as a process exit
//! does. A panic anywhere fails the case. proptest prints the failing sequence (shrunk)
//! and its seed, and keeps the seed in `proptest-regressions/` so a failure replays.

use crate::support;

use mcpl_protocol::mcp::Tool;
use mcpl_server::{
    Durable, InstanceContext, InstanceLogic, RedbStore, Reply, Server, Started, ToolCall, Toolset,
};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use support::{TestClient, hinted, open, request};

#[derive(Serialize, Deserialize)]
struct Counter {
    n: u64,
}

impl InstanceLogic for Counter {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        if call.tool() == "finish" {
            cx.end("finished");
            return Reply::text("Over.");
        }
        self.n += 1;
        Reply::text(self.n.to_string())
    }
}

impl Durable for Counter {
    const FORMAT: u32 = 1;
}

fn server(store: RedbStore) -> Result<Server, String> {
    let tool = |n: &str| Tool::new(n, n, json!({"type": "object"}));
    let counter = Toolset::new("counter")
        .instances()
        .tool(tool("bump"))
        .tool(tool("finish"))
        .on_open(|_, _| Ok(Started::durable(Counter { n: 0 })))
        .durable::<Counter>();
    Server::builder("durable-prop", "0.1.0")
        .toolset(counter)
        .principal_config(mcpl_server::PrincipalConfig {
            max_open: 1024,
            ..Default::default()
        })
        .store(Arc::new(store))
        .build()
        .map_err(|e| e.to_string())
}

/// One thing a player does; an index picks one of the instances open.
#[derive(Debug, Clone)]
enum Op {
    Open,
    Bump(usize),
    Finish(usize),
    Close(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => Just(Op::Open),
        4 => any::<usize>().prop_map(Op::Bump),
        1 => any::<usize>().prop_map(Op::Finish),
        1 => any::<usize>().prop_map(Op::Close),
    ]
}

/// One life: what is done, then how the process ends — cleanly, or with the store file
/// cut to this many thousandths of its length.
#[derive(Debug, Clone)]
struct Life {
    ops: Vec<Op>,
    cut: Option<u16>,
}

fn life() -> impl Strategy<Value = Life> {
    (
        prop::collection::vec(op(), 0..8),
        prop::option::weighted(0.3, 0u16..1000),
    )
        .prop_map(|(ops, cut)| Life { ops, cut })
}

/// What the test knows: the instances open with their counts, and every one gone.
#[derive(Debug, Default)]
struct Model {
    open: BTreeMap<String, u64>,
    gone: BTreeSet<String>,
    next: u64,
    /// The last life ended with its file intact: the next one must find exactly `open`.
    intact: bool,
}

/// What a life saw at its start, and the model it leaves.
struct Seen {
    listed: Option<BTreeSet<String>>,
    model: Model,
}

async fn call_in(c: &mut TestClient, tool: &str, instance: &str) -> Value {
    c.exchange(request(
        json!(tool),
        "tools/call",
        json!({"name": tool, "arguments": {}, "_meta": {"mcpl/instance": instance}}),
    ))
    .await
}

fn text(reply: &Value) -> String {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Runs one life on its own thread and `System`; `None` listed: the store did not open.
fn run_life(path: PathBuf, ops: Vec<Op>, model: Model) -> Seen {
    std::thread::spawn(move || {
        actix::System::new().block_on(async move { play(&path, ops, model).await })
    })
    .join()
    .expect("a life of the server panicked")
}

async fn play(path: &Path, ops: Vec<Op>, mut model: Model) -> Seen {
    let store = match RedbStore::open(path) {
        Ok(s) => s,
        Err(_) => {
            return Seen {
                listed: None,
                model,
            };
        }
    };
    let server = match server(store) {
        Ok(s) => s,
        Err(_) => {
            return Seen {
                listed: None,
                model,
            };
        }
    };
    let (mut c, _session) = hinted(&server, "alice").await;
    let list = c
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    let listed: BTreeSet<String> = list["result"]["open"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["instance"].as_str().map(str::to_owned))
        .collect();
    // What the restart lost is gone for good.
    let lost: Vec<String> = model
        .open
        .keys()
        .filter(|k| !listed.contains(*k))
        .cloned()
        .collect();
    for k in lost {
        model.open.remove(&k);
        model.gone.insert(k);
    }
    let seen_listed = listed.clone();
    for op in ops {
        let names: Vec<String> = model.open.keys().cloned().collect();
        let pick = |i: usize| names.get(i % names.len().max(1)).cloned();
        match op {
            Op::Open => {
                model.next += 1;
                let name = format!("c{}", model.next);
                let r = c.exchange(open(1, "counter", Some(&name), None)).await;
                assert!(r.get("result").is_some(), "{r:#}");
                model.open.insert(name, 0);
            }
            Op::Bump(i) => {
                let Some(name) = pick(i) else { continue };
                let r = call_in(&mut c, "bump", &name).await;
                let n = model.open.get_mut(&name).expect("open");
                *n += 1;
                if model.intact {
                    assert_eq!(text(&r), n.to_string(), "{name} goes on where it was");
                } else {
                    // After a cut file a count may be a step behind: follow the server.
                    *n = text(&r).parse().expect("a count");
                }
            }
            Op::Finish(i) => {
                let Some(name) = pick(i) else { continue };
                call_in(&mut c, "finish", &name).await;
                model.open.remove(&name);
                model.gone.insert(name);
            }
            Op::Close(i) => {
                let Some(name) = pick(i) else { continue };
                c.exchange(request(
                    json!("close"),
                    "toolsets/close",
                    json!({"toolset": "counter", "instance": name}),
                ))
                .await;
                model.open.remove(&name);
                model.gone.insert(name);
            }
        }
    }
    Seen {
        listed: Some(seen_listed),
        model,
    }
}

/// Cuts the store file to `thousandths` of its length (a torn write, a full disk).
fn cut(path: &Path, thousandths: u16) {
    let Ok(len) = std::fs::metadata(path).map(|m| m.len()) else {
        return;
    };
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_len(len * u64::from(thousandths) / 1000).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn restarts_and_cut_files_never_panic_nor_bring_back_an_ended_instance(
        lives in prop::collection::vec(life(), 1..6)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.redb");
        let mut model = Model { intact: true, ..Model::default() };
        for life in lives {
            let expected: BTreeSet<String> = model.open.keys().cloned().collect();
            let intact = model.intact;
            let gone = model.gone.clone();
            let seen = run_life(path.clone(), life.ops, model);
            model = seen.model;
            match seen.listed {
                Some(listed) => {
                    let back: Vec<&String> = listed.intersection(&gone).collect();
                    prop_assert!(back.is_empty(), "ended instances came back: {back:?}");
                    if intact {
                        prop_assert_eq!(listed, expected);
                    }
                }
                None => {
                    // The store did not open (a cut file): an operator starts afresh.
                    prop_assert!(!intact, "an intact store failed to open");
                    let _ = std::fs::remove_file(&path);
                    model.gone.extend(std::mem::take(&mut model.open).into_keys());
                }
            }
            model.intact = life.cut.is_none();
            if let Some(t) = life.cut {
                cut(&path, t);
            }
        }
    }
}
