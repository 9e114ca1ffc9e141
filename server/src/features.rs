//! Resources, prompts and argument completion (MCP "Server Features", issue #39 item 7),
//! served in both eras from handlers an author registers on the [`ServerBuilder`]:
//!
//! | builder | serves |
//! |---|---|
//! | [`ServerBuilder::resource`] | one resource at a fixed URI: listed, and read with its handler |
//! | [`ServerBuilder::resource_template`] | a family of resources named by a URI template (`game://{instance}/board`): the template listed, each URI it matches read with its handler and the template's variables |
//! | [`ServerBuilder::resource_list`] | resources that vary (per principal, over time): listed by the handler, read through a template that matches them |
//! | [`ServerBuilder::prompt`] | a prompt, its required arguments checked before its handler runs |
//! | [`ServerBuilder::completion`] | `completion/complete`, cut to 100 values with `total` and `hasMore` |
//! | [`ServerBuilder::resource_subscriptions`] | `resources.subscribe`: clients watch resources (legacy `resources/subscribe`, modern `resourceSubscriptions`), told each change the author states with [`Server::resource_updated`](crate::Server::resource_updated) |
//!
//! Each handler is given a [`RequestContext`] (whose request it serves) and runs as a task
//! of the session that received the request, as a tool handler does; a panic in one
//! answers -32603 and costs nothing else. A server declares `resources`, `prompts` and
//! `completions` in `initialize` and `server/discover` exactly when it has some.
//!
//! **Errors** (MCP `server/resources.md`, "Error Handling"): an unknown resource is -32602
//! with `data.uri` (never an empty `contents`), an unknown prompt -32602, a missing
//! required argument -32602 naming it; a handler's own failure -32603.
//!
//! **URI templates** are RFC 6570 level 1: literal text and `{name}` variables. A variable
//! matches one or more characters up to the next literal text, never a `/` (so
//! `game://{instance}/board` reads `game://go-1/board` with `instance = go-1`).
//! **\[project\]** Operators (`{+path}`, `{?q}`, …) are refused when the server is built:
//! a template this server cannot match would list resources it cannot read.
//!
//! ```
//! use mcpl_server::Server;
//! use mcpl_server::features::{FeatureError, RequestContext};
//! use mcpl_protocol::server_features::{
//!     GetPromptResult, Prompt, PromptArgument, PromptMessage, Resource, ResourceContents,
//!     ResourceInfo, ResourceTemplate,
//! };
//!
//! let server = Server::builder("notes", "1.0")
//!     .resource(
//!         Resource::new("notes://readme", ResourceInfo::new("readme", "text/plain", "What this server is")),
//!         |_: RequestContext| async { Ok(vec![ResourceContents::text("notes://readme", "text/plain", "Hello.")]) },
//!     )
//!     .resource_template(
//!         ResourceTemplate::new("notes://{id}", ResourceInfo::new("note", "text/plain", "A note by its id")),
//!         |_: RequestContext, uri: String, vars| async move {
//!             match vars.get("id").map(String::as_str) {
//!                 Some("1") => Ok(vec![ResourceContents::text(uri, "text/plain", "The first note.")]),
//!                 _ => Err(FeatureError::ResourceNotFound(uri)),
//!             }
//!         },
//!     )
//!     .prompt(
//!         Prompt::new("summarise", "Summarise a note", vec![PromptArgument::required("id", "The note")]),
//!         |_: RequestContext, args| async move {
//!             Ok(GetPromptResult {
//!                 description: None,
//!                 messages: vec![PromptMessage::user(format!("Summarise note {}.", args["id"]))],
//!             })
//!         },
//!     )
//!     .build()
//!     .expect("the server builds");
//! # drop(server);
//! ```
//!
//! [`ServerBuilder`]: crate::ServerBuilder
//! [`ServerBuilder::resource`]: crate::ServerBuilder::resource
//! [`ServerBuilder::resource_template`]: crate::ServerBuilder::resource_template
//! [`ServerBuilder::resource_list`]: crate::ServerBuilder::resource_list
//! [`ServerBuilder::prompt`]: crate::ServerBuilder::prompt
//! [`ServerBuilder::completion`]: crate::ServerBuilder::completion
//! [`ServerBuilder::resource_subscriptions`]: crate::ServerBuilder::resource_subscriptions

