//! Tools that ask their client while they run (MCP 2025-11-25, "Client Features"), for the
//! tests of that path (`tests/server_client_requests.rs`) and the interop server
//! (`mcpl-interop-server`, asked by the official Python SDK's client).
//!
//! Each says what it got, or why it got nothing as a tool error (the [`AskError`]'s text):
//! - `ask_model {prompt}` samples the client's model for at most 100 tokens
//!   (`sampling/createMessage`): `LLM response: TEXT`;
//! - `ask_user {message}` asks the client's user for an email ([`email_schema`],
//!   `elicitation/create`): `User response: action=ACTION, content=JSON`;
//! - `roots {}` lists the client's roots (`roots/list`): their URIs, space-separated.

use mcpl_protocol::client_features::{CreateMessageParams, ElicitParams};
use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{AskError, ServerBuilder, ToolContext, ToolError, ToolResult};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
struct Prompt {
    prompt: String,
}

#[derive(Deserialize)]
struct Question {
    message: String,
}

/// What `ask_user` asks for: one required string, `email`.
pub fn email_schema() -> Value {
    json!({"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]})
}

fn schema(member: &str) -> Value {
    json!({"type": "object", "properties": {member: {"type": "string"}}, "required": [member]})
}

/// A request to the client that got no result, as the tool error the model reads.
fn failed(e: AskError) -> ToolError {
    ToolError::failed(e.to_string())
}

/// Asks the client's model to answer `prompt` in at most `max_tokens` tokens, and says
/// `LLM response: TEXT`.
pub async fn sample(cx: &ToolContext, prompt: String, max_tokens: u64) -> ToolResult {
    let params = CreateMessageParams::user_text(prompt, max_tokens);
    let answer = cx.create_message(params).await.map_err(failed)?;
    Ok(CallToolResult::text(format!(
        "LLM response: {}",
        answer.text()
    )))
}

/// Asks the client's user `message`, for an answer to `schema`, and says
/// `{said}: action=ACTION, content=JSON`.
pub async fn ask_user(
    cx: &ToolContext,
    message: impl Into<String>,
    schema: Value,
    said: &str,
) -> ToolResult {
    let answer = cx
        .elicit(ElicitParams::form(message, schema))
        .await
        .map_err(failed)?;
    Ok(CallToolResult::text(format!(
        "{said}: action={}, content={}",
        answer.action.as_str(),
        json!(answer.content)
    )))
}

/// Registers `ask_model`, `ask_user` and `roots` on `builder`.
pub fn tools(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            Tool::new("ask_model", "Ask the client's model.", schema("prompt")),
            |cx: ToolContext, p: Prompt| async move { sample(&cx, p.prompt, 100).await },
        )
        .tool(
            Tool::new(
                "ask_user",
                "Ask the client's user for an email address.",
                schema("message"),
            ),
            |cx: ToolContext, q: Question| async move {
                ask_user(&cx, q.message, email_schema(), "User response").await
            },
        )
        .tool(
            Tool::new(
                "roots",
                "List the client's roots.",
                json!({"type": "object"}),
            ),
            |cx: ToolContext, _: Value| async move {
                let listed = cx.list_roots().await.map_err(failed)?;
                let uris: Vec<String> = listed.roots.into_iter().map(|r| r.uri).collect();
                Ok(CallToolResult::text(uris.join(" ")))
            },
        )
}
