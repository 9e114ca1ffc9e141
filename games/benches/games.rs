//! Benchmarks: Go legal-move generation and bot moves on 9×9, and what the arcade adds
//! per turn: `go_play`'s per-instance definition (the legal points as an enum) and
//! tic-tac-toe's instant bot move.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use mcpl_games::arcade::{GoRules, Rules, TicTacToeRules};
use mcpl_games::bot::{Bot, Budget, Reason};
use mcpl_games::go::{BoardSize, Game};
use rand::{SeedableRng, rngs::StdRng};

const SEED: u64 = 42;

/// A reproducible 9×9 middle game: 30 moves of the bot playing itself on
/// a small budget, continued until the side to move has no tactical
/// shortcut, so that a bot move really runs the search.
fn mid_game() -> Game {
    let mut rng = StdRng::seed_from_u64(SEED);
    let bot = Bot::new();
    let mut game = Game::new(BoardSize::Nine);
    loop {
        let decision = bot.choose_move(&game, Budget::playouts(64), &mut rng);
        let searched = matches!(decision.reason, Reason::Search { .. });
        if game.history().len() >= 30 && searched
            || game.play(decision.mv).is_err()
            || game.is_over()
        {
            return game;
        }
    }
}

fn go_benches(c: &mut Criterion) {
    let game = mid_game();
    println!(
        "mid-game position after {} moves:\n{}",
        game.history().len(),
        mcpl_games::go::render_ascii(&game)
    );
    c.bench_function("go 9x9 legal_moves (mid-game)", |b| {
        b.iter(|| black_box(&game).legal_moves())
    });
    let rules = GoRules::from(game.clone());
    c.bench_function("go 9x9 go_play definition (mid-game)", |b| {
        b.iter(|| black_box(&rules).play_schema())
    });
    let settings = mcpl_games::arcade::BotSettings::default();
    let ttt = TicTacToeRules::default();
    c.bench_function("tictactoe bot move (empty board)", |b| {
        b.iter(|| black_box(&ttt).bot(&settings, 1).is_some())
    });

    let bot = Bot::new();
    for playouts in [1_000u32, 5_000] {
        c.bench_function(&format!("go 9x9 bot move, {playouts} playouts"), |b| {
            let mut rng = StdRng::seed_from_u64(SEED);
            b.iter(|| bot.choose_move(black_box(&game), Budget::playouts(playouts), &mut rng))
        });
    }

    // The arcade's 200 ms deadline: time is fixed, so report how much
    // search fits in it instead of timing it.
    let mut rng = StdRng::seed_from_u64(SEED);
    for (name, position) in [
        ("empty board", Game::new(BoardSize::Nine)),
        ("mid-game", game.clone()),
    ] {
        let runs = 3;
        let total: u32 = (0..runs)
            .map(|_| {
                bot.choose_move(&position, Budget::default_9x9(Instant::now()), &mut rng)
                    .playouts
            })
            .sum();
        println!(
            "go 9x9 bot move, default 200 ms budget, {name}: {} playouts on average",
            total / runs
        );
    }
}

criterion_group!(benches, go_benches);
criterion_main!(benches);
