//! The lobby's tools: `games` (what can be played, who is online, challenges both ways),
//! `challenge` and `decline`. They are plain handler tools inside the default-open `lobby`
//! toolset (§4.1); the two that act do so through `loopback.rs`, as the caller.

use super::loopback::{Loopback, LoopbackError};
use super::shared::{Challenge, Shared};
use actix::ArbiterHandle;
use mcpl_protocol::mcp::CallToolResult;
use mcpl_server::{Server, ServerBuilder, ToolContext, ToolError, ToolResult};
use mcpl_transport::Principal;
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

/// What a table's refusal of a join starts with when the join was a decline: the lobby
/// reads it to tell a decline from any other refusal.
pub const DECLINED: &str = "You declined the challenge";

/// What the lobby's handlers share: the arcade's state, and how to reach the server as a
/// principal.
pub struct Lobby {
    shared: Arc<Shared>,
    /// Set once the server is built (its handlers are registered before it exists).
    server: OnceLock<Server>,
    arbiter: ArbiterHandle,
}

impl Lobby {
    /// A lobby for the arcade whose sessions run on `arbiter`.
    pub fn new(shared: Arc<Shared>, arbiter: ArbiterHandle) -> Arc<Self> {
        Arc::new(Lobby {
            shared,
            server: OnceLock::new(),
            arbiter,
        })
    }

    /// The server, once built.
    pub fn set_server(&self, server: Server) {
        let _ = self.server.set(server);
    }

    /// Registers the lobby's tools (their declarations are in `tools.rs`).
    pub fn register(self: &Arc<Self>, builder: ServerBuilder) -> ServerBuilder {
        let (a, b, c) = (self.clone(), self.clone(), self.clone());
        builder
            .tool(
                super::tools::games_tool(),
                move |ctx: ToolContext, _: Value| {
                    let lobby = a.clone();
                    async move { Ok(lobby.games(ctx.principal())) }
                },
            )
            .tool(
                super::tools::challenge_tool(),
                move |ctx: ToolContext, args: ChallengeArgs| {
                    let lobby = b.clone();
                    async move { lobby.challenge(ctx.principal().clone(), args).await }
                },
            )
            .tool(
                super::tools::decline_tool(),
                move |ctx: ToolContext, args: DeclineArgs| {
                    let lobby = c.clone();
                    async move { lobby.decline(ctx.principal().clone(), args).await }
                },
            )
    }

    async fn connect(&self, principal: Principal) -> Result<Loopback, ToolError> {
        let server = self
            .server
            .get()
            .ok_or_else(|| ToolError::internal("the arcade is not running yet"))?;
        Loopback::connect(server, &self.arbiter, principal)
            .await
            .map_err(ToolError::internal)
    }

