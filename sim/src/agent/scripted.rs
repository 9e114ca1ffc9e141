//! [`ScriptedAgent`]: a [`Policy`] played through an [`AgentIo`]. Each step it reads what
//! the host showed, updates its [`Beliefs`], and takes at most one action: a deliberate
//! mistake (clumsy), an answer to an invitation, a move where it is its turn, a new game,
//! or a `toolsets--look` when an open game has been quiet too long. Otherwise it waits
//! for the host to show something.

use super::beliefs::{Beliefs, GameKey, content};
use super::io::{AgentIo, try_again};
use super::moves::{GoChoice, go_engine_move, legal_moves, random_move, tictactoe_move};
use super::policy::{GameKind, Mover, Plan, Policy};
use super::{AgentReport, Phase};
use mcpl_host::host::HostError;
use mcpl_protocol::CallToolResult;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// The server's name in every agent's host.
pub const SERVER: &str = "arcade";

/// How long an idle agent waits for news before it checks again.
const IDLE: Duration = Duration::from_millis(500);

/// Attempts to resign a game in the drain before the agent gives up on it.
const MAX_RESIGNS: u32 = 3;

/// How long an agent waits after a tool error (a refused move, the server unreachable
/// once) before it acts again, unless something is shown sooner.
pub const AFTER_ERROR: Duration = Duration::from_millis(200);

/// The longest an agent waits between calls while its server stays unreachable
/// ([`after_error`]).
pub const MAX_AFTER_ERROR: Duration = Duration::from_secs(4);

/// The wait after a tool error when the last `unreachable_in_row` calls came back saying
/// the server could not be reached: [`AFTER_ERROR`], doubled per such call in a row after
/// the first up to [`MAX_AFTER_ERROR`], a random part of it taken off (at most half), so
/// that thousands of agents cut off together neither retry in step nor feed an overloaded
/// server five calls a second each (issue #42: under overload the run slows down, it does
/// not fall over) **\[project\]**, README "An agent backs off while its server is
/// unreachable". Any other answer starts it over.
pub fn after_error(unreachable_in_row: u32, rng: &mut impl Rng) -> Duration {
    let doublings = unreachable_in_row.saturating_sub(1).min(16);
    let base = AFTER_ERROR
        .saturating_mul(1 << doublings)
        .min(MAX_AFTER_ERROR);
    if unreachable_in_row == 0 {
        return base;
    }
    base.mul_f64(rng.random_range(0.5..=1.0))
}

/// A scripted agent. See the module docs.
pub struct ScriptedAgent {
    policy: Policy,
    rng: StdRng,
    beliefs: Beliefs,
    /// Games started or joined, and the next instance number.
    started: u32,
    next_instance: u32,
    /// The next plan.
    plan: usize,
    /// Challenges sent and not yet answered, with when.
    waiting: BTreeMap<GameKey, Instant>,
    /// Games whose end was counted.
    finished: BTreeSet<GameKey>,
    /// Failed attempts to resign a game in the drain; past a few the agent gives up on it
    /// (its host believes it open, the server does not: the run's checks will say so).
    resign_failures: BTreeMap<GameKey, u32>,
    last_news: Instant,
}

impl ScriptedAgent {
    /// An agent with this policy, its choices seeded.
    pub fn new(policy: Policy, seed: u64) -> Self {
        ScriptedAgent {
            policy,
            rng: StdRng::seed_from_u64(seed),
            beliefs: Beliefs::default(),
            started: 0,
            next_instance: 1,
            plan: 0,
            waiting: BTreeMap::new(),
            finished: BTreeSet::new(),
            resign_failures: BTreeMap::new(),
            last_news: Instant::now(),
        }
    }

    /// Plays until the run stops, or until it drained (its games over) or its games are
    /// done; returns what it saw of its games.
    pub async fn run(mut self, mut io: AgentIo, mut phase: watch::Receiver<Phase>) -> AgentReport {
        loop {
            if self.absorb(&mut io).await.is_err() {
                break;
            }
            let now = *phase.borrow_and_update();
            if now == Phase::Stop {
                break;
            }
            if now == Phase::Pause {
                if phase.changed().await.is_err() {
                    break;
                }
                continue;
            }
            let acted = match self.step(&mut io, now).await {
                Ok(a) => a,
                Err(_) => break,
            };
            if acted {
                if io.take_error() {
                    let wait = after_error(io.unreachable_in_row(), &mut self.rng);
                    io.wait(wait).await;
                }
                continue;
            }
            let failures = &self.resign_failures;
            let nothing_open = self
                .beliefs
                .open_games()
                .all(|(k, _)| failures.get(k).copied().unwrap_or(0) >= MAX_RESIGNS);
            let done = self.policy.games.is_some_and(|n| self.started >= n);
            if nothing_open
                && !io.unsure()
                && (now == Phase::Drain || (done && self.beliefs.invitations.is_empty()))
            {
                break;
            }
            tokio::select! {
                _ = io.wait(IDLE) => {}
                _ = phase.changed() => {}
            }
        }
        // What arrived meanwhile (a last push) still counts.
        let _ = self.absorb(&mut io).await;
        self.report(io.name())
    }

