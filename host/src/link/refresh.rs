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
use super::core::decode::tools_page;
use super::core::paging::{Ended, PageStep, ttl_of};
use super::error::LinkError;
use super::events::LinkEvent;
use super::pending::{ToolsReply, Waiter};
use super::requests::now;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::RawValue;
use mcpl_protocol::mcp::{ListToolsParams, Tool};
use mcpl_protocol::method::{CallTool, ListTools, Method};
use std::sync::Arc;

/// How much longer a listing page is awaited once something unreadable has arrived: that
/// may have been its answer (a schema nested past the reader's depth, a page over the size
/// limit), and the host needs the list. A page whose answer was only delayed behind junk
/// still arrives within it; one that was the junk is given up and listed again (with the
/// growing delay) instead of leaving the server's tools unknown for the whole timeout.
pub(super) const UNREADABLE_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

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
            .is_some_and(|s| s.tools_stale(now()));
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
        if live.core.pending.hasten_listing(UNREADABLE_GRACE, now()) > 0 {
            self.arm_timer(ctx);
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
        if let Some(waiters) = live.core.refresh.want(reply, list_changed) {
            self.start_listing(waiters, list_changed, ctx);
        }
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
        live.core.refresh.begin(waiters, list_changed);
        self.send_page(None, ctx);
    }

    fn send_page(&mut self, cursor: Option<String>, ctx: &mut Context<Self>) {
        let params = ListToolsParams { cursor, meta: None };
        self.send_request::<ListTools>(&params, Waiter::ToolsPage, None, ctx);
    }

    pub(super) fn on_tools_page(
        &mut self,
        outcome: Result<Box<RawValue>, LinkError>,
        ctx: &mut Context<Self>,
    ) {
        let ttl = outcome.as_ref().ok().and_then(|r| ttl_of(r));
        let page = outcome.and_then(|r| tools_page(ListTools::NAME, &r));
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        let (step, left_out) = match live.core.refresh.page(page, ttl) {
            PageStep::Stray => return,
            PageStep::Next { cursor, left_out } => (Ok(cursor), left_out),
            PageStep::End { outcome, left_out } => (Err(outcome), left_out),
        };
        if left_out > 0 {
            mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, left_out, "tools/list: tools nested too deep or malformed, left out");
        }
        match step {
            Ok(cursor) => self.send_page(Some(cursor), ctx),
            Err(outcome) => self.end_listing(outcome, ctx),
        }
    }

    fn end_listing(&mut self, outcome: Result<Vec<Tool>, LinkError>, ctx: &mut Context<Self>) {
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        // One list, shared by the session and every event: never copied per tool.
        let outcome: Result<Arc<[Tool]>, LinkError> = outcome.map(Arc::from);
        let epoch = live.epoch();
        let first = live.session().is_some_and(|s| !s.tools_listed);
        let backoff = &self.config.backoff;
        let Ended {
            waiters,
            rev,
            list_changed,
            unreadable,
            ttl_ms,
            next,
            retry,
        } = live
            .core
            .refresh
            .end(&outcome, first, backoff.initial, backoff.max);
        let mut changed = None;
        match (&outcome, live.session_mut()) {
            (Ok(tools), Some(session)) => {
                if session.record_listing(tools.clone(), ttl_ms, now()) {
                    changed = Some(tools.clone());
                }
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
        if let Some((queued, queued_changed)) = next {
            self.start_listing(queued, queued_changed, ctx);
        } else if let Some(delay) = retry {
            ctx.run_later(delay, move |act, ctx| {
                if act.lifecycle.live().is_some_and(|l| l.epoch() == epoch) {
                    act.refresh_tools(None, list_changed, ctx);
                }
            });
        }
    }
}