use crate::client_ask::{self, AskClient, AskError, Needs};
use crate::core::session::{FeatureRequest, KnownResources, Offers};
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, Id, RawValue, to_raw};
use mcpl_protocol::method::{CreateMessage, Elicit, ListRoots, RequestMethod};
use mcpl_protocol::server_features::{
    CompleteParams, CompleteResult, Completion, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, Prompt, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use mcpl_transport::Principal;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Whose request a feature handler serves, and how it asks the client for more.
///
/// A prompt or resource handler may ask the client what a tool handler may
/// ([`RequestContext::elicit`], [`RequestContext::create_message`],
/// [`RequestContext::list_roots`]), the same way (see [`crate::tool::AskError`] and the
/// `tool` module's `ask` docs): a legacy client is sent the request with the one it
/// serves; a modern client's `prompts/get` or `resources/read` is answered with an
/// `InputRequiredResult` and its retry runs the handler again with the answer (MCP
/// 2026-07-28 `basic/patterns/mrtr.md`: "prompts/get, resources/read, tools/call"). A
/// list or a completion asks nothing: MRTR does not serve those requests.
#[derive(Debug, Clone)]
pub struct RequestContext {
    principal: Principal,
    /// The session and the request, when the handler serves one that may ask.
    asking: Option<(Arc<dyn AskClient>, Id)>,
}

impl RequestContext {
    /// The principal the request came from: what it may see is the author's to decide.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    pub(crate) fn new(principal: Principal, asking: Option<(Arc<dyn AskClient>, Id)>) -> Self {
        RequestContext { principal, asking }
    }

    /// Asks the client for input from its user (`elicitation/create`), as
    /// [`ToolContext::elicit`](crate::ToolContext::elicit) does.
    pub async fn elicit(
        &self,
        params: <Elicit as RequestMethod>::Params,
    ) -> Result<<Elicit as RequestMethod>::Result, AskError> {
        self.ask::<Elicit>(None, Needs::Elicitation, &params).await
    }

    /// [`RequestContext::elicit`], its question keyed `key` in a modern client's
    /// `InputRequiredResult`, as [`ToolContext::elicit_as`](crate::ToolContext::elicit_as).
    pub async fn elicit_as(
        &self,
        key: &str,
        params: <Elicit as RequestMethod>::Params,
    ) -> Result<<Elicit as RequestMethod>::Result, AskError> {
        self.ask::<Elicit>(Some(key), Needs::Elicitation, &params)
            .await
    }

    /// Asks the client to sample a model (`sampling/createMessage`), as
    /// [`ToolContext::create_message`](crate::ToolContext::create_message) does.
    pub async fn create_message(
        &self,
        params: <CreateMessage as RequestMethod>::Params,
    ) -> Result<<CreateMessage as RequestMethod>::Result, AskError> {
        self.ask::<CreateMessage>(None, Needs::Sampling, &params)
            .await
    }

    /// Asks the client for its roots (`roots/list`), as
    /// [`ToolContext::list_roots`](crate::ToolContext::list_roots) does.
    pub async fn list_roots(&self) -> Result<<ListRoots as RequestMethod>::Result, AskError> {
        self.ask::<ListRoots>(None, Needs::Roots, &Default::default())
            .await
    }

    async fn ask<M: RequestMethod>(
        &self,
        input_key: Option<&str>,
        needs: Needs,
        params: &M::Params,
    ) -> Result<M::Result, AskError> {
        let Some((session, request)) = &self.asking else {
            return Err(AskError::Limit(
                "only a prompts/get or resources/read handler may ask the client".to_owned(),
            ));
        };
        client_ask::ask::<M>(&**session, request.clone(), None, input_key, needs, params).await
    }
}

