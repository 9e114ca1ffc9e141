//! What the arcade offers besides tools (issue #39 item 7), with the SDK's resource, prompt
//! and completion handlers:
//!
//! - **Each game a player is in is a resource**, `arcade://games/{id}` (the number the
//!   spectator page shows): listed for that player only, read as two parts — the game in
//!   words (players, whose turn, the last move, captures, the result and a Go game's count)
//!   and its board as SVG. Another principal reading it gets "not found", as for a game
//!   that does not exist: games are private to their players (issue #43).
//! - **How to play** each game as a prompt, `how_to_play {game}`, with the game's rules,
//!   options and tools in words.
//! - **Completion** of `how_to_play`'s `game` (`go`, `tictactoe`) and of the template's
//!   `id` (the asking player's own games).
//!
//! The games come from the arcade's [`Gallery`], which every table publishes to after each
//! step; the arcade keeps one even when no spectator page is served.

use super::spectate::{Gallery, GameState, GameView};
use mcpl_protocol::server_features::{
    CompleteParams, CompletionRef, GetPromptResult, Prompt, PromptArgument, PromptMessage,
    Resource, ResourceContents, ResourceInfo, ResourceTemplate,
};
use mcpl_server::ServerBuilder;
use mcpl_server::features::{FeatureError, RequestContext};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// The template every game's resource URI follows.
pub const GAME_TEMPLATE: &str = "arcade://games/{id}";
/// The prompt telling how to play a game.
pub const HOW_TO_PLAY: &str = "how_to_play";
/// The games `how_to_play` knows, as its `game` argument names them.
pub const GAMES: [&str; 2] = ["go", "tictactoe"];

/// A game's resource URI.
pub fn game_uri(id: u64) -> String {
    format!("arcade://games/{id}")
}

/// Registers the arcade's resources, prompt and completion on `builder`, reading games
/// from `gallery`.
pub(crate) fn register(builder: ServerBuilder, gallery: Arc<Gallery>) -> ServerBuilder {
    let listed = gallery.clone();
    let read = gallery.clone();
    builder
        .resource_list(move |cx: RequestContext| {
            let games = players_games(&listed, &cx);
            async move { games.iter().map(|g| listing(g)).collect() }
        })
        .resource_template(
            ResourceTemplate::new(
                GAME_TEMPLATE,
                ResourceInfo::new(
                    "game",
                    "image/svg+xml",
                    "A game you play in: in words, and its board as SVG",
                )
                .titled("Arcade game"),
            ),
            move |cx: RequestContext, uri: String, vars: BTreeMap<String, String>| {
                let game = vars
                    .get("id")
                    .and_then(|id| id.parse::<u64>().ok())
                    .and_then(|id| players_games(&read, &cx).into_iter().find(|g| g.id == id));
                async move {
                    let Some(game) = game else {
                        return Err(FeatureError::ResourceNotFound(uri));
                    };
                    Ok(vec![
                        ResourceContents::text(uri.clone(), "text/plain", in_words(&game)),
                        ResourceContents::text(uri, "image/svg+xml", game.svg.clone()),
                    ])
                }
            },
        )
        .prompt(
            Prompt::new(
                HOW_TO_PLAY,
                "How to play one of the arcade's games with its tools",
                vec![PromptArgument::required("game", "go or tictactoe")],
            )
            .titled("How to play"),
            |_: RequestContext, args: BTreeMap<String, String>| async move {
                let game = args["game"].as_str();
                let Some(text) = rules(game) else {
                    return Err(FeatureError::InvalidParams(format!(
                        "no game {game:?}: the arcade has go and tictactoe"
                    )));
                };
                Ok(GetPromptResult {
                    description: Some(format!("How to play {game} in the arcade")),
                    messages: vec![PromptMessage::user(text)],
                })
            },
        )
        .completion(move |cx: RequestContext, p: CompleteParams| {
            let values: Vec<String> = match (&p.reference, p.argument.name.as_str()) {
                (CompletionRef::Prompt { name }, "game") if name == HOW_TO_PLAY => {
                    GAMES.iter().map(|g| (*g).to_owned()).collect()
                }
                (CompletionRef::Resource { uri }, "id") if uri == GAME_TEMPLATE => {
                    players_games(&gallery, &cx)
                        .iter()
                        .map(|g| g.id.to_string())
                        .collect()
                }
                _ => Vec::new(),
            };
            let typed = p.argument.value;
            async move {
                Ok(values
                    .into_iter()
                    .filter(|v| v.starts_with(&typed))
                    .collect())
            }
        })
}

/// The games `cx`'s principal plays in (a side's name is the player's).
fn players_games(gallery: &Gallery, cx: &RequestContext) -> Vec<Arc<GameView>> {
    let me = cx.principal().name();
    gallery
        .games()
        .into_iter()
        .filter(|g| g.players.iter().any(|p| !p.bot && p.name == me))
        .collect()
}

