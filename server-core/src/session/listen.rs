//! `subscriptions/listen` (MCP 2026-07-28, `basic/patterns/subscriptions.md`): a modern
//! client's stream of the notifications it opts in to, on stdio and WebSocket beside its
//! other requests, and on Streamable HTTP as the SSE answer of its own POST.
//!
//! - **The filter.** It honours `toolsListChanged`, and `resourceSubscriptions` when the
//!   server lets resources be watched (`watch.rs`: the URIs of resources it serves, at most
//!   [`MAX_WATCHED`](super::watch::MAX_WATCHED) of them, -32600 past it); it leaves out of
//!   the acknowledgement what it does not serve (`promptsListChanged`,
//!   `resourcesListChanged`: those lists are told no change, and `resourceSubscriptions`
//!   without the offer). **\[project\]** Read liberally: no `notifications` is a stream that
//!   carries nothing; a member of the wrong type is -32602.
//! - **The acknowledgement** `notifications/subscriptions/acknowledged` goes first, before
//!   anything else of the stream, with `_meta["io.modelcontextprotocol/subscriptionId"]`
//!   the listen's request id and the honoured subset.
//! - **What it carries.** `notifications/tools/list_changed`, with the subscription id in
//!   `_meta`, whenever the tool list this session's principal is shown changes (a manifest
//!   replacement; a modern client sees the plain list, which opening toolsets does not
//!   change, §8); `notifications/resources/updated {uri}`, with the subscription id, when
//!   a resource it names changes (`watch.rs`). One per change and stream: a burst is as
//!   many.
//! - **`mcpl/hints`** (`docs/rfc014-stateless.md` §3.5, issue #40 **\[project\]**). A
//!   hinted listen (`modern.rs`: a named principal's request declaring `mcpl/core`) whose
//!   filter has `mcpl/hints: true` is acknowledged with it, and then carries every change
//!   of the principal's stamped state as `notifications/mcpl/hints` (params: the change's
//!   stamped entries, `VersionedHints`, with the subscription id in `_meta`). Its first
//!   message after the acknowledgement is what is stamped after the listen's
//!   `mcpl/since` (a statement when that is 0 or behind what is kept; `{version}` alone
//!   when it is current), so the gap between two streams closes at once (vector S10). Any
//!   other listen leaves the member out of its acknowledgement and is sent none.
//! - **`mcpl/events`** (`docs/rfc014-stateless.md` §3.5, **\[project\]**). A hinted
//!   listen whose filter has `mcpl/events: true` and whose `_meta["mcpl/grant"]` grants
//!   `pushEvents` with a feature set the server may push under (SPEC §9) is acknowledged
//!   with it; any other (no grant, a grant without `pushEvents`, one that cannot be read)
//!   is not, and is sent no event. Each event the principal's delivery brings this
//!   session is then sent on it as `notifications/mcpl/event`: the legacy `push/event`
//!   params (`featureSet`, `eventId`, `timestamp`, `payload`, `tags`, `toolset`,
//!   `instance`; no `coalesce`) with `hints` a `VersionedHints` — what was stamped after
//!   the stream's last event (its first: after the version when it opened), and always
//!   the newest version's entries, so a host one behind may raise its mark — and the
//!   delivery's `suggest` on its first event. A notification: no acceptance, no retry.
//!   Opening the first such stream makes the session one the principal pushes to: its
//!   pending invitations come then (legacy: after the handshake, SPEC §5.3). An event
//!   that finds no such stream is **not delivered** (SPEC §9 with no acceptor); its
//!   changes reach the host by their stamps in its next result or stream message.
//! - **Its end.** The client's `notifications/cancelled` for the listen's id (stdio,
//!   WebSocket) or its closing the SSE answer (HTTP, which ends the request's connection)
//!   ends the stream without a response (MCP cancellation); the session closing by the
//!   server's choice answers each open stream with its graceful completion result
//!   (`resultType: "complete"` and the subscription id in `_meta`) before it goes, and on
//!   stdio and WebSocket then sends `notifications/cancelled` naming it
//!   ([`SessionCore::close_listens`]).
//! - **Bounds.** A listen holds no request of the principal's; a principal has at most
//!   [`MAX_LISTENS`] open over all its connections (counted by the actor,
//!   `session/dispatch.rs`), and so has an anonymous WebSocket connection, whose each
//!   listen is served on a session of its own (`modern.rs`). On Streamable HTTP an
//!   anonymous listen holds one of its address's anonymous slots while it lasts. A stream
//!   has no queue of its own on stdio and WebSocket: its notifications join the connection's bounded queue like any message, and a peer that
//!   stops reading loses its connection. On Streamable HTTP the stream is its POST's answer,
//!   with that request's queue (`ServerOptions::http_queue_limit`): a notification that finds
//!   it full is dropped (**\[project\]**: each one is the same signal, "read the list
//!   again", and those already queued still say it after the change that was dropped). So
//!   is an `mcpl/events` event: it is not delivered, as one with no stream, and the
//!   stamped entries it carried reach the host in the next result's delta (profile §3.5:
//!   correctness never depends on a stream).

