//! The session's own requests to the host (`push/event`, and a tool handler's
//! `sampling/createMessage` or `elicitation/create`), waiting for their responses.
//!
//! Ids are integers from 1, per session. A response is matched by id; one to an id not
//! waited for (never sent, already answered, timed out) is the caller's to log and
//! ignore. Each entry may carry a timer token (the actor's `SpawnHandle`) to cancel when
//! the answer comes first.

use mcpl_protocol::jsonrpc::{ErrorObject, Id, RawValue};
use std::collections::HashMap;
use tokio::sync::oneshot;

/// Why a request got no response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The session closed first.
    Closed,
    /// Its timer ran out first.
    TimedOut,
    /// The host request it served ended first (a tool call answered or cancelled); the
    /// session told the host it is cancelled.
    Abandoned,
}

/// What the requester receives: the host's result (its JSON text, for the requester to
/// decode as its method's result) or error, or why none came.
pub(crate) type Reply = Result<Result<Box<RawValue>, ErrorObject>, Failure>;

struct Pending<T> {
    method: &'static str,
    reply: oneshot::Sender<Reply>,
    timer: Option<T>,
    /// The host's request this one serves, if any (a tool call asking for sampling).
    serves: Option<Id>,
}

/// The table of requests in flight.
pub(crate) struct Outgoing<T> {
    next_id: i64,
    pending: HashMap<Id, Pending<T>>,
}

impl<T> Default for Outgoing<T> {
    fn default() -> Self {
        Outgoing {
            next_id: 1,
            pending: HashMap::new(),
        }
    }
}

impl<T> Outgoing<T> {
    /// Allocates an id for a request of `method` and starts waiting for its response.
    pub(crate) fn register(&mut self, method: &'static str) -> (Id, oneshot::Receiver<Reply>) {
        self.register_serving(method, None)
    }

    /// [`Outgoing::register`] for a request that serves the host's request `serves`, so
    /// it can be abandoned when that one ends ([`Outgoing::abandon_serving`]).
    pub(crate) fn register_serving(
        &mut self,
        method: &'static str,
        serves: Option<Id>,
    ) -> (Id, oneshot::Receiver<Reply>) {
        let id = Id::Number(self.next_id);
        self.next_id += 1;
        let (reply, rx) = oneshot::channel();
        self.pending.insert(
            id.clone(),
            Pending {
                method,
                reply,
                timer: None,
                serves,
            },
        );
        (id, rx)
    }

    /// Fails every request serving the host's request `served` with
    /// [`Failure::Abandoned`]; returns their ids and timers, to tell the host and cancel.
    pub(crate) fn abandon_serving(&mut self, served: &Id) -> Vec<(Id, Option<T>)> {
        let ids: Vec<Id> = self
            .pending
            .iter()
            .filter(|(_, p)| p.serves.as_ref() == Some(served))
            .map(|(id, _)| id.clone())
            .collect();
        let mut abandoned: Vec<(Id, Option<T>)> = ids
            .into_iter()
            .filter_map(|id| {
                let p = self.pending.remove(&id)?;
                let _ = p.reply.send(Err(Failure::Abandoned));
                Some((id, p.timer))
            })
            .collect();
        abandoned.sort_by(|a, b| a.0.cmp(&b.0));
        abandoned
    }

    /// Attaches the timer that will expire `id`.
    pub(crate) fn set_timer(&mut self, id: &Id, timer: T) {
        if let Some(p) = self.pending.get_mut(id) {
            p.timer = Some(timer);
        }
    }

    /// Delivers a response. Returns the request's method and its timer (to cancel), or
    /// `None` when nothing waited for this id.
    pub(crate) fn resolve(
        &mut self,
        id: &Id,
        outcome: Result<Box<RawValue>, ErrorObject>,
    ) -> Option<(&'static str, Option<T>)> {
        let p = self.pending.remove(id)?;
        // The requester may have given up waiting (its future dropped); nothing to do then.
        let _ = p.reply.send(Ok(outcome));
        Some((p.method, p.timer))
    }

    /// Fails `id` with [`Failure::TimedOut`] if it is still waiting.
    pub(crate) fn expire(&mut self, id: &Id) -> bool {
        match self.pending.remove(id) {
            Some(p) => {
                let _ = p.reply.send(Err(Failure::TimedOut));
                true
            }
            None => false,
        }
    }

    /// Fails everything still waiting with [`Failure::Closed`].
    pub(crate) fn close_all(&mut self) {
        for (_, p) in self.pending.drain() {
            let _ = p.reply.send(Err(Failure::Closed));
        }
    }

    /// How many requests wait.
    pub(crate) fn len(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::jsonrpc::to_raw;
    use serde_json::json;

    /// A reply's result as a value, to compare.
    fn value(reply: Reply) -> Result<Result<serde_json::Value, ErrorObject>, Failure> {
        reply.map(|r| r.map(|raw| serde_json::from_str(raw.get()).unwrap()))
    }

    #[tokio::test]
    async fn responses_match_by_id_and_strays_are_reported() {
        let mut o: Outgoing<u8> = Outgoing::default();
        let (a, rx_a) = o.register("push/event");
        let (b, rx_b) = o.register("push/event");
        assert_eq!((a.clone(), b.clone()), (Id::Number(1), Id::Number(2)));
        o.set_timer(&b, 7);
        assert_eq!(
            o.resolve(&b, Ok(to_raw(&json!({"accepted": true})))),
            Some(("push/event", Some(7)))
        );
        assert_eq!(
            value(rx_b.await.unwrap()),
            Ok(Ok(json!({"accepted": true})))
        );
        assert_eq!(o.resolve(&b, Ok(to_raw(&json!({})))), None);
        assert_eq!(
            o.resolve(&Id::String("1".into()), Ok(to_raw(&json!({})))),
            None
        );
        assert_eq!(o.len(), 1);
        assert!(o.expire(&a));
        assert!(!o.expire(&a));
        assert_eq!(value(rx_a.await.unwrap()), Err(Failure::TimedOut));
    }

    #[tokio::test]
    async fn requests_serving_a_host_request_are_abandoned_with_it() {
        let mut o: Outgoing<u8> = Outgoing::default();
        let call = Id::String("call-1".into());
        let (a, rx_a) = o.register_serving("sampling/createMessage", Some(call.clone()));
        let (b, rx_b) = o.register_serving("elicitation/create", Some(call.clone()));
        let (_, mut rx_other) = o.register_serving("elicitation/create", Some(Id::Number(9)));
        let (_, mut rx_push) = o.register("push/event");
        o.set_timer(&b, 3);
        assert_eq!(o.abandon_serving(&call), vec![(a, None), (b, Some(3))]);
        assert_eq!(value(rx_a.await.unwrap()), Err(Failure::Abandoned));
        assert_eq!(value(rx_b.await.unwrap()), Err(Failure::Abandoned));
        assert!(rx_other.try_recv().is_err() && rx_push.try_recv().is_err());
        assert_eq!(o.len(), 2);
        assert!(o.abandon_serving(&call).is_empty());
    }

    #[tokio::test]
    async fn closing_fails_every_waiter() {
        let mut o: Outgoing<()> = Outgoing::default();
        let (_, rx1) = o.register("push/event");
        let (_, rx2) = o.register("push/event");
        o.close_all();
        assert_eq!(value(rx1.await.unwrap()), Err(Failure::Closed));
        assert_eq!(value(rx2.await.unwrap()), Err(Failure::Closed));
        assert_eq!(o.len(), 0);
    }
}
