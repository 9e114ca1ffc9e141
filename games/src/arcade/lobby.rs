//! The lobby: the default-open `lobby` toolset (§4.1, vector 25) and its tools, `games`
//! (what can be played, who is online, challenges both ways), `challenge` and `decline`.
//! Each tool is declared once, with its name, description, argument type (its
//! `inputSchema` derived) and handler ([`TypedTools::typed_tool`](mcpl_server::TypedTools::typed_tool)). The toolset has no logic:
//! its tools have handlers of their own that act on their caller's toolsets through the
//! SDK, as the caller's host would: `challenge` opens the game for the caller
//! ([`ToolContext::open_toolset`]: the open's changes ride in the challenge's own result,
//! §5.3), `decline` turns an invitation down ([`ToolContext::decline_invitation`]: the
//! table hears it and tells the challenger), and `games` lists the caller's invitations
//! as the SDK keeps them ([`ToolContext::invitations`]).

use super::shared::{OnlinePlayers, Shared, challenge_summary};
use mcpl_protocol::mcp::{CallToolResult, ContentBlock};
use mcpl_server::schemars::JsonSchema;
use mcpl_server::{
    DeclineError, Invitation, Opened, ToolContext, ToolError, ToolResult, Toolset, TypedTools,
};
use mcpl_transport::Principal;
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::Arc;

/// The lobby toolset.
pub const LOBBY: &str = "lobby";
/// The lobby's tool listing games, players online and challenges.
pub const GAMES: &str = "games";
/// The lobby's tool challenging another player.
pub const CHALLENGE: &str = "challenge";
/// The lobby's tool declining a challenge.
pub const DECLINE: &str = "decline";

/// The most players online one `games` answer names **[project]**: with thousands online,
/// the answer stays a few KiB; the rest are counted and paged (`online_after`).
const ONLINE_PAGE: usize = 50;

/// The toolsets whose invitations are challenges.
const GAME_TOOLSETS: [&str; 2] = ["go", "tictactoe"];

/// The `lobby` toolset, open by default (§4.1, vector 25), its tools answered from the
/// arcade's `shared` state.
pub fn lobby_toolset(shared: Arc<Shared>) -> Toolset {
    let lobby = Arc::new(Lobby { shared });
    Toolset::new(LOBBY)
        .title("Lobby")
        .summary("What can be played, who is online, challenges to and from you")
        .open_by_default()
        .typed_tool(
            GAMES,
            "List the games you can play and their options, the players online now, the challenges waiting for you, and yours waiting for an answer.",
            on(&lobby, Lobby::games),
        )
        .typed_tool(
            CHALLENGE,
            "Challenge another player: opens the game for you and invites them; they accept by opening it (their connections are told) or decline.",
            on(&lobby, Lobby::challenge),
        )
        .typed_tool(
            DECLINE,
            "Decline a challenge: the instance name it was offered under (see games). The challenger is told.",
            |ctx: ToolContext, args: DeclineArgs| async move { decline(&ctx, args).await },
        )
}

/// A tool's handler: `method` of the lobby, called with the call's context and arguments.
fn on<A, Fut>(
    lobby: &Arc<Lobby>,
    method: fn(Arc<Lobby>, ToolContext, A) -> Fut,
) -> impl Fn(ToolContext, A) -> Fut + Send + Sync + 'static
where
    A: 'static,
    Fut: std::future::Future<Output = ToolResult> + Send + 'static,
{
    let lobby = lobby.clone();
    move |ctx, args| method(lobby.clone(), ctx, args)
}

/// What the lobby's handlers share: the arcade's state.
struct Lobby {
    shared: Arc<Shared>,
}

impl Lobby {
    /// `games`: a text for the model and the same as structured content.
    async fn games(self: Arc<Self>, ctx: ToolContext, args: GamesArgs) -> ToolResult {
        let ctx = &ctx;
        let me = ctx.principal();
        let my_name = me.name();
        let online = self
            .shared
            .online_page(args.online_after.as_deref(), ONLINE_PAGE, &my_name);
        let mine = challenges_for(ctx).await?;
        let sent = self.shared.challenges_by(&my_name);
        let mut text = String::from(
            "Games (open one with its options, or challenge a player with `challenge`):\n\
             - go: Go against the bot or a player. Options: opponent (\"bot\" or a player's name), size (9, 13, 19), komi, color (black, white).\n\
             - tictactoe: Tic-tac-toe against a perfect bot or a player. Options: opponent, color (x, o).\n",
        );
        let _ = writeln!(
            text,
            "{}",
            online_line(&online, args.online_after.as_deref())
        );
        if matches!(me, Principal::Anonymous(_)) {
            text.push_str("You are connected anonymously: you can play the bot, but nobody can challenge you.\n");
        }
        for inv in &mine {
            let name = instance_of(inv);
            let _ = writeln!(
                text,
                "Challenge for you: {} challenges you to {}. Accept by opening {}:{name}, or call decline {{\"instance\": \"{name}\"}}.",
                inv.from.name(),
                summary_of(inv),
                inv.toolset
            );
        }
        for c in &sent {
            let _ = writeln!(
                text,
                "Your challenge to {} ({}:{}) waits for an answer.",
                c.invitee.name(),
                c.toolset,
                c.instance.as_deref().unwrap_or("?")
            );
        }
        let challenges: Vec<Value> = mine
            .iter()
            .map(|inv| {
                json!({"from": inv.from.name(), "game": inv.toolset, "instance": inv.instance,
                       "summary": summary_of(inv)})
            })
            .collect();
        let sent: Vec<Value> = sent
            .iter()
            .map(|c| {
                json!({"to": c.invitee.name(), "game": c.toolset, "instance": c.instance,
                       "summary": c.summary})
            })
            .collect();
        Ok(CallToolResult {
            structured_content: Some(json!({
                "games": GAME_TOOLSETS,
                "online": online.names,
                "online_total": online.total,
                "online_next": online.next,
                "challenges": challenges,
                "sent": sent,
            })),
            ..CallToolResult::text(text.trim_end())
        })
    }

