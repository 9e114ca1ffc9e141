//! `hint_state`: a [`HintState`] fed an arbitrary [`Script`] of reads, decoded from the fuzz
//! input with `arbitrary`.
//!
//! The inputs are shaped so the fuzzer reaches the rules quickly: names come from a small
//! alphabet (so entries collide), and a rev is usually given relative to the state's `last`
//! ([`Rev`]), so that next, stale, early and far-off revs are all one byte away.
//!
//! After every operation:
//! - nothing panicked;
//! - `last_rev()` did not decrease; a `tools/list`, a timeout, a failed recovery and a local
//!   close never move it (§5.2, vector 27); a statement above `last` sets it to its rev;
//! - at most one `Output::Recover` came out of the call, and the state is then recovering;
//!   while a recovery was under way, only the end of its second read (`tools/list`) or a
//!   failed read may start another (§5.2: one recovery at a time);
//! - the hold is bounded by `max_held`, empty on an ordered link, and every held rev is
//!   beyond `last + 1` (a successor is applied at once);
//! - once the connect-time statement was read, the state is never connecting again.

use arbitrary::{Arbitrary, Unstructured};
use mcpl_host::state::{Carrier, HintConfig, HintState, Output, ResultOf};
use mcpl_protocol::hints::{HintEntries, SuggestAction, ToolDefinition};
use mcpl_protocol::mcp::ToolAnnotations;
use mcpl_protocol::toolsets::{EndedRecord, OpenRecord};
use mcpl_protocol::{
    HintChanges, Id, Meta, Presence, Suggestion, Tool, ToolHint, ToolsetChange, ToolsetState,
};
use serde_json::json;
use std::time::{Duration, Instant};

/// The alphabet of tool, toolset, instance and event names: few, so that they collide.
const NAMES: [&str; 5] = ["a", "b", "c", "go", "ttt"];

/// A name from [`NAMES`].
#[derive(Debug, Clone, Copy, Arbitrary)]
pub struct Name(u8);

impl Name {
    fn get(self) -> String {
        NAMES[usize::from(self.0) % NAMES.len()].to_owned()
    }
}

/// A rev, mostly relative to the state's `last` when the operation runs.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum Rev {
    /// `last + 1`: applies.
    Next,
    /// `last + 2 + n`: early (a gap).
    Ahead(u8),
    /// `last - n` (saturating): stale.
    Behind(u8),
    /// Any rev at all, `u64::MAX` included.
    Raw(u64),
}

impl Rev {
    fn resolve(self, last: u64) -> u64 {
        match self {
            Rev::Next => last.saturating_add(1),
            Rev::Ahead(n) => last.saturating_add(2).saturating_add(u64::from(n)),
            Rev::Behind(n) => last.saturating_sub(u64::from(n)),
            Rev::Raw(r) => r,
        }
    }
}

/// What carried a hint-carrying message.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum CarrierIn {
    /// A request's result.
    Result {
        /// Which request (mod 3).
        of: u8,
        /// Its id.
        request: i8,
    },
    /// A push, with an event id from [`NAMES`] (so duplicates are common).
    Push {
        /// The event id.
        event: Name,
        /// Whether the push had `coalesce`.
        coalesce: bool,
    },
    /// A `tools/hints` notification.
    Standalone,
}

impl CarrierIn {
    fn build(self) -> Carrier {
        match self {
            CarrierIn::Result { of, request } => Carrier::Result {
                of: [
                    ResultOf::CallTool,
                    ResultOf::ToolsetsOpen,
                    ResultOf::ToolsetsClose,
                ][usize::from(of) % 3],
                request: Id::Number(i64::from(request)),
            },
            CarrierIn::Push { event, coalesce } => Carrier::Push {
                event_id: event.get(),
                coalesce,
            },
            CarrierIn::Standalone => Carrier::Standalone,
        }
    }
}

/// A tool entry of a hint.
#[derive(Debug, Clone, Arbitrary)]
pub struct ToolHintIn {
    name: Name,
    instance: Option<Name>,
    /// `Some(true)`: static, `Some(false)`: dynamic.
    presence: Option<bool>,
    visible: Option<bool>,
    definition: Option<DefinitionIn>,
}

