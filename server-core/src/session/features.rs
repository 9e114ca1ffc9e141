//! Resources, prompts and completion in a session (MCP "Server Features", issue #39 item
//! 7): which of them the server declares, their requests read and handed to the session's
//! handlers ([`Event::Serve`]), and the handlers' answers written, in either era.
//!
//! A request for a feature the server does not offer is -32601, as any unknown method. Each
//! request is in flight until its handler answers, like a forwarded one ([`Requests`]): its
//! id is not reused meanwhile, and a cancelled one is not answered (MCP "Cancellation").
//! At most [`FEATURE_REQUESTS_IN_FLIGHT`] run at once per connection; past it a request is
//! refused -32600 at once, so a client cannot make a session hold handlers without bound.
//!
//! Lists come in one page: **\[project\]** a server's resources, templates and prompts are
//! few, and a `cursor` (which this server never gave) is -32602, as MCP pagination says of
//! an invalid one.
//!
//! **Caching** (MCP 2026-07-28 `server/utilities/caching.md`), on modern results:
//! `prompts/list` and `resources/templates/list` are built with the server, the same for
//! everyone: `public` for [`STATIC_TTL_MS`]. `resources/list` is too when no handler lists
//! resources per request; otherwise, like every `resources/read` (a game's board changes
//! with each move), `private` with `ttlMs: 0`. `completion/complete` has no hints.
//!
//! [`Requests`]: crate::requests::Requests

use super::SessionCore;
use super::kinds::FeatureRequest;
use super::output::{Event, Io};
use crate::dispatch::Route;
use crate::requests::Settled;
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, Id, RawValue, Request, Response};
use mcpl_protocol::modern::{CacheHints, CacheScope};
use mcpl_protocol::server_features::{
    COMPLETIONS_CAPABILITY, ListParams, PROMPTS_CAPABILITY, RESOURCES_CAPABILITY,
    ReadResourceParams,
};
use serde_json::{Map, Value, json};

/// The most feature requests one connection has in flight at once.
pub const FEATURE_REQUESTS_IN_FLIGHT: usize = 64;

/// How long a modern client may keep a list built with the server (module docs).
pub const STATIC_TTL_MS: u64 = 300_000;

/// What a server offers besides tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Offers {
    /// Resources (fixed, templates, or listed by a handler).
    pub resources: bool,
    /// A handler lists resources per request: `resources/list` varies.
    pub resources_vary: bool,
    /// Prompts.
    pub prompts: bool,
    /// `completion/complete`.
    pub completions: bool,
    /// Resources may be watched (`watch.rs`): `resources.subscribe`.
    pub subscribe: bool,
}

impl Offers {
    /// Adds the capabilities offered to a server's `capabilities` (`other`): `resources`,
    /// `prompts`, `completions`, each `{}` but for `resources.subscribe: true` when
    /// resources may be watched (`watch.rs`). No `listChanged`: **\[project\]** changes of
    /// these lists are not told; a client reads again.
    pub fn declare(&self, capabilities: &mut Map<String, Value>) {
        for (offered, name) in [
            (self.resources, RESOURCES_CAPABILITY),
            (self.prompts, PROMPTS_CAPABILITY),
            (self.completions, COMPLETIONS_CAPABILITY),
        ] {
            if offered {
                capabilities.insert(name.to_owned(), json!({}));
            }
        }
        if self.resources && self.subscribe {
            capabilities.insert(
                RESOURCES_CAPABILITY.to_owned(),
                json!({ "subscribe": true }),
            );
        }
    }

    /// Whether legacy `resources/subscribe` and `resources/unsubscribe` are served.
    pub fn watches(&self) -> bool {
        self.resources && self.subscribe
    }

    /// Whether `route` is a feature request this server serves.
    pub fn serves(&self, route: Route) -> bool {
        match route {
            Route::ListResources | Route::ListResourceTemplates | Route::ReadResource => {
                self.resources
            }
            Route::ListPrompts | Route::GetPrompt => self.prompts,
            Route::Complete => self.completions,
            _ => false,
        }
    }
}

