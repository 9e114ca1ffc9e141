//! Playing the arcade through the project's own host (`mcpl_host::host::Host`), as an
//! agent does: the four meta-tools, the model's unchanging tool list, and what the host
//! shows — tool results with their "What changed:" section, pushes and notices (§6).
//!
//! An [`Agent`] is one host (one connection) of one principal, subscribed to what it shows
//! from its start, so a test awaits a push or a notice instead of sleeping. Every wait is
//! bounded by [`within`].

use super::Harness;
use mcpl_host::host::{Host, HostConfig, HostHandle, ServerConfig, Shown, ShownKind};
use mcpl_protocol::CallToolResult;
use mcpl_testkit::within;
use serde_json::{Value, json};
use std::path::Path;
use tokio::sync::mpsc;

/// The arcade's name in every test host.
pub const SERVER: &str = "arcade";

/// The meta-tool that opens a toolset or an instance.
pub const OPEN: &str = "toolsets--open";
/// The meta-tool that calls a toolset's tool.
pub const ACT: &str = "toolsets--act";
/// The meta-tool that shows what is open, usable, ended.
pub const LOOK: &str = "toolsets--look";

/// A host's configuration for `who` (its name is its token) on the harness's arcade, with
/// the told ended ids kept in `state_dir` if given (§4.3, vector 13).
pub fn host_config(h: &Harness, who: &str, state_dir: Option<&Path>) -> HostConfig {
    let server = ServerConfig::url(SERVER, h.listener.url(), Some(who.to_owned()));
    let config = HostConfig::new(vec![server]);
    match state_dir {
        Some(dir) => config.with_state_dir(dir),
        None => config,
    }
}

/// One host of one player, and what it has shown outside tool results.
pub struct Agent {
    /// The host.
    pub host: HostHandle,
    /// Who it plays for.
    pub who: String,
    shown: mpsc::UnboundedReceiver<Shown>,
    /// Pushes, notices and reminders read from the subscription, in order.
    pub seen: Vec<Shown>,
}

impl Agent {
    /// A host for `who`, first contact made (what it shows at its start is complete).
    pub async fn start(h: &Harness, who: &str) -> Agent {
        Self::with(host_config(h, who, None), who).await
    }

    /// A host made with `config` for `who`, first contact made.
    pub async fn with(config: HostConfig, who: &str) -> Agent {
        let host = Host::start(config).expect("a valid host");
        // Subscribed before anything reaches the host: nothing it shows is missed.
        let shown = host.subscribe();
        within(host.first_contact()).await.expect("the host runs");
        Agent {
            host,
            who: who.to_owned(),
            shown,
            seen: Vec::new(),
        }
    }

    /// Calls a meta-tool.
    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        within(self.host.call(tool, args))
            .await
            .expect("the host runs")
    }

    /// `toolsets--act` with `tool` in `instance`; fails the test on a tool error.
    pub async fn act(&self, tool: &str, instance: Option<&str>, args: Value) -> String {
        let mut call = json!({"tool": tool, "args": args});
        if let Some(i) = instance {
            call["instance"] = json!(i);
        }
        let r = self.call(ACT, call).await;
        assert!(!r.is_error, "{} {tool}: {}", self.who, r.joined_text());
        r.joined_text()
    }

    /// `toolsets--open`; fails the test on a tool error.
    pub async fn open(&self, args: Value) -> String {
        let r = self.call(OPEN, args).await;
        assert!(!r.is_error, "{} open: {}", self.who, r.joined_text());
        r.joined_text()
    }

    /// The moves the current definition of `tool` in `instance` lists (its `move` enum), as
    /// the agent reads them before acting (§5.1).
    pub async fn moves(&self, tool: &str, instance: &str) -> Vec<String> {
        let def = within(self.host.definition(Some(SERVER), tool, Some(instance)))
            .await
            .expect("the host runs")
            .unwrap_or_else(|| panic!("{}: {tool} is offered in {instance}", self.who));
        def.input_schema["properties"]["move"]["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("{tool}'s definition lists the legal moves: {def:?}"))
            .iter()
            .map(|m| m.as_str().expect("a move is text").to_owned())
            .collect()
    }

    /// The first message shown outside tool results that satisfies `pred` — one read
    /// already, or the next ones as they come.
    pub async fn until(&mut self, pred: impl Fn(&Shown) -> bool) -> Shown {
        if let Some(s) = self.seen.iter().find(|s| pred(s)) {
            return s.clone();
        }
        loop {
            let s = within(self.shown.recv())
                .await
                .expect("the host is subscribed while it runs");
            self.seen.push(s.clone());
            if pred(&s) {
                return s;
            }
        }
    }

    /// The first push whose text contains `text`.
    pub async fn push_with(&mut self, text: &str) -> Shown {
        self.until(|s| s.kind == ShownKind::Push && s.text.contains(text))
            .await
    }

    /// The model's tool list, as sent.
    pub async fn tools_json(&self) -> String {
        within(self.host.tools_json()).await.expect("the host runs")
    }

    /// Everything shown since the last time this was asked (the first time: since the
    /// start), tool results included.
    pub async fn transcript(&self) -> Vec<Shown> {
        within(self.host.transcript()).await.expect("the host runs")
    }

    /// Stops the host (its connection closes).
    pub async fn stop(self) {
        within(self.host.stop()).await;
    }
}

/// The `toolsets--open` arguments a suggestion shown by the host says would accept it
/// (`… To accept, call toolsets--open {…}.`), as an agent reads them.
pub fn suggested_open(text: &str) -> Option<Value> {
    let line = text.lines().find(|l| l.starts_with("- Suggestion from "))?;
    let (_, call) = line.split_once(". To accept, call toolsets--open ")?;
    serde_json::from_str(call.strip_suffix('.').unwrap_or(call)).ok()
}

/// The host's line telling that `marker` closed with `reason` (§4.3: the ended state).
pub fn closed_line(marker: &str, reason: &str) -> String {
    format!("- Closed [{SERVER}/{marker}]: \"{reason}\" (from {SERVER}).")
}

/// How many of `shown` contain `text`.
pub fn count(shown: &[Shown], text: &str) -> usize {
    shown.iter().filter(|s| s.text.contains(text)).count()
}
