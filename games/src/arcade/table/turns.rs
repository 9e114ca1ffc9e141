//! Moves at a table: a player's move, the bot's answer, resigning, and the end (§5.3: a
//! call reports its own consequences; the other player's come as a push).

use super::thinking::{Respond, Thinking};
use super::{Side, Table};
use crate::arcade::rules::{BotPlan, Outcome, Rules};
use mcpl_protocol::mcp::CallToolResult;
use mcpl_server::{CallId, Event, InstanceContext, Reply};

impl<R: Rules> Table<R> {
    /// `play` (with the move's text) or `pass` (`None`) by the player on `side`.
    pub(super) fn human_move(
        &mut self,
        side: Side,
        text: Option<&str>,
        call: CallId,
        cx: &mut InstanceContext,
    ) -> Reply {
        let opponent = self.name(side.other(), cx);
        if !self.started {
            return Reply::error(format!("{opponent} has not accepted the challenge yet."));
        }
        if self.thinking.is_some() {
            return Reply::error("The bot is thinking; its move answers your last one.");
        }
        if self.rules.to_move() != side {
            return Reply::error(format!("It is not your move: {opponent} is to play."));
        }
        let parsed = match text {
            Some(t) => self.rules.parse(t),
            None => self
                .rules
                .pass()
                .ok_or_else(|| "this game has no pass".to_owned()),
        };
        let played = parsed.and_then(|mv| self.rules.play(mv).map(|()| mv));
        let mv = match played {
            Ok(mv) => mv,
            Err(e) => {
                let hint = self.rules.legal_summary().unwrap_or_default();
                return Reply::error(format!("Not played: {e}. {hint}").trim_end().to_owned());
            }
        };
        self.moves += 1;
        let did = R::describe(mv);
        if let Some(outcome) = self.outcome() {
            return Reply::text(self.finish(side, &did, outcome, cx));
        }
        let them = self.seat(side.other());
        if them.bot {
            return self.bot_turn(side, Respond::Reply, format!("You {did}. "), call, cx);
        }
        self.hide_turn(side, cx);
        self.show_turn(side.other(), cx);
        let board = self.board();
        let news = format!(
            "{} {did}.\n\n{board}\n{}",
            self.who(side, cx),
            self.your_move()
        );
        cx.event(them.id, Event::text(news).turn());
        let mine = format!("You {did}.\n\n{board}\n{opponent}'s move.");
        // The mover's other connections (the answering one takes the result instead).
        cx.event(self.seat(side).id, Event::text(mine.clone()));
        Reply::text(mine)
    }

    /// The bot is to move after the human on `human` moved: at once, or by a search on a
    /// blocking thread whose move comes back through [`Table::take_search`]. `prefix`
    /// starts the human's text.
    pub(super) fn bot_turn(
        &mut self,
        human: Side,
        respond: Respond,
        prefix: String,
        call: CallId,
        cx: &mut InstanceContext,
    ) -> Reply {
        let seed = self.seed.wrapping_mul(1_000_003).wrapping_add(self.moves);
        match self.rules.bot(&self.shared.bot, seed) {
            Some(BotPlan::Now(mv)) => Reply::text(self.bot_moved(mv, respond, &prefix, cx)),
            Some(BotPlan::Think(search)) => {
                // A call waits for the search: its answer carries both moves. It is the
                // bot's turn meanwhile (§5.3: play only on your turn); the caller's host
                // hears that in the answer, with the turn given back (held changes), its
                // other connections at once.
                let respond = match respond {
                    Respond::Reply => Respond::Answer(call),
                    other => other,
                };
                self.hide_turn(human, cx);
                if let Respond::Answer(call) = respond {
                    cx.hold_for(call);
                }
                self.thinking = Some(Thinking::start(search, respond, prefix, cx));
                Reply::Later
            }
            // The game is over: `finish` already answered.
            None => Reply::error("The game is over."),
        }
    }

