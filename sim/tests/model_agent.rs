//! The model-backed agent against a mock chat endpoint: a tiny HTTP server on
//! 127.0.0.1:0 that records each request and answers as a model would, reading only the
//! request (the free cells the host's words name). The request must be exactly the host's
//! tool list and the conversation the host showed; the agent plays tic-tac-toe against the
//! arcade's bot to the end, in both wire formats, and over `https://` with a CA made for the
//! test (an agent without that CA never gets a request through).

use mcpl_games::arcade::ArcadeConfig;
use mcpl_testkit::tls::TestCa;
use mcpl_transport::ServerTls;
use serde_json::{Value, json};
use sim::agent::model::{Api, DEFAULT_TASK, ModelError};
use sim::agent::{AgentIo, ModelAgent, ModelConfig, Phase, Silent};
use sim::arcade::ArcadeService;
use sim::hosts::start_host;
use sim::metrics::Metrics;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};

/// Every string in a JSON value, joined.
fn strings(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// What the mock model does next, from the request alone: open a game, play the first
/// free cell the last message names, or stop once the game is over.
fn decide(request: &Value, n: usize) -> Option<(String, Value)> {
    let mut last = String::new();
    strings(request["messages"].as_array()?.last()?, &mut last);
    if last.contains("Game over") {
        return None;
    }
    if n == 0 {
        return Some((
            "toolsets--open".into(),
            json!({"toolset": "tictactoe", "instance": "m1", "options": {"opponent": "bot"}}),
        ));
    }
    let cells = last.split("Free cells: ").nth(1)?;
    let first = cells.split([',', '\n']).next()?.trim().to_owned();
    Some((
        "toolsets--act".into(),
        json!({"tool": "tictactoe_play", "instance": "m1", "args": {"move": first}}),
    ))
}

fn answer(api: Api, call: Option<(String, Value)>, n: usize) -> Value {
    match (api, call) {
        (Api::Anthropic, Some((name, input))) => json!({"content": [
            {"type": "text", "text": "my move"},
            {"type": "tool_use", "id": format!("t{n}"), "name": name, "input": input}]}),
        (Api::Anthropic, None) => json!({"content": [{"type": "text", "text": "done"}]}),
        (Api::OpenAi, Some((name, input))) => json!({"choices": [{"message": {"role": "assistant",
            "content": null, "tool_calls": [{"id": format!("t{n}"), "type": "function",
            "function": {"name": name, "arguments": input.to_string()}}]}}]}),
        (Api::OpenAi, None) => {
            json!({"choices": [{"message": {"role": "assistant", "content": "done"}}]})
        }
    }
}

/// The mock endpoint: one request per connection; each request body is sent down `seen`.
/// With `tls`, it serves `https://localhost:PORT/…`; a client that fails the handshake is
/// dropped and the next awaited.
async fn mock(api: Api, tls: Option<ServerTls>) -> (String, mpsc::UnboundedReceiver<Value>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = match tls {
        Some(_) => format!("https://localhost:{port}/v1/endpoint"),
        None => format!("http://127.0.0.1:{port}/v1/endpoint"),
    };
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut n = 0;
        while let Ok((c, _)) = listener.accept().await {
            let request = match &tls {
                None => exchange(c, api, n).await,
                Some(tls) => match tls.accept(c).await {
                    Ok(c) => exchange(c, api, n).await,
                    Err(_) => continue,
                },
            };
            n += 1;
            let _ = tx.send(request);
        }
    });
    (url, rx)
}

/// Reads one request on `c`, answers it as the mock model, and returns its body.
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(mut c: S, api: Api, n: usize) -> Value {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let body = loop {
        let k = c.read(&mut chunk).await.unwrap();
        assert!(k > 0, "the request ended early");
        buf.extend_from_slice(&chunk[..k]);
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map(|v| v.trim().parse().unwrap())
            .unwrap_or(0);
        if buf.len() >= end + 4 + len {
            break buf[end + 4..end + 4 + len].to_vec();
        }
    };
    let request: Value = serde_json::from_slice(&body).unwrap();
    let reply = answer(api, decide(&request, n), n).to_string();
    let resp = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
        reply.len()
    );
    c.write_all(resp.as_bytes()).await.unwrap();
    let _ = c.shutdown().await;
    request
}

/// A CA made for the test, the mock's certificate for `localhost`, and the CA's file.
fn test_pki(dir: &std::path::Path) -> (ServerTls, PathBuf) {
    let ca = TestCa::new("model endpoint test CA");
    let files = ca.server_cert(&["localhost"]).write(dir, "model");
    let tls = ServerTls::from_pem_files(&files.cert, &files.key).unwrap();
    (tls, ca.write(dir))
}

