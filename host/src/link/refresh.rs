//! Re-reading what the server lists: `tools/list` (every page, following `nextCursor`);
//! the manifest's re-reads (`manifest.rs`) keep their state here too.
//!
//! One listing runs at a time. A reason to list that comes while one is under way (a
//! `list_changed`, a caller) queues one more listing after it rather than joining it: the
//! pages already read may predate that reason.
//!
//! **A modern server's lists** (MCP 2026-07-28) carry `ttlMs`: how long they may be
//! taken as fresh. While the session's `subscriptions/listen` is open, changes are told and
//! the ttl matters not; without one (the server offers none, or refused or ended it), a
//! `tools/call` that completes after the list went stale starts a listing
//! **\[project\]**: a call is what may change the list (the tool that adds tools), and
//! what the agent does next needs the list as it is; no timer polls a server nobody uses.
//! (`cacheScope` needs nothing here: the list is this link's own, never shared.)
//!
//! A listing that fails while the connection lives (an error answer, a timeout, a
//! Streamable HTTP POST that failed) is tried again after a growing delay when the host
//! needs it: the connection's first listing (nothing is settled without it), or one after
//! `list_changed` (the list the host has is known to be old). A listing a caller asked for
//! fails to that caller, who decides.

use super::actor::ServerLink;
use super::decode::{ToolsPage, tools_page};
use super::error::LinkError;
use super::events::LinkEvent;
use super::lifecycle::Listen;
use super::pending::Waiter;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::RawValue;
use mcpl_protocol::mcp::{ListToolsParams, Tool};
use mcpl_protocol::method::{CallTool, ListTools, Method};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// The most pages one listing follows.
const MAX_PAGES: usize = 10_000;

/// How much longer a listing page is awaited once something unreadable has arrived: that
/// may have been its answer (a schema nested past the reader's depth, a page over the size
/// limit), and the host needs the list. A page whose answer was only delayed behind junk
/// still arrives within it; one that was the junk is given up and listed again (with the
/// growing delay) instead of leaving the server's tools unknown for the whole timeout.
pub(super) const UNREADABLE_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Who waits for a listing.
pub(super) type ToolsReply = oneshot::Sender<Result<Vec<Tool>, LinkError>>;

/// A connection's refreshes in flight.
#[derive(Default)]
pub(super) struct Refresh {
    listing: Option<Listing>,
    /// Another listing wanted after the current one, and who waits for it.
    queued: Option<Vec<ToolsReply>>,
    /// The queued listing follows a `list_changed`.
    queued_changed: bool,
    pub(super) manifest_in_flight: bool,
    pub(super) manifest_again: bool,
    /// When the last manifest read was sent (SPEC §17.8: the rate is bounded).
    pub(super) manifest_last: Option<std::time::Instant>,
    /// A read deferred to the end of the interval is armed.
    pub(super) manifest_deferred: bool,
    /// Announcements coalesced away since the last read (a defect to surface, §17.8).
    pub(super) manifest_coalesced: u64,
    /// Listings that failed in a row (the next retry waits longer).
    failures: u32,
}

/// The delay before the next try of a listing that failed `failures` times in a row: the
/// reconnect backoff's first delay, doubling, at most its largest.
fn retry_delay(backoff: &super::config::BackoffConfig, failures: u32) -> std::time::Duration {
    let factor = 1u32 << failures.saturating_sub(1).min(16);
    backoff.initial.saturating_mul(factor).min(backoff.max)
}

struct Listing {
    tools: Vec<Tool>,
    /// The tools left out because they nest too deep or do not decode (issue #37 item 12).
    unreadable: Vec<String>,
    /// Started after the server said its list changed (`ToolsListed::list_changed`).
    list_changed: bool,
    /// The lowest `mcpl/rev` the pages named (§3).
    rev: Option<u64>,
    cursors: HashSet<String>,
    waiters: Vec<ToolsReply>,
    /// The least `ttlMs` the pages named (MCP 2026-07-28 caching).
    ttl_ms: Option<u64>,
}

/// The longest a listing is taken as fresh, whatever its `ttlMs` says: a day.
const TTL_CAP_MS: u64 = 24 * 60 * 60 * 1000;

