//! Behaviour of the bot on hand-built positions.

use rand::{SeedableRng, rngs::StdRng};

use super::*;
use crate::go::{BoardSize, Point};

const SEED: u64 = 0x5EED;

fn game(rows: [&str; 9], to_move: Color) -> Game {
    Game::from_diagram(&rows.join("\n"), to_move, 7.5)
        .unwrap_or_else(|e| panic!("bad diagram: {e}"))
}

fn pt(text: &str) -> Point {
    Point::parse(text, BoardSize::Nine).unwrap_or_else(|e| panic!("bad point {text}: {e}"))
}

fn decide(game: &Game, playouts: u32) -> Decision {
    let mut rng = StdRng::seed_from_u64(SEED);
    Bot::new().choose_move(game, Budget::playouts(playouts), &mut rng)
}

#[test]
fn captures_when_it_can() {
    let g = game(
        [
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . X . . . .",
            ". . . X O X . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . O O . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
        ],
        Color::Black,
    );
    let d = decide(&g, 100);
    assert_eq!(d.mv, Move::Play(pt("E5")), "seed {SEED}: {}", d.reason);
    assert_eq!(
        d.reason,
        Reason::Tactic {
            captured: 1,
            saved: 0
        }
    );
}

#[test]
fn prefers_the_bigger_capture() {
    let g = game(
        [
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . X . . . .",
            ". . . X O X . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". X X X . . . . .",
            "X O O O . . . . .",
            ". X X X . . . . .",
        ],
        Color::Black,
    );
    let d = decide(&g, 100);
    assert_eq!(
        d.reason,
        Reason::Tactic {
            captured: 3,
            saved: 0
        },
        "seed {SEED}"
    );
    assert_eq!(d.mv, Move::Play(pt("E2")));
}

#[test]
fn saves_a_stone_in_atari_by_extending() {
    let g = game(
        [
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . O . . . .",
            ". . . O X O . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
        ],
        Color::Black,
    );
    let d = decide(&g, 100);
    assert_eq!(d.mv, Move::Play(pt("E4")), "seed {SEED}: {}", d.reason);
    assert_eq!(
        d.reason,
        Reason::Tactic {
            captured: 0,
            saved: 1
        }
    );
}

#[test]
fn saves_a_chain_in_atari_by_capturing_an_attacker() {
    // Black E5-E6 has one liberty (E4); White D4 is itself in atari, and
    // capturing it is worth more than just extending.
    let g = game(
        [
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . O . . . .",
            ". . . O X O . . .",
            ". . . O X O . . .",
            ". . X . . X . . .",
            ". . . X O X . . .",
            ". . . . X . . . .",
            ". . . . . . . . .",
        ],
        Color::Black,
    );
    let d = decide(&g, 100);
    assert_eq!(
        d.reason,
        Reason::Tactic {
            captured: 1,
            saved: 2
        },
        "seed {SEED}: {:?}",
        d.mv
    );
    assert_eq!(d.mv, Move::Play(pt("E4")));
}

fn ladder(breaker: bool) -> Game {
    // Black C3 is in atari; extending to C4 leaves two liberties, and White
    // then chases the stones up to the left edge unless Black B5 is there.
    let row5 = if breaker {
        ". X . . . . . . ."
    } else {
        ". . . . . . . . ."
    };
    game(
        [
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            row5,
            ". . . O . . . . .",
            ". O X O . . . . .",
            ". . O . . . . . .",
            ". . . . . . . . .",
        ],
        Color::Black,
    )
}

#[test]
fn does_not_run_out_a_working_ladder() {
    let d = decide(&ladder(false), 50);
    assert!(
        !matches!(d.reason, Reason::Tactic { .. }),
        "seed {SEED}: {:?} {}",
        d.mv,
        d.reason
    );
}

