//! A server's `push/event` (SPEC §9, RFC-014 §5.2): checked against the grant and the
//! host's push policy, answered, and told to the subscribers (its hints were tapped when
//! it was read, whatever is decided here).

use super::actor::ServerLink;
use super::core::phase::LinkPhase;
use super::core::push::{admit_push, content_digest};
use super::events::LinkEvent;
use crate::state::seen_ids::Seen;
use mcpl_protocol::mcpl::PushEventResult;
use mcpl_protocol::{Message, Request, Response};
use tracing::debug;

impl ServerLink {
    /// `push/event` (SPEC §9), admitted by the grant before anything else is read of it
    /// (§5.4, §16.6; `host-core/src/link/push.rs` decides 1–4), in this order:
    ///
    /// 1. a server that does not speak MCPL (or was left as plain MCP): -32601;
    /// 2. before the initial policy's receipt (§5.3), or `pushEvents` not granted: -32002
    ///    with `data.capability`;
    /// 3. params that do not decode: -32602;
    /// 4. a feature set not declared: -32003; declared but disabled: -32001; one whose
    ///    `uses` lacks `pushEvents`: -32002, a declaration mismatch (§6.4 rule 2);
    /// 5. an `eventId` already admitted with the same content (SPEC §9.4, a retry):
    ///    answered accepted, not shown again;
    /// 6. otherwise the push policy decides, and subscribers are told. An `eventId` admitted
    ///    before with other content is another event under a reused id (SPEC §9.2 says ids
    ///    are unique, but a server restarted may number from 1 again): it is decided and
    ///    shown like a new one, and the reuse logged (**\[project\]**: a retry shown twice
    ///    costs less than an event lost unseen).
    ///
    /// Its hints were tapped already, whatever the answer (§5.2): subscribers are told of a
    /// push that is not shown (5, and every refusal before 6) as
    /// [`LinkEvent::PushNotShown`], so the changes its hints made are told without it.
    ///
    /// A stream's event under the stateless profile (`answer` false: a notification,
    /// profile §3.5) is decided the same way, its id remembered in the same
    /// [`SeenEvents`](crate::state::seen_ids::SeenEvents) (SPEC §9.2: shown at most once),
    /// and nothing is written back.
    pub(super) fn on_push(&mut self, request: Request, epoch: u64, answer: bool) {
        let id = request.id.clone();
        let session = self.lifecycle.live().and_then(|l| l.session());
        let ready = self.lifecycle.phase() == LinkPhase::Ready;
        let admitted = admit_push(session, ready, &request).map(|params| {
            let seen = self
                .seen_events
                .admit(&params.event_id, content_digest(&params));
            (params, seen)
        });
        match admitted {
            Ok((params, Seen::Retry)) => {
                debug!(link = %self.config.name, event = %crate::state::seen_ids::event_key(&params.event_id),
                    "a push seen before; not shown again");
                let result = PushEventResult {
                    accepted: true,
                    ..Default::default()
                };
                if answer {
                    self.send_message(Message::Response(Response::ok_typed(id, &result)));
                }
                self.emit(LinkEvent::PushNotShown {
                    epoch,
                    event_id: params.event_id,
                });
            }
            Ok((mut params, seen)) => {
                if seen == Seen::Reused {
                    mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name,
                        event = %crate::state::seen_ids::event_key(&params.event_id),
                        "a push reuses the eventId of another event; shown as a new one");
                }
                // SPEC §16.1: a bare tag is not a tag; tags are a set.
                let tags = mcpl_protocol::mcpl::valid_tags(&params.tags);
                if tags.len() != params.tags.len() {
                    mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name,
                        tags = ?params.tags, "a push's tags that are not namespace:value (or repeated) are ignored");
                    params.tags = tags;
                }
                let result = self.config.push_policy.decide(&params);
                if answer {
                    self.send_message(Message::Response(Response::ok_typed(id, &result)));
                }
                self.emit(LinkEvent::Push {
                    epoch,
                    params: Box::new(params),
                    result,
                });
            }
            Err(error) => {
                mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, %error, "refused a push/event");
                // The id as the tap read it from the raw params, which may not decode.
                let event_id = request
                    .params_value()
                    .as_ref()
                    .and_then(|p| p.get("eventId"))
                    .and_then(|e| e.as_str())
                    .unwrap_or_default()
                    .to_owned();
                if answer {
                    self.send_message(Message::Response(Response::err(Some(id), error)));
                }
                self.emit(LinkEvent::PushNotShown { epoch, event_id });
            }
        }
    }
}