use super::SessionCore;
use super::kinds::{EventStream, Listen};
use super::output::{Event, Io, Transmit};
use super::watch::{too_many, within_bounds};
use mcpl_protocol::grant::Policy;
use mcpl_protocol::hints::Suggestion;
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, Id, Notification, Request, Response, to_raw};
use mcpl_protocol::mcpl::FeatureSetsUpdateParams;
use mcpl_protocol::method::{Cancelled, Method, ToolListChanged};
use mcpl_protocol::modern::{
    self, ListenParams, RESULT_COMPLETE, SUBSCRIPTION_ID_KEY, SUBSCRIPTIONS_ACKNOWLEDGED,
    SubscriptionFilter,
};
use mcpl_protocol::stateless::{self, VersionedHints};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// How many `subscriptions/listen` streams one principal may have open at once, over all
/// its connections (the actor counts them, `session/dispatch.rs`), and an anonymous
/// connection whose modern requests are served each on a session of their own.
/// **\[project\]** 8: a client needs one (every type in one filter), a few more for
/// separate consumers; each holds a connection's worth of buffers on HTTP.
pub const MAX_LISTENS: usize = 8;

impl Listen {
    /// Whether the stream carries the changes of the resource at `uri`.
    pub(super) fn watches(&self, uri: &str) -> bool {
        self.resources.contains(uri)
    }
}

impl<T: Io> SessionCore<T> {
    /// A modern `subscriptions/listen`: the stream opened and acknowledged (module docs).
    /// `since` is a hinted listen's `mcpl/since` (`None`: not hinted).
    pub(super) fn open_listen(&mut self, req: Request, since: Option<u64>) {
        let params = match req.params_as::<ListenParams>() {
            Ok(p) => p,
            Err(e) => return self.send(Response::err(Some(req.id), e).into()),
        };
        let tools = params.notifications.tools_list_changed == Some(true);
        let asks_hints = params.notifications.extensions.get(stateless::FILTER_HINTS)
            == Some(&Value::Bool(true));
        let hints = since.filter(|_| asks_hints);
        let asks_events = params
            .notifications
            .extensions
            .get(stateless::FILTER_EVENTS)
            == Some(&Value::Bool(true));
        // Profile §3.5: events only under a grant with `pushEvents` and a feature set the
        // server may push under with it (SPEC §9).
        let events = since.filter(|_| asks_events).and_then(|since| {
            let policy = stream_grant(&req)?;
            self.stream_feature_set(&policy)?;
            let mark = self.versioned.as_ref().map_or(since, |v| v.version());
            Some(EventStream { policy, mark })
        });
        // `resourceSubscriptions`, when resources may be watched: the URIs of resources
        // this server serves, in the order asked, each once (`watch.rs`).
        let asked = params
            .notifications
            .resource_subscriptions
            .filter(|_| self.profile.watchable.is_some());
        let resource_subscriptions = match asked {
            Some(asked) => {
                let mut seen = BTreeSet::new();
                let asked: Vec<String> = asked
                    .into_iter()
                    .filter(|u| seen.insert(u.clone()))
                    .collect();
                if !within_bounds(&asked) {
                    let e = too_many("too many resourceSubscriptions for one stream");
                    return self.send(Response::err(Some(req.id), e).into());
                }
                Some(
                    asked
                        .into_iter()
                        .filter(|u| self.watchable(u))
                        .collect::<Vec<_>>(),
                )
            }
            None => None,
        };
        let resources: BTreeSet<String> =
            resource_subscriptions.iter().flatten().cloned().collect();
        let mut honoured = SubscriptionFilter {
            tools_list_changed: tools.then_some(true),
            resource_subscriptions,
            ..SubscriptionFilter::default()
        };
        if hints.is_some() {
            honoured
                .extensions
                .insert(stateless::FILTER_HINTS.to_owned(), Value::Bool(true));
        }
        if events.is_some() {
            honoured
                .extensions
                .insert(stateless::FILTER_EVENTS.to_owned(), Value::Bool(true));
        }
        // Before the acknowledgement: once the client reads it, a change reaches it.
        self.watching(resources.iter().cloned());
        let pushes = events.is_some();
        let listen = Listen {
            tools,
            hints,
            told: false,
            resources,
            events,
        };
        self.listens.push((req.id.clone(), listen));
        let ack = Notification {
            method: SUBSCRIPTIONS_ACKNOWLEDGED.to_owned(),
            params: Some(to_raw(&modern::acknowledged(&req.id, &honoured))),
        };
        self.send(ack.into());
        if let Some(since) = hints
            && self.versioned.is_some()
        {
            // Vector S10: what the client missed since its mark, at once.
            let delta = self.versioned_since(since);
            self.send_hints(&req.id, delta);
        }
        if pushes {
            // The principal's invitations waiting for a host that can be pushed to come
            // now (**[project]**: a modern session is pushed to once it has a stream that
            // carries events; legacy's is once its handshake is done, SPEC §5.3).
            self.pushable();
        }
    }