/// A page's `ttlMs`, when it names one as a whole number.
fn ttl_of(page: &RawValue) -> Option<u64> {
    let ttl = mcpl_protocol::jsonrpc::member(page, "ttlMs")?;
    serde_json::from_str::<u64>(ttl.get()).ok()
}

impl Refresh {
    /// Fails everyone waiting (the connection went).
    pub(super) fn fail_all(&mut self, error: &LinkError) {
        let current = self.listing.take().map(|l| l.waiters).unwrap_or_default();
        for reply in current
            .into_iter()
            .chain(self.queued.take().unwrap_or_default())
        {
            let _ = reply.send(Err(error.clone()));
        }
    }
}

impl ServerLink {
    /// A modern request completed: a `tools/call` after which the tools list is stale,
    /// with no change stream to tell of changes, starts a listing (module docs).
    pub(super) fn after_modern_call(&mut self, method: &'static str, ctx: &mut Context<Self>) {
        if method != CallTool::NAME {
            return;
        }
        let stale = self
            .lifecycle
            .live()
            .and_then(|l| l.session())
            .is_some_and(|s| {
                s.listen != Listen::Open && s.tools_fresh_until.is_some_and(|t| Instant::now() >= t)
            });
        if stale {
            self.refresh_tools(None, false, ctx);
        }
    }

    /// Something unreadable arrived: a listing page still awaited is given
    /// [`UNREADABLE_GRACE`] more at most, then times out as usual.
    pub(super) fn hasten_listing(&mut self, ctx: &mut Context<Self>) {
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        let mut rearm = Vec::new();
        for (id, pending) in live.pending.listing_pages() {
            if pending.timeout > UNREADABLE_GRACE {
                pending.timeout = UNREADABLE_GRACE;
                rearm.push((id, pending.timer));
            }
        }
        for (id, old) in rearm {
            ctx.cancel_future(old);
            let timer = ctx.run_later(UNREADABLE_GRACE, move |act, ctx| act.on_timeout(id, ctx));
            if let Some((_, p)) = self
                .lifecycle
                .live_mut()
                .and_then(|l| l.pending.listing_pages().find(|(n, _)| *n == id))
            {
                p.timer = timer;
            }
        }
    }

    /// Lists the tools, now or after the listing under way; `reply` gets the full list.
    /// `list_changed`: because the server said its list changed.
    pub(super) fn refresh_tools(
        &mut self,
        reply: Option<ToolsReply>,
        list_changed: bool,
        ctx: &mut Context<Self>,
    ) {
        let phase = self.lifecycle.phase();
        let Some(live) = self.lifecycle.live_mut().filter(|l| l.is_ready()) else {
            if let Some(reply) = reply {
                let _ = reply.send(Err(LinkError::NotConnected { phase }));
            }
            return;
        };
        if live.refresh.listing.is_some() {
            live.refresh
                .queued
                .get_or_insert_with(Vec::new)
                .extend(reply);
            live.refresh.queued_changed |= list_changed;
            return;
        }
        self.start_listing(reply.into_iter().collect(), list_changed, ctx);
    }

    fn start_listing(
        &mut self,
        waiters: Vec<ToolsReply>,
        list_changed: bool,
        ctx: &mut Context<Self>,
    ) {
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        live.refresh.listing = Some(Listing {
            tools: Vec::new(),
            unreadable: Vec::new(),
            list_changed,
            rev: None,
            cursors: HashSet::new(),
            waiters,
            ttl_ms: None,
        });
        self.send_request::<ListTools>(
            &ListToolsParams {
                cursor: None,
                meta: None,
            },
            Waiter::ToolsPage,
            None,
            ctx,
        );
    }

