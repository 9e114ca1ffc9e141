//! How many hint-carrying messages per second a connection's `HintState` applies (§5.2):
//! in rev order (an ordered link), and with one message in ten arriving before its
//! predecessor on an unordered link (held, then drained when the predecessor comes).
//!
//! Each message is a `tools/hints` of one visibility entry for one of 64 dynamic tools,
//! after a connect-time statement; a batch is 10,000 messages on a fresh state.
//!
//! `cargo bench -p mcpl-host --bench hint_state -- --warm-up-time 1 --measurement-time 3`

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use mcpl_host::state::{Carrier, HintConfig, HintState};
use mcpl_protocol::hints::{HintEntries, ToolHint};
use mcpl_protocol::{HintChanges, Meta, Presence, Tool};
use serde_json::json;
use std::hint::black_box;
use std::time::Instant;

const MESSAGES: u64 = 10_000;
const TOOLS: usize = 64;

fn tools() -> Vec<Tool> {
    (0..TOOLS)
        .map(|i| {
            let mut t = Tool::new(format!("t{i}"), "a dynamic tool", json!({"type": "object"}));
            t.meta = Some(Meta {
                presence: Some(Presence::Dynamic),
                ..Default::default()
            });
            t
        })
        .collect()
}

/// A state past its connect-time statement (rev 1), with the tools listed.
fn connected(config: HintConfig, now: Instant) -> HintState {
    let mut h = HintState::new(config);
    h.handle_tools_list(&tools(), 0);
    h.handle_statement(
        &HintChanges {
            rev: 1,
            ..Default::default()
        },
        &[],
        &[],
        now,
    );
    h
}

/// Revs 2..=MESSAGES+1, each a visibility entry.
fn messages() -> Vec<HintChanges> {
    (0..MESSAGES)
        .map(|i| HintChanges {
            rev: i + 2,
            entries: HintEntries {
                tools: vec![ToolHint {
                    name: format!("t{}", i as usize % TOOLS),
                    visible: Some(i % 3 != 0),
                    ..Default::default()
                }],
                ..Default::default()
            },
        })
        .collect()
}

/// The same, with the second of every ten swapped with the first: one in ten early.
fn one_in_ten_early() -> Vec<HintChanges> {
    let mut m = messages();
    for block in m.chunks_mut(10) {
        block.swap(0, 1);
    }
    m
}

fn apply(mut h: HintState, batch: Vec<HintChanges>, now: Instant) -> HintState {
    for c in batch {
        black_box(h.handle_hints(Carrier::Standalone, c, now));
    }
    assert_eq!(h.last_rev(), MESSAGES + 1, "every message applied");
    h
}

fn bench(c: &mut Criterion) {
    let now = Instant::now();
    let mut g = c.benchmark_group("hint_state");
    g.throughput(Throughput::Elements(MESSAGES));
    g.sample_size(20);
    g.bench_function("in_order", |b| {
        b.iter_batched(
            || (connected(HintConfig::ordered(), now), messages()),
            |(h, batch)| apply(h, batch, now),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("unordered_10pct_early", |b| {
        b.iter_batched(
            || (connected(HintConfig::unordered(), now), one_in_ten_early()),
            |(h, batch)| {
                let h = apply(h, batch, now);
                assert_eq!(h.stats().held, MESSAGES / 10);
                assert_eq!(h.stats().recoveries, 0);
                h
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
