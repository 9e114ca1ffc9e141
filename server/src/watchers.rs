//! Who watches which resource (MCP `notifications/resources/updated`; issue #39): the index
//! [`Server::resource_updated`](crate::Server::resource_updated) reads to tell a change to
//! the sessions that asked for it and to no other.
//!
//! A session's core says when it starts and stops watching a URI (a legacy
//! `resources/subscribe` or a modern `subscriptions/listen`'s `resourceSubscriptions`,
//! `server-core/src/session/watch.rs`); its actor then holds a [`Watch`] for that URI, which puts the
//! session in the index and takes it out again when dropped: on the core's word, or with the
//! actor, so a session that ends leaves nothing behind. The core, not the index, decides
//! what is written: a change that reaches a session which stopped watching in the meantime
//! is not told.
//!
//! How many URIs one session watches is the core's bound (`server-core/src/session/watch.rs`); how
//! many sessions there are, the transports'.

use crate::ids::SessionId;
use actix::{Message, Recipient};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// A resource a session watches changed (the actor tells its core).
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub(crate) struct ResourceUpdated {
    /// The resource's URI.
    pub(crate) uri: Arc<str>,
}

type Table = HashMap<String, HashMap<SessionId, Recipient<ResourceUpdated>>>;

/// The index: each watched URI, with the sessions watching it.
#[derive(Default)]
pub(crate) struct Watchers(Arc<Mutex<Table>>);

/// One session's watch of one URI, given up when dropped.
pub(crate) struct Watch {
    table: Arc<Mutex<Table>>,
    uri: String,
    session: SessionId,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("uri", &self.uri)
            .field("session", &self.session)
            .finish()
    }
}

impl Watchers {
    /// `session` (reached at `to`) watches `uri` until the returned guard is dropped.
    pub(crate) fn watch(
        &self,
        uri: String,
        session: SessionId,
        to: Recipient<ResourceUpdated>,
    ) -> Watch {
        let mut table = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        table.entry(uri.clone()).or_default().insert(session, to);
        Watch {
            table: self.0.clone(),
            uri,
            session,
        }
    }

    /// Tells every session watching `uri` that it changed; how many were told.
    pub(crate) fn tell(&self, uri: &str) -> usize {
        let to: Vec<Recipient<ResourceUpdated>> = {
            let table = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            match table.get(uri) {
                Some(sessions) => sessions.values().cloned().collect(),
                None => return 0,
            }
        };
        let uri: Arc<str> = Arc::from(uri);
        for session in &to {
            session.do_send(ResourceUpdated { uri: uri.clone() });
        }
        to.len()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(sessions) = table.get_mut(&self.uri) {
            sessions.remove(&self.session);
            if sessions.is_empty() {
                table.remove(&self.uri);
            }
        }
    }
}
