//! An invitation's life as the instance sees it (§4.6, §7): its principal received it and
//! shows it under a name of its own, or its principal declined it. Each runs a step of the
//! logic, as a timer does: nobody awaits what it changes.

use super::{Decline, InstanceActor, InvitationNamed};
use crate::author::ParticipantKind;
use actix::prelude::*;

impl Handler<InvitationNamed> for InstanceActor {
    type Result = ();

    fn handle(&mut self, m: InvitationNamed, ctx: &mut Context<Self>) {
        let still_invited = self
            .participants
            .get(m.who.0 as usize)
            .is_some_and(|p| matches!(p.kind, ParticipantKind::Invited(_)));
        if !still_invited {
            return;
        }
        if let Some(name) = &m.name {
            self.names.insert(m.who, name.clone());
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
        let Some(p) = self.participants.get_mut(who.0 as usize) else {
            return;
        };
        // The invitation may have been withdrawn meanwhile (the instance ended): nothing
        // is left to decline.
        if p.kind != ParticipantKind::Invited(principal.clone()) {
            return;
        }
        p.kind = ParticipantKind::Declined(principal);
        self.invited.remove(&who);
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
