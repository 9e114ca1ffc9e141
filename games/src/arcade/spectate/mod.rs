//! Watching games (issue #43): every table publishes a [`GameView`] of its game to the
//! arcade's [`Gallery`] after each step, and the spectator page ([`web`]) shows them live.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`Gallery`]: the games to show, and a bounded broadcast of their changes; [`Watcher`] |
//! | `view.rs` | [`GameView`] and its parts: what a spectator sees of one game |
//! | [`web`] | the page's HTTP listener: who may watch, how many at once |
//!
//! The page itself is in `page/`: HTML, CSS and a script, no framework, the boards the
//! arcade's own SVG pictures.
//!
//! **The bounded broadcast.** Changes go out on one ring of [`Gallery::new`]'s `queue`
//! entries that every watcher reads at its own pace ([`tokio::sync::broadcast`]). A watcher
//! that falls more than `queue` changes behind — a page on a slow link, a tab the browser
//! throttles — does not make the arcade keep what it missed: its next read is a fresh
//! snapshot of every game instead ([`Seen::Snapshot`]), and it goes on from there. The
//! memory held for watchers is the ring's, however many there are and however slow.
//!
//! **What is kept.** Games under way (their number is bounded by the server's own limits
//! on instances), and the last `finished` games that ended (older ones are dropped from
//! the page). A challenge declined or withdrawn before it started is not shown at all, nor
//! is a game whose table went away without ending.
//!
//! **Across a restart** ([`Gallery::keep_in`]): the finished games are written to a file
//! (`mcpl-arcade serve` puts it beside its store) each time one ends, and read back when
//! the arcade starts again, with the highest game number ever shown, so that a game
//! started after the restart never takes the number of one shown before it. Games under
//! way come back with their tables (`table/durable.rs` keeps each one's number).
//! **\[project\]** A file of the arcade's own rather than the SDK's store: what it holds
//! is the page's, not the protocol's (a cluster, issue #41, would keep it with the
//! instances' records).

mod view;
pub mod web;

pub use view::{GameState, GameView, PlayerView, ScoreView, SideScore, Spectacle};

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use tokio::sync::broadcast;

/// How many changes a watcher may fall behind before it is sent a snapshot instead
/// (`mcpl-arcade serve --web-queue`).
pub const DEFAULT_QUEUE: usize = 64;

/// How many finished games the page keeps showing.
pub const DEFAULT_FINISHED_KEPT: usize = 50;

/// The largest file of finished games [`Gallery::keep_in`] reads (50 views of a 19x19
/// board are well under 4 MiB).
pub const MAX_KEPT_FILE: u64 = 16 * 1024 * 1024;

/// The format of the file [`Gallery::keep_in`] reads and writes.
const KEPT_FORMAT: u32 = 1;

/// The file of finished games, as written.
#[derive(Serialize, Deserialize)]
struct KeptFile {
    format: u32,
    /// The highest game number ever shown.
    highest: u64,
    /// The finished games, oldest first.
    finished: Vec<GameView>,
}

/// Why the file of finished games could not be read (the gallery starts without them, and
/// its next write replaces the file).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeepError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_KEPT_FILE`].
    #[error("{path} is {size} bytes, more than the {MAX_KEPT_FILE} read")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// The file is not a gallery's.
    #[error("{path} is not a file of finished games this arcade reads: {reason}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// A game as published: its view, and the view as JSON (made once, sent to every watcher).
#[derive(Debug, Clone)]
pub(crate) struct Shown {
    pub(crate) view: Arc<GameView>,
    pub(crate) json: Arc<str>,
}

/// One change, as the ring carries it.
#[derive(Debug, Clone)]
enum Update {
    Game(Shown),
    Gone(u64),
}

#[derive(Debug, Default)]
struct Inner {
    games: BTreeMap<u64, Shown>,
    /// Finished games by when they ended, oldest first.
    finished: VecDeque<u64>,
    /// The highest game number ever shown (kept across restarts with the finished games).
    highest: u64,
}

