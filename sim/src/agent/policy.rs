//! What a scripted agent sets out to do: how it chooses moves, which games it starts,
//! whether it accepts invitations, and how often it makes deliberate mistakes.

use std::time::Duration;

/// A game the arcade offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameKind {
    /// Go on 9×9.
    Go9,
    /// Tic-tac-toe.
    TicTacToe,
}

impl GameKind {
    /// The arcade's toolset.
    pub fn toolset(self) -> &'static str {
        match self {
            GameKind::Go9 => "go",
            GameKind::TicTacToe => "tictactoe",
        }
    }

    /// The kind a toolset is.
    pub fn of(toolset: &str) -> Option<GameKind> {
        match toolset {
            "go" => Some(GameKind::Go9),
            "tictactoe" => Some(GameKind::TicTacToe),
            _ => None,
        }
    }
}

/// How moves are chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mover {
    /// A random move from the `play` tool's current definition (its legal-move enum); in
    /// Go it passes once it has made `pass_after` moves, so games end.
    Random {
        /// Go moves before it only passes.
        pass_after: u32,
    },
    /// The arcade's engines (Go: the bot's search with this many playouts; tic-tac-toe:
    /// perfect play) on the position the game's `board` tool shows.
    Engine {
        /// Go playouts per move.
        playouts: u32,
    },
}

/// A game to start when the agent has room for one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Open a game against the arcade's bot.
    Bot(GameKind),
    /// Challenge a player through the lobby: the one named, or anyone online.
    Challenge {
        /// Whom (None: someone the lobby lists as online).
        opponent: Option<String>,
        /// Which game.
        game: GameKind,
    },
}

/// A scripted agent's behaviour.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// How Go moves are chosen.
    pub go: Mover,
    /// How tic-tac-toe moves are chosen.
    pub tictactoe: Mover,
    /// Games to start, in order, cycling.
    pub plans: Vec<Plan>,
    /// How many games to start in all (None: until the run drains).
    pub games: Option<u32>,
    /// Games open at once.
    pub max_open: usize,
    /// The chance of accepting an invitation (else it is declined).
    pub accept: f64,
    /// The chance, per decision, of a deliberate mistake (a wrong call).
    pub clumsy: f64,
    /// How long a challenge waits for its opponent before it is withdrawn.
    pub patience: Duration,
    /// How long without news on an open game before the agent looks again.
    pub look_after: Duration,
    /// A pause before each action, like a model's thinking time.
    pub think: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            go: Mover::Random { pass_after: 30 },
            tictactoe: Mover::Random { pass_after: 0 },
            plans: Vec::new(),
            games: None,
            max_open: 1,
            accept: 1.0,
            clumsy: 0.0,
            patience: Duration::from_secs(10),
            look_after: Duration::from_secs(3),
            think: Duration::ZERO,
        }
    }
}

impl Policy {
    /// Plays legal moves at random, against the bot.
    pub fn random(game: GameKind) -> Self {
        Policy {
            plans: vec![Plan::Bot(game)],
            ..Default::default()
        }
    }

    /// Delegates to the arcade's engines for strength, against the bot.
    pub fn engine(game: GameKind, playouts: u32) -> Self {
        Policy {
            go: Mover::Engine { playouts },
            tictactoe: Mover::Engine { playouts },
            plans: vec![Plan::Bot(game)],
            ..Default::default()
        }
    }

    /// Challenges others through the lobby (`opponent`, or anyone online) and accepts
    /// invitations with chance `accept`.
    pub fn social(game: GameKind, opponent: Option<String>, accept: f64) -> Self {
        Policy {
            plans: vec![Plan::Challenge { opponent, game }],
            accept,
            ..Default::default()
        }
    }

    /// Waits for invitations only, accepting with chance `accept`.
    pub fn host(accept: f64) -> Self {
        Policy {
            accept,
            ..Default::default()
        }
    }

    /// Makes a wrong call with chance `rate` per decision (invisible tools, unknown
    /// instances, bad arguments), besides playing the bot at random.
    pub fn clumsy(game: GameKind, rate: f64) -> Self {
        Policy {
            clumsy: rate,
            ..Self::random(game)
        }
    }

    /// With at most `n` games started.
    pub fn games(mut self, n: u32) -> Self {
        self.games = Some(n);
        self
    }

    /// With this mover for both games.
    pub fn mover(mut self, m: Mover) -> Self {
        self.go = m;
        self.tictactoe = m;
        self
    }
}
