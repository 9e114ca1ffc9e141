//! Modern requests (MCP 2026-07-28) through a [`Peer`] made by [`Ctx::modern`]: no
//! handshake, every request carrying its own `_meta`, and the stateless profile's keys
//! (`docs/rfc014-stateless.md` §3.1–§3.2) when the request is **hinted**: the client
//! capabilities declare `extensions["mcpl/core"]` and `_meta["mcpl/since"]` names the
//! host's mark. What the kit sends is exactly what the profile says; what it reads it
//! reads liberally, as JSON.
//!
//! [`Ctx::modern`]: super::target::Ctx::modern

use super::error::{Checked, violation};
use super::peer::Peer;
use mcpl_protocol::meta;
use mcpl_protocol::modern::{
    CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, MCPL_EXTENSION, MODERN_PROTOCOL_VERSION,
    PROTOCOL_VERSION_KEY, SERVER_DISCOVER, SUBSCRIPTIONS_LISTEN,
};
use mcpl_protocol::stateless::{GRANT, SINCE};
use serde_json::{Value, json};

/// How a modern request presents its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hinted {
    /// Declares `mcpl/core` (`{"version": "0.5", "toolHints": true, "pushEvents": true}`,
    /// profile §3.1) and sends `mcpl/since` with this mark.
    Since(u64),
    /// A plain MCP request: no `mcpl/core`, no profile keys.
    Plain,
}

/// A modern request's `_meta`: the per-request keys MCP 2026-07-28 asks for (version,
/// client capabilities, client info), and the profile's when hinted.
pub fn modern_meta(hinted: Hinted) -> Value {
    let capabilities = match hinted {
        Hinted::Since(_) => json!({"extensions": {MCPL_EXTENSION:
            {"version": "0.5", "toolHints": true, "pushEvents": true}}}),
        Hinted::Plain => json!({}),
    };
    let mut meta = json!({
        PROTOCOL_VERSION_KEY: MODERN_PROTOCOL_VERSION,
        CLIENT_INFO_KEY: {"name": "mcpl-conformance", "version": env!("CARGO_PKG_VERSION")},
        CLIENT_CAPABILITIES_KEY: capabilities,
    });
    if let Hinted::Since(since) = hinted {
        meta[SINCE] = json!(since);
    }
    meta
}

/// `params` with a modern `_meta` (keys already in `params._meta` are kept).
fn with_meta(mut params: Value, hinted: Hinted) -> Value {
    let mut meta = modern_meta(hinted);
    if let Some(Value::Object(extra)) = params.get("_meta") {
        for (k, v) in extra {
            meta[k] = v.clone();
        }
    }
    params["_meta"] = meta;
    params
}

impl Peer {
    /// Sends a modern request without waiting for its answer (a listen); returns its id.
    pub async fn modern_send(
        &mut self,
        method: &str,
        params: Value,
        hinted: Hinted,
    ) -> Checked<Value> {
        self.send_request(method, with_meta(params, hinted)).await
    }

    /// Sends a modern request and returns its response whole (a result or an error).
    pub async fn modern_request(
        &mut self,
        method: &str,
        params: Value,
        hinted: Hinted,
    ) -> Checked<Value> {
        let id = self.modern_send(method, params, hinted).await?;
        self.response(&id, &format!("the answer to {method}")).await
    }

    /// A modern request that must succeed; returns its result.
    pub async fn modern_result(
        &mut self,
        method: &str,
        params: Value,
        hinted: Hinted,
    ) -> Checked<Value> {
        let r = self.modern_request(method, params, hinted).await?;
        match r.get("result") {
            Some(result) => Ok(result.clone()),
            None => Err(violation(format!(
                "the modern {method} failed on {}: {}",
                self.label(),
                r["error"]
            ))),
        }
    }

    /// A modern `server/discover`, returning the whole response.
    pub async fn discover(&mut self, hinted: Hinted) -> Checked<Value> {
        self.modern_request(SERVER_DISCOVER, json!({}), hinted)
            .await
    }

    /// A modern `tools/call`, naming the instance in `_meta["mcpl/instance"]` when given
    /// (§4.5, unchanged by the profile, §3.4); the result, which must come.
    pub async fn modern_call(
        &mut self,
        tool: &str,
        args: Value,
        instance: Option<&str>,
        hinted: Hinted,
    ) -> Checked<Value> {
        let mut params = json!({"name": tool, "arguments": args});
        if let Some(i) = instance {
            params["_meta"] = json!({meta::INSTANCE: i});
        }
        self.modern_result("tools/call", params, hinted).await
    }

    /// A modern `toolsets/open` or `toolsets/close` (`method`) of `toolset`, naming
    /// `instance` when given, returning the whole response.
    pub async fn modern_toolsets(
        &mut self,
        method: &str,
        toolset: &str,
        instance: Option<&str>,
        since: u64,
    ) -> Checked<Value> {
        let mut params = json!({"toolset": toolset});
        if let Some(i) = instance {
            params["instance"] = json!(i);
        }
        self.modern_request(method, params, Hinted::Since(since))
            .await
    }

    /// Every tool of a modern `tools/list` (following `nextCursor`), and its first page's
    /// result.
    pub async fn modern_tools_list(&mut self, hinted: Hinted) -> Checked<(Vec<Value>, Value)> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut first = None;
        for page in 0.. {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let r = self.modern_result("tools/list", params, hinted).await?;
            tools.extend(r["tools"].as_array().cloned().unwrap_or_default());
            let next = r
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if first.is_none() {
                first = Some(r);
            }
            match next {
                Some(c) if page < 100 => cursor = Some(c),
                Some(_) => return Err(violation("tools/list pages never end")),
                None => break,
            }
        }
        Ok((tools, first.unwrap_or(Value::Null)))
    }

    /// Opens a `subscriptions/listen` stream asking for `notifications`; returns its id
    /// (the subscription id its messages carry).
    pub async fn listen(&mut self, notifications: Value, hinted: Hinted) -> Checked<Value> {
        self.modern_send(
            SUBSCRIPTIONS_LISTEN,
            json!({"notifications": notifications}),
            hinted,
        )
        .await
    }

    /// Opens a `subscriptions/listen` stream as [`Peer::listen`] does, its request running
    /// under the grant `capabilities` (`_meta["mcpl/grant"]: {"effectiveCapabilities":
    /// …}`, profile §3.2) when given: what `mcpl/events` is honoured under (§3.5).
    pub async fn listen_granted(
        &mut self,
        notifications: Value,
        hinted: Hinted,
        capabilities: Option<&[&str]>,
    ) -> Checked<Value> {
        let mut params = json!({"notifications": notifications});
        if let Some(caps) = capabilities {
            params["_meta"] = json!({GRANT: {"effectiveCapabilities": caps}});
        }
        self.modern_send(SUBSCRIPTIONS_LISTEN, params, hinted).await
    }
}
