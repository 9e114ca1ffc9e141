//! The example server the vectors run against: a small arcade written on the SDK's author
//! API, as a games crate would write one.
//!
//! | toolset | declaration | tools |
//! |---|---|---|
//! | `lobby` | `default: "open"` | `lobby_who` |
//! | `nim` | `instances`, options `{pile, opponent}` | `take` (only on your turn; its `count` enum is the legal moves), `board`, `wait` (answered when the opponent moves) |
//! | `solo` | closed, no instances | `solo_hint` (shows `solo_answer`), `solo_answer` |
//! | `fragile` | `instances` | `boom` (its logic panics) |
//!
//! and, outside toolsets, `echo` (static) and `news` (dynamic, invisible). `take` declares
//! `mcpl/presence: "static"`, which its toolset overrides (vector 16). [`drill`] (no
//! instances, a required option) is kept out of [`arcade`], so the vectors that state the
//! arcade's whole tool list and manifest need not change; a test adds it to its server.
//!
//! Nim: a pile of stones; players take 1 to 3 in turn; whoever takes the last one wins.
//! Against the bot (no `opponent`), the bot answers at once, or from a timer with
//! `think: true` (its move then comes as a push); against another principal
//! (`opponent: "bob"`), bob is invited and joins by opening the suggested instance.

use mcpl_protocol::mcp::Tool;
use mcpl_server::{
    Audience, CallId, Event, InstanceContext, InstanceLogic, Joined, Opening, ParticipantId,
    Refusal, Reply, ServerBuilder, Started, ToolCall, Toolset,
};
use mcpl_transport::Principal;
use serde::Deserialize;
use serde_json::{Value, json};

/// The arcade's tools and toolsets on a builder; the caller sets the clock and knobs.
pub fn arcade(builder: ServerBuilder) -> ServerBuilder {
    builder
        .surface("Arcade", "Small games")
        .toolset(lobby())
        .toolset(nim())
        .toolset(solo())
        .toolset(fragile())
        .tool(
            Tool::new(
                "echo",
                "Says it back",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            ),
            |_, args: Value| async move {
                Ok(mcpl_protocol::mcp::CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            },
        )
        .tool(news_tool(), |_, _: Value| async {
            Ok(mcpl_protocol::mcp::CallToolResult::text("No news."))
        })
}

fn object() -> Value {
    json!({"type": "object", "properties": {}})
}

fn news_tool() -> Tool {
    let mut t = Tool::new("news", "Today's news", object());
    t.meta = Some(
        serde_json::from_value(json!({"mcpl/presence": "dynamic", "mcpl/visible": false})).unwrap(),
    );
    t
}

/// `take` as declared: a static presence its toolset overrides (vector 16).
pub fn take_tool() -> Tool {
    let mut t = Tool::new(
        "take",
        "Take 1 to 3 stones",
        json!({"type": "object", "properties": {"count": {"type": "integer", "minimum": 1, "maximum": 3}}, "required": ["count"]}),
    );
    t.meta = Some(serde_json::from_value(json!({"mcpl/presence": "static"})).unwrap());
    t
}

/// `take`'s schema with the legal moves for a pile: the instance's own definition.
pub fn legal(pile: u32) -> Value {
    let moves: Vec<u32> = (1..=pile.min(3)).collect();
    json!({"type": "object", "properties": {"count": {"enum": moves}}, "required": ["count"]})
}

fn lobby() -> Toolset {
    Toolset::new("lobby")
        .title("Lobby")
        .summary("Who is here")
        .open_by_default()
        .tool(Tool::new("lobby_who", "Who is in the lobby", object()))
        .on_open(|_, _| Ok(Started::new(Lobby)))
}

struct Lobby;

impl InstanceLogic for Lobby {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        Reply::text(format!("{} is here.", cx.name(call.caller())))
    }
}

fn solo() -> Toolset {
    Toolset::new("solo")
        .title("Solo")
        .summary("Hints for practice")
        .tool(Tool::new("solo_hint", "A hint", object()))
        .hidden_tool(Tool::new(
            "solo_answer",
            "The answer the hint leads to",
            object(),
        ))
        .on_open(|_, _| Ok(Started::new(Solo).title("Solo practice")))
}

struct Solo;

impl InstanceLogic for Solo {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        match call.tool() {
            "solo_hint" => {
                cx.show(call.caller(), "solo_answer");
                Reply::text("Leave your opponent a multiple of four.")
            }
            _ => Reply::text("Four."),
        }
    }
}