    /// Starts the bot's move when no call waits for it: its first of a game (it plays
    /// first), or the one it was thinking about when the arcade restarted. Returns the
    /// human's text when the bot moved at once (an event tells the human either way).
    pub(super) fn bot_opens(&mut self, cx: &mut InstanceContext) -> Option<String> {
        let seed = self.seed.wrapping_mul(1_000_003).wrapping_add(self.moves);
        match self.rules.bot(&self.shared.bot, seed)? {
            BotPlan::Now(mv) => Some(self.bot_moved(mv, Respond::Push, "", cx)),
            BotPlan::Think(search) => {
                self.thinking = Some(Thinking::start(search, Respond::Push, String::new(), cx));
                None
            }
        }
    }

    /// The table was woken for the search: take the bot's move if it is done.
    pub(super) fn take_search(&mut self, cx: &mut InstanceContext) {
        let Some(thinking) = self.thinking.as_mut() else {
            return;
        };
        match thinking.take() {
            // A wake that was not this search's (one abandoned by a resignation).
            None => {}
            Some(Ok(mv)) => {
                let Some(t) = self.thinking.take() else {
                    return;
                };
                self.bot_moved(mv, t.respond, &t.prefix, cx);
            }
            Some(Err(e)) => {
                tracing::error!(game = %self.rules.title(), error = %e, "the bot's search failed; it resigns");
                let bot = self.rules.to_move();
                let human = self.seat(bot.other()).id;
                self.resigned = Some(bot);
                let text = match self.outcome() {
                    Some(outcome) => self.end_text(bot, "resigned", outcome, cx),
                    None => return,
                };
                if let Some(t) = self.thinking.take()
                    && let Respond::Answer(call) = t.respond
                {
                    cx.answer(call, Ok(CallToolResult::text(text.clone())));
                }
                cx.event(human, Event::text(text.clone()));
                self.end_game(cx);
            }
        }
    }

    /// Plays the bot's move and tells the human: in the reply (returned), as the answer to
    /// the deferred call, or as a push. Returns the human's text.
    fn bot_moved(
        &mut self,
        mv: R::Move,
        respond: Respond,
        prefix: &str,
        cx: &mut InstanceContext,
    ) -> String {
        let bot = self.rules.to_move();
        let human = bot.other();
        let human_id = self.seat(human).id;
        if let Err(e) = self.rules.play(mv) {
            tracing::error!(game = %self.rules.title(), %mv, error = %e, "the bot chose an illegal move; it resigns");
            self.resigned = Some(bot);
        }
        self.moves += 1;
        let did = if self.resigned.is_some() {
            "resigned".to_owned()
        } else {
            R::describe(mv)
        };
        let answer = |cx: &mut InstanceContext, text: &str| {
            if let Respond::Answer(call) = respond {
                cx.answer(call, Ok(CallToolResult::text(text)));
            }
        };
        if let Some(outcome) = self.outcome() {
            let text = format!("{prefix}{}", self.end_text(bot, &did, outcome, cx));
            answer(cx, &text);
            cx.event(human_id, Event::text(text.clone()));
            self.end_game(cx);
            return text;
        }
        self.show_turn(human, cx);
        let text = format!(
            "{prefix}{} {did}.\n\n{}\n{}",
            self.who(bot, cx),
            self.board(),
            self.your_move()
        );
        answer(cx, &text);
        cx.event(human_id, Event::text(text.clone()).turn());
        text
    }