/// Why a feature request got no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FeatureError {
    /// No such resource (or not one this principal may read): -32602 with `data.uri`.
    #[error("resource not found: {0}")]
    ResourceNotFound(String),
    /// No such prompt: -32602.
    #[error("prompt not found: {0}")]
    PromptNotFound(String),
    /// The params are wrong in a way the handler found: -32602.
    #[error("{0}")]
    InvalidParams(String),
    /// The handler failed: -32603.
    #[error("{0}")]
    Failed(String),
}

/// A question to the client that got no answer fails the request: -32603 naming why. (A
/// modern request whose question went to the client in an `InputRequiredResult` was
/// answered with that already; what its handler returns after is dropped.)
impl From<AskError> for FeatureError {
    fn from(e: AskError) -> Self {
        FeatureError::Failed(e.to_string())
    }
}

impl FeatureError {
    /// The JSON-RPC error it is answered with.
    pub fn to_error(&self) -> ErrorObject {
        let message = self.to_string();
        match self {
            FeatureError::ResourceNotFound(uri) => {
                ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
                    .with_data(serde_json::json!({ "uri": uri }))
            }
            FeatureError::PromptNotFound(_) | FeatureError::InvalidParams(_) => {
                ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
            }
            FeatureError::Failed(_) => ErrorObject::internal(message),
        }
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type Read = Arc<
    dyn Fn(RequestContext, String, BTreeMap<String, String>) -> BoxFuture<ReadOutcome>
        + Send
        + Sync,
>;
type ReadOutcome = Result<Vec<ResourceContents>, FeatureError>;
type Lister = Arc<dyn Fn(RequestContext) -> BoxFuture<Vec<Resource>> + Send + Sync>;
type PromptFn = Arc<
    dyn Fn(
            RequestContext,
            BTreeMap<String, String>,
        ) -> BoxFuture<Result<GetPromptResult, FeatureError>>
        + Send
        + Sync,
>;
type CompleteFn = Arc<
    dyn Fn(RequestContext, CompleteParams) -> BoxFuture<Result<Vec<String>, FeatureError>>
        + Send
        + Sync,
>;

/// A template as matched: its literal texts and variable names, alternating.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var(String),
}

/// An RFC 6570 level-1 URI template (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UriTemplate(Vec<Part>);

impl UriTemplate {
    /// Reads `template`; `Err` says why this server cannot match it.
    pub(crate) fn parse(template: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let Some(close) = rest[open..].find('}') else {
                return Err(format!("{template:?}: a '{{' is not closed"));
            };
            let name = &rest[open + 1..open + close];
            let simple = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
            if !simple {
                return Err(format!(
                    "{template:?}: only simple {{name}} variables are served, not {{{name}}}"
                ));
            }
            if matches!(parts.last(), Some(Part::Var(_))) {
                return Err(format!(
                    "{template:?}: two variables with no text between cannot be told apart"
                ));
            }
            parts.push(Part::Var(name.to_owned()));
            rest = &rest[open + close + 1..];
        }
        if rest.contains('}') {
            return Err(format!("{template:?}: a '}}' is not opened"));
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(UriTemplate(parts))
    }

    /// The variables when `uri` is one of the template's, else `None`.
    pub(crate) fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut vars = BTreeMap::new();
        let mut rest = uri;
        let mut parts = self.0.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(text) => rest = rest.strip_prefix(text.as_str())?,
                Part::Var(name) => {
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let value = &rest[..end];
                    if value.is_empty() || value.contains('/') {
                        return None;
                    }
                    vars.insert(name.clone(), value.to_owned());
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(vars)
    }
}

/// Everything a server offers besides tools, as the builder registered it.
#[derive(Default)]
pub(crate) struct Features {
    resources: Vec<(Resource, Read)>,
    templates: Vec<(ResourceTemplate, UriTemplate, Read)>,
    listers: Vec<Lister>,
    prompts: Vec<(Prompt, PromptFn)>,
    completion: Option<CompleteFn>,
    /// Resources may be watched (`ServerBuilder::resource_subscriptions`).
    subscribe: bool,
}

impl std::fmt::Debug for Features {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Features")
            .field("resources", &self.resources.len())
            .field("templates", &self.templates.len())
            .field("listers", &self.listers.len())
            .field("prompts", &self.prompts.len())
            .field("completion", &self.completion.is_some())
            .field("subscribe", &self.subscribe)
            .finish()
    }
}

