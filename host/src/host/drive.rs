//! What every handler ends with: `drive` carries out what the core asked (reads of a
//! server's state, the hold and retry timers, warnings about what a server sent), hands
//! what it showed to the subscribers, persists told ids and publishes the status.

use super::actor::{Host, now};
use super::shown::Shown;
use crate::link::{LinkError, ListTools, SendRequest};
use crate::state::{Action, ReadOutcome, ReadStep};
use actix::prelude::*;
use mcpl_protocol::method::ToolsetsList;
use mcpl_protocol::toolsets::ToolsetsListParams;
use tracing::warn;

/// A read of a server's state came back (its result was tapped before this was sent).
#[derive(Debug, Message)]
#[rtype(result = "()")]
struct ReadDone {
    server: String,
    epoch: u64,
    token: u64,
    step: ReadStep,
    outcome: ReadOutcome,
}

impl Host {
    /// Ends every handler: carries out what the core asked, in order; hands what it
    /// showed to the subscribers; persists told ids when some were added (vector 13
    /// across restarts); publishes the status.
    pub(super) fn drive(&mut self, ctx: &mut Context<Self>) {
        while let Some(action) = self.core.poll_action() {
            self.act(action, ctx);
        }
        while let Some((seq, m)) = self.core.poll_shown() {
            let shown = Shown::new(seq, &m);
            self.subscribers.retain(|s| s.send(shown.clone()).is_ok());
        }
        if self.core.presenter_mut().take_told_dirty()
            && let Some(store) = &self.store
            && let Err(e) = store.save(self.core.presenter().told_ids())
        {
            warn!(error = %e, "could not persist the told ended ids");
        }
        self.publish();
    }

    fn act(&mut self, action: Action, ctx: &mut Context<Self>) {
        match action {
            Action::Read {
                server,
                epoch,
                token,
                step,
            } => {
                let Some(link) = self.links.get(&server) else {
                    return;
                };
                let (link, me) = (link.addr.clone(), ctx.address());
                // The answer comes back as a message to this actor's mailbox, behind the
                // tapped result it follows (the link taps a response before it hands it out).
                actix::spawn(async move {
                    let outcome = match step {
                        ReadStep::Statement => {
                            let req =
                                SendRequest::<ToolsetsList>::new(ToolsetsListParams::default());
                            link.send(req)
                                .await
                                .map_err(crate::link::stopped)
                                .and_then(|r| r.map(drop))
                        }
                        ReadStep::ToolsList => link
                            .send(ListTools)
                            .await
                            .map_err(crate::link::stopped)
                            .and_then(|r| r.map(drop)),
                    };
                    let outcome = match outcome {
                        Ok(()) => ReadOutcome::Answered,
                        Err(
                            LinkError::NotConnected { .. }
                            | LinkError::Disconnected { .. }
                            | LinkError::Stopped,
                        ) => ReadOutcome::Gone,
                        Err(e) => ReadOutcome::Failed(e.to_string()),
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
            Action::RetryAfter {
                server,
                epoch,
                token,
                delay,
            } => {
                ctx.run_later(delay, move |act, ctx| {
                    act.core.retry_due(&server, epoch, token, now());
                    act.drive(ctx);
                });
            }
            Action::ListTools { server } => {
                if let Some(link) = self.links.get(&server) {
                    link.addr.do_send(ListTools);
                }
            }
            Action::Hold { server, epoch, at } => {
                let Some(link) = self.links.get_mut(&server) else {
                    return;
                };
                if let Some(handle) = link.hold.take() {
                    ctx.cancel_future(handle);
                }
                if let Some(at) = at {
                    let delay = at.saturating_duration_since(now());
                    let name = server.clone();
                    let handle = ctx.run_later(delay, move |act, ctx| {
                        if let Some(link) = act.links.get_mut(&name) {
                            link.hold = None;
                        }
                        act.core.hold_expired(&name, epoch, now());
                        act.drive(ctx);
                    });
                    link.hold = Some(handle);
                }
            }
            Action::PeerWarning { server, what } => {
                mcpl_transport::warn_limited!(self.peer_warnings, server, %what, "a server sent what this host cannot use");
            }
        }
    }

    pub(super) fn publish(&self) {
        let mut status = self.core.status(self.waiting.len());
        for (name, s) in &mut status.servers {
            if let Some(link) = self.links.get(name) {
                s.read_ahead_peak = link.gate.peak();
            }
        }
        self.status.send_if_modified(|old| {
            let changed = *old != status;
            if changed {
                *old = status;
            }
            changed
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
        self.core.read_done(&server, epoch, token, step, outcome);
        self.drive(ctx);
    }
}
