//! A table: one game between two players — a principal and the bot, or two principals
//! sharing the instance (§4.6) — run by any [`Rules`]. It is the instance logic of the
//! `go` and `tictactoe` toolsets.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`Table`], its seats, and the SDK's entry points (its tools' routes, joins, declines, closes, wakes) |
//! | `open.rs` | [`TableToolset`]: the options, the opponent (the bot or an invitation), the first move |
//! | `turns.rs` | moves, the bot's answers, resigning, the end |
//! | `durable.rs` | the table as kept across a restart of the arcade (issue #15) |
//! | `thinking.rs` | the bot's search as the instance's blocking work, which wakes the table |
//! | `spectate.rs` | the game as spectators see it, published after every step |
//!
//! **Who sees what** (§5.3). `play` (and `pass`) are visible only to the player whose turn
//! it is, with the instance's own definition: `move` an enum of the legal moves, and a
//! description that says so (§5.1). Hosts without `toolHints` never see it: they are
//! shown the declared definition, whose description speaks of no enum.
//! `board` and `resign` are always visible. A move is answered in the mover's result; the
//! opponent gets a push ("alice (Black) played D4") whose hints make `play` visible to
//! it, tagged `surface:turn`; the mover's other connections get a push saying what the
//! move was. Against the bot, the mover's call is answered with both moves: at once for
//! tic-tac-toe, after the search for Go: the call is deferred meanwhile, `play` and `pass`
//! are hidden (it is the bot's turn), and those changes are held for the call's answer
//! (§5.3), which carries them with the bot's move and the new turn. The end reaches
//! both players with the result as the ended record's reason ("White (bot) wins by 7.5");
//! a player not connected finds the record in its next `toolsets/list` (§4.3).

mod durable;
mod open;
mod spectate;
mod thinking;
mod turns;

pub use open::TableToolset;
pub use thinking::WAKE_BOT;

use super::rules::{Rules, Side};
use super::shared::Shared;
use mcpl_protocol::hints::ToolDefinition;
use mcpl_protocol::mcp::ContentBlock;
use mcpl_server::schemars::JsonSchema;
use mcpl_server::{
    Call, InstanceContext, InstanceLogic, Joined, NoArguments, ParticipantId, Refusal, Reply,
};
use serde::Deserialize;
use std::sync::Arc;
use thinking::Thinking;

/// A seat: who sits there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seat {
    id: ParticipantId,
    bot: bool,
}

/// One game. See the module docs.
pub struct Table<R: Rules> {
    rules: R,
    shared: Arc<Shared>,
    /// By [`Side::index`].
    seats: [Seat; 2],
    /// False while an invited opponent has not joined.
    started: bool,
    resigned: Option<Side>,
    thinking: Option<Thinking<R::Move>>,
    /// The invitation waiting for an answer, as the lobby lists it.
    challenge: Option<u64>,
    /// Seeds the bot's moves: the arcade's seed (or a random one) and the game's number.
    seed: u64,
    moves: u64,
    /// The game's number in this arcade: spectators tell games apart by it.
    number: u64,
}

/// `play`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "mcpl_server::schemars")]
pub(crate) struct PlayArgs {
    /// The move.
    #[serde(rename = "move")]
    mv: String,
}

impl<R: Rules> Table<R> {
    fn side_of(&self, who: ParticipantId) -> Option<Side> {
        [Side::First, Side::Second]
            .into_iter()
            .find(|s| self.seats[s.index()].id == who)
    }

    fn seat(&self, side: Side) -> Seat {
        self.seats[side.index()]
    }

    fn name(&self, side: Side, cx: &InstanceContext) -> String {
        cx.name(self.seat(side).id)
    }

    /// "alice (Black)".
    fn who(&self, side: Side, cx: &InstanceContext) -> String {
        format!("{} ({})", self.name(side, cx), R::side_name(side))
    }

    /// The tools only the player to move sees.
    fn turn_tools() -> impl Iterator<Item = &'static str> {
        std::iter::once(R::TOOLS.play).chain(R::TOOLS.pass)
    }

    /// Gives the side to move its turn: `play` (and `pass`) visible, `move` the legal moves.
    fn show_turn(&self, side: Side, cx: &mut InstanceContext) {
        let seat = self.seat(side);
        if seat.bot {
            return;
        }
        for tool in Self::turn_tools() {
            cx.show(seat.id, tool);
        }
        let definition = ToolDefinition {
            description: Some(self.rules.play_description()),
            input_schema: Some(self.rules.play_schema()),
            ..Default::default()
        };
        cx.set_definition(seat.id, R::TOOLS.play, definition);
    }

    fn hide_turn(&self, side: Side, cx: &mut InstanceContext) {
        let seat = self.seat(side);
        if !seat.bot {
            for tool in Self::turn_tools() {
                cx.hide(seat.id, tool);
            }
        }
    }

    /// "Your move. Free cells: …", or whose move it is, for `viewer`.
    fn status(&self, viewer: Side, cx: &InstanceContext) -> String {
        let opponent = self.name(viewer.other(), cx);
        if !self.started {
            return format!("Waiting for {opponent} to accept the challenge.");
        }
        if self.thinking.is_some() {
            return "The bot is thinking.".to_owned();
        }
        if self.rules.to_move() == viewer {
            self.your_move()
        } else {
            format!("{opponent}'s move.")
        }
    }

    fn your_move(&self) -> String {
        match self.rules.legal_summary() {
            Some(s) => format!("Your move. {s}"),
            None => "Your move.".to_owned(),
        }
    }

    /// The position as text, without a trailing newline.
    fn board(&self) -> String {
        self.rules.render().trim_end().to_owned()
    }

    /// What `board` shows `viewer`.
    fn board_text(&self, viewer: Side, cx: &InstanceContext) -> String {
        format!(
            "{}\nYou play {} against {}. {}",
            self.board(),
            R::side_name(viewer),
            self.name(viewer.other(), cx),
            self.status(viewer, cx)
        )
    }
}