    /// `challenge`: opens the game for the caller with the opponent invited (the table
    /// does the inviting, §4.6). The open's changes ride in this call's result.
    async fn challenge(self: Arc<Self>, ctx: ToolContext, args: ChallengeArgs) -> ToolResult {
        let ctx = &ctx;
        if matches!(ctx.principal(), Principal::Anonymous(_)) {
            return Err(ToolError::failed(
                "Anonymous players cannot challenge anyone (they share nothing); open a game against the bot instead.",
            ));
        }
        let mut options = json!({"opponent": args.opponent});
        match args.game.as_str() {
            "go" => {
                if let Some(size) = args.size {
                    options["size"] = json!(size);
                }
            }
            "tictactoe" if args.size.is_some() => {
                return Err(ToolError::failed("tictactoe has no size: leave it out."));
            }
            "tictactoe" => {}
            other => {
                return Err(ToolError::failed(format!(
                    "There is no game {other:?}: choose go or tictactoe."
                )));
            }
        }
        if let Some(color) = args.color {
            options["color"] = json!(color);
        }
        let opened = ctx
            .open_toolset(&args.game, None, Some(options))
            .await
            .map_err(|e| match ToolError::from(e) {
                ToolError::Failed { message } => {
                    ToolError::failed(format!("The challenge was not sent: {message}"))
                }
                other => other,
            })?;
        let instance = opened.instance.clone().unwrap_or_default();
        let mut text = opened_text(&opened);
        let _ = write!(
            text,
            "\n\nThe game is open as {}:{instance} on every connection of yours; {} has been invited to it.",
            args.game, args.opponent
        );
        Ok(CallToolResult {
            structured_content: Some(json!({"toolset": args.game, "instance": instance})),
            ..CallToolResult::text(text)
        })
    }
}

/// The caller's invitations to the arcade's games (§4.6: each under the caller's own name
/// for the instance).
async fn challenges_for(ctx: &ToolContext) -> Result<Vec<Invitation>, ToolError> {
    let all = ctx.invitations().await.map_err(ToolError::internal)?;
    Ok(all
        .into_iter()
        .filter(|i| GAME_TOOLSETS.contains(&i.toolset.as_str()))
        .collect())
}

/// `decline`: the SDK takes the invitation away and the table hears it (it tells the
/// challenger and ends the game); the invitee never had the game, so it gets no record.
async fn decline(ctx: &ToolContext, args: DeclineArgs) -> ToolResult {
    let pending = challenges_for(ctx).await?;
    let challenge = find_challenge(
        &pending,
        |i| (i.toolset.as_str(), instance_of(i)),
        &args.instance,
        args.game.as_deref(),
    )?;
    let toolset = challenge.toolset.clone();
    match ctx
        .decline_invitation(&toolset, challenge.instance.as_deref())
        .await
    {
        Ok(declined) => Ok(CallToolResult::text(format!(
            "You declined {}'s challenge to {}; they have been told.",
            declined.from.name(),
            summary_of(&declined)
        ))),
        // Another connection of yours accepted it meanwhile: it is a game now.
        Err(DeclineError::NotInvited { open: true, .. }) => Err(ToolError::failed(format!(
            "{toolset}:{} is already open for you (accepted on another connection); resign to leave it.",
            args.instance
        ))),
        // Withdrawn, or declined on another connection, meanwhile.
        Err(DeclineError::NotInvited { open: false, .. }) => Err(ToolError::failed(format!(
            "The challenge at {toolset}:{} is no longer waiting (it was withdrawn or answered).",
            args.instance
        ))),
        Err(e) => Err(ToolError::internal(e)),
    }
}

