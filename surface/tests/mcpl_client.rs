//! An MCPL client of the surface host — the project's own `Host`, connected over
//! Streamable HTTP — is offered the surface host's manifest, grants its `pushEvents`
//! feature set, and is told what happens behind the surface host as `push/event`: another
//! client's challenge arrives as a push it shows, not as text in its next result.

mod support;

use mcpl_host::host::{Host, HostConfig, ServerConfig, ShownKind};
use serde_json::json;
use support::{HttpClient, arcade_of_alice_and_bob, surface_of_alice_and_bob, text, within};

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