/// A game as `resources/list` shows it.
fn listing(game: &GameView) -> Resource {
    let [first, second] = &game.players;
    Resource::new(
        game_uri(game.id),
        ResourceInfo::new(
            format!("game {}", game.id),
            "image/svg+xml",
            state_line(game),
        )
        .titled(format!(
            "{} #{}: {} ({}) vs {} ({})",
            game.title, game.id, first.name, first.side, second.name, second.side
        )),
    )
}

/// Where a game is, in one line.
fn state_line(game: &GameView) -> String {
    match &game.state {
        GameState::Waiting { invited } => {
            format!("Waiting for {} to accept", game.players[*invited % 2].name)
        }
        GameState::Playing { to_move, .. } => {
            let p = &game.players[*to_move % 2];
            format!("{} ({}) to move", p.name, p.side)
        }
        GameState::Over { result } => format!("Over: {result}"),
    }
}

/// A game in words: the first part of its resource.
fn in_words(game: &GameView) -> String {
    let [first, second] = &game.players;
    let mut text = format!(
        "{} #{}: {} ({}) vs {} ({})\n{}\nMoves played: {}",
        game.title,
        game.id,
        first.name,
        first.side,
        second.name,
        second.side,
        state_line(game),
        game.moves
    );
    if let Some(last) = &game.last_move {
        let _ = write!(text, "; last: {last}");
    }
    if let Some([a, b]) = game.captures {
        let _ = write!(text, "\nCaptures: {} {a}, {} {b}", first.side, second.side);
    }
    if let Some(score) = &game.score {
        let side = |i: usize| {
            let s = score.sides[i];
            format!(
                "{} {} ({} stones, {} territory, {} komi)",
                game.players[i].side, s.total, s.stones, s.territory, s.komi
            )
        };
        let _ = write!(text, "\nScore: {}; {}", side(0), side(1));
    }
    text
}

/// How to play `game`, for the prompt.
fn rules(game: &str) -> Option<&'static str> {
    Some(match game {
        "go" => {
            "You are playing Go in the arcade. Open the go toolset (options: opponent — a \
player's name or \"bot\", the default; size 9, 13 or 19; komi; color black or white, Black \
moves first). On your turn call go_play with a point like D4 (columns A-T without I, rows \
from 1 at the bottom), go_pass to pass, or go_resign to give up; go_board shows the \
position. Stones with no empty point next to them are captured. The game ends after two \
passes in a row and is counted by area: your stones plus the empty points only you \
surround, plus komi for White. The higher total wins."
        }
        "tictactoe" => {
            "You are playing tic-tac-toe in the arcade. Open the tictactoe toolset (options: \
opponent — a player's name or \"bot\", the default; color x or o, X moves first). On your turn \
call tictactoe_play with a cell like b2 (columns a-c, rows 1-3); tictactoe_board shows the \
grid. Three of your marks in a row, column or diagonal win; a full grid with no line is a \
draw."
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arcade::spectate::PlayerView;

    fn game(state: GameState) -> GameView {
        let player = |name: &str, side: &str, bot| PlayerView {
            name: name.into(),
            side: side.into(),
            bot,
        };
        GameView {
            id: 3,
            game: "go".into(),
            title: "Go 9x9".into(),
            players: [
                player("alice", "Black", false),
                player("bot", "White", true),
            ],
            state,
            moves: 12,
            last_move: Some("White D4".into()),
            captures: Some([0, 1]),
            score: None,
            svg: "<svg/>".into(),
        }
    }

    #[test]
    fn issue39_07_a_game_in_words_says_who_plays_and_where_it_is() {
        let playing = game(GameState::Playing {
            to_move: 0,
            thinking: false,
        });
        assert_eq!(
            in_words(&playing),
            "Go 9x9 #3: alice (Black) vs bot (White)\nalice (Black) to move\n\
             Moves played: 12; last: White D4\nCaptures: Black 0, White 1"
        );
        let listed = listing(&playing);
        assert_eq!(listed.uri, "arcade://games/3");
        assert_eq!(
            listed.info.title.as_deref(),
            Some("Go 9x9 #3: alice (Black) vs bot (White)")
        );
        let over = game(GameState::Over {
            result: "White (bot) wins by 7.5".into(),
        });
        assert!(in_words(&over).contains("Over: White (bot) wins by 7.5"));
    }

    #[test]
    fn issue39_07_every_game_has_its_rules() {
        for g in GAMES {
            assert!(rules(g).is_some_and(|t| t.contains("Open the")), "{g}");
        }
        assert_eq!(rules("chess"), None);
    }
}