    /// `resign` by the player on `side` (or its `toolsets/close`, `closing`): the other
    /// player wins; before the opponent joined, the challenge is withdrawn instead.
    pub(super) fn resign(&mut self, side: Side, closing: bool, cx: &mut InstanceContext) -> String {
        let me = self.seat(side).id;
        if !self.started {
            cx.end(format!("{} withdrew the challenge", self.name(side, cx)));
            return "You withdrew the challenge.".to_owned();
        }
        self.resigned = Some(side);
        let Some(outcome) = self.outcome() else {
            return "The game is over.".to_owned();
        };
        let how = if closing {
            "resigned by closing the game"
        } else {
            "resigned"
        };
        let news = self.end_text(side, how, outcome, cx);
        // A move the bot was thinking about will not come: answer the call that waits.
        if let Some(t) = self.thinking.take()
            && let Respond::Answer(call) = t.respond
        {
            cx.answer(call, Ok(CallToolResult::text(news.clone())));
        }
        let them = self.seat(side.other());
        if !them.bot {
            cx.event(them.id, Event::text(news.clone()));
        }
        let mine = news.replacen(&self.who(side, cx), "You", 1);
        cx.event(me, Event::text(mine.clone()));
        self.end_game(cx);
        mine
    }

    /// The human on `side` made the last move: tell both, end, and return the mover's text.
    fn finish(
        &mut self,
        side: Side,
        did: &str,
        outcome: Outcome,
        cx: &mut InstanceContext,
    ) -> String {
        let news = self.end_text(side, did, outcome, cx);
        let them = self.seat(side.other());
        if !them.bot {
            cx.event(them.id, Event::text(news.clone()));
        }
        let mine = news.replacen(&self.who(side, cx), "You", 1);
        cx.event(self.seat(side).id, Event::text(mine.clone()));
        self.end_game(cx);
        mine
    }

    /// "alice (Black) passed.\n\n<board>\nGame over: White (bot) wins by 7.5.\nMoves: …".
    fn end_text(&self, side: Side, did: &str, outcome: Outcome, cx: &InstanceContext) -> String {
        format!(
            "{} {did}.\n\n{}",
            self.who(side, cx),
            self.final_view(&self.reason(&outcome, cx))
        )
    }

    /// The final position, the result (`reason`), how it was counted when the rules count
    /// one (Go's score), and the moves.
    fn final_view(&self, reason: &str) -> String {
        // The rendering's own last line says whose move it is or the rules' bare result;
        // the reason with names replaces it.
        let board = self.rules.render();
        let lines: Vec<&str> = board.trim_end().lines().collect();
        let position = lines[..lines.len().saturating_sub(1)].join("\n");
        let score = match self.outcome().and_then(|o| o.detail) {
            Some(detail) => format!("Score: {detail}.\n"),
            None => String::new(),
        };
        format!(
            "{position}\nGame over: {reason}.\n{score}{}",
            self.rules.record()
        )
    }

    /// Ends the game, leaving its final view for `board` to show while the ended record is
    /// kept (`InstanceContext::end_showing`).
    fn end_game(&self, cx: &mut InstanceContext) {
        let reason = self.reason_of(cx);
        let view = self.final_view(&reason);
        cx.end_showing(reason, view);
    }

    /// The result, resignations included.
    pub(super) fn outcome(&self) -> Option<Outcome> {
        match self.resigned {
            Some(loser) => Some(Outcome {
                winner: Some(loser.other()),
                text: format!("{} wins by resignation", R::side_name(loser.other())),
                detail: None,
            }),
            None => self.rules.outcome(),
        }
    }

    /// The ended record's reason: the rules' result with the winner's name ("White (bot)
    /// wins by 7.5").
    pub(super) fn reason(&self, outcome: &Outcome, cx: &InstanceContext) -> String {
        match outcome.winner {
            Some(w) => {
                let side = R::side_name(w);
                let rest = outcome.text.strip_prefix(side).unwrap_or(&outcome.text);
                format!("{side} ({}){rest}", self.name(w, cx))
            }
            None => outcome.text.clone(),
        }
    }

    fn reason_of(&self, cx: &InstanceContext) -> String {
        self.outcome()
            .map(|o| self.reason(&o, cx))
            .unwrap_or_else(|| "the game ended".to_owned())
    }
}
