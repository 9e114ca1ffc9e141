//! The stateless profile's host rules (`docs/rfc014-stateless.md`): vectors S5, S6 and S7,
//! and the property issue #40 asks for — results delivered late, twice or never, and
//! change notifications lost, leave the view equal to the server's statement once one
//! request completes.

use super::*;
use mcpl_protocol::hints::{HintEntries, ToolDefinition, ToolHint, ToolsetChange};
use mcpl_protocol::stateless::{StampedTool, StampedToolset};
use proptest::prelude::*;

const GO: &str = "go";
const TOOLS: [&str; 2] = ["go_play", "go_pass"];

fn toolset_of(name: &str) -> Option<String> {
    name.split('_').next().map(str::to_owned)
}

fn tool(name: &str, instance: &str, visible: bool, v: u64) -> StampedTool {
    StampedTool {
        hint: ToolHint {
            name: name.to_owned(),
            instance: Some(instance.to_owned()),
            visible: Some(visible),
            ..ToolHint::default()
        },
        v,
    }
}

fn set(instance: &str, state: ToolsetState, title: Option<String>, v: u64) -> StampedToolset {
    let closed = state == ToolsetState::Closed;
    StampedToolset {
        change: ToolsetChange {
            toolset: GO.to_owned(),
            instance: Some(instance.to_owned()),
            state,
            title,
            reason: closed.then(|| "over".to_owned()),
            ended: closed.then(|| format!("e{v}")),
        },
        v,
    }
}

fn key(name: &str, instance: &str) -> PairKey {
    (name.to_owned(), Some(instance.to_owned()))
}

/// A server as the profile describes it: a version, every entry with its stamp, closed
/// instances kept as tombstones up to a bound (the oldest forgotten first).
#[derive(Debug, Clone, Default)]
struct Model {
    version: u64,
    tools: BTreeMap<PairKey, (u64, bool)>,
    sets: BTreeMap<PairKey, (u64, ToolsetState, Option<String>)>,
    /// Each instance's newest close, kept after the same name opens again (profile §2).
    tombs: BTreeMap<PairKey, u64>,
    forgotten: u64,
}

/// At most this many tombstones kept by the model: small, so statements happen.
const MODEL_CLOSED: usize = 2;

#[derive(Debug, Clone)]
enum Op {
    /// Opens an instance with one of its tools visible, or both.
    Open(u8, u8),
    Toggle(u8, u8),
    Retitle(u8),
    Close(u8),
}

impl Model {
    fn is_open(&self, i: &str) -> bool {
        matches!(self.sets.get(&key(GO, i)), Some((_, ToolsetState::Open, _)))
    }

    /// Applies `op`; the change's version when it changed anything.
    fn step(&mut self, op: &Op) -> Option<u64> {
        let i = |n: &u8| format!("g{}", n % 3);
        match op {
            Op::Open(n, which) if !self.is_open(&i(n)) => {
                let v = self.bump();
                self.sets.insert(
                    key(GO, &i(n)),
                    (v, ToolsetState::Open, Some(format!("t{v}"))),
                );
                for (at, t) in TOOLS.iter().enumerate() {
                    if *which % 3 == 2 || *which as usize % 3 == at {
                        self.tools.insert(key(t, &i(n)), (v, true));
                    }
                }
                Some(v)
            }
            Op::Toggle(n, t) if self.is_open(&i(n)) => {
                let v = self.bump();
                let k = key(TOOLS[*t as usize % 2], &i(n));
                let visible = !self.tools.get(&k).is_some_and(|e| e.1);
                self.tools.insert(k, (v, visible));
                Some(v)
            }
            Op::Retitle(n) if self.is_open(&i(n)) => {
                let v = self.bump();
                self.sets.insert(
                    key(GO, &i(n)),
                    (v, ToolsetState::Open, Some(format!("t{v}"))),
                );
                Some(v)
            }
            Op::Close(n) if self.is_open(&i(n)) => {
                let v = self.bump();
                self.sets
                    .insert(key(GO, &i(n)), (v, ToolsetState::Closed, None));
                self.tombs.insert(key(GO, &i(n)), v);
                self.tools
                    .retain(|k, _| k.1.as_deref() != Some(i(n).as_str()));
                self.forget();
                Some(v)
            }
            _ => None,
        }
    }

    fn bump(&mut self) -> u64 {
        self.version += 1;
        self.version
    }

    fn forget(&mut self) {
        while self.tombs.len() > MODEL_CLOSED {
            let (k, v) = self
                .tombs
                .iter()
                .min_by_key(|(_, v)| **v)
                .map(|(k, v)| (k.clone(), *v))
                .expect("some");
            self.tombs.remove(&k);
            if self
                .sets
                .get(&k)
                .is_some_and(|s| s.1 == ToolsetState::Closed)
            {
                self.sets.remove(&k);
            }
            self.forgotten = self.forgotten.max(v);
        }
    }

