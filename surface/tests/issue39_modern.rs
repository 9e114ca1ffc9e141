//! Issue #39 item 10: the surface host serves MCP 2026-07-28 ("modern") clients, written
//! here as raw JSON — over the real `mcpl-surface` binary's stdin/stdout, and as HTTP
//! POSTs written by hand on real sockets, each with `_meta` and no session id. A modern
//! request is served by its principal's agent: on HTTP one host per bearer token, shared by
//! the principal's requests, bounded; what happened between two requests is told in the
//! next result of that principal's.

use crate::support;

use mcpl_testkit::within;
use serde_json::{Value, json};
use support::{
    ModernHttp, StdioClient, arcade_of_alice_and_bob, modern_meta, play_tictactoe,
    since_previous_call, stdio_arcade, stdio_arcade_config, surface_http, surface_of_alice_and_bob,
    text, write_config,
};

const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The four meta-tools, in the order every list gives them.
fn meta_tools() -> Value {
    json!([
        "toolsets--open",
        "toolsets--act",
        "toolsets--look",
        "toolsets--close"
    ])
}

fn names(list: &Value) -> Value {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect()
}

/// A modern result's own members: its type and the server's name.
fn assert_modern(result: &Value) {
    assert_eq!(result["resultType"], "complete", "{result}");
    assert_eq!(
        result["_meta"][SERVER_INFO]["name"], "mcpl-surface",
        "{result}"
    );
}

