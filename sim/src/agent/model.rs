//! [`ModelAgent`]: a chat-completion endpoint plays the agent's part. Each request is
//! exactly what the host gives a model — its tool list, verbatim, and the conversation the
//! host showed (notices, pushes, reminders, tool results with their `structuredContent`) —
//! and each tool call the model makes goes to the host as is.
//!
//! Two wire formats: Anthropic Messages (`POST …/v1/messages`, tools as
//! `{name, description, input_schema}`, `tool_use`/`tool_result` blocks) and OpenAI chat
//! completions (`POST …/v1/chat/completions`, `tools: [{type: "function", …}]`, `tool`
//! messages). Configured by environment ([`ModelConfig::from_env`]). An `https://` endpoint
//! is verified as the transports verify servers ([`mcpl_transport::ClientTls`]): against the
//! webpki roots, plus `SIM_MODEL_CA_FILE` for an endpoint with a private CA.

use super::beliefs::Beliefs;
use super::io::AgentIo;
use super::{AgentReport, Phase};
use mcpl_host::host::{HostError, Shown, ShownKind};
use mcpl_protocol::Tool;
use mcpl_transport::ClientTls;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::watch;

/// The wire format of the endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI-compatible chat completions.
    OpenAi,
}

/// Where the model is and how to ask it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    /// The wire format.
    pub api: Api,
    /// The full endpoint URL (`http://127.0.0.1:11434/v1/chat/completions`).
    pub url: String,
    /// An API key (`x-api-key` for Anthropic, `Authorization: Bearer` for OpenAI).
    pub key: Option<String>,
    /// The model's name.
    pub model: String,
    /// `max_tokens` per answer.
    pub max_tokens: u32,
    /// Requests before the agent stops.
    pub max_turns: u32,
    /// What the agent is told it is doing (the system prompt).
    pub task: String,
    /// How long one request may take.
    pub timeout: Duration,
    /// A PEM file of CA certificates an `https://` endpoint may chain to, besides the
    /// webpki roots.
    pub ca_file: Option<PathBuf>,
}

/// The environment variables [`ModelConfig::from_env`] reads.
pub const ENV_VARS: [&str; 6] = [
    "SIM_MODEL_API",
    "SIM_MODEL_URL",
    "SIM_MODEL_KEY",
    "SIM_MODEL_NAME",
    "SIM_MODEL_MAX_TURNS",
    "SIM_MODEL_CA_FILE",
];

/// The default task.
pub const DEFAULT_TASK: &str = "You are an agent in an arcade served over MCP. Use the tools to play: open a tic-tac-toe game against the bot with toolsets--open, and make your moves with toolsets--act when the host tells you the play tool is usable. Play until the game is over, then stop calling tools.";