/// A table's tool that takes no arguments, by what it does.
#[derive(Clone, Copy, Debug)]
pub(crate) enum PlainTool {
    /// Pass the turn (Go).
    Pass,
    /// Resign the game.
    Resign,
    /// Show the board.
    Board,
}

/// The table's tools, each the handler of its route (declared in `tools.rs`): the SDK
/// decodes the arguments and hands each call to its own.
impl<R: Rules> Table<R> {
    /// `play {move}`.
    pub(crate) fn play_tool(
        &mut self,
        args: PlayArgs,
        call: Call,
        cx: &mut InstanceContext,
    ) -> Reply {
        self.step(call, cx, |t, side, cx| {
            t.human_move(side, Some(&args.mv), call.id(), cx)
        })
    }

    /// The handler of one of the table's tools without arguments (`pass {}`, `resign {}`,
    /// `board {}`).
    pub(crate) fn plain_tool(
        tool: PlainTool,
    ) -> impl Fn(&mut Self, NoArguments, Call, &mut InstanceContext) -> Reply + Send + Sync + 'static
    {
        move |table, _, call, cx| {
            table.step(call, cx, |t, side, cx| match tool {
                PlainTool::Pass => t.human_move(side, None, call.id(), cx),
                PlainTool::Resign => Reply::text(t.resign(side, false, cx)),
                PlainTool::Board => Reply::text(t.board_text(side, cx)),
            })
        }
    }

    /// Runs a tool for the caller's side (a caller without one is not playing here), then
    /// publishes.
    fn step(
        &mut self,
        call: Call,
        cx: &mut InstanceContext,
        tool: impl FnOnce(&mut Self, Side, &mut InstanceContext) -> Reply,
    ) -> Reply {
        let reply = match self.side_of(call.caller()) {
            Some(side) => tool(self, side, cx),
            None => Reply::error("You are not playing in this game."),
        };
        self.publish(cx);
        reply
    }
}

impl<R: Rules> InstanceLogic for Table<R> {
    fn join(&mut self, who: ParticipantId, cx: &mut InstanceContext) -> Result<Joined, Refusal> {
        let joined = self.take_in(who, cx);
        self.publish(cx);
        joined
    }

    fn close(&mut self, who: ParticipantId, cx: &mut InstanceContext) -> Vec<ContentBlock> {
        let told = match self.side_of(who) {
            Some(side) => vec![ContentBlock::text(self.resign(side, true, cx))],
            None => Vec::new(),
        };
        self.publish(cx);
        told
    }

    fn wake(&mut self, tag: u64, cx: &mut InstanceContext) {
        if tag == WAKE_BOT {
            self.take_search(cx);
        }
        self.publish(cx);
    }

    /// The invitee declined the challenge (the lobby's `decline`): the challenger is told
    /// and the game ends (§4.3: the challenger gets the record; the invitee never had it).
    fn declined(&mut self, who: ParticipantId, cx: &mut InstanceContext) {
        self.decline(who, cx);
        self.publish(cx);
    }
}

/// The entry points' work; each is followed by [`Table::publish`].
impl<R: Rules> Table<R> {
    fn take_in(&mut self, who: ParticipantId, cx: &mut InstanceContext) -> Result<Joined, Refusal> {
        let side = self
            .side_of(who)
            .filter(|s| !self.seat(*s).bot && !self.started)
            .ok_or_else(|| Refusal::new("this game has its players"))?;
        let challenger = side.other();
        let title = self.rules.title();
        self.started = true;
        if let Some(c) = self.challenge.take() {
            self.shared.remove_challenge(c);
        }
        let to_move = self.rules.to_move();
        self.show_turn(to_move, cx);
        let board = self.board();
        let accepted = format!(
            "{} accepted your challenge: {title}, you play {}.\n\n{board}\n{}",
            self.name(side, cx),
            R::side_name(challenger),
            self.status(challenger, cx)
        );
        let event = mcpl_server::Event::text(accepted);
        let event = if to_move == challenger {
            event.turn()
        } else {
            event
        };
        cx.event(self.seat(challenger).id, event);
        Ok(Joined::new()
            .title(format!("{title} vs {}", self.name(challenger, cx)))
            .text(format!(
                "You play {} against {}.\n\n{board}\n{}",
                R::side_name(side),
                self.name(challenger, cx),
                self.status(side, cx)
            )))
    }

    fn decline(&mut self, who: ParticipantId, cx: &mut InstanceContext) {
        let Some(side) = self.side_of(who).filter(|_| !self.started) else {
            return;
        };
        if let Some(c) = self.challenge.take() {
            self.shared.remove_challenge(c);
        }
        let name = self.name(side, cx);
        let text = format!("{name} declined your challenge to {}.", self.rules.title());
        cx.event(self.seat(side.other()).id, mcpl_server::Event::text(text));
        cx.end(format!("{name} declined the challenge"));
    }
}

impl<R: Rules> Drop for Table<R> {
    /// A table that goes away (ended, closed, its last player gone) takes its open
    /// invitation out of the lobby's list.
    fn drop(&mut self) {
        if let Some(c) = self.challenge.take() {
            self.shared.remove_challenge(c);
        }
        self.unpublish();
    }
}
