//! Random sequences of what a principal's actor feeds its core — sessions attaching,
//! detaching and initializing as plain or hinted hosts, opens and closes (as a host or
//! through the compat tools), instances ending on their own, manifest changes withdrawing
//! and restoring `toolHints` — with each `Start` and `Close` answered as an agreeing
//! instance would, checked after every step (issue #38 item 1):
//!
//! - every open instance runs (has a link) and every link is to an open instance: no
//!   logic is stranded, none runs for nothing;
//! - a plain connection is never stranded (§8): while one is attached, every toolset a
//!   host without `toolHints` uses unopened is open;
//! - the last connection's end leaves nothing open on a server that does not keep
//!   toolsets, or for an anonymous principal (§4.6);
//! - on a server that does not keep toolsets, the last session being modern (never
//!   initialized) leaves everything open until the idle time passed, and nothing after
//!   (profile §3.6, S13); time passing otherwise ends nothing;
//! - an instance hears that the principal is gone (leave or unlink) at most once, and only
//!   an instance it linked to.
//!
//! proptest prints the failing sequence (shrunk) and its seed.

use super::*;
use crate::batch::{Batch, Closed, Entered};
use crate::catalog::tests::arcade;
use crate::principal::{EndedIds, PrincipalConfig};
use mcpl_protocol::jsonrpc::Id;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::time::{Duration, UNIX_EPOCH};

const TOOLSETS: [&str; 4] = ["lobby", "go", "solo", "ranked"];
const NAMES: [&str; 2] = ["a", "b"];

#[derive(Debug, Clone)]
enum Op {
    Attach(u64),
    Detach(u64),
    Initialize {
        session: u64,
        hints: bool,
    },
    Open {
        ts: usize,
        name: Option<usize>,
        compat: bool,
    },
    Close {
        ts: usize,
        name: Option<usize>,
        compat: bool,
    },
    /// The instance of the `which`-th link ends on its own.
    End {
        which: usize,
    },
    Swap {
        hints: bool,
    },
    /// The idle time passes ([`PrincipalCore::handle_timeout`]).
    Wait,
}

fn op() -> impl Strategy<Value = Op> {
    let name = proptest::option::of(0..NAMES.len());
    prop_oneof![
        2 => (0..3u64).prop_map(Op::Attach),
        2 => (0..3u64).prop_map(Op::Detach),
        2 => (0..3u64, any::<bool>()).prop_map(|(session, hints)| Op::Initialize { session, hints }),
        3 => (0..TOOLSETS.len(), name.clone(), any::<bool>()).prop_map(|(ts, name, compat)| Op::Open { ts, name, compat }),
        2 => (0..TOOLSETS.len(), name, any::<bool>()).prop_map(|(ts, name, compat)| Op::Close { ts, name, compat }),
        1 => (0..6usize).prop_map(|which| Op::End { which }),
        1 => any::<bool>().prop_map(|hints| Op::Swap { hints }),
        1 => Just(Op::Wait),
    ]
}

/// The actor's part: instances agree to open and close; what they were told is kept.
struct Harness {
    core: PrincipalCore<u64>,
    next: u64,
    sessions: BTreeSet<u64>,
    plain: BTreeSet<u64>,
    /// Instance ids told the principal left them.
    gone: Vec<u64>,
    /// Every instance id ever linked.
    started: BTreeSet<u64>,
    anonymous: bool,
    keep: bool,
    /// The last step detached the last session, and that ends everything at once (§4.6).
    emptied: bool,
    /// Sessions whose host answered `initialize` (legacy connections).
    legacy: BTreeSet<u64>,
    /// The last session to detach was modern, on a server that does not keep toolsets:
    /// the idle time runs (S13).
    idle: bool,
    /// The last step let the idle time pass: `Some(true)` when it ran, else the number of
    /// instances open before (time passing then ends nothing).
    waited: Option<Result<(), usize>>,
}

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_796_040_000 + secs)
}

impl Harness {
    fn new(anonymous: bool, keep: bool) -> Self {
        let state = PrincipalState::new(
            Arc::new(arcade()),
            PrincipalConfig::default(),
            EndedIds::new(0),
            at(0),
        );
        let mut h = Harness {
            core: PrincipalCore::new(state, anonymous, keep, BTreeMap::new()),
            next: 1,
            sessions: BTreeSet::new(),
            plain: BTreeSet::new(),
            gone: Vec::new(),
            started: BTreeSet::new(),
            anonymous,
            keep,
            emptied: false,
            legacy: BTreeSet::new(),
            idle: false,
            waited: None,
        };
        for key in h.core.unlinked_instances() {
            h.start(key, None);
        }
        h.settle();
        h
    }

    fn start(&mut self, key: InstanceKey, reply: Option<ReplyTo>) {
        let id = self.next;
        self.next += 1;
        self.started.insert(id);
        let link = InstanceLink {
            addr: id,
            id: InstanceId(id),
            who: ParticipantId(0),
        };
        let entered = Ok(Entered {
            title: None,
            content: Vec::new(),
            batch: None,
        });
        self.core
            .handle_entered(key, HintDraft::new(), reply, link, entered, at(1));
    }

