//! Re-reading what the server lists, as the actor carries it out: a listing asked of the
//! core ([`super::core::LinkCore::list_tools`], which pages it and queues one more behind
//! the one under way: `host-core/src/link/paging.rs` has the rules), its end told to subscribers and
//! waiters, and its retry armed.
//!
//! **A modern server's lists** (MCP 2026-07-28) carry `ttlMs`: how long they may be
//! taken as fresh. While the session's `subscriptions/listen` is open, changes are told and
//! the ttl matters not; without one (the server offers none, or refused or ended it), a
//! `tools/call` that completes after the list went stale starts a listing
//! **\[project\]**: a call is what may change the list (the tool that adds tools), and
//! what the agent does next needs the list as it is; no timer polls a server nobody uses.
//! (`cacheScope` needs nothing here: the list is this link's own, never shared.)
//!
//! A listing that fails while the connection lives is tried again after a growing delay
//! when the host needs it (`host-core/src/link/paging.rs`); a listing a caller asked for fails to that
//! caller, who decides.

use super::actor::ServerLink;
use super::core::error::LinkError;
use super::core::paging::Ended;
use super::events::LinkEvent;
use super::pending::ToolsReply;
use super::requests::now;
use actix::prelude::*;
use mcpl_protocol::mcp::Tool;
use mcpl_protocol::method::{CallTool, Method};
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

    /// Lists the tools, now or after the listing under way (the core pages it);
    /// `reply` gets the full list. `list_changed`: because the server said its list
    /// changed.
    pub(super) fn refresh_tools(
        &mut self,
        reply: Option<ToolsReply>,
        list_changed: bool,
        ctx: &mut Context<Self>,
    ) {
        let phase = self.lifecycle.phase();
        let refused = match self.lifecycle.live_mut() {
            Some(live) => live.core.list_tools(reply, list_changed, now()).err(),
            None => Some(reply),
        };
        if let Some(Some(reply)) = refused {
            let _ = reply.send(Err(LinkError::NotConnected { phase }));
        }
        self.flush();
        self.arm_timer(ctx);
    }

    /// A listing ended (the core read its pages): its waiters answered, what changed told,
    /// a retry armed when the core asks for one.
    pub(super) fn on_listed(
        &mut self,
        epoch: u64,
        outcome: Result<Arc<[Tool]>, LinkError>,
        changed: bool,
        ended: Ended<ToolsReply>,
        ctx: &mut Context<Self>,
    ) {
        let Ended {
            waiters,
            rev,
            list_changed,
            unreadable,
            retry,
            ..
        } = ended;
        match &outcome {
            Ok(tools) => {
                if changed {
                    let tools = tools.clone();
                    self.emit(LinkEvent::ToolsChanged { epoch, tools });
                }
                self.emit(LinkEvent::ToolsListed {
                    epoch,
                    tools: tools.clone(),
                    rev,
                    list_changed,
                    unreadable,
                });
            }
            Err(e) => {
                mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, error = %e, "tools/list failed")
            }
        }
        for reply in waiters {
            let _ = reply.send(outcome.clone().map(|tools| tools.to_vec()));
        }
        if let Some(delay) = retry {
            ctx.run_later(delay, move |act, ctx| {
                if act.lifecycle.live().is_some_and(|l| l.epoch() == epoch) {
                    act.refresh_tools(None, list_changed, ctx);
                }
            });
        }
    }
}