    /// What a result written now says to a request sent with `since` (profile §3.3).
    fn answer(&self, since: u64) -> VersionedHints {
        let statement = since == 0 || since < self.forgotten;
        let after = if statement { 0 } else { since };
        VersionedHints {
            version: self.version,
            statement,
            entries: HintEntries {
                tools: self
                    .tools
                    .iter()
                    .filter(|(_, e)| e.0 > after)
                    .map(|(k, e)| tool(&k.0, k.1.as_deref().unwrap_or(""), e.1, e.0))
                    .collect(), // A tombstone of an instance open again goes before its open entry.
                toolsets: self
                    .tombs
                    .iter()
                    .filter(|(k, v)| **v > after && self.sets.get(*k).is_some_and(|s| s.0 != **v))
                    .map(|(k, v)| set(k.1.as_deref().unwrap_or(""), ToolsetState::Closed, None, *v))
                    .chain(
                        self.sets
                            .iter()
                            .filter(|(_, e)| e.0 > after)
                            .map(|(k, e)| set(k.1.as_deref().unwrap_or(""), e.1, e.2.clone(), e.0)),
                    )
                    .collect(),
                suggest: Vec::new(),
            },
        }
    }

    /// The one change at `v`, as a listen stream carries it.
    fn change(&self, v: u64) -> VersionedHints {
        let mut h = self.answer(v - 1);
        h.statement = false;
        h.version = v;
        h.entries.tools.retain(|t| t.v == v);
        h.entries.toolsets.retain(|t| t.v == v);
        h
    }

    fn visible(&self) -> BTreeMap<PairKey, Option<ToolDefinition>> {
        self.tools
            .iter()
            .filter(|(_, e)| e.1)
            .map(|(k, _)| (k.clone(), None))
            .collect()
    }

    fn open(&self) -> BTreeMap<PairKey, Option<String>> {
        self.sets
            .iter()
            .filter(|(_, e)| e.1 == ToolsetState::Open)
            .map(|(k, e)| (k.clone(), e.2.clone()))
            .collect()
    }
}

#[test]
fn stateless_s05_a_result_older_than_one_applied_changes_nothing() {
    let mut view = StampedView::new();
    let newer = VersionedHints {
        version: 7,
        entries: HintEntries {
            tools: vec![tool("go_play", "g1", false, 7)],
            toolsets: vec![set("g1", ToolsetState::Open, Some("B".into()), 5)],
            ..Default::default()
        },
        ..VersionedHints::default()
    };
    let older = VersionedHints {
        version: 6,
        entries: HintEntries {
            tools: vec![tool("go_play", "g1", true, 6)],
            toolsets: vec![set("g1", ToolsetState::Open, Some("A".into()), 4)],
            ..Default::default()
        },
        ..VersionedHints::default()
    };
    view.apply(&newer, StampedCarrier::Complete { since: 0 }, toolset_of);
    let before = (view.visible(), view.open(), view.since());
    let applied = view.apply(&older, StampedCarrier::Complete { since: 0 }, toolset_of);
    assert_eq!(applied.stale, 2);
    assert_eq!((view.visible(), view.open(), view.since()), before);
    assert_eq!(view.since(), 7);
}

#[test]
fn stateless_s06_a_lost_result_is_made_good_by_the_next() {
    let mut server = Model::default();
    let mut view = StampedView::new();
    server.step(&Op::Open(1, 2));
    view.apply(
        &server.answer(0),
        StampedCarrier::Complete { since: 0 },
        toolset_of,
    );
    // A call closes the game; its result is lost. The next request's result carries it.
    server.step(&Op::Close(1));
    let _lost = server.answer(view.since());
    let sent = view.since();
    let next = server.answer(sent);
    assert!(!next.statement);
    let applied = view.apply(&next, StampedCarrier::Complete { since: sent }, toolset_of);
    assert_eq!(applied.ended.len(), 1, "the end is told once: {applied:?}");
    assert_eq!(view.visible(), server.visible());
    assert_eq!(view.open(), server.open());
}

