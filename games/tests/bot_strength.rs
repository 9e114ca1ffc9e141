//! The bot must clearly beat a uniformly random (non-eye-filling) mover.

use std::time::Instant;

use mcpl_games::bot::{Bot, Budget, random_move};
use mcpl_games::go::{BoardSize, Color, Game, render_ascii};
use rand::{SeedableRng, rngs::StdRng};

/// Master seed; game `i` uses `SEED + i`, so any single game can be replayed.
const SEED: u64 = 20_250_601;
const GAMES: u64 = 100;
const REQUIRED_WINS: u32 = 95;
/// Small enough that the 100 games take a few seconds, large enough that
/// the search (not just the tactics) does real work.
const PLAYOUTS: u32 = 128;
/// Far beyond any real 9×9 game; reaching it means passing is broken.
const MAX_PLIES: usize = 600;

#[test]
fn bot_beats_a_random_mover_on_9x9() {
    let started = Instant::now();
    let bot = Bot::new();
    let mut wins = 0;
    let mut losses = Vec::new();
    let mut plies = 0;
    for i in 0..GAMES {
        let seed = SEED + i;
        let mut rng = StdRng::seed_from_u64(seed);
        // Alternate colours so komi favours neither side of the comparison.
        let bot_color = if i % 2 == 0 {
            Color::Black
        } else {
            Color::White
        };
        let mut game = Game::new(BoardSize::Nine);
        while !game.is_over() {
            assert!(
                game.history().len() < MAX_PLIES,
                "seed {seed}: game did not end\n{}",
                render_ascii(&game)
            );
            let mv = if game.to_move() == bot_color {
                bot.choose_move(&game, Budget::playouts(PLAYOUTS), &mut rng)
                    .mv
            } else {
                random_move(&game, &mut rng)
            };
            if let Err(e) = game.play(mv) {
                panic!(
                    "seed {seed}: illegal {mv} from {}: {e}\n{}",
                    game.to_move(),
                    render_ascii(&game)
                );
            }
        }
        plies += game.history().len();
        let result = game
            .result()
            .unwrap_or_else(|| panic!("seed {seed}: over but no result"));
        if result.winner == Some(bot_color) {
            wins += 1;
        } else {
            losses.push(format!(
                "seed {seed} (bot {bot_color}): {result}\n{}",
                render_ascii(&game)
            ));
        }
    }
    println!(
        "bot vs random on 9x9: seed {SEED}, {PLAYOUTS} playouts/move, bot won {wins}/{GAMES}, \
         {plies} plies, {:.1?}",
        started.elapsed()
    );
    for loss in &losses {
        println!("{loss}");
    }
    assert!(
        wins >= REQUIRED_WINS,
        "seed {SEED}: bot won only {wins}/{GAMES}"
    );
}
