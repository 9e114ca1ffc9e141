//! An MCPL client of the surface host — the project's own `Host`, connected over
//! Streamable HTTP — is offered the surface host's manifest, grants its `pushEvents`
//! feature set, and is told what happens behind the surface host as `push/event`: another
//! client's challenge arrives as a push it shows, not as text in its next result.

use crate::support;

use mcpl_host::host::{Host, HostConfig, ServerConfig, ShownKind};
use mcpl_testkit::within;
use serde_json::json;
use support::{HttpClient, arcade_of_alice_and_bob, surface_of_alice_and_bob, text};

#[actix::test]
async fn an_mcpl_client_is_pushed_what_happens_behind_the_surface_host() {
    let dir = tempfile::tempdir().unwrap();
    let (_arcade, arcade_url) = arcade_of_alice_and_bob().await;
    let (_surface, url) = surface_of_alice_and_bob(dir.path(), &arcade_url, None).await;

    let alice = Host::start(HostConfig::new(vec![ServerConfig::url(
        "surface",
        url.clone(),
        Some("alice-surface-secret".into()),
    )]))
    .expect("a valid host");
    let mut shown = alice.subscribe();
    within(alice.first_contact()).await.unwrap();
    let names: Vec<String> = alice
        .tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(
        names.contains(&"surface--toolsets--look".to_owned()),
        "{names:?}"
    );
    // alice's surface session is up (and online at the arcade) once a call went through.
    let looked = alice
        .call("surface--toolsets--look", json!({}))
        .await
        .unwrap();
    assert!(looked.joined_text().contains("[arcade]"), "{looked:?}");

    let mut bob = HttpClient::connect(&url, "bob-surface-secret").await;
    bob.request("tools/list", json!({})).await;
    let sent = bob
        .call(
            "toolsets--act",
            json!({"tool": "challenge", "args": {"opponent": "alice", "game": "tictactoe"}}),
        )
        .await;
    assert!(text(&sent).contains("You challenged alice"), "{sent}");

    let push = within(async {
        loop {
            let s = shown.recv().await.expect("the host runs");
            if s.kind == ShownKind::Push && s.text.contains("bob challenges you") {
                break s;
            }
        }
    })
    .await;
    assert_eq!(push.server.as_deref(), Some("surface"), "{push:?}");
    assert!(
        push.text.contains("To accept, call toolsets--open"),
        "{}",
        push.text
    );

    // Pushed, so not repeated in the next result.
    let next = alice
        .call("surface--toolsets--look", json!({}))
        .await
        .unwrap();
    assert!(
        !next.joined_text().contains("Since your previous call:"),
        "{next:?}"
    );
    alice.stop().await;
}

/// A raw MCPL client of the surface host over Streamable HTTP: `initialize` with MCPL's
/// capability, `pushEvents` granted, every message plain JSON.
struct RawMcplClient {
    conn: mcpl_transport::Connection,
    next_id: i64,
}

impl RawMcplClient {
    async fn connect(url: &str, token: &str) -> Self {
        let opts = mcpl_transport::ClientOptions {
            token: Some(token.to_owned()),
            ..Default::default()
        };
        let conn = within(mcpl_transport::http::connect(url, &opts))
            .await
            .expect("connects");
        let mut c = RawMcplClient { conn, next_id: 0 };
        let init = c
            .request(
                "initialize",
                json!({"protocolVersion": "2025-11-25",
                       "capabilities": {"experimental": {"mcpl": {"version": "0.5", "pushEvents": true}}},
                       "clientInfo": {"name": "raw-mcpl-client", "version": "0"}}),
            )
            .await;
        assert!(
            init["result"]["capabilities"]["experimental"]["mcpl"].is_object(),
            "{init}"
        );
        c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        let granted = c
            .request(
                "featureSets/update",
                json!({"effectiveCapabilities": ["pushEvents"]}),
            )
            .await;
        assert!(granted.get("error").is_none(), "{granted}");
        c
    }

    async fn send(&mut self, v: serde_json::Value) {
        let m = mcpl_protocol::Message::from_value(v).expect("a valid message");
        self.conn.outbound.send(m).await.expect("sent");
    }

    async fn read(&mut self) -> serde_json::Value {
        loop {
            let read = within(self.conn.inbound.recv())
                .await
                .expect("the session is open");
            if let mcpl_transport::Inbound::Message { message, .. } = read {
                return serde_json::from_str(&message.encode()).unwrap();
            }
        }
    }

    /// Sends a request and returns its response (what comes before it is skipped).
    async fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let m = self.read().await;
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return m;
            }
        }
    }

    /// Reads until a `push/event` whose text contains `needle`, answering every push read;
    /// the event ids of all of them, that one last.
    async fn pushes_until(&mut self, needle: &str) -> Vec<String> {
        let mut ids = Vec::new();
        loop {
            let m = self.read().await;
            if m["method"] != "push/event" {
                continue;
            }
            ids.push(m["params"]["eventId"].as_str().unwrap().to_owned());
            self.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": {"accepted": true}}))
                .await;
            if m.to_string().contains(needle) {
                return ids;
            }
        }
    }
}

/// Issue #36 item 2: each surface-host session numbered its pushes `surface-0`, `surface-1`,
/// … again, and a client that remembered ids across its reconnects (SPEC §9.4) took every
/// push of its next session for a retry and showed none. Two sessions of one client here,
/// each sent a challenge: no id of the second is one of the first's.
#[actix::test]
async fn issue36_02_each_surface_session_pushes_under_event_ids_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let (_arcade, arcade_url) = arcade_of_alice_and_bob().await;
    let (_surface, url) = surface_of_alice_and_bob(dir.path(), &arcade_url, None).await;
    let mut sessions: Vec<Vec<String>> = Vec::new();
    for game in ["tictactoe", "go"] {
        let mut alice = RawMcplClient::connect(&url, "alice-surface-secret").await;
        // alice's session is up (and online at the arcade) once a call went through.
        let looked = alice
            .request(
                "tools/call",
                json!({"name": "toolsets--look", "arguments": {}}),
            )
            .await;
        assert!(looked.get("error").is_none(), "{looked}");
        let mut bob = HttpClient::connect(&url, "bob-surface-secret").await;
        bob.request("tools/list", json!({})).await;
        let sent = bob
            .call(
                "toolsets--act",
                json!({"tool": "challenge", "args": {"opponent": "alice", "game": game}}),
            )
            .await;
        assert!(text(&sent).contains("You challenged alice"), "{sent}");
        sessions.push(within(alice.pushes_until("bob challenges you")).await);
    }
    let (first, second) = (&sessions[0], &sessions[1]);
    assert!(
        !second.iter().any(|id| first.contains(id)),
        "an id of the first session again: {first:?} then {second:?}"
    );
}
