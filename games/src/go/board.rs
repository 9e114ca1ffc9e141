//! Stones on a board: chains, liberties and captures.
//!
//! The board is stored with a one-point border of sentinel cells so that
//! neighbour lookups never need bounds checks. Each chain is a circular
//! linked list of its stones with a shared head, and the head stores the
//! chain's size and *pseudo-liberty* count (empty neighbours counted once
//! per adjacent stone). Pseudo-liberties are cheap to update incrementally
//! and are zero exactly when the real liberty count is zero, which is all a
//! capture needs; exact small counts are found by walking the chain.

use super::coord::{BoardSize, Color, Point};
use super::zobrist::KEYS;

/// What occupies a padded cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cell {
    Empty,
    Black,
    White,
    Border,
}

impl Cell {
    pub(crate) const fn stone(color: Color) -> Cell {
        match color {
            Color::Black => Cell::Black,
            Color::White => Cell::White,
        }
    }

    pub(crate) const fn color(self) -> Option<Color> {
        match self {
            Cell::Black => Some(Color::Black),
            Cell::White => Some(Color::White),
            Cell::Empty | Cell::Border => None,
        }
    }
}

/// Why the board itself refuses a stone (superko is the game's business).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BoardIllegal {
    Occupied,
    Suicide,
    /// Immediate recapture of a single-stone ko (tracked by the board only
    /// for fast playouts; the game applies full positional superko).
    Ko,
}

/// Up to four distinct liberties of a chain, found by a bounded walk.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Libs {
    pub(crate) count: usize,
    pub(crate) points: [usize; 4],
}

/// The stones on a Go board of one of the supported sizes.
///
/// A `Board` knows nothing about turn order or history; see
/// [`Game`](crate::go::Game) for the rules that need those.
#[derive(Clone, Debug)]
pub struct Board {
    size: BoardSize,
    stride: usize,
    cells: Vec<Cell>,
    /// Chain head of each stone.
    head: Vec<u16>,
    /// Next stone in the same chain (circular).
    next: Vec<u16>,
    /// Pseudo-liberties, valid at chain heads.
    libs: Vec<u16>,
    /// Stones in the chain, valid at chain heads.
    len: Vec<u16>,
    /// Every empty on-board cell, in no particular order.
    empties: Vec<u16>,
    /// Index of each empty cell within `empties`.
    empty_at: Vec<u16>,
    hash: u64,
    ko: Option<u16>,
}

impl Board {
    /// An empty board.
    pub fn new(size: BoardSize) -> Board {
        let n = usize::from(size.lines());
        let stride = n + 2;
        let total = stride * stride;
        let mut cells = vec![Cell::Border; total];
        let mut empties = Vec::with_capacity(n * n);
        let mut empty_at = vec![0u16; total];
        for row in 0..n {
            for col in 0..n {
                let pos = (row + 1) * stride + col + 1;
                cells[pos] = Cell::Empty;
                empty_at[pos] = empties.len() as u16;
                empties.push(pos as u16);
            }
        }
        Board {
            size,
            stride,
            cells,
            head: vec![0; total],
            next: vec![0; total],
            libs: vec![0; total],
            len: vec![0; total],
            empties,
            empty_at,
            hash: 0,
            ko: None,
        }
    }

    /// The board size.
    pub fn size(&self) -> BoardSize {
        self.size
    }

    /// The stone at `p`, or `None` if it is empty or off the board.
    pub fn get(&self, p: Point) -> Option<Color> {
        if p.is_on(self.size) {
            self.cells[self.pos(p)].color()
        } else {
            None
        }
    }

    /// Number of stones of `color` on the board.
    pub fn stone_count(&self, color: Color) -> usize {
        let stone = Cell::stone(color);
        self.cells.iter().filter(|&&c| c == stone).count()
    }

    /// Zobrist hash of the stones (not of the side to move).
    pub(crate) fn hash(&self) -> u64 {
        self.hash
    }

    /// The point the side to move may not play because it would retake a
    /// single-stone ko immediately.
    pub(crate) fn ko(&self) -> Option<usize> {
        self.ko.map(usize::from)
    }

    pub(crate) fn pos(&self, p: Point) -> usize {
        (usize::from(p.row()) + 1) * self.stride + usize::from(p.col()) + 1
    }

    pub(crate) fn point(&self, pos: usize) -> Point {
        let row = pos / self.stride - 1;
        let col = pos % self.stride - 1;
        // Board positions come from a board of at most 19 lines.
        Point::new(col as u8, row as u8)
    }

    /// Length of per-cell arrays, border included.
    pub(crate) fn cell_count(&self) -> usize {
        self.cells.len()
    }