    /// `games`: a text for the model and the same as structured content.
    fn games(&self, me: &Principal) -> CallToolResult {
        let my_name = me.name();
        let online: Vec<String> = self
            .shared
            .online()
            .into_iter()
            .filter(|n| *n != my_name)
            .collect();
        let mine = self.shared.challenges_for(me);
        let sent = self.shared.challenges_by(&my_name);
        let mut text = String::from(
            "Games (open one with its options, or challenge a player with `challenge`):\n\
             - go: Go against the bot or a player. Options: opponent (\"bot\" or a player's name), size (9, 13, 19), komi, color (black, white).\n\
             - tictactoe: Tic-tac-toe against a perfect bot or a player. Options: opponent, color (x, o).\n",
        );
        let _ = writeln!(
            text,
            "Players online: {}.",
            if online.is_empty() {
                "nobody else".to_owned()
            } else {
                online.join(", ")
            }
        );
        if matches!(me, Principal::Anonymous(_)) {
            text.push_str("You are connected anonymously: you can play the bot, but nobody can challenge you.\n");
        }
        for c in &mine {
            let name = c.instance.as_deref().unwrap_or(c.toolset);
            let _ = writeln!(
                text,
                "Challenge for you: {} challenges you to {}. Accept by opening {}:{name}, or call decline {{\"instance\": \"{name}\"}}.",
                c.challenger, c.summary, c.toolset
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
        let entry = |c: &Challenge, role: &str, who: String| json!({role: who, "game": c.toolset, "instance": c.instance, "summary": c.summary});
        let challenges: Vec<Value> = mine
            .iter()
            .map(|c| entry(c, "from", c.challenger.clone()))
            .collect();
        let sent: Vec<Value> = sent
            .iter()
            .map(|c| entry(c, "to", c.invitee.name()))
            .collect();
        CallToolResult {
            structured_content: Some(json!({
                "games": ["go", "tictactoe"],
                "online": online,
                "challenges": challenges,
                "sent": sent,
            })),
            ..CallToolResult::text(text.trim_end())
        }
    }

    /// `challenge`: opens the game for the caller with the opponent invited (the table
    /// does the inviting, §4.6).
    async fn challenge(&self, me: Principal, args: ChallengeArgs) -> ToolResult {
        if matches!(me, Principal::Anonymous(_)) {
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
        let mut link = self.connect(me).await?;
        let opened = link
            .open(&args.game, None, Some(options))
            .await
            .map_err(|e| match e {
                LoopbackError::Refused(e) => {
                    ToolError::failed(format!("The challenge was not sent: {}", e.message))
                }
                other => ToolError::internal(other),
            })?;
        let instance = opened["instance"].as_str().unwrap_or_default();
        let mut text = content_text(&opened);
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

    /// `decline`: the invitee opens the invitation only for its table to refuse it and
    /// end the game; the challenger is told.
    async fn decline(&self, me: Principal, args: DeclineArgs) -> ToolResult {
        let pending = self.shared.challenges_for(&me);
        let challenge = find_challenge(&pending, &args.instance, args.game.as_deref())
            .ok_or_else(|| {
                let names: Vec<String> = pending
                    .iter()
                    .map(|c| format!("{}:{}", c.toolset, c.instance.as_deref().unwrap_or("?")))
                    .collect();
                ToolError::failed(if names.is_empty() {
                    "No challenge is waiting for you.".to_owned()
                } else {
                    format!(
                        "No challenge of yours is named {:?}; waiting: {}.",
                        args.instance,
                        names.join(", ")
                    )
                })
            })?
            .clone();
        self.shared.start_decline(&challenge, &args.instance);
        let res = async {
            let mut link = self.connect(me.clone()).await?;
            Ok::<_, ToolError>(
                link.open(challenge.toolset, Some(&args.instance), None)
                    .await,
            )
        }
        .await;
        self.shared
            .end_decline(&me, challenge.toolset, &args.instance);
        match res? {
            Err(LoopbackError::Refused(e)) if e.message.starts_with(DECLINED) => {
                Ok(CallToolResult::text(format!(
                    "You declined {}'s challenge to {}; they have been told.",
                    challenge.challenger, challenge.summary
                )))
            }
            Err(LoopbackError::Refused(e)) => Err(ToolError::failed(format!(
                "The challenge could not be declined: {}",
                e.message
            ))),
            Err(other) => Err(ToolError::internal(other)),
            // Another connection of yours accepted it meanwhile: it is a game now.
            Ok(_) => Err(ToolError::failed(format!(
                "{}:{} is already open for you (accepted on another connection); resign to leave it.",
                challenge.toolset, args.instance
            ))),
        }
    }
}

/// The challenge `instance` names: its own name, or the name with a `-N` suffix the SDK
/// gives an invitation whose name the invitee had taken (only when that is unambiguous).
fn find_challenge<'a>(
    pending: &'a [Challenge],
    instance: &str,
    game: Option<&str>,
) -> Option<&'a Challenge> {
    let of_game = |c: &&Challenge| game.is_none_or(|g| g == c.toolset);
    let exact = pending
        .iter()
        .filter(of_game)
        .find(|c| c.instance.as_deref() == Some(instance));
    exact.or_else(|| {
        let mut suffixed = pending.iter().filter(of_game).filter(|c| {
            c.instance.as_deref().is_some_and(|name| {
                instance
                    .strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
        });
        match (suffixed.next(), suffixed.next()) {
            (Some(c), None) => Some(c),
            _ => None,
        }
    })
}

/// The text blocks of an open result, joined.
fn content_text(opened: &Value) -> String {
    let mut text = String::new();
    if let Some(title) = opened["title"].as_str() {
        let _ = writeln!(text, "{title}");
    }
    for block in opened["content"].as_array().into_iter().flatten() {
        if let Some(t) = block["text"].as_str() {
            text.push_str(t);
            text.push('\n');
        }
    }
    text.trim_end().to_owned()
}

/// `challenge`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChallengeArgs {
    opponent: String,
    game: String,
    #[serde(default)]
    size: Option<u32>,
    #[serde(default)]
    color: Option<String>,
}

/// `decline`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclineArgs {
    instance: String,
    #[serde(default)]
    game: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn challenge(id: u64, toolset: &'static str, instance: &str) -> Challenge {
        Challenge {
            id,
            toolset,
            challenger: "alice".into(),
            invitee: Principal::Named("bob".into()),
            instance: Some(instance.into()),
            summary: String::new(),
        }
    }

    #[test]
    fn a_decline_finds_its_challenge_by_name_or_suffixed_name() {
        let pending = [
            challenge(1, "go", "go-1"),
            challenge(2, "tictactoe", "g"),
            challenge(3, "go", "g"),
        ];
        assert_eq!(find_challenge(&pending, "go-1", None).unwrap().id, 1);
        assert_eq!(find_challenge(&pending, "go-1-2", None).unwrap().id, 1);
        assert_eq!(find_challenge(&pending, "g", Some("go")).unwrap().id, 3);
        assert_eq!(find_challenge(&pending, "g", None).unwrap().id, 2);
        // Two challenges could be "g-2": ambiguous without the game.
        assert_eq!(find_challenge(&pending, "g-2", None), None);
        assert_eq!(find_challenge(&pending, "g-2", Some("go")).unwrap().id, 3);
        assert_eq!(find_challenge(&pending, "go-1-x", None), None);
        assert_eq!(find_challenge(&pending, "nope", None), None);
    }

    #[test]
    fn open_results_read_as_text() {
        let opened = json!({"title": "Go 9x9 vs bob", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]});
        assert_eq!(content_text(&opened), "Go 9x9 vs bob\na\nb");
    }
}
