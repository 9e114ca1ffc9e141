//! Property test: `HintState` against a model server, over generated delivery orders (§5.2).
//!
//! A model server runs a random script — instances opened, closed and retitled, visibility
//! flips per instance, shared and per-instance definitions, the lobby toggled, presence
//! moves, suggestions, and two faults the host must absorb: a push with `coalesce` and
//! junk hints, and a second push under a seen `eventId` with junk hints — numbering every
//! hint-carrying message with consecutive revs as it writes it. The test delivers them to a
//! `HintState` in a generated order (any order on an unordered link; the written order on
//! an ordered one), drops some, lets generated time pass (the hold timer fires at its
//! deadlines) and injects `look` re-reads. When the state asks to recover, the model answers
//! with its truth at a generated later moment: a full statement taking the next rev, then,
//! once that is read, a `tools/list` naming the current rev. At the end the rest of the
//! script and a final message are written and everything is delivered until quiet.
//!
//! Invariants:
//! - at every step: `last` never goes back; at most one recovery at a time, and
//!   `is_recovering` agrees with the reads outstanding; each visibility, open/close,
//!   presence change, suggestion and ended id is reported once (a shadow built only from
//!   the outputs agrees with the state, and never sees a change twice);
//! - once quiet: visibility, definitions, presence and open toolsets equal the server's
//!   truth, nothing is held, `last` is the server's last rev, every ended record was
//!   reported;
//! - over the run: every path was taken (holds resolved and expired, gaps, stale revs,
//!   superseded messages, duplicates, coalesced pushes, recoveries).
//!
//! Replay: on failure proptest prints the minimal failing input and saves its seed in
//! `tests/hint_state_props.proptest-regressions`, replayed first by every later run. The
//! run's seed is printed as well: `PROPTEST_RNG_SEED=<seed> cargo test -p mcpl-host --test
//! hint_state_props` repeats the whole run. `PROPTEST_CASES=<n>` changes the case count.

use mcpl_host::state::{Carrier, Change, HintConfig, HintState, HintStats, Output, ResultOf};
use mcpl_protocol::hints::{
    HintEntries, SuggestAction, Suggestion, ToolDefinition, ToolHint, ToolsetChange,
};
use mcpl_protocol::toolsets::{EndedRecord, OpenRecord};
use mcpl_protocol::{HintChanges, Id, Meta, Presence, Tool, ToolsetState};
use proptest::prelude::*;
use proptest::test_runner::{
    Config, FileFailurePersistence, RngSeed, TestCaseError, TestError, TestRunner,
};
use serde_json::json;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

type Key = (String, Option<String>);

const INSTANCES: [&str; 3] = ["g1", "g2", "g3"];
const GAME: [&str; 2] = ["play", "pass"];
const ALL: [&str; 6] = ["play", "pass", "seek", "roam", "mover", "clock"];
/// Tools that are never static: every visibility change of theirs must be reported.
const SHADOWED: [&str; 4] = ["play", "pass", "seek", "roam"];

fn key(a: &str, b: Option<&str>) -> Key {
    (a.to_owned(), b.map(str::to_owned))
}

fn toolset_of(tool: &str) -> Option<&'static str> {
    match tool {
        "play" | "pass" => Some("game"),
        "seek" => Some("lobby"),
        _ => None,
    }
}

fn vis_hint(tool: &str, instance: Option<&str>, visible: bool) -> ToolHint {
    ToolHint {
        name: tool.into(),
        instance: instance.map(Into::into),
        visible: Some(visible),
        ..Default::default()
    }
}

fn description(tool: &str, variant: u8) -> String {
    format!("{tool} variant {variant}")
}

fn schema(variant: u8) -> serde_json::Value {
    json!({"type": "object", "properties": {"move": {"enum": [variant]}}})
}

/// A definition hint carrying a foreign name and `_meta` the host must ignore (vector 20).
fn def_hint(tool: &str, instance: Option<&str>, variant: u8) -> ToolHint {
    let d = ToolDefinition {
        name: Some("junk".into()),
        description: Some(description(tool, variant)),
        input_schema: Some(schema(variant)),
        annotations: None,
        meta: Some(Meta {
            toolset: Some("elsewhere".into()),
            ..Default::default()
        }),
    };
    ToolHint {
        name: tool.into(),
        instance: instance.map(Into::into),
        definition: Some(d),
        ..Default::default()
    }
}

