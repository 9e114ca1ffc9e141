//! The event trace of a deterministic run: every tool call an agent makes and every
//! message it is shown, in the order they happen (one thread, virtual time: that order is
//! itself part of what must replay), hashed with SHA-256.
//!
//! Each event is normalised before it is hashed, so that nothing the wall clock shaped can
//! reach the digest even if a server put it on the wire: opaque ended ids (`e<hex>-<n>`,
//! an epoch in nanoseconds) become first-seen ordinals (`id#0`, `id#1`, …) and RFC 3339
//! timestamps become `<time>`.

use crate::agent::Observer;
use mcpl_host::host::Shown;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Hex digits an ended id's epoch has at least (nanoseconds since 1970 have 15).
const MIN_EPOCH_DIGITS: usize = 8;

/// The trace: an [`Observer`] that hashes what it sees. See the module docs.
#[derive(Default)]
pub struct Trace {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    hasher: Sha256,
    events: u64,
    ids: BTreeMap<String, usize>,
    kept: Option<Vec<String>>,
}

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trace")
            .field("events", &self.events())
            .finish_non_exhaustive()
    }
}

impl Trace {
    /// A trace; `keep` also keeps every normalised event (to compare two runs' traces).
    pub fn new(keep: bool) -> Self {
        Trace {
            inner: Mutex::new(Inner {
                kept: keep.then(Vec::new),
                ..Default::default()
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds one event.
    pub fn record(&self, event: &str) {
        let mut inner = self.lock();
        let line = normalise(event, &mut inner.ids);
        inner.hasher.update(line.as_bytes());
        // An event may span lines: its length ends it unambiguously.
        inner.hasher.update((line.len() as u64).to_le_bytes());
        inner.events += 1;
        if let Some(kept) = &mut inner.kept {
            kept.push(line);
        }
    }

    /// Events recorded.
    pub fn events(&self) -> u64 {
        self.lock().events
    }

    /// The SHA-256 of every event so far, in hex.
    pub fn digest(&self) -> String {
        let sum = self.lock().hasher.clone().finalize();
        sum.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The normalised events, when kept.
    pub fn kept(&self) -> Option<Vec<String>> {
        self.lock().kept.clone()
    }
}

impl Observer for Trace {
    fn calling(&self, agent: &str, tool: &str, args: &Value) {
        self.record(&format!("{agent} > {tool} {args}"));
    }

    fn shown(&self, agent: &str, shown: &Shown) {
        self.record(&format!(
            "{agent} < #{} {:?} {}\n{}",
            shown.seq,
            shown.kind,
            shown.server.as_deref().unwrap_or("-"),
            shown.text
        ));
    }
}

/// `text` with ended ids replaced by first-seen ordinals (numbered in `ids`) and RFC 3339
/// timestamps by `<time>`.
pub fn normalise(text: &str, ids: &mut BTreeMap<String, usize>) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        let boundary = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        if boundary && let Some(n) = timestamp_len(&b[i..]) {
            out.push_str(&text[copied..i]);
            out.push_str("<time>");
            i += n;
            copied = i;
            continue;
        }
        if boundary && let Some(n) = ended_id_len(&b[i..]) {
            out.push_str(&text[copied..i]);
            let next = ids.len();
            let k = *ids.entry(text[i..i + n].to_owned()).or_insert(next);
            out.push_str(&format!("id#{k}"));
            i += n;
            copied = i;
            continue;
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

fn run_of(b: &[u8], f: impl Fn(u8) -> bool) -> usize {
    b.iter().take_while(|&&c| f(c)).count()
}

/// `e<hex>-<digits>` not followed by a letter or digit.
fn ended_id_len(b: &[u8]) -> Option<usize> {
    if b.first() != Some(&b'e') {
        return None;
    }
    let hex = run_of(&b[1..], |c| {
        c.is_ascii_hexdigit() && !c.is_ascii_uppercase()
    });
    if hex < MIN_EPOCH_DIGITS || b.get(1 + hex) != Some(&b'-') {
        return None;
    }
    let digits = run_of(&b[2 + hex..], |c| c.is_ascii_digit());
    let n = 2 + hex + digits;
    (digits > 0 && b.get(n).is_none_or(|c| !c.is_ascii_alphanumeric())).then_some(n)
}

/// `YYYY-MM-DDTHH:MM:SS`, optional fraction, then `Z` or `±HH:MM`.
fn timestamp_len(b: &[u8]) -> Option<usize> {
    const SHAPE: &[u8] = b"dddd-dd-ddTdd:dd:dd";
    if b.len() < SHAPE.len() + 1 {
        return None;
    }
    let fits = SHAPE.iter().zip(b).all(|(s, c)| match s {
        b'd' => c.is_ascii_digit(),
        s => s == c,
    });
    if !fits {
        return None;
    }
    let mut n = SHAPE.len();
    if b[n] == b'.' {
        let frac = run_of(&b[n + 1..], |c| c.is_ascii_digit());
        if frac == 0 {
            return None;
        }
        n += 1 + frac;
    }
    match b.get(n) {
        Some(b'Z') => Some(n + 1),
        Some(b'+' | b'-') => {
            let z = b.get(n + 1..n + 6)?;
            let ok = z[0].is_ascii_digit()
                && z[1].is_ascii_digit()
                && z[2] == b':'
                && z[3].is_ascii_digit()
                && z[4].is_ascii_digit();
            ok.then_some(n + 6)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ended_ids_become_first_seen_ordinals() {
        let mut ids = BTreeMap::new();
        let a = normalise(
            "ended e18a2b3c4d5e6f70-3 and e18a2b3c4d5e6f70-4, again e18a2b3c4d5e6f70-3.",
            &mut ids,
        );
        assert_eq!(a, "ended id#0 and id#1, again id#0.");
        let b = normalise("then e99999999999-1", &mut ids);
        assert_eq!(b, "then id#2");
        // Not ids: too short an epoch, a word around it, no number after the dash.
        for keep in ["e5-3", "the18a2b3c4d5-1", "e18a2b3c4d5-x", "e18a2b3c4d5-1b"] {
            assert_eq!(normalise(keep, &mut ids), keep);
        }
    }

    #[test]
    fn timestamps_are_dropped() {
        let mut ids = BTreeMap::new();
        assert_eq!(
            normalise(
                "Ended [a/go:g1] at 2026-01-01T00:00:03.25Z: \"x\"; 2026-02-03T04:05:06+01:00.",
                &mut ids
            ),
            "Ended [a/go:g1] at <time>: \"x\"; <time>."
        );
        for keep in ["2026-01-01", "2026-01-01T00:00:03", "2026-01-01T00:00:03.Z"] {
            assert_eq!(normalise(keep, &mut ids), keep);
        }
    }

    #[test]
    fn the_digest_depends_on_every_event_and_their_order() {
        let digest = |events: &[&str]| {
            let t = Trace::new(false);
            for e in events {
                t.record(e);
            }
            t.digest()
        };
        let ab = digest(&["a", "b"]);
        assert_eq!(ab.len(), 64);
        assert_eq!(ab, digest(&["a", "b"]));
        assert_ne!(ab, digest(&["b", "a"]));
        assert_ne!(ab, digest(&["ab"]));
        assert_ne!(
            digest(&["at 2026-01-01T00:00:00Z e0123456789a-1"]),
            digest(&["at 2026-01-01T00:00:00Z"]),
        );
        assert_eq!(
            digest(&["at 2026-01-01T00:00:00Z e0123456789a-1"]),
            digest(&["at 2031-05-01T10:00:00Z e0fedcba98765-7"]),
        );
    }
}
