//! Encode and decode of typical messages: a `tools/call` request and its result, and a
//! `tools/hints` notification whose `HintChanges` has 20 entries; and the typed decode (the
//! message, then its params) of the `tools/call` request and of the hint changes.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcpl_protocol::HintEntries;
use mcpl_protocol::hints::{HintChanges, ToolDefinition, ToolHint, ToolsetChange, ToolsetState};
use mcpl_protocol::jsonrpc::{Id, Message, Notification, Request, Response};
use mcpl_protocol::mcp::{CallToolParams, CallToolResult};
use mcpl_protocol::meta::Meta;
use mcpl_protocol::method::{CallTool, ToolHints};
use serde_json::json;
use std::hint::black_box;

fn tools_call() -> Message {
    let params = CallToolParams {
        name: "play".into(),
        arguments: Some(
            json!({"move": "D4"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        ),
        meta: Some(Meta::with_instance("g1")),
    };
    Message::Request(Request::new::<CallTool>(Id::Number(42), &params))
}

fn tools_call_result() -> Message {
    let mut r = CallToolResult::text(
        "Black played D4. White to move.\n   A B C D E F G H J\n 9 . . . . . . . . . 9",
    );
    r.meta = Some(Meta::with_hints(HintChanges {
        rev: 7,
        entries: HintEntries {
            tools: vec![ToolHint {
                name: "play".into(),
                instance: Some("g1".into()),
                visible: Some(false),
                ..Default::default()
            }],
            ..Default::default()
        },
    }));
    Message::Response(Response::ok_typed(Id::Number(42), &r))
}

fn hints_20() -> Message {
    let mut tools: Vec<ToolHint> = (0..18)
        .map(|i| ToolHint {
            name: format!("tool_{i}"),
            instance: Some(format!("g{}", i % 3)),
            visible: Some(i % 2 == 0),
            ..Default::default()
        })
        .collect();
    tools.push(ToolHint {
        name: "play".into(),
        instance: Some("g1".into()),
        definition: Some(ToolDefinition {
            description: Some("Play a move".into()),
            input_schema: Some(json!({"type": "object", "properties": {"move": {"enum": ["A1", "B2", "C3", "D4", "E5", "pass"]}}, "required": ["move"]})),
            ..Default::default()
        }),
        ..Default::default()
    });
    let toolsets = vec![ToolsetChange {
        toolset: "go".into(),
        instance: Some("g0".into()),
        state: ToolsetState::Closed,
        title: None,
        reason: Some("White wins by 3.5".into()),
        ended: Some("e-12".into()),
    }];
    let h = HintChanges {
        rev: 12,
        entries: HintEntries {
            tools,
            toolsets,
            suggest: vec![],
        },
    };
    assert_eq!(h.entries.tools.len() + h.entries.toolsets.len(), 20);
    Message::Notification(Notification::new::<ToolHints>(&h.into()))
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("jsonrpc");
    for (name, msg) in [
        ("tools_call", tools_call()),
        ("tools_call_result", tools_call_result()),
        ("hint_changes_20", hints_20()),
    ] {
        let text = msg.encode();
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(format!("encode/{name}"), |b| {
            b.iter(|| black_box(&msg).encode())
        });
        g.bench_function(format!("decode/{name}"), |b| {
            b.iter(|| Message::decode(black_box(text.as_bytes())).expect("decodes"))
        });
    }
    let text = hints_20().encode();
    g.bench_function("decode_typed/hint_changes_20", |b| {
        b.iter(|| {
            let Ok(Message::Notification(n)) = Message::decode(black_box(text.as_bytes())) else {
                unreachable!()
            };
            n.params_as::<HintChanges>().expect("typed")
        })
    });
    let text = tools_call().encode();
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("decode_typed/tools_call", |b| {
        b.iter(|| {
            let Ok(Message::Request(r)) = Message::decode(black_box(text.as_bytes())) else {
                unreachable!()
            };
            r.params_as::<CallToolParams>().expect("typed")
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