#[test]
fn escapes_when_a_ladder_breaker_is_there() {
    let d = decide(&ladder(true), 50);
    assert_eq!(
        (d.mv, d.reason),
        (
            Move::Play(pt("C4")),
            Reason::Tactic {
                captured: 0,
                saved: 1
            }
        ),
        "seed {SEED}"
    );
}

#[test]
fn never_fills_its_own_eyes_and_passes_when_only_eyes_remain() {
    // Black owns the board except two true eyes; White has nothing.
    let mut rows = ["X X X X X X X X X"; 9];
    rows[0] = ". X X X X X X X .";
    let g = game(rows, Color::Black);
    let d = decide(&g, 100);
    assert_eq!((d.mv, d.reason), (Move::Pass, Reason::NoUsefulMove));
    let mut rng = StdRng::seed_from_u64(SEED);
    assert_eq!(random_move(&g, &mut rng), Move::Pass);
    // White can fill one eye (it is suicide-free only for Black... it is
    // suicide for White), so White has no move either.
    let w = game(rows, Color::White);
    assert!(w.legal_moves().is_empty());
}

#[test]
fn passes_to_win_after_the_opponent_passes() {
    let mut g = game(
        [
            ". . . . X O . . .",
            ". . . . X O . . .",
            ". . . . X O . . .",
            ". . . . X O . . .",
            ". . . . X O . . .",
            ". . . . X O . . .",
            ". . . . X O . . .",
            ". . . . X O . . .",
            ". . . . X O . . .",
        ],
        Color::White,
    );
    // Black has 45, White 36 + 7.5: after White passes, Black passes to win.
    let _ = g.play(Move::Pass);
    let d = decide(&g, 100);
    assert_eq!((d.mv, d.reason), (Move::Pass, Reason::WinningPass));
}

#[test]
fn resigns_when_hopeless_only_with_enough_evidence() {
    // White owns almost everything; Black's best hope is a 2x3 corner.
    let mut rows = ["O O O O O O O O O"; 9];
    rows[0] = "O . O O O O . O O";
    rows[4] = "O O O O . O O O O";
    rows[7] = ". . . O O O O O O";
    rows[8] = ". . . O O O O O O";
    let g = game(rows, Color::Black);
    let d = decide(&g, 4000);
    assert_eq!(d.mv, Move::Resign, "seed {SEED}: {}", d.reason);
    assert!(matches!(d.reason, Reason::Hopeless { win_rate } if win_rate < 0.03));
    // A tiny budget never resigns on noise, and neither does a bot told not to.
    assert_ne!(decide(&g, 50).mv, Move::Resign);
    let stubborn = Bot::with_config(BotConfig {
        resign_below: None,
        ..BotConfig::default()
    });
    let mut rng = StdRng::seed_from_u64(SEED);
    assert!(matches!(
        stubborn
            .choose_move(&g, Budget::playouts(4000), &mut rng)
            .mv,
        Move::Play(_)
    ));
}

#[test]
fn search_is_deterministic_for_a_seed_and_budget() {
    let mut g = Game::new(BoardSize::Nine);
    for text in ["E5", "C3", "G3", "C6"] {
        let _ = g.play(Move::parse(text, BoardSize::Nine).unwrap_or(Move::Pass));
    }
    let a = decide(&g, 300);
    let b = decide(&g, 300);
    assert_eq!(a, b);
    assert_eq!(a.playouts, 300);
    assert!(matches!(a.reason, Reason::Search { .. }));
}

#[test]
fn deadline_budget_stops_the_search() {
    let g = Game::new(BoardSize::Nine);
    let mut rng = StdRng::seed_from_u64(SEED);
    let start = Instant::now();
    let d = Bot::new().choose_move(&g, Budget::until(start), &mut rng);
    // An already-passed deadline stops before the first clock check's
    // second round: at most one batch of playouts.
    assert!(d.playouts <= 16, "{} playouts", d.playouts);
    assert!(matches!(d.mv, Move::Play(_)));
    let budget = Budget::default_9x9(start);
    assert_eq!(budget.deadline, Some(start + DEFAULT_MOVE_TIME));
}

