//! Interop: our host's `ServerLink` against a server written with the official MCP Python
//! SDK (`MCPServer`, formerly FastMCP), over stdio and Streamable HTTP, in both eras: with
//! the link's default era, `auto`, the probe finds the Python server (dual-era) modern;
//! with `legacy` the link initializes (the Python server is plain MCP, so no
//! `featureSets/update` follows). Either way it lists the tools and calls them; a Python
//! tool that raises comes back as a tool error.

use actix::Actor;
use mcpl_host::link::{
    CallTool, Connector, Era, EraPolicy, EventSink, GetStatus, LinkConfig, LinkEvent, ServerLink,
    Shutdown,
};
use mcpl_protocol::mcp::Tool;
use mcpl_tests::interop::{python, python_http_server, script};
use mcpl_transport::ClientOptions;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// Starts a link configured `era` (none: the default) and waits for it to be connected
/// with its tools listed.
async fn link_and_tools(
    connector: Connector,
    era: Option<EraPolicy>,
) -> (actix::Addr<ServerLink>, Vec<Tool>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut config = LinkConfig::new("py", connector).with_subscriber(EventSink::Channel(tx));
    if let Some(era) = era {
        config = config.with_era(era);
    }
    let link = ServerLink::new(config).start();
    let mut connected = None;
    loop {
        match rx.recv().await.expect("the link reports") {
            LinkEvent::Connected { init, receipt, .. } => {
                assert_eq!(init.server_info.name, "py-peer");
                assert!(
                    receipt.is_none(),
                    "a plain MCP server gets no featureSets/update"
                );
                connected = Some(init);
            }
            LinkEvent::ToolsChanged { tools, .. } if connected.is_some() => {
                return (link, tools.to_vec());
            }
            LinkEvent::ConnectFailed { error, .. } => panic!("could not connect: {error}"),
            _ => {}
        }
    }
}

async fn exercise(link: &actix::Addr<ServerLink>, tools: &[Tool]) {
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add", "echo", "fail"]);

    let args = |v: Value| v.as_object().cloned().expect("an object");
    let sum = link
        .send(CallTool::new("add").with_arguments(args(json!({"a": 2, "b": 40}))))
        .await
        .expect("the link answers")
        .expect("the call succeeds");
    assert!(!sum.is_error);
    assert_eq!(sum.joined_text(), "42");
    assert_eq!(sum.structured_content, Some(json!({"result": 42})));

    let echo = link
        .send(CallTool::new("echo").with_arguments(args(json!({"text": "from rust"}))))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(echo.joined_text(), "from rust");

    let failed = link
        .send(CallTool::new("fail").with_arguments(args(json!({"reason": "on purpose"}))))
        .await
        .unwrap()
        .expect("a tool error is a result, not a protocol error");
    assert!(failed.is_error);
    assert!(failed.joined_text().contains("fail"), "{failed:?}");
    link.send(Shutdown).await.unwrap();
}

/// The link at `url` by default (modern found) and configured legacy: each plays through.
async fn in_both_eras(url: &str) {
    for (era, found) in [(None, Era::Modern), (Some(EraPolicy::Legacy), Era::Legacy)] {
        let connector = Connector::url(url.to_owned(), ClientOptions::default());
        let (link, tools) = link_and_tools(connector, era).await;
        let status = link.send(GetStatus).await.unwrap();
        assert_eq!(status.session.expect("connected").era, found, "{era:?}");
        exercise(&link, &tools).await;
    }
}

#[actix::test]
async fn our_host_calls_a_python_sdk_server_over_stdio() {
    let url = format!(
        "stdio:{} {} stdio",
        python().display(),
        script("py_server.py").display()
    );
    in_both_eras(&url).await;
}

#[actix::test]
async fn our_host_calls_a_python_sdk_server_over_streamable_http() {
    let (_guard, url) = python_http_server("py_server.py", &["http"]);
    in_both_eras(&url).await;
}