fn fragile() -> Toolset {
    Toolset::new("fragile")
        .title("Fragile")
        .instances()
        .tool(Tool::new("boom", "Breaks the toolset's logic", object()))
        .on_open(|_, _| Ok(Started::new(Fragile)))
}

struct Fragile;

impl InstanceLogic for Fragile {
    fn call(&mut self, _: ToolCall, _: &mut InstanceContext) -> Reply {
        panic!("the fragile logic broke");
    }
}

fn nim() -> Toolset {
    Toolset::new("nim")
        .title("Nim")
        .summary("Take stones; whoever takes the last one wins")
        .instances()
        .options(json!({"type": "object", "properties": {
            "pile": {"type": "integer", "minimum": 1, "maximum": 30},
            "opponent": {"type": "string"},
            "think": {"type": "boolean"}}, "additionalProperties": false}))
        .hidden_tool(take_tool())
        .tool(Tool::new("board", "Shows the pile", object()))
        .tool(Tool::new("wait", "Waits for the opponent's move", object()))
        .on_open(open_nim)
}

#[derive(Deserialize)]
struct NimOptions {
    #[serde(default = "ten")]
    pile: u32,
    opponent: Option<String>,
    /// The bot answers from a timer (a push) instead of in the mover's result.
    #[serde(default)]
    think: bool,
}

fn ten() -> u32 {
    10
}

#[derive(Deserialize)]
struct Take {
    count: u32,
}

struct Nim {
    pile: u32,
    /// `players[turn]` moves next.
    players: [ParticipantId; 2],
    turn: usize,
    bot: bool,
    think: bool,
    /// Calls of `wait`, answered when the other player moves.
    waiting: Vec<(ParticipantId, CallId)>,
}

fn open_nim(opening: Opening, cx: &mut InstanceContext) -> Result<Started, Refusal> {
    let opts: NimOptions = opening.options_as()?;
    let me = opening.opener();
    let (other, bot, title) = match &opts.opponent {
        Some(name) if *name == opening.principal().name() => {
            return Err(Refusal::new("you cannot play against yourself"));
        }
        Some(name) => {
            let reason = format!("{} challenges you to Nim (pile {})", cx.name(me), opts.pile);
            let suggested = json!({"pile": opts.pile});
            let other = cx.invite_with(Principal::Named(name.clone()), reason, Some(suggested));
            (other, false, format!("Nim vs {name}"))
        }
        None => (cx.add_bot("bot"), true, "Nim vs bot".to_owned()),
    };
    cx.show(me, "take");
    cx.set_schema(Audience::All, "take", legal(opts.pile));
    let game = Nim {
        pile: opts.pile,
        players: [me, other],
        turn: 0,
        bot,
        think: opts.think,
        waiting: Vec::new(),
    };
    Ok(Started::new(game)
        .title(title)
        .text(format!("Pile: {}. Your move.", opts.pile)))
}

impl Nim {
    fn answer_waiting(&mut self, who: ParticipantId, text: &str, cx: &mut InstanceContext) {
        let (theirs, rest): (Vec<_>, Vec<_>) = self.waiting.drain(..).partition(|(p, _)| *p == who);
        self.waiting = rest;
        for (_, call) in theirs {
            cx.answer(call, Ok(mcpl_protocol::mcp::CallToolResult::text(text)));
        }
    }

