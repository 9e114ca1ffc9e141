//! The upstream manifest-digest conformance vectors (SPEC §17.2), every one of them, as
//! `upstream/conformance/CONSUMING.md` asks: canonical JSON, then SHA-256 hex, then the
//! revision, so a failure says which step broke; each negative vector refuses with its
//! named error; the comparator vectors test the set order alone.
//!
//! The file is `tests/data/manifest-digest-vectors.json`, a verbatim copy (see the README
//! beside it). The vectors are read as plain JSON, not through this crate's types.

use mcpl_protocol::digest::{canonical_json, revision_of_value, set_normalise};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

const VECTORS: &str = include_str!("data/manifest-digest-vectors.json");

fn vectors() -> Value {
    serde_json::from_str(VECTORS).expect("the vector file is JSON")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn spec_17_2_every_upstream_manifest_vector_gives_its_digest_or_its_error() {
    let file = vectors();
    let list = file["vectors"].as_array().expect("vectors");
    assert_eq!(list.len(), 25, "the file holds 25 manifest vectors");
    let mut digests = HashMap::new();
    let mut failures = Vec::new();
    for v in list {
        let name = v["name"].as_str().expect("name");
        let input = &v["input"];
        if let Some(code) = v["expectError"].as_str() {
            match revision_of_value(input) {
                Err(e) if e.code() == code => {}
                other => failures.push(format!("{name}: expected {code}, got {other:?}")),
            }
            continue;
        }
        let canonical = match canonical_json(input) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{name}: refused: {e}"));
                continue;
            }
        };
        if canonical != v["canonicalJson"].as_str().unwrap() {
            failures.push(format!(
                "{name}: canonical JSON differs\n  got:  {canonical}\n  want: {}",
                v["canonicalJson"]
            ));
            continue;
        }
        let sha = hex(&Sha256::digest(canonical.as_bytes()));
        if sha != v["sha256Hex"].as_str().unwrap() {
            failures.push(format!("{name}: sha256 differs"));
            continue;
        }
        let revision = revision_of_value(input).unwrap();
        if revision != v["digest"].as_str().unwrap() {
            failures.push(format!("{name}: digest {revision} differs"));
            continue;
        }
        digests.insert(name.to_owned(), revision);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The vectors' cross-assertions.
    for v in list {
        let name = v["name"].as_str().unwrap();
        if let Some(same) = v["sameDigestAs"].as_str() {
            assert_eq!(digests[name], digests[same], "{name} = {same}");
        }
        if let Some(other) = v["differentDigestFrom"].as_str() {
            assert_ne!(digests[name], digests[other], "{name} != {other}");
        }
    }
}

#[test]
fn spec_17_2_every_upstream_comparator_vector_sorts_by_utf8_bytes() {
    let file = vectors();
    let list = file["sortVectors"].as_array().expect("sortVectors");
    assert_eq!(list.len(), 4);
    for v in list {
        let strings = |k: &str| -> Vec<String> {
            v[k].as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_owned())
                .collect()
        };
        let mut got = strings("input");
        set_normalise(&mut got);
        assert_eq!(got, strings("sorted"), "{}", v["name"]);
    }
}

/// The copy must not drift from the upstream file when both are at hand (they are on a
/// developer's machine; a clean clone elsewhere has only the copy).
#[test]
fn the_copy_matches_the_upstream_file_when_present() {
    let upstream = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/spec/upstream/conformance/manifest-digest-vectors.json");
    if let Ok(text) = std::fs::read_to_string(&upstream) {
        assert_eq!(text, VECTORS, "tests/data is out of date with {upstream:?}");
    }
}
