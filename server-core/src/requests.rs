//! One connection's requests in flight: those forwarded to the principal and waiting for
//! its answer (`tools/list`, `tools/call`, `toolsets/*`), and tool handler calls running
//! in this session. One table, so the JSON-RPC rules about ids are decided in one place:
//!
//! - an id still in flight is not reused: a second request with it is refused
//!   ([`Requests::in_use`]; a cancelled forwarded request keeps its id until its answer
//!   comes back, so that answer can never be taken for the new request's);
//! - a request is answered at most once, and a cancelled one not at all (MCP
//!   "Cancellation"): [`Requests::settle`] says whether a forwarded answer is written,
//!   [`Requests::finish`] whether a handler's is;
//! - what a cancellation does ([`Requests::cancel`]): stop a running call, mark a
//!   forwarded request, or nothing for an id that is not in flight. A newly cancelled
//!   request's held changes go at once as `tools/hints` (§5.2, vector 29; the carrier core
//!   holds them).
//! - MCP progress for a running call only increases ([`Requests::progress`]).
//!
//! - a request whose id is in flight is refused with -32600 in the words every session
//!   uses ([`Requests::refuse_reused`], [`id_in_use`]), and so is one past a bound a
//!   session sets on how many it answers at once ([`Requests::admit`], [`too_many`]: the
//!   surface host's).
//!
//! `H` is what the session needs to stop a running call (its task's abort handle and
//! cancel token); this core only keeps it and hands it back.

use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, Id};
use std::collections::HashMap;

enum Entry<H> {
    /// Forwarded to the principal; its answer has not come back.
    Forwarded { cancelled: bool },
    /// A tool handler running in this session.
    Running {
        /// Tells this call from a later one that reuses its id after a cancel.
        key: u64,
        handle: H,
        /// The progress last sent for it.
        last_progress: Option<f64>,
    },
}

/// The answer to a forwarded request came back: whether to write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// Write it.
    Answer,
    /// The host cancelled it: no response; its changes still go (as `tools/hints`).
    Cancelled,
    /// Nothing waits for this id.
    Unknown,
}

/// What a cancellation did.
#[derive(Debug, PartialEq, Eq)]
pub enum Cancelled<H> {
    /// A running handler call: stop it with this.
    Running(H),
    /// A forwarded request, now marked: its answer will not be written.
    Forwarded,
    /// Nothing to do: unknown, already answered or already cancelled (MCP: ignore it).
    Nothing,
}

/// Why a progress notification is not sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ProgressRefused {
    /// The call is no longer running (answered, cancelled, or its id reused).
    Ended,
    /// MCP: progress must increase with each notification.
    NotIncreasing {
        /// The last progress sent.
        last: f64,
        /// The progress given.
        given: f64,
    },
}

/// The refusal of a request whose id is one still in flight: -32600.
pub fn id_in_use(id: &Id) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_REQUEST,
        format!("request id {id} is in use by a request still running"),
    )
}

/// The refusal of a request past a session's bound of `bound` requests in flight: -32600.
pub fn too_many(bound: usize) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_REQUEST,
        format!("{bound} requests are being answered already; wait for one"),
    )
}

/// A table keyed by the host's request ids: ahash, keyed at random per process, so a
/// host, which chooses its ids, cannot make them collide; on a short id it costs a
/// fraction of std's SipHash (issue #42).
pub type IdMap<V> = HashMap<Id, V, ahash::RandomState>;

/// See the module docs.
pub struct Requests<H> {
    next_key: u64,
    table: IdMap<Entry<H>>,
}

impl<H> Default for Requests<H> {
    fn default() -> Self {
        Requests {
            next_key: 0,
            table: IdMap::default(),
        }
    }
}

impl<H> Requests<H> {
    /// True when a request with this id is still in flight, so another may not take it.
    pub fn in_use(&self, id: &Id) -> bool {
        self.table.contains_key(id)
    }

    /// How many requests are in flight (cancelled ones whose answer is still to come
    /// included).
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when no request is in flight.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// `Err` ([`id_in_use`]) when a request with `id` is still in flight: a second answer
    /// under it would be read as the first's (JSON-RPC ids are unique among a sender's
    /// pending requests).
    pub fn refuse_reused(&self, id: &Id) -> Result<(), ErrorObject> {
        match self.in_use(id) {
            true => Err(id_in_use(id)),
            false => Ok(()),
        }
    }

