//! A stdio server that echoes, for trying the transports by hand and for the stdio tests.
//!
//! `mcpl-transport-echo [--max BYTES] [--principal NAME]` serves on stdin/stdout:
//! - a request `exit` → exits at once, answering nothing;
//! - a request `whoami` → `{"principal", "ordered"}` from its connection info;
//! - any other request → `{"method", "params"}`, its own method and params;
//! - a notification `notify-me` → a notification `notified` with the same params;
//! - a line over the limit → a notification `too-large` with `{"size", "limit"}`;
//! - an unreadable line → the JSON-RPC error response for it;
//! - end of stdin → a notification `stdin-closed`, then exit once it is written.
//!
//! It speaks no MCP (no `initialize`): it exercises the transport only.

use mcpl_protocol::{Message, Notification, Response};
use mcpl_transport::{Inbound, ServerOptions, stdio};
use serde_json::json;
use std::process::ExitCode;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some(opts) = options() else {
        eprintln!("usage: mcpl-transport-echo [--max BYTES] [--principal NAME]");
        return ExitCode::from(2);
    };
    let (mut conn, drained) = stdio::serve_stdio_drained(&opts);
    let principal = conn.info.principal.as_ref().map(|p| p.name());
    let note = |method: &str, params: serde_json::Value| {
        Message::from(Notification {
            method: method.to_owned(),
            params: Some(mcpl_protocol::jsonrpc::to_raw(&params)),
        })
    };
    while let Some(item) = conn.inbound.recv().await {
        let reply = match item {
            Inbound::Message {
                message: Message::Request(r),
                ..
            } => match r.method.as_str() {
                // Exit now: returning would wait for tokio's blocking read of stdin.
                "exit" => std::process::exit(0),
                "whoami" => Response::ok(
                    r.id,
                    json!({ "principal": principal, "ordered": conn.info.ordered }),
                )
                .into(),
                _ => Response::ok(r.id, json!({ "method": r.method, "params": r.params })).into(),
            },
            Inbound::Message {
                message: Message::Notification(n),
                ..
            } if n.method == "notify-me" => note("notified", n.params_value().unwrap_or(json!({}))),
            Inbound::Message { .. } => continue,
            Inbound::TooLarge { size, limit, .. } => {
                note("too-large", json!({ "size": size, "limit": limit }))
            }
            Inbound::Malformed { error, .. } => error.to_response().into(),
        };
        if conn.outbound.send(reply).await.is_err() {
            return ExitCode::FAILURE;
        }
    }
    let _ = conn.outbound.send(note("stdin-closed", json!({}))).await;
    drop(conn);
    drained.await;
    ExitCode::SUCCESS
}

fn options() -> Option<ServerOptions> {
    let mut opts = ServerOptions::default();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next()?;
        match flag.as_str() {
            "--max" => opts.max_message_size = value.parse().ok()?,
            "--principal" => opts.stdio_principal = value,
            _ => return None,
        }
    }
    Some(opts)
}
