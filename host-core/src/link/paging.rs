//! Paging `tools/list` (every page, following `nextCursor`), and the state of a
//! connection's re-reads (the listing under way, the one queued after it, the manifest's
//! rate-bounded re-reads: `manifest.rs`).
//!
//! The rules (the driver, `refresh.rs`, sends and replies as these say):
//! - One listing runs at a time. A reason to list that comes while one is under way (a
//!   `list_changed`, a caller) queues one more listing after it rather than joining it: the
//!   pages already read may predate that reason.
//! - A listing follows at most [`MAX_PAGES`] pages, and a cursor seen before in it ends it
//!   as [`LinkError::EndlessPaging`]. Its `mcpl/rev` is the lowest any page named (§3), its
//!   `ttlMs` the least.
//! - A listing that fails while the connection lives is tried again after a growing delay
//!   (the reconnect backoff's first delay, doubling, at most its largest) when the host
//!   needs it: the connection's first listing, or one after `list_changed`, and no other
//!   listing is queued. A listing a caller asked for fails to that caller, who decides.
//!
//! `R` is how a caller waiting for a listing is answered (the driver's business).

use super::decode::ToolsPage;
use super::error::LinkError;
use mcpl_protocol::jsonrpc::RawValue;
use mcpl_protocol::mcp::Tool;
use mcpl_protocol::method::{ListTools, Method};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// The most pages one listing follows.
pub const MAX_PAGES: usize = 10_000;

/// A connection's refreshes in flight.
pub struct Refresh<R> {
    listing: Option<Listing<R>>,
    /// Another listing wanted after the current one, and who waits for it.
    queued: Option<Vec<R>>,
    /// The queued listing follows a `list_changed`.
    queued_changed: bool,
    manifest_in_flight: bool,
    manifest_again: bool,
    /// When the last manifest read was sent (SPEC §17.8: the rate is bounded).
    manifest_last: Option<Instant>,
    /// A read deferred to the end of the interval is armed.
    manifest_deferred: bool,
    /// Announcements coalesced away since the last read (a defect to surface, §17.8).
    manifest_coalesced: u64,
    /// Listings that failed in a row (the next retry waits longer).
    failures: u32,
}

impl<R> Default for Refresh<R> {
    fn default() -> Self {
        Refresh {
            listing: None,
            queued: None,
            queued_changed: false,
            manifest_in_flight: false,
            manifest_again: false,
            manifest_last: None,
            manifest_deferred: false,
            manifest_coalesced: 0,
            failures: 0,
        }
    }
}

struct Listing<R> {
    tools: Vec<Tool>,
    /// The tools left out because they nest too deep or do not decode (issue #37 item 12).
    unreadable: Vec<String>,
    /// Started after the server said its list changed (`ToolsListed::list_changed`).
    list_changed: bool,
    /// The lowest `mcpl/rev` the pages named (§3).
    rev: Option<u64>,
    cursors: HashSet<String>,
    waiters: Vec<R>,
    /// The least `ttlMs` the pages named (MCP 2026-07-28 caching).
    ttl_ms: Option<u64>,
}

/// What to do after a page was read.
#[derive(Debug, PartialEq)]
pub enum PageStep {
    /// No listing is under way (the page came after its listing ended).
    Stray,
    /// Ask for the page after `cursor`. `left_out`: tools of this page that were unreadable.
    Next {
        /// The cursor the page named.
        cursor: String,
        /// Tools of this page left out.
        left_out: usize,
    },
    /// The listing is over: [`Refresh::end`] it with this outcome.
    End {
        /// Every tool, or why the listing failed.
        outcome: Result<Vec<Tool>, LinkError>,
        /// Tools of this page left out.
        left_out: usize,
    },
}

/// What to do about a manifest re-read wanted now (SPEC §17.8).
#[derive(Debug, PartialEq, Eq)]
pub enum ManifestStep {
    /// Nothing now: a read is under way (one more follows it) or one is deferred already.
    Coalesced,
    /// Arm a timer for this long, then call [`Refresh::manifest_timer`] and ask again.
    Defer(Duration),
    /// Read it now; `coalesced` announcements were folded into this read (a defect of the
    /// server's to surface when not 0).
    Read {
        /// How many.
        coalesced: u64,
    },
}

