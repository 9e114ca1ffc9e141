//! Resource subscriptions (MCP "Resources", both eras; issue #39): which resources this
//! session watches, and the `notifications/resources/updated` it writes when one changes.
//!
//! Offered only by a server whose author lets resources be watched
//! (`ServerBuilder::resource_subscriptions`); it declares `resources.subscribe: true` in
//! `initialize` and `server/discover`, and tells a change with
//! `Server::resource_updated(uri)`.
//!
//! - **Legacy** (2025-11-25): `resources/subscribe {uri}` and `resources/unsubscribe {uri}`
//!   answer `{}`. The session keeps its subscribed URIs until it unsubscribes or ends, and
//!   each change of one is written as `notifications/resources/updated {uri}`.
//!   Subscribing twice is one subscription; unsubscribing from a URI not subscribed is
//!   `{}` too (**\[project\]**: the result is the state asked for). Without the offer both
//!   are -32601, as any unknown method.
//! - **Modern** (2026-07-28, `basic/patterns/subscriptions.md`): a `subscriptions/listen`
//!   whose filter names `resourceSubscriptions` is acknowledged with the URIs it honours,
//!   and each change of one is written on that stream with
//!   `_meta["io.modelcontextprotocol/subscriptionId"]` (`listen.rs`). `resources/subscribe`
//!   is a method 2026-07-28 removed: -32601 to a modern request.
//! - **Which URIs** (**\[project\]**; 2025-11-25 leaves it to the server, "it is up to the
//!   server how to interpret it"): those of a resource this server serves, a fixed one or
//!   one a template matches. A legacy subscription to any other is -32602 with `data.uri`,
//!   as a read of it is (MCP `server/resources.md`, "Error Handling"), so a typo is not a
//!   silent subscription to nothing; a listen leaves it out of its acknowledgement (the
//!   subset the server agreed to honour).
//! - **Bounds** (**\[project\]**): a session subscribes to at most [`MAX_WATCHED`] URIs of at
//!   most [`MAX_WATCHED_BYTES`] bytes together, and a listen names at most as many. Past
//!   either, the request is refused -32600 with the limits in `data`, and nothing the
//!   session or stream already watches is lost; a listen so refused opens nothing. (A
//!   principal has at most 8 listens, `listen.rs`.)
//! - **Who hears**: each change goes to the sessions and streams that watch its URI, and to
//!   no other; a session that stopped watching before the change reached it writes
//!   nothing. On stdio and WebSocket the notification joins the connection's bounded
//!   queue, as every message does; on legacy Streamable HTTP it goes where the transport
//!   puts any notification (the GET stream, or the session's bounded queue until one
//!   opens); on a modern listen it is written on the SSE answer, whose queue is that
//!   request's, and dropped when it finds that full (`listen.rs`).

use super::SessionCore;
use super::output::{Event, Io};
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, Notification, Request, Response, to_raw};
use mcpl_protocol::mcp::Empty;
use mcpl_protocol::modern::SUBSCRIPTION_ID_KEY;
use serde_json::json;

/// The notification of a watched resource's change.
pub const RESOURCE_UPDATED: &str = "notifications/resources/updated";

/// The most URIs a session subscribes to, and a listen names. **\[project\]** 128: a client
/// watches what it shows (a few documents, a game's boards); past it, one listing or
/// polling serves better than one subscription each.
pub const MAX_WATCHED: usize = 128;
/// The most bytes those URIs take together (32 KiB): what a session holds for its
/// subscriptions stays small whatever URIs a client makes up.
pub const MAX_WATCHED_BYTES: usize = 32 * 1024;

/// Which URIs name a resource this server serves (module docs): the server's features
/// answer it, so this core needs to know nothing of how resources are registered.
pub trait KnownResources: Send + Sync + std::fmt::Debug {
    /// Whether `uri` names a fixed resource or one a template matches.
    fn knows(&self, uri: &str) -> bool;
}

/// `resources/subscribe`'s and `resources/unsubscribe`'s params.
#[derive(Debug, serde::Deserialize)]
struct UriParams {
    uri: String,
}

/// -32600 for a subscription or a listen past the bounds (module docs).
pub fn too_many(what: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_REQUEST,
        format!(
            "{what}: at most {MAX_WATCHED} resource URIs of at most {MAX_WATCHED_BYTES} bytes together; unsubscribe from some first"
        ),
    )
    .with_data(json!({ "maxUris": MAX_WATCHED, "maxBytes": MAX_WATCHED_BYTES }))
}

/// -32602 for a URI that names no resource of this server (module docs).
fn unknown(uri: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_PARAMS,
        format!("resource not found: {uri}"),
    )
    .with_data(json!({ "uri": uri }))
}