#[test]
fn stateless_s07_a_closed_instance_is_not_brought_back_by_an_older_entry() {
    let mut view = StampedView::new();
    let close = VersionedHints {
        version: 9,
        entries: HintEntries {
            toolsets: vec![set("g1", ToolsetState::Closed, None, 9)],
            ..Default::default()
        },
        ..VersionedHints::default()
    };
    let late = VersionedHints {
        version: 8,
        entries: HintEntries {
            tools: vec![tool("go_play", "g1", true, 8)],
            toolsets: vec![set("g1", ToolsetState::Open, None, 7)],
            ..Default::default()
        },
        ..VersionedHints::default()
    };
    view.apply(&close, StampedCarrier::Change, toolset_of);
    let applied = view.apply(&late, StampedCarrier::Change, toolset_of);
    assert_eq!(applied.stale, 2);
    assert!(view.visible().is_empty());
    assert!(view.open().is_empty());
    // The same instance opened again, later, is a new game.
    let again = VersionedHints {
        version: 10,
        entries: HintEntries {
            tools: vec![tool("go_play", "g1", true, 10)],
            toolsets: vec![set("g1", ToolsetState::Open, None, 10)],
            ..Default::default()
        },
        ..VersionedHints::default()
    };
    view.apply(&again, StampedCarrier::Change, toolset_of);
    assert_eq!(view.visible().len(), 1);
}

#[test]
fn stateless_a_change_raises_the_mark_only_when_it_is_the_next() {
    let mut view = StampedView::new();
    let at = |v| VersionedHints {
        version: v,
        entries: HintEntries {
            tools: vec![tool("go_play", "g1", v % 2 == 0, v)],
            ..Default::default()
        },
        ..VersionedHints::default()
    };
    view.apply(&at(3), StampedCarrier::Complete { since: 0 }, toolset_of);
    assert_eq!(view.since(), 3);
    view.apply(&at(5), StampedCarrier::Change, toolset_of);
    assert_eq!(view.since(), 3, "4 was not heard");
    view.apply(&at(4), StampedCarrier::Change, toolset_of);
    assert_eq!(
        view.since(),
        4,
        "4 heard late; 5 is not re-counted by a change"
    );
    view.apply(&at(6), StampedCarrier::Complete { since: 4 }, toolset_of);
    assert_eq!(view.since(), 6);
}

#[test]
fn stateless_a_statement_drops_what_it_does_not_state_and_keeps_what_is_newer() {
    let mut view = StampedView::new();
    view.apply(
        &VersionedHints {
            version: 4,
            entries: HintEntries {
                tools: vec![
                    tool("go_play", "g1", true, 3),
                    tool("go_play", "g2", true, 4),
                ],
                ..Default::default()
            },
            ..VersionedHints::default()
        },
        StampedCarrier::Complete { since: 0 },
        toolset_of,
    );
    view.apply(
        &VersionedHints {
            version: 6,
            entries: HintEntries {
                tools: vec![tool("go_pass", "g2", true, 6)],
                ..Default::default()
            },
            ..VersionedHints::default()
        },
        StampedCarrier::Change,
        toolset_of,
    );
    // A statement at 5 (written before the change at 6) states only g2's play.
    view.apply(
        &VersionedHints {
            version: 5,
            statement: true,
            entries: HintEntries {
                tools: vec![tool("go_play", "g2", true, 4)],
                ..Default::default()
            },
        },
        StampedCarrier::Complete { since: 0 },
        toolset_of,
    );
    let keys: Vec<PairKey> = view.visible().into_keys().collect();
    assert_eq!(keys, vec![key("go_pass", "g2"), key("go_play", "g2")]);
    // An older entry of the key the statement left out stays out.
    view.apply(
        &VersionedHints {
            version: 3,
            entries: HintEntries {
                tools: vec![tool("go_play", "g1", true, 3)],
                ..Default::default()
            },
            ..VersionedHints::default()
        },
        StampedCarrier::Change,
        toolset_of,
    );
    assert_eq!(view.visible().len(), 2);
}

#[test]
fn stateless_past_the_bound_nothing_new_is_kept_and_the_next_answer_is_a_statement() {
    let mut view = StampedView::new();
    let many: Vec<StampedTool> = (0..StampedView::MAX_ENTRIES as u64 + 10)
        .map(|n| tool("go_play", &format!("g{n}"), true, 2))
        .collect();
    let applied = view.apply(
        &VersionedHints {
            version: 2,
            entries: HintEntries {
                tools: many,
                ..Default::default()
            },
            ..VersionedHints::default()
        },
        StampedCarrier::Complete { since: 0 },
        toolset_of,
    );
    assert_eq!(applied.over_bound, 10);
    assert_eq!(view.visible().len(), StampedView::MAX_ENTRIES);
    assert_eq!(view.since(), 0, "the next request asks for a statement");
}

/// A visible tool of instance `instance` with its own definition: a description of
/// `size` bytes.
fn defined(instance: &str, size: usize, v: u64) -> StampedTool {
    let mut t = tool("go_play", instance, true, v);
    t.hint.definition = Some(ToolDefinition {
        description: Some("x".repeat(size)),
        ..ToolDefinition::default()
    });
    t
}