/// A hint's `definition`.
#[derive(Debug, Clone, Arbitrary)]
pub struct DefinitionIn {
    name: Option<Name>,
    description: Option<Name>,
    schema: Option<bool>,
    read_only: Option<bool>,
}

impl DefinitionIn {
    fn build(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.name.map(Name::get),
            description: self.description.map(Name::get),
            input_schema: self
                .schema
                .map(|strict| json!({"type": "object", "additionalProperties": !strict})),
            annotations: self.read_only.map(|r| ToolAnnotations {
                read_only_hint: Some(r),
                ..Default::default()
            }),
            meta: None,
        }
    }
}

/// A toolset entry of a hint.
#[derive(Debug, Clone, Arbitrary)]
pub struct ToolsetIn {
    toolset: Name,
    instance: Option<Name>,
    open: bool,
    title: Option<Name>,
    ended: Option<Name>,
}

/// A suggestion.
#[derive(Debug, Clone, Arbitrary)]
pub struct SuggestIn {
    toolset: Name,
    instance: Option<Name>,
    open: bool,
}

/// The changes of one message.
#[derive(Debug, Clone, Arbitrary)]
pub struct ChangesIn {
    rev: Rev,
    tools: Vec<ToolHintIn>,
    toolsets: Vec<ToolsetIn>,
    suggest: Vec<SuggestIn>,
}

impl ChangesIn {
    fn build(&self, last: u64) -> HintChanges {
        HintChanges {
            rev: self.rev.resolve(last),
            entries: HintEntries {
                tools: self
                    .tools
                    .iter()
                    .map(|t| ToolHint {
                        name: t.name.get(),
                        instance: t.instance.map(Name::get),
                        presence: t.presence.map(presence),
                        visible: t.visible,
                        definition: t.definition.as_ref().map(DefinitionIn::build),
                    })
                    .collect(),
                toolsets: self
                    .toolsets
                    .iter()
                    .map(|s| ToolsetChange {
                        toolset: s.toolset.get(),
                        instance: s.instance.map(Name::get),
                        state: if s.open {
                            ToolsetState::Open
                        } else {
                            ToolsetState::Closed
                        },
                        title: s.title.map(Name::get),
                        reason: None,
                        ended: s.ended.map(Name::get),
                    })
                    .collect(),
                suggest: self
                    .suggest
                    .iter()
                    .map(|s| Suggestion {
                        toolset: s.toolset.get(),
                        instance: s.instance.map(Name::get),
                        action: if s.open {
                            SuggestAction::Open
                        } else {
                            SuggestAction::Close
                        },
                        reason: "fuzz".to_owned(),
                        options: None,
                    })
                    .collect(),
            },
        }
    }
}

/// An open record of a statement.
#[derive(Debug, Clone, Arbitrary)]
pub struct OpenIn {
    toolset: Name,
    instance: Option<Name>,
    title: Option<Name>,
}

/// An ended record of a statement.
#[derive(Debug, Clone, Arbitrary)]
pub struct EndedIn {
    id: Name,
    toolset: Name,
    instance: Option<Name>,
}

/// A tool of a `tools/list`.
#[derive(Debug, Clone, Arbitrary)]
pub struct ToolIn {
    name: Name,
    description: Option<Name>,
    /// `Some(true)`: static, `Some(false)`: dynamic.
    presence: Option<bool>,
    toolset: Option<Name>,
}

impl ToolIn {
    fn build(&self) -> Tool {
        let mut tool = Tool::new(self.name.get(), "", json!({"type": "object"}));
        tool.description = self.description.map(Name::get);
        tool.meta = Some(Meta {
            presence: self.presence.map(presence),
            toolset: self.toolset.map(Name::get),
            ..Default::default()
        });
        tool
    }
}

fn presence(is_static: bool) -> Presence {
    if is_static {
        Presence::Static
    } else {
        Presence::Dynamic
    }
}