impl Features {
    /// What the server declares and routes.
    pub(crate) fn offers(&self) -> Offers {
        Offers {
            resources: !(self.resources.is_empty()
                && self.templates.is_empty()
                && self.listers.is_empty()),
            resources_vary: !self.listers.is_empty(),
            prompts: !self.prompts.is_empty(),
            completions: self.completion.is_some(),
            subscribe: self.subscribe,
        }
    }

    /// Lets resources be watched (`ServerBuilder::resource_subscriptions`).
    pub(crate) fn allow_subscriptions(&mut self) {
        self.subscribe = true;
    }

    /// Whether a resource at `uri` is registered already.
    pub(crate) fn has_resource(&self, uri: &str) -> bool {
        self.resources.iter().any(|(r, _)| r.uri == uri)
    }

    /// Whether a template is registered already.
    pub(crate) fn has_template(&self, template: &str) -> bool {
        self.templates
            .iter()
            .any(|(t, _, _)| t.uri_template == template)
    }

    /// Whether a prompt `name` is registered already.
    pub(crate) fn has_prompt(&self, name: &str) -> bool {
        self.prompts.iter().any(|(p, _)| p.name == name)
    }

    pub(crate) fn add_resource<F, Fut>(&mut self, resource: Resource, handler: F)
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ReadOutcome> + Send + 'static,
    {
        let read: Read = Arc::new(move |cx, _, _| Box::pin(handler(cx)));
        self.resources.push((resource, read));
    }

