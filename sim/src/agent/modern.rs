//! [`ModernAgent`]: a player whose host speaks MCP 2026-07-28 to the arcade (issue #39): no
//! `initialize`, no session, every request a POST of its own with its `_meta`
//! (`LinkConfig::era`, `EraPolicy::Modern`). A modern client is served as a plain MCP
//! host (RFC-014 §8; a stateless RFC-014 profile is issue #40's), so the agent sees what
//! any MCP host shows a model: the arcade's plain tools as `arcade--TOOL`, each game's
//! tools named by an `instance` argument, the compat tool `toolset_open` to start a game,
//! and no pushes, hints or reminders — a game's news is in the results of its own calls.
//!
//! It plays like that: tic-tac-toe against the bot, two games open at once (each move
//! names its `instance`), a random free cell from the last answer's `Free cells:` line;
//! between games it reads the lobby (`games`) and declines every challenge a legacy agent
//! sent it (the challenger is told: the eras meet there). An answer that leaves unknown
//! whether the server did what was asked ([`unknown_outcome`]: not reachable, or the
//! request's connection ended under it at a restart) leaves the game's state unknown: the
//! board is read again (`tictactoe_board`) before the next move; a game its tools then say
//! is not open is asked of `toolset_close` (§8), whose refusal tells its end if it ended. In the drain it resigns
//! what it believes open, and what it could not tell was opened, trying again while the
//! server is unreachable.
//!
//! **What is open, as the server says** (issue #41). An open whose answer was lost may
//! land after the agent found it not open (forwarded between arcade nodes, it can be
//! overtaken by the agent's next request), or be kept although its answer was a refusal:
//! nothing pushes a plain host the news (RFC-014 §8). But a call naming an instance that
//! is not open is refused naming those that are (`no tictactoe instance "t-9" is open
//! (open: t-3, t-7)`, §4.5): the agent takes every instance such a refusal names that it
//! did not know of as open ([`open_listed`]), and its drain ends by asking it — a board
//! read naming [`SWEEP`], which it never opens — and resigning what it learns, until
//! nothing is open.
//!
//! What it saw is an [`AgentReport`] like the scripted agents' (its `ends_told` counts the
//! ends shown in its results); the run checks it against the server's truth
//! ([`crate::invariants::check_modern`]).

use super::io::{AgentIo, try_again, unreachable};
use super::{AgentReport, GameKey, GameRecord, Phase};
use mcpl_host::host::HostError;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::sync::watch;

/// The one game the modern agents play.
const TOOLSET: &str = "tictactoe";

/// Games open at once.
const MAX_OPEN: usize = 2;

/// The pause before trying again a resign the server could not be reached for.
const RETRY_AFTER: Duration = Duration::from_millis(200);

/// The instance name the drain's last board read names, to be told what is open: never
/// one of the agent's own (`t-0`, `t-1`, …).
pub const SWEEP: &str = "t-drain";

/// The most times the drain asks what is still open (each time resigning what it
/// learns): a game opened meanwhile is found by the next.
const SWEEPS: usize = 3;

/// A modern agent's state of one game.
#[derive(Debug, Clone)]
struct Game {
    /// Its record (as the scripted agents keep it).
    record: GameRecord,
    /// The free cells the last answer listed; empty when unknown.
    free: Vec<String>,
    /// A call on it was not answered by the server: read the board before moving.
    unsure: bool,
}

/// What a modern agent counted, beyond the shared metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModernCounts {
    /// Calls the server answered (results that are not the host saying it could not
    /// reach the server): each is a request the arcade served, on a connection of its own.
    pub answered: u64,
    /// Challenges from other players declined.
    pub declined: u64,
}

/// A player on the modern era. See the module docs.
pub struct ModernAgent {
    rng: StdRng,
    think: Duration,
    games: BTreeMap<String, Game>,
    /// Games whose open's outcome was unknown and whose board read then said not open:
    /// the open may still land (its request outlived the answer), so the drain resigns
    /// them too.
    doubtful: BTreeSet<String>,
    next_instance: u32,
    counts: ModernCounts,
}

impl ModernAgent {
    /// An agent whose choices are seeded with `seed`, pausing `think` before each action.
    pub fn new(seed: u64, think: Duration) -> Self {
        ModernAgent {
            rng: StdRng::seed_from_u64(seed),
            think,
            games: BTreeMap::new(),
            doubtful: BTreeSet::new(),
            next_instance: 0,
            counts: ModernCounts::default(),
        }
    }