fn entry(toolset: &str, instance: Option<&str>, state: ToolsetState) -> ToolsetChange {
    ToolsetChange {
        toolset: toolset.into(),
        instance: instance.map(Into::into),
        state,
        title: None,
        reason: None,
        ended: None,
    }
}

/// One script step as generated; the server turns any value into a valid change.
#[derive(Debug, Clone, Copy)]
struct Op {
    kind: u8,
    a: u8,
    b: u8,
    carrier: u8,
}

/// One scheduling choice.
#[derive(Debug, Clone, Copy)]
struct Step {
    action: u8,
    param: u8,
}

#[derive(Debug, Clone)]
struct Case {
    ordered: bool,
    script: Vec<Op>,
    steps: Vec<Step>,
}

/// What travels from the server to the host.
#[derive(Debug, Clone)]
enum Wire {
    Hints {
        carrier: Carrier,
        changes: HintChanges,
    },
    Statement {
        changes: HintChanges,
        open: Vec<OpenRecord>,
        ended: Vec<EndedRecord>,
        look: bool,
    },
    ToolsList {
        tools: Vec<Tool>,
        rev: u64,
    },
}

#[derive(Debug, Clone)]
struct Flight {
    seq: usize,
    wire: Wire,
    droppable: bool,
    /// A duplicate push: only deliverable after its original, and lost with it.
    dup_of: Option<usize>,
}

/// The model server: the truth, and the rev counter.
#[derive(Debug, Default)]
struct Server {
    rev: u64,
    open: BTreeMap<Key, Option<String>>,
    visible: BTreeSet<Key>,
    defs: BTreeMap<Key, u8>,
    mover_dynamic: bool,
    ended: Vec<EndedRecord>,
    serial: u32,
}

impl Server {
    fn serial(&mut self) -> u32 {
        self.serial += 1;
        self.serial
    }

    fn presence(&self, tool: &str) -> Presence {
        match tool {
            "clock" => Presence::Static,
            "mover" if !self.mover_dynamic => Presence::Static,
            _ => Presence::Dynamic,
        }
    }

    fn declared(&self, name: &str) -> Tool {
        let mut t = Tool::new(name, format!("{name} declared"), json!({"type": "object"}));
        let meta = match name {
            "play" | "seek" => Meta {
                toolset: toolset_of(name).map(Into::into),
                ..Default::default()
            },
            // Vector 16: a toolset's tool listed static is dynamic.
            "pass" => Meta {
                toolset: Some("game".into()),
                presence: Some(Presence::Static),
                ..Default::default()
            },
            "roam" | "mover" => Meta {
                presence: Some(self.presence(name)),
                ..Default::default()
            },
            _ => Meta::default(),
        };
        t.meta = (!meta.is_empty()).then_some(meta);
        t
    }

    fn tools(&self) -> Vec<Tool> {
        ALL.iter().map(|n| self.declared(n)).collect()
    }

    /// The truth's definition: the instance's own, else the shared one, else the listed.
    fn definition(&self, tool: &str, instance: Option<&str>) -> Tool {
        let mut t = self.declared(tool);
        let own = instance.and_then(|i| self.defs.get(&key(tool, Some(i))));
        if let Some(v) = own.or_else(|| self.defs.get(&key(tool, None))) {
            t.description = Some(description(tool, *v));
            t.input_schema = schema(*v);
        }
        t
    }

    fn carrier(&mut self, c: u8) -> Carrier {
        match c % 4 {
            0 => Carrier::Result {
                of: ResultOf::CallTool,
                request: Id::Number(self.serial() as i64),
            },
            1 => Carrier::Result {
                of: ResultOf::ToolsetsOpen,
                request: Id::Number(self.serial() as i64),
            },
            2 => Carrier::Push {
                event_id: format!("ev{}", self.serial()),
                coalesce: false,
            },
            _ => Carrier::Standalone,
        }
    }

    /// Hints the host must never apply: the opposite of the truth.
    fn junk(&self, rev: u64) -> HintChanges {
        let roam = self.visible.contains(&key("roam", None));
        let mover = if self.mover_dynamic {
            Presence::Static
        } else {
            Presence::Dynamic
        };
        let tools = vec![
            vis_hint("roam", None, !roam),
            ToolHint {
                name: "mover".into(),
                presence: Some(mover),
                ..Default::default()
            },
            def_hint("roam", None, 99),
        ];
        HintChanges {
            rev,
            entries: HintEntries {
                tools,
                ..Default::default()
            },
        }
    }