/// With `tls`, the endpoint is `https://` with a certificate from a test CA the agent is
/// given (`ca_file`).
async fn plays_to_the_end(api: Api, tls: Option<(ServerTls, PathBuf)>) {
    let (server_tls, ca_file) = tls.unzip();
    let (url, mut seen) = mock(api, server_tls).await;
    let service = ArcadeService::start(ArcadeConfig::default(), &["mia".to_owned()], None)
        .await
        .unwrap();
    let host = start_host("mia", &service.ws_url(), None, 1).unwrap();
    host.first_contact().await.unwrap();
    let config = ModelConfig {
        api,
        url,
        key: Some("k".into()),
        model: "mock".into(),
        max_tokens: 64,
        max_turns: 12,
        task: DEFAULT_TASK.into(),
        timeout: Duration::from_secs(20),
        ca_file,
    };
    let io = AgentIo::new(
        "mia",
        host.clone(),
        Arc::new(Silent),
        Arc::new(Metrics::default()),
    );
    let (_phase_tx, phase) = watch::channel(Phase::Play);
    let agent = ModelAgent::new(config).unwrap();
    let report = tokio::time::timeout(Duration::from_secs(60), agent.run(io, phase))
        .await
        .expect("the agent finishes")
        .expect("the agent runs");

    let game = report
        .games
        .iter()
        .find(|g| g.instance == "m1")
        .expect("the game it opened");
    let result = game.result.as_deref().expect("the game ended");
    assert!(
        result == "Draw" || result.contains("(bot) wins"),
        "{result}"
    );

    let tools = host.tools().await.unwrap();
    let mut requests = Vec::new();
    while let Ok(r) = seen.try_recv() {
        requests.push(r);
    }
    assert!(requests.len() >= 4, "opened and moved: {requests:#?}");
    for r in &requests {
        let sent = r["tools"].as_array().unwrap();
        assert_eq!(sent.len(), tools.len(), "the host's tool list, whole");
        for (s, t) in sent.iter().zip(&tools) {
            let (name, schema) = match api {
                Api::Anthropic => (&s["name"], &s["input_schema"]),
                _ => (&s["function"]["name"], &s["function"]["parameters"]),
            };
            assert_eq!(name, &json!(t.name));
            assert_eq!(schema, &t.input_schema);
        }
    }
    // The conversation starts with what the host showed: the lobby's announcement.
    let mut first = String::new();
    strings(&requests[0]["messages"], &mut first);
    assert!(first.contains("Opened [arcade/lobby]"), "{first}");
    // A call's result goes back as that call's result.
    let mut second = String::new();
    strings(&requests[1]["messages"], &mut second);
    assert!(second.contains("Opened [arcade/tictactoe:m1]"), "{second}");
    host.stop().await;
}

#[actix::test]
async fn an_anthropic_style_model_plays_through_the_host() {
    plays_to_the_end(Api::Anthropic, None).await;
}

#[actix::test]
async fn an_openai_style_model_plays_through_the_host() {
    plays_to_the_end(Api::OpenAi, None).await;
}

#[actix::test]
async fn a_model_behind_https_with_a_private_ca_plays_through_the_host() {
    let dir = tempfile::tempdir().unwrap();
    plays_to_the_end(Api::Anthropic, Some(test_pki(dir.path()))).await;
}

#[actix::test]
async fn an_https_model_endpoint_from_an_unknown_ca_is_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    let (server_tls, _ca_file) = test_pki(dir.path());
    let (url, mut seen) = mock(Api::Anthropic, Some(server_tls)).await;
    let service = ArcadeService::start(ArcadeConfig::default(), &["mia".to_owned()], None)
        .await
        .unwrap();
    let host = start_host("mia", &service.ws_url(), None, 1).unwrap();
    host.first_contact().await.unwrap();
    let config = ModelConfig {
        api: Api::Anthropic,
        url,
        key: None,
        model: "mock".into(),
        max_tokens: 64,
        max_turns: 2,
        task: DEFAULT_TASK.into(),
        timeout: Duration::from_secs(20),
        // The webpki roots alone: the test CA is not among them.
        ca_file: None,
    };
    let io = AgentIo::new(
        "mia",
        host.clone(),
        Arc::new(Silent),
        Arc::new(Metrics::default()),
    );
    let (_phase_tx, phase) = watch::channel(Phase::Play);
    let agent = ModelAgent::new(config).unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(60), agent.run(io, phase))
        .await
        .expect("the agent gives up");
    assert!(
        matches!(outcome, Err(ModelError::Unreachable(_))),
        "{outcome:?}"
    );
    assert!(seen.try_recv().is_err(), "no request got through");
    host.stop().await;
}
