//! The manifest: `mcpl/manifest`, each host's view of it (RFC-014 §2, §4.1), and
//! `mcpl/manifestChanged` on replacement (SPEC §17.3).

use crate::support;

use mcpl_protocol::digest::revision_of_value;
use mcpl_protocol::mcpl::McplManifest;
use mcpl_protocol::toolsets::DeclError;
use mcpl_server::{ManifestError, Server};
use serde_json::{Value, json};
use support::{Client, TestClient, connect};

/// The server's manifest with RFC-014's members.
fn full() -> Value {
    json!({"version": "0.5", "pushEvents": true, "toolHints": true,
        "featureSets": {"default": {"description": "The server's tools, and the events it pushes about them",
                    "uses": ["tools", "pushEvents"]}},
        "toolsets": {"lobby": {"title": "Lobby", "summary": "Find games", "default": "open"},
                     "game": {"title": "Go", "default": "closed", "instances": true}},
        "surface": {"title": "Arcade", "summary": "Games"}})
}

/// `m` without RFC-014's members.
fn plain(m: &Value) -> Value {
    let mut m = m.clone();
    for k in ["toolHints", "toolsets", "surface"] {
        m.as_object_mut().unwrap().remove(k);
    }
    m
}

fn with_revision(mut m: Value) -> Value {
    m["revision"] = json!(revision_of_value(&m).unwrap());
    m
}

fn manifest(v: Value) -> McplManifest {
    serde_json::from_value(v).unwrap()
}

fn server() -> Server {
    Server::builder("arcade", "1.0")
        .manifest(manifest(full()))
        .build()
        .unwrap()
}

async fn fetch(client: &mut TestClient) -> Value {
    let reply = client
        .exchange(json!({"jsonrpc": "2.0", "id": "m", "method": "mcpl/manifest"}))
        .await;
    assert_eq!(reply["id"], "m", "{reply}");
    // SPEC §17.4: the result is the manifest object itself.
    reply["result"].clone()
}

#[actix::test]
async fn a_tool_hints_host_sees_the_whole_manifest() {
    let (mut client, _session) = connect(&server());
    let init = client.handshake_mcpl(true, &["tools", "pushEvents"]).await;
    assert_eq!(
        init["capabilities"]["experimental"]["mcpl"],
        with_revision(full())
    );
    assert_eq!(fetch(&mut client).await, with_revision(full()));
}

#[actix::test]
async fn an_mcpl_host_without_tool_hints_sees_the_tailored_manifest() {
    let (mut client, _session) = connect(&server());
    let init = client.handshake_mcpl(false, &["tools", "pushEvents"]).await;
    assert_eq!(
        init["capabilities"]["experimental"]["mcpl"],
        with_revision(plain(&full()))
    );
    assert_eq!(fetch(&mut client).await, with_revision(plain(&full())));
}

#[actix::test]
async fn a_plain_mcp_host_sees_the_tailored_manifest() {
    let (mut client, _session) = connect(&server());
    let init = client.handshake_plain().await;
    let shown = &init["capabilities"]["experimental"]["mcpl"];
    assert_eq!(shown, &with_revision(plain(&full())));
    assert!(shown.get("toolHints").is_none() && shown.get("toolsets").is_none());
}

#[actix::test]
async fn replacing_the_manifest_tells_each_host_what_changed_for_it() {
    tokio::time::pause();
    let server = server();
    let (mut hinted, _s1) = connect(&server);
    hinted.handshake_mcpl(true, &["tools", "pushEvents"]).await;
    let (mut unhinted, _s2) = connect(&server);
    unhinted
        .handshake_mcpl(false, &["tools", "pushEvents"])
        .await;
    let (mut plain_host, _s3) = connect(&server);
    plain_host.handshake_plain().await;

    // Only RFC-014's members change: a manifest change for the toolHints host alone. The
    // hosts without hints hear no manifest change, but the list they are shown loses the
    // compat tools that opened `game` (§8), so their tool list changed.
    let mut next = full();
    next["toolsets"].as_object_mut().unwrap().remove("game");
    server.replace_manifest(manifest(next.clone())).unwrap();
    let revision = with_revision(next.clone())["revision"].clone();
    hinted
        .expect(json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
            "params": {"revision": revision, "domains": ["toolsets"]}}))
        .await;
    let list_changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
    unhinted.expect(list_changed.clone()).await;
    plain_host.expect(list_changed).await;
    unhinted.expect_silence().await;

    // A feature set is added: both MCPL hosts hear of it, each with its own view's revision.
    next["featureSets"]["extra"] = json!({"description": "More tools", "uses": ["tools"]});
    server.replace_manifest(manifest(next.clone())).unwrap();
    hinted
        .expect(json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
            "params": {"revision": with_revision(next.clone())["revision"], "domains": ["featureSets"]}}))
        .await;
    unhinted
        .expect(json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
            "params": {"revision": with_revision(plain(&next))["revision"], "domains": ["featureSets"]}}))
        .await;
    assert_eq!(fetch(&mut hinted).await, with_revision(next.clone()));
    assert_eq!(fetch(&mut unhinted).await, with_revision(plain(&next)));

    // A plain MCP host is never sent MCPL notifications.
    plain_host.expect_silence().await;
    hinted.expect_silence().await;
}

#[actix::test]
async fn a_session_not_yet_initialized_hears_nothing_and_is_shown_the_new_manifest() {
    tokio::time::pause();
    let server = server();
    let (mut client, _session) = connect(&server);
    let mut next = full();
    next["pushEvents"] = json!(false);
    server.replace_manifest(manifest(next.clone())).unwrap();
    let init = client.handshake_mcpl(true, &["tools", "pushEvents"]).await;
    assert_eq!(
        init["capabilities"]["experimental"]["mcpl"],
        with_revision(next)
    );
    client.expect_silence().await;
}

#[actix::test]
async fn an_invalid_replacement_is_refused_and_nothing_is_sent() {
    tokio::time::pause();
    let server = server();
    let (mut client, _session) = connect(&server);
    client.handshake_mcpl(true, &["tools", "pushEvents"]).await;
    let mut bad = full();
    bad["toolsets"]["game"]["default"] = json!("open");
    let refused = server.replace_manifest(manifest(bad));
    assert!(
        matches!(refused, Err(ManifestError::Toolset(DeclError::OpenWithInstances(ref t))) if t == "game")
    );
    assert_eq!(*server.manifest(), manifest(full()));
    client.expect_silence().await;
}

#[test]
fn a_server_refuses_to_start_with_an_invalid_manifest() {
    let mut bad = full();
    bad["toolsets"]["game"]["default"] = json!("open");
    let built = Server::builder("arcade", "1")
        .manifest(manifest(bad))
        .build();
    assert!(matches!(
        built,
        Err(mcpl_server::BuildError::Manifest(ManifestError::Toolset(_)))
    ));
}
