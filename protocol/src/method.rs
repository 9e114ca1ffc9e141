//! One marker type per method, tying its wire name to its params and result types (the
//! way `lsp-types` does), so a request is built and its result decoded by type:
//! `Request::new::<ListTools>(id, &params)` and `response.result_as::<<ListTools as RequestMethod>::Result>()`.
//!
//! The markers are declared in one `requests!` and one `notifications!` block, which also
//! give [`REQUEST_METHODS`] and [`NOTIFICATION_METHODS`]: every name, so a test (or a
//! dispatcher) can tell when a marker is added without a case for it.

use crate::{client_features, mcp, mcpl, server_features, toolsets};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A method: its wire name.
pub trait Method {
    /// The wire name.
    const NAME: &'static str;
}

/// A request method: params and result types.
pub trait RequestMethod: Method {
    /// The params.
    type Params: Serialize + DeserializeOwned + Send + 'static;
    /// The result.
    type Result: Serialize + DeserializeOwned + Send + 'static;
}

/// A notification method: its params type.
pub trait NotificationMethod: Method {
    /// The params.
    type Params: Serialize + DeserializeOwned + Send + 'static;
}

/// Declares request markers and [`REQUEST_METHODS`], so the list of names cannot miss a
/// marker.
macro_rules! requests {
    ($($(#[$doc:meta])* $ty:ident, $name:literal, $params:ty, $result:ty;)*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy)]
            pub enum $ty {}
            impl Method for $ty {
                const NAME: &'static str = $name;
            }
            impl RequestMethod for $ty {
                type Params = $params;
                type Result = $result;
            }
        )*
        /// The wire name of every request marker in this module, in declaration order.
        pub const REQUEST_METHODS: &[&str] = &[$($name),*];
    };
}

/// Declares notification markers and [`NOTIFICATION_METHODS`], so the list of names cannot
/// miss a marker.
macro_rules! notifications {
    ($($(#[$doc:meta])* $ty:ident, $name:literal, $params:ty;)*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy)]
            pub enum $ty {}
            impl Method for $ty {
                const NAME: &'static str = $name;
            }
            impl NotificationMethod for $ty {
                type Params = $params;
            }
        )*
        /// The wire name of every notification marker in this module, in declaration order.
        pub const NOTIFICATION_METHODS: &[&str] = &[$($name),*];
    };
}

requests! {
    /// `initialize` (Host → Server).
    Initialize, "initialize", mcp::InitializeParams, mcp::InitializeResult;
    /// `ping` (either way).
    Ping, "ping", mcp::Empty, mcp::Empty;
    /// `tools/list` (Host → Server).
    ListTools, "tools/list", mcp::ListToolsParams, mcp::ListToolsResult;
    /// `tools/call` (Host → Server).
    CallTool, "tools/call", mcp::CallToolParams, mcp::CallToolResult;
    /// `featureSets/update` as a request: the grant (SPEC §5.3).
    FeatureSetsUpdate, "featureSets/update", mcpl::FeatureSetsUpdateParams, mcpl::FeatureSetsUpdateResult;
    /// `push/event` (Server → Host, SPEC §9).
    PushEvent, "push/event", mcpl::PushEventParams, mcpl::PushEventResult;
    /// `mcpl/manifest` (Host → Server): the current manifest (SPEC §17).
    GetManifest, "mcpl/manifest", mcp::Empty, mcpl::McplManifest;
    /// `toolsets/open` (Host → Server, §4.2).
    ToolsetsOpen, "toolsets/open", toolsets::ToolsetsOpenParams, toolsets::ToolsetsOpenResult;
    /// `toolsets/close` (Host → Server, §4.2).
    ToolsetsClose, "toolsets/close", toolsets::ToolsetsCloseParams, toolsets::ToolsetsCloseResult;
    /// `toolsets/list` (Host → Server, §4.3).
    ToolsetsList, "toolsets/list", toolsets::ToolsetsListParams, toolsets::ToolsetsListResult;
    /// `logging/setLevel` (Client → Server, MCP "Utilities / Logging"): answered with `{}`.
    SetLevel, "logging/setLevel", mcp::SetLevelParams, mcp::Empty;
    /// `sampling/createMessage` (Server → Client, MCP "Client Features / Sampling"): a
    /// model completion, asked while serving one of the client's requests.
    CreateMessage, "sampling/createMessage", client_features::CreateMessageParams, client_features::CreateMessageResult;
    /// `elicitation/create` (Server → Client, MCP "Client Features / Elicitation"): input
    /// from the user, asked while serving one of the client's requests.
    Elicit, "elicitation/create", client_features::ElicitParams, client_features::ElicitResult;
    /// `roots/list` (Server → Client, MCP "Client Features / Roots"): the client's roots.
    ListRoots, "roots/list", mcp::Empty, client_features::ListRootsResult;
    /// `resources/list` (Client → Server, MCP "Resources").
    ListResources, "resources/list", server_features::ListParams, server_features::ListResourcesResult;
    /// `resources/templates/list` (Client → Server, MCP "Resources").
    ListResourceTemplates, "resources/templates/list", server_features::ListParams, server_features::ListResourceTemplatesResult;
    /// `resources/read` (Client → Server, MCP "Resources").
    ReadResource, "resources/read", server_features::ReadResourceParams, server_features::ReadResourceResult;
    /// `prompts/list` (Client → Server, MCP "Prompts").
    ListPrompts, "prompts/list", server_features::ListParams, server_features::ListPromptsResult;
    /// `prompts/get` (Client → Server, MCP "Prompts").
    GetPrompt, "prompts/get", server_features::GetPromptParams, server_features::GetPromptResult;
    /// `completion/complete` (Client → Server, MCP "Completion").
    Complete, "completion/complete", server_features::CompleteParams, server_features::CompleteResult;
}

notifications! {
    /// `notifications/initialized` (Host → Server).
    Initialized, "notifications/initialized", mcp::Empty;
    /// `notifications/cancelled` (either way).
    Cancelled, "notifications/cancelled", mcp::CancelledParams;
    /// `notifications/tools/list_changed` (Server → Host).
    ToolListChanged, "notifications/tools/list_changed", mcp::Empty;
    /// `mcpl/manifestChanged` (Server → Host, SPEC §17.3).
    ManifestChanged, "mcpl/manifestChanged", mcpl::ManifestChangedParams;
    /// `tools/hints` (Server → Host, §5.2): standalone hint changes.
    ToolHints, "tools/hints", crate::hints::ToolHintsParams;
    /// `notifications/progress` (either way, MCP "Utilities / Progress"): progress of the
    /// request that gave the token.
    Progress, "notifications/progress", mcp::ProgressParams;
    /// `notifications/message` (Server → Client, MCP "Utilities / Logging"): a log message.
    LoggingMessage, "notifications/message", mcp::LoggingMessageParams;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hints::HintChanges;
    use crate::jsonrpc::{Id, Message, Notification, Request, Response};
    use serde_json::json;

    #[test]
    fn typed_requests_round_trip_through_the_wire() {
        let params = toolsets::ToolsetsOpenParams {
            toolset: "go".into(),
            instance: Some("g1".into()),
            options: Some(json!({"size": 9})),
            meta: None,
        };
        let m = Message::Request(Request::new::<ToolsetsOpen>(Id::Number(4), &params));
        let back = Message::decode(m.encode().as_bytes()).unwrap();
        let Message::Request(r) = back else {
            panic!("not a request")
        };
        assert_eq!(r.method, "toolsets/open");
        assert_eq!(
            r.params_as::<toolsets::ToolsetsOpenParams>().unwrap(),
            params
        );
    }

    #[test]
    fn typed_results_decode_by_method() {
        let res = mcp::ListToolsResult {
            tools: vec![],
            next_cursor: None,
            meta: None,
        };
        let m = Message::Response(Response::ok_typed(Id::from("x"), &res));
        let Message::Response(r) = Message::decode(m.encode().as_bytes()).unwrap() else {
            panic!()
        };
        assert_eq!(
            r.result_as::<<ListTools as RequestMethod>::Result>()
                .unwrap(),
            res
        );
    }

    #[test]
    fn tools_hints_notification_params_are_the_changes() {
        let n = Notification::new::<ToolHints>(
            &HintChanges {
                rev: 2,
                ..Default::default()
            }
            .into(),
        );
        assert_eq!(
            Message::Notification(n).encode(),
            r#"{"jsonrpc":"2.0","method":"tools/hints","params":{"rev":2}}"#
        );
    }

    #[test]
    fn method_names_are_unique() {
        let mut all: Vec<&str> = REQUEST_METHODS
            .iter()
            .chain(NOTIFICATION_METHODS)
            .copied()
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "a method name is declared twice");
        assert_eq!(REQUEST_METHODS[0], Initialize::NAME);
        assert_eq!(NOTIFICATION_METHODS.last(), Some(&LoggingMessage::NAME));
    }

    #[test]
    fn empty_params_are_left_out() {
        let n = Notification::new::<Initialized>(&mcp::Empty::default());
        assert_eq!(
            Message::Notification(n).encode(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
    }
}