/// The invitation `instance` (and `game`, when given) names, of `pending` whose toolset and
/// name `key` gives; a refusal the model can act on when none or several do.
fn find_challenge<'a, T>(
    pending: &'a [T],
    key: impl Fn(&T) -> (&str, &str),
    instance: &str,
    game: Option<&str>,
) -> Result<&'a T, ToolError> {
    let mut named = pending.iter().filter(|i| {
        let (toolset, name) = key(i);
        name == instance && game.is_none_or(|g| g == toolset)
    });
    match (named.next(), named.next()) {
        (Some(one), None) => Ok(one),
        (Some(_), Some(_)) => Err(ToolError::failed(format!(
            "Several challenges are named {instance:?}: say which game (go or tictactoe)."
        ))),
        (None, _) if pending.is_empty() => {
            Err(ToolError::failed("No challenge is waiting for you."))
        }
        (None, _) => {
            let names: Vec<String> = pending
                .iter()
                .map(|i| {
                    let (toolset, name) = key(i);
                    format!("{toolset}:{name}")
                })
                .collect();
            Err(ToolError::failed(format!(
                "No challenge of yours is named {instance:?}; waiting: {}.",
                names.join(", ")
            )))
        }
    }
}

/// The name an invitation is offered under.
fn instance_of(inv: &Invitation) -> &str {
    inv.instance.as_deref().unwrap_or(&inv.toolset)
}

/// The game in words, from the invitee's side ("Go 9x9, you play White").
fn summary_of(inv: &Invitation) -> &str {
    challenge_summary(&inv.reason, &inv.from.name())
}

/// The open's title and text blocks, joined.
fn opened_text(opened: &Opened) -> String {
    let mut text = String::new();
    if let Some(title) = &opened.title {
        let _ = writeln!(text, "{title}");
    }
    for block in &opened.content {
        if let ContentBlock::Text { text: t, .. } = block {
            text.push_str(t);
            text.push('\n');
        }
    }
    text.trim_end().to_owned()
}

/// The lobby's line on who is online: every name when they all fit, else the page, how
/// many in all, and how to ask for the next page.
fn online_line(online: &OnlinePlayers, after: Option<&str>) -> String {
    if online.names.is_empty() && after.is_none() {
        return "Players online: nobody else.".to_owned();
    }
    if after.is_none() && online.next.is_none() {
        return format!("Players online: {}.", online.names.join(", "));
    }
    let mut line = format!("Players online: {} in all", online.total);
    match after {
        Some(after) => {
            let _ = write!(line, "; after {after:?}");
        }
        None => line.push_str("; the first"),
    }
    if online.names.is_empty() {
        line.push_str(": none.");
    } else {
        let _ = write!(line, ": {}.", online.names.join(", "));
    }
    if let Some(next) = &online.next {
        let _ = write!(
            line,
            " More: call games with {{\"online_after\": {next:?}}}."
        );
    }
    line
}

// The tools' arguments, each tool's `inputSchema` derived from its type. Plain comments,
// not doc comments, on the types: a doc comment would be the schema's `description`, read
// by the model.

// `games`'s arguments: where the page of players online starts, and nothing else.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "mcpl_server::schemars")]
#[serde(deny_unknown_fields)]
struct GamesArgs {
    /// List the players online whose names come after this one (the previous answer's online_next)
    #[serde(default)]
    #[schemars(length(max = 64))]
    online_after: Option<String>,
}

// `challenge`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "mcpl_server::schemars")]
#[serde(deny_unknown_fields)]
struct ChallengeArgs {
    /// The player to challenge (see games)
    #[schemars(length(min = 1, max = 64))]
    opponent: String,
    #[schemars(extend("enum" = ["go", "tictactoe"]))]
    game: String,
    /// Go only: board size (default 9)
    #[serde(default)]
    #[schemars(extend("enum" = [9, 13, 19]))]
    size: Option<u32>,
    /// Your side (default: the first mover, black or x)
    #[serde(default)]
    #[schemars(extend("enum" = ["black", "white", "x", "o"]))]
    color: Option<String>,
}

// `decline`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "mcpl_server::schemars")]
#[serde(deny_unknown_fields)]
struct DeclineArgs {
    #[schemars(length(min = 1, max = 64))]
    instance: String,
    /// Only needed when two games offer the same name
    #[serde(default)]
    #[schemars(extend("enum" = ["go", "tictactoe"]))]
    game: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(r: Result<&(&str, &str), ToolError>) -> String {
        match r {
            Err(ToolError::Failed { message }) => message,
            other => panic!("not a refusal: {other:?}"),
        }
    }

    #[test]
    fn a_decline_finds_its_challenge_by_name_and_game() {
        let pending = [("go", "go-1"), ("tictactoe", "g"), ("go", "g")];
        fn key<'a>(p: &'a (&str, &str)) -> (&'a str, &'a str) {
            (p.0, p.1)
        }
        let find = |instance, game| find_challenge(&pending, key, instance, game);
        assert_eq!(find("go-1", None).unwrap(), &("go", "go-1"));
        assert_eq!(find("g", Some("go")).unwrap(), &("go", "g"));
        assert_eq!(find("g", Some("tictactoe")).unwrap(), &("tictactoe", "g"));
        // Two games offer "g": the model is asked which.
        assert!(refusal(find("g", None)).contains("say which game"));
        assert!(
            refusal(find("go-1", Some("tictactoe")))
                .contains("waiting: go:go-1, tictactoe:g, go:g")
        );
        let none: [(&str, &str); 0] = [];
        assert_eq!(
            refusal(find_challenge(&none, key, "g", None)),
            "No challenge is waiting for you."
        );
    }
}