    pub(crate) fn add_template<F, Fut>(
        &mut self,
        template: ResourceTemplate,
        parsed: UriTemplate,
        handler: F,
    ) where
        F: Fn(RequestContext, String, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ReadOutcome> + Send + 'static,
    {
        let read: Read = Arc::new(move |cx, uri, vars| Box::pin(handler(cx, uri, vars)));
        self.templates.push((template, parsed, read));
    }

    pub(crate) fn add_lister<F, Fut>(&mut self, handler: F)
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<Resource>> + Send + 'static,
    {
        self.listers.push(Arc::new(move |cx| Box::pin(handler(cx))));
    }

    pub(crate) fn add_prompt<F, Fut>(&mut self, prompt: Prompt, handler: F)
    where
        F: Fn(RequestContext, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, FeatureError>> + Send + 'static,
    {
        self.prompts.push((
            prompt,
            Arc::new(move |cx, args| Box::pin(handler(cx, args))),
        ));
    }

    pub(crate) fn set_completion<F, Fut>(&mut self, handler: F)
    where
        F: Fn(RequestContext, CompleteParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<String>, FeatureError>> + Send + 'static,
    {
        self.completion = Some(Arc::new(move |cx, p| Box::pin(handler(cx, p))));
    }

    /// Serves `request` for `cx`: its result as JSON, or the error to answer with.
    pub(crate) fn serve(
        self: Arc<Self>,
        cx: RequestContext,
        request: FeatureRequest,
    ) -> BoxFuture<Result<Box<RawValue>, ErrorObject>> {
        Box::pin(async move {
            match request {
                FeatureRequest::ListResources => {
                    let mut resources: Vec<Resource> =
                        self.resources.iter().map(|(r, _)| r.clone()).collect();
                    for list in &self.listers {
                        resources.extend(list(cx.clone()).await);
                    }
                    Ok(to_raw(&ListResourcesResult {
                        resources,
                        next_cursor: None,
                    }))
                }
                FeatureRequest::ListResourceTemplates => Ok(to_raw(&ListResourceTemplatesResult {
                    resource_templates: self.templates.iter().map(|(t, _, _)| t.clone()).collect(),
                    next_cursor: None,
                })),
                FeatureRequest::ReadResource { uri } => {
                    let read = match self.resources.iter().find(|(r, _)| r.uri == uri) {
                        Some((_, read)) => read(cx, uri.clone(), BTreeMap::new()),
                        None => {
                            let found = self
                                .templates
                                .iter()
                                .find_map(|(_, t, read)| t.matches(&uri).map(|vars| (read, vars)));
                            match found {
                                Some((read, vars)) => read(cx, uri.clone(), vars),
                                None => return Err(FeatureError::ResourceNotFound(uri).to_error()),
                            }
                        }
                    };
                    match read.await {
                        // An empty `contents` is not "not found" (MCP: MUST NOT): a
                        // handler that found nothing says so.
                        Ok(contents) if contents.is_empty() => {
                            Err(FeatureError::ResourceNotFound(uri).to_error())
                        }
                        Ok(contents) => Ok(to_raw(&ReadResourceResult { contents })),
                        Err(e) => Err(e.to_error()),
                    }
                }
                FeatureRequest::ListPrompts => Ok(to_raw(&ListPromptsResult {
                    prompts: self.prompts.iter().map(|(p, _)| p.clone()).collect(),
                    next_cursor: None,
                })),
                FeatureRequest::GetPrompt(params) => {
                    let Some((prompt, get)) =
                        self.prompts.iter().find(|(p, _)| p.name == params.name)
                    else {
                        return Err(FeatureError::PromptNotFound(params.name).to_error());
                    };
                    if let Some(missing) = prompt.arguments.iter().find(|a| {
                        a.required == Some(true) && !params.arguments.contains_key(&a.name)
                    }) {
                        let e = FeatureError::InvalidParams(format!(
                            "prompt {:?} needs the argument {:?}",
                            prompt.name, missing.name
                        ));
                        return Err(e.to_error());
                    }
                    get(cx, params.arguments)
                        .await
                        .map(|r| to_raw(&r))
                        .map_err(|e| e.to_error())
                }
                FeatureRequest::Complete(params) => {
                    let Some(complete) = &self.completion else {
                        return Err(ErrorObject::method_not_found("completion/complete"));
                    };
                    complete(cx, params)
                        .await
                        .map(|values| {
                            to_raw(&CompleteResult {
                                completion: Completion::of(values),
                            })
                        })
                        .map_err(|e| e.to_error())
                }
            }
        })
    }
}

/// A resource this server serves is a fixed one or one a template matches (those a
/// handler lists are read through a template, [`ServerBuilder::resource_list`]).
impl KnownResources for Features {
    fn knows(&self, uri: &str) -> bool {
        self.has_resource(uri)
            || self
                .templates
                .iter()
                .any(|(_, t, _)| t.matches(uri).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue39_07_uri_templates_match_their_uris_and_nothing_else() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(
            t.matches("test://template/42/data"),
            Some(BTreeMap::from([("id".to_owned(), "42".to_owned())]))
        );
        for not in [
            "test://template//data",
            "test://template/4/2/data",
            "test://template/42/data/more",
            "test://other/42/data",
        ] {
            assert_eq!(t.matches(not), None, "{not}");
        }
        let tail = UriTemplate::parse("game://{instance}").unwrap();
        assert_eq!(tail.matches("game://go-1").unwrap()["instance"], "go-1");
        let two = UriTemplate::parse("a://{x}-{y}").unwrap();
        assert_eq!(two.matches("a://1-2").unwrap()["y"], "2");
        for bad in ["a://{+path}", "a://{x}{y}", "a://{x", "a://x}", "a://{}"] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn issue39_07_errors_have_the_codes_the_spec_gives() {
        let e = FeatureError::ResourceNotFound("x://y".into()).to_error();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(e.data.unwrap()["uri"], "x://y");
        assert_eq!(
            FeatureError::PromptNotFound("p".into()).to_error().code,
            ErrorCode::INVALID_PARAMS
        );
        assert_eq!(
            FeatureError::Failed("x".into()).to_error().code,
            ErrorCode::INTERNAL_ERROR
        );
    }
}