/// Why a model-backed agent could not go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    // The endpoint.
    /// The endpoint answered with an HTTP error.
    #[error("the model endpoint answered HTTP {status}: {body}")]
    Status {
        /// The status.
        status: u16,
        /// The start of its body.
        body: String,
    },
    /// The endpoint's answer is not what the wire format says.
    #[error("the model endpoint's answer does not fit the {api:?} format: {what}")]
    BadAnswer {
        /// The format.
        api: Api,
        /// What is missing or wrong.
        what: String,
    },
    // The configuration.
    /// An environment variable has a value that cannot work.
    #[error("{var}: {reason}")]
    BadConfig {
        /// The variable.
        var: &'static str,
        /// Why.
        reason: String,
    },
    /// `SIM_MODEL_CA_FILE` cannot be read or holds no usable certificate.
    #[error("SIM_MODEL_CA_FILE: {0}")]
    Tls(#[from] mcpl_transport::TlsError),
    // The transport.
    /// The endpoint could not be reached (or failed TLS verification).
    #[error("the model endpoint could not be reached: {0}")]
    Unreachable(#[from] reqwest::Error),
    /// The host stopped.
    #[error(transparent)]
    Host(#[from] HostError),
}

impl ModelConfig {
    /// A configuration from `SIM_MODEL_API` (`anthropic` or `openai`), `SIM_MODEL_URL`
    /// (`http://…` or `https://…`), `SIM_MODEL_KEY` (optional), `SIM_MODEL_NAME`,
    /// `SIM_MODEL_MAX_TURNS` (default 40) and `SIM_MODEL_CA_FILE` (optional); `None` when
    /// `SIM_MODEL_URL` is not set (scripted agents are the default).
    pub fn from_env() -> Result<Option<Self>, ModelError> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// As [`ModelConfig::from_env`], reading variables through `get`.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, ModelError> {
        let Some(url) = get("SIM_MODEL_URL") else {
            return Ok(None);
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(ModelError::BadConfig {
                var: "SIM_MODEL_URL",
                reason: "expected an http:// or https:// endpoint".into(),
            });
        }
        let api = match get("SIM_MODEL_API").as_deref() {
            None | Some("anthropic") => Api::Anthropic,
            Some("openai") => Api::OpenAi,
            Some(other) => {
                return Err(ModelError::BadConfig {
                    var: "SIM_MODEL_API",
                    reason: format!("{other:?} is neither \"anthropic\" nor \"openai\""),
                });
            }
        };
        let max_turns = match get("SIM_MODEL_MAX_TURNS") {
            None => 40,
            Some(v) => v.parse().map_err(|_| ModelError::BadConfig {
                var: "SIM_MODEL_MAX_TURNS",
                reason: format!("{v:?} is not a number"),
            })?,
        };
        Ok(Some(ModelConfig {
            api,
            url,
            key: get("SIM_MODEL_KEY"),
            model: get("SIM_MODEL_NAME").unwrap_or_else(|| "claude-sonnet-4-5".into()),
            max_tokens: 1024,
            max_turns,
            task: DEFAULT_TASK.to_owned(),
            timeout: Duration::from_secs(120),
            ca_file: get("SIM_MODEL_CA_FILE").map(PathBuf::from),
        }))
    }
}

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
struct ToolUse {
    id: String,
    name: String,
    input: Value,
}

/// A turn of the conversation, in neither wire format.
#[derive(Debug, Clone, PartialEq)]
enum Turn {
    /// What the host showed: texts, and the results of the model's last calls.
    User {
        texts: Vec<String>,
        results: Vec<(String, String, bool)>,
    },
    /// The model's answer.
    Assistant { text: String, calls: Vec<ToolUse> },
}

/// An agent played by a model. See the module docs.
pub struct ModelAgent {
    config: ModelConfig,
    client: reqwest::Client,
    turns: Vec<Turn>,
    beliefs: Beliefs,
}

impl ModelAgent {
    /// An agent asking the endpoint `config` names.
    pub fn new(config: ModelConfig) -> Result<Self, ModelError> {
        let tls = match &config.ca_file {
            Some(path) => ClientTls::with_ca_file(path)?,
            None => ClientTls::default(),
        };
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .use_preconfigured_tls((*tls.rustls_config()).clone())
            .build()?;
        Ok(ModelAgent {
            config,
            client,
            turns: Vec::new(),
            beliefs: Beliefs::default(),
        })
    }

    /// Plays until the model stops calling tools (and nothing new is shown), the turns run
    /// out, or the run stops.
    pub async fn run(
        mut self,
        mut io: AgentIo,
        phase: watch::Receiver<Phase>,
    ) -> Result<AgentReport, ModelError> {
        let first = self.read(&mut io).await?;
        self.turns.push(Turn::User {
            texts: first,
            results: Vec::new(),
        });
        for _ in 0..self.config.max_turns {
            if *phase.borrow() == Phase::Stop {
                break;
            }
            io.start_turn().await?;
            let tools = io.tools().await?;
            let body = self.request(&tools);
            let answer = self.ask(&body).await?;
            let calls = match &answer {
                Turn::Assistant { calls, .. } => calls.clone(),
                Turn::User { .. } => Vec::new(),
            };
            self.turns.push(answer);
            let mut results = Vec::new();
            for c in &calls {
                let r = io.call(&c.name, c.input.clone()).await?;
                let mut text = r.joined_text();
                if let Some(s) = &r.structured_content {
                    text.push_str(&format!("\n\nstructuredContent: {s}"));
                }
                results.push((c.id.clone(), text, r.is_error));
            }
            if calls.is_empty() {
                io.wait(Duration::from_secs(2)).await;
            }
            let texts = self.read(&mut io).await?;
            if calls.is_empty() && texts.is_empty() {
                break;
            }
            self.turns.push(Turn::User { texts, results });
        }
        Ok(self.report(io.name()))
    }

    /// What the host showed since the last read, outside tool results (those go back as
    /// the calls' results), as the model is shown it.
    async fn read(&mut self, io: &mut AgentIo) -> Result<Vec<String>, HostError> {
        let shown: Vec<Shown> = io.read().await?;
        for s in &shown {
            self.beliefs.absorb(s);
        }
        Ok(shown
            .into_iter()
            .filter(|s| s.kind != ShownKind::ToolResult)
            .map(|s| s.text)
            .collect())
    }

    /// The request body: the host's tool list as is, and the conversation.
    fn request(&self, tools: &[Tool]) -> Value {
        match self.config.api {
            Api::Anthropic => anthropic_request(&self.config, tools, &self.turns),
            Api::OpenAi => openai_request(&self.config, tools, &self.turns),
        }
    }

    async fn ask(&self, body: &Value) -> Result<Turn, ModelError> {
        let mut req = self.client.post(&self.config.url).json(body);
        req = match (self.config.api, &self.config.key) {
            (Api::Anthropic, key) => {
                let r = req.header("anthropic-version", "2023-06-01");
                match key {
                    Some(k) => r.header("x-api-key", k),
                    None => r,
                }
            }
            (Api::OpenAi, Some(k)) => req.bearer_auth(k),
            (Api::OpenAi, None) => req,
        };
        let resp = req.send().await?;
        let status = resp.status();
        let text = resp.text().await?;
        if !status.is_success() {
            return Err(ModelError::Status {
                status: status.as_u16(),
                body: text.chars().take(500).collect(),
            });
        }
        let v: Value = serde_json::from_str(&text).map_err(|e| ModelError::BadAnswer {
            api: self.config.api,
            what: format!("not JSON: {e}"),
        })?;
        match self.config.api {
            Api::Anthropic => parse_anthropic(&v),
            Api::OpenAi => parse_openai(&v),
        }
    }

    fn report(&self, name: &str) -> AgentReport {
        AgentReport {
            name: name.to_owned(),
            games: self.beliefs.game_records(),
            ends_told: self.beliefs.ends_told.clone(),
            plain_closes: self.beliefs.plain_closes,
            resigns_refused: Default::default(),
        }
    }
}

fn user_text(texts: &[String]) -> String {
    if texts.is_empty() {
        "Nothing new was shown.".to_owned()
    } else {
        texts.join("\n\n")
    }
}

fn anthropic_request(config: &ModelConfig, tools: &[Tool], turns: &[Turn]) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .collect();
    let messages: Vec<Value> = turns
        .iter()
        .map(|t| match t {
            Turn::User { texts, results } => {
                let mut content: Vec<Value> = results
                    .iter()
                    .map(|(id, text, err)| json!({"type": "tool_result", "tool_use_id": id, "content": text, "is_error": err}))
                    .collect();
                if !texts.is_empty() || content.is_empty() {
                    content.push(json!({"type": "text", "text": user_text(texts)}));
                }
                json!({"role": "user", "content": content})
            }
            Turn::Assistant { text, calls } => {
                let mut content = Vec::new();
                if !text.is_empty() {
                    content.push(json!({"type": "text", "text": text}));
                }
                content.extend(calls.iter().map(
                    |c| json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.input}),
                ));
                json!({"role": "assistant", "content": content})
            }
        })
        .collect();
    json!({"model": config.model, "max_tokens": config.max_tokens, "system": config.task,
           "tools": tools, "messages": messages})
}