    /// Writes one script step: one message, or a push and its duplicate.
    fn write(&mut self, op: Op) -> Vec<(Wire, bool)> {
        if op.kind % 10 == 9 {
            // §5.2: a push with `coalesce` must not carry hints; a host ignores them.
            self.rev += 1;
            let carrier = Carrier::Push {
                event_id: format!("ev{}", self.serial()),
                coalesce: true,
            };
            return vec![(
                Wire::Hints {
                    carrier,
                    changes: self.junk(self.rev),
                },
                true,
            )];
        }
        let mut h = HintChanges::default();
        self.change(op, &mut h);
        self.rev += 1;
        h.rev = self.rev;
        let carrier = self.carrier(op.carrier);
        let dup = match &carrier {
            Carrier::Push { event_id, .. } if (op.carrier / 4).is_multiple_of(3) => {
                Some(event_id.clone())
            }
            _ => None,
        };
        let mut out = vec![(
            Wire::Hints {
                carrier,
                changes: h,
            },
            true,
        )];
        if let Some(event_id) = dup {
            // Vector 35: the same event id again, with hints that must be ignored.
            self.rev += 1;
            let carrier = Carrier::Push {
                event_id,
                coalesce: false,
            };
            out.push((
                Wire::Hints {
                    carrier,
                    changes: self.junk(self.rev),
                },
                true,
            ));
        }
        out
    }

    fn change(&mut self, op: Op, h: &mut HintChanges) {
        let inst = INSTANCES[op.a as usize % 3];
        let tool = GAME[op.b as usize % 2];
        let game_open = self.open.contains_key(&key("game", Some(inst)));
        match op.kind % 10 {
            0 => self.open_or_retitle(inst, op.b, h),
            1 if game_open => self.close(inst, op.b, h),
            1 => self.open_or_retitle(inst, op.b, h),
            2 if game_open => {
                let v = op.b & 2 == 0;
                self.set_visible(tool, Some(inst), v);
                h.entries.tools.push(vis_hint(tool, Some(inst), v));
            }
            3 => {
                let target = (game_open && op.a % 4 != 3).then_some(inst);
                let v = op.b % 4;
                self.defs.insert(key(tool, target), v);
                h.entries.tools.push(def_hint(tool, target, v));
            }
            4 => self.toggle_lobby(op.b, h),
            6 => {
                self.mover_dynamic = !self.mover_dynamic;
                let mut t = ToolHint {
                    name: "mover".into(),
                    presence: Some(self.presence("mover")),
                    ..Default::default()
                };
                if self.mover_dynamic {
                    // A tool that becomes dynamic is stated with its visibility.
                    let v = op.b.is_multiple_of(2);
                    self.set_visible("mover", None, v);
                    t.visible = Some(v);
                } else {
                    self.visible.remove(&key("mover", None));
                }
                h.entries.tools.push(t);
                if op.b.is_multiple_of(3) {
                    // Vector 16: an explicit static on a toolset's tool is ignored.
                    h.entries.tools.push(ToolHint {
                        name: "play".into(),
                        presence: Some(Presence::Static),
                        ..Default::default()
                    });
                }
            }
            7 => {
                let v = op.b % 4;
                self.defs.insert(key("roam", None), v);
                h.entries.tools.push(def_hint("roam", None, v));
            }
            8 => h.entries.suggest.push(Suggestion {
                toolset: "game".into(),
                instance: Some(inst.into()),
                action: SuggestAction::Open,
                reason: format!("challenge {}", self.serial()),
                options: None,
            }),
            _ => {
                let v = !self.visible.contains(&key("roam", None));
                self.set_visible("roam", None, v);
                h.entries.tools.push(vis_hint("roam", None, v));
            }
        }
    }

    fn set_visible(&mut self, tool: &str, instance: Option<&str>, v: bool) {
        if v {
            self.visible.insert(key(tool, instance));
        } else {
            self.visible.remove(&key(tool, instance));
        }
    }