#[test]
fn finished_games_get_a_game_over_pass() {
    let mut g = Game::new(BoardSize::Nine);
    let _ = g.play(Move::Resign);
    assert_eq!(decide(&g, 10).reason, Reason::GameOver);
}

#[test]
fn eye_detection() {
    let g = game(
        [
            ". X . X . . . . .",
            "X X X X . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". X O . . . . . .",
            "X . X . . . . . .",
        ],
        Color::Black,
    );
    let b = g.board();
    assert!(b.is_eye(b.pos(pt("A9")), Color::Black), "corner eye");
    assert!(b.is_eye(b.pos(pt("C9")), Color::Black), "edge eye");
    assert!(!b.is_eye(b.pos(pt("C9")), Color::White));
    // B1 has White C2 on a diagonal: on the edge that makes it false.
    assert!(!b.is_eye(b.pos(pt("B1")), Color::Black), "false eye");
    assert!(!b.is_eye(b.pos(pt("E9")), Color::Black), "open point");
}

#[test]
fn leaves_seki_alone() {
    // Black D9-D8-D7-E7 and White F9-F8-F7 share E9 and E8; filling either
    // gives the filler's group away.
    let rows = [
        ". . O X . O X . .",
        ". . O X . O X . .",
        ". . O X X O X . .",
        ". . O O O X X . .",
        ". . . . O X . . .",
        ". . . . O X . . .",
        ". . . . O X . . .",
        ". . . . O X . . .",
        ". . . . O X . . .",
    ];
    for color in [Color::Black, Color::White] {
        let d = decide(&game(rows, color), 200);
        assert!(
            !matches!(d.mv, Move::Play(p) if p == pt("E9") || p == pt("E8")),
            "seed {SEED}: {color} broke the seki with {} ({})",
            d.mv,
            d.reason
        );
    }
}

#[test]
fn passes_when_only_group_losing_moves_remain() {
    // Black's two groups are alive with two eyes each, except that the
    // only other empty points are the seki's shared liberties.
    let rows = [
        "O O O X . O X . X",
        "O . O X . O X X X",
        "O O O X X O X . X",
        "O O O O O X X X X",
        "O O O O O X X X X",
        "O O . O O X X X X",
        "O O O O O X X X X",
        "O O O O O X X X X",
        "O O O O O X X X X",
    ];
    let g = game(rows, Color::Black);
    let d = decide(&g, 200);
    assert_eq!(
        (d.mv, d.reason),
        (Move::Pass, Reason::NoUsefulMove),
        "seed {SEED}"
    );
}

#[test]
fn zero_budget_still_moves() {
    let g = Game::new(BoardSize::Nine);
    let d = decide(&g, 0);
    assert_eq!((d.reason, d.playouts), (Reason::Unsearched, 0));
    assert!(matches!(d.mv, Move::Play(_)));
}

#[test]
fn never_fills_own_eyes_in_real_games() {
    for game_index in 0..4u64 {
        let seed = SEED + game_index;
        let mut rng = StdRng::seed_from_u64(seed);
        let mut g = Game::new(BoardSize::Nine);
        let bot = Bot::new();
        while !g.is_over() && g.history().len() < 400 {
            let me = g.to_move();
            let mv = if me == Color::Black {
                bot.choose_move(&g, Budget::playouts(32), &mut rng).mv
            } else {
                random_move(&g, &mut rng)
            };
            if let Move::Play(p) = mv {
                let b = g.board();
                assert!(
                    !b.is_eye(b.pos(p), me),
                    "seed {seed}: {me} filled its eye at {p}"
                );
            }
            if let Err(e) = g.play(mv) {
                panic!("seed {seed}: {mv}: {e}");
            }
        }
        assert!(g.is_over(), "seed {seed}: game did not end");
    }
}
