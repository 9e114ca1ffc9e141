//! The inbound side. Each message read is first offered to the tap (§5.2), then:
//! a response goes to whoever waits for it (or is dropped, read, if it timed out; on an
//! unordered link a request whose answer broke off is cancelled first); a server
//! request is answered (`ping`, `push/event`, `elicitation/create` as `elicit` says; -32002 for a method whose capability is not
//! granted, -32601 for the rest); a notification is acted on or passed to subscribers.
//! Something unreadable is logged and, where it may have been a request, answered with the
//! decode error; the link goes on.

use super::actor::ServerLink;
use super::core::error::DisconnectReason;
use super::core::grant::refusal_of;
use super::events::LinkEvent;
use super::io::LinkInput;
use super::requests::now;
use super::tap::{ReadEvent, TapEvent};
use actix::prelude::*;
use mcpl_protocol::client_features::ElicitParams;
use mcpl_protocol::hints::HintChanges;
use mcpl_protocol::jsonrpc::DecodeError;
use mcpl_protocol::mcp::Empty;
use mcpl_protocol::mcpl::ManifestChangedParams;
use mcpl_protocol::method::{
    Cancelled, Elicit, ManifestChanged, Method, Ping, PushEvent, ToolHints, ToolListChanged,
};
use mcpl_protocol::{ErrorObject, Id, Message, Notification, Request, Response};
use mcpl_transport::{Inbound, StreamId};
use tracing::debug;

impl StreamHandler<LinkInput> for ServerLink {
    fn handle(&mut self, input: LinkInput, ctx: &mut Context<Self>) {
        let current = self.lifecycle.live().map(|l| l.epoch());
        match input {
            LinkInput::Read { epoch, inbound } if current == Some(epoch) => {
                self.on_inbound(inbound, ctx)
            }
            LinkInput::Closed { epoch, why } if current == Some(epoch) => {
                // Issue #43: a stdio server's own last words, rather than "closed".
                let reason = match why {
                    Some(why) => DisconnectReason::Ended { why },
                    None => DisconnectReason::Closed,
                };
                self.disconnect(reason, ctx)
            }
            // From a connection already dropped.
            _ => {}
        }
    }

    /// The `Closed` item has already said so; the default would stop the actor.
    fn finished(&mut self, _ctx: &mut Context<Self>) {}
}

