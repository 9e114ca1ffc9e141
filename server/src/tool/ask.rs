//! What a tool handler asks of its client while its call runs (MCP "Client Features"): a
//! model completion ([`ToolContext::create_message`], `sampling/createMessage`), input from
//! the user ([`ToolContext::elicit`], `elicitation/create`), or the client's roots
//! ([`ToolContext::list_roots`], `roots/list`).
//!
//! MCP lets a server ask these only of a client that declared the capability, and only
//! while serving one of its requests; both are checked before anything is written
//! ([`AskError::NotSupported`], [`AskError::CallEnded`]).
//!
//! **A legacy client** (MCP 2025-11-25, a connection opened with `initialize`) is sent the
//! request: it travels with the call (on Streamable HTTP, on the call's own answer stream),
//! waits at most the server's [`ask_timeout`](crate::ServerBuilder::ask_timeout), and is
//! cancelled towards the client if the call ends first.
//!
//! **A modern client** (MCP 2026-07-28) is never sent a request: its question travels in
//! an `InputRequiredResult` (multi round-trip requests, MRTR). The call is answered with
//! the question and a signed `requestState`, and this run of the handler ends
//! ([`AskError::InputRequired`]); the client's retry of the call, carrying its
//! `inputResponses`, runs the handler again from the start, and the same question then
//! returns the client's answer at once. **\[project\]** So a handler should do before its
//! questions only what it may do again. A client that did not declare the capability in
//! the call's `_meta` gets -32021 and the handler [`AskError::CallEnded`]. The bounds and
//! the state's checks are the crate's `mrtr.rs`; the README, "Readings", states the design.
//!
//! ```
//! use mcpl_protocol::client_features::{CreateMessageParams, ElicitAction, ElicitParams};
//! use mcpl_protocol::mcp::CallToolResult;
//! use mcpl_server::{ToolContext, ToolError, tool::AskError};
//! use serde_json::json;
//!
//! async fn summarise(cx: ToolContext, text: String) -> Result<CallToolResult, ToolError> {
//!     let ask = CreateMessageParams::user_text(format!("Summarise: {text}"), 200);
//!     match cx.create_message(ask).await {
//!         Ok(answer) => Ok(CallToolResult::text(answer.text())),
//!         // A client without sampling: say so to the model rather than fail the server.
//!         Err(e @ AskError::NotSupported { .. }) => Err(ToolError::failed(e.to_string())),
//!         Err(e) => Err(ToolError::failed(format!("no summary: {e}"))),
//!     }
//! }
//!
//! async fn sign_up(cx: ToolContext, _: serde_json::Value) -> Result<CallToolResult, ToolError> {
//!     let schema = json!({"type": "object", "properties": {"email": {"type": "string"}},
//!                         "required": ["email"]});
//!     let answer = cx
//!         .elicit(ElicitParams::form("Which address?", schema))
//!         .await
//!         .map_err(|e| ToolError::failed(e.to_string()))?;
//!     Ok(CallToolResult::text(match answer.action {
//!         ElicitAction::Accept => format!("signed up {:?}", answer.content),
//!         other => format!("not signed up: {}", other.as_str()),
//!     }))
//! }
//! # let _ = (summarise, sign_up);
//! ```

pub use crate::client_ask::AskError;
use crate::client_ask::{self, Needs};
use crate::session_port::AskAll;
use crate::tool::ToolContext;
use mcpl_protocol::jsonrpc::{decode_result, to_raw};
use mcpl_protocol::mcp::ClientCapabilities;
use mcpl_protocol::method::{CreateMessage, Elicit, ListRoots, Method, RequestMethod};
use std::collections::BTreeMap;

/// One question of [`ToolContext::ask_all`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ClientQuestion {
    /// `sampling/createMessage`.
    Sample(<CreateMessage as RequestMethod>::Params),
    /// `elicitation/create`.
    Elicit(<Elicit as RequestMethod>::Params),
    /// `roots/list`.
    Roots,
}

/// The answer to one question of [`ToolContext::ask_all`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ClientAnswer {
    /// What the client's model sampled.
    Sampled(<CreateMessage as RequestMethod>::Result),
    /// What the client's user did.
    Elicited(<Elicit as RequestMethod>::Result),
    /// The client's roots.
    Roots(<ListRoots as RequestMethod>::Result),
}

impl ToolContext {
    /// Asks the client to sample a model (`sampling/createMessage`) and returns what it
    /// sampled. Refused without asking when the client did not declare `sampling`.
    pub async fn create_message(
        &self,
        params: <CreateMessage as RequestMethod>::Params,
    ) -> Result<<CreateMessage as RequestMethod>::Result, AskError> {
        self.ask::<CreateMessage>(Needs::Sampling, &params).await
    }

    /// Asks the client for input from its user (`elicitation/create`) and returns what
    /// the user did. Refused without asking when the client did not declare
    /// `elicitation` (form mode).
    pub async fn elicit(
        &self,
        params: <Elicit as RequestMethod>::Params,
    ) -> Result<<Elicit as RequestMethod>::Result, AskError> {
        self.ask::<Elicit>(Needs::Elicitation, &params).await
    }

