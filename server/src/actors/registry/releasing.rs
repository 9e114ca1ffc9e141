//! A principal released (issue #41, `Server::release_principal`, `principal/release.rs`):
//! while its actor stops, what arrives for it waits, as for a principal retiring
//! (`Entry::retiring`); once it stopped, the registry forgets it, and what waited is
//! routed anew — a session attaching meanwhile is a first use, read from the record the
//! release left.

use super::Registry;
use crate::actors::principal::Release;
use crate::ownership::OwnershipError;
use actix::prelude::*;
use mcpl_transport::Principal;
use tokio::sync::oneshot;

/// Release principal `name` here (see the module docs).
#[derive(Message)]
#[rtype(result = "Result<(), OwnershipError>")]
pub(crate) struct ReleasePrincipal {
    pub(crate) name: String,
}

impl Handler<ReleasePrincipal> for Registry {
    type Result = ResponseActFuture<Self, Result<(), OwnershipError>>;

    fn handle(&mut self, m: ReleasePrincipal, _: &mut Context<Self>) -> Self::Result {
        let principal = Principal::Named(m.name.clone());
        let refuse = |e| Box::pin(actix::fut::ready(Err(e))) as Self::Result;
        let busy = OwnershipError::PrincipalBusy {
            principal: m.name.clone(),
        };
        if self.loading.contains_key(&principal) {
            return refuse(busy);
        }
        let Some(entry) = self.principals.get_mut(&principal) else {
            return refuse(OwnershipError::PrincipalNotRunning { principal: m.name });
        };
        if entry.retiring.is_some() {
            return refuse(busy);
        }
        // What arrives for it meanwhile waits for the answer.
        entry.retiring = Some(Vec::new());
        let generation = entry.generation;
        let (reply, answer) = oneshot::channel();
        entry.addr.do_send(Release { reply });
        Box::pin(
            async move { answer.await.unwrap_or(Err(OwnershipError::Gone)) }
                .into_actor(self)
                .map(move |answer, act, _| {
                    // Refused before anything changed: it goes on, and gets what waited.
                    let stopped = !matches!(answer, Err(OwnershipError::PrincipalLinked { .. }));
                    act.retired(principal, generation, stopped);
                    answer
                }),
        )
    }
}