    /// Plays until the phase is [`Phase::Stop`], or the drain has resigned everything;
    /// what it saw, and its counts.
    pub async fn run(
        mut self,
        mut io: AgentIo,
        mut phase: watch::Receiver<Phase>,
    ) -> (AgentReport, ModernCounts) {
        loop {
            let now = *phase.borrow();
            let step = match now {
                Phase::Stop => break,
                Phase::Pause => {
                    let _ = phase.changed().await;
                    continue;
                }
                Phase::Drain => {
                    let _ = self.drain(&mut io, &phase).await;
                    break;
                }
                Phase::Play => self.step(&mut io).await,
            };
            if step.is_err() {
                // The host stopped: nothing more can be done.
                break;
            }
            if !self.think.is_zero() {
                tokio::time::sleep(self.think).await;
            }
        }
        let report = AgentReport {
            name: io.name().to_owned(),
            games: self.games.values().map(|g| g.record.clone()).collect(),
            ends_told: self
                .games
                .values()
                .filter(|g| g.record.result.is_some())
                .map(|g| ((TOOLSET.to_owned(), g.record.instance.clone()), 1))
                .collect::<BTreeMap<GameKey, u32>>(),
            plain_closes: 0,
            resigns_refused: BTreeMap::new(),
        };
        (report, self.counts)
    }

    /// One action in play: a move in an open game, or (fewer than [`MAX_OPEN`] open) the
    /// lobby read and a new game.
    async fn step(&mut self, io: &mut AgentIo) -> Result<(), HostError> {
        let open: Vec<String> = self.open().map(|g| g.record.instance.clone()).collect();
        if open.len() < MAX_OPEN && self.rng.random_bool(0.5) {
            self.lobby(io).await?;
            return self.start(io).await;
        }
        match pick(&open, &mut self.rng) {
            Some(instance) => self.advance(io, &instance).await,
            None => self.start(io).await,
        }
    }

    fn open(&self) -> impl Iterator<Item = &Game> {
        self.games.values().filter(|g| g.record.open)
    }

    /// A call through the host; counts the answers the server gave.
    async fn call(
        &mut self,
        io: &mut AgentIo,
        tool: &str,
        args: Value,
    ) -> Result<(bool, String, Option<Value>), HostError> {
        let r = io
            .call(&format!("{}--{tool}", crate::hosts::SERVER), args)
            .await?;
        // The result is in the transcript too: taken (shown to the observer) so that the
        // host does not keep every one.
        io.read().await?;
        let text = r.joined_text();
        let reached = !(r.is_error && unreachable(&text));
        if reached {
            self.counts.answered += 1;
        }
        Ok((r.is_error, text, r.structured_content))
    }