    /// Asks the client for its roots (`roots/list`): the directories or files it lets the
    /// server work in. Refused without asking when the client did not declare `roots`.
    pub async fn list_roots(&self) -> Result<<ListRoots as RequestMethod>::Result, AskError> {
        self.ask::<ListRoots>(Needs::Roots, &Default::default())
            .await
    }

    /// What the client declared it can be asked (`sampling`, `elicitation`, `roots`): an
    /// MCP 2026-07-28 call's own `clientCapabilities`, a legacy connection's from
    /// `initialize`. A handler that can do with less asks only what is declared, since
    /// asking for an undeclared capability ends a modern call with -32021. `None` once the
    /// session is gone.
    pub async fn client_capabilities(&self) -> Option<ClientCapabilities> {
        self.session.declared(self.request_id.clone()).await
    }

    /// Asks several questions at once, each under its key: the answers by key. To an MCP
    /// 2026-07-28 client every question the call did not carry an answer to goes in one
    /// `InputRequiredResult` ([`AskError::InputRequired`]; the retry answers them
    /// together), as mrtr.md's "multiple input requests" have it; a legacy client is asked
    /// them one after the other. Each is refused as its single form would be (a capability
    /// not declared, a bound).
    pub async fn ask_all(
        &self,
        questions: Vec<(String, ClientQuestion)>,
    ) -> Result<BTreeMap<String, ClientAnswer>, AskError> {
        let wire = questions
            .iter()
            .map(|(key, q)| {
                let (needs, method, params) = match q {
                    ClientQuestion::Sample(p) => (Needs::Sampling, CreateMessage::NAME, to_raw(p)),
                    ClientQuestion::Elicit(p) => (Needs::Elicitation, Elicit::NAME, to_raw(p)),
                    ClientQuestion::Roots => (
                        Needs::Roots,
                        ListRoots::NAME,
                        to_raw(&<ListRoots as RequestMethod>::Params::default()),
                    ),
                };
                (needs, method, params, key.clone())
            })
            .collect();
        let all = AskAll {
            call: self.request_id.clone(),
            key: self.call_key,
            questions: wire,
        };
        let mut answers = BTreeMap::new();
        match self.session.ask_all(all).await? {
            Some(raw) => {
                for ((key, q), result) in questions.into_iter().zip(raw) {
                    let decoded = match q {
                        ClientQuestion::Sample(_) => {
                            decode_result(&result).map(ClientAnswer::Sampled)
                        }
                        ClientQuestion::Elicit(_) => {
                            decode_result(&result).map(ClientAnswer::Elicited)
                        }
                        ClientQuestion::Roots => decode_result(&result).map(ClientAnswer::Roots),
                    };
                    let answer = decoded.map_err(|e| AskError::MalformedResult(e.0))?;
                    answers.insert(key, answer);
                }
            }
            None => {
                for (key, q) in questions {
                    let answer = match q {
                        ClientQuestion::Sample(p) => {
                            ClientAnswer::Sampled(self.create_message_as(&key, p).await?)
                        }
                        ClientQuestion::Elicit(p) => {
                            ClientAnswer::Elicited(self.elicit_as(&key, p).await?)
                        }
                        ClientQuestion::Roots => {
                            ClientAnswer::Roots(self.list_roots_as(&key).await?)
                        }
                    };
                    answers.insert(key, answer);
                }
            }
        }
        Ok(answers)
    }

    /// [`ToolContext::create_message`], its question keyed `key` in a modern client's
    /// `InputRequiredResult` (`inputRequests[key]`, answered in `inputResponses[key]`)
    /// instead of the key the SDK derives: for a server whose clients answer by a key they
    /// know, or that documents its keys. A legacy client is asked as by `create_message`.
    pub async fn create_message_as(
        &self,
        key: &str,
        params: <CreateMessage as RequestMethod>::Params,
    ) -> Result<<CreateMessage as RequestMethod>::Result, AskError> {
        self.ask_keyed::<CreateMessage>(Some(key), Needs::Sampling, &params)
            .await
    }

    /// [`ToolContext::elicit`], its question keyed `key` (see
    /// [`ToolContext::create_message_as`]).
    pub async fn elicit_as(
        &self,
        key: &str,
        params: <Elicit as RequestMethod>::Params,
    ) -> Result<<Elicit as RequestMethod>::Result, AskError> {
        self.ask_keyed::<Elicit>(Some(key), Needs::Elicitation, &params)
            .await
    }

    /// [`ToolContext::list_roots`], its question keyed `key` (see
    /// [`ToolContext::create_message_as`]).
    pub async fn list_roots_as(
        &self,
        key: &str,
    ) -> Result<<ListRoots as RequestMethod>::Result, AskError> {
        self.ask_keyed::<ListRoots>(Some(key), Needs::Roots, &Default::default())
            .await
    }

    async fn ask<M: RequestMethod>(
        &self,
        needs: Needs,
        params: &M::Params,
    ) -> Result<M::Result, AskError> {
        self.ask_keyed::<M>(None, needs, params).await
    }

    async fn ask_keyed<M: RequestMethod>(
        &self,
        input_key: Option<&str>,
        needs: Needs,
        params: &M::Params,
    ) -> Result<M::Result, AskError> {
        client_ask::ask::<M>(
            &self.session,
            self.request_id.clone(),
            Some(self.call_key),
            input_key,
            needs,
            params,
        )
        .await
    }
}