    fn open_or_retitle(&mut self, inst: &str, b: u8, h: &mut HintChanges) {
        let title = format!("{inst} #{}", self.serial());
        let fresh = !self.open.contains_key(&key("game", Some(inst)));
        self.open
            .insert(key("game", Some(inst)), Some(title.clone()));
        let mut e = entry("game", Some(inst), ToolsetState::Open);
        e.title = Some(title);
        h.entries.toolsets.push(e);
        if fresh && b.is_multiple_of(2) {
            self.set_visible("play", Some(inst), true);
            h.entries.tools.push(vis_hint("play", Some(inst), true));
        }
    }

    fn close(&mut self, inst: &str, b: u8, h: &mut HintChanges) {
        let id = format!("e{}", self.serial());
        self.open.remove(&key("game", Some(inst)));
        for t in GAME {
            if b.is_multiple_of(2) && self.visible.contains(&key(t, Some(inst))) {
                // Servers may also state the tools invisible; either way they go.
                h.entries.tools.push(vis_hint(t, Some(inst), false));
            }
            self.visible.remove(&key(t, Some(inst)));
            self.defs.remove(&key(t, Some(inst)));
        }
        let mut e = entry("game", Some(inst), ToolsetState::Closed);
        e.reason = Some("game over".into());
        e.ended = Some(id.clone());
        h.entries.toolsets.push(e);
        let record = EndedRecord {
            id,
            toolset: "game".into(),
            instance: Some(inst.into()),
            reason: "game over".into(),
            at: "2026-01-01T00:00:00Z".into(),
        };
        self.ended.push(record);
    }

    fn toggle_lobby(&mut self, b: u8, h: &mut HintChanges) {
        let k = key("lobby", None);
        if self.open.remove(&k).is_some() {
            let id = format!("e{}", self.serial());
            self.visible.remove(&key("seek", None));
            let mut e = entry("lobby", None, ToolsetState::Closed);
            e.ended = Some(id.clone());
            h.entries.toolsets.push(e);
            let at = "2026-01-01T00:00:00Z".into();
            self.ended.push(EndedRecord {
                id,
                toolset: "lobby".into(),
                instance: None,
                reason: "closed".into(),
                at,
            });
        } else {
            self.open.insert(k, Some("Lobby".into()));
            let mut e = entry("lobby", None, ToolsetState::Open);
            e.title = Some("Lobby".into());
            h.entries.toolsets.push(e);
            let v = b.is_multiple_of(2);
            self.set_visible("seek", None, v);
            h.entries.tools.push(vis_hint("seek", None, v));
        }
    }

    /// §4.3: a full statement of the dynamic tools, taking the next rev.
    fn statement(&mut self, look: bool) -> Wire {
        self.rev += 1;
        let mut tools: Vec<ToolHint> = self
            .visible
            .iter()
            .filter(|(t, _)| self.presence(t) == Presence::Dynamic)
            .map(|(t, i)| vis_hint(t, i.as_deref(), true))
            .collect();
        tools.extend(
            self.defs
                .iter()
                .map(|((t, i), v)| def_hint(t, i.as_deref(), *v)),
        );
        tools.push(ToolHint {
            name: "mover".into(),
            presence: Some(self.presence("mover")),
            ..Default::default()
        });
        let open = self
            .open
            .iter()
            .map(|((ts, i), title)| OpenRecord {
                toolset: ts.clone(),
                instance: i.clone(),
                title: title.clone(),
                options: None,
            })
            .collect();
        let changes = HintChanges {
            rev: self.rev,
            entries: HintEntries {
                tools,
                ..Default::default()
            },
        };
        Wire::Statement {
            changes,
            open,
            ended: self.ended.clone(),
            look,
        }
    }
}

/// The reads the test owes the host (the owner's side of §5.2's recovery).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reads {
    Idle,
    WantStatement { initial: bool },
    StatementInFlight { initial: bool },
    WantToolsList,
    ToolsListInFlight,
}

struct Harness {
    host: HintState,
    server: Server,
    ordered: bool,
    now: Instant,
    start: Instant,
    flight: Vec<Flight>,
    seq: usize,
    delivered: BTreeSet<usize>,
    reads: Reads,
    in_recovery: bool,
    /// A statement has been read: the connect-time read is over (any statement ends it).
    connected: bool,
    last_seen: u64,
    shadow_visible: BTreeSet<Key>,
    shadow_open: BTreeSet<Key>,
    shadow_presence: BTreeMap<String, Presence>,
    suggestions: BTreeSet<String>,
    ended_reported: BTreeSet<String>,
    /// What happened, printed with a failure.
    trace: Vec<String>,
}

