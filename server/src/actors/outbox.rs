//! An instance's outbox for one participant whose principal runs on another server
//! (issue #41, `docs/ownership.md` §3; the instance's side is `instance/outbox.rs`): the
//! batches numbered on one stream, those of the step running **staged** (in the record
//! handed to the store, not sent yet), those handed over **held** by a task that sends
//! them in order, each once its step is kept and until it is acknowledged — not
//! acknowledged within the time-out, or nobody serving the principal just now, it is sent
//! again after [`RESEND_FIRST`] doubling up to [`RESEND_MOST`]. An acknowledged batch
//! leaves the outbox (and the record at its next write). The task ends when the outbox is
//! dropped (the instance stopped or released), and tells the instance when it has sent
//! everything ([`Drained`]). **Nobody serving the principal** (no actor of it anywhere,
//! [`NOBODY_TRIES`] tries in a row) **\[project\]**: it is started on this server on its
//! first use, as an invitation's invitee is (`registry/elsewhere.rs`), and the next try
//! reaches it here.

use crate::actors::remote::{RESEND_FIRST, RESEND_MOST, send};
use crate::core::batch::Batch;
use crate::core::wire::Numbered;
use crate::ids::InstanceId;
use crate::peers::{PeerAddress, PeerBounds, PeerError};
use crate::shared::Shared;
use crate::store::Ticket;
use crate::store::records::{NotKept, OutboxRecord};
use actix::WeakRecipient;
use actix::prelude::*;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// How many tries in a row meet nobody serving the principal before it is started here
/// (**\[project\]** 3: 0.7 s of nobody, with the backoff). Not at the first: a bus
/// reconnecting, or an actor moving, serves it again in a moment — and until leases decide
/// who runs a principal (`docs/ownership.md` §5 slice 4), starting it here while it runs
/// elsewhere would make two of it.
const NOBODY_TRIES: u32 = 3;

/// What an outbox's task does when nobody serves its principal: have it started on this
/// server (the registry's first use).
pub(crate) type NobodyServes = Box<dyn Fn() + Send>;

/// One participant's outbox. See the module docs.
pub(crate) struct Outbox {
    principal: String,
    stream: u64,
    /// The last number given.
    sent: u64,
    /// Batches of the step running, not handed to the store yet: in its record, sent
    /// once it is kept ([`Outbox::handed`]).
    staged: Vec<(u64, Value, usize)>,
    /// What the sending task holds.
    queue: Arc<Queue>,
    /// Past its bound: the instance ended for this participant; nothing more goes.
    cut: bool,
}

/// What a participant's task sends, shared with the actor.
struct Queue {
    held: Mutex<Held>,
    wake: Notify,
}

#[derive(Default)]
struct Held {
    items: VecDeque<Item>,
    bytes: usize,
    /// The actor dropped its outbox (stopped, released): the task ends.
    closed: bool,
}

struct Item {
    number: u64,
    batch: Value,
    size: usize,
    ticket: Ticket,
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        self.queue.lock().closed = true;
        self.queue.wake.notify_one();
    }
}

/// The size of `batch` as JSON.
fn size(batch: &Value) -> usize {
    serde_json::to_vec(batch).map_or(0, |b| b.len())
}

impl Outbox {
    /// The outbox for principal `record.principal` of instance `id`, holding what `record`
    /// held (sent again at once), its task started; `me` is told when it drained.
    pub(crate) fn start(
        shared: &Arc<Shared>,
        id: InstanceId,
        record: OutboxRecord,
        me: WeakRecipient<Drained>,
        nobody_serves: NobodyServes,
    ) -> Self {
        let mut held = Held::default();
        for (number, batch) in record.held {
            let size = size(&batch);
            held.bytes += size;
            held.items.push_back(Item {
                number,
                batch,
                size,
                ticket: Ticket::NONE,
            });
        }
        let queue = Arc::new(Queue {
            held: Mutex::new(held),
            wake: Notify::new(),
        });
        actix::spawn(run(
            shared.clone(),
            id,
            record.principal.clone(),
            record.stream,
            queue.clone(),
            me,
            nobody_serves,
        ));
        Outbox {
            principal: record.principal,
            stream: record.stream,
            sent: record.sent,
            staged: Vec::new(),
            queue,
            cut: false,
        }
    }

    /// As kept in the instance's record.
    pub(crate) fn record(&self) -> OutboxRecord {
        let held = self.queue.lock();
        let mut batches: Vec<(u64, Value)> = held
            .items
            .iter()
            .map(|i| (i.number, i.batch.clone()))
            .collect();
        batches.extend(self.staged.iter().map(|(n, b, _)| (*n, b.clone())));
        OutboxRecord {
            principal: self.principal.clone(),
            stream: self.stream,
            sent: self.sent,
            held: batches,
        }
    }

    /// Whether one more batch of `more` bytes goes past `bounds`.
    fn full(&self, bounds: PeerBounds, more: usize) -> bool {
        let held = self.queue.lock();
        let staged: usize = self.staged.iter().map(|(_, _, size)| size).sum();
        held.items.len() + self.staged.len() >= bounds.count
            || held.bytes + staged + more > bounds.bytes
    }

    /// Drops everything held (past the bound), returned oldest first.
    pub(crate) fn drop_held(&mut self) -> Vec<Value> {
        let mut held = self.queue.lock();
        held.bytes = 0;
        let mut dropped: Vec<Value> = held.items.drain(..).map(|i| i.batch).collect();
        dropped.extend(self.staged.drain(..).map(|(_, b, _)| b));
        dropped
    }