    /// Reads the lobby and declines every challenge waiting there.
    async fn lobby(&mut self, io: &mut AgentIo) -> Result<(), HostError> {
        let (error, _, structured) = self.call(io, "games", json!({})).await?;
        if error {
            return Ok(());
        }
        let waiting: Vec<(String, String)> = structured
            .as_ref()
            .and_then(|s| s["challenges"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|c| Some((c["game"].as_str()?.into(), c["instance"].as_str()?.into())))
            .collect();
        for (game, instance) in waiting {
            let args = json!({"instance": instance, "game": game});
            let (error, _, _) = self.call(io, "decline", args).await?;
            if !error {
                self.counts.declined += 1;
                io.metrics().bump(|c| c.declined += 1);
            }
        }
        Ok(())
    }

    /// Opens a new game against the bot.
    async fn start(&mut self, io: &mut AgentIo) -> Result<(), HostError> {
        let instance = format!("t-{}", self.next_instance);
        self.next_instance += 1;
        let args = json!({"toolset": TOOLSET, "instance": instance,
                          "options": {"opponent": "bot"}});
        let (error, text, _) = self.call(io, "toolset_open", args).await?;
        if error && unknown_outcome(&text) {
            // Opened or not: the board read says (a game not open is an error there).
            let game = self.game(&instance);
            game.unsure = true;
            return Ok(());
        }
        if error {
            return Ok(());
        }
        io.metrics().bump(|c| c.games_started += 1);
        let game = self.game(&instance);
        game.free = free_cells(&text);
        game.record.title = title(&text);
        Ok(())
    }

    /// The game named `instance`, made open if new.
    fn game(&mut self, instance: &str) -> &mut Game {
        self.games
            .entry(instance.to_owned())
            .or_insert_with(|| Game {
                record: GameRecord {
                    toolset: TOOLSET.to_owned(),
                    instance: instance.to_owned(),
                    title: None,
                    result: None,
                    moves: None,
                    my_moves: 0,
                    open: true,
                },
                free: Vec::new(),
                unsure: false,
            })
    }

    /// A move in `instance`, or a board read first when its state is unknown.
    async fn advance(&mut self, io: &mut AgentIo, instance: &str) -> Result<(), HostError> {
        let (unsure, free) = {
            let g = self.game(instance);
            (g.unsure || g.free.is_empty(), g.free.clone())
        };
        let args = json!({"instance": instance});
        if unsure {
            let (error, text, _) = self.call(io, "tictactoe_board", args).await?;
            let (error, text) = self.end_of(io, instance, error, text).await?;
            self.read_answer(io, instance, error, &text, false);
            return Ok(());
        }
        let Some(cell) = pick(&free, &mut self.rng) else {
            return Ok(());
        };
        let args = json!({"instance": instance, "move": cell});
        let (error, text, _) = self.call(io, "tictactoe_play", args).await?;
        self.read_answer(io, instance, error, &text, true);
        Ok(())
    }

    /// Takes as open every instance in `open` (what a refusal named open) the agent did
    /// not know of: an open whose answer was lost, which landed (module docs). Its state
    /// is unknown: the board is read before a move.
    fn adopt(&mut self, io: &AgentIo, open: &[String]) {
        for name in open {
            if name == SWEEP || self.games.contains_key(name) {
                continue;
            }
            self.doubtful.remove(name);
            io.metrics().bump(|c| c.games_started += 1);
            self.game(name).unsure = true;
        }
    }

    /// What an answer about `instance` says: its end, its free cells, or nothing known;
    /// and the instances a refusal names open.
    fn read_answer(&mut self, io: &AgentIo, instance: &str, error: bool, text: &str, moved: bool) {
        if error && let Some(open) = open_listed(text) {
            self.adopt(io, &open);
        }
        let g = self.game(instance);
        if error && unknown_outcome(text) {
            g.unsure = true;
            return;
        }
        let ended = if error {
            ended_before(text)
        } else {
            game_over(text)
        };
        if let Some(result) = ended {
            if g.record.open {
                io.metrics().bump(|c| c.games_ended += 1);
            }
            g.record.open = false;
            g.record.result = Some(result);
            g.free.clear();
            if let Some(m) = moves(text) {
                g.record.moves = Some(m);
            }
            return;
        }
        if error && moved {
            // Refused (a cell taken by a move whose answer was lost, say): read again.
            g.unsure = true;
            return;
        }
        if error {
            // The board of a game that is not open and has no end on record: an open
            // whose answer was lost did not open it (yet).
            self.games.remove(instance);
            self.doubtful.insert(instance.to_owned());
            return;
        }
        if moved {
            g.record.my_moves += 1;
        }
        g.unsure = false;
        g.free = free_cells(text);
    }

    /// A game's tool refused because no such instance is open says nothing of its end (a
    /// move whose answer was lost may have ended it): `toolset_close` (RFC-014 §8, the
    /// plain host's close) says it, refused with the end when there is one on record
    /// ("tictactoe:t-4 is not open (it ended: Draw)"). That answer instead of `error` and
    /// `text` when it tells an end; else them as they were.
    async fn end_of(
        &mut self,
        io: &mut AgentIo,
        instance: &str,
        error: bool,
        text: String,
    ) -> Result<(bool, String), HostError> {
        if !error || unknown_outcome(&text) || ended_before(&text).is_some() {
            return Ok((error, text));
        }
        if !text.contains(&format!("instance {instance:?} is open")) {
            return Ok((error, text));
        }
        let args = json!({"toolset": TOOLSET, "instance": instance});
        let (closed_error, closed, _) = self.call(io, "toolset_close", args).await?;
        if closed_error && ended_before(&closed).is_some() {
            return Ok((closed_error, closed));
        }
        Ok((error, text))
    }

    /// Resigns every game believed open; a resign the server could not be reached for is
    /// tried again until it is answered or the run stops. Then asks what is still open
    /// (module docs) and resigns that too, until nothing is.
    async fn drain(
        &mut self,
        io: &mut AgentIo,
        phase: &watch::Receiver<Phase>,
    ) -> Result<(), HostError> {
        let mut open: Vec<String> = self.open().map(|g| g.record.instance.clone()).collect();
        open.extend(
            std::mem::take(&mut self.doubtful)
                .into_iter()
                .filter(|i| !self.games.contains_key(i)),
        );
        if !self.resign_all(io, phase, open).await? {
            return Ok(());
        }
        for _ in 0..SWEEPS {
            let Some(open) = self.still_open(io, phase).await? else {
                return Ok(());
            };
            if open.is_empty() {
                break;
            }
            self.adopt(io, &open);
            if !self.resign_all(io, phase, open).await? {
                return Ok(());
            }
        }
        Ok(())
    }

    /// What the server says is open now: the instances its refusal of a board read naming
    /// [`SWEEP`] lists (RFC-014 §8, §4.5). Asked again while the server is unreachable;
    /// `None` once the run stops, or when the refusal lists nothing.
    async fn still_open(
        &mut self,
        io: &mut AgentIo,
        phase: &watch::Receiver<Phase>,
    ) -> Result<Option<Vec<String>>, HostError> {
        loop {
            let args = json!({"instance": SWEEP});
            let (error, text, _) = self.call(io, "tictactoe_board", args).await?;
            if error && (unknown_outcome(&text) || try_again(&text)) {
                io.metrics().bump(|c| c.drain_unreachable += 1);
                if *phase.borrow() == Phase::Stop {
                    return Ok(None);
                }
                tokio::time::sleep(RETRY_AFTER).await;
                continue;
            }
            return Ok(open_listed(&text));
        }
    }

    /// Resigns each of `instances`; `false` when the run stopped first.
    async fn resign_all(
        &mut self,
        io: &mut AgentIo,
        phase: &watch::Receiver<Phase>,
        instances: Vec<String>,
    ) -> Result<bool, HostError> {
        for instance in instances {
            loop {
                let args = json!({"instance": instance});
                let (error, text, _) = self.call(io, "tictactoe_resign", args).await?;
                let (error, text) = self.end_of(io, &instance, error, text).await?;
                // Not answered, or the server said to try again (arcade nodes: the game's
                // node died and no node runs it yet): tried again, the drain's own limit
                // bounding the tries, as the scripted agents do.
                if error && (unknown_outcome(&text) || try_again(&text)) {
                    io.metrics().bump(|c| c.drain_unreachable += 1);
                    if *phase.borrow() == Phase::Stop {
                        return Ok(false);
                    }
                    tokio::time::sleep(RETRY_AFTER).await;
                    continue;
                }
                // A doubtful game is known again by its resign's answer.
                self.game(&instance);
                self.read_answer(io, &instance, error, &text, false);
                self.doubtful.clear();
                if let Some(g) = self.games.get_mut(&instance) {
                    // Answered without "Game over" (or refused for another reason than
                    // an end): the agent believes it over; the truth check says whether
                    // the server agrees.
                    if g.record.open {
                        io.metrics().bump(|c| c.games_ended += 1);
                        g.record.open = false;
                    }
                }
                break;
            }
        }
        Ok(true)
    }
}

/// True when an answer leaves unknown whether the server did what was asked: the host
/// could not reach it ([`unreachable()`]), or the server ended the request's connection
/// under it — at a restart the arcade answers a modern request it may have run with
/// `-32603 the server stopped before answering this request: it may have run` (HTTP 503),
/// or refuses a new one with `-32600 the server is not accepting connections`. Between
/// arcade nodes (`sim --nodes`, issue #41) a node answers `-32603` with a retryable error
/// while the owner is gone or cannot be reached ("the request did not run; retry it") or
/// did not answer ("the request may have run"). The board (or the resign's answer) then
/// says.
pub fn unknown_outcome(error: &str) -> bool {
    unreachable(error)
        || (error.contains("(code -32603)")
            && (error.contains("stopped before answering")
                || error.contains("the request did not run; retry it")
                || error.contains("the request may have run")
                || error.contains("it may have run")))
        || (error.contains("(code -32600)")
            && error.contains("the server is not accepting connections"))
}

/// The instances a refusal names open (`no tictactoe instance "t-9" is open (open: t-3,
/// t-7)`; `(open: none)`: none), if it names them.
pub fn open_listed(text: &str) -> Option<Vec<String>> {
    let (_, rest) = text.split_once(" is open (open: ")?;
    let (list, _) = rest.split_once(')')?;
    Some(
        list.split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty() && *n != "none")
            .map(str::to_owned)
            .collect(),
    )
}

