//! Rules, parsing, rendering and the perfect bot.

use proptest::prelude::*;
use rand::{SeedableRng, rngs::StdRng};

use super::*;

fn cell(text: &str) -> Cell {
    Cell::parse(text).unwrap_or_else(|e| panic!("bad test cell {text:?}: {e}"))
}

fn game_from(moves: &[&str]) -> Game {
    let mut game = Game::new();
    for m in moves {
        game.play(cell(m)).unwrap_or_else(|e| panic!("{m}: {e}"));
    }
    game
}

#[test]
fn parses_cells() {
    assert_eq!(cell("a1"), Cell::ALL[0]);
    assert_eq!(cell(" C3 "), Cell::ALL[8]);
    assert_eq!(cell("b2").to_string(), "b2");
    assert_eq!(Cell::parse(""), Err(ParseCellError::Empty));
    assert_eq!(Cell::parse("d1"), Err(ParseCellError::InvalidColumn('d')));
    assert_eq!(
        Cell::parse("a4"),
        Err(ParseCellError::InvalidRow("4".into()))
    );
    assert_eq!(
        Cell::parse("a"),
        Err(ParseCellError::InvalidRow(String::new()))
    );
    assert_eq!(Cell::parse("5"), Err(ParseCellError::InvalidColumn('5')));
    for c in Cell::ALL {
        assert_eq!(Cell::parse(&c.to_string()), Ok(c));
        assert_eq!(Cell::new(c.col(), c.row()), Some(c));
    }
    assert_eq!(Cell::new(3, 0), None);
}

proptest! {
    #[test]
    fn cell_parser_never_panics(text in any::<String>()) {
        let _ = Cell::parse(&text);
    }
}

#[test]
fn wins_draws_and_illegal_moves() {
    let mut game = game_from(&["a1", "b1", "a2", "b2"]);
    assert_eq!(
        game.play(cell("b1")),
        Err(IllegalMove::Occupied(cell("b1")))
    );
    game.play(cell("a3")).unwrap_or_else(|e| panic!("{e}"));
    let result = game.result().unwrap_or_else(|| panic!("X has a column"));
    assert_eq!(result.text, "X wins");
    assert_eq!(result.line, Some([cell("a1"), cell("a2"), cell("a3")]));
    assert_eq!(game.play(cell("c3")), Err(IllegalMove::GameOver));
    assert!(game.legal_moves().is_empty());

    let draw = game_from(&["a1", "b2", "c3", "b1", "b3", "a3", "c1", "c2", "a2"]);
    assert_eq!(draw.result().map(|r| r.text), Some("Draw".to_owned()));

    let o_wins = game_from(&["a1", "a3", "b1", "b2", "a2", "c1"]);
    assert_eq!(
        o_wins.result().map(|r| (r.winner, r.text)),
        Some((Some(Mark::O), "O wins".to_owned()))
    );
}

#[test]
fn renders_the_documented_layout() {
    let game = game_from(&["a3", "c3", "b2", "c1"]);
    assert_eq!(
        render_ascii(&game),
        " 3  X | . | O\n   ---+---+---\n 2  . | X | .\n   ---+---+---\n 1  . | . |(O)\n    a   b   c\nX to move\n"
    );
    let won = game_from(&["a1", "b1", "a2", "b2", "a3"]);
    assert!(render_ascii(&won).ends_with("    a   b   c\nX wins\n"));
    // The last mark in the first column: the row keeps its width.
    assert!(
        render_ascii(&won).starts_with(" 3 (X)| . | .\n"),
        "{}",
        render_ascii(&won)
    );
    assert_eq!(
        render_ascii(&Game::new()).lines().next(),
        Some(" 3  . | . | .")
    );
}

#[test]
fn values_of_known_positions() {
    assert_eq!(value(&Game::new()), 0, "perfect play draws");
    // X to move with two in a row wins at once: 6 empty cells remain after.
    let threat = game_from(&["a1", "b3", "b1", "c3"]);
    assert_eq!(best_moves(&threat), vec![cell("c1")]);
    assert_eq!(value(&threat), 5);
    // The immediate win beats the block O would otherwise need.
    let race = game_from(&["a1", "a3", "b1", "b3"]);
    assert_eq!(best_moves(&race), vec![cell("c1")]);
    // O must block.
    let block = game_from(&["a1", "b2", "b1"]);
    assert_eq!(best_moves(&block), vec![cell("c1")]);
}

/// Every line of play where the bot (playing `bot`) follows any of its best
/// moves and the opponent tries everything; returns (wins, draws) and
/// panics on a loss.
fn explore(game: &mut Game, bot: Mark, tally: &mut (u32, u32)) {
    if let Some(result) = game.result() {
        match result.winner {
            Some(w) if w == bot => tally.0 += 1,
            Some(_) => panic!(
                "bot {bot} lost: {:?}\n{}",
                game.history(),
                render_ascii(game)
            ),
            None => tally.1 += 1,
        }
        return;
    }
    let moves = if game.to_move() == bot {
        let best = best_moves(game);
        // Converting a won position is part of perfect play.
        let before = value(game);
        for &m in &best {
            let mut next = game.clone();
            let _ = next.play(m);
            assert_eq!(
                -value(&next),
                before,
                "{m} throws away value at {:?}",
                game.history()
            );
        }
        best
    } else {
        game.legal_moves()
    };
    for m in moves {
        let mut next = game.clone();
        next.play(m).unwrap_or_else(|e| panic!("{e}"));
        explore(&mut next, bot, tally);
    }
}

#[test]
fn bot_never_loses_against_any_line() {
    for bot in [Mark::X, Mark::O] {
        let mut tally = (0, 0);
        explore(&mut Game::new(), bot, &mut tally);
        println!(
            "bot {bot}: {} wins, {} draws over every opponent line",
            tally.0, tally.1
        );
        assert!(tally.0 > 0 && tally.1 > 0);
    }
}

#[test]
fn bot_beats_a_random_mover() {
    const SEED: u64 = 0x7717;
    let mut rng = StdRng::seed_from_u64(SEED);
    let mut wins = [0u32; 2];
    for i in 0..400 {
        let bot = if i % 2 == 0 { Mark::X } else { Mark::O };
        let mut game = Game::new();
        while !game.is_over() {
            let m = if game.to_move() == bot {
                choose_move(&game, &mut rng)
            } else {
                let legal = game.legal_moves();
                legal
                    .get(rand::Rng::random_range(&mut rng, 0..legal.len().max(1)))
                    .copied()
            };
            let m = m.unwrap_or_else(|| panic!("seed {SEED}: no move in an open game"));
            game.play(m).unwrap_or_else(|e| panic!("seed {SEED}: {e}"));
        }
        match game.winner() {
            Some(w) if w == bot => wins[i % 2] += 1,
            Some(_) => panic!("seed {SEED}: bot lost game {i}: {:?}", game.history()),
            None => {}
        }
    }
    println!(
        "seed {SEED}: bot won {} of 200 as X and {} of 200 as O",
        wins[0], wins[1]
    );
    // A random opponent blunders often; the bot must punish most of it.
    assert!(wins[0] >= 180 && wins[1] >= 120, "seed {SEED}: {wins:?}");
}
