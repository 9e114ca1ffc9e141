//! Opening a table (§4.2): the options, the opponent — the bot, or another principal
//! invited into the shared instance (§4.6) — and, against the bot, its first move when it
//! plays first.

use super::{Seat, Table};
use crate::arcade::challenge_limit::{MAX_PER_WINDOW, WINDOW, wait_text};
use crate::arcade::rules::{Rules, Side};
use crate::arcade::shared::{Challenge, Shared, challenge_reason};
use mcpl_server::{Event, InstanceContext, Opening, Refusal, Started};
use mcpl_transport::Principal;
use serde_json::{Value, json};
use std::marker::PhantomData;
use std::sync::Arc;

/// How many players online a refusal naming an unknown player lists at most.
const ONLINE_NAMED: usize = 20;

/// The `go` or `tictactoe` toolset's logic: opens a [`Table`] for `R`.
pub struct TableToolset<R> {
    shared: Arc<Shared>,
    rules: PhantomData<fn() -> R>,
}

impl<R> TableToolset<R> {
    /// The logic, sharing the arcade's state.
    pub fn new(shared: Arc<Shared>) -> Self {
        TableToolset {
            shared,
            rules: PhantomData,
        }
    }
}

impl<R: Rules> TableToolset<R> {
    /// Opens a table with the options as the toolset's options type decoded them (the
    /// toolset's `on_open_with`, `tools.rs`).
    pub fn open(
        &self,
        options: R::Options,
        opening: Opening,
        cx: &mut InstanceContext,
    ) -> Result<Started, Refusal> {
        let (rules, seating) = R::from_options(options).map_err(Refusal::new)?;
        let mine = seating.side;
        let game = self.shared.next_game();
        let seed = match self.shared.bot.seed {
            Some(s) => s ^ game.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            None => rand::random(),
        };
        let me = Seat {
            id: opening.opener(),
            bot: false,
        };
        let table = Table {
            rules,
            shared: self.shared.clone(),
            seats: [me, me],
            started: true,
            resigned: None,
            thinking: None,
            challenge: None,
            seed,
            moves: 0,
            number: game,
        };
        match seating.opponent.as_deref() {
            None => Ok(table.against_bot(mine, cx)),
            Some(name) => table.challenge(mine, name, &opening, cx),
        }
    }
}

impl<R: Rules> Table<R> {
    /// How to play, for the opener's first text.
    fn how_to_play() -> String {
        let t = R::TOOLS;
        let pass = t.pass.map(|p| format!(", {p} to pass")).unwrap_or_default();
        format!(
            "Move with {} {{\"move\": …}} on your turn{pass}, {} to give up; {} shows the position.",
            t.play, t.resign, t.board
        )
    }

    fn against_bot(mut self, mine: Side, cx: &mut InstanceContext) -> Started {
        let me = self.seats[0];
        let bot = Seat {
            id: cx.add_bot("bot"),
            bot: true,
        };
        self.seats[mine.index()] = me;
        self.seats[mine.other().index()] = bot;
        let title = self.rules.title();
        let head = format!(
            "{title} against the bot. You play {}. {}",
            R::side_name(mine),
            Self::how_to_play()
        );
        let text = if self.rules.to_move() == mine {
            self.show_turn(mine, cx);
            format!("{head}\n\n{}\n{}", self.board(), self.your_move())
        } else {
            match self.bot_opens(cx) {
                Some(moved) => format!("{head}\n\n{moved}"),
                None => format!(
                    "{head}\n\n{}\nThe bot is thinking; its move comes as an event.",
                    self.board()
                ),
            }
        };
        // The opener's other connections hear of the new game (the opening one reads the
        // result instead).
        let news = format!(
            "You started {title} against the bot, playing {}.",
            R::side_name(mine)
        );
        cx.event(me.id, Event::text(news));
        self.publish(cx);
        Started::durable(self)
            .title(format!("{title} vs bot"))
            .text(text)
    }

    fn challenge(
        mut self,
        mine: Side,
        name: &str,
        opening: &Opening,
        cx: &mut InstanceContext,
    ) -> Result<Started, Refusal> {
        let me = self.seats[0];
        let my_name = opening.principal().name();
        if matches!(opening.principal(), Principal::Anonymous(_)) {
            return Err(Refusal::new(
                "anonymous players share nothing (RFC-014 §4.6): play the bot, or connect with a token",
            ));
        }
        if name == my_name {
            return Err(Refusal::new("you cannot play against yourself"));
        }
        let Some(principal) = self.shared.player(name) else {
            // At most ONLINE_NAMED names: a refusal stays short with thousands online.
            let page = self.shared.online_page(None, ONLINE_NAMED, &my_name);
            let online = match page.total {
                0 => "nobody else".to_owned(),
                n if n <= page.names.len() => page.names.join(", "),
                n => format!(
                    "{} and {} more",
                    page.names.join(", "),
                    n - page.names.len()
                ),
            };
            return Err(Refusal::new(format!(
                "there is no player named {name:?} (online now: {online})"
            )));
        };
        // §4.6 **[project]**: a bound on invitations per pair (`challenge_limit.rs`); checked
        // last, so that only a challenge that would be sent counts.
        if let Err(wait) = self.shared.admit_challenge(&my_name, name, cx.now()) {
            return Err(Refusal::new(format!(
                "you challenged {name} {MAX_PER_WINDOW} times in the last {}, the most allowed: \
                 challenge {name} again in {} (or play someone else meanwhile)",
                wait_text(WINDOW),
                wait_text(wait)
            )));
        }
        let title = self.rules.title();
        let theirs = mine.other();
        let mut options = self.rules.options();
        options.insert("opponent".into(), json!(my_name));
        options.insert("color".into(), json!(R::color_option(theirs)));
        let summary = format!("{title}, you play {}", R::side_name(theirs));
        let reason = challenge_reason(&my_name, &summary);
        let them = cx.invite_with(principal.clone(), reason, Some(Value::Object(options)));
        self.seats[mine.index()] = me;
        self.seats[theirs.index()] = Seat {
            id: them,
            bot: false,
        };
        self.started = false;
        let instance = opening.instance().map(str::to_owned);
        self.challenge = Some(self.shared.add_challenge(|id| Challenge {
            id,
            toolset: R::TOOLS.toolset,
            challenger: my_name.clone(),
            invitee: principal,
            instance,
            summary,
        }));
        let news = format!(
            "You challenged {name} to {title}; you play {}. The game starts when {name} accepts.",
            R::side_name(mine)
        );
        cx.event(me.id, Event::text(news.clone()));
        let text = format!("{news} {}\n\n{}", Self::how_to_play(), self.board());
        self.publish(cx);
        Ok(Started::durable(self)
            .title(format!("{title} vs {name}"))
            .text(text))
    }
}