impl Harness {
    fn new(ordered: bool) -> Result<Self, TestCaseError> {
        let config = if ordered {
            HintConfig::ordered()
        } else {
            HintConfig::unordered()
        };
        let server = Server::default();
        let start = Instant::now();
        let mut host = HintState::new(config);
        // At connect the owner reads tools/list and then toolsets/list, unasked.
        prop_assert!(host.handle_tools_list(&server.tools(), 0).is_empty());
        let shadow_presence = ALL
            .iter()
            .map(|t| (t.to_string(), host.presence(t).unwrap()))
            .collect();
        Ok(Harness {
            host,
            server,
            ordered,
            now: start,
            start,
            flight: Vec::new(),
            seq: 0,
            delivered: BTreeSet::new(),
            reads: Reads::WantStatement { initial: true },
            in_recovery: false,
            connected: false,
            last_seen: 0,
            shadow_visible: BTreeSet::new(),
            shadow_open: BTreeSet::new(),
            shadow_presence,
            suggestions: BTreeSet::new(),
            ended_reported: BTreeSet::new(),
            trace: Vec::new(),
        })
    }

    fn send(&mut self, wire: Wire, droppable: bool, dup_of: Option<usize>) -> usize {
        self.seq += 1;
        self.trace
            .push(format!("write #{} {}", self.seq, brief(&wire)));
        self.flight.push(Flight {
            seq: self.seq,
            wire,
            droppable,
            dup_of,
        });
        self.seq
    }

    fn write_op(&mut self, op: Op) {
        let mut first = None;
        for (wire, droppable) in self.server.write(op) {
            let seq = self.send(wire, droppable, first);
            first.get_or_insert(seq);
        }
    }

    /// Answers an outstanding read now, if there is one.
    fn answer(&mut self) -> bool {
        match self.reads {
            Reads::WantStatement { initial } => {
                let w = self.server.statement(false);
                self.send(w, false, None);
                self.reads = Reads::StatementInFlight { initial };
                true
            }
            Reads::WantToolsList => {
                let w = Wire::ToolsList {
                    tools: self.server.tools(),
                    rev: self.server.rev,
                };
                self.send(w, false, None);
                self.reads = Reads::ToolsListInFlight;
                true
            }
            _ => false,
        }
    }

    fn eligible(&self) -> Vec<usize> {
        if self.ordered {
            return if self.flight.is_empty() {
                vec![]
            } else {
                vec![0]
            };
        }
        (0..self.flight.len())
            .filter(|i| {
                self.flight[*i]
                    .dup_of
                    .is_none_or(|o| self.delivered.contains(&o))
            })
            .collect()
    }

    fn deliver_some(&mut self, param: u8) -> Result<(), TestCaseError> {
        let c = self.eligible();
        if c.is_empty() {
            return Ok(());
        }
        self.deliver(c[param as usize % c.len()])
    }

    fn drop_some(&mut self, param: u8) -> Result<(), TestCaseError> {
        let c: Vec<usize> = self
            .eligible()
            .into_iter()
            .filter(|i| self.flight[*i].droppable)
            .collect();
        if c.is_empty() {
            return self.deliver_some(param);
        }
        let f = self.flight.remove(c[param as usize % c.len()]);
        self.trace.push(format!("drop #{}", f.seq));
        self.flight.retain(|g| g.dup_of != Some(f.seq));
        Ok(())
    }

    fn deliver(&mut self, index: usize) -> Result<(), TestCaseError> {
        let f = self.flight.remove(index);
        self.trace.push(format!(
            "deliver #{} at +{:?}",
            f.seq,
            self.now - self.start
        ));
        self.delivered.insert(f.seq);
        let out = match f.wire {
            Wire::Hints { carrier, changes } => self.host.handle_hints(carrier, changes, self.now),
            Wire::Statement {
                changes,
                open,
                ended,
                look,
            } => {
                if !look {
                    match self.reads {
                        Reads::StatementInFlight { initial: true } => self.reads = Reads::Idle,
                        Reads::StatementInFlight { initial: false } => {
                            self.reads = Reads::WantToolsList
                        }
                        r => prop_assert!(false, "a recovery statement arrived while {r:?}"),
                    }
                }
                self.connected = true;
                self.host
                    .handle_statement(&changes, &open, &ended, self.now)
            }
            Wire::ToolsList { tools, rev } => {
                prop_assert_eq!(self.reads, Reads::ToolsListInFlight);
                self.reads = Reads::Idle;
                self.in_recovery = false;
                self.host.handle_tools_list(&tools, rev)
            }
        };
        self.after(out)
    }

