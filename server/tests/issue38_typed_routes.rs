//! Issue #38 item 4: typed author routes. A toolset's tool is declared once — name,
//! description, argument type, handler — and the SDK dispatches by name, decodes the
//! arguments the one way (`ToolCall::args`'s tool error, the same a plain typed tool
//! gives), and states the schemas derived from the types: the tools' `inputSchema` and
//! the options the open handler receives. A toolset's tool answered outside any instance (a
//! lobby's) is declared the same way, once (`Toolset::typed_tool`).

use crate::support;

use mcpl_protocol::jsonrpc::ErrorCode;
use mcpl_server::TypedTools;
use mcpl_server::schemars::JsonSchema;
use mcpl_server::{
    BuildError, Call, CallToolResult, InstanceContext, InstanceLogic, NoArguments, Reply, Server,
    Started, ToolContext, Toolset, input_schema,
};
use mcpl_testkit::msg::text_of;
use serde::Deserialize;
use serde_json::{Value, json};
use support::{TestClient, call, code, hinted, open, request};

/// A reply's result.
fn result(reply: &Value) -> Value {
    reply["result"].clone()
}

/// The text of a result.
fn text(result: &Value) -> String {
    text_of(result)
}

/// One counter per instance.
struct Counter(u64);
impl InstanceLogic for Counter {}

/// Logic the counter's routes were not written for.
struct Other;
impl InstanceLogic for Other {}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "mcpl_server::schemars")]
struct By {
    /// How much to add.
    #[schemars(range(min = 1))]
    by: u64,
}

/// The counter's options.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "mcpl_server::schemars")]
#[serde(deny_unknown_fields)]
struct Start {
    /// Where the count starts (default 0).
    from: Option<u64>,
}

fn count(c: &mut Counter, args: By, _: Call, _: &mut InstanceContext) -> Reply {
    c.0 += args.by;
    Reply::text(format!("Count: {}", c.0))
}

fn counter() -> Toolset {
    Toolset::new("counter")
        .instances()
        .route("count", "Adds `by`", count)
        .route(
            "peek",
            "Shows the count",
            |c: &mut Counter, _: NoArguments, _, _| Reply::text(format!("Count: {}", c.0)),
        )
        .on_open_with(|start: Start, _, _| {
            let from = start.from.unwrap_or(0);
            Ok(Started::new(Counter(from)).text(format!("Count: {from}")))
        })
}

/// The counter, and a plain typed tool taking the same arguments.
fn server(toolset: Toolset) -> Server {
    Server::builder("routes", "0.1.0")
        .toolset(toolset)
        .typed_tool("plain_count", "Adds `by`", |_, args: By| async move {
            Ok(CallToolResult::text(format!("Count: {}", args.by)))
        })
        .build()
        .expect("a valid server")
}

/// A `toolHints` host with the counter open as `c` (counting from 10).
async fn opened(server: &Server) -> TestClient {
    let (mut client, _) = hinted(server, "alice").await;
    let reply = client
        .exchange(open(1, "counter", Some("c"), Some(json!({"from": 10}))))
        .await;
    assert_eq!(text(&result(&reply)), "Count: 10", "{reply}");
    client
}

async fn counted(client: &mut TestClient, id: i64, tool: &str, args: Value) -> Value {
    client
        .exchange(request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": args, "_meta": {"mcpl/instance": "c"}}),
        ))
        .await
}

#[actix::test]
async fn issue38_04_a_call_goes_to_its_route_with_its_arguments_decoded() {
    let server = server(counter());
    let mut client = opened(&server).await;
    let reply = counted(&mut client, 2, "count", json!({"by": 5})).await;
    assert_eq!(text(&result(&reply)), "Count: 15", "{reply}");
    let reply = counted(&mut client, 3, "peek", json!({})).await;
    assert_eq!(text(&result(&reply)), "Count: 15", "{reply}");
}

#[actix::test]
async fn issue38_04_a_wrong_argument_type_is_the_decode_error_on_the_wire() {
    let server = server(counter());
    let mut client = opened(&server).await;
    let bad = json!({"by": "five"});
    let routed = counted(&mut client, 2, "count", bad.clone()).await;
    let routed = result(&routed);
    assert_eq!(routed["isError"], true, "{routed}");
    // The one decode error: word for word what a plain typed tool answers, but the tool.
    let plain = client.exchange(call(3, "plain_count", bad)).await;
    let plain = result(&plain);
    assert_eq!(plain["isError"], true, "{plain}");
    assert_eq!(
        text(&routed),
        text(&plain).replace("plain_count", "count"),
        "routed {routed}, plain {plain}"
    );
    assert!(text(&routed).contains("invalid type"), "{routed}");
    // The handler did not run: the count is where it was.
    let reply = counted(&mut client, 4, "peek", json!({})).await;
    assert_eq!(text(&result(&reply)), "Count: 10", "{reply}");
}

#[actix::test]
async fn issue38_04_an_unknown_tool_name_cannot_be_routed() {
    let server = server(counter());
    let mut client = opened(&server).await;
    // A name no route declares is no tool: the call is refused before any logic runs.
    let reply = counted(&mut client, 2, "counts", json!({"by": 1})).await;
    assert_eq!(code(&reply), ErrorCode::INVALID_PARAMS.0, "{reply}");
    // Routes are the declarations: a second route of a name is a second tool of it.
    let twice = Server::builder("routes", "0.1.0")
        .toolset(counter().route("count", "Again", count))
        .build();
    assert!(
        matches!(twice, Err(BuildError::DuplicateTool(ref t)) if t == "count"),
        "{twice:?}"
    );
    // A route needs logic to run on, and all of a toolset's routes the same logic.
    let bare = Server::builder("routes", "0.1.0")
        .toolset(Toolset::new("bare").route("count", "Adds", count))
        .build();
    assert!(
        matches!(bare, Err(BuildError::RoutesWithoutLogic(ref t)) if t == "bare"),
        "{bare:?}"
    );
    let mixed = Server::builder("routes", "0.1.0")
        .toolset(
            counter().route("other", "Other", |_: &mut Other, _: NoArguments, _, _| {
                Reply::text("other")
            }),
        )
        .build();
    assert!(
        matches!(mixed, Err(BuildError::RoutesOnManyLogics(ref t)) if t == "counter"),
        "{mixed:?}"
    );
}

