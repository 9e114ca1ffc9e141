//! The requests a vector sends through a [`Peer`]: the handshake, `tools/call`,
//! `toolsets/open|close|list` and `tools/list`, each checking only what every answer of its
//! kind must be (a statement always carries hints with a rev, §4.3); the vectors check the
//! rest.

use super::error::{Checked, ensure, violation};
use super::peer::{HostKind, Peer};
use serde_json::{Value, json};

impl Peer {
    /// The handshake (SPEC §5.3): `initialize` advertising what `host` says,
    /// `notifications/initialized`, and, when `grant` is given, `featureSets/update` with
    /// those `effectiveCapabilities`. Returns the `initialize` result. A hinted host checks
    /// the server advertised `toolHints` (the fixture contract needs it).
    pub async fn handshake(&mut self, host: HostKind, grant: Option<&[&str]>) -> Checked<Value> {
        let mut caps = json!({});
        if host != HostKind::PlainMcp {
            let mut mcpl = json!({"version": "0.5", "pushEvents": true});
            if host == HostKind::Hinted {
                mcpl["toolHints"] = json!(true);
            }
            caps = json!({"experimental": {"mcpl": mcpl}});
        }
        self.hinted = host == HostKind::Hinted;
        let init = self
            .result(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": caps,
                       "clientInfo": {"name": "mcpl-conformance", "version": env!("CARGO_PKG_VERSION")}}),
            )
            .await?;
        if host == HostKind::Hinted {
            let advertised = init
                .pointer("/capabilities/experimental/mcpl/toolHints")
                .and_then(Value::as_bool);
            ensure(advertised == Some(true), || {
                "initialize does not advertise capabilities.experimental.mcpl.toolHints: true (§2)"
                    .to_owned()
            })?;
        }
        self.notify("notifications/initialized", json!({})).await?;
        if let Some(caps) = grant {
            let receipt = self
                .result("featureSets/update", json!({"effectiveCapabilities": caps}))
                .await?;
            ensure(receipt["accepted"] == json!(true), || {
                format!("featureSets/update was not accepted: {receipt}")
            })?;
        }
        Ok(init)
    }

    /// `tools/call`, naming the instance in `_meta["mcpl/instance"]` when given (§4.5).
    /// Returns the result; a JSON-RPC error fails the vector.
    pub async fn call(
        &mut self,
        tool: &str,
        args: Value,
        instance: Option<&str>,
    ) -> Checked<Value> {
        let r = self.call_raw(tool, args, instance).await?;
        match r.get("result") {
            Some(result) => Ok(result.clone()),
            None => Err(violation(format!(
                "tools/call {tool} failed with a JSON-RPC error: {}",
                r["error"]
            ))),
        }
    }

    /// `tools/call`, returning the whole response.
    pub async fn call_raw(
        &mut self,
        tool: &str,
        args: Value,
        instance: Option<&str>,
    ) -> Checked<Value> {
        self.request("tools/call", call_params(tool, args, instance))
            .await
    }

    /// `toolsets/open`, returning the whole response.
    pub async fn open(
        &mut self,
        toolset: &str,
        instance: Option<&str>,
        options: Option<Value>,
    ) -> Checked<Value> {
        let mut params = json!({"toolset": toolset});
        if let Some(i) = instance {
            params["instance"] = json!(i);
        }
        if let Some(o) = options {
            params["options"] = o;
        }
        self.request("toolsets/open", params).await
    }

    /// `toolsets/open` that must succeed; returns the result.
    pub async fn open_ok(
        &mut self,
        toolset: &str,
        instance: Option<&str>,
        options: Option<Value>,
    ) -> Checked<Value> {
        let r = self.open(toolset, instance, options).await?;
        r.get("result").cloned().ok_or_else(|| {
            violation(format!(
                "toolsets/open {toolset} {} was refused: {}",
                instance.unwrap_or("(no instance)"),
                r["error"]
            ))
        })
    }

    /// `toolsets/close`, returning the whole response.
    pub async fn close_toolset(&mut self, toolset: &str, instance: Option<&str>) -> Checked<Value> {
        let mut params = json!({"toolset": toolset});
        if let Some(i) = instance {
            params["instance"] = json!(i);
        }
        self.request("toolsets/close", params).await
    }

    /// `toolsets/close` that must succeed; returns the result.
    pub async fn close_ok(&mut self, toolset: &str, instance: Option<&str>) -> Checked<Value> {
        let r = self.close_toolset(toolset, instance).await?;
        r.get("result").cloned().ok_or_else(|| {
            violation(format!(
                "toolsets/close {toolset} {} was refused: {}",
                instance.unwrap_or("(no instance)"),
                r["error"]
            ))
        })
    }

    /// `toolsets/list`, checking it is a statement: hints always present, taking a rev
    /// (§4.3). Returns the result.
    pub async fn statement(&mut self) -> Checked<Value> {
        let s = self.result("toolsets/list", json!({})).await?;
        let rev = super::wire::result_hints(&s).and_then(|h| h.get("rev"));
        ensure(rev.and_then(Value::as_u64).is_some(), || {
            format!("a toolsets/list result without _meta[\"mcpl/hints\"].rev (§4.3): {s}")
        })?;
        Ok(s)
    }

    /// Every tool of `tools/list` (following `nextCursor`), and the first page's
    /// `_meta["mcpl/rev"]`.
    pub async fn tools_list(&mut self) -> Checked<(Vec<Value>, Option<u64>)> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut rev = None;
        for page in 0.. {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let r = self.result("tools/list", params).await?;
            if page == 0 {
                rev = r.pointer("/_meta/mcpl~1rev").and_then(Value::as_u64);
            }
            tools.extend(r["tools"].as_array().cloned().unwrap_or_default());
            match r.get("nextCursor").and_then(Value::as_str) {
                Some(c) if page < 100 => cursor = Some(c.to_owned()),
                Some(_) => return Err(violation("tools/list pages never end")),
                None => break,
            }
        }
        Ok((tools, rev))
    }

    /// A `ping` round trip.
    pub async fn ping(&mut self) -> Checked {
        self.result("ping", json!({})).await.map(|_| ())
    }
}

/// `tools/call` params, naming the instance in `_meta["mcpl/instance"]` when given.
pub use mcpl_testkit::msg::call_params;
