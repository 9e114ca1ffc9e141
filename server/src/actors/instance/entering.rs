//! How participants enter an instance: the opener starts it (the logic's open step), and
//! an invited principal joins it (its join step).

use super::*;

impl Handler<Start> for InstanceActor {
    type Result = Result<Entered, EnterFailure>;

    fn handle(&mut self, m: Start, ctx: &mut Context<Self>) -> Self::Result {
        let opener = m.opening.opener;
        self.participants = vec![Participant {
            id: opener,
            kind: ParticipantKind::Principal(m.opening.principal.clone()),
        }];
        if let Some(name) = &m.link.key.instance {
            self.names.insert(opener, name.clone());
        }
        self.links.insert(opener, m.link);
        self.name = m.opening.instance.clone();
        self.options = m.opening.options.clone();
        let logic = m.logic;
        match self.run(|cx| logic.open(m.opening, cx)) {
            Ok((Ok(started), effects)) => {
                self.logic = Some(started.logic);
                let batch = self.dispatch(effects, None, None, Some(opener), ctx);
                Ok(Entered {
                    title: started.title,
                    content: started.content,
                    batch,
                })
            }
            Ok((Err(refusal), _)) => {
                self.links.clear();
                ctx.stop();
                Err(EnterFailure::Refused(refusal))
            }
            Err(panic) => {
                tracing::error!(instance = %self.id, toolset = %self.toolset, %panic, "the toolset's open panicked");
                self.links.clear();
                ctx.stop();
                Err(EnterFailure::Internal)
            }
        }
    }
}

impl Handler<Join> for InstanceActor {
    type Result = Result<Entered, EnterFailure>;

    fn handle(&mut self, m: Join, ctx: &mut Context<Self>) -> Self::Result {
        let invited = self
            .participants
            .get(m.who.0 as usize)
            .is_some_and(|p| p.kind == ParticipantKind::Invited(m.principal.clone()));
        if let Some(reason) = &self.ended {
            return Err(EnterFailure::Refused(crate::author::Refusal::new(format!(
                "it has ended: {reason}"
            ))));
        }
        let Some(mut logic) = self.logic.take().filter(|_| invited) else {
            return Err(EnterFailure::Refused(crate::author::Refusal::new(
                "the invitation is no longer open",
            )));
        };
        let who = m.who;
        self.participants[who.0 as usize].kind = ParticipantKind::Principal(m.principal.clone());
        self.invited.remove(&who);
        if let Some(name) = &m.link.key.instance {
            self.names.insert(who, name.clone());
        }
        self.links.insert(who, m.link);
        match self.run(|cx| logic.join(who, cx)) {
            Ok((Ok(joined), effects)) => {
                self.logic = Some(logic);
                let batch = self.dispatch(effects, None, None, Some(who), ctx);
                Ok(Entered {
                    title: joined.title,
                    content: joined.content,
                    batch,
                })
            }
            Ok((Err(refusal), effects)) => {
                self.logic = Some(logic);
                self.participants[who.0 as usize].kind = ParticipantKind::Left(m.principal);
                self.links.remove(&who);
                self.dispatch(effects, None, None, None, ctx);
                self.stop_if_unlinked(ctx);
                Err(EnterFailure::Refused(refusal))
            }
            Err(panic) => {
                // The joiner's record was never announced: it hears nothing of the end.
                self.participants[who.0 as usize].kind = ParticipantKind::Left(m.principal);
                self.links.remove(&who);
                self.fail(&panic, None, None, ctx);
                self.stop_if_unlinked(ctx);
                Err(EnterFailure::Internal)
            }
        }
    }
}