    /// Lets time pass to `target`, firing the hold timer at each deadline on the way.
    fn advance(&mut self, target: Instant) -> Result<(), TestCaseError> {
        while let Some(d) = self.host.poll_timeout() {
            if d > target {
                break;
            }
            self.now = self.now.max(d);
            self.trace
                .push(format!("timeout at +{:?}", self.now - self.start));
            let out = self.host.handle_timeout(self.now);
            self.after(out)?;
        }
        self.now = self.now.max(target);
        Ok(())
    }

    fn after(&mut self, out: Vec<Output>) -> Result<(), TestCaseError> {
        for o in &out {
            self.trace.push(format!("  -> {o:?}"));
        }
        self.trace.push(format!(
            "  last {} held {} recovering {}",
            self.host.last_rev(),
            self.host.held_count(),
            self.host.is_recovering()
        ));
        for o in out {
            match o {
                Output::Recover(reason) => {
                    if self.connected
                        && matches!(
                            self.reads,
                            Reads::WantStatement { initial: true }
                                | Reads::StatementInFlight { initial: true }
                        )
                    {
                        // A `look` ended the connect-time phase first: the connect-time read
                        // is now just another read, which the host may find stale.
                        for f in &mut self.flight {
                            if let Wire::Statement { look, .. } = &mut f.wire {
                                *look = true;
                            }
                        }
                        self.reads = Reads::Idle;
                    }
                    prop_assert!(
                        !self.in_recovery && self.reads == Reads::Idle,
                        "a second recovery ({reason:?}) while {:?}",
                        self.reads
                    );
                    self.in_recovery = true;
                    self.reads = Reads::WantStatement { initial: false };
                }
                Output::Changed { change, .. } => self.shadow(change)?,
            }
        }
        let last = self.host.last_rev();
        prop_assert!(
            last >= self.last_seen,
            "last went back from {} to {last}",
            self.last_seen
        );
        // A held successor would have been applied; an ordered link holds nothing (§5.2).
        prop_assert!(
            self.host.held_revs().all(|r| r > last + 1),
            "a successor of {last} left held"
        );
        prop_assert!(
            !self.ordered || self.host.held_count() == 0,
            "an ordered link held a message"
        );
        self.last_seen = last;
        prop_assert_eq!(self.host.is_connecting(), !self.connected);
        prop_assert_eq!(self.host.is_recovering(), self.in_recovery);
        Ok(())
    }

    /// Replays outputs onto a shadow: each change must be news.
    fn shadow(&mut self, change: Change) -> Result<(), TestCaseError> {
        match change {
            Change::Visibility {
                tool,
                instance,
                visible,
            } => {
                if SHADOWED.contains(&tool.as_str()) {
                    let k = (tool, instance);
                    if visible {
                        prop_assert!(
                            self.shadow_visible.insert(k.clone()),
                            "{k:?} reported visible twice"
                        );
                    } else {
                        prop_assert!(
                            self.shadow_visible.remove(&k),
                            "{k:?} reported invisible, was not visible"
                        );
                    }
                }
            }
            Change::Opened {
                toolset, instance, ..
            } => {
                let k = (toolset, instance);
                prop_assert!(
                    self.shadow_open.insert(k.clone()),
                    "{k:?} reported opened twice"
                );
            }
            Change::Retitled {
                toolset, instance, ..
            } => {
                prop_assert!(
                    self.shadow_open.contains(&(toolset, instance)),
                    "a retitle of what is not open"
                );
            }
            Change::Closed {
                toolset,
                instance,
                ended,
                ..
            } => {
                let was_open = self
                    .shadow_open
                    .remove(&(toolset.clone(), instance.clone()));
                prop_assert!(was_open || ended.is_some(), "closed twice");
                if let Some(id) = ended {
                    prop_assert!(
                        self.ended_reported.insert(id.clone()),
                        "ended {id} reported twice"
                    );
                }
                self.shadow_visible
                    .retain(|(t, i)| !(i == &instance && toolset_of(t) == Some(toolset.as_str())));
            }
            Change::Presence { tool, presence } => {
                let old = self.shadow_presence.insert(tool.clone(), presence);
                prop_assert_ne!(
                    old,
                    Some(presence),
                    "presence of {} reported unchanged",
                    tool
                );
            }
            Change::Suggested(s) => {
                prop_assert!(
                    self.suggestions.insert(s.reason.clone()),
                    "suggestion reported twice"
                );
            }
            Change::Ended(r) => {
                prop_assert!(
                    self.ended_reported.insert(r.id.clone()),
                    "ended {} reported twice",
                    r.id
                );
            }
            Change::Definition { .. } => {}
        }
        Ok(())
    }