#[actix::test]
async fn issue38_04_routes_on_other_logic_than_the_open_returns_fail_as_internal() {
    let wrong = Toolset::new("counter")
        .instances()
        .route("count", "Adds `by`", count)
        .on_open(|_, _| Ok(Started::new(Other).text("Count: 10")));
    let server = server(wrong);
    let mut client = opened(&server).await;
    let reply = counted(&mut client, 2, "count", json!({"by": 1})).await;
    assert_eq!(code(&reply), ErrorCode::INTERNAL_ERROR.0, "{reply}");
}

#[actix::test]
async fn issue38_04_schemas_on_the_wire_equal_the_derived_ones() {
    let server = server(counter());
    let (mut client, _) = hinted(&server, "alice").await;
    let listed = client.exchange(request(1, "tools/list", json!({}))).await;
    let tools = listed["result"]["tools"].as_array().expect("tools");
    let schema = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {listed}"))["inputSchema"]
            .clone()
    };
    assert_eq!(schema("count"), input_schema::<By>());
    assert_eq!(schema("peek"), input_schema::<NoArguments>());
    assert_eq!(schema("count")["properties"]["by"]["minimum"], 1);
    let manifest = client
        .exchange(request(2, "mcpl/manifest", json!({})))
        .await;
    let options = &manifest["result"]["toolsets"]["counter"]["options"];
    assert_eq!(*options, input_schema::<Start>(), "{manifest}");
    assert_eq!(options["additionalProperties"], false, "{options}");
}

#[actix::test]
async fn issue38_04_options_reach_the_open_as_its_type_and_are_checked_by_its_schema() {
    let server = server(counter());
    let (mut client, _) = hinted(&server, "alice").await;
    let reply = client.exchange(open(1, "counter", Some("a"), None)).await;
    assert_eq!(text(&result(&reply)), "Count: 0", "{reply}");
    // The derived schema refuses what `Start` does not read (§4.2: -32602).
    let reply = client
        .exchange(open(2, "counter", Some("b"), Some(json!({"from": -1}))))
        .await;
    assert_eq!(code(&reply), ErrorCode::INVALID_PARAMS.0, "{reply}");
    let reply = client
        .exchange(open(3, "counter", Some("b"), Some(json!({"to": 1}))))
        .await;
    assert_eq!(code(&reply), ErrorCode::INVALID_PARAMS.0, "{reply}");
}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "mcpl_server::schemars")]
struct Greet {
    /// Whom to greet.
    whom: String,
}

/// A toolset without logic, open by default, whose tool has a handler of its own (a
/// lobby's shape).
fn desk() -> Toolset {
    Toolset::new("desk").open_by_default().typed_tool(
        "greet",
        "Greets `whom`",
        |ctx: ToolContext, a: Greet| async move {
            Ok(CallToolResult::text(format!(
                "{} greets {}",
                ctx.principal().name(),
                a.whom
            )))
        },
    )
}

#[actix::test]
async fn issue38_04_a_toolsets_handler_tool_is_declared_once_and_answered_by_its_handler() {
    let server = server(desk());
    let (mut client, _) = hinted(&server, "alice").await;
    let listed = client.exchange(request(1, "tools/list", json!({}))).await;
    let greet = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "greet")
        .unwrap_or_else(|| panic!("no greet in {listed}"))
        .clone();
    // Declared once: its schema is its argument type's, and it is the toolset's tool.
    assert_eq!(greet["inputSchema"], input_schema::<Greet>(), "{greet}");
    assert_eq!(greet["description"], "Greets `whom`", "{greet}");
    assert_eq!(greet["_meta"]["mcpl/toolset"], "desk", "{greet}");
    // Its handler answers, with the caller's context and the arguments decoded.
    let reply = client
        .exchange(call(2, "greet", json!({"whom": "bob"})))
        .await;
    assert_eq!(text(&result(&reply)), "alice greets bob", "{reply}");
    // Arguments that do not decode are the one decode error, and the handler does not run.
    let handled = result(&client.exchange(call(3, "greet", json!({"whom": 5}))).await);
    assert_eq!(handled["isError"], true, "{handled}");
    let said = text(&handled);
    assert!(
        said.starts_with("invalid arguments for tool \"greet\": ") && said.contains("invalid type"),
        "{handled}"
    );
    // One name, one tool: a second handler of a name is refused, as is a non-object type.
    let twice = Server::builder("routes", "0.1.0")
        .toolset(desk())
        .typed_tool("greet", "Again", |_, _: Greet| async {
            Ok(CallToolResult::text("again"))
        })
        .build();
    assert!(
        matches!(twice, Err(BuildError::DuplicateTool(ref t)) if t == "greet"),
        "{twice:?}"
    );
    let scalar = Server::builder("routes", "0.1.0")
        .toolset(desk().typed_tool("say", "Says", |_, s: String| async move {
            Ok(CallToolResult::text(s))
        }))
        .build();
    assert!(
        matches!(scalar, Err(BuildError::ArgumentsNotAnObject(ref t)) if t == "say"),
        "{scalar:?}"
    );
}
