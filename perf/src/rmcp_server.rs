//! The same light tool served by `rmcp`, the official Rust MCP SDK, over its Streamable
//! HTTP server (`StreamableHttpService` behind axum, `TCP_NODELAY` on its sockets so that
//! an SSE answer's last chunk is not held back) — for the side-by-side figure, in two
//! configurations ([`RmcpMode`]): its default, which keeps sessions as ours does, and its
//! lightest, stateless with JSON answers.
//!
//! It gets as many threads as our server, on a tokio runtime of its own (current-thread
//! for one), named [`RMCP_THREADS`] for the CPU figure.

use super::client::{LIGHT_TEXT, LIGHT_TOOL};
use super::proc::RMCP_THREADS;
use super::server_thread::ServerThread;
use axum::serve::ListenerExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};
use std::io;
use std::sync::Arc;

/// The light tool as rmcp declares it.
fn light_tool() -> Tool {
    let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
    let schema: Map<String, Value> = schema.as_object().cloned().unwrap_or_default();
    Tool::new(LIGHT_TOOL, "Answers ok at once", Arc::new(schema))
}

/// An rmcp server handler with the light tool alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct Light;

impl ServerHandler for Light {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "sim-perf-rmcp",
                env!("CARGO_PKG_VERSION"),
            ))
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![light_tool()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != LIGHT_TOOL {
            return Err(ErrorData::invalid_params(
                format!("no tool {}", request.name),
                None,
            ));
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(LIGHT_TEXT)]).into())
    }
}

/// How rmcp's Streamable HTTP server is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RmcpMode {
    /// Its default: a session per client (`Mcp-Session-Id`), each answer an SSE stream.
    Sessions,
    /// Stateless (`legacy_session_mode: false`) with JSON answers (`json_response`).
    StatelessJson,
}

impl RmcpMode {
    fn config(self) -> StreamableHttpServerConfig {
        match self {
            RmcpMode::Sessions => StreamableHttpServerConfig::default(),
            RmcpMode::StatelessJson => StreamableHttpServerConfig::default()
                .with_legacy_session_mode(false)
                .with_json_response(true),
        }
    }
}

/// rmcp's server on a thread of its own (or a pool). Dropping it stops it.
pub struct RmcpService(ServerThread);

impl RmcpService {
    /// Starts it on 127.0.0.1 port 0 with `threads` worker threads.
    pub fn start(threads: usize, mode: RmcpMode) -> io::Result<Self> {
        let threads = threads.max(1);
        let runtime = if threads == 1 {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?
        } else {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(threads)
                .thread_name(RMCP_THREADS)
                .enable_all()
                .build()?
        };
        ServerThread::start(RMCP_THREADS, runtime, move |listener| async move {
            let service = StreamableHttpService::new(
                || Ok(Light),
                Arc::new(LocalSessionManager::default()),
                mode.config(),
            );
            let app = axum::Router::new().route_service("/mcp", service);
            let listener = listener.tap_io(|tcp| {
                if let Err(e) = tcp.set_nodelay(true) {
                    tracing::debug!(error = %e, "TCP_NODELAY refused");
                }
            });
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!(error = %e, "the rmcp server stopped");
            }
        })
        .map(RmcpService)
    }

    /// `http://ADDR/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.0.addr())
    }
}
