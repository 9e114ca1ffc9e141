//! An agent that reaches the arcade through a surface host (RFC §8.6, `mcpl-surface`) as a
//! plain MCP client would: an in-process surface host on loopback (Streamable HTTP) in
//! front of the arcade, and the agent its client over a real HTTP connection, seeing only
//! the surface host's four meta-tools, its results (with what happened meanwhile) and its
//! `notifications/message`. It plays tic-tac-toe against the bot by trying cells in a fixed
//! order — a cell the result refuses is the next one's turn — as the SDK clients of the
//! surface host's interop tests do.

use crate::agent::{AgentReport, GameRecord, Observer};
use crate::metrics::Metrics;
use mcpl_host::host::{Shown, ShownKind};
use mcpl_protocol::Message;
use mcpl_surface::{HttpSurface, SurfaceConfig};
use mcpl_transport::{ClientOptions, Connection, Inbound};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The instance the surface agent opens.
pub const INSTANCE: &str = "surface-1";

/// How long one request may take.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// Why the surface agent could not play.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SurfaceError {
    /// The surface host's configuration was refused.
    #[error("the surface host's configuration: {0}")]
    Config(#[from] mcpl_surface::ConfigError),
    /// The surface host could not listen.
    #[error("the surface host: {0}")]
    Serve(#[from] mcpl_surface::ServeError),
    /// The client's connection failed.
    #[error("the connection to the surface host: {0}")]
    Transport(#[from] mcpl_transport::TransportError),
    /// The surface host broke off or answered with an error.
    #[error("the surface host: {0}")]
    Protocol(String),
}

/// Starts a surface host in front of the arcade at `arcade_url`, where `name`'s bearer
/// token is its name, and plays one tic-tac-toe game through it as `name`. Must run on an
/// actix system.
pub async fn play(
    name: &str,
    arcade_url: &str,
    observer: Arc<dyn Observer>,
    metrics: Arc<Metrics>,
) -> Result<AgentReport, SurfaceError> {
    let mut all = play_many(&[name.to_owned()], arcade_url, observer, metrics).await?;
    all.pop()
        .unwrap_or_else(|| Err(SurfaceError::Protocol("no agent played".into())))
}

/// Starts one surface host in front of the arcade at `arcade_url` whose clients are
/// `names` (each reaching the arcade with its name as its token), and has each play one
/// tic-tac-toe game through it at once: one surface host, many clients, each its own
/// agent. Each agent's report or why it could not play. Must run on an actix system.
pub async fn play_many(
    names: &[String],
    arcade_url: &str,
    observer: Arc<dyn Observer>,
    metrics: Arc<Metrics>,
) -> Result<Vec<Result<AgentReport, SurfaceError>>, SurfaceError> {
    let token = |name: &str| format!("{name}-surface-token");
    let clients: serde_json::Map<String, Value> = names
        .iter()
        .map(|n| {
            let client = json!({"token": token(n), "servers": {"arcade": {
                "headers": {"Authorization": format!("Bearer {n}")}}}});
            (n.clone(), client)
        })
        .collect();
    let config = SurfaceConfig::parse(
        &json!({
            "mcpServers": {"arcade": {"url": arcade_url}},
            "surface": {"clients": clients}
        })
        .to_string(),
    )?;
    let surface =
        HttpSurface::bind(Arc::new(config), "127.0.0.1:0".parse().expect("an address")).await?;
    let url = surface.url();
    let served = actix::spawn(surface.run());
    let games = names.iter().map(|name| {
        let (name, url, token) = (name.clone(), url.clone(), token(name));
        let (observer, metrics) = (observer.clone(), metrics.clone());
        async move {
            let opts = ClientOptions {
                token: Some(token),
                ..Default::default()
            };
            let mut client = Client {
                name: name.clone(),
                conn: mcpl_transport::http::connect(&url, &opts).await?,
                next: 0,
                observer,
                metrics,
            };
            let game = client.game().await?;
            Ok(AgentReport {
                name,
                games: vec![game],
                ends_told: BTreeMap::new(),
                plain_closes: 0,
                resigns_refused: BTreeMap::new(),
            })
        }
    });
    let all = futures_util::future::join_all(games).await;
    served.abort();
    Ok(all)
}

struct Client {
    name: String,
    conn: Connection,
    next: i64,
    observer: Arc<dyn Observer>,
    metrics: Arc<Metrics>,
}

impl Client {
    async fn request(&mut self, method: &str, params: Value) -> Result<Value, SurfaceError> {
        self.next += 1;
        let id = self.next;
        let m = Message::from_value(
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
        .map_err(|e| SurfaceError::Protocol(e.to_string()))?;
        self.conn.outbound.send(m).await?;
        loop {
            let read = tokio::time::timeout(ANSWER_WITHIN, self.conn.inbound.recv())
                .await
                .map_err(|_| SurfaceError::Protocol(format!("no answer to {method}")))?;
            let Some(Inbound::Message { message, .. }) = read else {
                if read.is_none() {
                    return Err(SurfaceError::Protocol("the session ended".into()));
                }
                continue;
            };
            let v: Value = serde_json::from_str(&message.encode()).unwrap_or(Value::Null);
            if v["id"] == json!(id) && v.get("method").is_none() {
                if let Some(e) = v.get("error") {
                    return Err(SurfaceError::Protocol(format!("{method}: {e}")));
                }
                return Ok(v["result"].clone());
            }
        }
    }

    /// Calls a tool as the model would, and shows the observer the result's words.
    async fn call(&mut self, tool: &str, args: Value) -> Result<(bool, String), SurfaceError> {
        self.observer.calling(&self.name, tool, &args);
        self.metrics.call_started();
        let started = tokio::time::Instant::now();
        let r = self
            .request("tools/call", json!({"name": tool, "arguments": args}))
            .await?;
        self.metrics
            .call_finished(started.elapsed(), r["isError"] == true);
        let text = r["content"]
            .as_array()
            .map(|c| {
                c.iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        let shown = Shown::told(self.next as u64, ShownKind::ToolResult, "surface", &text);
        self.observer.shown(&self.name, &shown);
        Ok((r["isError"] == true, text))
    }

    async fn game(&mut self) -> Result<GameRecord, SurfaceError> {
        self.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "sim-surface-agent", "version": "0"}}),
        )
        .await?;
        let note =
            Message::from_value(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .map_err(|e| SurfaceError::Protocol(e.to_string()))?;
        self.conn.outbound.send(note).await?;
        self.request("tools/list", json!({})).await?;
        let (refused, opened) = self
            .call(
                "toolsets--open",
                json!({"toolset": "tictactoe", "instance": INSTANCE}),
            )
            .await?;
        if refused {
            return Err(SurfaceError::Protocol(format!(
                "the open was refused: {opened}"
            )));
        }
        // `- Opened [arcade/tictactoe:surface-1] "Tic-tac-toe vs bot" (from arcade).`
        let title = opened
            .lines()
            .find_map(|l| {
                l.trim_start_matches("- ")
                    .strip_prefix("Opened [arcade/tictactoe:")
            })
            .and_then(|l| l.split_once('"'))
            .and_then(|(_, t)| t.split_once('"'))
            .map(|(t, _)| t.to_owned());
        let mut record = GameRecord {
            toolset: "tictactoe".into(),
            instance: INSTANCE.into(),
            title,
            result: None,
            moves: None,
            my_moves: 0,
            open: true,
        };
        'turns: for _ in 0..5 {
            for cell in ["b2", "a1", "c3", "a3", "c1", "b1", "b3", "a2", "c2"] {
                let args =
                    json!({"tool": "tictactoe_play", "instance": INSTANCE, "args": {"move": cell}});
                let (refused, text) = self.call("toolsets--act", args).await?;
                if refused {
                    continue;
                }
                record.my_moves += 1;
                if let Some(line) = text.lines().find(|l| l.trim_start().starts_with("Moves:")) {
                    record.moves = Some(line.trim().to_owned());
                }
                if let Some(over) = text.split_once("Game over: ") {
                    let result = over.1.lines().next().unwrap_or("").trim_end_matches('.');
                    record.result = Some(result.to_owned());
                    record.open = false;
                    break 'turns;
                }
                continue 'turns;
            }
            break;
        }
        Ok(record)
    }
}