    /// The feature set events go under on a stream opened with `policy` (SPEC §9: the
    /// first declared one using `pushEvents` that the grant leaves enabled), as the
    /// manifest is shown to a hinted host; `None` when none may be pushed under.
    fn stream_feature_set(&self, policy: &Policy) -> Option<String> {
        let shown = self.manifest.shown_to(true);
        crate::push::feature_set_for(shown, policy, None).ok()
    }

    /// Whether any open stream carries events.
    pub(super) fn streams_events(&self) -> bool {
        self.listens.iter().any(|(_, l)| l.events.is_some())
    }

    /// Sends a delivery's `events` on every stream that carries events (module docs): each
    /// as `notifications/mcpl/event`, its hints what was stamped after the stream's mark —
    /// and at least the newest version's entries, so that a host whose mark is one behind
    /// may raise it (profile §3.5) — with `suggest`, the delivery's suggestions, on the
    /// first event only (shown once, §5.3).
    pub(super) fn stream_events(&mut self, events: &[T::Event], suggest: &[Suggestion]) {
        if events.is_empty() {
            return;
        }
        let version = self.versioned.as_ref().map_or(0, |v| v.version());
        let streams: Vec<(Id, String, u64)> = self
            .listens
            .iter()
            .filter_map(|(id, l)| {
                let e = l.events.as_ref()?;
                let feature_set = self.stream_feature_set(&e.policy)?;
                Some((id.clone(), feature_set, e.mark))
            })
            .collect();
        for (id, feature_set, mark) in streams {
            let stamped = self.versioned_since(mark.min(version.saturating_sub(1)));
            for (n, event) in events.iter().enumerate() {
                let mut hints = stamped.clone();
                if n == 0 {
                    hints.entries.suggest = suggest.to_vec();
                }
                self.transmit(Transmit::StreamEvent {
                    listen: id.clone(),
                    event: event.clone(),
                    feature_set: feature_set.clone(),
                    hints,
                });
            }
            if let Some(e) = self
                .listens
                .iter_mut()
                .find(|(l, _)| *l == id)
                .and_then(|(_, l)| l.events.as_mut())
            {
                e.mark = version;
            }
        }
    }

    /// Tells every `mcpl/hints` stream what was stamped after its mark (module docs).
    pub(super) fn tell_listens_hints(&mut self) {
        let Some(version) = self.versioned.as_ref().map(|v| v.version()) else {
            return;
        };
        let behind: Vec<(Id, u64)> = self
            .listens
            .iter()
            .filter_map(|(id, l)| {
                l.hints
                    .filter(|m| *m < version || !l.told)
                    .map(|m| (id.clone(), m))
            })
            .collect();
        for (id, mark) in behind {
            let delta = self.versioned_since(mark);
            self.send_hints(&id, delta);
        }
    }