/// The arguments of the `toolsets--open` a suggestion in `text` proposes.
fn accept_args(text: &str) -> Value {
    let at = text
        .find("To accept, call toolsets--open ")
        .unwrap_or_else(|| panic!("no suggestion in {text}"));
    let rest = &text[at + "To accept, call toolsets--open ".len()..];
    let line = rest.lines().next().unwrap().trim_end_matches('.');
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

#[tokio::test]
async fn issue39_10_a_modern_client_plays_through_the_surface_host_on_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let config = stdio_arcade_config(dir.path(), "raw");
    let mut c = StdioClient::start(&config, &[]);

    // `server/discover` before anything else, as a dual-era client probes.
    let found = c
        .request("server/discover", json!({"_meta": modern_meta()}))
        .await;
    let d = &found["result"];
    assert_modern(d);
    let versions = d["supportedVersions"].as_array().unwrap();
    assert_eq!(versions[0], "2026-07-28", "{found}");
    assert!(versions.contains(&json!("2025-11-25")), "{found}");
    assert_eq!(d["capabilities"]["tools"]["listChanged"], false, "{found}");
    assert!(
        d["instructions"]
            .as_str()
            .unwrap()
            .contains("toolsets--open"),
        "{found}"
    );

    // The era's refusals, each naming the request.
    let half = c
        .request(
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
        )
        .await;
    assert_eq!(half["error"]["code"], -32602, "{half}");
    let mut old = modern_meta();
    old["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let refused = c.request("tools/list", json!({"_meta": old})).await;
    assert_eq!(refused["error"]["code"], -32022, "{refused}");
    assert_eq!(refused["error"]["data"]["requested"], "1900-01-01");
    assert_eq!(refused["error"]["data"]["supported"][0], "2026-07-28");
    for removed in ["ping", "logging/setLevel", "initialize"] {
        let r = c
            .request(removed, json!({"_meta": modern_meta(), "level": "info"}))
            .await;
        assert_eq!(r["error"]["code"], -32601, "{removed}: {r}");
    }
    // A request of neither era is refused as before `initialize`.
    let plain = c.request("tools/list", json!({})).await;
    assert_eq!(plain["error"]["code"], -32600, "{plain}");

    c.speak_modern();
    let list = c.request("tools/list", json!({})).await;
    let list = &list["result"];
    assert_modern(list);
    assert_eq!(names(list), meta_tools(), "{list}");
    assert_eq!(list["ttlMs"], 0, "{list}");
    assert_eq!(list["cacheScope"], "private", "{list}");

    // The lobby's opening, shown while the arcade connected, is told in the first result.
    let opened = c
        .call(
            "toolsets--open",
            json!({"toolset": "tictactoe", "instance": "raw"}),
        )
        .await;
    assert_modern(&opened);
    let told = text(&opened);
    assert!(told.contains("Opened [arcade/tictactoe:raw]"), "{told}");
    assert!(
        since_previous_call(&told).contains("[arcade/lobby]"),
        "{told}"
    );
    let last = play_tictactoe(&mut c, "raw").await;
    assert!(
        last.contains("O (bot) wins") || last.contains("Draw"),
        "{last}"
    );
    let again = c.request("tools/list", json!({})).await;
    assert_eq!(
        again["result"]["tools"], list["tools"],
        "the list never changes"
    );
    assert!(
        c.notifications.is_empty(),
        "nothing is sent a modern client unasked: {:?}",
        c.notifications
    );

    // `initialize` opens the connection as legacy: from then on every request is served
    // as 2025-11-25 says, whatever its `_meta`.
    let init = c.handshake().await;
    assert_eq!(
        init["result"]["serverInfo"]["name"], "mcpl-surface",
        "{init}"
    );
    let legacy = c.request("tools/list", json!({})).await;
    assert!(legacy["result"].get("resultType").is_none(), "{legacy}");
    assert_eq!(legacy["result"]["tools"], list["tools"]);
    assert_eq!(c.close().await, Some(0));
}

#[tokio::test]
async fn issue39_10_modern_posts_without_a_session_find_their_principals_host() {
    let dir = tempfile::tempdir().unwrap();
    let (_arcade, arcade_url) = arcade_of_alice_and_bob().await;
    let (_surface, url) = surface_of_alice_and_bob(dir.path(), &arcade_url, None).await;
    let mut alice = ModernHttp::new(&url, "alice-surface-secret");
    let mut bob = ModernHttp::new(&url, "bob-surface-secret");

    let found = alice.request("server/discover", json!({})).await;
    assert_eq!(found.status, 200, "{found:?}");
    assert_eq!(found.header("mcp-session-id"), None, "{found:?}");
    assert_modern(&found.body["result"]);

    // The transport's checks and the era's errors, with their statuses.
    let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": modern_meta()}});
    let stranger = ModernHttp::new(&url, "wrong");
    let r = stranger.post("server/discover", None, &discover, &[]).await;
    assert_eq!(r.status, 401, "{r:?}");
    let half = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    let r = alice.post("tools/list", None, &half, &[]).await;
    assert_eq!(
        (r.status, &r.body["error"]["code"]),
        (400, &json!(-32602)),
        "{r:?}"
    );
    let mut old = modern_meta();
    old["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": old}});
    let extra = [("MCP-Protocol-Version", "1900-01-01".to_owned())];
    let r = alice.post("tools/list", None, &body, &extra).await;
    assert_eq!(
        (r.status, &r.body["error"]["code"]),
        (400, &json!(-32022)),
        "{r:?}"
    );
    assert_eq!(r.body["error"]["data"]["requested"], "1900-01-01", "{r:?}");
    let r = alice.request("ping", json!({})).await;
    assert_eq!(
        (r.status, &r.body["error"]["code"]),
        (404, &json!(-32601)),
        "{r:?}"
    );

    // Bob's first request starts his host; it stays when the request ends.
    let listed = bob.request("tools/list", json!({})).await;
    assert_eq!(names(&listed.body["result"]), meta_tools(), "{listed:?}");
    assert_eq!(listed.body["result"]["cacheScope"], "private");
    let games = alice.call("toolsets--act", json!({"tool": "games"})).await;
    assert!(text(&games).contains("Players online: bob"), "{games}");
    let sent = alice
        .call(
            "toolsets--act",
            json!({"tool": "challenge", "args": {"opponent": "bob", "game": "tictactoe"}}),
        )
        .await;
    assert!(text(&sent).contains("You challenged bob"), "{sent}");

    // Bob's host was told while no request of his was open; his next result says so.
    let news = within(async {
        loop {
            let looked = text(&bob.call("toolsets--look", json!({})).await);
            if looked.contains("alice challenges you") {
                return since_previous_call(&looked).to_owned();
            }
        }
    })
    .await;
    assert!(
        news.contains("alice challenges you to Tic-tac-toe"),
        "{news}"
    );
    let accept = accept_args(&news);
    let instance = accept["instance"].as_str().unwrap().to_owned();
    let joined = bob.call("toolsets--open", accept).await;
    assert!(
        text(&joined).contains(&format!("[arcade/tictactoe:{instance}]")),
        "{joined}"
    );
    let seen = bob.call("toolsets--look", json!({})).await;
    assert!(
        !text(&seen).contains("alice challenges you"),
        "told once: {seen}"
    );

    // Alice moves; bob hears of it in his next result, once.
    let moved = alice
        .call(
            "toolsets--act",
            json!({"tool": "tictactoe_play", "instance": instance, "args": {"move": "b2"}}),
        )
        .await;
    assert_ne!(moved["isError"], true, "{moved}");
    let told = within(async {
        loop {
            let looked = text(&bob.call("toolsets--look", json!({})).await);
            if looked.contains("Your move") && looked.contains("Since your previous call:") {
                return since_previous_call(&looked).to_owned();
            }
        }
    })
    .await;
    assert!(
        told.contains(&format!("[arcade/tictactoe:{instance}]")),
        "{told}"
    );
    let next = bob.call("toolsets--look", json!({})).await;
    assert!(!text(&next).contains("Since your previous call:"), "{next}");
}