/// One thing that happens to a connection's hint state.
#[derive(Debug, Clone, Arbitrary)]
pub enum Op {
    /// A hint-carrying message is read.
    Hints {
        /// What carried it.
        carrier: CarrierIn,
        /// Its changes.
        changes: ChangesIn,
    },
    /// A `toolsets/list` result is read.
    Statement {
        /// Its `mcpl/hints`.
        changes: ChangesIn,
        /// Its open records.
        open: Vec<OpenIn>,
        /// Its ended records.
        ended: Vec<EndedIn>,
    },
    /// A complete `tools/list` result naming a rev.
    ToolsList {
        /// Its tools.
        tools: Vec<ToolIn>,
        /// The rev it names.
        rev: Rev,
    },
    /// Time passes by this many milliseconds, then the owner's timer fires if due.
    Advance(u16),
    /// The owner's timer fires now, due or not.
    Timeout,
    /// A recovery's read failed.
    RecoveryFailed,
    /// The manifest no longer declares a toolset.
    CloseToolset(Name),
}

/// A whole fuzz case: the link and what happens on it.
#[derive(Debug, Clone, Arbitrary)]
pub struct Script {
    ordered: bool,
    /// Hold window in milliseconds.
    hold_ms: u8,
    /// The hold's bound, kept small (1..=8) so the fuzzer reaches it.
    max_held: u8,
    ops: Vec<Op>,
}

/// Decodes a [`Script`] from the input and checks it; inputs too short to decode are skipped.
pub fn check(data: &[u8]) {
    let u = Unstructured::new(data);
    if let Ok(script) = Script::arbitrary_take_rest(u) {
        run(&script);
    }
}

/// Runs a script, checking the properties in the module doc after every operation.
pub fn run(script: &Script) {
    let mut config = if script.ordered {
        HintConfig::ordered()
    } else {
        HintConfig::unordered()
    }
    .with_hold_window(Duration::from_millis(u64::from(script.hold_ms)));
    config.max_held = usize::from(script.max_held % 8) + 1;
    let mut state = HintState::new(config);
    let mut now = Instant::now();
    let mut connected = false;
    for (step, op) in script.ops.iter().enumerate() {
        let last = state.last_rev();
        let before = Before {
            step,
            last,
            recovering: state.is_recovering(),
            max_held: config.max_held,
        };
        let (out, may_restart) = match op {
            Op::Hints { carrier, changes } => (
                state.handle_hints(carrier.build(), changes.build(last), now),
                false,
            ),
            Op::Statement {
                changes,
                open,
                ended,
            } => {
                let changes = changes.build(last);
                let open: Vec<OpenRecord> = open
                    .iter()
                    .map(|o| OpenRecord {
                        toolset: o.toolset.get(),
                        instance: o.instance.map(Name::get),
                        title: o.title.map(Name::get),
                        options: None,
                    })
                    .collect();
                let ended: Vec<EndedRecord> = ended
                    .iter()
                    .map(|e| EndedRecord {
                        id: e.id.get(),
                        toolset: e.toolset.get(),
                        instance: e.instance.map(Name::get),
                        reason: "fuzz".to_owned(),
                        at: "2026-01-01T00:00:00Z".to_owned(),
                    })
                    .collect();
                let out = state.handle_statement(&changes, &open, &ended, now);
                if changes.rev > last {
                    // At least M: held successors of M may apply right after it.
                    assert!(
                        state.last_rev() >= changes.rev,
                        "step {step}: a statement at {} left last at {}",
                        changes.rev,
                        state.last_rev()
                    );
                    connected = true;
                }
                (out, false)
            }
            Op::ToolsList { tools, rev } => {
                let tools: Vec<Tool> = tools.iter().map(ToolIn::build).collect();
                let out = state.handle_tools_list(&tools, rev.resolve(last));
                assert_eq!(state.last_rev(), last, "step {step}: tools/list moved last");
                (out, true)
            }
            Op::Advance(ms) => {
                now += Duration::from_millis(u64::from(*ms));
                let due = state.poll_timeout().is_some_and(|t| t <= now);
                let out = if due {
                    state.handle_timeout(now)
                } else {
                    Vec::new()
                };
                assert_eq!(state.last_rev(), last, "step {step}: a timeout moved last");
                (out, false)
            }
            Op::Timeout => {
                let out = state.handle_timeout(now);
                assert_eq!(state.last_rev(), last, "step {step}: a timeout moved last");
                (out, false)
            }
            Op::RecoveryFailed => {
                let out = state.handle_recovery_failed();
                assert_eq!(
                    state.last_rev(),
                    last,
                    "step {step}: a failed read moved last"
                );
                (out, true)
            }
            Op::CloseToolset(name) => {
                let out = state.close_toolset(&name.get());
                assert_eq!(
                    state.last_rev(),
                    last,
                    "step {step}: a local close moved last"
                );
                (out, false)
            }
        };
        let after = After {
            out: &out,
            may_restart,
            connected,
        };
        check_after(&before, op, &state, &after);
    }
}