/// A listing ended: who to answer and what to tell.
pub struct Ended<R> {
    /// Who waited for it.
    pub waiters: Vec<R>,
    /// The lowest rev its pages named.
    pub rev: Option<u64>,
    /// It followed a `list_changed`.
    pub list_changed: bool,
    /// The tools left out.
    pub unreadable: Vec<String>,
    /// The least `ttlMs` its pages named.
    pub ttl_ms: Option<u64>,
    /// The listing to start next (queued while this one ran): its waiters and whether it
    /// follows a `list_changed`.
    pub next: Option<(Vec<R>, bool)>,
    /// When none is queued and this one failed where the host needs it: list again after
    /// this delay.
    pub retry: Option<Duration>,
}

/// A page's `ttlMs`, when it names one as a whole number.
pub fn ttl_of(page: &RawValue) -> Option<u64> {
    let ttl = mcpl_protocol::jsonrpc::member(page, "ttlMs")?;
    serde_json::from_str::<u64>(ttl.get()).ok()
}

/// The delay before the next try of a listing that failed `failures` times in a row:
/// `initial`, doubling, at most `max`.
pub fn retry_delay(initial: Duration, max: Duration, failures: u32) -> Duration {
    let factor = 1u32 << failures.saturating_sub(1).min(16);
    initial.saturating_mul(factor).min(max)
}

impl<R> Refresh<R> {
    /// A reason to list: returns the waiters to start a listing with now, or none when one
    /// is under way (then one more is queued after it).
    pub fn want(&mut self, reply: Option<R>, list_changed: bool) -> Option<Vec<R>> {
        if self.listing.is_some() {
            self.queued.get_or_insert_with(Vec::new).extend(reply);
            self.queued_changed |= list_changed;
            return None;
        }
        Some(reply.into_iter().collect())
    }

    /// A listing starts (its first page is asked for).
    pub fn begin(&mut self, waiters: Vec<R>, list_changed: bool) {
        self.listing = Some(Listing {
            tools: Vec::new(),
            unreadable: Vec::new(),
            list_changed,
            rev: None,
            cursors: HashSet::new(),
            waiters,
            ttl_ms: None,
        });
    }

    /// A page read (or its request failed), with the `ttlMs` its result named.
    pub fn page(&mut self, page: Result<ToolsPage, LinkError>, ttl: Option<u64>) -> PageStep {
        let Some(listing) = self.listing.as_mut() else {
            return PageStep::Stray;
        };
        if let Some(ttl) = ttl {
            listing.ttl_ms = Some(listing.ttl_ms.map_or(ttl, |t| t.min(ttl)));
        }
        let ToolsPage { page, unreadable } = match page {
            Ok(page) => page,
            Err(e) => {
                return PageStep::End {
                    outcome: Err(e),
                    left_out: 0,
                };
            }
        };
        let left_out = unreadable.len();
        listing.unreadable.extend(unreadable);
        listing.tools.extend(page.tools);
        if let Some(rev) = page.meta.as_ref().and_then(|m| m.rev) {
            listing.rev = Some(listing.rev.map_or(rev, |r| r.min(rev)));
        }
        let Some(cursor) = page.next_cursor else {
            let tools = std::mem::take(&mut listing.tools);
            return PageStep::End {
                outcome: Ok(tools),
                left_out,
            };
        };
        if listing.cursors.len() >= MAX_PAGES || !listing.cursors.insert(cursor.clone()) {
            return PageStep::End {
                outcome: Err(LinkError::EndlessPaging {
                    method: ListTools::NAME,
                    cursor,
                }),
                left_out,
            };
        }
        PageStep::Next { cursor, left_out }
    }

