//! How participants enter an instance: the opener starts it (the logic's open step), and
//! an invited principal joins it (its join step, once the core admits it).

use super::*;
use crate::author::Refusal;
use crate::store::Follow;

impl Handler<Start> for InstanceActor {
    type Result = Result<(Entered, Follow), EnterFailure>;

    fn handle(&mut self, m: Start, ctx: &mut Context<Self>) -> Self::Result {
        // Not committed before the opener's step that follows it is promised (issue #42).
        let _hold = self.shared.hold();
        let opener = m.opening.opener;
        self.core.handle_start(
            opener,
            m.opening.principal.clone(),
            m.link,
            m.opening.instance.clone(),
            m.opening.options.clone(),
        );
        let logic = m.logic;
        match self.run(|cx| logic.open(m.opening, cx)) {
            Ok((Ok(started), effects)) => {
                self.logic = Some(started.logic);
                let batch = self.dispatch(effects, None, None, Some(opener), ctx);
                let entered = Entered {
                    title: started.title,
                    content: started.content,
                    batch,
                };
                // The opener's principal writes its record next (issue #42 item 1).
                Ok((entered, self.shared.follow()))
            }
            Ok((Err(refusal), _)) => {
                self.core.handle_start_failed();
                ctx.stop();
                Err(EnterFailure::Refused(refusal))
            }
            Err(panic) => {
                tracing::error!(instance = %self.core.id(), toolset = %self.core.toolset(), %panic, "the toolset's open panicked");
                self.core.handle_start_failed();
                ctx.stop();
                Err(EnterFailure::Internal)
            }
        }
    }
}

impl Handler<Join> for InstanceActor {
    type Result = Result<(Entered, Follow), EnterFailure>;

    fn handle(&mut self, m: Join, ctx: &mut Context<Self>) -> Self::Result {
        let _hold = self.shared.hold();
        if self.is_shell() {
            return Err(EnterFailure::Internal); // released (`release.rs`)
        }
        self.core
            .admit_join(m.who, &m.principal)
            .map_err(EnterFailure::Refused)?;
        let Some(mut logic) = self.logic.take() else {
            return Err(EnterFailure::Refused(Refusal::new(
                "the invitation is no longer open",
            )));
        };
        let who = m.who;
        self.core.handle_join(who, m.principal.clone(), m.link);
        match self.run(|cx| logic.join(who, cx)) {
            Ok((Ok(joined), effects)) => {
                self.logic = Some(logic);
                let batch = self.dispatch(effects, None, None, Some(who), ctx);
                let entered = Entered {
                    title: joined.title,
                    content: joined.content,
                    batch,
                };
                Ok((entered, self.shared.follow()))
            }
            Ok((Err(refusal), effects)) => {
                self.logic = Some(logic);
                self.core.handle_join_failed(who, m.principal);
                self.dispatch(effects, None, None, None, ctx);
                self.stop_if_unlinked(ctx);
                Err(EnterFailure::Refused(refusal))
            }
            Err(panic) => {
                // The joiner's record was never announced: it hears nothing of the end.
                self.core.handle_join_failed(who, m.principal);
                self.fail(&panic, None, None, ctx);
                self.stop_if_unlinked(ctx);
                Err(EnterFailure::Internal)
            }
        }
    }
}