    fn step(
        &mut self,
        step: Step,
        script: &mut std::vec::IntoIter<Op>,
    ) -> Result<(), TestCaseError> {
        match step.action % 8 {
            0 | 1 => match script.next() {
                Some(op) => self.write_op(op),
                None => self.deliver_some(step.param)?,
            },
            2..=4 => self.deliver_some(step.param)?,
            5 => self.advance(self.now + Duration::from_millis(step.param as u64 * 4))?,
            6 => {
                if !self.answer() {
                    if step.param.is_multiple_of(4) {
                        let w = self.server.statement(true);
                        self.send(w, false, None);
                    } else {
                        self.deliver_some(step.param)?;
                    }
                }
            }
            _ if step.param.is_multiple_of(3) => self.drop_some(step.param)?,
            _ => self.deliver_some(step.param)?,
        }
        Ok(())
    }

    /// Writes the rest and a final message, then delivers everything until nothing moves.
    fn quiesce(&mut self, script: std::vec::IntoIter<Op>) -> Result<(), TestCaseError> {
        for op in script {
            self.write_op(op);
        }
        // A final message nobody drops, so a lost tail shows as a gap.
        self.server.rev += 1;
        let changes = HintChanges {
            rev: self.server.rev,
            ..Default::default()
        };
        self.send(
            Wire::Hints {
                carrier: Carrier::Standalone,
                changes,
            },
            false,
            None,
        );
        for _ in 0..10_000 {
            if self.answer() {
                continue;
            }
            if let Some(&i) = self.eligible().first() {
                self.deliver(i)?;
                continue;
            }
            if let Some(d) = self.host.poll_timeout() {
                self.advance(d)?;
                continue;
            }
            return Ok(());
        }
        Err(TestCaseError::fail("did not quiesce"))
    }

    fn check_truth(&self) -> Result<(), TestCaseError> {
        let (h, s) = (&self.host, &self.server);
        prop_assert!(self.flight.is_empty() && self.reads == Reads::Idle && !self.in_recovery);
        prop_assert_eq!((h.held_count(), h.is_recovering()), (0, false));
        prop_assert_eq!(h.last_rev(), s.rev);
        let dynamic = |t: &str| s.presence(t) == Presence::Dynamic;
        let host_visible: BTreeSet<Key> = h
            .visible_tools()
            .filter(|(t, _)| dynamic(t))
            .map(|(t, i)| key(t, i))
            .collect();
        let true_visible: BTreeSet<Key> = s
            .visible
            .iter()
            .filter(|(t, _)| dynamic(t))
            .cloned()
            .collect();
        prop_assert_eq!(&host_visible, &true_visible);
        for t in ALL {
            prop_assert_eq!(h.presence(t), Some(s.presence(t)), "presence of {}", t);
            prop_assert_eq!(
                self.shadow_presence.get(t),
                Some(&s.presence(t)),
                "reported presence of {}",
                t
            );
        }
        for t in SHADOWED {
            for i in [None, Some("g1"), Some("g2"), Some("g3")] {
                prop_assert_eq!(
                    h.definition(t, i),
                    Some(s.definition(t, i)),
                    "definition of {} in {:?}",
                    t,
                    i
                );
            }
        }
        let host_open: BTreeMap<Key, Option<String>> = h
            .open_instances()
            .map(|o| ((o.toolset.clone(), o.instance.clone()), o.title.clone()))
            .collect();
        prop_assert_eq!(&host_open, &s.open);
        let true_shadowed: BTreeSet<Key> = true_visible
            .iter()
            .filter(|(t, _)| SHADOWED.contains(&t.as_str()))
            .cloned()
            .collect();
        prop_assert_eq!(
            &self.shadow_visible,
            &true_shadowed,
            "visibility as reported"
        );
        prop_assert_eq!(
            &self.shadow_open,
            &s.open.keys().cloned().collect::<BTreeSet<_>>(),
            "open as reported"
        );
        let all_ended: BTreeSet<String> = s.ended.iter().map(|r| r.id.clone()).collect();
        prop_assert_eq!(
            &self.ended_reported,
            &all_ended,
            "every ended record reported once"
        );
        Ok(())
    }
}

