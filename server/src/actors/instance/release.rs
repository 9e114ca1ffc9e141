//! An instance released (issue #41 item 3, `docs/ownership.md` §4): it takes no step from
//! now on, its logic goes once every step it handed to the store is decided, and its
//! record stays live for whoever adopts it (`actors/registry/owning.rs`, on this server or
//! another). Until its principals link to the adopted actor, or let go of it, the actor
//! stays as a **shell**: a call is answered at once with an error worth retrying, and
//! every other message changes nothing — a close or a leave is its principal's alone, and
//! the adopting side finds that participant gone (`InstanceCore::restored`). The shell
//! stops by itself once nobody holds its address.

use super::{InstanceActor, Link};
use crate::core::instance_core::Waiter;
use crate::ownership::OwnershipError;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject};
use mcpl_transport::Principal;
use tokio::sync::oneshot;

/// Stop running the instance without ending it (answered once its steps are decided,
/// with the names of the principals that link to it: issue #41, those here link to it on
/// another server next, `actors/registry/owning.rs`).
#[derive(Message)]
#[rtype(result = "Result<Vec<String>, OwnershipError>")]
pub(crate) struct Release;

impl InstanceActor {
    /// Released: a shell that takes no step.
    pub(super) fn is_shell(&self) -> bool {
        self.released
    }

    /// What a call reaching a shell is answered with **\[project\]**: -32603 with the
    /// retryable shape of the nodes' refusals (`data: {retryable: true, ran: false}`):
    /// nothing ran, and the instance runs again where it is adopted.
    pub(super) fn refuse_in_shell(&self, link: &Link, waiter: Waiter) {
        let error = ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!(
                "instance {} of {} is not running on this server just now: it was released \
                 to run elsewhere (issue #41); try again",
                self.core.id(),
                self.core.toolset()
            ),
        )
        .with_data(serde_json::json!({"retryable": true, "ran": false}));
        super::ending::answer_error(link, self.core.id(), waiter, error);
    }

    /// The calls the logic left waiting (a reply to come later: a bot's move) are answered
    /// now, since its answer would come from the adopted instance, which knows nothing of
    /// them **\[project\]**: -32603 with `data: {retryable: false, ran: true, kept: true}` —
    /// the call ran and its step was kept: read the state where the instance runs again
    /// rather than call again. When the steps could not be kept, "Not acknowledged".
    fn answer_waiting(&mut self, not_kept: Option<&crate::core::store::not_kept::NotKept>) {
        let waiting: Vec<_> = self.core.waiting().collect();
        for call in waiting {
            let Some(w) = self.core.end_call(call) else {
                continue;
            };
            let Some(link) = self.core.link(w.who).cloned() else {
                continue;
            };
            let error = match not_kept {
                Some(e) => e.error(),
                None => ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!(
                        "the call ran and was kept, but instance {} of {} was released before                          it answered (issue #41): read the state where it runs again rather                          than call again",
                        self.core.id(),
                        self.core.toolset()
                    ),
                )
                .with_data(serde_json::json!({"retryable": false, "ran": true, "kept": true})),
            };
            super::ending::answer_error(&link, self.core.id(), w, error);
        }
    }

    /// Every step handed over is decided: the logic goes, and the release is answered.
    fn released_once_decided(
        &mut self,
        reply: oneshot::Sender<Result<Vec<String>, OwnershipError>>,
        ctx: &mut Context<Self>,
    ) {
        let ticket = self.written_at;
        let Some(outcome) = self.shared.outcome(ticket) else {
            let kept = self.shared.kept(ticket);
            ctx.spawn(
                kept.into_actor(self)
                    .map(move |_, act, ctx| act.released_once_decided(reply, ctx)),
            );
            return;
        };
        // What waited for its step's ticket goes (every earlier one is decided too).
        self.send_all();
        // Whoever adopts it sends what the outboxes held (its record has it).
        self.close_outboxes();
        self.logic = None;
        self.answer_waiting(outcome.as_ref().err());
        let id = self.core.id().0;
        tracing::info!(instance = id, toolset = %self.core.toolset(), "instance released");
        let linked = self.linked_names();
        let outcome = outcome.map(|()| linked);
        let _ = reply.send(outcome.map_err(|e| OwnershipError::NotKept { id, reason: e.0 }));
    }

    /// The names of the principals that link to this instance.
    fn linked_names(&mut self) -> Vec<String> {
        let participants = self.core.take_participants();
        let names = participants
            .iter()
            .filter(|p| self.core.link(p.id()).is_some())
            .filter_map(|p| match p.kind() {
                crate::author::ParticipantKind::Principal(Principal::Named(n))
                | crate::author::ParticipantKind::Left(Principal::Named(n)) => Some(n.clone()),
                _ => None,
            })
            .collect();
        self.core.put_participants(participants);
        names
    }
}

impl Handler<Release> for InstanceActor {
    type Result = ResponseFuture<Result<Vec<String>, OwnershipError>>;

    fn handle(&mut self, _: Release, ctx: &mut Context<Self>) -> Self::Result {
        let id = self.core.id().0;
        let refused = if self.released {
            Some(OwnershipError::Releasing { id })
        } else if let Some(reason) = self.core.ended() {
            Some(OwnershipError::Ended {
                id,
                reason: reason.to_owned(),
            })
        } else if !self.core.invitations().is_empty() {
            Some(OwnershipError::InvitationsPending { id })
        } else {
            match self.logic.as_ref().map(|l| l.save()) {
                Some(Some(Ok(_))) => None,
                Some(Some(Err(e))) => Some(OwnershipError::NotDurable {
                    id,
                    reason: format!("its state cannot be written: {e}"),
                }),
                Some(None) | None => Some(OwnershipError::NotDurable {
                    id,
                    reason: "its logic is not kept (not Durable): it would be lost".to_owned(),
                }),
            }
        };
        if let Some(e) = refused {
            return Box::pin(std::future::ready(Err(e)));
        }
        self.released = true;
        // Another server serves its address next (issue #41, `remote.rs`): the release
        // is answered once this one no longer does.
        let unserved = self.unserve_peers(ctx);
        let (tx, rx) = oneshot::channel();
        self.released_once_decided(tx, ctx);
        Box::pin(async move {
            unserved.await;
            rx.await.unwrap_or(Err(OwnershipError::Gone))
        })
    }
}
