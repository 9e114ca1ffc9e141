//! The games' declarations: their toolsets (§4.1) and their tools, as the manifest and
//! `tools/list` carry them (the lobby's are in `lobby.rs`, beside their handlers).
//!
//! Tool names are global on a server (MCP has one flat list), so each game prefixes its
//! own: `go_play`, `tictactoe_play`. Every options schema has **no required member**, so a
//! host without `toolHints` can open a game through `toolset_open {toolset: "go"}` alone
//! (§8: the bot, 9×9, komi 7.5, Black), and no game tool declares an `instance` argument
//! (§8 gives that name to the compat argument).

use super::go_rules::GoRules;
use super::rules::{Rules, ToolNames};
use super::shared::Shared;
use super::table::{PlainTool, Table, TableToolset};
use super::tictactoe_rules::TicTacToeRules;
use mcpl_protocol::mcp::ToolAnnotations;
use mcpl_server::Toolset;
use std::sync::Arc;

/// A game's toolset: instanced, its turn tools hidden until a turn (§3), `resign` and
/// `board` always visible.
fn table_toolset<R: Rules>(title: &str, summary: &str, play: &str, shared: Arc<Shared>) -> Toolset {
    let ToolNames {
        toolset,
        play: play_name,
        pass,
        resign,
        board,
    } = R::TOOLS;
    let mut ts = Toolset::new(toolset)
        .title(title)
        .summary(summary)
        .instances()
        .route(play_name, play, Table::<R>::play_tool)
        .hidden();
    if let Some(pass) = pass {
        ts = ts
            .route(
                pass,
                "Pass your turn. Two passes in a row end the game, which is then scored by area (stones plus surrounded points, komi for White).",
                Table::<R>::plain_tool(PlainTool::Pass),
            )
            .hidden();
    }
    ts.route(
        resign,
        "Resign: your opponent wins. Before an invited opponent has joined, this withdraws the challenge.",
        Table::<R>::plain_tool(PlainTool::Resign),
    )
    .route(
        board,
        "Show the position as text (coordinates, the last move in parentheses), whose move it is, and your colour. After the game ends it shows the final position and the result, for as long as the game's ended record is kept.",
        Table::<R>::plain_tool(PlainTool::Board),
    )
    // Read-only (`readOnlyHint`): the SDK answers it for an ended instance with the view
    // the table left as it ended.
    .annotated(ToolAnnotations {
        read_only_hint: Some(true),
        ..Default::default()
    })
    .on_open_with({
        let tables = TableToolset::<R>::new(shared.clone());
        move |options: R::Options, opening, cx| tables.open(options, opening, cx)
    })
    // Issue #15: each table is kept across a restart of a server with a store.
    .durable_with(move |format, state| Table::<R>::restore(shared.clone(), format, state))
}

/// The `go` toolset.
pub fn go_toolset(shared: Arc<Shared>) -> Toolset {
    table_toolset::<GoRules>(
        "Go",
        "Go on 9x9, 13x13 or 19x19 against the bot or another player; area scoring, positional superko",
        "Place a stone on your turn: `move` is a point, column letter then row number (e.g. D4; there is no column I). A point that is taken or not allowed (suicide, a repeated position) is refused with the reason; go_board shows the position and whose move it is.",
        shared,
    )
}

/// The `tictactoe` toolset.
pub fn tictactoe_toolset(shared: Arc<Shared>) -> Toolset {
    table_toolset::<TicTacToeRules>(
        "Tic-tac-toe",
        "Tic-tac-toe against a perfect bot or another player",
        "Mark a cell on your turn: `move` is a column a-c and a row 1-3 (a1 bottom left, c3 top right). tictactoe_board shows the position and, on your turn, the free cells; a taken cell is refused with the reason.",
        shared,
    )
}

#[cfg(test)]
mod tests {
    use crate::arcade::{GoOptions, TicTacToeOptions};
    use mcpl_server::input_schema;
    use serde_json::json;

    /// The options schemas are derived from the types the opens receive, and keep what
    /// the module docs promise: no required member (§8), nothing unknown.
    #[test]
    fn the_options_schemas_are_the_option_types_and_require_nothing() {
        let go = input_schema::<GoOptions>();
        let tictactoe = input_schema::<TicTacToeOptions>();
        for schema in [&go, &tictactoe] {
            assert_eq!(schema["type"], "object", "{schema}");
            assert!(schema.get("required").is_none(), "{schema}");
            assert_eq!(schema["additionalProperties"], false, "{schema}");
            assert_eq!(
                schema["properties"]["opponent"]["maxLength"], 64,
                "{schema}"
            );
            assert!(schema.get("$defs").is_none(), "inline: {schema}");
        }
        assert_eq!(go["properties"]["size"]["enum"], json!([9, 13, 19]), "{go}");
        assert_eq!(go["properties"]["komi"]["maximum"], 100, "{go}");
        assert_eq!(
            go["properties"]["color"]["enum"],
            json!(["black", "white"]),
            "{go}"
        );
        assert_eq!(
            tictactoe["properties"]["color"]["enum"],
            json!(["x", "o"]),
            "{tictactoe}"
        );
    }
}
