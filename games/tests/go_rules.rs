//! Go rules checked against hand-built positions with known answers.

use mcpl_games::go::{
    BoardSize, Color, Game, GameResult, IllegalMove, Move, MoveOutcome, Point, WinBy, render_ascii,
    render_svg,
};

fn pt(text: &str) -> Point {
    Point::parse(text, BoardSize::Nine).unwrap_or_else(|e| panic!("bad test point {text:?}: {e}"))
}

fn from_rows(rows: [&str; 9], to_move: Color) -> Game {
    Game::from_diagram(&rows.join("\n"), to_move, 7.5)
        .unwrap_or_else(|e| panic!("bad test diagram: {e}"))
}

fn play(game: &mut Game, text: &str) -> MoveOutcome {
    let mv =
        Move::parse(text, game.size()).unwrap_or_else(|e| panic!("bad test move {text:?}: {e}"));
    game.play(mv)
        .unwrap_or_else(|e| panic!("{text} should be legal: {e}"))
}

fn refused(game: &mut Game, text: &str) -> IllegalMove {
    let mv =
        Move::parse(text, game.size()).unwrap_or_else(|e| panic!("bad test move {text:?}: {e}"));
    match game.play(mv) {
        Ok(_) => panic!("{text} should have been refused\n{}", render_ascii(game)),
        Err(e) => e,
    }
}

fn points(list: &[&str]) -> Vec<Point> {
    list.iter().map(|s| pt(s)).collect()
}

fn finished(game: &Game) -> GameResult {
    game.result()
        .unwrap_or_else(|| panic!("game should be over\n{}", render_ascii(game)))
}

#[test]
fn single_stone_capture() {
    let mut game = from_rows(
        [
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . X . . . .",
            ". . . X O X . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
        ],
        Color::Black,
    );
    let outcome = play(&mut game, "E4");
    assert_eq!(outcome.captured, points(&["E5"]));
    assert_eq!(game.board().get(pt("E5")), None);
    assert_eq!(game.captures(Color::Black), 1);
    assert_eq!(game.captures(Color::White), 0);
    assert_eq!(game.to_move(), Color::White);
}

#[test]
fn multi_stone_group_capture() {
    let mut game = from_rows(
        [
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . X X X . . .",
            ". . X O O O X . .",
            ". . . X . X . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
        ],
        Color::Black,
    );
    let outcome = play(&mut game, "E4");
    assert_eq!(outcome.captured, points(&["D5", "E5", "F5"]));
    assert_eq!(game.captures(Color::Black), 3);
    // The captured points are liberties again: White may play there.
    assert!(game.legal_moves().contains(&pt("E5")));
}

#[test]
fn corner_and_edge_captures() {
    let mut game = from_rows(
        [
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . X . . . .",
            "O X . X O O X . .",
        ],
        Color::Black,
    );
    assert_eq!(play(&mut game, "A2").captured, points(&["A1"]));
    play(&mut game, "pass");
    assert_eq!(play(&mut game, "F2").captured, points(&["E1", "F1"]));
    assert_eq!(game.captures(Color::Black), 3);
}

#[test]
fn suicide_is_refused() {
    let mut game = from_rows(
        [
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            "X . . . X X . . .",
            ". X . X O . X . .",
        ],
        Color::White,
    );
    assert_eq!(refused(&mut game, "A1"), IllegalMove::Suicide(pt("A1")));
    // Filling the last liberty of one's own chain is suicide too.
    assert_eq!(refused(&mut game, "F1"), IllegalMove::Suicide(pt("F1")));
    assert!(!game.legal_moves().contains(&pt("A1")));
    assert!(!game.legal_moves().contains(&pt("F1")));
    // A refused move changes nothing.
    assert_eq!(game.to_move(), Color::White);
    assert!(game.history().is_empty());
}

#[test]
fn capture_that_looks_like_suicide_is_allowed() {
    let mut game = from_rows(
        [
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            "X . . . . . . . .",
            "O X . . . . . . .",
            ". O X . . . . . .",
        ],
        Color::Black,
    );
    assert!(game.legal_moves().contains(&pt("A1")));
    let outcome = play(&mut game, "A1");
    assert_eq!(outcome.captured, points(&["B1", "A2"]));
}

#[test]
fn occupied_and_off_board_are_refused() {
    let mut game = Game::new(BoardSize::Nine);
    play(&mut game, "E5");
    assert_eq!(refused(&mut game, "E5"), IllegalMove::Occupied(pt("E5")));
    let off = Point::new(9, 0);
    assert_eq!(
        game.play(Move::Play(off)),
        Err(IllegalMove::OffBoard {
            point: off,
            size: BoardSize::Nine
        })
    );
}

