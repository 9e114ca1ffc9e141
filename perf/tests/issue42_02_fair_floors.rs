//! Issue #42, item 2: each floor is built with the runtime shape of the server it is
//! compared with — as many threads as the light server's arbiters, each a current-thread
//! runtime, and the latency measurement's pinning — and the report says so, in the JSON
//! and in the table's notes. One test: the floors' threads are counted in this process.

use sim_perf::floor::{FLOOR_RUNTIME, FLOOR_THREADS, FloorShape, HttpEcho, WsEcho};
use sim_perf::{Measure, PerfConfig, run};
use std::time::Duration;

/// This process's threads named as the floors' are.
fn floor_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc")
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.trim_end() == FLOOR_THREADS)
        })
        .count()
}

fn tiny(only: &[Measure], server_threads: usize) -> PerfConfig {
    PerfConfig {
        only: only.to_vec(),
        connections: 4,
        ws_in_flight: 4,
        http_in_flight: 2,
        calls: Some(100),
        rounds: 2,
        latency_warmup: 10,
        latency_calls: 100,
        server_threads,
        drop_limit: Duration::from_secs(5),
        ..Default::default()
    }
}

#[test]
fn issue42_02_floors_run_on_the_servers_threads_and_the_report_says_how() {
    // A floor beside a server of three arbiters runs on three threads, and stops them all.
    assert_eq!(floor_threads(), 0);
    let ws = WsEcho::start(FloorShape::like_server(3, None)).expect("the WebSocket floor");
    assert_eq!(
        floor_threads(),
        3,
        "as many threads as the server's arbiters"
    );
    assert_eq!(ws.shape().threads, 3);
    assert_eq!(ws.shape().runtime, FLOOR_RUNTIME);
    drop(ws);
    assert_eq!(floor_threads(), 0, "all stopped with it");
    let http = HttpEcho::start(FloorShape::like_server(2, None)).expect("the HTTP floor");
    assert_eq!(floor_threads(), 2);
    drop(http);
    assert_eq!(floor_threads(), 0);

    // Measured beside a server of two arbiters: every call answered by floors of two
    // threads, which the JSON and the table's notes name.
    let report = run(&tiny(&[Measure::Ws, Measure::Http], 2)).expect("measured");
    for (name, floor) in [("ws", &report.floors.ws), ("http", &report.floors.http)] {
        let floor = floor.as_ref().unwrap_or_else(|| panic!("no {name} floor"));
        assert!(floor.complete(), "{name}: {floor:?}");
    }
    let json = serde_json::to_value(&report).expect("JSON");
    for name in ["ws_shape", "http_shape"] {
        let shape = &json["floors"][name];
        assert_eq!(shape["threads"], 2, "{name}: {json}");
        assert_eq!(shape["runtime"], FLOOR_RUNTIME, "{name}");
        assert_eq!(shape["mirrors"], "the server's 2 actix arbiters", "{name}");
        assert!(
            shape["pinned_cpu"].is_null(),
            "{name}: throughput is not pinned"
        );
    }
    assert_eq!(json["setup"]["server_threads"], 2);
    let table = report.table();
    assert_eq!(
        table
            .matches(&format!("built as the server: 2 threads, {FLOOR_RUNTIME}"))
            .count(),
        2,
        "{table}"
    );

    // Latency, pinned (last: the pinning holds this thread from then on): its floor on the
    // same CPU as the server, the report says which.
    let report = run(&tiny(&[Measure::Latency], 1)).expect("measured");
    let cpu = report.latency.as_ref().and_then(|l| l.pinned_cpu);
    assert!(cpu.is_some(), "latency pins its threads by default");
    let shape = report.floors.latency_shape.as_ref().expect("its shape");
    assert_eq!((shape.threads, shape.pinned_cpu), (1, cpu));
    assert!(
        report.table().contains(&format!(
            "built as the server: 1 thread, {FLOOR_RUNTIME}, pinned to CPU"
        )),
        "{}",
        report.table()
    );
}