    fn take(&mut self, call: &ToolCall, cx: &mut InstanceContext) -> Reply {
        let me = call.caller();
        if self.players[self.turn] != me {
            return Reply::error("It is not your move.");
        }
        let count = match call.args::<Take>() {
            Ok(t) if (1..=self.pile.min(3)).contains(&t.count) => t.count,
            Ok(t) => {
                return Reply::error(format!("You cannot take {} from {}.", t.count, self.pile));
            }
            Err(e) => return e.into(),
        };
        self.pile -= count;
        let name = cx.name(me);
        if self.pile == 0 {
            cx.end(format!("{name} wins by taking the last stone"));
            return Reply::text("You took the last stone and won.");
        }
        let them = self.players[1 - self.turn];
        if self.bot && self.think {
            cx.hide(me, "take");
            cx.wake_after(std::time::Duration::ZERO, 0);
            return Reply::text(format!(
                "You took {count}; {} left. The bot is thinking.",
                self.pile
            ));
        }
        if self.bot {
            let t = if self.pile.is_multiple_of(4) {
                1
            } else {
                self.pile % 4
            };
            self.pile -= t;
            if self.pile == 0 {
                cx.end("bot wins by taking the last stone");
                return Reply::text(format!("You took {count}; bot took {t} and won."));
            }
            cx.set_schema(me, "take", legal(self.pile));
            return Reply::text(format!(
                "You took {count}; bot took {t}; {} left. Your move.",
                self.pile
            ));
        }
        self.turn = 1 - self.turn;
        cx.hide(me, "take");
        cx.show(them, "take");
        cx.set_schema(Audience::All, "take", legal(self.pile));
        let news = format!("{name} took {count}; {} left. Your move.", self.pile);
        cx.event(them, Event::text(news.clone()).turn());
        self.answer_waiting(them, &news, cx);
        Reply::text(format!(
            "You took {count}; {} left. {}'s move.",
            self.pile,
            cx.name(them)
        ))
    }
}

impl Nim {
    /// The bot's move: the one that leaves a multiple of four when there is one.
    fn bot_move(&mut self) -> u32 {
        let t = if self.pile.is_multiple_of(4) {
            1
        } else {
            self.pile % 4
        };
        self.pile -= t;
        t
    }
}

impl InstanceLogic for Nim {
    /// The thinking bot moves.
    fn wake(&mut self, _: u64, cx: &mut InstanceContext) {
        let me = self.players[0];
        let t = self.bot_move();
        if self.pile == 0 {
            cx.end("bot wins by taking the last stone");
            return;
        }
        cx.show(me, "take");
        cx.set_schema(me, "take", legal(self.pile));
        let news = format!("bot took {t}; {} left. Your move.", self.pile);
        cx.event(me, Event::text(news.clone()).turn());
        self.answer_waiting(me, &news, cx);
    }

    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        match call.tool() {
            "take" => self.take(&call, cx),
            "board" => Reply::text(format!(
                "Pile: {}. {} to move.",
                self.pile,
                cx.name(self.players[self.turn])
            )),
            "wait" if self.players[self.turn] == call.caller() => Reply::text("It is your move."),
            "wait" => {
                self.waiting.push((call.caller(), call.id()));
                Reply::Later
            }
            other => Reply::error(format!("no tool {other}")),
        }
    }

    fn join(&mut self, who: ParticipantId, cx: &mut InstanceContext) -> Result<Joined, Refusal> {
        if who != self.players[1] {
            return Err(Refusal::new("this game has its players"));
        }
        cx.set_schema(who, "take", legal(self.pile));
        let opener = cx.name(self.players[0]);
        Ok(Joined::new()
            .title(format!("Nim vs {opener}"))
            .text(format!("Pile: {}. {opener} moves first.", self.pile)))
    }

    fn close(
        &mut self,
        who: ParticipantId,
        cx: &mut InstanceContext,
    ) -> Vec<mcpl_protocol::mcp::ContentBlock> {
        let other = if self.players[0] == who {
            self.players[1]
        } else {
            self.players[0]
        };
        cx.end(format!(
            "{} resigned; {} wins",
            cx.name(who),
            cx.name(other)
        ));
        vec![mcpl_protocol::mcp::ContentBlock::text("You resigned.")]
    }
}

/// `drill`: a toolset without instances whose options require a `level`, so it is not
/// implicitly open for a host without `toolHints` (§8). Not part of [`arcade`]: tests add
/// it to their own server.
pub fn drill() -> Toolset {
    Toolset::new("drill")
        .title("Drill")
        .summary("Practice at a level")
        .options(json!({"type": "object",
            "properties": {"level": {"type": "integer", "minimum": 1, "maximum": 5}},
            "required": ["level"]}))
        .tool(Tool::new("drill_task", "Today's task", object()))
        .on_open(|opening, _| {
            let opts: DrillOptions = opening.options_as()?;
            Ok(Started::new(Drill(opts.level)).title(format!("Drill, level {}", opts.level)))
        })
}

#[derive(Deserialize)]
struct DrillOptions {
    level: u32,
}

struct Drill(u32);

impl InstanceLogic for Drill {
    fn call(&mut self, _: ToolCall, _: &mut InstanceContext) -> Reply {
        Reply::text(format!("Level {} task: take one stone.", self.0))
    }
}