impl FeatureRequest {
    /// Reads `req`, routed to `route` (one [`Offers::serves`] said yes to): -32602 when its
    /// params do not read, or name a page (module docs).
    pub fn read(route: Route, req: &Request) -> Result<FeatureRequest, ErrorObject> {
        let list = || -> Result<(), ErrorObject> {
            match req.params_as::<ListParams>()?.cursor {
                None => Ok(()),
                Some(_) => Err(ErrorObject::invalid_params(
                    "invalid cursor: this server lists everything in one page",
                )),
            }
        };
        Ok(match route {
            Route::ListResources => list().map(|()| FeatureRequest::ListResources)?,
            Route::ListResourceTemplates => {
                list().map(|()| FeatureRequest::ListResourceTemplates)?
            }
            Route::ListPrompts => list().map(|()| FeatureRequest::ListPrompts)?,
            Route::ReadResource => FeatureRequest::ReadResource {
                uri: req.params_as::<ReadResourceParams>()?.uri,
            },
            Route::GetPrompt => FeatureRequest::GetPrompt(req.params_as()?),
            Route::Complete => FeatureRequest::Complete(req.params_as()?),
            _ => return Err(ErrorObject::method_not_found(&req.method)),
        })
    }

    /// The caching hints of its modern result (module docs).
    pub fn cache(&self, offers: &Offers) -> Option<CacheHints> {
        let public = CacheHints {
            ttl_ms: STATIC_TTL_MS,
            scope: CacheScope::Public,
        };
        let private = CacheHints {
            ttl_ms: 0,
            scope: CacheScope::Private,
        };
        match self {
            FeatureRequest::ListPrompts | FeatureRequest::ListResourceTemplates => Some(public),
            FeatureRequest::ListResources if !offers.resources_vary => Some(public),
            FeatureRequest::ListResources | FeatureRequest::ReadResource { .. } => Some(private),
            FeatureRequest::GetPrompt(_) | FeatureRequest::Complete(_) => None,
        }
    }
}

impl<T: Io> SessionCore<T> {
    /// Hands a feature request to the session's handlers (the caller checked its id is not
    /// in use), or refuses it when the connection has as many in flight as it may.
    pub(super) fn serve_feature(&mut self, id: Id, feature: FeatureRequest) {
        if self.features_in_flight >= FEATURE_REQUESTS_IN_FLIGHT {
            self.modern_forget(&id);
            let e = ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "this connection has {FEATURE_REQUESTS_IN_FLIGHT} resource, prompt and completion requests in flight already: send the next once one is answered"
                ),
            );
            return self.send(Response::err(Some(id), e).into());
        }
        self.features_in_flight += 1;
        self.requests.forward(id.clone());
        self.emit(Event::Serve {
            request: id,
            feature,
        });
    }

    /// A feature handler's answer: written, unless its request was cancelled.
    pub fn feature_answered(&mut self, id: Id, outcome: Result<Box<RawValue>, ErrorObject>) {
        self.features_in_flight = self.features_in_flight.saturating_sub(1);
        match self.requests.settle(&id) {
            Settled::Answer => self.send(
                Response {
                    id: Some(id),
                    outcome,
                }
                .into(),
            ),
            Settled::Cancelled | Settled::Unknown => self.modern_forget(&id),
        }
    }

    /// Whether the feature request `id` still waits for its handler's answer (not
    /// answered, not cancelled): while it does, its handler may ask the client.
    pub fn serving_feature(&self, id: &Id) -> bool {
        self.requests.awaits_answer(id)
    }

    /// How many feature requests are in flight.
    #[cfg(test)]
    pub fn features_in_flight(&self) -> usize {
        self.features_in_flight
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::jsonrpc::Message;

    fn request(method: &str, params: Value) -> Request {
        let text = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        match Message::decode(text.to_string().as_bytes()) {
            Ok(Message::Request(r)) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn issue39_07_only_what_is_offered_is_served_and_declared() {
        let offers = Offers {
            resources: true,
            resources_vary: false,
            prompts: false,
            completions: true,
            subscribe: false,
        };
        let serves = |method: &str| Route::of(method).is_some_and(|r| offers.serves(r));
        assert!(serves("resources/read") && serves("completion/complete"));
        assert!(!serves("prompts/get") && !serves("resources/subscribe"));
        let mut caps = Map::new();
        offers.declare(&mut caps);
        assert_eq!(
            Value::Object(caps),
            json!({"resources": {}, "completions": {}})
        );
    }

    #[test]
    fn issue39_07_requests_read_their_params_and_refuse_a_cursor() {
        let read = |r: &Request| FeatureRequest::read(Route::of(&r.method).unwrap(), r);
        assert_eq!(
            read(&request("resources/read", json!({"uri": "a://b"}))).unwrap(),
            FeatureRequest::ReadResource {
                uri: "a://b".into()
            }
        );
        let e = read(&request("resources/read", json!({}))).unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        let e = read(&request("prompts/list", json!({"cursor": "x"}))).unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(
            read(&request("prompts/list", json!({"_meta": {"a": 1}}))).unwrap(),
            FeatureRequest::ListPrompts
        );
    }
}