    async fn absorb(&mut self, io: &mut AgentIo) -> Result<(), HostError> {
        let shown = io.read().await?;
        if !shown.is_empty() {
            self.last_news = Instant::now();
        }
        for s in &shown {
            self.beliefs.absorb(s);
        }
        let ended: Vec<GameKey> = self
            .beliefs
            .games
            .iter()
            .filter(|(k, g)| g.ended.is_some() && !self.finished.contains(*k))
            .map(|(k, _)| k.clone())
            .collect();
        for k in ended {
            self.waiting.remove(&k);
            self.finished.insert(k);
            io.metrics().bump(|c| c.games_ended += 1);
        }
        // A challenge is answered once the game has moves or a turn of ours.
        let beliefs = &self.beliefs;
        self.waiting.retain(|k, _| {
            beliefs
                .games
                .get(k)
                .is_none_or(|g| g.my_moves == 0 && !g.usable.iter().any(|t| t.ends_with("_play")))
        });
        Ok(())
    }

    /// One action, if one is due; true when it acted.
    async fn step(&mut self, io: &mut AgentIo, phase: Phase) -> Result<bool, HostError> {
        if phase == Phase::Play
            && self.policy.clumsy > 0.0
            && self.rng.random_bool(self.policy.clumsy)
        {
            self.clumsy(io).await?;
            return Ok(true);
        }
        if let Some(inv) = self.beliefs.invitations.values().next().cloned() {
            self.beliefs.invitations.remove(&inv.key);
            self.pause().await;
            let accept =
                phase == Phase::Play && self.rng.random_bool(self.policy.accept.clamp(0.0, 1.0));
            if accept {
                let r = io.call("toolsets--open", inv.call.clone()).await?;
                if !r.is_error {
                    self.started += 1;
                    io.metrics().bump(|c| c.games_started += 1);
                }
            } else {
                let args =
                    json!({"tool": "decline", "args": {"instance": inv.key.1, "game": inv.key.0}});
                let r = io.call("toolsets--act", args).await?;
                if !r.is_error {
                    io.metrics().bump(|c| c.declined += 1);
                }
            }
            return Ok(true);
        }
        if phase == Phase::Drain {
            // Ends every open game: resigning (or withdrawing a challenge).
            let failures = &self.resign_failures;
            let open = self
                .beliefs
                .open_games()
                .map(|(k, _)| k.clone())
                .find(|k| failures.get(k).copied().unwrap_or(0) < MAX_RESIGNS);
            if let Some(key) = open {
                let tool = format!("{}_resign", key.0);
                let r = self.act(io, &key, &tool, json!({})).await?;
                if r.is_error && try_again(&r.joined_text()) {
                    // Not a refusal: the host could not reach the server (a reconnect under
                    // way, an answer lost), or the server said to try again (arcade nodes,
                    // issue #41: the game's node died and another adopts it). The resign is
                    // tried again once the host shows something or a while passed
                    // ([`after_error`], growing while the server stays unreachable); the
                    // drain's own limit bounds the tries.
                    io.metrics().bump(|c| c.drain_unreachable += 1);
                } else if r.is_error {
                    *self.resign_failures.entry(key).or_default() += 1;
                    self.look(io).await?;
                }
                return Ok(true);
            }
            if io.unsure() {
                // The host could not reach the server lately: what a call did then (a
                // challenge whose answer was lost may have opened a game) or what changed
                // meanwhile may not be told yet. Nothing is known to be open until a look
                // shows the server's state.
                if !self.look(io).await? {
                    io.wait(AFTER_ERROR).await;
                }
                return Ok(true);
            }
            return Ok(false);
        }
        let turn = self
            .beliefs
            .open_games()
            .find(|(k, g)| {
                g.usable.contains(&format!("{}_play", k.0))
                    || g.usable.contains(&format!("{}_pass", k.0))
            })
            .map(|(k, _)| k.clone());
        if let Some(key) = turn {
            self.pause().await;
            self.play(io, &key).await?;
            return Ok(true);
        }
        let expired = self
            .waiting
            .iter()
            .find(|(_, since)| since.elapsed() > self.policy.patience)
            .map(|(k, _)| k.clone());
        if let Some(key) = expired {
            self.waiting.remove(&key);
            let tool = format!("{}_resign", key.0);
            self.act(io, &key, &tool, json!({})).await?;
            return Ok(true);
        }
        let open = self.beliefs.open_games().count();
        let more = self.policy.games.is_none_or(|n| self.started < n);
        if open < self.policy.max_open && more && !self.policy.plans.is_empty() {
            self.pause().await;
            self.start_game(io).await?;
            return Ok(true);
        }
        if open > 0 && self.last_news.elapsed() > self.policy.look_after {
            self.look(io).await?;
            return Ok(true);
        }
        Ok(false)
    }