    /// Whether a new request with `id` may start now, when at most `bound` may be in flight
    /// at once: refused when its id is in use ([`Requests::refuse_reused`]), else when
    /// `bound` are in flight already ([`too_many`]).
    pub fn admit(&self, id: &Id, bound: usize) -> Result<(), ErrorObject> {
        self.refuse_reused(id)?;
        match self.len() >= bound {
            true => Err(too_many(bound)),
            false => Ok(()),
        }
    }

    /// True when a forwarded request waits for its answer and was not cancelled: a
    /// delivery may hold changes for it.
    pub fn awaits_answer(&self, id: &Id) -> bool {
        matches!(
            self.table.get(id),
            Some(Entry::Forwarded { cancelled: false })
        )
    }

    /// Records a request forwarded to the principal (the caller checked
    /// [`Requests::in_use`]).
    pub fn forward(&mut self, id: Id) {
        self.table.insert(id, Entry::Forwarded { cancelled: false });
    }

    /// The principal's answer to a forwarded request came back.
    pub fn settle(&mut self, id: &Id) -> Settled {
        match self.table.get(id) {
            Some(Entry::Forwarded { cancelled }) => {
                let settled = if *cancelled {
                    Settled::Cancelled
                } else {
                    Settled::Answer
                };
                self.table.remove(id);
                settled
            }
            _ => Settled::Unknown,
        }
    }

    /// A key for a handler call about to start, for [`Requests::start`].
    pub fn new_key(&mut self) -> u64 {
        self.next_key += 1;
        self.next_key
    }

    /// Records a started handler call (its forwarded entry was settled first).
    pub fn start(&mut self, id: Id, key: u64, handle: H) {
        self.table.insert(
            id,
            Entry::Running {
                key,
                handle,
                last_progress: None,
            },
        );
    }

    /// True while the handler call with this id and key runs (not a later one reusing
    /// the id).
    pub fn is_running(&self, id: &Id, key: u64) -> bool {
        matches!(self.table.get(id), Some(Entry::Running { key: k, .. }) if *k == key)
    }

    /// Records `progress` as the running call's latest, before it is sent.
    pub fn progress(&mut self, id: &Id, key: u64, progress: f64) -> Result<(), ProgressRefused> {
        match self.table.get_mut(id) {
            Some(Entry::Running {
                key: k,
                last_progress,
                ..
            }) if *k == key => match *last_progress {
                Some(last) if progress <= last => Err(ProgressRefused::NotIncreasing {
                    last,
                    given: progress,
                }),
                _ => {
                    *last_progress = Some(progress);
                    Ok(())
                }
            },
            _ => Err(ProgressRefused::Ended),
        }
    }

    /// A handler call's task ended. True when its response is to be written; false when
    /// it is no longer running (it was cancelled).
    pub fn finish(&mut self, id: &Id, key: u64) -> bool {
        let running = self.is_running(id, key);
        if running {
            self.table.remove(id);
        }
        running
    }

    /// `notifications/cancelled` for the host's request `id`.
    pub fn cancel(&mut self, id: &Id) -> Cancelled<H> {
        match self.table.remove(id) {
            Some(Entry::Running { handle, .. }) => Cancelled::Running(handle),
            Some(Entry::Forwarded { cancelled }) => {
                self.table
                    .insert(id.clone(), Entry::Forwarded { cancelled: true });
                if cancelled {
                    Cancelled::Nothing
                } else {
                    Cancelled::Forwarded
                }
            }
            None => Cancelled::Nothing,
        }
    }

    /// The session is stopping: every running call's handle, to stop it; forwarded
    /// requests are forgotten.
    pub fn cancel_all(&mut self) -> Vec<H> {
        self.table
            .drain()
            .filter_map(|(_, e)| match e {
                Entry::Running { handle, .. } => Some(handle),
                Entry::Forwarded { .. } => None,
            })
            .collect()
    }

    /// How many handler calls run.
    pub fn running(&self) -> usize {
        self.table
            .values()
            .filter(|e| matches!(e, Entry::Running { .. }))
            .count()
    }
}

#[cfg(test)]
mod tests;
