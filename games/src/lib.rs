//! Game logic for the MCPL arcade — rules, rendering and bots — and the arcade itself.
//!
//! The pure modules ([`go`], [`bot`], [`tictactoe`]) perform no I/O, spawn no
//! tasks and read no random source of their own. Randomness comes from a caller-supplied
//! [`rand::Rng`], and search budgets (playout counts and an optional
//! deadline) are passed in, so every result is reproducible from a seed.
//! The only clock use is comparing [`std::time::Instant::now`] with a
//! deadline the caller chose.
//!
//! # Layout
//!
//! - [`go`] — the game of Go on 9×9, 13×13 and 19×19 boards:
//!   - `go/coord.rs`: [`go::BoardSize`], [`go::Color`], [`go::Point`],
//!     [`go::Move`] and the text form of moves (`D4`, `pass`, `resign`);
//!   - `go/zobrist.rs`: compile-time Zobrist keys for position hashing;
//!   - `go/board.rs`: [`go::Board`], stones, chains, liberties, captures;
//!   - `go/score.rs`: area scoring ([`go::AreaScore`]);
//!   - `go/game.rs`: [`go::Game`], turn order, positional superko, passes,
//!     resignation and the [`go::GameResult`];
//!   - `go/setup.rs`: building a position from a text diagram;
//!   - `go/render.rs` and `go/svg.rs`: [`go::render_ascii`] and
//!     [`go::render_svg`].
//! - [`bot`] — a Go opponent for beginners:
//!   - `bot/mod.rs`: [`bot::Bot`], [`bot::Budget`], [`bot::Decision`] and
//!     [`bot::random_move`];
//!   - `bot/tactics.rs`: capture, escape from atari, ladder reading;
//!   - `bot/search.rs`: flat Monte-Carlo search (UCB with AMAF/RAVE);
//!   - `bot/playout.rs`: random playouts that never fill own eyes;
//!   - `bot/fastrng.rs`: the playout generator, seeded from the caller's RNG.
//! - [`tictactoe`] — noughts and crosses:
//!   - `tictactoe/mod.rs`: cells `a1`..`c3`, [`tictactoe::Game`],
//!     [`tictactoe::render_ascii`];
//!   - `tictactoe/bot.rs`: perfect play by memoised negamax.
//! - [`arcade`] — the arcade server on the `mcpl-server` SDK: the lobby,
//!   Go and tic-tac-toe toolsets, two-player tables with the bot or another
//!   principal, the listeners (`mcpl-arcade serve`), and positions from text
//!   for SVG pictures (`mcpl-arcade render`). It is the one part with I/O:
//!   actors, transports, and the bot's search on a blocking thread.
#![warn(missing_docs)]

pub mod arcade;
pub mod bot;
pub mod go;
pub mod tictactoe;
