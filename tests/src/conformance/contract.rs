//! The fixture contract's fixed names (`tests/CONFORMANCE.md`): the toolsets, tools and
//! token a server under test provides, shared by the runner's vectors and by our fixture
//! server so the two cannot drift apart.

/// The declared toolset with `instances: true` (closed; options `{size: 1..9}`).
pub const GAME: &str = "game";
/// The declared toolset with `default: "open"`, without instances.
pub const LOBBY: &str = "lobby";
/// The declared toolset, closed, without instances or options.
pub const PANEL: &str = "panel";
/// The declared toolset with instances that `manifest_drop` removes from the manifest.
pub const TEMP: &str = "temp";
/// The toolset name `extra_ping` carries, which the manifest never declares (§4.4).
pub const EXTRAS: &str = "extras";

/// `game`: names the instance, its size and how many `game_wait` calls wait. Declares
/// `mcpl/presence: "static"`, which its toolset overrides (vector 16).
pub const GAME_SHOW: &str = "game_show";
/// `game`: flips `game_secret` for the caller; the change rides in its result.
pub const GAME_FLIP: &str = "game_flip";
/// `game`: invisible in a new instance; `game_flip`, `game_later` and `game_wait` flip it.
pub const GAME_SECRET: &str = "game_secret";
/// `game`: `{n}`, its instance's own definition caps `n` at the instance's size.
pub const GAME_MOVE: &str = "game_move";
/// `game`: raises `game_move`'s cap by one (an instance definition change in its result).
pub const GAME_GROW: &str = "game_grow";
/// `game`: `{event?, end?}`: answers at once, then, as a step of its own, flips
/// `game_secret` for the caller (or, with `end`, ends the instance), explained by an event
/// unless `event: false`.
pub const GAME_LATER: &str = "game_later";
/// `game`: flips `game_secret` for the caller as its own consequence, and waits for
/// `game_poke` before answering.
pub const GAME_WAIT: &str = "game_wait";
/// `game`: answers the instance's waiting `game_wait` calls; changes nothing itself.
pub const GAME_POKE: &str = "game_poke";
/// `game`, **optional** (profile vector S20; a server without it has S20 skipped): `{count}`
/// answers at once, changing nothing itself; then, as a step of its own that no call
/// caused (as `game_later`'s), flips `game_secret` for the caller and raises `count`
/// events for it, the `n`-th (from 0) saying [`peal_text`]`(n)`: more events at once than
/// a listen stream's transport queue holds, when `count` is above it.
pub const GAME_BURST: &str = "game_burst";
/// The most events one `game_burst` raises (a peer's input is bounded).
pub const MAX_BURST: u64 = 10_000;
/// How many events S20 asks `game_burst` for unless told otherwise: more than twice the
/// fixture's Streamable HTTP queue (`ServerOptions::http_queue_limit`, 1024 messages), so
/// some are past the bound however fast the server's writer drains the stream
/// (**\[fixture\]**: `mcpl-conformance --event-burst N` for a server with a larger one).
pub const EVENT_BURST: u64 = 2_500;
/// `lobby`: says who is here.
pub const LOBBY_WHO: &str = "lobby_who";
/// `panel`: reads the panel.
pub const PANEL_READ: &str = "panel_read";
/// `temp`: answers.
pub const TEMP_PING: &str = "temp_ping";
/// A static tool outside toolsets: says `text` back.
pub const ECHO: &str = "echo";
/// A dynamic tool outside toolsets, always invisible.
pub const NEWS: &str = "news";
/// The undeclared group's tool (`mcpl/toolset: "extras"`), visible; the server answers it
/// without any open.
pub const EXTRA_PING: &str = "extra_ping";
/// A static tool: replaces the manifest with one that no longer declares `temp`.
pub const MANIFEST_DROP: &str = "manifest_drop";
/// A static tool: puts the original manifest back.
pub const MANIFEST_RESTORE: &str = "manifest_restore";

/// §8 **\[project\]**: the compat tool a host without `toolHints` opens toolsets with.
pub const TOOLSET_OPEN: &str = "toolset_open";
/// §8 **\[project\]**: the compat tool a host without `toolHints` closes toolsets with.
pub const TOOLSET_CLOSE: &str = "toolset_close";

/// `game`'s tools, in the order the fixture declares them.
pub const GAME_TOOLS: [&str; 8] = [
    GAME_SHOW,
    GAME_FLIP,
    GAME_SECRET,
    GAME_MOVE,
    GAME_GROW,
    GAME_LATER,
    GAME_WAIT,
    GAME_POKE,
];

/// `game`'s tools visible in a new instance (all but `game_secret`).
pub const GAME_OPEN_VISIBLE: [&str; 7] = [
    GAME_SHOW, GAME_FLIP, GAME_MOVE, GAME_GROW, GAME_LATER, GAME_WAIT, GAME_POKE,
];

/// Every tool the contract names (the compat tools aside).
pub const ALL_TOOLS: [&str; 16] = joined(
    GAME_TOOLS,
    [
        LOBBY_WHO,
        PANEL_READ,
        TEMP_PING,
        ECHO,
        NEWS,
        EXTRA_PING,
        MANIFEST_DROP,
        MANIFEST_RESTORE,
    ],
);

/// `a`, then `b` (`N` is their lengths' sum; the build fails otherwise).
const fn joined<const A: usize, const B: usize, const N: usize>(
    a: [&'static str; A],
    b: [&'static str; B],
) -> [&'static str; N] {
    assert!(A + B == N, "the lengths do not add up");
    let mut out = [""; N];
    let mut i = 0;
    while i < A {
        out[i] = a[i];
        i += 1;
    }
    while i < N {
        out[i] = b[i - A];
        i += 1;
    }
    out
}

/// The size a `game` instance has when opened without options.
pub const DEFAULT_SIZE: u64 = 3;

/// How many tombstones of closed instances the fixture keeps per principal for modern
/// hosts' deltas (`docs/rfc014-stateless.md` §2 lets a server bound them); a host whose
/// mark is behind the newest one forgotten is answered a full statement (vector S8).
pub const TOMBSTONES: usize = 8;

/// The bearer token of the named principal whose connections share toolsets, unless the
/// runner is told another.
pub const DEFAULT_TOKEN: &str = "conformance";

/// The text of `game_burst`'s `n`-th event (from 0).
pub fn peal_text(n: u64) -> String {
    format!("peal {n}")
}

/// What `game_show` answers: `"{instance}: size {size}, {waiting} waiting"`.
pub fn show_text(instance: &str, size: u64, waiting: usize) -> String {
    format!("{instance}: size {size}, {waiting} waiting")
}