fn ko_position() -> Game {
    from_rows(
        [
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . X O . . . .",
            ". . X O . O . . .",
            ". . . X O . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
        ],
        Color::Black,
    )
}

#[test]
fn simple_ko_is_refused_then_allowed_after_a_threat() {
    let mut game = ko_position();
    assert_eq!(play(&mut game, "E4").captured, points(&["D4"]));
    assert_eq!(refused(&mut game, "D4"), IllegalMove::Ko(pt("D4")));
    assert!(!game.legal_moves().contains(&pt("D4")));
    play(&mut game, "J9"); // White's ko threat
    play(&mut game, "J8"); // Black answers instead of ending the ko
    assert_eq!(play(&mut game, "D4").captured, points(&["E4"]));
    // Now it is Black who must wait.
    assert_eq!(refused(&mut game, "E4"), IllegalMove::Ko(pt("E4")));
}

#[test]
fn a_pass_does_not_lift_the_ko_ban_by_itself() {
    let mut game = ko_position();
    play(&mut game, "E4");
    play(&mut game, "pass");
    play(&mut game, "pass");
    assert!(game.is_over(), "two passes end the game even during a ko");
}

#[test]
fn positional_superko_forbids_a_triple_ko_cycle() {
    // Three kos: A (bottom left) and C (top left) where Black can take, B
    // (bottom right) where White can take. Each move below is a plain ko
    // capture that simple ko allows, but the sixth would restore the
    // starting position.
    let mut game = from_rows(
        [
            "X O . O . . . . .",
            ". X O . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
            ". X O . . . X O .",
            "X O . O . X . X O",
        ],
        Color::Black,
    );
    let cycle = [
        ("C1", "B1"),
        ("G1", "H1"),
        ("C9", "B9"),
        ("B1", "C1"),
        ("H1", "G1"),
    ];
    for (mv, taken) in cycle {
        assert_eq!(play(&mut game, mv).captured, points(&[taken]), "move {mv}");
    }
    assert_eq!(refused(&mut game, "B9"), IllegalMove::Superko(pt("B9")));
    assert!(!game.legal_moves().contains(&pt("B9")));
    assert_eq!(game.to_move(), Color::White);
}

#[test]
fn seki_shared_liberties_count_for_nobody() {
    // Black D9-D8-D7-E7 and White F9-F8-F7 share E9 and E8 and have no
    // eyes: whoever fills a shared point is captured, so both live.
    let seki = from_rows(
        [
            ". . O X . O X . .",
            ". . O X . O X . .",
            ". . O X X O X . .",
            ". . O O O X X . .",
            ". . . . O X . . .",
            ". . . . O X . . .",
            ". . . . O X . . .",
            ". . . . O X . . .",
            ". . . . O X . . .",
        ],
        Color::Black,
    );

    let mut filled = seki.clone();
    play(&mut filled, "E9");
    assert_eq!(
        play(&mut filled, "E8").captured,
        points(&["D7", "E7", "D8", "D9", "E9"])
    );

    let mut game = seki;
    play(&mut game, "pass");
    play(&mut game, "pass");
    let result = finished(&game);
    let score = result.score.expect("a counted game has a score");
    assert_eq!(
        (score.black_area, score.white_area, score.neutral),
        (37, 42, 2)
    );
    assert_eq!(result.winner, Some(Color::White));
    assert_eq!(result.how, WinBy::Score(12.5));
    assert_eq!(result.text, "White wins by 12.5");
}

#[test]
fn finished_game_is_scored_by_area_with_komi() {
    let mut game = Game::new(BoardSize::Nine);
    for row in 1..=9 {
        play(&mut game, &format!("E{row}"));
        play(&mut game, &format!("F{row}"));
    }
    // White invades Black's side and is captured; area is unchanged by the
    // prisoner, unlike territory scoring.
    for mv in ["B1", "B2", "A2", "pass", "B3", "pass"] {
        play(&mut game, mv);
    }
    let outcome = play(&mut game, "C2");
    assert_eq!(outcome.captured, points(&["B2"]));
    assert!(!outcome.game_over);
    play(&mut game, "pass");
    let last = play(&mut game, "pass");
    assert!(last.game_over);
    let result = finished(&game);
    let score = result.score.expect("counted");
    assert_eq!(
        (score.black_area, score.white_area, score.neutral),
        (45, 36, 0)
    );
    assert_eq!(result.winner, Some(Color::Black));
    assert_eq!(result.text, "Black wins by 1.5");
    assert_eq!(game.captures(Color::Black), 1);
}