#[tokio::test]
async fn issue39_10_past_the_cap_a_principals_idle_host_closes_and_starts_again() {
    let dir = tempfile::tempdir().unwrap();
    // One host kept at most; each host has its own stdio arcade, in memory.
    let config = write_config(
        dir.path(),
        "surface.json",
        &json!({"mcpServers": {"arcade": stdio_arcade("p")},
                "surface": {"modernHosts": 1, "clients": {
                    "alice": {"token": "alice-surface-secret"},
                    "bob": {"token": "bob-surface-secret"}}}}),
    );
    let (_surface, url) = surface_http(&config).await;
    let mut alice = ModernHttp::new(&url, "alice-surface-secret");
    let mut bob = ModernHttp::new(&url, "bob-surface-secret");
    let opened = alice
        .call(
            "toolsets--open",
            json!({"toolset": "tictactoe", "instance": "a1"}),
        )
        .await;
    assert!(text(&opened).contains("[arcade/tictactoe:a1]"), "{opened}");
    let looked = alice.call("toolsets--look", json!({})).await;
    assert!(
        text(&looked).contains("[arcade/tictactoe:a1]"),
        "kept: {looked}"
    );

    // Bob's request needs the one place: alice's idle host closes, her game with it.
    let listed = bob.request("tools/list", json!({})).await;
    assert_eq!(names(&listed.body["result"]), meta_tools(), "{listed:?}");

    // Alice's next request starts her a new host, which tells its lobby anew.
    let fresh = text(&alice.call("toolsets--look", json!({})).await);
    assert!(!fresh.contains("tictactoe:a1"), "{fresh}");
    assert!(fresh.contains("[arcade/lobby]"), "{fresh}");
}

#[tokio::test]
async fn issue39_10_concurrent_requests_of_a_principal_share_one_host() {
    let dir = tempfile::tempdir().unwrap();
    // Each host has its own stdio arcade, in memory: a game is seen only by the host that
    // opened it.
    let config = write_config(
        dir.path(),
        "surface.json",
        &json!({"mcpServers": {"arcade": stdio_arcade("p")},
                "surface": {"clients": {"alice": {"token": "alice-surface-secret"}}}}),
    );
    let (_surface, url) = surface_http(&config).await;
    let open = |instance: &'static str| {
        let url = url.clone();
        async move {
            let mut c = ModernHttp::new(&url, "alice-surface-secret");
            let args = json!({"toolset": "tictactoe", "instance": instance});
            text(&c.call("toolsets--open", args).await)
        }
    };
    // Three first requests at once, each on a connection of its own.
    let (a, b, c) = tokio::join!(open("c1"), open("c2"), open("c3"));
    for (told, instance) in [(a, "c1"), (b, "c2"), (c, "c3")] {
        assert!(
            told.contains(&format!("Opened [arcade/tictactoe:{instance}]")),
            "{told}"
        );
    }
    let mut alice = ModernHttp::new(&url, "alice-surface-secret");
    let looked = text(&alice.call("toolsets--look", json!({})).await);
    for instance in ["c1", "c2", "c3"] {
        assert!(
            looked.contains(&format!("[arcade/tictactoe:{instance}]")),
            "one host opened all three: {looked}"
        );
    }
}

#[tokio::test]
async fn issue39_10_a_dropped_server_is_told_once_to_a_modern_client_in_its_results() {
    let dir = tempfile::tempdir().unwrap();
    let (_arcade, addr) = support::ws_arcade_of_alice().await;
    let proxy = support::proxy::Proxy::start(addr).await.unwrap();
    let config = support::proxied_arcade_config(dir.path(), &proxy);
    let mut c = StdioClient::start(&config, &[]);
    c.speak_modern();
    let opened = c
        .call(
            "toolsets--open",
            json!({"toolset": "tictactoe", "instance": "t1"}),
        )
        .await;
    assert!(
        text(&opened).contains("Opened [arcade/tictactoe:t1]"),
        "{opened}"
    );

    proxy.cut_all();
    // No connection tells a modern client anything: its results do, each change once.
    let told = within(async {
        let mut told = String::new();
        loop {
            let looked = text(&c.call("toolsets--look", json!({})).await);
            if let Some((_, news)) = looked.split_once("Since your previous call:") {
                told.push_str(news);
            }
            let back = told.contains("connected again") || told.contains("was lost and is back");
            if back && told.contains("[arcade/tictactoe:t1]") {
                return told;
            }
        }
    })
    .await;
    assert_eq!(told.matches("was lost").count(), 1, "{told}");
    let last = play_tictactoe(&mut c, "t1").await;
    assert!(
        last.contains("O (bot) wins") || last.contains("Draw"),
        "{last}"
    );
    assert!(c.notifications.is_empty(), "{:?}", c.notifications);
    assert_eq!(c.close().await, Some(0));
}
