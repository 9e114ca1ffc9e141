//! Running the vectors: each against fresh connections, one after another, a line per
//! vector, and the tally.
//!
//! Every line says which of its checks are **RFC-014's MUSTs** (`[RFC]`: pass, fail, skip)
//! and which are **the fixture contract's choices** (`[fixture]`: the readings this project
//! made where the RFC leaves a choice, `tests/CONFORMANCE.md`). A server that makes other
//! legal choices passes every `[RFC]` check and is told where it departs from the fixture.

use super::error::{Checked, VectorError};
use super::target::{Ctx, Need, RunOptions};
use super::vectors;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A vector's run, borrowing its context.
pub type VectorFuture<'a> = Pin<Box<dyn Future<Output = Checked> + 'a>>;

/// What a vector's own pass or fail is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// RFC-014's MUSTs (with the fixture's choices noted on the way).
    Rfc,
    /// The fixture contract alone (vector 0: the names the vectors rely on).
    Fixture,
}

/// Which vector: one of RFC-014 §9 (0: the contract check) or one of the stateless
/// profile's server-side vectors (`docs/rfc014-stateless.md` §5, S1–S20; the kit runs
/// S1–S4, S8–S15, S17, S19, S20).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VectorId {
    /// RFC-014 §9's vector of this number (0: the fixture contract itself).
    Rfc(u8),
    /// The stateless profile's vector of this number (`S4`), run over MCP 2026-07-28.
    Stateless(u8),
}

impl VectorId {
    /// True for the stateless profile's vectors.
    pub fn is_stateless(self) -> bool {
        matches!(self, VectorId::Stateless(_))
    }
}

impl fmt::Display for VectorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VectorId::Rfc(n) => write!(f, "{n:02}"),
            VectorId::Stateless(n) => write!(f, "S{n}"),
        }
    }
}

/// A vector name that is neither a number (`5`) nor a profile vector (`S4`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} names no vector: give a number of RFC-014 §9 (5) or of the stateless profile (S4)")]
pub struct BadVectorId(pub String);

impl std::str::FromStr for VectorId {
    type Err = BadVectorId;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadVectorId(s.to_owned());
        let t = s.trim();
        match t.strip_prefix(['S', 's']) {
            Some(n) => n.parse().map(VectorId::Stateless).map_err(|_| bad()),
            None => t.parse().map(VectorId::Rfc).map_err(|_| bad()),
        }
    }
}

/// One server-side check: a vector of spec §9 (or the contract check, number 0), or one of
/// the stateless profile's.
pub struct Vector {
    /// Which one.
    pub id: VectorId,
    /// What its pass or fail is about.
    pub kind: Kind,
    /// What it checks, in a few words.
    pub title: &'static str,
    /// What the target must offer for it to run.
    pub needs: &'static [Need],
    /// The check.
    pub run: fn(&Ctx) -> VectorFuture<'_>,
}

/// How a vector went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every check held.
    Pass,
    /// A check failed: why.
    Fail(String),
    /// Not run against this target: why.
    Skip(String),
}

/// A vector's line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The vector (`Rfc(0)`: the contract check).
    pub id: VectorId,
    /// Its title.
    pub title: &'static str,
    /// What its outcome is about.
    pub kind: Kind,
    /// How it went.
    pub outcome: Outcome,
    /// Where the server departs from the fixture contract's choices (not failures of the
    /// RFC).
    pub departures: Vec<String>,
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.id == VectorId::Rfc(0) {
            write!(f, "contract {}: ", self.title)?;
        } else {
            write!(f, "vector {} {}: ", self.id, self.title)?;
        }
        let tag = match self.kind {
            Kind::Rfc => "[RFC]",
            Kind::Fixture => "[fixture]",
        };
        match &self.outcome {
            Outcome::Pass => write!(f, "pass {tag}")?,
            Outcome::Fail(why) => write!(f, "fail {tag}: {why}")?,
            Outcome::Skip(why) => write!(f, "skip {tag}: {why}")?,
        }
        for d in &self.departures {
            write!(f, "; departs [fixture]: {d}")?;
        }
        Ok(())
    }
}

/// Every line of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// In the order run.
    pub lines: Vec<Line>,
}

