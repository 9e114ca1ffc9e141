//! Issue #41, the nodes: three `mcpl-arcade serve --postgres URL --nats URL --node NAME`
//! processes on one private PostgreSQL and one private `nats-server`, both started by the
//! test on loopback. One node holds the arcade's lease and runs it; the others forward
//! each MCP 2026-07-28 request to it over NATS. Shown from outside, in raw modern POSTs:
//!
//! - two agents on two standbys play each other through the lobby to the end, and a
//!   client going through a round-robin balancer (one node per connection) reads the same
//!   game on every node;
//! - the owner SIGKILLed mid Go game against the bot: a request meanwhile gets a clear,
//!   retryable error at once; a standby takes the lease over, the game goes on there from
//!   the same position with every acknowledged move, and a client asking another node goes
//!   on playing it without opening it again;
//! - NATS killed and started again mid-game: forwarding comes back, nothing lost.
//!
//! Every process is killed by its own id; nothing sleeps: the test awaits the nodes' log
//! lines (which node owns the arcade) and the answers, each within the testkit's limit.

use crate::support;

use mcpl_testkit::nats::Nats;
use mcpl_testkit::postgres::Postgres;
use mcpl_testkit::within;
use serde_json::{Value, json};
use std::process::Stdio;
use support::{BIN, text_of};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};
use tokio::sync::watch;

const MODERN: &str = "2026-07-28";

/// The lease's time to live the nodes run with: a dead owner is replaced within it.
pub(crate) const TTL_MS: &str = "1500";

/// One `mcpl-arcade` node: its process, its Streamable HTTP URL (and WebSocket URL, when
/// it listens for WebSocket too) and its stderr's lines.
pub(crate) struct Node {
    pub(crate) name: String,
    pub(crate) child: Child,
    pub(crate) url: String,
    pub(crate) ws: Option<String>,
    pub(crate) log: watch::Receiver<Vec<String>>,
}

impl Node {
    /// Starts node `name` on the database `pg` and the bus `nats`.
    pub(crate) async fn start(name: &str, pg: &str, nats: &str) -> Node {
        Node::start_with_ttl(name, pg, nats, TTL_MS).await
    }

    /// Starts node `name` with a lease of `ttl_ms` milliseconds.
    pub(crate) async fn start_with_ttl(name: &str, pg: &str, nats: &str, ttl_ms: &str) -> Node {
        Node::start_listening(name, pg, nats, ttl_ms, false).await
    }

    /// Starts node `name` with a lease of `ttl_ms` milliseconds, listening for
    /// WebSocket too when `ws`.
    pub(crate) async fn start_listening(
        name: &str,
        pg: &str,
        nats: &str,
        ttl_ms: &str,
        ws: bool,
    ) -> Node {
        Node::start_with(name, pg, nats, ttl_ms, ws, &[]).await
    }