    async fn pause(&self) {
        if !self.policy.think.is_zero() {
            tokio::time::sleep(self.policy.think).await;
        }
    }

    /// `toolsets--look`, and beliefs replaced by what it says; true when it showed the
    /// server's state (the host was connected).
    async fn look(&mut self, io: &mut AgentIo) -> Result<bool, HostError> {
        self.last_news = Instant::now();
        let r = io.call("toolsets--look", json!({})).await?;
        self.absorb(io).await?;
        let whole = !r.is_error && self.beliefs.resync(&r.joined_text());
        if whole {
            io.saw_whole_state();
        }
        Ok(whole)
    }

    async fn act(
        &mut self,
        io: &mut AgentIo,
        key: &GameKey,
        tool: &str,
        args: Value,
    ) -> Result<CallToolResult, HostError> {
        let r = io
            .call(
                "toolsets--act",
                json!({"tool": tool, "instance": key.1, "args": args}),
            )
            .await?;
        self.absorb(io).await?;
        Ok(r)
    }

    async fn start_game(&mut self, io: &mut AgentIo) -> Result<(), HostError> {
        let plan = self.policy.plans[self.plan % self.policy.plans.len()].clone();
        self.plan += 1;
        let (opponent, game) = match plan {
            Plan::Bot(game) => (None, game),
            Plan::Challenge { opponent, game } => match opponent {
                Some(o) => (Some(o), game),
                None => (self.someone_online(io).await?, game),
            },
        };
        match opponent {
            Some(opponent) => {
                let args = json!({"tool": "challenge", "args": {"opponent": opponent, "game": game.toolset()}});
                let r = io.call("toolsets--act", args).await?;
                self.absorb(io).await?;
                let sent = r
                    .structured_content
                    .as_ref()
                    .and_then(|s| s["instance"].as_str())
                    .map(str::to_owned);
                if let (false, Some(instance)) = (r.is_error, sent) {
                    self.started += 1;
                    io.metrics().bump(|c| c.games_started += 1);
                    let key = (game.toolset().to_owned(), instance);
                    self.waiting.insert(key, Instant::now());
                }
            }
            None => {
                let instance = format!("{}-{}", &game.toolset()[..1], self.next_instance);
                self.next_instance += 1;
                let mut options = json!({"opponent": "bot"});
                if game == GameKind::Go9 {
                    options["size"] = json!(9);
                }
                let args =
                    json!({"toolset": game.toolset(), "instance": instance, "options": options});
                let r = io.call("toolsets--open", args).await?;
                self.absorb(io).await?;
                if !r.is_error {
                    self.started += 1;
                    io.metrics().bump(|c| c.games_started += 1);
                }
            }
        }
        Ok(())
    }

    /// A player the lobby lists online, chosen at random (the lobby's `games` answers with
    /// structured content). The lobby names 50 at a time: the agent asks for those after
    /// its own name, wrapping to the first page at the end, so that with thousands online
    /// challenges spread over everyone instead of the first names in order.
    async fn someone_online(&mut self, io: &mut AgentIo) -> Result<Option<String>, HostError> {
        let after = io.name().to_owned();
        let mut online = self.online_page(io, Some(&after)).await?;
        if online.is_empty() {
            online = self.online_page(io, None).await?;
        }
        Ok(random_move(&online, &mut self.rng))
    }