fn run_case(case: &Case) -> Result<HintStats, TestCaseError> {
    let mut h = Harness::new(case.ordered)?;
    let mut script = case.script.clone().into_iter();
    let result = (|| {
        for step in &case.steps {
            h.step(*step, &mut script)?;
        }
        h.quiesce(script)?;
        h.check_truth()
    })();
    match result {
        Ok(()) => Ok(h.host.stats()),
        Err(e) => Err(TestCaseError::fail(format!(
            "{e}\ntrace:\n{}",
            h.trace.join("\n")
        ))),
    }
}

/// One line about a message, for the trace.
fn brief(w: &Wire) -> String {
    match w {
        Wire::Hints { carrier, changes } => {
            format!("hints rev {} {carrier:?} {changes:?}", changes.rev)
        }
        Wire::Statement {
            changes,
            open,
            look,
            ..
        } => {
            format!(
                "statement rev {} look {look} open {open:?} {:?}",
                changes.rev, changes.entries.tools
            )
        }
        Wire::ToolsList { rev, .. } => format!("tools/list rev {rev}"),
    }
}

fn case_strategy() -> impl Strategy<Value = Case> {
    let op =
        (0u8..10, any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(kind, a, b, carrier)| Op {
            kind,
            a,
            b,
            carrier,
        });
    let step = (0u8..8, any::<u8>()).prop_map(|(action, param)| Step { action, param });
    (
        any::<bool>(),
        prop::collection::vec(op, 0..14),
        prop::collection::vec(step, 0..60),
    )
        .prop_map(|(ordered, script, steps)| Case {
            ordered,
            script,
            steps,
        })
}

#[test]
fn hint_state_converges_to_the_server_truth_in_any_delivery_order() {
    let mut config = Config::with_cases(10_000);
    if let Ok(n) = std::env::var("PROPTEST_CASES") {
        config.cases = n.parse().expect("PROPTEST_CASES is a number");
    }
    let seed = match config.rng_seed {
        RngSeed::Fixed(s) => s,
        RngSeed::Random => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64,
    };
    config.rng_seed = RngSeed::Fixed(seed);
    config.source_file = Some(file!());
    config.failure_persistence = Some(Box::new(FileFailurePersistence::WithSource(
        "proptest-regressions",
    )));
    let cases = config.cases;
    let mut runner = TestRunner::new(config);
    let total = RefCell::new(HintStats::default());
    let started = Instant::now();
    let result = runner.run(&case_strategy(), |case| {
        let stats = run_case(&case)?;
        total.borrow_mut().add(&stats);
        Ok(())
    });
    if let Err(e) = result {
        match e {
            TestError::Fail(why, case) => {
                panic!(
                    "run seed {seed} (PROPTEST_RNG_SEED={seed} to repeat): {why}\nminimal failing case: {case:#?}"
                )
            }
            TestError::Abort(why) => panic!("run seed {seed}: aborted: {why}"),
        }
    }
    let t = total.into_inner();
    println!(
        "{cases} cases in {:.1?} (seed {seed}); totals: {t:?}",
        started.elapsed()
    );
    // Every path must have been taken, or the generator has gone blind.
    for (name, n) in [
        ("applied", t.applied),
        ("gaps", t.gaps),
        ("held", t.held),
        ("resolved_in_window", t.resolved_in_window),
        ("expired", t.expired),
        ("stale", t.stale),
        ("superseded", t.superseded),
        ("duplicates", t.duplicates),
        ("coalesced", t.coalesced),
        ("recoveries", t.recoveries),
        ("statements", t.statements),
    ] {
        assert!(n > 0 || cases < 1000, "no case exercised {name}: {t:?}");
    }
}