#[test]
fn two_passes_end_the_game() {
    let mut game = Game::new(BoardSize::Nine);
    play(&mut game, "pass");
    assert!(!game.is_over());
    assert!(game.result().is_none());
    play(&mut game, "C3"); // White's stone between passes resets the count
    play(&mut game, "pass");
    assert!(!game.is_over());
    play(&mut game, "pass");
    assert!(game.is_over());
    assert!(game.legal_moves().is_empty());
    assert_eq!(refused(&mut game, "D4"), IllegalMove::GameOver);
    assert_eq!(game.play(Move::Pass), Err(IllegalMove::GameOver));
    // One White stone owns the whole board: 81 plus 7.5 komi against 0.
    assert_eq!(finished(&game).text, "White wins by 88.5");
}

#[test]
fn empty_board_goes_to_white_on_komi_and_whole_komi_can_draw() {
    let mut game = Game::new(BoardSize::Nine);
    play(&mut game, "pass");
    play(&mut game, "pass");
    assert_eq!(finished(&game).text, "White wins by 7.5");

    let mut draw = Game::with_komi(BoardSize::Nine, 0.0);
    play(&mut draw, "pass");
    play(&mut draw, "pass");
    let result = finished(&draw);
    assert_eq!(
        (result.winner, result.how, result.text.as_str()),
        (None, WinBy::Score(0.0), "Draw (jigo)")
    );
}

#[test]
fn resignation() {
    let mut game = Game::new(BoardSize::Thirteen);
    play(&mut game, "D4");
    let outcome = play(&mut game, "resign");
    assert!(outcome.game_over);
    let result = finished(&game);
    assert_eq!(result.winner, Some(Color::Black));
    assert_eq!(result.how, WinBy::Resignation);
    assert_eq!(result.text, "Black wins by resignation");
    assert_eq!(game.play(Move::Resign), Err(IllegalMove::GameOver));
}

#[test]
fn legal_moves_are_row_major_from_a1() {
    for size in BoardSize::ALL {
        let game = Game::new(size);
        let moves = game.legal_moves();
        assert_eq!(moves.len(), size.points());
        assert_eq!(moves[0], Point::new(0, 0));
        assert_eq!(moves[1], Point::new(1, 0));
        let n = size.lines();
        assert_eq!(moves[usize::from(n)], Point::new(0, 1));
        assert!(
            moves
                .windows(2)
                .all(|w| (w[0].row(), w[0].col()) < (w[1].row(), w[1].col()))
        );
    }
}

#[test]
fn history_and_last_move() {
    let mut game = Game::new(BoardSize::Nineteen);
    assert_eq!(game.last_move(), None);
    play(&mut game, "Q16");
    play(&mut game, "pass");
    assert_eq!(game.history().len(), 2);
    assert_eq!(game.history()[0].to_string(), "Black Q16");
    assert_eq!(
        game.last_move().map(|m| m.to_string()),
        Some("White pass".to_owned())
    );
}

#[test]
fn setup_rejects_bad_diagrams() {
    use mcpl_games::go::SetupError;
    assert!(matches!(
        Game::from_diagram(". . .\n. . .", Color::Black, 7.5),
        Err(SetupError::Size(_))
    ));
    let mut rows = [". . . . . . . . ."; 9];
    rows[3] = ". . . . . . . .";
    assert!(matches!(
        Game::from_diagram(&rows.join("\n"), Color::Black, 7.5),
        Err(SetupError::RaggedRow {
            row: 4,
            found: 8,
            expected: 9
        })
    ));
    rows[3] = ". . . . Z . . . .";
    assert_eq!(
        Game::from_diagram(&rows.join("\n"), Color::Black, 7.5).err(),
        Some(SetupError::BadChar('Z'))
    );
    rows[3] = ". . . . . . . . .";
    rows[7] = "X . . . . . . . .";
    rows[8] = "O X . . . . . . .";
    assert_eq!(
        Game::from_diagram(&rows.join("\n"), Color::Black, 7.5).err(),
        Some(SetupError::NoLiberties(pt("A1")))
    );
}

#[test]
fn ascii_rendering_matches_the_documented_layout() {
    let mut game = Game::new(BoardSize::Nine);
    play(&mut game, "E5");
    let expected = "   A B C D E F G H J
 9 . . . . . . . . .  9
 8 . . . . . . . . .  8
 7 . . + . . . + . .  7
 6 . . . . . . . . .  6
 5 . . . .(X). . . .  5
 4 . . . . . . . . .  4
 3 . . + . . . + . .  3
 2 . . . . . . . . .  2
 1 . . . . . . . . .  1
   A B C D E F G H J
Captures: Black (X) 0, White (O) 0
Last move: Black E5
White (O) to move
";
    assert_eq!(render_ascii(&game), expected);
}

