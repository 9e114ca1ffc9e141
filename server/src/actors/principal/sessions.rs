//! The principal's sessions attaching, detaching, initialized, ready: fed to the core,
//! which decides what each means (§4.1 default opens, §4.6 the last connection's end, §8
//! implicit opens; `server-core/src/principal_core.rs`).

use super::*;

impl Handler<Attach> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: Attach, ctx: &mut Context<Self>) {
        if let Some(t) = self.retire_timer.take() {
            ctx.cancel_future(t);
        }
        self.sessions.insert(m.id, m.to);
        self.core
            .handle_attach(m.id, self.told_seq, self.shared.now());
        self.flush(ctx);
        // What it answers modern hosts from, until the next change (issue #40).
        // With a store, what was last given: changes come once kept (`give_versioned`).
        let versioned = if self.kept_at_once() {
            self.core.versioned()
        } else {
            self.core.given()
        };
        if let Some(to) = self.sessions.get(&m.id) {
            to.versioned(VersionedFor(versioned));
        }
    }
}

impl Handler<Detach> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: Detach, ctx: &mut Context<Self>) {
        self.sessions.remove(&m.id);
        self.core.handle_detach(m.id, self.shared.now());
        self.flush(ctx);
        if self.core.is_detached() {
            self.maybe_retire(ctx);
        }
    }
}

impl Handler<HostInitialized> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: HostInitialized, ctx: &mut Context<Self>) {
        let now = self.shared.now();
        if m.modern {
            self.core.handle_modern_host(m.id, m.tool_hints, now);
        } else {
            self.core.handle_host_initialized(m.id, m.tool_hints, now);
        }
        self.flush(ctx);
    }
}

impl Handler<SessionReady> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: SessionReady, ctx: &mut Context<Self>) {
        self.core.handle_ready(m.id);
        self.flush(ctx);
    }
}