/// A random element of `items`.
fn pick(items: &[String], rng: &mut StdRng) -> Option<String> {
    (!items.is_empty()).then(|| items[rng.random_range(0..items.len())].clone())
}

/// The cells a tic-tac-toe answer lists free (`Your move. Free cells: a1, b2`).
pub fn free_cells(text: &str) -> Vec<String> {
    text.lines()
        .find_map(|l| l.split_once("Free cells: ").map(|(_, c)| c))
        .map(|cells| {
            cells
                .split(',')
                .map(|c| c.trim().trim_end_matches('.').to_owned())
                .filter(|c| !c.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The result an answer tells (`Game over: O (bot) wins.`), if the game is over.
pub fn game_over(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.split_once("Game over: ").map(|(_, r)| r))
        .map(|r| r.trim().trim_end_matches('.').to_owned())
}

/// The reason a refusal gives for a game that had ended before the call (`tictactoe:t-1
/// is not open (it ended: O (bot) wins)`).
pub fn ended_before(text: &str) -> Option<String> {
    let (_, rest) = text.split_once("(it ended: ")?;
    Some(rest.rsplit_once(')').map_or(rest, |(r, _)| r).to_owned())
}

/// The answer's `Moves: …` line.
fn moves(text: &str) -> Option<String> {
    text.lines()
        .find(|l| l.trim_start().starts_with("Moves:"))
        .map(|l| l.trim().to_owned())
}

/// The title an open's answer gives (`Opened tictactoe:t-0 (Tic-tac-toe vs bot).`).
fn title(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("Opened "))?;
    let (_, rest) = line.split_once(" (")?;
    Some(rest.split_once(')')?.0.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOVED: &str = "You played b2. bot (O) played a1.\n\n 3  . | . | .\nX to move\nYour move. Free cells: b1, c1, a2, c2, a3, b3, c3";
    const OVER: &str =
        "You resigned.\n\n 3  . | . | .\nGame over: O (bot) wins by resignation.\nMoves: b2 a1";

    #[test]
    fn answers_are_read_for_free_cells_ends_and_titles() {
        assert_eq!(
            free_cells(MOVED),
            ["b1", "c1", "a2", "c2", "a3", "b3", "c3"]
        );
        assert_eq!(game_over(MOVED), None);
        assert!(free_cells(OVER).is_empty());
        assert_eq!(
            game_over(OVER).as_deref(),
            Some("O (bot) wins by resignation")
        );
        assert_eq!(moves(OVER).as_deref(), Some("Moves: b2 a1"));
        assert_eq!(
            ended_before("tictactoe:t-1 is not open (it ended: O (bot) wins by resignation)")
                .as_deref(),
            Some("O (bot) wins by resignation")
        );
        assert_eq!(ended_before("tictactoe:t-1: that cell is taken"), None);
        assert_eq!(
            open_listed(
                r#"arcade refused it (code -32602): "tictactoe_board: no tictactoe instance \"t-drain\" is open (open: t-3, t-7)" (from arcade)"#
            ),
            Some(vec!["t-3".to_owned(), "t-7".to_owned()])
        );
        assert_eq!(
            open_listed(r#"tictactoe_board: no tictactoe instance "t-drain" is open (open: none)"#),
            Some(vec![])
        );
        assert_eq!(open_listed(MOVED), None);
        assert!(unknown_outcome(
            r#"arcade refused it (code -32603): "the server stopped before answering this request: it may have run (read the state again before retrying)" (from arcade)"#
        ));
        assert!(!unknown_outcome(
            r#"arcade refused it (code -32602): "no such instance" (from arcade)"#
        ));
        assert_eq!(
            title("Opened tictactoe:t-0 (Tic-tac-toe vs bot). Name it as the `instance` argument of its tools when several are open.").as_deref(),
            Some("Tic-tac-toe vs bot")
        );
    }
}
