//! Streamable HTTP: our client against our server on 127.0.0.1, through the session's life:
//! initialize, the GET stream, oversized messages, HTTP failures turned into error
//! responses, closing from either end, and the delivery hook.

use crate::support;

use mcpl_protocol::{ErrorCode, Id};
use mcpl_testkit::within_named;
use mcpl_transport::delivery::{DeliveryHook, StreamOrigin};
use mcpl_transport::http::{self, HttpListener};
use mcpl_transport::{
    ClientOptions, Connection, HttpResponseMode, Inbound, Principal, ServerOptions, TransportKind,
};
use serde_json::json;
use std::sync::Arc;
use support::*;
use tokio::sync::Semaphore;

async fn listen(opts: ServerOptions) -> (HttpListener, String) {
    let listener = http::bind(loopback(), "/mcp", Arc::new(opts))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", listener.local_addr());
    (listener, url)
}

/// Runs `initialize` (answered with `version`) and returns both ends.
async fn initialized(
    listener: &mut HttpListener,
    url: &str,
    opts: &ClientOptions,
    version: &str,
) -> (Connection, Connection) {
    let mut client = http::connect(url, opts).await.unwrap();
    client.outbound.send(initialize(0)).await.unwrap();
    let mut server = within_named("accept", listener.accept()).await.unwrap();
    assert_eq!(next_request(&mut server).await.1.method, "initialize");
    server
        .outbound
        .send(ok(0, json!({"protocolVersion": version})))
        .await
        .unwrap();
    assert_eq!(next_response(&mut client).await.1.id, Some(Id::Number(0)));
    (client, server)
}

/// Also sends `notifications/initialized`, which opens the GET stream.
async fn ready(
    listener: &mut HttpListener,
    url: &str,
    opts: &ClientOptions,
) -> (Connection, Connection) {
    let (client, mut server) = initialized(listener, url, opts, "2025-11-25").await;
    client
        .outbound
        .send(notification("notifications/initialized", json!({})))
        .await
        .unwrap();
    assert_eq!(
        next_notification(&mut server).await.1.method,
        "notifications/initialized"
    );
    (client, server)
}

#[tokio::test]
async fn a_session_carries_requests_and_notifications_both_ways() {
    let (mut listener, url) = listen(server_opts()).await;
    let (mut client, mut server) = ready(&mut listener, &url, &client_opts(Some("s3cret"))).await;
    assert_eq!(
        (client.info.kind, client.info.ordered),
        (TransportKind::StreamableHttp, false)
    );
    assert_eq!(
        server.info.principal,
        Some(Principal::Named("alice".into()))
    );

    client
        .outbound
        .send(request(1, "tools/list", json!({})))
        .await
        .unwrap();
    let (_, req) = next_request(&mut server).await;
    assert_eq!(req.id, Id::Number(1));
    server
        .outbound
        .send(ok(1, json!({"tools": []})))
        .await
        .unwrap();
    let (post_stream, resp) = next_response(&mut client).await;
    assert_eq!(resp.result_value(), Ok(json!({"tools": []})));

    // Server-initiated: a request and a notification travel the GET stream.
    server
        .outbound
        .send(request(50, "roots/list", json!({})))
        .await
        .unwrap();
    let (get_stream, req) = next_request(&mut client).await;
    assert_eq!(req.id, Id::Number(50));
    assert_ne!(get_stream, post_stream);
    client
        .outbound
        .send(ok(50, json!({"roots": []})))
        .await
        .unwrap();
    assert_eq!(next_response(&mut server).await.1.id, Some(Id::Number(50)));
    server
        .outbound
        .send(notification("notifications/tools/list_changed", json!({})))
        .await
        .unwrap();
    let (stream, note) = next_notification(&mut client).await;
    assert_eq!(
        (stream, note.method.as_str()),
        (get_stream, "notifications/tools/list_changed")
    );
    client
        .outbound
        .send(notification("notifications/progress", json!({})))
        .await
        .unwrap();
    assert_eq!(
        next_notification(&mut server).await.1.method,
        "notifications/progress"
    );
}

