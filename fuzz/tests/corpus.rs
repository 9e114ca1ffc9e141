//! Replays the committed seeds (`corpus/<target>/seed-*`) through each target's check, on
//! stable Rust and without a fuzzer: the seeds are shown to satisfy the properties, and a
//! crash input saved as a `seed-` file stays fixed. (What fuzzing adds to `corpus/` locally
//! is not committed and not replayed here.)

use std::path::Path;

fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut seeds: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a readable corpus entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("seed-"))
        })
        .collect();
    seeds.sort();
    assert!(
        seeds.len() >= 3,
        "{target}: only {} committed seeds in {}",
        seeds.len(),
        dir.display()
    );
    for path in seeds {
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        eprintln!("{target}: {}", path.display());
        check(&data);
    }
}

#[test]
fn jsonrpc_decode_corpus() {
    replay("jsonrpc_decode", mcpl_fuzz::jsonrpc::check);
}

#[test]
fn go_move_parse_corpus() {
    replay("go_move_parse", mcpl_fuzz::go_move::check);
}

#[test]
fn hint_state_corpus() {
    replay("hint_state", mcpl_fuzz::hint_state::check);
}

#[test]
fn server_request_corpus() {
    replay("server_request", mcpl_fuzz::server::check);
}
