//! A small server built on `mcpl-server`, for interop tests with peers we did not write
//! (the official MCP Python SDK's client) over stdio, WebSocket and Streamable HTTP.
//!
//! Tools: `echo {text}` says the text back; `add {a, b}` adds two integers; and the tools
//! that ask their client, `ask_model`, `ask_user` and `roots` ([`mcpl_tests::asking`]);
//! `change_tools` changes the tool list (a toolset `extra` declared or withdrawn in the
//! manifest, which adds or removes the compat tools), for clients listening for changes.
//! On a network listener it prints `listening on ADDR` as its first line of stdout, once the
//! socket is bound, so a test can read the port it chose (bind port 0).

use anyhow::Context;
use clap::{Parser, Subcommand};
use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{Server, ToolContext, ToolError};
use mcpl_tests::fixture;
use mcpl_transport::ServerOptions;
use serde::Deserialize;
use serde_json::json;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

#[derive(Parser)]
#[command(about = "An interop test server built on mcpl-server")]
struct Cli {
    #[command(subcommand)]
    transport: Transport,
}

#[derive(Subcommand)]
enum Transport {
    /// Serve one session on stdin/stdout.
    Stdio,
    /// Serve Streamable HTTP at /mcp (anonymous connections allowed).
    Http {
        /// Address to bind.
        #[arg(default_value = "127.0.0.1:0")]
        addr: SocketAddr,
    },
    /// Serve WebSocket (anonymous connections allowed).
    Ws {
        /// Address to bind.
        #[arg(default_value = "127.0.0.1:0")]
        addr: SocketAddr,
    },
}

#[derive(Deserialize)]
struct Echo {
    text: String,
}

#[derive(Deserialize)]
struct Add {
    a: i64,
    b: i64,
}

/// The server, for `change_tools` to replace its manifest.
static SERVER: OnceLock<Server> = OnceLock::new();

/// `change_tools`: declares the toolset `extra` in the manifest, or withdraws it.
fn change_tools() -> Result<CallToolResult, ToolError> {
    let server = SERVER
        .get()
        .ok_or_else(|| ToolError::failed("the server is not built yet"))?;
    let mut manifest =
        serde_json::to_value(&*server.manifest()).map_err(|e| ToolError::failed(e.to_string()))?;
    let Some(m) = manifest.as_object_mut() else {
        return Err(ToolError::failed("the manifest is not an object"));
    };
    m.remove("revision");
    m.insert("toolHints".into(), json!(true));
    let toolsets = m.entry("toolsets").or_insert_with(|| json!({}));
    let Some(toolsets) = toolsets.as_object_mut() else {
        return Err(ToolError::failed("toolsets is not an object"));
    };
    let declared = if toolsets.remove("extra").is_some() {
        false
    } else {
        toolsets.insert(
            "extra".into(),
            json!({"title": "Extra", "summary": "Nothing much", "default": "closed", "instances": true}),
        );
        true
    };
    let next = serde_json::from_value(manifest).map_err(|e| ToolError::failed(e.to_string()))?;
    server
        .replace_manifest(next)
        .map_err(|e| ToolError::failed(e.to_string()))?;
    Ok(CallToolResult::text(if declared {
        "extra declared"
    } else {
        "extra withdrawn"
    }))
}

fn server() -> anyhow::Result<Server> {
    let echo = Tool::new(
        "echo",
        "Say the text back.",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    );
    let add = Tool::new(
        "add",
        "Add two integers.",
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
    );
    mcpl_tests::asking::tools(Server::builder(
        "mcpl-interop-server",
        env!("CARGO_PKG_VERSION"),
    ))
    .tool(echo, |_ctx: ToolContext, args: Echo| async move {
        Ok::<_, ToolError>(CallToolResult::text(args.text))
    })
    .tool(
        Tool::new(
            "change_tools",
            "Change the tool list.",
            json!({"type": "object"}),
        ),
        |_ctx: ToolContext, _: serde_json::Value| async move { change_tools() },
    )
    .tool(add, |_ctx: ToolContext, args: Add| async move {
        let sum = args
            .a
            .checked_add(args.b)
            .ok_or_else(|| ToolError::failed("the sum overflows"))?;
        let mut r = CallToolResult::text(sum.to_string());
        r.structured_content = Some(json!({"sum": sum}));
        Ok(r)
    })
    .build()
    .context("building the server")
}

#[actix::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let cli = Cli::parse();
    let server = server()?;
    let _ = SERVER.set(server.clone());
    let opts = Arc::new(ServerOptions {
        allow_anonymous: true,
        ..Default::default()
    });
    match cli.transport {
        Transport::Stdio => {
            let mut sessions = server.watch_sessions();
            let drained = server.serve_stdio(&opts);
            // The session ends when stdin does; then let the last writes reach stdout.
            fixture::stdio_session_done(&mut sessions)
                .await
                .context("watching sessions")?;
            drained.await;
        }
        Transport::Http { addr } => {
            let listener = server.serve_http(addr, opts).await.context("binding")?;
            println!("listening on {}", listener.local_addr());
            std::future::pending::<()>().await;
        }
        Transport::Ws { addr } => {
            let listener = server.serve_ws(addr, opts).await.context("binding")?;
            println!("listening on {}", listener.local_addr());
            std::future::pending::<()>().await;
        }
    }
    Ok(())
}