#[tokio::test]
async fn sse_answers_carry_the_servers_messages_then_the_response() {
    let (mut listener, url) = listen(ServerOptions {
        http_response_mode: HttpResponseMode::Sse,
        ..server_opts()
    })
    .await;
    let (mut client, mut server) = initialized(
        &mut listener,
        &url,
        &client_opts(Some("s3cret")),
        "2025-11-25",
    )
    .await;
    // No GET stream yet (no initialized notification): the progress note rides the answer.
    client
        .outbound
        .send(request(1, "tools/call", json!({})))
        .await
        .unwrap();
    next_request(&mut server).await;
    server
        .outbound
        .send(notification(
            "notifications/progress",
            json!({"progress": 1}),
        ))
        .await
        .unwrap();
    server
        .outbound
        .send(ok(1, json!({"content": []})))
        .await
        .unwrap();
    let (s1, note) = next_notification(&mut client).await;
    let (s2, resp) = next_response(&mut client).await;
    assert_eq!(
        (note.method.as_str(), resp.id),
        ("notifications/progress", Some(Id::Number(1)))
    );
    assert_eq!(s1, s2, "one POST, one stream");
}

#[tokio::test]
async fn the_negotiated_version_is_sent_and_an_unsupported_one_refused() {
    let (mut listener, url) = listen(server_opts()).await;
    // A server that "negotiated" a version it does not speak refuses the client's next
    // request (400), which shows the header is sent; the requester gets an error response.
    let (mut client, _server) = initialized(
        &mut listener,
        &url,
        &client_opts(Some("s3cret")),
        "1999-01-01",
    )
    .await;
    client
        .outbound
        .send(request(1, "ping", json!({})))
        .await
        .unwrap();
    let (_, resp) = next_response(&mut client).await;
    assert_eq!(resp.id, Some(Id::Number(1)));
    assert_eq!(error_of(&resp), (ErrorCode::CONNECTION_CLOSED, Some(400)));
}

#[tokio::test]
async fn http_failures_become_error_responses() {
    let (_listener, url) = listen(server_opts()).await;
    let mut client = http::connect(&url, &client_opts(Some("wrong")))
        .await
        .unwrap();
    client.outbound.send(initialize(0)).await.unwrap();
    let (_, resp) = next_response(&mut client).await;
    assert_eq!(
        (resp.id.clone(), error_of(&resp)),
        (
            Some(Id::Number(0)),
            (ErrorCode::CONNECTION_CLOSED, Some(401))
        )
    );

    // Nothing listens on a port just released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut client = http::connect(
        &format!("http://127.0.0.1:{port}/mcp"),
        &ClientOptions::default(),
    )
    .await
    .unwrap();
    client.outbound.send(initialize(0)).await.unwrap();
    let (_, resp) = next_response(&mut client).await;
    assert_eq!(error_of(&resp), (ErrorCode::CONNECTION_CLOSED, None));
    // No status to give; the kind of the I/O error under the failure instead.
    assert_eq!(
        resp.outcome.unwrap_err().data,
        Some(json!({"ioError": "ConnectionRefused"}))
    );
}

#[tokio::test]
async fn with_no_limit_configured_both_ends_refuse_past_4_mib_and_take_exactly_4_mib() {
    // Neither end sets `max_message_size`: the defaults apply.
    let (mut listener, url) = listen(server_opts()).await;
    let (mut client, mut server) = ready(&mut listener, &url, &client_opts(Some("s3cret"))).await;
    // Client → server, POSTed (the 413 to a notification reaches no requester); two POSTs
    // keep no order between them.
    limit_is_inclusive_unordered(&client, &mut server, FOUR_MIB).await;
    // Server → client, on the GET stream, which goes on.
    limit_is_inclusive(&server, &mut client, FOUR_MIB).await;

    client
        .outbound
        .send(request(1, "ping", json!({})))
        .await
        .unwrap();
    next_request(&mut server).await;
    server.outbound.send(ok(1, json!({}))).await.unwrap();
    assert_eq!(
        next_response(&mut client).await.1.result_value(),
        Ok(json!({}))
    );
}