    /// Ends the listing under way with `outcome`. `first`: no listing completed on this
    /// connection yet; `initial` and `max`: the retry delay's bounds.
    pub fn end<T>(
        &mut self,
        outcome: &Result<T, LinkError>,
        first: bool,
        initial: Duration,
        max: Duration,
    ) -> Ended<R> {
        let (waiters, rev, list_changed, unreadable, ttl_ms) = self
            .listing
            .take()
            .map(|l| (l.waiters, l.rev, l.list_changed, l.unreadable, l.ttl_ms))
            .unwrap_or_default();
        let queued = self.queued.take();
        let queued_changed = std::mem::take(&mut self.queued_changed);
        let retry = match outcome {
            Ok(_) => {
                self.failures = 0;
                None
            }
            Err(
                LinkError::NotConnected { .. }
                | LinkError::Disconnected { .. }
                | LinkError::Stopped,
            ) => None,
            Err(_) if queued.is_none() && (first || list_changed) => {
                self.failures = self.failures.saturating_add(1);
                Some(retry_delay(initial, max, self.failures))
            }
            Err(_) => None,
        };
        Ended {
            waiters,
            rev,
            list_changed,
            unreadable,
            ttl_ms,
            next: queued.map(|q| (q, queued_changed)),
            retry,
        }
    }

    /// A manifest re-read is wanted at `now` (an announcement, or a read to follow one):
    /// one at a time, never more often than once per `min` (SPEC §17.8: the limiter is
    /// the host's); announcements in between are coalesced into one read at the end of the
    /// interval, and counted.
    pub fn want_manifest(&mut self, min: Duration, now: Instant) -> ManifestStep {
        if self.manifest_in_flight {
            self.manifest_again = true;
            self.manifest_coalesced += 1;
            return ManifestStep::Coalesced;
        }
        let wait = self
            .manifest_last
            .map(|last| min.saturating_sub(now.saturating_duration_since(last)))
            .filter(|w| !w.is_zero());
        if let Some(wait) = wait {
            self.manifest_coalesced += 1;
            if std::mem::replace(&mut self.manifest_deferred, true) {
                return ManifestStep::Coalesced;
            }
            return ManifestStep::Defer(wait);
        }
        self.manifest_in_flight = true;
        self.manifest_last = Some(now);
        ManifestStep::Read {
            coalesced: std::mem::take(&mut self.manifest_coalesced),
        }
    }

    /// The deferred read's timer fired: the interval is over.
    pub fn manifest_timer(&mut self) {
        self.manifest_deferred = false;
        self.manifest_last = None;
    }

    /// The read under way was answered; true when another is wanted after it.
    pub fn manifest_read(&mut self) -> bool {
        self.manifest_in_flight = false;
        std::mem::take(&mut self.manifest_again)
    }