fn openai_request(config: &ModelConfig, tools: &[Tool], turns: &[Turn]) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}))
        .collect();
    let mut messages = vec![json!({"role": "system", "content": config.task})];
    for t in turns {
        match t {
            Turn::User { texts, results } => {
                for (id, text, _) in results {
                    messages.push(json!({"role": "tool", "tool_call_id": id, "content": text}));
                }
                if !texts.is_empty() || results.is_empty() {
                    messages.push(json!({"role": "user", "content": user_text(texts)}));
                }
            }
            Turn::Assistant { text, calls } => {
                let mut m = json!({"role": "assistant", "content": text});
                if !calls.is_empty() {
                    m["tool_calls"] = calls
                        .iter()
                        .map(|c| json!({"id": c.id, "type": "function",
                                        "function": {"name": c.name, "arguments": c.input.to_string()}}))
                        .collect();
                }
                messages.push(m);
            }
        }
    }
    json!({"model": config.model, "max_tokens": config.max_tokens, "tools": tools, "messages": messages})
}

fn parse_anthropic(v: &Value) -> Result<Turn, ModelError> {
    let bad = |what: &str| ModelError::BadAnswer {
        api: Api::Anthropic,
        what: what.to_owned(),
    };
    let blocks = v["content"].as_array().ok_or_else(|| bad("no content"))?;
    let mut text = String::new();
    let mut calls = Vec::new();
    for b in blocks {
        match b["type"].as_str() {
            Some("text") => text.push_str(b["text"].as_str().unwrap_or_default()),
            Some("tool_use") => calls.push(ToolUse {
                id: b["id"]
                    .as_str()
                    .ok_or_else(|| bad("a tool_use without id"))?
                    .to_owned(),
                name: b["name"]
                    .as_str()
                    .ok_or_else(|| bad("a tool_use without name"))?
                    .to_owned(),
                input: b.get("input").cloned().unwrap_or_else(|| json!({})),
            }),
            _ => {}
        }
    }
    Ok(Turn::Assistant { text, calls })
}

