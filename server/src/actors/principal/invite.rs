//! Invitations into shared instances (§4.6, §7): the invited principal's connections are
//! told with a push whose hints `suggest` opening the instance under a name of this
//! principal's own; opening that name joins the instance instead of starting another.
//! Nothing else of the inviter's reaches this principal (§7).
//!
//! The name chosen goes back to the instance (its logic may tell the inviter under which
//! name the invitee sees the game), and a tool handler of this principal may list the
//! invitations or decline one (`ToolContext::invitations`, `decline_invitation`).

use super::{DeclineInvitation, Deliver, ListInvitations, PrincipalActor};
use crate::actors::instance::{
    Decline, InstanceActor, Invitation, InvitationNamed, InvitationWithdrawn,
};
use crate::author::{Event, ParticipantId};
use crate::core::catalog::TOOLSET_OPEN;
use crate::core::{HintDraft, InstanceKey};
use crate::ids::InstanceId;
use crate::ids::SessionId;
use crate::tool::outcome::{self, DeclineError};
use actix::prelude::*;
use mcpl_protocol::hints::{SuggestAction, Suggestion};
use mcpl_protocol::names::{MAX_NAME_LEN, is_valid_name};
use mcpl_transport::Principal;
use serde_json::Value;

/// An invitation not taken up yet.
pub(super) struct Pending {
    pub(super) instance: Addr<InstanceActor>,
    pub(super) id: InstanceId,
    pub(super) who: ParticipantId,
    pub(super) options: Option<Value>,
    pub(super) reason: String,
    pub(super) from: Principal,
}

impl Pending {
    /// As a tool handler sees it, under this principal's name for it.
    fn shown(&self, key: &InstanceKey) -> outcome::Invitation {
        outcome::Invitation {
            toolset: key.toolset.clone(),
            instance: key.instance.clone(),
            reason: self.reason.clone(),
            options: self.options.clone(),
            from: self.from.clone(),
        }
    }
}

impl Handler<Invitation> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, inv: Invitation, _: &mut Context<Self>) {
        let key = InstanceKey {
            instance: self.free_name(&inv.toolset, inv.name.as_deref()),
            toolset: inv.toolset,
        };
        tracing::debug!(principal = %self.principal.name(), %key, "invited");
        // The inviting logic learns the name this principal sees (§7: its own).
        inv.instance.do_send(InvitationNamed {
            who: inv.who,
            name: key.instance.clone(),
        });
        self.invitations.insert(
            key.clone(),
            Pending {
                instance: inv.instance,
                id: inv.id,
                who: inv.who,
                options: inv.options,
                reason: inv.reason,
                from: inv.from,
            },
        );
        let ready: Vec<SessionId> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.ready)
            .map(|(id, _)| *id)
            .collect();
        for id in ready {
            self.send_invitation(id, &key);
        }
    }
}

impl Handler<InvitationWithdrawn> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: InvitationWithdrawn, ctx: &mut Context<Self>) {
        self.invitations
            .retain(|_, p| !(p.id == m.id && p.who == m.who));
        self.maybe_retire(ctx);
    }
}

impl Handler<ListInvitations> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: ListInvitations, _: &mut Context<Self>) {
        let list = self.invitations.iter().map(|(k, p)| p.shown(k)).collect();
        // The handler may have stopped waiting; nothing to do then.
        let _ = m.reply.send(list);
    }
}

impl Handler<DeclineInvitation> for PrincipalActor {
    type Result = ();

    /// The invitation goes at once; the handler is answered once the instance's logic has
    /// heard of it (an instance never awaits a principal, so this cannot deadlock).
    fn handle(&mut self, m: DeclineInvitation, ctx: &mut Context<Self>) {
        let key = InstanceKey {
            toolset: m.toolset,
            instance: m.instance,
        };
        let Some(pending) = self.invitations.remove(&key) else {
            let open = self.state.instance(&key).is_some();
            let _ = m.reply.send(Err(DeclineError::NotInvited {
                toolset: key.toolset,
                instance: key.instance,
                open,
            }));
            return;
        };
        tracing::debug!(principal = %self.principal.name(), %key, "invitation declined");
        let shown = pending.shown(&key);
        let decline = Decline {
            who: pending.who,
            principal: self.principal.clone(),
        };
        let reply = m.reply;
        ctx.spawn(
            pending
                .instance
                .send(decline)
                .into_actor(self)
                .map(move |_, act, ctx| {
                    // Gone or not, the instance has nothing more to say about it.
                    let _ = reply.send(Ok(shown));
                    act.maybe_retire(ctx);
                }),
        );
    }
}

impl PrincipalActor {
    /// Sends every pending invitation to a session that just became ready.
    pub(super) fn send_invitations_to(&mut self, session: SessionId) {
        let keys: Vec<InstanceKey> = self.invitations.keys().cloned().collect();
        for key in keys {
            self.send_invitation(session, &key);
        }
    }

    /// The suggestion, explained by an event saying who invites (§5.3: shown to the agent,
    /// never acted on by the host).
    fn send_invitation(&mut self, session: SessionId, key: &InstanceKey) {
        let (Some(p), Some(s)) = (self.invitations.get(key), self.sessions.get(&session)) else {
            return;
        };
        let mut draft = HintDraft::new();
        draft.suggest(Suggestion {
            toolset: key.toolset.clone(),
            instance: key.instance.clone(),
            action: SuggestAction::Open,
            reason: p.reason.clone(),
            options: p.options.clone(),
        });
        // The event names the instance too: a host without hints gets no suggestion, and its
        // agent joins by opening that name through the compat tool it has (§8), so the
        // event names that tool and its arguments (issue #36, item 13).
        let text = if s.plain {
            // Written out in this order (a JSON map would sort `instance` first); each
            // name is quoted as JSON.
            let quoted = |s: &str| Value::from(s).to_string();
            let mut args = format!("{{\"toolset\": {}", quoted(&key.toolset));
            if let Some(instance) = &key.instance {
                args.push_str(&format!(", \"instance\": {}", quoted(instance)));
            }
            format!("{} (call {TOOLSET_OPEN} {args}}} to join)", p.reason)
        } else {
            format!("{} (open {key} to join)", p.reason)
        };
        let deliver = Deliver {
            about: Some(key.clone()),
            draft,
            answers: Vec::new(),
            events: vec![Event::text(text)],
            hold: None,
        };
        self.deliver_in_turn(session, deliver);
    }

    /// The name to suggest: the inviter's, unless this principal has that name open or
    /// promised to another invitation; then the first free `<name>-<n>`.
    fn free_name(&self, toolset: &str, suggested: Option<&str>) -> Option<String> {
        if !self.state.catalog().is_instanced(toolset) {
            return None;
        }
        let base = suggested.filter(|n| is_valid_name(n)).unwrap_or(toolset);
        let free = |name: &str| {
            let key = InstanceKey::instance(toolset, name);
            self.state.instance(&key).is_none() && !self.invitations.contains_key(&key)
        };
        if free(base) {
            return Some(base.to_owned());
        }
        (2u64..)
            .map(|n| {
                let suffix = format!("-{n}");
                let prefix: String = base.chars().take(MAX_NAME_LEN - suffix.len()).collect();
                format!("{prefix}{suffix}")
            })
            .find(|name| free(name))
    }
}