/// Whether `uris` are within the bounds (module docs).
pub fn within_bounds<'a>(uris: impl IntoIterator<Item = &'a String>) -> bool {
    let (mut count, mut bytes) = (0usize, 0usize);
    for uri in uris {
        count += 1;
        bytes += uri.len();
        if count > MAX_WATCHED || bytes > MAX_WATCHED_BYTES {
            return false;
        }
    }
    true
}

impl<T: Io> SessionCore<T> {
    /// Whether this server lets `uri` be watched: subscriptions offered, and `uri` one of
    /// its resources.
    pub(super) fn watchable(&self, uri: &str) -> bool {
        self.profile
            .watchable
            .as_ref()
            .is_some_and(|known| known.knows(uri))
    }

    /// A legacy `resources/subscribe` (the caller checked it is offered and admitted).
    pub(super) fn subscribe(&mut self, req: Request) {
        let uri = match req.params_as::<UriParams>() {
            Ok(p) => p.uri,
            Err(e) => return self.send(Response::err(Some(req.id), e).into()),
        };
        if !self.watchable(&uri) {
            return self.send(Response::err(Some(req.id), unknown(&uri)).into());
        }
        if !self.subscriptions.uris.contains(&uri) {
            if self.subscriptions.uris.len() >= MAX_WATCHED
                || self.subscriptions.bytes + uri.len() > MAX_WATCHED_BYTES
            {
                tracing::debug!(
                    subscribed = self.subscriptions.uris.len(),
                    "resources/subscribe past the bound"
                );
                let e = too_many("this session watches as many resources as it may");
                return self.send(Response::err(Some(req.id), e).into());
            }
            let new = !self.watches(&uri);
            self.subscriptions.bytes += uri.len();
            self.subscriptions.uris.insert(uri.clone());
            if new {
                // Before the answer: once the client reads `{}`, a change reaches it.
                self.emit(Event::Watch(uri));
            }
        }
        self.send(Response::ok_typed(req.id, &Empty::default()).into());
    }

    /// A legacy `resources/unsubscribe` (the caller checked it is offered and admitted).
    pub(super) fn unsubscribe(&mut self, req: Request) {
        let uri = match req.params_as::<UriParams>() {
            Ok(p) => p.uri,
            Err(e) => return self.send(Response::err(Some(req.id), e).into()),
        };
        if self.subscriptions.uris.remove(&uri) {
            self.subscriptions.bytes -= uri.len();
            self.released([uri]);
        }
        self.send(Response::ok_typed(req.id, &Empty::default()).into());
    }

    /// Whether this session watches `uri`: subscribed to it, or a stream names it.
    fn watches(&self, uri: &str) -> bool {
        self.subscriptions.uris.contains(uri) || self.listens.iter().any(|(_, l)| l.watches(uri))
    }

    /// `uris` were let go of (unsubscribed, or their stream ended): those nothing else of
    /// this session watches are no longer told here.
    pub(super) fn released(&mut self, uris: impl IntoIterator<Item = String>) {
        for uri in uris {
            if !self.watches(&uri) {
                self.emit(Event::Unwatch(uri));
            }
        }
    }

    /// `uris`, not watched by this session until now, are: tell their changes here.
    pub(super) fn watching(&mut self, uris: impl IntoIterator<Item = String>) {
        for uri in uris {
            if !self.watches(&uri) {
                self.emit(Event::Watch(uri));
            }
        }
    }

    /// The resource at `uri` changed (`Server::resource_updated`): the legacy subscription
    /// and every stream that watch it are told (module docs).
    pub fn resource_updated(&mut self, uri: &str) {
        if self.subscriptions.uris.contains(uri) && self.lifecycle.negotiated().is_some() {
            let told = Notification {
                method: RESOURCE_UPDATED.to_owned(),
                params: Some(to_raw(&json!({ "uri": uri }))),
            };
            self.send(told.into());
        }
        let streams: Vec<_> = self
            .listens
            .iter()
            .filter(|(_, l)| l.watches(uri))
            .map(|(id, _)| id.clone())
            .collect();
        for id in streams {
            let told = Notification {
                method: RESOURCE_UPDATED.to_owned(),
                params: Some(to_raw(&json!({
                    "_meta": { SUBSCRIPTION_ID_KEY: id },
                    "uri": uri,
                }))),
            };
            self.send(told.into());
        }
    }

    /// How many URIs this session is subscribed to (legacy).
    #[cfg(test)]
    pub fn subscribed(&self) -> usize {
        self.subscriptions.uris.len()
    }
}