#[tokio::test]
async fn oversized_messages_are_refused_by_either_end_and_the_link_goes_on() {
    let (mut listener, url) = listen(ServerOptions {
        max_message_size: 1024,
        ..server_opts()
    })
    .await;
    let opts = ClientOptions {
        max_message_size: 1024,
        ..client_opts(Some("s3cret"))
    };
    let (mut client, mut server) = ready(&mut listener, &url, &opts).await;

    // Client → server: 413, the server hears TooLarge, the requester an error.
    client
        .outbound
        .send(request(1, "big", json!({"pad": filler(2000)})))
        .await
        .unwrap();
    assert!(matches!(
        next(&mut server).await,
        Inbound::TooLarge { limit: 1024, .. }
    ));
    let (_, resp) = next_response(&mut client).await;
    assert_eq!(error_of(&resp), (ErrorCode::CONNECTION_CLOSED, Some(413)));

    // Server → client, as a JSON answer: TooLarge here, and the request fails.
    client
        .outbound
        .send(request(2, "fetch", json!({})))
        .await
        .unwrap();
    next_request(&mut server).await;
    server
        .outbound
        .send(ok(2, json!({"pad": filler(2000)})))
        .await
        .unwrap();
    assert!(matches!(
        next(&mut client).await,
        Inbound::TooLarge { limit: 1024, .. }
    ));
    let (_, resp) = next_response(&mut client).await;
    assert_eq!(resp.id, Some(Id::Number(2)));
    assert_eq!(error_of(&resp).0, ErrorCode::CONNECTION_CLOSED);

    // Server → client, on the GET stream: TooLarge, and the stream goes on.
    server
        .outbound
        .send(notification("big", json!({"pad": filler(2000)})))
        .await
        .unwrap();
    assert!(matches!(
        next(&mut client).await,
        Inbound::TooLarge { limit: 1024, .. }
    ));
    server
        .outbound
        .send(notification("small", json!({})))
        .await
        .unwrap();
    assert_eq!(next_notification(&mut client).await.1.method, "small");

    client
        .outbound
        .send(request(3, "ping", json!({})))
        .await
        .unwrap();
    next_request(&mut server).await;
    server.outbound.send(ok(3, json!({}))).await.unwrap();
    assert_eq!(
        next_response(&mut client).await.1.result_value(),
        Ok(json!({}))
    );
}

#[tokio::test]
async fn dropping_the_client_deletes_the_session() {
    let (mut listener, url) = listen(server_opts()).await;
    let (client, mut server) = ready(&mut listener, &url, &client_opts(Some("s3cret"))).await;
    drop(client);
    expect_closed(&mut server).await;
}

#[tokio::test]
async fn a_session_the_server_ended_fails_the_next_request_and_closes_the_client() {
    let (mut listener, url) = listen(server_opts()).await;
    let (mut client, server) = initialized(
        &mut listener,
        &url,
        &client_opts(Some("s3cret")),
        "2025-11-25",
    )
    .await;
    drop(server);
    client
        .outbound
        .send(request(1, "ping", json!({})))
        .await
        .unwrap();
    let (_, resp) = next_response(&mut client).await;
    assert_eq!(error_of(&resp), (ErrorCode::CONNECTION_CLOSED, Some(404)));
    expect_closed(&mut client).await;
}

#[tokio::test]
async fn a_client_with_a_get_stream_notices_the_session_end_by_itself() {
    let (mut listener, url) = listen(server_opts()).await;
    let (mut client, server) = ready(&mut listener, &url, &client_opts(Some("s3cret"))).await;
    // Make sure the GET stream is open before the session ends.
    server
        .outbound
        .send(notification("hello", json!({})))
        .await
        .unwrap();
    assert_eq!(next_notification(&mut client).await.1.method, "hello");
    drop(server);
    expect_closed(&mut client).await;
}