    pub(super) fn on_tools_page(
        &mut self,
        outcome: Result<Box<RawValue>, LinkError>,
        ctx: &mut Context<Self>,
    ) {
        let ttl = outcome.as_ref().ok().and_then(|r| ttl_of(r));
        let page = outcome.and_then(|r| tools_page(ListTools::NAME, &r));
        let Some(listing) = self
            .lifecycle
            .live_mut()
            .and_then(|l| l.refresh.listing.as_mut())
        else {
            return;
        };
        if let Some(ttl) = ttl {
            listing.ttl_ms = Some(listing.ttl_ms.map_or(ttl, |t| t.min(ttl)));
        }
        let (page, unreadable) = match page {
            Ok(ToolsPage { page, unreadable }) => (page, unreadable),
            Err(e) => return self.end_listing(Err(e), ctx),
        };
        if !unreadable.is_empty() {
            mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, left_out = unreadable.len(), "tools/list: tools nested too deep or malformed, left out");
        }
        listing.unreadable.extend(unreadable);
        listing.tools.extend(page.tools);
        if let Some(rev) = page.meta.as_ref().and_then(|m| m.rev) {
            listing.rev = Some(listing.rev.map_or(rev, |r| r.min(rev)));
        }
        let Some(cursor) = page.next_cursor else {
            let tools = std::mem::take(&mut listing.tools);
            return self.end_listing(Ok(tools), ctx);
        };
        if listing.cursors.len() >= MAX_PAGES || !listing.cursors.insert(cursor.clone()) {
            return self.end_listing(
                Err(LinkError::EndlessPaging {
                    method: ListTools::NAME,
                    cursor,
                }),
                ctx,
            );
        }
        self.send_request::<ListTools>(
            &ListToolsParams {
                cursor: Some(cursor),
                meta: None,
            },
            Waiter::ToolsPage,
            None,
            ctx,
        );
    }

    fn end_listing(&mut self, outcome: Result<Vec<Tool>, LinkError>, ctx: &mut Context<Self>) {
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        // One list, shared by the session and every event: never copied per tool.
        let outcome: Result<Arc<[Tool]>, LinkError> = outcome.map(Arc::from);
        let epoch = live.epoch;
        let (waiters, rev, list_changed, unreadable, ttl_ms) = live
            .refresh
            .listing
            .take()
            .map(|l| (l.waiters, l.rev, l.list_changed, l.unreadable, l.ttl_ms))
            .unwrap_or_default();
        let queued = live.refresh.queued.take();
        let queued_changed = std::mem::take(&mut live.refresh.queued_changed);
        let first = live.session_mut().is_some_and(|s| !s.tools_listed);
        let retry = match &outcome {
            Ok(_) => {
                live.refresh.failures = 0;
                None
            }
            Err(
                LinkError::NotConnected { .. }
                | LinkError::Disconnected { .. }
                | LinkError::Stopped,
            ) => None,
            Err(_) if queued.is_none() && (first || list_changed) => {
                live.refresh.failures = live.refresh.failures.saturating_add(1);
                Some(retry_delay(&self.config.backoff, live.refresh.failures))
            }
            Err(_) => None,
        };
        let mut changed = None;
        match (&outcome, live.session_mut()) {
            (Ok(tools), Some(session)) => {
                if !session.tools_listed || session.tools != *tools {
                    changed = Some(tools.clone());
                }
                session.tools = tools.clone();
                session.tools_listed = true;
                session.tools_fresh_until =
                    ttl_ms.map(|ms| Instant::now() + Duration::from_millis(ms.min(TTL_CAP_MS)));
            }
            (Err(e), _) => {
                mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, error = %e, "tools/list failed")
            }
            (Ok(_), None) => {}
        }
        if let Some(tools) = changed {
            self.emit(LinkEvent::ToolsChanged { epoch, tools });
        }
        if let Ok(tools) = &outcome {
            self.emit(LinkEvent::ToolsListed {
                epoch,
                tools: tools.clone(),
                rev,
                list_changed,
                unreadable,
            });
        }
        for reply in waiters {
            let _ = reply.send(outcome.clone().map(|tools| tools.to_vec()));
        }
        if let Some(queued) = queued {
            self.start_listing(queued, queued_changed, ctx);
        } else if let Some(delay) = retry {
            ctx.run_later(delay, move |act, ctx| {
                if act.lifecycle.live().is_some_and(|l| l.epoch == epoch) {
                    act.refresh_tools(None, list_changed, ctx);
                }
            });
        }
    }
}