impl Report {
    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.lines.iter().filter(|l| f(&l.outcome)).count()
    }

    /// How many RFC vectors passed.
    pub fn passed(&self) -> usize {
        self.rfc(|o| *o == Outcome::Pass)
    }

    /// How many RFC vectors failed.
    pub fn failed(&self) -> usize {
        self.rfc(|o| matches!(o, Outcome::Fail(_)))
    }

    /// How many vectors were skipped.
    pub fn skipped(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Skip(_)))
    }

    fn rfc(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.lines
            .iter()
            .filter(|l| l.kind == Kind::Rfc && f(&l.outcome))
            .count()
    }

    /// True when the contract check ran and failed: the RFC vectors after it were skipped,
    /// so the run tested nothing of RFC-014 and is no pass.
    pub fn contract_failed(&self) -> bool {
        self.lines
            .iter()
            .any(|l| l.kind == Kind::Fixture && matches!(l.outcome, Outcome::Fail(_)))
    }

    /// How many lines depart from the fixture contract: a failed contract check, or a
    /// vector with departures noted.
    pub fn departed(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| {
                !l.departures.is_empty()
                    || (l.kind == Kind::Fixture && matches!(l.outcome, Outcome::Fail(_)))
            })
            .count()
    }

    /// The closing line: `N passed, N failed (N skipped) [RFC]; fixture contract: N lines
    /// depart`.
    pub fn summary(&self) -> String {
        format!(
            "{} passed, {} failed ({} skipped) [RFC]; fixture contract: {} departed",
            self.passed(),
            self.failed(),
            self.skipped(),
            self.departed()
        )
    }
}

/// Why a vector is skipped after the contract check failed.
pub const CONTRACT_NOT_MET: &str =
    "the server does not meet the fixture contract (see its line): the vectors rely on its names";

/// A vector that takes longer than this in all fails, whatever it waits for.
const VECTOR_LIMIT_FACTOR: u32 = 6;

/// Why the stateless profile's vectors are skipped against a server that does not serve
/// it (the reason follows).
pub const PROFILE_NOT_SERVED: &str = "the server does not serve the stateless profile";

/// Runs the vectors (those named in `only`, or all), calling `each` with every line as it
/// is decided. The stateless profile's vectors run only against a server that declares
/// `mcpl/core` on a modern `server/discover`; against any other each is skipped, saying
/// why.
pub async fn run(
    opts: &RunOptions,
    only: Option<&[VectorId]>,
    mut each: impl FnMut(&Line),
) -> Report {
    let nonce = nonce();
    let mut report = Report::default();
    // Asked once, before the first profile vector that would run.
    let mut profile: Option<Option<String>> = None;
    for v in vectors::ALL {
        if only.is_some_and(|o| !o.contains(&v.id)) {
            continue;
        }
        let missing = v
            .needs
            .iter()
            .find(|n| **n == Need::SharedPrincipal && !opts.target.shares_principals());
        // The vectors call the contract's toolsets and tools by name: against a server
        // without them, each would fail as if it broke RFC-014 (issue #36, item 15).
        let (outcome, departures) = if v.kind == Kind::Rfc && report.contract_failed() {
            (Outcome::Skip(CONTRACT_NOT_MET.to_owned()), Vec::new())
        } else if let Some(need) = missing {
            (Outcome::Skip(need.why_missing().to_owned()), Vec::new())
        } else if v.id.is_stateless() {
            if profile.is_none() {
                profile = Some(vectors::profile_not_served(opts).await);
            }
            match profile.as_ref().and_then(Option::as_ref) {
                Some(why) => (
                    Outcome::Skip(format!("{PROFILE_NOT_SERVED}: {why}")),
                    Vec::new(),
                ),
                None => run_one(opts, v, &nonce).await,
            }
        } else {
            run_one(opts, v, &nonce).await
        };
        let line = Line {
            id: v.id,
            title: v.title,
            kind: v.kind,
            outcome,
            departures,
        };
        each(&line);
        report.lines.push(line);
    }
    report
}

async fn run_one(opts: &RunOptions, v: &Vector, nonce: &str) -> (Outcome, Vec<String>) {
    let ctx = Ctx::new(opts.clone(), v.id, nonce.to_owned());
    let limit = opts.limit * VECTOR_LIMIT_FACTOR;
    let outcome = match tokio::time::timeout(limit, (v.run)(&ctx)).await {
        Ok(Ok(())) => Outcome::Pass,
        Ok(Err(VectorError::NotApplicable(why))) => Outcome::Skip(why),
        Ok(Err(e)) => Outcome::Fail(e.to_string()),
        Err(_) => Outcome::Fail(format!("the vector took more than {limit:?}")),
    };
    (outcome, ctx.departures())
}

/// Six hex digits telling this run's names from other runs' on a long-lived server.
fn nonce() -> String {
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    let mixed = t.as_nanos() as u64 ^ (u64::from(std::process::id()) << 20);
    format!("{:06x}", mixed & 0xff_ffff)
}

#[cfg(test)]
mod tests {
    use super::VectorId;

    #[test]
    fn vector_names_parse_and_print_both_series() {
        assert_eq!("5".parse(), Ok(VectorId::Rfc(5)));
        assert_eq!("S4".parse(), Ok(VectorId::Stateless(4)));
        assert_eq!(" s12".parse(), Ok(VectorId::Stateless(12)));
        for bad in ["", "S", "x4", "S-1", "300"] {
            assert!(bad.parse::<VectorId>().is_err(), "{bad}");
        }
        assert_eq!(VectorId::Rfc(5).to_string(), "05");
        assert_eq!(VectorId::Stateless(4).to_string(), "S4");
    }
}