/// What was true before an operation.
struct Before {
    step: usize,
    last: u64,
    recovering: bool,
    max_held: usize,
}

/// What an operation returned, and what the script knows after it.
struct After<'a> {
    out: &'a [Output],
    /// The operation may end a recovery and start the next (`tools/list`, a failed read).
    may_restart: bool,
    /// A statement above `last` has been read on this connection.
    connected: bool,
}

fn check_after(before: &Before, op: &Op, state: &HintState, after: &After<'_>) {
    let (step, last_before, out) = (before.step, before.last, after.out);
    assert!(
        state.last_rev() >= last_before,
        "step {step} ({op:?}): last went back from {last_before} to {}",
        state.last_rev()
    );
    let recovers = out
        .iter()
        .filter(|o| matches!(o, Output::Recover(_)))
        .count();
    assert!(
        recovers <= 1,
        "step {step} ({op:?}): {recovers} recoveries at once: {out:?}"
    );
    if recovers == 1 {
        // A failed connect-time read asks for the read again but stays connecting: it has
        // read no statement, so it must not look settled (`handle_recovery_failed`).
        assert!(
            state.is_recovering() || state.is_connecting(),
            "step {step} ({op:?}): a recovery was asked for but none is under way"
        );
        assert!(
            !before.recovering || after.may_restart,
            "step {step} ({op:?}): a second recovery started while one was under way: {out:?}"
        );
    }
    let held = state.held_count();
    assert!(
        held <= before.max_held,
        "step {step} ({op:?}): {held} messages held, beyond the bound {}",
        before.max_held
    );
    if state.is_ordered() {
        assert_eq!(
            held, 0,
            "step {step} ({op:?}): an ordered link held a message"
        );
    }
    let next = state.last_rev().saturating_add(1);
    if let Some(r) = state.held_revs().find(|&r| r <= next) {
        panic!(
            "step {step} ({op:?}): rev {r} is held with last at {}",
            state.last_rev()
        );
    }
    if after.connected {
        assert!(
            !state.is_connecting(),
            "step {step} ({op:?}): connecting again after the statement"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_revs_saturate() {
        assert_eq!(Rev::Next.resolve(4), 5);
        assert_eq!(Rev::Ahead(0).resolve(4), 6);
        assert_eq!(Rev::Behind(9).resolve(4), 0);
        assert_eq!(Rev::Next.resolve(u64::MAX), u64::MAX);
        assert_eq!(Rev::Ahead(3).resolve(u64::MAX - 1), u64::MAX);
    }

    /// A hand-written script through the rules the properties watch: connect, a gap held
    /// on an unordered link, its window passing (a recovery), the recovery's two reads.
    #[test]
    fn a_script_through_a_hold_and_a_recovery_passes() {
        let changes = |rev| ChangesIn {
            rev,
            tools: vec![],
            toolsets: vec![],
            suggest: vec![],
        };
        let statement = |rev| Op::Statement {
            changes: changes(rev),
            open: vec![],
            ended: vec![],
        };
        let script = Script {
            ordered: false,
            hold_ms: 10,
            max_held: 1,
            ops: vec![
                statement(Rev::Next),
                Op::Hints {
                    carrier: CarrierIn::Standalone,
                    changes: changes(Rev::Ahead(0)),
                },
                Op::Advance(20),
                statement(Rev::Ahead(5)),
                Op::ToolsList {
                    tools: vec![],
                    rev: Rev::Behind(0),
                },
            ],
        };
        run(&script);
    }
}