    /// Starts node `name` as [`Node::start_listening`] does, with `extra` arguments.
    pub(crate) async fn start_with(
        name: &str,
        pg: &str,
        nats: &str,
        ttl_ms: &str,
        ws: bool,
        extra: &[&str],
    ) -> Node {
        let mut command = Command::new(BIN);
        command.args(["serve", "--postgres", pg, "--nats", nats, "--node", name]);
        command.args(extra);
        // A fast bot, unless the test gives it a thinking time.
        if !extra.contains(&"--bot-time-ms") {
            command.args(["--bot-playouts", "48"]);
        }
        if ws {
            command.args(["--ws", "127.0.0.1:0"]);
        }
        let mut child = command
            .args(["--http", "127.0.0.1:0", "--lease-ttl-ms", ttl_ms])
            .args(["--forward-timeout-ms", "10000"])
            .args(["--token", "alice=alice", "--token", "bob=bob"])
            .args(["--seed", "7"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the binary starts");
        let (tx, log) = watch::channel(Vec::new());
        let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        let who = name.to_owned();
        tokio::spawn(async move {
            while let Ok(Some(line)) = stderr.next_line().await {
                eprintln!("[{who}] {line}");
                tx.send_modify(|lines| lines.push(line));
            }
        });
        // The WebSocket front says where it listens first.
        let mut urls = mcpl_testkit::process::listening(&mut child, 1 + usize::from(ws)).await;
        let url = urls.pop().expect("the Streamable HTTP front");
        Node {
            name: name.to_owned(),
            child,
            url,
            ws: urls.pop(),
            log,
        }
    }

    /// Waits until this node has said a line containing `text`.
    pub(crate) async fn said(&self, text: &str) {
        let mut log = self.log.clone();
        mcpl_testkit::within_named(&format!("node {} saying {text:?}", self.name), async {
            log.wait_for(|lines| lines.iter().any(|l| l.contains(text)))
                .await
                .expect("the node's log is read");
        })
        .await;
    }

    /// Whether this node has said `text`.
    pub(crate) fn has_said(&self, text: &str) -> bool {
        self.log.borrow().iter().any(|l| l.contains(text))
    }

    /// Waits until this node says its role (it owns the arcade, or stands by): the first
    /// line that says it.
    pub(crate) async fn first_role(&self) -> String {
        let mut log = self.log.clone();
        let is_role = |l: &String| l.contains("owns the arcade") || l.contains("stands by");
        mcpl_testkit::within_named(&format!("node {} saying its role", self.name), async {
            let lines = log
                .wait_for(|lines| lines.iter().any(is_role))
                .await
                .expect("the node's log is read");
            lines
                .iter()
                .find(|l| is_role(l))
                .cloned()
                .unwrap_or_default()
        })
        .await
    }

    /// Waits until this node owns the arcade and serves it.
    pub(crate) async fn owns(&self) {
        self.said(&format!(
            "node {:?} owns the arcade and serves it",
            self.name
        ))
        .await;
    }

    /// Waits until this node forwards to `owner`.
    pub(crate) async fn forwards_to(&self, owner: &str) {
        self.said(&format!(
            "node {:?} stands by, forwarding to node {owner:?}",
            self.name
        ))
        .await;
    }
}

/// PostgreSQL and NATS, then three nodes: `n1` first (it takes the lease), `n2` and
/// `n3` standing by and forwarding to it.
pub(crate) async fn cluster() -> (Postgres, Nats, Vec<Node>) {
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let n1 = Node::start("n1", &pg.url(), &nats.url()).await;
    n1.owns().await;
    let n2 = Node::start("n2", &pg.url(), &nats.url()).await;
    let n3 = Node::start("n3", &pg.url(), &nats.url()).await;
    n2.forwards_to("n1").await;
    n3.forwards_to("n1").await;
    (pg, nats, vec![n1, n2, n3])
}

/// A modern request: `params` with the era's `_meta`.
pub(crate) fn modern(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A modern POST of `body` to `url` as `token`: its status, headers and JSON-RPC answer.
pub(crate) async fn post(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    body: &Value,
) -> (u16, reqwest::header::HeaderMap, Value) {
    try_post(http, url, token, body).await.expect("an answer")
}

/// As [`post`], the error when no answer came (the connection closed first: the node
/// stopped).
pub(crate) async fn try_post(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    body: &Value,
) -> Result<(u16, reqwest::header::HeaderMap, Value), reqwest::Error> {
    let method = body["method"].as_str().unwrap_or_default();
    let mut b = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", method)
        .header("authorization", format!("Bearer {token}"))
        .body(body.to_string());
    if let Some(name) = body["params"]["name"].as_str() {
        b = b.header("mcp-name", name);
    }
    let resp = within(b.send()).await?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = within(resp.text()).await?;
    // A JSON body, or an SSE answer whose last event is the response.
    let json = text
        .lines()
        .rev()
        .filter_map(|l| l.strip_prefix("data: ").or(Some(l)))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v.get("id").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC answer in {status} {text}"));
    Ok((status, headers, json))
}

/// A tool call's JSON-RPC answer (any status).
pub(crate) async fn call_raw(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    tool: &str,
    args: Value,
) -> (u16, Value) {
    let body = modern(1, "tools/call", json!({"name": tool, "arguments": args}));
    let (status, _, answer) = post(http, url, token, &body).await;
    (status, answer)
}

/// A tool call that must succeed: its result.
pub(crate) async fn call(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    tool: &str,
    args: Value,
) -> Value {
    let (status, answer) = call_raw(http, url, token, tool, args.clone()).await;
    assert_eq!(status, 200, "{tool} {args}: {answer:#}");
    let result = answer["result"].clone();
    assert_eq!(
        result["resultType"], "complete",
        "{tool} {args}: {answer:#}"
    );
    assert_ne!(result["isError"], true, "{tool} {args}: {answer:#}");
    result
}

/// A round-robin TCP balancer on loopback standing in for nginx or HAProxy: each
/// connection goes to the next of `upstreams`. Returns its URL (path `/mcp`).
pub(crate) async fn balancer(upstreams: Vec<String>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = listener.local_addr().unwrap();
    let addrs: Vec<String> = upstreams
        .iter()
        .map(|u| {
            u.trim_start_matches("http://")
                .trim_end_matches("/mcp")
                .to_owned()
        })
        .collect();
    tokio::spawn(async move {
        let mut next = 0;
        while let Ok((mut client, _)) = listener.accept().await {
            let to = addrs[next % addrs.len()].clone();
            next += 1;
            tokio::spawn(async move {
                if let Ok(mut server) = TcpStream::connect(&to).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    format!("http://{at}/mcp")
}

/// An HTTP client that opens a new connection for every request (so a balancer sends
/// each to the next node).
pub(crate) fn fresh_connections() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}

#[actix::test]
async fn issue41_02_two_agents_on_two_standbys_play_through_the_lobby_to_the_end() {
    let (_pg, _nats, nodes) = cluster().await;
    let http = reqwest::Client::new();
    let (on_n2, on_n3) = (&nodes[1].url, &nodes[2].url);

    // alice, on n2, challenges bob; bob, on n3, finds the challenge and accepts it.
    let sent = call(
        &http,
        on_n2,
        "alice",
        "challenge",
        json!({"opponent": "bob", "game": "tictactoe"}),
    )
    .await;
    let game = sent["structuredContent"]["instance"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text_of(&sent).contains("You challenged bob to Tic-tac-toe; you play X"),
        "{sent:#}"
    );
    let games = call(&http, on_n3, "bob", "games", json!({})).await;
    assert_eq!(
        games["structuredContent"]["challenges"][0]["instance"],
        json!(game),
        "{games:#}"
    );
    let joined = call(
        &http,
        on_n3,
        "bob",
        "toolset_open",
        json!({"toolset": "tictactoe", "instance": game}),
    )
    .await;
    assert!(text_of(&joined).contains("vs alice"), "{joined:#}");

    // X takes column a; O answers in column b.
    let moves = [
        ("alice", on_n2, "a1"),
        ("bob", on_n3, "b1"),
        ("alice", on_n2, "a2"),
        ("bob", on_n3, "b2"),
        ("alice", on_n2, "a3"),
    ];
    let mut last = Value::Null;
    for (who, url, cell) in moves {
        last = call(
            &http,
            url,
            who,
            "tictactoe_play",
            json!({"move": cell, "instance": game}),
        )
        .await;
    }
    let end = text_of(&last);
    assert!(end.contains("X (alice) wins"), "{end}");

    // bob, on his node, finds the game over; a client going through a round-robin
    // balancer reads the same on every node, one connection each.
    let front = balancer(nodes.iter().map(|n| n.url.clone()).collect()).await;
    let spread = fresh_connections();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let r = call_raw(
            &spread,
            &front,
            "bob",
            "tictactoe_board",
            json!({"instance": game}),
        )
        .await;
        seen.push(r);
    }
    let ended = text_of(&seen[0].1["result"]);
    assert!(
        ended.contains("has ended: X (alice) wins") && ended.contains("Moves: a1 b1 a2 b2 a3"),
        "{ended}"
    );
    for (status, answer) in &seen {
        assert_eq!(*status, 200, "{answer:#}");
        assert_eq!(answer, &seen[0].1, "every node answers alike");
    }
}

/// The board of `g1` as `who` reads it on `url`.
pub(crate) async fn board(http: &reqwest::Client, url: &str) -> String {
    text_of(&call(http, url, "alice", "go_board", json!({"instance": "g1"})).await)
}

/// How many of `stone` (`X` Black, `O` White) a board shows (its rows start with their
/// number).
pub(crate) fn stones(board: &str, stone: char) -> usize {
    board
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.matches(stone).count())
        .sum()
}

/// Alice plays a point on `url` (the first of a few that is legal now): the move and
/// the answer's text.
pub(crate) async fn play_some_point(http: &reqwest::Client, url: &str) -> (String, String) {
    for mv in ["G7", "C7", "G3", "E7", "E3", "C5", "G5", "D6", "F4"] {
        let (status, answer) = call_raw(
            http,
            url,
            "alice",
            "go_play",
            json!({"move": mv, "instance": "g1"}),
        )
        .await;
        assert_eq!(status, 200, "{answer:#}");
        if answer["result"]["isError"] != true {
            return (mv.to_owned(), text_of(&answer["result"]));
        }
    }
    panic!("none of the points was legal");
}

/// True when `answer` is the nodes' retryable error: 503, `Retry-After`, a JSON-RPC error
/// saying so.
pub(crate) fn is_retryable(
    status: u16,
    headers: &reqwest::header::HeaderMap,
    answer: &Value,
) -> bool {
    status == 503
        && headers.get("retry-after").is_some()
        && answer["error"]["data"]["retryable"] == true
        && answer["error"]["message"].is_string()
}

/// alice opens Go `g1` against the bot through the node at `url` and plays E5 and C3,
/// each answered by the bot; the board after them (two black stones).
pub(crate) async fn go_g1_against_the_bot(http: &reqwest::Client, url: &str) -> String {
    let opened = call(
        http,
        url,
        "alice",
        "toolset_open",
        json!({"toolset": "go", "instance": "g1"}),
    )
    .await;
    assert!(text_of(&opened).contains("g1"), "{opened:#}");
    for mv in ["E5", "C3"] {
        let r = call(
            http,
            url,
            "alice",
            "go_play",
            json!({"move": mv, "instance": "g1"}),
        )
        .await;
        assert!(text_of(&r).contains("bot (White) "), "{r:#}");
    }
    let before = board(http, url).await;
    assert_eq!(stones(&before, 'X'), 2, "{before}");
    before
}

/// Returns once NATS itself has seen `node`'s connection end (a request to it finds no
/// responder): until then a request forwarded to it reaches a subscription nobody
/// answers, and times out rather than being refused (what a standby cannot tell apart
/// from an owner that is slow).
pub(crate) async fn gone_from_the_bus(nats: &Nats, node: &str) {
    use mcpl_cluster::bus::{BusConfig, BusError, NatsBus};
    let probe = NatsBus::connect(&nats.url(), BusConfig::new("probe"))
        .await
        .expect("a probe on the bus");
    within(async {
        loop {
            let asked = probe
                .forward(
                    node,
                    bytes::Bytes::new(),
                    std::time::Duration::from_millis(50),
                )
                .await;
            if matches!(asked, Err(BusError::NoNode { .. })) {
                return;
            }
        }
    })
    .await;
}

#[actix::test]
async fn issue41_02_the_owner_sigkilled_mid_go_game_another_node_takes_over_from_the_same_position()
{
    let (_pg, nats, mut nodes) = cluster().await;
    let http = reqwest::Client::new();
    let on_n2 = nodes[1].url.clone();
    let before = go_g1_against_the_bot(&http, &on_n2).await;

    // The owner dies; a request meanwhile is refused, retryable, the request not run (the
    // lease is still n1's for a while: nobody has taken over yet).
    let killed_at = std::time::Instant::now();
    nodes[0].child.kill().await.expect("n1 is killed (SIGKILL)");
    gone_from_the_bus(&nats, "n1").await;
    let body = modern(
        9,
        "tools/call",
        json!({"name": "go_board", "arguments": {"instance": "g1"}}),
    );
    let (status, headers, refused) = post(&http, &on_n2, "alice", &body).await;
    assert!(
        is_retryable(status, &headers, &refused),
        "{status} {refused:#}"
    );
    assert_eq!(refused["id"], 9, "{refused:#}");
    assert_eq!(refused["error"]["data"]["owner"], "n1", "{refused:#}");
    assert_eq!(refused["error"]["data"]["ran"], false, "{refused:#}");

    // One standby takes the lease over once it expires and loads the game; the other
    // forwards to it.
    let (n2, n3) = (&nodes[1], &nodes[2]);
    let owner_line = |n: &Node| format!("node {:?} owns the arcade and serves it", n.name);
    let n2_line = owner_line(n2);
    let n3_line = owner_line(n3);
    let mut l2 = n2.log.clone();
    let mut l3 = n3.log.clone();
    within(async {
        tokio::select! {
            _ = l2.wait_for(|lines| lines.iter().any(|l| l.contains(&n2_line))) => {}
            _ = l3.wait_for(|lines| lines.iter().any(|l| l.contains(&n3_line))) => {}
        }
    })
    .await;
    let (owner, other) = if n2.has_said(&n2_line) {
        (n2, n3)
    } else {
        (n3, n2)
    };
    other.forwards_to(&owner.name).await;
    eprintln!(
        "{} took over {:?} after the kill (lease {TTL_MS} ms); {} forwards to it",
        owner.name,
        killed_at.elapsed(),
        other.name
    );

    // alice comes back on the other node (a standby, forwarding): the same position, every
    // acknowledged move, and the game goes on without being opened again.
    let elsewhere = reqwest::Client::new();
    let after = board(&elsewhere, &other.url).await;
    assert_eq!(after, before, "the same position, on another node");
    let (mv, r) = play_some_point(&elsewhere, &other.url).await;
    assert!(r.contains("bot (White) "), "the bot answers again: {r}");
    let now = board(&elsewhere, &owner.url).await;
    assert_eq!(stones(&now, 'X'), 3, "{mv} is kept: {now}");
    let r = call(
        &elsewhere,
        &owner.url,
        "alice",
        "go_resign",
        json!({"instance": "g1"}),
    )
    .await;
    assert!(text_of(&r).contains("wins"), "{r:#}");
}

#[actix::test]
async fn issue41_02_nats_killed_and_started_again_mid_game_forwarding_comes_back() {
    let (_pg, mut nats, nodes) = cluster().await;
    let http = reqwest::Client::new();
    let on_n2 = nodes[1].url.clone();
    call(
        &http,
        &on_n2,
        "alice",
        "toolset_open",
        json!({"toolset": "go", "instance": "g1"}),
    )
    .await;
    let r = call(
        &http,
        &on_n2,
        "alice",
        "go_play",
        json!({"move": "E5", "instance": "g1"}),
    )
    .await;
    assert!(text_of(&r).contains("bot (White) "), "{r:#}");
    let before = board(&http, &on_n2).await;

    // NATS dies: the nodes say so; a forwarded request is refused, retryable.
    nats.stop();
    for n in &nodes {
        n.said(&format!("node {:?} lost its connection to NATS", n.name))
            .await;
    }
    let body = modern(
        5,
        "tools/call",
        json!({"name": "go_board", "arguments": {"instance": "g1"}}),
    );
    let (status, headers, refused) = post(&http, &on_n2, "alice", &body).await;
    assert!(
        is_retryable(status, &headers, &refused),
        "{status} {refused:#}"
    );
    assert_eq!(refused["error"]["data"]["ran"], false, "{refused:#}");
    let said = refused["error"]["message"].as_str().unwrap();
    assert!(said.contains("lost its connection to NATS"), "{said}");
    // The owner still serves its own clients: nothing is lost there.
    assert_eq!(board(&http, &nodes[0].url).await, before);

    // NATS comes back on its port: every node reconnects, forwarding resumes, the game is
    // as it was and goes on.
    nats.restart().expect("nats-server starts again");
    for n in &nodes {
        n.said(&format!("node {:?} is connected to NATS again", n.name))
            .await;
    }
    assert_eq!(board(&http, &on_n2).await, before, "nothing lost");
    let (mv, r) = play_some_point(&http, &nodes[2].url).await;
    assert!(r.contains("bot (White) "), "{r}");
    let now = board(&http, &on_n2).await;
    assert_eq!(stones(&now, 'X'), 2, "{mv} is kept: {now}");
    assert!(!nodes[1].has_said("owns the arcade") && !nodes[2].has_said("owns the arcade"));
}

/// Sends `signal` to `child` by its own process id.
pub(crate) fn signal(child: &Child, signal: nix::sys::signal::Signal) {
    let pid = child.id().expect("the node runs");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap()),
        signal,
    )
    .expect("the signal is sent");
}

#[actix::test]
async fn issue41_02_an_owner_paused_past_its_lease_stops_at_once_and_its_move_is_not_kept() {
    use nix::sys::signal::Signal;
    let (_pg, _nats, mut nodes) = cluster().await;
    let http = reqwest::Client::new();
    let on_n1 = nodes[0].url.clone();
    call(
        &http,
        &on_n1,
        "alice",
        "toolset_open",
        json!({"toolset": "go", "instance": "g1"}),
    )
    .await;
    let r = call(
        &http,
        &on_n1,
        "alice",
        "go_play",
        json!({"move": "E5", "instance": "g1"}),
    )
    .await;
    assert!(text_of(&r).contains("bot (White) "), "{r:#}");
    let before = board(&http, &on_n1).await;

    // n1 is paused (SIGSTOP: a long pause, a cut network): its lease expires and a
    // standby takes over. A move sent to n1 meanwhile waits for it.
    signal(&nodes[0].child, Signal::SIGSTOP);
    let (n2, n3) = (&nodes[1], &nodes[2]);
    let line = |n: &Node| format!("node {:?} owns the arcade and serves it", n.name);
    let (line2, line3) = (line(n2), line(n3));
    let (mut l2, mut l3) = (n2.log.clone(), n3.log.clone());
    within(async {
        tokio::select! {
            _ = l2.wait_for(|lines| lines.iter().any(|l| l.contains(&line2))) => {}
            _ = l3.wait_for(|lines| lines.iter().any(|l| l.contains(&line3))) => {}
        }
    })
    .await;
    let owner_url = if n2.has_said(&line2) {
        n2.url.clone()
    } else {
        n3.url.clone()
    };
    let stale = tokio::spawn({
        let (http, url) = (http.clone(), on_n1.clone());
        async move {
            let body = modern(
                7,
                "tools/call",
                json!({"name": "go_play", "arguments": {"move": "C3", "instance": "g1"}}),
            );
            http.post(&url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("mcp-protocol-version", MODERN)
                .header("mcp-method", "tools/call")
                .header("mcp-name", "go_play")
                .header("authorization", "Bearer alice")
                .body(body.to_string())
                .send()
                .await
        }
    });

    // n1 wakes: its next renewal fails and it stops at once, with status 3 and saying
    // why; whatever it answered the move, the move is not kept.
    signal(&nodes[0].child, Signal::SIGCONT);
    let status = within(nodes[0].child.wait()).await.expect("n1 ends");
    assert_eq!(status.code(), Some(3), "{status:?}");
    nodes[0].said("stops serving at once").await;
    let answered = within(stale).await.unwrap();
    if let Ok(resp) = answered {
        let text = within(resp.text()).await.unwrap_or_default();
        assert!(
            !text.contains("bot (White) "),
            "a stale owner acknowledged a move: {text}"
        );
        eprintln!("the stale owner answered: {text}");
    }
    let now = board(&http, &owner_url).await;
    assert_eq!(now, before, "the new owner has the game as it was");
    assert_eq!(stones(&now, 'X'), 1, "{now}");
}