#[test]
fn ascii_rendering_marks_edges_and_results() {
    let mut game = Game::new(BoardSize::Nineteen);
    play(&mut game, "T19");
    play(&mut game, "A1");
    let text = render_ascii(&game);
    assert!(
        text.contains("19 . . . . . . . . . . . . . . . . . . X  19\n"),
        "{text}"
    );
    assert!(
        text.contains(" 1(O). . . . . . . . . . . . . . . . . .  1\n"),
        "{text}"
    );
    assert!(
        text.contains("16 . . . + . . . . . + . . . . . + . . .  16\n"),
        "{text}"
    );
    play(&mut game, "resign");
    let text = render_ascii(&game);
    assert!(
        text.contains(" 1 O . . ."),
        "a resignation marks no stone: {text}"
    );
    assert!(
        text.ends_with("Last move: Black resign\nGame over: White wins by resignation\n"),
        "{text}"
    );
    let mut edge = Game::new(BoardSize::Nine);
    play(&mut edge, "J1");
    assert!(render_ascii(&edge).contains(" 1 . . . . . . . .(X) 1\n"));
}

#[test]
fn svg_rendering_is_a_complete_document() {
    let mut game = Game::new(BoardSize::Nine);
    play(&mut game, "E5");
    play(&mut game, "C3");
    let svg = render_svg(&game);
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.ends_with("</svg>\n"));
    assert_eq!(svg.matches("url(#black-stone)").count(), 1);
    assert_eq!(svg.matches("url(#white-stone)").count(), 1);
    assert_eq!(
        svg.matches("fill=\"none\"").count(),
        1,
        "one last-move marker"
    );
    assert_eq!(svg.matches("<line ").count(), 18);
    assert!(svg.contains(">J</text>") && svg.contains(">9</text>"));
    assert!(!svg.contains(">I</text>"));
    assert!(svg.contains("Black to move"));
    // Every opened element is closed.
    let opened = svg.matches('<').count();
    let closed = svg.matches("/>").count() + svg.matches("</").count() * 2;
    assert_eq!(opened, closed);
}

#[test]
fn issue43_02_the_go_picture_shows_its_labels_over_the_stones_and_its_result_and_count() {
    // Stones on the edge lines, where the coordinates sit beside them.
    let mut game = Game::new(BoardSize::Nine);
    for mv in ["A1", "J9", "E1", "A5", "pass", "pass"] {
        play(&mut game, mv);
    }
    let result = game.result().expect("two passes end it");
    let svg = render_svg(&game);
    // The coordinates are drawn after every stone: nothing covers them.
    let last_stone = svg.rfind("-stone)").unwrap();
    for label in [">A</text>", ">1</text>", ">J</text>", ">9</text>"] {
        let at = svg.find(label).unwrap_or_else(|| panic!("{label} missing"));
        assert!(at > last_stone, "{label} is drawn before a stone: {svg}");
    }
    // The result and the count are in the picture, not only in its title.
    let score = result.score.expect("a count").to_string();
    assert!(score.contains("komi"), "{score}");
    let body = &svg[svg.find("</title>").unwrap()..];
    assert!(body.contains(&result.text), "the result: {svg}");
    assert!(body.contains(&score), "the count: {svg}");
    // A game under way says whose turn it is and the captures.
    let mut going = Game::new(BoardSize::Nine);
    play(&mut going, "E5");
    let svg = render_svg(&going);
    let body = &svg[svg.find("</title>").unwrap()..];
    assert!(body.contains(">White to move</text>"), "{svg}");
    assert!(body.contains("Captures: Black 0, White 0"), "{svg}");
}

mod setup_fuzz {
    use super::*;
    use mcpl_games::go::SetupError;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn diagrams_never_panic_and_valid_ones_round_trip(rows in proptest::collection::vec("[XO.+]{9}", 9)) {
            match Game::from_diagram(&rows.join("\n"), Color::Black, 7.5) {
                Ok(game) => {
                    // Every stone in the diagram is on the board as drawn.
                    for (i, row) in rows.iter().enumerate() {
                        for (col, c) in row.chars().enumerate() {
                            let p = Point::new(col as u8, (8 - i) as u8);
                            let expected = match c {
                                'X' => Some(Color::Black),
                                'O' => Some(Color::White),
                                _ => None,
                            };
                            prop_assert_eq!(game.board().get(p), expected);
                        }
                    }
                    // And the position is playable.
                    let _ = game.legal_moves();
                }
                Err(SetupError::NoLiberties(_)) => {}
                Err(other) => prop_assert!(false, "unexpected error {other}"),
            }
        }

        #[test]
        fn arbitrary_diagram_text_never_panics(text in any::<String>()) {
            let _ = Game::from_diagram(&text, Color::White, 0.5);
        }
    }
}
