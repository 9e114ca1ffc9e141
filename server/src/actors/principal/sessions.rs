//! The principal's sessions: attached, detached (the last one's going ends what it held),
//! initialized, ready.

use super::*;

impl Handler<Attach> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: Attach, ctx: &mut Context<Self>) {
        if let Some(t) = self.retire_timer.take() {
            ctx.cancel_future(t);
        }
        let first = self.sessions.is_empty();
        self.sessions.insert(
            m.id,
            SessionLink {
                to: m.to,
                ready: false,
                plain: false,
                since: self.told_seq,
            },
        );
        if first {
            self.open_defaults(ctx);
        }
    }
}

impl Handler<Detach> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: Detach, ctx: &mut Context<Self>) {
        self.sessions.remove(&m.id);
        if !self.sessions.is_empty() {
            return;
        }
        // §4.6: a server that does not keep toolsets ends them with the last connection;
        // an anonymous principal can never reconnect, so nothing of it is kept.
        let anonymous = matches!(self.principal, Principal::Anonymous(_));
        if anonymous || !self.shared.keep_toolsets {
            let ended = self.state.end_all(REASON_DISCONNECTED, self.shared.now());
            for e in ended {
                self.leave(e.instance.key());
            }
        }
        if anonymous {
            self.invitations.clear();
        }
        self.maybe_retire(ctx);
    }
}

impl Handler<HostInitialized> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: HostInitialized, ctx: &mut Context<Self>) {
        // §8: a host without toolHints sees the toolsets it can use without opening open.
        // A connection that served modern requests (told as a plain host) and is then
        // opened with `initialize` is what `initialize` says.
        let view = self.state.catalog().view_for(m.tool_hints);
        if let Some(s) = self.sessions.get_mut(&m.id) {
            s.plain = view == crate::core::HostView::Plain;
            if s.plain {
                self.implicit_opens(ctx);
            }
        }
    }
}

impl Handler<SessionReady> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: SessionReady, _: &mut Context<Self>) {
        if let Some(s) = self.sessions.get_mut(&m.id) {
            s.ready = true;
            self.send_invitations_to(m.id);
        }
    }
}