    pub(crate) fn cell(&self, pos: usize) -> Cell {
        self.cells[pos]
    }

    pub(crate) fn neighbors(&self, pos: usize) -> [usize; 4] {
        [pos - self.stride, pos - 1, pos + 1, pos + self.stride]
    }

    pub(crate) fn diagonals(&self, pos: usize) -> [usize; 4] {
        let s = self.stride;
        [pos - s - 1, pos - s + 1, pos + s - 1, pos + s + 1]
    }

    /// Empty on-board cells, in an order that changes as stones come and go.
    pub(crate) fn empties(&self) -> &[u16] {
        &self.empties
    }

    /// All on-board cells, row-major from A1.
    pub(crate) fn all_positions(&self) -> impl Iterator<Item = usize> + '_ {
        let n = usize::from(self.size.lines());
        let stride = self.stride;
        (0..n).flat_map(move |row| (0..n).map(move |col| (row + 1) * stride + col + 1))
    }

    pub(crate) fn chain_head(&self, pos: usize) -> usize {
        usize::from(self.head[pos])
    }

    pub(crate) fn chain_len(&self, pos: usize) -> usize {
        usize::from(self.len[self.chain_head(pos)])
    }

    /// The stones of the chain through `pos`.
    pub(crate) fn chain_stones(&self, pos: usize) -> ChainIter<'_> {
        let head = self.chain_head(pos);
        ChainIter {
            board: self,
            head,
            at: Some(head),
        }
    }

    /// Distinct liberties of the chain through `pos`, stopping once `limit`
    /// (at most 4) have been found.
    pub(crate) fn liberties(&self, pos: usize, limit: usize) -> Libs {
        let mut libs = Libs {
            count: 0,
            points: [0; 4],
        };
        let limit = limit.min(4);
        for s in self.chain_stones(pos) {
            for n in self.neighbors(s) {
                if self.cells[n] == Cell::Empty && !libs.points[..libs.count].contains(&n) {
                    libs.points[libs.count] = n;
                    libs.count += 1;
                    if libs.count >= limit {
                        return libs;
                    }
                }
            }
        }
        libs
    }

    /// Whether the chain through `pos` has exactly one liberty.
    pub(crate) fn in_atari(&self, pos: usize) -> bool {
        // One empty point touches at most four stones of a chain, so five or
        // more pseudo-liberties prove at least two real ones.
        self.libs[self.chain_head(pos)] <= 4 && self.liberties(pos, 2).count == 1
    }

    fn has_two_liberties(&self, pos: usize) -> bool {
        self.libs[self.chain_head(pos)] > 4 || self.liberties(pos, 2).count >= 2
    }

    /// Whether `color` may put a stone at `pos` as far as the board alone can
    /// tell (occupied, suicide, immediate single-stone ko recapture).
    pub(crate) fn check(&self, pos: usize, color: Color) -> Result<(), BoardIllegal> {
        if self.cells[pos] != Cell::Empty {
            return Err(BoardIllegal::Occupied);
        }
        if self.is_suicide(pos, color) {
            return Err(BoardIllegal::Suicide);
        }
        if self.ko() == Some(pos) {
            return Err(BoardIllegal::Ko);
        }
        Ok(())
    }

    /// Whether a stone of `color` at the empty `pos` would have no liberties
    /// after removing the opponent stones it captures.
    pub(crate) fn is_suicide(&self, pos: usize, color: Color) -> bool {
        let own = Cell::stone(color);
        for n in self.neighbors(pos) {
            match self.cells[n] {
                Cell::Empty => return false,
                Cell::Border => {}
                c if c == own => {
                    if self.has_two_liberties(n) {
                        return false;
                    }
                }
                _ => {
                    if self.in_atari(n) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Distinct opponent chains (by head) that a stone of `color` at `pos`
    /// would capture.
    fn capturable_heads(&self, pos: usize, color: Color) -> ([usize; 4], usize) {
        let enemy = Cell::stone(color.opponent());
        let mut heads = [0usize; 4];
        let mut count = 0;
        for n in self.neighbors(pos) {
            if self.cells[n] == enemy {
                let h = self.chain_head(n);
                if !heads[..count].contains(&h) && self.in_atari(n) {
                    heads[count] = h;
                    count += 1;
                }
            }
        }
        (heads, count)
    }

    /// How many stones a legal stone of `color` at `pos` would capture.
    pub(crate) fn capture_count(&self, pos: usize, color: Color) -> usize {
        let (heads, count) = self.capturable_heads(pos, color);
        heads[..count]
            .iter()
            .map(|&h| usize::from(self.len[h]))
            .sum()
    }

    /// The position hash after a legal stone of `color` at `pos`.
    pub(crate) fn hash_after(&self, pos: usize, color: Color) -> u64 {
        let mut hash = self.hash ^ KEYS[pos][color.index()];
        let (heads, count) = self.capturable_heads(pos, color);
        let enemy = color.opponent().index();
        for &h in &heads[..count] {
            for s in self.chain_stones(h) {
                hash ^= KEYS[s][enemy];
            }
        }
        hash
    }

    /// Whether `pos` is an eye of `color` that a sensible player would not
    /// fill: every neighbour is `color` (or the edge) and the diagonals do
    /// not make it false (no opponent diagonal on the edge, at most one in
    /// the centre).
    pub(crate) fn is_eye(&self, pos: usize, color: Color) -> bool {
        if self.cells[pos] != Cell::Empty {
            return false;
        }
        let own = Cell::stone(color);
        if self
            .neighbors(pos)
            .iter()
            .any(|&n| self.cells[n] != own && self.cells[n] != Cell::Border)
        {
            return false;
        }
        let enemy = Cell::stone(color.opponent());
        let mut enemies = 0;
        let mut edge = false;
        for d in self.diagonals(pos) {
            match self.cells[d] {
                Cell::Border => edge = true,
                c if c == enemy => enemies += 1,
                _ => {}
            }
        }
        if edge { enemies == 0 } else { enemies < 2 }
    }

    /// Puts a stone of `color` at the empty `pos`, removes the opponent
    /// chains left without liberties, and returns how many stones were
    /// captured, reporting each via `on_capture`. The caller must have
    /// checked legality; a suicide here would leave a chain with no
    /// liberties on the board.
    pub(crate) fn play(
        &mut self,
        pos: usize,
        color: Color,
        mut on_capture: impl FnMut(usize),
    ) -> usize {
        self.place(pos, color);
        let enemy = Cell::stone(color.opponent());
        let mut captured = 0;
        let mut last_captured = 0;
        for n in self.neighbors(pos) {
            // A chain removed via one neighbour is empty by the next, so each
            // dead chain is removed once.
            if self.cells[n] == enemy && self.libs[self.chain_head(n)] == 0 {
                captured += self.remove_chain(n, &mut on_capture);
                last_captured = n;
            }
        }
        let head = self.chain_head(pos);
        // A lone stone that took a lone stone and now has that point as its
        // only liberty can be retaken at once: a ko.
        self.ko = (captured == 1 && self.len[head] == 1 && self.libs[head] == 1)
            .then_some(last_captured as u16);
        captured
    }

    /// Puts a stone down without capturing; used by `play` and by setup.
    pub(crate) fn place(&mut self, pos: usize, color: Color) {
        debug_assert_eq!(self.cells[pos], Cell::Empty);
        self.take_empty(pos);
        self.cells[pos] = Cell::stone(color);
        self.hash ^= KEYS[pos][color.index()];
        self.head[pos] = pos as u16;
        self.next[pos] = pos as u16;
        self.len[pos] = 1;
        let mut libs = 0;
        for n in self.neighbors(pos) {
            match self.cells[n] {
                Cell::Empty => libs += 1,
                Cell::Black | Cell::White => {
                    let h = self.chain_head(n);
                    self.libs[h] -= 1;
                }
                Cell::Border => {}
            }
        }
        self.libs[pos] = libs;
        let own = Cell::stone(color);
        for n in self.neighbors(pos) {
            if self.cells[n] == own {
                let a = self.chain_head(pos);
                let b = self.chain_head(n);
                if a != b {
                    self.merge(a, b);
                }
            }
        }
        self.ko = None;
    }

    fn merge(&mut self, a: usize, b: usize) {
        // Relabel the smaller chain so merging stays cheap for big groups.
        let (keep, gone) = if self.len[a] >= self.len[b] {
            (a, b)
        } else {
            (b, a)
        };
        let mut s = gone;
        loop {
            self.head[s] = keep as u16;
            s = usize::from(self.next[s]);
            if s == gone {
                break;
            }
        }
        self.next.swap(keep, gone);
        self.len[keep] += self.len[gone];
        self.libs[keep] += self.libs[gone];
    }

    fn remove_chain(&mut self, pos: usize, on_capture: &mut impl FnMut(usize)) -> usize {
        let head = self.chain_head(pos);
        let Some(color) = self.cells[head].color() else {
            return 0;
        };
        let mut s = head;
        loop {
            self.cells[s] = Cell::Empty;
            self.hash ^= KEYS[s][color.index()];
            self.give_empty(s);
            on_capture(s);
            s = usize::from(self.next[s]);
            if s == head {
                break;
            }
        }
        // Only once every stone is gone can neighbours be credited, or the
        // dead chain's own stones would be counted as gaining liberties.
        loop {
            for n in self.neighbors(s) {
                if matches!(self.cells[n], Cell::Black | Cell::White) {
                    let h = self.chain_head(n);
                    self.libs[h] += 1;
                }
            }
            s = usize::from(self.next[s]);
            if s == head {
                break;
            }
        }
        usize::from(self.len[head])
    }

    fn take_empty(&mut self, pos: usize) {
        let i = usize::from(self.empty_at[pos]);
        let last = self.empties.len() - 1;
        self.empties.swap(i, last);
        let moved = usize::from(self.empties[i]);
        self.empty_at[moved] = i as u16;
        self.empties.pop();
    }

    fn give_empty(&mut self, pos: usize) {
        self.empty_at[pos] = self.empties.len() as u16;
        self.empties.push(pos as u16);
    }

    /// Whether any stone lies within Manhattan distance `radius` of `pos`.
    pub(crate) fn has_stone_within(&self, pos: usize, radius: usize) -> bool {
        let n = self.size.lines() as isize;
        let p = self.point(pos);
        let (col, row) = (isize::from(p.col()), isize::from(p.row()));
        let r = radius as isize;
        (-r..=r).any(|dr| {
            let left = r - dr.abs();
            (-left..=left).any(|dc| {
                let (c, rr) = (col + dc, row + dr);
                (0..n).contains(&c)
                    && (0..n).contains(&rr)
                    && self.get(Point::new(c as u8, rr as u8)).is_some()
            })
        })
    }

    /// Pseudo-liberties at the chain through `pos`; zero means captured.
    pub(crate) fn pseudo_liberties(&self, pos: usize) -> usize {
        usize::from(self.libs[self.chain_head(pos)])
    }
}

/// Iterator over the stones of one chain.
pub(crate) struct ChainIter<'a> {
    board: &'a Board,
    head: usize,
    at: Option<usize>,
}

impl Iterator for ChainIter<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let s = self.at?;
        let next = usize::from(self.board.next[s]);
        self.at = (next != self.head).then_some(next);
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recomputes every invariant the incremental bookkeeping maintains.
    pub(crate) fn assert_consistent(b: &Board) {
        let mut hash = 0;
        let mut empty_count = 0;
        for pos in b.all_positions() {
            match b.cells[pos] {
                Cell::Empty => {
                    empty_count += 1;
                    assert_eq!(usize::from(b.empties[usize::from(b.empty_at[pos])]), pos);
                }
                Cell::Black | Cell::White => {
                    let color = b.cells[pos].color().unwrap_or(Color::Black);
                    hash ^= KEYS[pos][color.index()];
                    let stones: Vec<usize> = b.chain_stones(pos).collect();
                    assert_eq!(stones.len(), b.chain_len(pos));
                    let pseudo: usize = stones
                        .iter()
                        .map(|&s| {
                            b.neighbors(s)
                                .iter()
                                .filter(|&&n| b.cells[n] == Cell::Empty)
                                .count()
                        })
                        .sum();
                    assert_eq!(
                        pseudo,
                        b.pseudo_liberties(pos),
                        "pseudo-liberties at {}",
                        b.point(pos)
                    );
                    assert!(pseudo > 0, "chain without liberties at {}", b.point(pos));
                    for s in stones {
                        assert_eq!(b.cells[s], b.cells[pos]);
                    }
                }
                Cell::Border => panic!("border inside the board"),
            }
        }
        assert_eq!(empty_count, b.empties.len());
        assert_eq!(hash, b.hash);
    }

    #[test]
    fn random_play_keeps_invariants() {
        use rand::{Rng, SeedableRng, rngs::StdRng};
        let seed = 7;
        let mut rng = StdRng::seed_from_u64(seed);
        for size in BoardSize::ALL {
            let mut b = Board::new(size);
            let mut color = Color::Black;
            for _ in 0..400 {
                let legal: Vec<usize> = b
                    .empties()
                    .iter()
                    .map(|&p| usize::from(p))
                    .filter(|&p| b.check(p, color).is_ok() && !b.is_eye(p, color))
                    .collect();
                if legal.is_empty() {
                    break;
                }
                let pos = legal[rng.random_range(0..legal.len())];
                let expected = b.hash_after(pos, color);
                let predicted = b.capture_count(pos, color);
                let captured = b.play(pos, color, |_| {});
                assert_eq!(captured, predicted, "seed {seed}");
                assert_eq!(b.hash(), expected, "seed {seed}");
                assert_consistent(&b);
                color = color.opponent();
            }
        }
    }
}
