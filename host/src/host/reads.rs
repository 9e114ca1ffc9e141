//! The Host's reads of a server's state (§4.3, §5.2): `toolsets/list` after every connect,
//! and recovery — `toolsets/list`, then `tools/list`, one at a time.
//!
//! Each result is applied where it is read — the tapped `toolsets/list` result for the
//! statement, the link's `ToolsListed` for the list — in read order with everything else.
//! What comes back here is only whether the request went through, so the next step can
//! follow: a statement that moved the hint state on to its `tools/list` step gets one; a
//! failed read (an error, no answer, a stale statement) is retried after a delay through
//! [`crate::state::HintState::handle_recovery_failed`]; a lost connection ends every read
//! (the next connection starts from its own statement).

use super::actor::Host;
use super::server::ReadStep;
use crate::link::{LinkError, ListTools, SendRequest};
use actix::prelude::*;
use mcpl_protocol::method::ToolsetsList;
use mcpl_protocol::toolsets::ToolsetsListParams;
use tracing::{debug, warn};

/// The longest wait before reading again after failed reads.
const MAX_RETRY_DELAY: std::time::Duration = std::time::Duration::from_secs(30);

/// A read came back (its result was tapped before this was sent).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(super) struct ReadDone {
    server: String,
    epoch: u64,
    token: u64,
    step: ReadStep,
    outcome: Result<(), LinkError>,
}

impl Host {
    /// Sends `toolsets/list` for the current connection.
    pub(super) fn read_statement(&mut self, server: &str, ctx: &mut Context<Self>) {
        self.start_read(server, ReadStep::Statement, ctx);
    }

    /// A recovery's second step: lists the tools again (the link's listing; its
    /// `ToolsListed` is applied as read).
    fn relist(&mut self, server: &str, ctx: &mut Context<Self>) {
        self.start_read(server, ReadStep::ToolsList, ctx);
    }

    fn start_read(&mut self, server: &str, step: ReadStep, ctx: &mut Context<Self>) {
        let Some(slot) = self.servers.get_mut(server) else {
            return;
        };
        let token = slot.take_token();
        slot.read = Some((token, step));
        let (link, epoch, me) = (slot.link.clone(), slot.epoch, ctx.address());
        let server = server.to_owned();
        // The answer comes back as a message to this actor's mailbox, behind the tapped
        // result it follows (the link taps a response before it hands it out).
        actix::spawn(async move {
            let outcome = match step {
                ReadStep::Statement => {
                    let req = SendRequest::<ToolsetsList>::new(ToolsetsListParams::default());
                    link.send(req)
                        .await
                        .map_err(LinkError::from)
                        .and_then(|r| r.map(drop))
                }
                ReadStep::ToolsList => link
                    .send(ListTools)
                    .await
                    .map_err(LinkError::from)
                    .and_then(|r| r.map(drop)),
            };
            me.do_send(ReadDone {
                server,
                epoch,
                token,
                step,
                outcome,
            });
        });
    }

    /// Reads again after the retry delay, doubling with each failure in a row up to
    /// [`MAX_RETRY_DELAY`]: a server that keeps failing (or keeps stating a stale rev)
    /// costs a bounded, falling rate of reads.
    fn read_failed(&mut self, server: &str, epoch: u64, token: u64, ctx: &mut Context<Self>) {
        let Some(slot) = self.servers.get_mut(server) else {
            return;
        };
        slot.read_failures = slot.read_failures.saturating_add(1);
        let factor = 1u32 << (slot.read_failures - 1).min(16);
        let delay = self
            .retry_delay
            .saturating_mul(factor)
            .min(MAX_RETRY_DELAY.max(self.retry_delay));
        let server = server.to_owned();
        ctx.run_later(delay, move |act, ctx| {
            let current = act
                .servers
                .get(&server)
                .is_some_and(|s| s.epoch == epoch && s.read.is_some_and(|(t, _)| t == token));
            if current {
                act.feed(&server, ctx, |h, _| h.handle_recovery_failed());
                act.flush();
            }
        });
    }
}

impl Handler<ReadDone> for Host {
    type Result = ();

    fn handle(&mut self, msg: ReadDone, ctx: &mut Context<Self>) {
        let ReadDone {
            server,
            epoch,
            token,
            step,
            outcome,
        } = msg;
        let Some(slot) = self.servers.get_mut(&server) else {
            return;
        };
        let current = slot.epoch == epoch && slot.read.is_some_and(|(t, _)| t == token);
        let Some(hints) = slot.hints.as_ref().filter(|_| current) else {
            debug!(server, ?step, "a superseded read came back");
            return;
        };
        match outcome {
            Err(
                LinkError::NotConnected { .. }
                | LinkError::Disconnected { .. }
                | LinkError::Stopped,
            ) => {
                // The next connection reads its own statement.
                slot.read = None;
            }
            Err(e) => {
                warn!(server, ?step, error = %e, "a read of the server's state failed; reading again shortly");
                self.read_failed(&server, epoch, token, ctx);
            }
            Ok(()) if step == ReadStep::Statement && hints.awaits_tools_list() => {
                slot.read_failures = 0;
                self.relist(&server, ctx);
            }
            Ok(()) if step == ReadStep::Statement && hints.awaits_statement() => {
                // Stale, or without its statement: it did not count.
                warn!(
                    server,
                    "a toolsets/list that did not count; reading again shortly"
                );
                self.read_failed(&server, epoch, token, ctx);
            }
            Ok(()) => {
                slot.read = None;
                slot.read_failures = 0;
            }
        }
        self.flush();
    }
}