/// The games spectators may see, and their changes as they happen. See the module docs.
#[derive(Debug)]
pub struct Gallery {
    inner: Mutex<Inner>,
    /// Sent while `inner` is locked, so that a watcher's snapshot and its place in the
    /// ring agree ([`Gallery::watch`]).
    tx: broadcast::Sender<Update>,
    finished_kept: usize,
    /// Where the finished games are kept across restarts ([`Gallery::keep_in`]).
    kept_in: OnceLock<PathBuf>,
    /// Held while that file is written, so that two games ending at once write in turn.
    writing: Mutex<()>,
}

/// What a [`Watcher`] reads next.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// Every game now: the first read, and the read after falling behind the ring.
    Snapshot(Vec<Arc<GameView>>),
    /// A game is new or changed.
    Game(Arc<GameView>),
    /// A game is no longer shown.
    Gone(u64),
}

/// [`Seen`] with each game's JSON, for the page.
#[derive(Debug, Clone)]
pub(crate) enum SeenShown {
    Snapshot(Vec<Shown>),
    Game(Shown),
    Gone(u64),
}

fn lock(m: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Gallery {
    /// An empty gallery whose watchers may fall `queue` changes behind (at least 1), and
    /// which keeps showing the last `finished_kept` finished games.
    pub fn new(queue: usize, finished_kept: usize) -> Arc<Gallery> {
        let (tx, _) = broadcast::channel(queue.max(1));
        Arc::new(Gallery {
            inner: Mutex::default(),
            tx,
            finished_kept,
            kept_in: OnceLock::new(),
            writing: Mutex::new(()),
        })
    }

    /// Keeps the finished games in the file at `path` across restarts (module docs): reads
    /// what it holds now (none when it does not exist) and writes it again each time a
    /// game ends. Returns how many finished games were read. A file that cannot be read is
    /// an error, and the gallery then starts without it; it still writes there from now
    /// on. Only the first call on a gallery takes effect.
    pub fn keep_in(&self, path: impl Into<PathBuf>) -> Result<usize, KeepError> {
        let path = path.into();
        let read = Self::read_kept(&path);
        if self.kept_in.set(path).is_err() {
            return Ok(0);
        }
        let Some(kept) = read? else {
            return Ok(0);
        };
        let mut inner = lock(&self.inner);
        inner.highest = inner.highest.max(kept.highest);
        let skip = kept.finished.len().saturating_sub(self.finished_kept);
        let mut loaded = 0;
        for view in kept.finished.into_iter().skip(skip) {
            if !view.is_over() || inner.games.contains_key(&view.id) {
                continue;
            }
            let Ok(json) = serde_json::to_string(&view) else {
                continue;
            };
            inner.highest = inner.highest.max(view.id);
            inner.finished.push_back(view.id);
            let shown = Shown {
                view: Arc::new(view),
                json: json.into(),
            };
            inner.games.insert(shown.view.id, shown);
            loaded += 1;
        }
        Ok(loaded)
    }

    fn read_kept(path: &Path) -> Result<Option<KeptFile>, KeepError> {
        let io = |source| KeepError::Io {
            path: path.to_owned(),
            source,
        };
        let size = match std::fs::metadata(path) {
            Ok(m) => m.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        if size > MAX_KEPT_FILE {
            return Err(KeepError::TooLarge {
                path: path.to_owned(),
                size,
            });
        }
        let bytes = std::fs::read(path).map_err(io)?;
        let unreadable = |reason: String| KeepError::Unreadable {
            path: path.to_owned(),
            reason,
        };
        let kept: KeptFile =
            serde_json::from_slice(&bytes).map_err(|e| unreadable(e.to_string()))?;
        if kept.format != KEPT_FORMAT {
            return Err(unreadable(format!(
                "format {}, this arcade reads {KEPT_FORMAT}",
                kept.format
            )));
        }
        Ok(Some(kept))
    }

    /// Writes the finished games to the file [`Gallery::keep_in`] named, if any: a whole
    /// new file renamed over the old one, so a crash mid-write leaves the old one.
    fn write_kept(&self) {
        let Some(path) = self.kept_in.get() else {
            return;
        };
        let _turn = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = {
            let inner = lock(&self.inner);
            KeptFile {
                format: KEPT_FORMAT,
                highest: inner.highest,
                finished: inner
                    .finished
                    .iter()
                    .filter_map(|id| inner.games.get(id))
                    .map(|s| (*s.view).clone())
                    .collect(),
            }
        };
        let written = serde_json::to_vec(&kept)
            .map_err(std::io::Error::other)
            .and_then(|bytes| {
                let tmp = path.with_extension("json.tmp");
                std::fs::write(&tmp, bytes)?;
                std::fs::rename(&tmp, path)
            });
        if let Err(e) = written {
            tracing::warn!(path = %path.display(), error = %e, "the finished games could not be written");
        }
    }

    /// The highest game number ever shown, restarts included ([`Gallery::keep_in`]).
    pub fn highest(&self) -> u64 {
        lock(&self.inner).highest
    }

    /// Shows `view` (new, or the game's latest); a view equal to the one shown is not sent
    /// again.
    pub fn publish(&self, view: GameView) {
        let json: Arc<str> = match serde_json::to_string(&view) {
            Ok(json) => json.into(),
            Err(e) => {
                tracing::error!(error = %e, "a game's view does not serialize");
                return;
            }
        };
        let id = view.id;
        let over = view.is_over();
        let mut inner = lock(&self.inner);
        let was_over = match inner.games.get(&id) {
            Some(old) if old.json == json => return,
            Some(old) => old.view.is_over(),
            None => false,
        };
        inner.highest = inner.highest.max(id);
        let shown = Shown {
            view: Arc::new(view),
            json,
        };
        inner.games.insert(id, shown.clone());
        // No watcher is not an error: the next one reads the snapshot.
        let _ = self.tx.send(Update::Game(shown));
        if over && !was_over {
            inner.finished.push_back(id);
            while inner.finished.len() > self.finished_kept {
                if let Some(old) = inner.finished.pop_front() {
                    inner.games.remove(&old);
                    let _ = self.tx.send(Update::Gone(old));
                }
            }
            drop(inner);
            self.write_kept();
        }
    }

    /// Stops showing game `id`.
    pub fn remove(&self, id: u64) {
        let mut inner = lock(&self.inner);
        if inner.games.remove(&id).is_some() {
            inner.finished.retain(|g| *g != id);
            let _ = self.tx.send(Update::Gone(id));
        }
    }

    /// Every game shown now: those under way by number, then the finished ones, the
    /// latest to end first.
    pub fn games(&self) -> Vec<Arc<GameView>> {
        Self::ordered(&lock(&self.inner))
            .into_iter()
            .map(|s| s.view)
            .collect()
    }

    fn ordered(inner: &Inner) -> Vec<Shown> {
        let playing = inner.games.values().filter(|s| !s.view.is_over());
        let finished = inner
            .finished
            .iter()
            .rev()
            .filter_map(|id| inner.games.get(id));
        playing.chain(finished).cloned().collect()
    }

    /// A watcher: its first read is the snapshot of every game now, then each change.
    pub fn watch(self: &Arc<Self>) -> Watcher {
        let inner = lock(&self.inner);
        let rx = self.tx.subscribe();
        let first = Self::ordered(&inner);
        drop(inner);
        Watcher {
            gallery: self.clone(),
            rx,
            first: Some(first),
            resyncs: 0,
        }
    }

    /// How many watchers there are now.
    pub fn watchers(&self) -> usize {
        self.tx.receiver_count()
    }
}

/// One spectator's view of a [`Gallery`]'s changes. See the module docs.
#[derive(Debug)]
pub struct Watcher {
    gallery: Arc<Gallery>,
    rx: broadcast::Receiver<Update>,
    /// The snapshot not read yet.
    first: Option<Vec<Shown>>,
    resyncs: u64,
}

impl Watcher {
    /// The next thing to show: the snapshot first, then each change as it happens; after
    /// falling behind the ring, a fresh snapshot.
    pub async fn next(&mut self) -> Seen {
        match self.next_shown().await {
            SeenShown::Snapshot(games) => {
                Seen::Snapshot(games.into_iter().map(|s| s.view).collect())
            }
            SeenShown::Game(s) => Seen::Game(s.view),
            SeenShown::Gone(id) => Seen::Gone(id),
        }
    }

    /// How many times this watcher fell behind and was sent a snapshot instead.
    pub fn resyncs(&self) -> u64 {
        self.resyncs
    }

    /// [`Watcher::next`], with each game's JSON.
    pub(crate) async fn next_shown(&mut self) -> SeenShown {
        if let Some(first) = self.first.take() {
            return SeenShown::Snapshot(first);
        }
        match self.rx.recv().await {
            Ok(Update::Game(s)) => SeenShown::Game(s),
            Ok(Update::Gone(id)) => SeenShown::Gone(id),
            // Fell behind (or, impossibly, the gallery is gone: it lives as long as we
            // do): start again from a fresh snapshot and the ring's end.
            Err(_) => {
                let resyncs = self.resyncs + 1;
                *self = self.gallery.watch();
                self.resyncs = resyncs;
                SeenShown::Snapshot(self.first.take().unwrap_or_default())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(id: u64, moves: u64, over: bool) -> GameView {
        let player = |name: &str, side: &str| PlayerView {
            name: name.into(),
            side: side.into(),
            bot: false,
        };
        GameView {
            id,
            game: "tictactoe".into(),
            title: "Tic-tac-toe".into(),
            players: [player("alice", "X"), player("bob", "O")],
            state: if over {
                GameState::Over {
                    result: "Draw".into(),
                }
            } else {
                GameState::Playing {
                    to_move: (moves % 2) as usize,
                    thinking: false,
                }
            },
            moves,
            last_move: None,
            captures: None,
            score: None,
            svg: "<svg/>".into(),
        }
    }

    fn ids(seen: &Seen) -> Vec<(u64, u64)> {
        match seen {
            Seen::Snapshot(games) => games.iter().map(|g| (g.id, g.moves)).collect(),
            Seen::Game(g) => vec![(g.id, g.moves)],
            Seen::Gone(id) => vec![(*id, u64::MAX)],
        }
    }

    #[tokio::test]
    async fn a_watcher_reads_the_snapshot_then_each_change() {
        let gallery = Gallery::new(8, 8);
        gallery.publish(view(1, 0, false));
        let mut w = gallery.watch();
        gallery.publish(view(1, 1, false));
        // The same view again is not a change.
        gallery.publish(view(1, 1, false));
        gallery.remove(1);
        assert_eq!(ids(&w.next().await), [(1, 0)]);
        assert_eq!(ids(&w.next().await), [(1, 1)]);
        assert_eq!(w.next().await, Seen::Gone(1));
        assert_eq!(w.resyncs(), 0);
    }

    #[tokio::test]
    async fn a_watcher_that_falls_behind_gets_a_fresh_snapshot() {
        let gallery = Gallery::new(4, 8);
        let mut w = gallery.watch();
        assert_eq!(w.next().await, Seen::Snapshot(Vec::new()));
        for moves in 0..20 {
            gallery.publish(view(1, moves, false));
        }
        gallery.publish(view(2, 0, false));
        // Twenty-one changes on a ring of four: what it missed is gone, the game as it
        // is now comes instead.
        assert_eq!(ids(&w.next().await), [(1, 19), (2, 0)]);
        assert_eq!(w.resyncs(), 1);
        gallery.publish(view(2, 1, false));
        assert_eq!(ids(&w.next().await), [(2, 1)]);
    }

    #[test]
    fn only_the_last_finished_games_are_kept() {
        let gallery = Gallery::new(8, 2);
        for id in 1..=3 {
            gallery.publish(view(id, 0, false));
        }
        for id in 1..=3 {
            gallery.publish(view(id, 9, true));
        }
        gallery.publish(view(4, 0, false));
        let shown: Vec<u64> = gallery.games().iter().map(|g| g.id).collect();
        assert_eq!(
            shown,
            [4, 3, 2],
            "under way first, then the latest finished"
        );
    }
}