fn parse_openai(v: &Value) -> Result<Turn, ModelError> {
    let bad = |what: &str| ModelError::BadAnswer {
        api: Api::OpenAi,
        what: what.to_owned(),
    };
    let m = &v["choices"][0]["message"];
    if !m.is_object() {
        return Err(bad("no choices[0].message"));
    }
    let text = m["content"].as_str().unwrap_or_default().to_owned();
    let mut calls = Vec::new();
    for c in m["tool_calls"].as_array().into_iter().flatten() {
        let args = c["function"]["arguments"].as_str().unwrap_or("{}");
        calls.push(ToolUse {
            id: c["id"]
                .as_str()
                .ok_or_else(|| bad("a tool call without id"))?
                .to_owned(),
            name: c["function"]["name"]
                .as_str()
                .ok_or_else(|| bad("a tool call without a name"))?
                .to_owned(),
            input: serde_json::from_str(args)
                .map_err(|e| bad(&format!("arguments are not JSON: {e}")))?,
        });
    }
    Ok(Turn::Assistant { text, calls })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(api: Api) -> ModelConfig {
        ModelConfig {
            api,
            url: "http://127.0.0.1:1/".into(),
            key: None,
            model: "m".into(),
            max_tokens: 10,
            max_turns: 1,
            task: "play".into(),
            timeout: Duration::from_secs(1),
            ca_file: None,
        }
    }

    fn turns() -> Vec<Turn> {
        vec![
            Turn::User {
                texts: vec!["Notice".into()],
                results: vec![],
            },
            Turn::Assistant {
                text: "ok".into(),
                calls: vec![ToolUse {
                    id: "c1".into(),
                    name: "toolsets--look".into(),
                    input: json!({}),
                }],
            },
            Turn::User {
                texts: vec![],
                results: vec![("c1".into(), "Open: …".into(), false)],
            },
        ]
    }

    #[test]
    fn both_formats_carry_the_tools_and_the_conversation() {
        let tools = vec![Tool::new(
            "toolsets--look",
            "See",
            json!({"type": "object"}),
        )];
        let a = anthropic_request(&config(Api::Anthropic), &tools, &turns());
        assert_eq!(a["tools"][0]["input_schema"], json!({"type": "object"}));
        assert_eq!(a["messages"][1]["content"][1]["type"], "tool_use");
        assert_eq!(a["messages"][2]["content"][0]["tool_use_id"], "c1");
        let o = openai_request(&config(Api::OpenAi), &tools, &turns());
        assert_eq!(o["tools"][0]["function"]["name"], "toolsets--look");
        assert_eq!(
            o["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{}"
        );
        assert_eq!(o["messages"][3]["role"], "tool");
    }

    #[test]
    fn answers_are_read_in_both_formats() {
        let a = parse_anthropic(&json!({"content": [{"type": "text", "text": "hi"},
            {"type": "tool_use", "id": "t", "name": "toolsets--open", "input": {"toolset": "go"}}]}))
        .unwrap();
        let o = parse_openai(&json!({"choices": [{"message": {"content": "hi", "tool_calls": [
            {"id": "t", "type": "function", "function": {"name": "toolsets--open", "arguments": "{\"toolset\":\"go\"}"}}]}}]}))
        .unwrap();
        assert_eq!(a, o);
        assert!(matches!(
            parse_openai(&json!({"choices": []})),
            Err(ModelError::BadAnswer {
                api: Api::OpenAi,
                ..
            })
        ));
    }

    #[test]
    fn the_environment_chooses_the_endpoint() {
        let none = ModelConfig::from_vars(|_| None).unwrap();
        assert_eq!(none, None);
        let vars = |k: &str| match k {
            "SIM_MODEL_URL" => Some("http://127.0.0.1:9/v1/chat/completions".to_owned()),
            "SIM_MODEL_API" => Some("openai".to_owned()),
            _ => None,
        };
        let c = ModelConfig::from_vars(vars).unwrap().unwrap();
        assert_eq!((c.api, c.max_turns), (Api::OpenAi, 40));
        let tls = |k: &str| match k {
            "SIM_MODEL_URL" => Some("https://models.example/v1/messages".to_owned()),
            "SIM_MODEL_CA_FILE" => Some("/etc/ca.pem".to_owned()),
            _ => None,
        };
        let c = ModelConfig::from_vars(tls).unwrap().unwrap();
        assert_eq!(c.ca_file, Some(PathBuf::from("/etc/ca.pem")));
        let other =
            ModelConfig::from_vars(|k| (k == "SIM_MODEL_URL").then(|| "ftp://x".to_owned()));
        assert!(matches!(
            other,
            Err(ModelError::BadConfig {
                var: "SIM_MODEL_URL",
                ..
            })
        ));
    }
}