    /// Drains the core, answering as the actor and the instances would, until quiet.
    fn settle(&mut self) {
        while let Some(out) = self.core.poll() {
            match out {
                Output::Start { key, reply, .. } => self.start(key, reply),
                Output::Close { key, reply, link } => {
                    let closed = link.map(|l| {
                        self.gone.push(l.id.0);
                        Closed {
                            content: Vec::new(),
                            batch: None,
                        }
                    });
                    self.core.handle_closed(key, reply, closed, at(1));
                }
                Output::Leave(l) | Output::Unlink(l) => self.gone.push(l.id.0),
                Output::Join { .. } => unreachable!("nobody is invited here"),
                Output::Tell { .. }
                | Output::Answer { .. }
                | Output::Deliver { .. }
                | Output::Swapped { .. }
                | Output::Call { .. }
                | Output::Named { .. } => {}
            }
        }
    }

    fn reply(session: u64, compat: bool) -> ReplyTo {
        ReplyTo {
            session: SessionId(session),
            request: Id::Number(1),
            via: if compat { Via::Compat } else { Via::Rpc },
        }
    }

    fn apply(&mut self, op: &Op) {
        let session = self.sessions.iter().next().copied();
        self.emptied = false;
        self.waited = None;
        match op.clone() {
            Op::Attach(s) => {
                if self.sessions.insert(s) {
                    self.idle = false;
                    self.core.handle_attach(SessionId(s), 0, at(1));
                }
            }
            Op::Detach(s) => {
                if self.sessions.remove(&s) {
                    self.plain.remove(&s);
                    let legacy = self.legacy.remove(&s);
                    self.core.handle_detach(SessionId(s), at(1));
                    let last = self.sessions.is_empty();
                    self.emptied = last && (self.anonymous || (!self.keep && legacy));
                    self.idle = last && !self.anonymous && !self.keep && !legacy;
                }
            }
            Op::Wait => {
                let open = self.core.state().instances().count();
                self.waited = Some(if self.idle { Ok(()) } else { Err(open) });
                self.idle = false;
                self.core.handle_timeout(at(1) + DEFAULT_IDLE_END);
            }
            Op::Initialize { session: s, hints } => {
                if self.sessions.contains(&s) {
                    self.legacy.insert(s);
                    let plain = !hints || !self.core.state().catalog().tool_hints();
                    if plain {
                        self.plain.insert(s);
                    } else {
                        self.plain.remove(&s);
                    }
                    self.core
                        .handle_host_initialized(SessionId(s), hints, at(1));
                }
            }
            Op::Open { ts, name, compat } => {
                if let Some(s) = session {
                    let instance = name.map(|n| NAMES[n].to_owned());
                    let reply = Self::reply(s, compat);
                    self.core
                        .handle_open(reply, TOOLSETS[ts].into(), instance, None, at(1));
                }
            }
            Op::Close { ts, name, compat } => {
                if let Some(s) = session {
                    let instance = name.map(|n| NAMES[n].to_owned());
                    let reply = Self::reply(s, compat);
                    self.core
                        .handle_close(reply, TOOLSETS[ts].into(), instance, false);
                }
            }
            Op::End { which } => {
                let links: Vec<(InstanceKey, u64)> = self
                    .core
                    .links()
                    .iter()
                    .map(|(k, l)| (k.clone(), l.id.0))
                    .collect();
                if let Some((key, id)) = links.get(which % links.len().max(1)).cloned() {
                    let mut batch = Batch::new(InstanceId(id), key);
                    batch.ended = Some("over".into());
                    self.core.handle_batch(batch, at(1));
                }
            }
            Op::Swap { hints } => {
                let catalog = if hints {
                    arcade()
                } else {
                    arcade().without_tool_hints()
                };
                if !hints && !self.sessions.is_empty() {
                    self.plain.extend(self.sessions.iter().copied());
                }
                self.core.handle_swap_catalog(Arc::new(catalog), at(1));
            }
        }
        self.settle();
    }

    fn check(&self, op: &Op) -> Result<(), TestCaseError> {
        let open: BTreeSet<InstanceKey> = self
            .core
            .state()
            .instances()
            .map(|i| i.key().clone())
            .collect();
        let linked: BTreeSet<InstanceKey> = self.core.links().keys().cloned().collect();
        prop_assert_eq!(
            &open,
            &linked,
            "after {:?}: open instances and running ones",
            op
        );
        if !self.plain.is_empty() {
            let catalog = self.core.state().catalog().clone();
            for ts in catalog.implicitly_open() {
                prop_assert!(
                    open.contains(&InstanceKey::toolset(ts)),
                    "after {:?}: a plain connection is stranded without {}",
                    op,
                    ts
                );
            }
        }
        match self.waited {
            Some(Ok(())) => prop_assert!(
                open.is_empty(),
                "after {:?}: S13 leaves {:?} open past the idle time",
                op,
                open
            ),
            Some(Err(before)) => prop_assert_eq!(
                open.len(),
                before,
                "after {:?}: time passing ended something while not idle",
                op
            ),
            None => {}
        }
        if self.emptied {
            prop_assert!(
                open.is_empty(),
                "after {:?}: §4.6 leaves {:?} open",
                op,
                open
            );
        }
        let mut seen = BTreeSet::new();
        for id in &self.gone {
            prop_assert!(self.started.contains(id), "never linked: {}", id);
            prop_assert!(seen.insert(*id), "told twice it was left: {}", id);
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn issue38_01_any_sequence_strands_no_instance_and_no_plain_host(
        anonymous in any::<bool>(),
        keep in any::<bool>(),
        ops in proptest::collection::vec(op(), 1..40),
    ) {
        let mut h = Harness::new(anonymous, keep);
        for op in &ops {
            h.apply(op);
            h.check(op)?;
        }
    }
}