#[test]
fn stateless_past_the_byte_bound_nothing_heavier_is_kept_and_the_next_answer_is_a_statement() {
    // The bytes held are bounded, not only the keys: ten definitions of 100 KiB fit in
    // 1 MiB, the eleventh does not.
    let mut view = StampedView::with_max_bytes(1 << 20);
    let heavy: Vec<StampedTool> = (0..11u64)
        .map(|n| defined(&format!("g{n}"), 100 << 10, 2))
        .collect();
    let applied = view.apply(
        &VersionedHints {
            version: 2,
            entries: HintEntries {
                tools: heavy,
                ..Default::default()
            },
            ..VersionedHints::default()
        },
        StampedCarrier::Complete { since: 0 },
        toolset_of,
    );
    assert_eq!(applied.over_bound, 1, "{applied:?}");
    assert_eq!(view.visible().len(), 10);
    assert!(view.bytes() <= view.max_bytes(), "{}", view.bytes());
    assert_eq!(view.since(), 0, "the next request asks for a statement");
    // A held entry may not grow past the bound either; a lighter value replaces it, and
    // what it weighed is given back.
    let grown = view.apply(
        &VersionedHints {
            version: 3,
            entries: HintEntries {
                tools: vec![defined("g0", 200 << 10, 3)],
                ..Default::default()
            },
            ..VersionedHints::default()
        },
        StampedCarrier::Complete { since: 0 },
        toolset_of,
    );
    assert_eq!(grown.over_bound, 1, "{grown:?}");
    let before = view.bytes();
    let lighter = view.apply(
        &VersionedHints {
            version: 4,
            entries: HintEntries {
                tools: vec![defined("g0", 10, 4)],
                ..Default::default()
            },
            ..VersionedHints::default()
        },
        StampedCarrier::Complete { since: 0 },
        toolset_of,
    );
    assert_eq!(lighter.over_bound, 0, "{lighter:?}");
    assert!(
        view.bytes() < before - (90 << 10),
        "{} vs {before}",
        view.bytes()
    );
    // A statement dropping everything leaves nothing weighed.
    view.apply(
        &VersionedHints {
            version: 5,
            statement: true,
            ..VersionedHints::default()
        },
        StampedCarrier::Complete { since: 0 },
        toolset_of,
    );
    assert_eq!((view.visible().len(), view.bytes()), (0, 0));
}

/// One step of a schedule: the server changes, the host sends a request (its result is
/// written now and delivered later, or never), or a message in flight is delivered,
/// delivered twice, or lost.
#[derive(Debug, Clone)]
enum Step {
    Server(Op),
    Request,
    Deliver(usize),
    Duplicate(usize),
    Lose(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (any::<u8>(), any::<u8>()).prop_map(|(n, w)| Op::Open(n, w)),
        (any::<u8>(), any::<u8>()).prop_map(|(n, t)| Op::Toggle(n, t)),
        any::<u8>().prop_map(Op::Retitle),
        any::<u8>().prop_map(Op::Close),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => op().prop_map(Step::Server),
        2 => Just(Step::Request),
        3 => any::<usize>().prop_map(Step::Deliver),
        1 => any::<usize>().prop_map(Step::Duplicate),
        1 => any::<usize>().prop_map(Step::Lose),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Issue #40's property: whatever arrives late, twice or never, once one request
    /// completes the view is the server's statement.
    #[test]
    fn stateless_any_delivery_converges_after_one_complete_request(
        steps in proptest::collection::vec(step(), 0..80),
    ) {
        let mut server = Model::default();
        let mut view = StampedView::new();
        let mut flight: Vec<(VersionedHints, StampedCarrier)> = Vec::new();
        for s in &steps {
            match s {
                Step::Server(op) => {
                    if let Some(v) = server.step(op) {
                        flight.push((server.change(v), StampedCarrier::Change));
                    }
                }
                Step::Request => {
                    let since = view.since();
                    flight.push((server.answer(since), StampedCarrier::Complete { since }));
                }
                Step::Deliver(n) | Step::Duplicate(n) | Step::Lose(n) if !flight.is_empty() => {
                    let at = n % flight.len();
                    let (hints, carrier) = if matches!(s, Step::Duplicate(_)) {
                        flight[at].clone()
                    } else {
                        flight.remove(at)
                    };
                    if !matches!(s, Step::Lose(_)) {
                        view.apply(&hints, carrier, toolset_of);
                    }
                }
                _ => {}
            }
            prop_assert!(view.since() <= server.version, "the mark never passes the server");
            prop_assert_eq!(view.bytes(), view.weigh_again(), "the weight kept is what is held");
        }
        let since = view.since();
        view.apply(&server.answer(since), StampedCarrier::Complete { since }, toolset_of);
        prop_assert_eq!(view.visible(), server.visible());
        prop_assert_eq!(view.open(), server.open());
        prop_assert_eq!(view.since(), server.version);
    }
}