    /// Everyone waiting, the listing under way and the one queued forgotten (the
    /// connection went).
    pub fn take_all(&mut self) -> Vec<R> {
        let current = self.listing.take().map(|l| l.waiters).unwrap_or_default();
        current
            .into_iter()
            .chain(self.queued.take().unwrap_or_default())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::mcp::ListToolsResult;
    use mcpl_protocol::meta::Meta;

    fn page(names: &[&str], cursor: Option<&str>, rev: Option<u64>) -> ToolsPage {
        let tools = names
            .iter()
            .map(|n| {
                serde_json::from_value::<Tool>(
                    serde_json::json!({"name": n, "inputSchema": {"type": "object"}}),
                )
                .unwrap()
            })
            .collect();
        let meta = rev
            .map(|r| serde_json::from_value::<Meta>(serde_json::json!({ "mcpl/rev": r })).unwrap());
        ToolsPage {
            page: ListToolsResult {
                tools,
                next_cursor: cursor.map(str::to_owned),
                meta,
            },
            unreadable: Vec::new(),
        }
    }

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn issue38_02_pages_are_followed_and_joined_with_the_lowest_rev_and_ttl() {
        let mut r = Refresh::<u8>::default();
        let waiters = r.want(Some(1), false).expect("none under way");
        r.begin(waiters, false);
        assert_eq!(r.want(Some(2), true), None, "queued behind the listing");
        assert_eq!(
            r.page(Ok(page(&["a"], Some("c1"), Some(7))), Some(500)),
            PageStep::Next {
                cursor: "c1".into(),
                left_out: 0
            }
        );
        let PageStep::End { outcome, .. } = r.page(Ok(page(&["b"], None, Some(5))), Some(900))
        else {
            panic!("the last page ends the listing")
        };
        let ended = r.end(&outcome, true, MS, 8 * MS);
        let names: Vec<_> = outcome.unwrap().into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!((ended.rev, ended.ttl_ms), (Some(5), Some(500)));
        assert_eq!(ended.waiters, [1]);
        assert_eq!(
            ended.next,
            Some((vec![2], true)),
            "the queued listing is next"
        );
        assert_eq!(ended.retry, None);
        assert_eq!(r.page(Ok(page(&[], None, None)), None), PageStep::Stray);
    }

    #[test]
    fn issue38_02_manifest_reads_are_one_at_a_time_and_rate_bounded() {
        let mut r = Refresh::<()>::default();
        let t0 = Instant::now();
        let min = Duration::from_secs(1);
        assert_eq!(
            r.want_manifest(min, t0),
            ManifestStep::Read { coalesced: 0 }
        );
        assert_eq!(
            r.want_manifest(min, t0),
            ManifestStep::Coalesced,
            "one at a time"
        );
        assert!(r.manifest_read(), "one more after it");
        let half = t0 + min / 2;
        assert_eq!(r.want_manifest(min, half), ManifestStep::Defer(min / 2));
        assert_eq!(
            r.want_manifest(min, half),
            ManifestStep::Coalesced,
            "deferred once"
        );
        r.manifest_timer();
        assert_eq!(
            r.want_manifest(min, t0 + min),
            ManifestStep::Read { coalesced: 3 },
            "the announcements folded in are counted"
        );
        assert!(!r.manifest_read());
        assert_eq!(
            r.want_manifest(min, t0 + 3 * min),
            ManifestStep::Read { coalesced: 0 },
            "the interval passed"
        );
    }

    #[test]
    fn issue38_02_a_repeated_cursor_ends_the_listing_as_endless() {
        let mut r = Refresh::<()>::default();
        r.begin(Vec::new(), false);
        assert!(matches!(
            r.page(Ok(page(&["a"], Some("x"), None)), None),
            PageStep::Next { .. }
        ));
        match r.page(Ok(page(&["a"], Some("x"), None)), None) {
            PageStep::End {
                outcome: Err(LinkError::EndlessPaging { cursor, .. }),
                ..
            } => assert_eq!(cursor, "x"),
            other => panic!("not ended as endless: {other:?}"),
        }
    }

    #[test]
    fn issue38_02_a_failed_listing_the_host_needs_is_retried_ever_later() {
        let mut r = Refresh::<()>::default();
        let failed: Result<(), LinkError> = Err(LinkError::MalformedResult {
            method: "tools/list",
            detail: "x".into(),
        });
        let mut delays = Vec::new();
        for _ in 0..5 {
            r.begin(Vec::new(), false);
            delays.push(r.end(&failed, true, MS, 4 * MS).retry);
        }
        assert_eq!(
            delays,
            [
                Some(MS),
                Some(2 * MS),
                Some(4 * MS),
                Some(4 * MS),
                Some(4 * MS)
            ]
        );
        // Not the first listing and not after list_changed: a caller's, not retried.
        r.begin(Vec::new(), false);
        assert_eq!(r.end(&failed, false, MS, 4 * MS).retry, None);
        // The connection went: nothing to retry on it.
        r.begin(Vec::new(), true);
        let gone: Result<(), LinkError> = Err(LinkError::Stopped);
        assert_eq!(r.end(&gone, true, MS, 4 * MS).retry, None);
        // A success starts the count again.
        r.begin(Vec::new(), true);
        r.end(&Ok::<(), LinkError>(()), false, MS, 4 * MS);
        r.begin(Vec::new(), true);
        assert_eq!(r.end(&failed, false, MS, 4 * MS).retry, Some(MS));
    }
}