    /// Sends `hints` on the stream `id` and moves its mark to their version.
    fn send_hints(&mut self, id: &Id, hints: VersionedHints) {
        if let Some((_, l)) = self.listens.iter_mut().find(|(l, _)| l == id) {
            l.hints = Some(hints.version);
            l.told = true;
        }
        let mut params = match serde_json::to_value(&hints) {
            Ok(Value::Object(m)) => m,
            _ => return,
        };
        params.insert("_meta".to_owned(), json!({ SUBSCRIPTION_ID_KEY: id }));
        let told = Notification {
            method: stateless::HINTS_NOTIFICATION.to_owned(),
            params: Some(to_raw(&params)),
        };
        self.send(told.into());
    }

    /// Whether `id` is an open stream's.
    pub fn is_listening(&self, id: &Id) -> bool {
        self.listens.iter().any(|(l, _)| l == id)
    }

    /// Ends the stream `id` opened, if open: nothing is written (the client ended it, or
    /// its connection did). True when there was one.
    pub(super) fn end_listen(&mut self, id: &Id) -> bool {
        let Some(at) = self.listens.iter().position(|(l, _)| l == id) else {
            return false;
        };
        let (_, ended) = self.listens.remove(at);
        self.released(ended.resources);
        tracing::debug!(%id, "subscriptions/listen stream ended by the client");
        self.emit(Event::ListenEnded(id.clone()));
        true
    }

    /// The tool list this session is shown changed: every stream that opted in is told.
    pub(super) fn tell_listens_tools_changed(&mut self) {
        let ids: Vec<Id> = self
            .listens
            .iter()
            .filter(|(_, l)| l.tools)
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            let told = Notification {
                method: ToolListChanged::NAME.to_owned(),
                params: Some(to_raw(&json!({ "_meta": { SUBSCRIPTION_ID_KEY: id } }))),
            };
            self.send(told.into());
        }
    }

    /// The server ends every open stream (the session is closing): each is answered with
    /// its graceful completion result (MCP subscriptions, "Graceful Closure"), then, when
    /// `and_cancel` (the stream shares its connection: stdio, WebSocket), told cancelled
    /// (MCP cancellation: a server MUST send `notifications/cancelled` naming a listen it
    /// tears down). **\[project\]** The result first: a client that reads it first knows
    /// the end was graceful (the Python SDK takes a cancel alone for a lost stream, and
    /// ignores one for a stream already ended); on Streamable HTTP the result ends the
    /// stream's own answer, which is its teardown, so nothing follows it.
    pub fn close_listens(&mut self, and_cancel: bool) {
        for (id, ended) in std::mem::take(&mut self.listens) {
            self.released(ended.resources);
            let result = json!({
                "resultType": RESULT_COMPLETE,
                "_meta": { SUBSCRIPTION_ID_KEY: id },
            });
            self.send(Response::ok(id.clone(), result).into());
            if and_cancel {
                let cancelled = Notification {
                    method: Cancelled::NAME.to_owned(),
                    params: Some(to_raw(&json!({
                        "requestId": id,
                        "reason": "the server closed the session",
                        "_meta": { SUBSCRIPTION_ID_KEY: id },
                    }))),
                };
                self.send(cancelled.into());
            }
            self.emit(Event::ListenEnded(id));
        }
    }

    /// How many streams are open on this connection.
    #[cfg(test)]
    pub fn listens_open(&self) -> usize {
        self.listens.len()
    }
}

/// The grant a listen runs under (profile §3.2: `_meta["mcpl/grant"]`), when it reads as
/// one; absent or unreadable, `None` (**\[project\]** read liberally: a grant that cannot
/// be read grants no events, and the stream is opened without them).
fn stream_grant(req: &Request) -> Option<Policy> {
    let params = req.params.as_deref()?;
    let mut params: serde_json::Map<String, Value> = serde_json::from_str(params.get()).ok()?;
    let grant = match params.remove("_meta")? {
        Value::Object(mut meta) => meta.remove(stateless::GRANT)?,
        _ => return None,
    };
    let params: FeatureSetsUpdateParams = serde_json::from_value(grant).ok()?;
    Policy::read(&params).ok()
}

/// -32600 for a listen past [`MAX_LISTENS`].
pub fn too_many_listens(max: usize) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_REQUEST,
        format!(
            "too many subscriptions/listen streams open (at most {max} per principal, or per anonymous connection); cancel one first"
        ),
    )
}
