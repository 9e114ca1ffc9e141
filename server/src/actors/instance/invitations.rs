//! An invitation's life as the instance sees it (§4.6, §7): its principal received it and
//! shows it under a name of its own, or its principal declined it — the core says whether
//! either still means anything; each then runs a step of the logic, as a timer does:
//! nobody awaits what it changes.

use super::{Decline, InstanceActor, InvitationNamed};
use actix::prelude::*;

impl Handler<InvitationNamed> for InstanceActor {
    type Result = ();

    fn handle(&mut self, m: InvitationNamed, ctx: &mut Context<Self>) {
        if self.is_shell() || !self.core.handle_named(m.who, m.name.as_deref()) {
            return;
        }
        let Some(mut logic) = self.logic.take() else {
            return;
        };
        match self.run(|cx| logic.invited(m.who, m.name.as_deref(), cx)) {
            Ok(((), effects)) => {
                self.logic = Some(logic);
                self.dispatch(effects, None, None, None, ctx);
            }
            Err(panic) => {
                self.fail(&panic, None, None, ctx);
            }
        }
    }
}

impl Handler<Decline> for InstanceActor {
    type Result = ();

    fn handle(&mut self, Decline { who, principal }: Decline, ctx: &mut Context<Self>) {
        if self.is_shell() || !self.core.handle_decline(who, principal) {
            return;
        }
        let Some(mut logic) = self.logic.take() else {
            return;
        };
        match self.run(|cx| logic.declined(who, cx)) {
            Ok(((), effects)) => {
                self.logic = Some(logic);
                self.dispatch(effects, None, None, None, ctx);
            }
            Err(panic) => {
                self.fail(&panic, None, None, ctx);
            }
        }
    }
}