    /// One page of the lobby's players online, after `after` when given.
    async fn online_page(
        &mut self,
        io: &mut AgentIo,
        after: Option<&str>,
    ) -> Result<Vec<String>, HostError> {
        let args = match after {
            Some(after) => json!({"tool": "games", "args": {"online_after": after}}),
            None => json!({"tool": "games"}),
        };
        let r = io.call("toolsets--act", args).await?;
        self.absorb(io).await?;
        Ok(r.structured_content
            .as_ref()
            .and_then(|s| s["online"].as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// A move in a game where the agent believes it is its turn.
    async fn play(&mut self, io: &mut AgentIo, key: &GameKey) -> Result<(), HostError> {
        let (toolset, instance) = key;
        let play = format!("{toolset}_play");
        let legal = io
            .definition(&play, instance)
            .await?
            .map(|t| legal_moves(&t.input_schema))
            .unwrap_or_default();
        let go = toolset == "go";
        let mover = if go {
            self.policy.go
        } else {
            self.policy.tictactoe
        };
        let (my_moves, passed) = self
            .beliefs
            .games
            .get(key)
            .map(|g| (g.my_moves, g.opponent_passed))
            .unwrap_or_default();
        let choice = match mover {
            Mover::Random { pass_after } if go && (my_moves >= pass_after || legal.is_empty()) => {
                GoChoice::Pass
            }
            Mover::Random { .. } => match random_move(&legal, &mut self.rng) {
                Some(m) => GoChoice::Play(m),
                None if go => GoChoice::Pass,
                None => return self.look(io).await.map(drop),
            },
            Mover::Engine { playouts } => {
                let board = self
                    .act(io, key, &format!("{toolset}_board"), json!({}))
                    .await?;
                let board = content(&board.joined_text(), true);
                let seed: u64 = self.rng.random();
                let chosen = if go {
                    tokio::task::spawn_blocking(move || {
                        go_engine_move(&board, passed, playouts, &mut StdRng::seed_from_u64(seed))
                    })
                    .await
                    .ok()
                    .flatten()
                } else {
                    tictactoe_move(&board, &mut StdRng::seed_from_u64(seed)).map(GoChoice::Play)
                };
                match chosen {
                    Some(GoChoice::Play(p)) if !legal.is_empty() && !legal.contains(&p) => {
                        random_move(&legal, &mut self.rng).map_or(GoChoice::Pass, GoChoice::Play)
                    }
                    Some(c) => c,
                    None => {
                        random_move(&legal, &mut self.rng).map_or(GoChoice::Pass, GoChoice::Play)
                    }
                }
            }
        };
        let (tool, args) = match choice {
            GoChoice::Play(m) => (play, json!({"move": m})),
            GoChoice::Pass if go => ("go_pass".to_owned(), json!({})),
            GoChoice::Pass | GoChoice::Resign => (format!("{toolset}_resign"), json!({})),
        };
        let r = self.act(io, key, &tool, args).await?;
        if r.is_error {
            // The agent believed it was its turn: the view was stale (the change that
            // said otherwise had not reached it), or the game is over.
            io.metrics().bump(|c| c.stale_refusals += 1);
            if let Some(g) = self.beliefs.games.get_mut(key) {
                g.usable.remove(&tool);
            }
            self.look(io).await?;
        } else if let Some(g) = self.beliefs.games.get_mut(key) {
            g.my_moves += 1;
            g.opponent_passed = false;
        }
        Ok(())
    }

    /// A deliberate mistake; each must come back as a tool error.
    async fn clumsy(&mut self, io: &mut AgentIo) -> Result<(), HostError> {
        io.metrics().bump(|c| c.clumsy_calls += 1);
        let hidden = self
            .beliefs
            .open_games()
            .find(|(k, g)| k.0 == "go" && !g.usable.contains("go_play"))
            .map(|(k, _)| k.1.clone());
        let (tool, args) = match (self.rng.random_range(0..7), hidden) {
            (0, _) => ("arcade--games".to_owned(), json!({})),
            (1, _) => (
                "toolsets--act".to_owned(),
                json!({"tool": "go_play", "instance": "no-such-game", "args": {"move": "A1"}}),
            ),
            (2, _) => (
                "toolsets--act".to_owned(),
                json!({"tool": "challenge", "args": {"bogus": 1}}),
            ),
            (3, _) => (
                "toolsets--open".to_owned(),
                json!({"toolset": "go", "instance": "bad name"}),
            ),
            (4, _) => (
                "toolsets--close".to_owned(),
                json!({"toolset": "lobby", "instance": "x"}),
            ),
            (5, Some(instance)) => (
                "toolsets--act".to_owned(),
                json!({"tool": "go_play", "instance": instance, "args": {"move": "A1"}}),
            ),
            _ => ("toolsets--dance".to_owned(), json!({})),
        };
        let r = io.call(&tool, args.clone()).await?;
        self.absorb(io).await?;
        if !r.is_error {
            io.metrics().violation(format!(
                "{}: a wrong call was accepted: {tool} {args}",
                io.name()
            ));
        }
        Ok(())
    }

    fn report(&self, name: &str) -> AgentReport {
        let games = self.beliefs.game_records();
        AgentReport {
            name: name.to_owned(),
            games,
            ends_told: self.beliefs.ends_told.clone(),
            plain_closes: self.beliefs.plain_closes,
            resigns_refused: self.resign_failures.clone(),
        }
    }
}