impl ServerLink {
    fn on_inbound(&mut self, inbound: Inbound, ctx: &mut Context<Self>) {
        match inbound {
            Inbound::Message { stream, message } => self.on_message(stream, message, ctx),
            Inbound::Malformed { stream, error } => self.on_malformed(stream, error, ctx),
            Inbound::TooLarge {
                stream,
                size,
                limit,
            } => {
                mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, ?stream, size, limit, "refused a message larger than the limit");
                self.tap_unreadable(format!(
                    "a message of {size} bytes, over the limit of {limit}"
                ));
                self.hasten_listing(ctx);
            }
        }
    }

    fn tap_unreadable(&mut self, why: String) {
        if let Some(live) = self.lifecycle.live() {
            let event = TapEvent::Unreadable {
                epoch: live.epoch(),
                why,
            };
            self.tap(&event);
        }
    }

    fn on_message(&mut self, stream: StreamId, message: Message, ctx: &mut Context<Self>) {
        let Some(live) = self.lifecycle.live() else {
            return;
        };
        let answers = match &message {
            Message::Response(r) => live.core.pending.answers(r.id.as_ref()),
            _ => None,
        };
        // Under the stateless profile the stamped view reads it first, and the host reads
        // it as the legacy message saying what it changed (`host-core/src/link/profile.rs`).
        let message = self.profile_read(message, answers.as_ref().map(|a| a.method));
        let Some(live) = self.lifecycle.live() else {
            return;
        };
        let read = ReadEvent {
            epoch: live.epoch(),
            stream,
            // Under the profile the host core reads in order (`discover.rs`).
            ordered: live.info.ordered || live.core.hinted.is_some(),
            message,
            answers,
        };
        // §5.2: hints apply when read, before anything is decided about the message.
        let event = TapEvent::Read(read);
        self.tap(&event);
        let TapEvent::Read(read) = event else { return };
        if let Some(live) = self.lifecycle.live_mut() {
            live.core.handle_read(read.message, now());
        }
        self.drive(ctx);
    }

    /// A message through the stateless profile's view, when the connection speaks it.
    fn profile_read(&mut self, message: Message, answers: Option<&'static str>) -> Message {
        let Some(live) = self.lifecycle.live_mut() else {
            return message;
        };
        let Some(hinted) = live.core.hinted.as_mut() else {
            return message;
        };
        let sent = match &message {
            Message::Response(r) => hinted.sent(r.id.as_ref()),
            _ => None,
        };
        let tools = live.session().map(|s| s.tools.clone()).unwrap_or_default();
        let (message, ignored) = self
            .profile
            .read(message, answers.map(|m| (m, sent)), &tools);
        for why in ignored {
            mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, %why, "a stamped hint entry this host cannot read");
        }
        let since = self.profile.since();
        if let Some(hinted) = self
            .lifecycle
            .live_mut()
            .and_then(|l| l.core.hinted.as_mut())
        {
            hinted.since = since;
        }
        message
    }

    pub(super) fn on_server_request(&mut self, request: Request, epoch: u64) {
        let response = match request.method.as_str() {
            Ping::NAME => Response::ok_typed(request.id, &Empty::default()),
            // Profile §3.5: a stream's `notifications/mcpl/event`, handed on as the
            // `push/event` it stands for (`host-core/src/link/profile.rs`), has no answer.
            PushEvent::NAME
                if self.profiled()
                    && request.id == Id::String(super::core::profile::STREAM_EVENT_ID.into()) =>
            {
                return self.on_push(request, epoch, false);
            }
            PushEvent::NAME => return self.on_push(request, epoch, true),
            Elicit::NAME => match request.params_as::<ElicitParams>() {
                Ok(params) => {
                    let (answer, why) = super::core::elicit::unattended(&params);
                    tracing::info!(link = %self.config.name, question = %params.message, action = answer.action.as_str(), "the server asked for input: {why}");
                    Response::ok_typed(request.id, &answer)
                }
                Err(error) => Response::err(Some(request.id), error),
            },
            other => {
                debug!(link = %self.config.name, method = other, "refused a server request this host does not serve");
                Response::err(Some(request.id), self.refusal_of(other))
            }
        };
        self.send_message(Message::Response(response));
    }

    /// Why a server request this host does not serve is refused (`host-core/src/link/grant.rs`).
    fn refusal_of(&self, method: &str) -> ErrorObject {
        refusal_of(self.lifecycle.live().and_then(|l| l.session()), method)
    }

    pub(super) fn on_notification(
        &mut self,
        notification: Notification,
        epoch: u64,
        ctx: &mut Context<Self>,
    ) {
        match notification.method.as_str() {
            // Before Ready the first listing is still to come and covers it.
            ToolListChanged::NAME => self.refresh_tools(None, true, ctx),
            ManifestChanged::NAME => match notification.params_as::<ManifestChangedParams>() {
                Ok(params) => {
                    self.emit(LinkEvent::ManifestChanged { epoch, params });
                    self.refresh_manifest(ctx);
                }
                // SPEC §17.3: the announcement carries nothing the host needs — the host
                // re-derives everything from the manifest it fetches — so params it cannot
                // read (no `revision`: a server without §17.2's digest) still cue the
                // re-read **[project]**; §17.8's limiter bounds what that costs. Ignored,
                // a removed toolset's instances would stay open here (§4.1, vector 33).
                Err(error) => {
                    mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, %error,
                        "mcpl/manifestChanged with params this host cannot read; re-reading the manifest all the same");
                    self.emit(LinkEvent::Notification {
                        epoch,
                        notification,
                    });
                    self.refresh_manifest(ctx);
                }
            },
            ToolHints::NAME => match notification.params_as::<HintChanges>() {
                Ok(changes) => self.emit(LinkEvent::ToolHints { epoch, changes }),
                Err(error) => {
                    // The tap's consumer (a hint state) decides what it means and says so.
                    debug!(link = %self.config.name, %error, "malformed tools/hints");
                    self.emit(LinkEvent::Notification {
                        epoch,
                        notification,
                    });
                }
            },
            super::discover::SUBSCRIPTIONS_ACKNOWLEDGED => {
                self.on_listen_acknowledged(&notification);
                self.emit(LinkEvent::Notification {
                    epoch,
                    notification,
                });
            }
            // Server requests are answered as soon as they are read: nothing to stop.
            Cancelled::NAME => {
                debug!(link = %self.config.name, "the server cancelled a request already answered")
            }
            _ => self.emit(LinkEvent::Notification {
                epoch,
                notification,
            }),
        }
    }

    fn on_malformed(&mut self, stream: StreamId, error: DecodeError, ctx: &mut Context<Self>) {
        mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, ?stream, %error, "unreadable message from the server");
        self.tap_unreadable(error.to_string());
        // Carrying the id of one of our requests, it was meant as that request's response:
        // fail the request now rather than let it time out, and do not answer a response.
        if let DecodeError::Invalid {
            id: Some(id),
            detail,
        } = &error
            && let Some(live) = self.lifecycle.live_mut()
            && live.core.handle_malformed(id, detail, now())
        {
            return self.drive(ctx);
        }
        self.hasten_listing(ctx);
        self.send_message(Message::Response(error.to_response()));
    }
}