    /// The step's batches were handed to the store under `ticket`: the task sends them
    /// once it is kept.
    pub(crate) fn handed(&mut self, ticket: Ticket) {
        if self.staged.is_empty() {
            return;
        }
        let mut held = self.queue.lock();
        for (number, batch, size) in self.staged.drain(..) {
            held.bytes += size;
            held.items.push_back(Item {
                number,
                batch,
                size,
                ticket,
            });
        }
        drop(held);
        self.queue.wake.notify_one();
    }
}

/// Sends `queue`'s batches to principal `name`, in order, each until it is acknowledged.
async fn run(
    shared: Arc<Shared>,
    id: InstanceId,
    name: String,
    stream: u64,
    queue: Arc<Queue>,
    me: WeakRecipient<Drained>,
    nobody_serves: NobodyServes,
) {
    let Some(peers) = shared.peers.clone() else {
        return;
    };
    loop {
        let front = {
            let held = queue.lock();
            if held.closed {
                return;
            }
            held.items
                .front()
                .map(|i| (i.number, i.batch.clone(), i.ticket))
        };
        let Some((number, mut batch, ticket)) = front else {
            queue.wake.notified().await;
            continue;
        };
        // Told only once kept (§3), as a principal here waits for it.
        if let Err(not_kept) = shared.kept(ticket).await {
            batch = refused(batch, &not_kept);
        }
        let numbered = Numbered {
            stream,
            number,
            message: Batched::Batched(&batch),
        };
        let mut delay = RESEND_FIRST;
        // Tries in a row that met nobody serving the principal.
        let mut nobody = 0;
        loop {
            {
                let held = queue.lock();
                if held.closed {
                    return;
                }
                if held.items.front().is_none_or(|i| i.number != number) {
                    // Dropped meanwhile (past the bound): not sent again.
                    break;
                }
            }
            let to = PeerAddress::Principal(name.clone());
            match send(&*peers, to, &numbered, shared.peer_timeout).await {
                Ok(()) => break,
                Err(e @ PeerError::TooLarge { .. }) => {
                    // It can never cross: lost, and said so.
                    tracing::error!(instance = %id, principal = %name, number, error = %e, "a batch for a principal on another server is too large to send; dropped");
                    break;
                }
                Err(e) => {
                    nobody = match e {
                        PeerError::NoResponders(_) => nobody + 1,
                        _ => 0,
                    };
                    if nobody == NOBODY_TRIES {
                        // Nobody runs the principal: started here (§2), reached next try.
                        nobody_serves();
                    }
                    tracing::debug!(instance = %id, principal = %name, number, error = %e, "a batch for a principal on another server was not acknowledged; sent again");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(RESEND_MOST);
                }
            }
        }
        let mut held = queue.lock();
        if held.items.front().is_some_and(|i| i.number == number) {
            let item = held.items.pop_front().expect("the front, just seen");
            held.bytes -= item.size;
        }
        if held.items.is_empty()
            && let Some(me) = me.upgrade()
        {
            me.do_send(Drained);
        }
    }
}

/// An outbox has nothing left to send: an instance nobody links to any more stops.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Drained;

/// A batch as `wire::ToPrincipal::Batched` encodes it, from its JSON.
#[derive(serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum Batched<'a> {
    Batched(&'a Value),
}

/// `batch` (as JSON) refused: its step was not kept.
pub(crate) fn refused(batch: Value, not_kept: &NotKept) -> Value {
    match serde_json::from_value::<Batch>(batch.clone()) {
        Ok(mut b) => {
            b.refuse(not_kept);
            serde_json::to_value(&b).unwrap_or(batch)
        }
        Err(_) => batch,
    }
}

impl Outbox {
    /// Nothing held or staged.
    pub(crate) fn is_idle(&self) -> bool {
        self.staged.is_empty() && self.queue.lock().items.is_empty()
    }
}

impl Outbox {
    /// The principal's name.
    pub(crate) fn principal(&self) -> &str {
        &self.principal
    }

    /// Past its bound: nothing more goes.
    pub(crate) fn is_cut(&self) -> bool {
        self.cut
    }

    /// Puts `batch` (as JSON) after the others, numbered, sent once handed over — unless
    /// it goes past `bounds`: then it is handed back.
    pub(crate) fn stage_within(&mut self, batch: Value, bounds: PeerBounds) -> Result<(), Value> {
        let size = size(&batch);
        if self.full(bounds, size) {
            return Err(batch);
        }
        self.stage(batch, size);
        Ok(())
    }

    fn stage(&mut self, batch: Value, size: usize) {
        self.sent += 1;
        self.staged.push((self.sent, batch, size));
    }

    /// Past its bound: everything held or staged dropped and returned (oldest first),
    /// nothing more taken but `end`, staged now.
    pub(crate) fn cut(&mut self, end: impl FnOnce(Vec<Value>) -> Option<Value>) {
        let dropped = self.drop_held();
        self.cut = true;
        if let Some(end) = end(dropped) {
            let size = size(&end);
            self.stage(end, size);
        }
    }

    /// The staged batches refused (their step was not kept), each as JSON.
    pub(crate) fn refuse_staged(&mut self, not_kept: &NotKept) {
        for (_, b, size) in &mut self.staged {
            *b = refused(std::mem::take(b), not_kept);
            *size = self::size(b);
        }
    }
}