#[tokio::test]
async fn the_delivery_hook_can_hold_the_get_stream_back() {
    let (mut listener, url) = listen(server_opts()).await;
    let gate = Arc::new(Semaphore::new(0));
    let hook = {
        let gate = gate.clone();
        DeliveryHook::new(move |d| {
            let (gate, hold) = (gate.clone(), d.origin == StreamOrigin::GetStream);
            async move {
                if hold {
                    gate.acquire().await.expect("the gate stays open").forget();
                }
            }
        })
    };
    let opts = ClientOptions {
        delivery_hook: Some(hook),
        ..client_opts(Some("s3cret"))
    };
    let (mut client, mut server) = ready(&mut listener, &url, &opts).await;

    // Written first, but held back on the GET stream…
    server
        .outbound
        .send(notification("early", json!({})))
        .await
        .unwrap();
    client
        .outbound
        .send(request(1, "ping", json!({})))
        .await
        .unwrap();
    next_request(&mut server).await;
    server.outbound.send(ok(1, json!({}))).await.unwrap();
    // …so the POST's answer, written later, is read first.
    assert_eq!(next_message(&mut client).await.1, ok(1, json!({})));
    gate.add_permits(1);
    assert_eq!(next_notification(&mut client).await.1.method, "early");
}

/// `ServerOptions::local_tasks`: the listener, its connections and its sessions' pumps run
/// on the binding `LocalSet`, and a session carries messages both ways as without it —
/// the GET stream's notifications included.
#[tokio::test]
async fn a_listener_with_local_tasks_serves_sessions_from_its_local_set() {
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            let opts = ServerOptions {
                local_tasks: true,
                ..server_opts()
            };
            let (mut listener, url) = listen(opts).await;
            let (mut client, mut server) =
                ready(&mut listener, &url, &client_opts(Some("s3cret"))).await;
            round_trip(&mut client, &mut server).await;
        })
        .await;
}

/// Issue #36 item 16: a `notifications/initialized` whose POST reached the server but
/// whose answer was lost (the connection cut on the way back) must still leave the client
/// with a GET stream. Before, the stream was opened only on that POST's success: the
/// server was ready and answered requests, but what it sent of its own accord (a push, a
/// list change) waited for a GET stream that never came. Seen in the simulator as an HTTP
/// agent that, after an arcade restart, never heard that its game ended.
#[tokio::test]
async fn a_lost_answer_to_initialized_still_opens_the_get_stream() {
    let (mut listener, url) = listen(server_opts()).await;
    let proxy = mcpl_testkit::proxy::Proxy::start(listener.local_addr())
        .await
        .unwrap();
    let via_proxy = url.replace(
        &listener.local_addr().to_string(),
        &proxy.addr().to_string(),
    );
    let (mut client, mut server) = initialized(
        &mut listener,
        &via_proxy,
        &client_opts(Some("s3cret")),
        "2025-11-25",
    )
    .await;
    // The server reads the notification; its 202 is held and then cut off.
    proxy.hold();
    client
        .outbound
        .send(notification("notifications/initialized", json!({})))
        .await
        .unwrap();
    assert_eq!(
        next_notification(&mut server).await.1.method,
        "notifications/initialized"
    );
    proxy.cut_all();
    within_named("the cut to reach every connection", async {
        while proxy.stats().mass_cuts < proxy.stats().accepted {
            tokio::task::yield_now().await;
        }
    })
    .await;
    proxy.release();
    // Something the server says of its own accord reaches the client.
    server
        .outbound
        .send(notification("hello", json!({})))
        .await
        .unwrap();
    assert_eq!(next_notification(&mut client).await.1.method, "hello");
}
