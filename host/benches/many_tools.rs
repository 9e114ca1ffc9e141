//! A server with many dynamic tools, through the host's pure cores as the `Host` drives
//! them (`state/mod.rs`, "Wiring"): how long settling takes — the connect-time statement
//! (every tool visible, one in ten redefined) and the complete `tools/list`, each fed to
//! the hint state, the catalog and the presenter, and the model's tool list built — and
//! how long one `toolsets--look` over them takes, at 5,000, 10,000 and 20,000 tools.
//!
//! The host's cost per tool should be flat: criterion's per-element throughput should
//! stay the same across the sizes (issue #13 item 9 found it quadratic).
//!
//! Nine tools in ten belong to a declared toolset (one per 100 tools, every one open), the
//! tenth is dynamic outside toolsets, so every tool is usable and `look` lists them all.
//!
//! `cargo bench -p mcpl-host --bench many_tools -- --warm-up-time 1 --measurement-time 5`

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mcpl_host::state::{
    Catalog, Conversation, ConversationConfig, HintConfig, HintState, MetaConfig, MetaTools, Plan,
    Presenter, PresenterConfig, ServerView, ToldIds, ToolPolicy, World,
};
use mcpl_protocol::hints::{HintChanges, HintEntries, ToolDefinition, ToolHint};
use mcpl_protocol::mcpl::McplManifest;
use mcpl_protocol::toolsets::OpenRecord;
use mcpl_protocol::{Meta, Presence, Tool};
use serde_json::json;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

const SIZES: [usize; 3] = [5_000, 10_000, 20_000];
const PER_TOOLSET: usize = 100;
const SERVER: &str = "many";

/// What the server says: its manifest, its statement and its tools.
struct Fixture {
    manifest: McplManifest,
    statement: HintChanges,
    open: Vec<OpenRecord>,
    tools: Arc<[Tool]>,
}

fn toolset(s: usize) -> String {
    format!("set{s:04}")
}

fn fixture(n: usize) -> Fixture {
    let sets = n.div_ceil(PER_TOOLSET);
    let declared: serde_json::Map<String, serde_json::Value> = (0..sets)
        .map(|s| (toolset(s), json!({"title": format!("Set {s}")})))
        .collect();
    let manifest = serde_json::from_value(json!({
        "version": "0.5", "toolHints": true, "pushEvents": true, "toolsets": declared
    }))
    .expect("a manifest");
    let tools: Vec<Tool> = (0..n)
        .map(|i| {
            let mut t = Tool::new(
                format!("tool{i:06}"),
                format!("Tool number {i}: does one small thing."),
                json!({"type": "object",
                    "properties": {"x": {"type": "integer", "minimum": 0, "maximum": 9},
                                   "note": {"type": "string", "description": "why"}},
                    "required": ["x"]}),
            );
            t.meta = Some(Meta {
                presence: (i % 10 == 9).then_some(Presence::Dynamic),
                toolset: (i % 10 != 9).then(|| toolset(i / PER_TOOLSET)),
                ..Default::default()
            });
            t
        })
        .collect();
    let statement = HintChanges {
        rev: 1,
        entries: HintEntries {
            tools: (0..n)
                .map(|i| ToolHint {
                    name: format!("tool{i:06}"),
                    visible: Some(true),
                    definition: (i % 10 == 5).then(|| ToolDefinition {
                        description: Some(format!("tool {i}, redefined")),
                        ..Default::default()
                    }),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        },
    };
    let open = (0..sets)
        .map(|s| OpenRecord {
            toolset: toolset(s),
            instance: None,
            title: None,
            options: None,
        })
        .collect();
    Fixture {
        manifest,
        statement,
        open,
        tools: tools.into(),
    }
}

/// One server's cores, settled.
struct Settled {
    catalog: Catalog,
    hints: HintState,
    policy: ToolPolicy,
    presenter: Presenter,
    conversation: Conversation,
    /// Characters of notices shown while settling.
    told: usize,
}

impl Settled {
    fn view(&self) -> ServerView<'_> {
        view(&self.catalog, &self.hints, &self.policy)
    }
}

/// The server as the presenter and the meta-tools read it.
fn view<'a>(catalog: &'a Catalog, hints: &'a HintState, policy: &'a ToolPolicy) -> ServerView<'a> {
    ServerView {
        name: SERVER,
        catalog,
        hints: Some(hints),
        policy,
        push_events: true,
        connected: true,
        down_because: None,
    }
}

/// What the Host does from the connect-time reads on: the statement, then the listing.
fn settle(f: &Fixture) -> Settled {
    let now = Instant::now();
    let mut s = Settled {
        catalog: Catalog::new(true, Some(&f.manifest)),
        hints: HintState::new(HintConfig::ordered()),
        policy: ToolPolicy::allow_all(),
        presenter: Presenter::new(PresenterConfig::default(), ToldIds::new(1024)),
        conversation: Conversation::new(ConversationConfig::default()),
        told: 0,
    };
    let outs = s.hints.handle_statement(&f.statement, &f.open, &[], now);
    let shown = s
        .presenter
        .ingest(&view(&s.catalog, &s.hints, &s.policy), &outs);
    s.told += shown.iter().map(|m| m.text.len()).sum::<usize>();
    let outs = s.hints.handle_tools_list_shared(&f.tools, 1);
    let hints = &s.hints;
    s.catalog
        .set_tools_shared(f.tools.clone(), |t| hints.presence(t));
    let shown = s
        .presenter
        .ingest(&view(&s.catalog, &s.hints, &s.policy), &outs);
    s.told += shown.iter().map(|m| m.text.len()).sum::<usize>();
    let bounds = *s.presenter.bounds();
    let views = [view(&s.catalog, &s.hints, &s.policy)];
    s.conversation.rebuild_tool_list(&views, &bounds);
    s
}

/// One `toolsets--look` with no arguments; its answer's length.
fn look(s: &Settled, meta: &mut MetaTools) -> usize {
    let views = [s.view()];
    let world = World {
        servers: &views,
        presenter: &s.presenter,
    };
    match meta.plan("toolsets--look", &json!({}), &world) {
        Plan::Answer(a) => a.result.joined_text().len(),
        other => panic!("look answers locally: {other:?}"),
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("many_tools");
    g.sample_size(10);
    for n in SIZES {
        let f = fixture(n);
        let settled = settle(&f);
        // A notice words at most `max_tool_lines` of them and counts the rest.
        assert!(
            settled.told > 0 && settled.told < 64 * 1024,
            "the tools were told, within the bound: {}",
            settled.told
        );
        let mut meta = MetaTools::new(MetaConfig::default());
        assert!(look(&settled, &mut meta) > n * 100, "look shows every tool");
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("settle", n), &f, |b, f| {
            b.iter_batched(|| (), |()| settle(f), BatchSize::PerIteration)
        });
        g.bench_with_input(BenchmarkId::new("look", n), &settled, |b, s| {
            b.iter(|| black_box(look(s, &mut meta)))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
