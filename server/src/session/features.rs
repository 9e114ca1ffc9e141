//! Resources, prompts and completion (`server-core/src/session/features.rs`, issue #39 item 7): each
//! request the core hands over runs its handler as a tokio task of this session, and the
//! answer goes back to the core, which writes it (or not, for a cancelled request). A
//! panic in a handler answers -32603 and ends nothing else. A `prompts/get` or
//! `resources/read` handler may ask the client (`asks.rs`; MRTR for a modern request).
//!
//! The resources the core says this session watches (`server-core/src/session/watch.rs`) are entered
//! in the server's index (`watchers.rs`), and each change
//! [`Server::resource_updated`](crate::Server::resource_updated) tells there is fed to the
//! core, which writes it if the session still watches it.

use super::SessionActor;
use crate::core::session::FeatureRequest;
use crate::features::RequestContext;
use crate::watchers::ResourceUpdated;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{ErrorObject, Id};

impl SessionActor {
    /// Runs `feature`'s handler for request `id`.
    pub(super) fn serve_feature(
        &mut self,
        id: Id,
        feature: FeatureRequest,
        ctx: &mut Context<Self>,
    ) {
        let features = self.shared.features.clone();
        // MRTR serves `prompts/get` and `resources/read` (mrtr.md); the others ask nothing.
        let asks = matches!(
            feature,
            FeatureRequest::GetPrompt(_) | FeatureRequest::ReadResource { .. }
        );
        let asking = asks.then(|| {
            let handle: std::sync::Arc<dyn crate::client_ask::AskClient> =
                std::sync::Arc::new(self.session_handle(ctx));
            (handle, id.clone())
        });
        let cx = RequestContext::new(self.principal.clone(), asking);
        tracing::debug!(session = %self.id, %id, ?feature, "feature request");
        let task = tokio::spawn(features.serve(cx, feature));
        ctx.spawn(task.into_actor(self).map(move |joined, act, ctx| {
            let outcome = joined.unwrap_or_else(|e| {
                if e.is_panic() {
                    tracing::error!(session = %act.id, %id, "a resource, prompt or completion handler panicked");
                    Err(ErrorObject::internal("the handler panicked"))
                } else {
                    Err(ErrorObject::internal("the handler was stopped"))
                }
            });
            // What it asked the client and left unanswered is abandoned (`asks.rs`).
            act.abandon_asks(&id, ctx);
            act.core.feature_answered(id, outcome);
            act.drive(ctx);
        }));
    }
}

impl SessionActor {
    /// Enters this session in the server's index for `uri`, until the core lets it go or
    /// the actor ends.
    pub(super) fn watch(&mut self, uri: String, ctx: &mut Context<Self>) {
        let watch = self
            .shared
            .watchers
            .watch(uri.clone(), self.id, ctx.address().recipient());
        self.watching.insert(uri, watch);
    }
}

impl Handler<ResourceUpdated> for SessionActor {
    type Result = ();

    /// A resource this session watched changed: what to write is the core's.
    fn handle(&mut self, m: ResourceUpdated, ctx: &mut Context<Self>) {
        self.core.resource_updated(&m.uri);
        self.drive(ctx);
    }
}
