//! Invitations into shared instances (§4.6, §7): the invited principal's connections are
//! told with a push whose hints `suggest` opening the instance under a name of this
//! principal's own; opening that name joins the instance instead of starting another
//! (`requests.rs`). Nothing else of the inviter's reaches this principal (§7).

use super::{Deliver, Output, PrincipalCore};
use crate::Principal;
use crate::author::{Event, ParticipantId};
use crate::catalog::TOOLSET_OPEN;
use crate::ids::{InstanceId, SessionId};
use crate::instance_core::Invite;
use crate::tool::outcome::{self, DeclineError};
use crate::{HintDraft, InstanceKey};
use mcpl_protocol::hints::{SuggestAction, Suggestion};
use mcpl_protocol::names::{MAX_NAME_LEN, is_valid_name};
use serde_json::Value;

/// An invitation not taken up yet.
#[derive(Debug, Clone)]
pub struct Pending<A> {
    /// How the actor reaches the inviting instance.
    pub instance: A,
    /// The inviting instance's id.
    pub id: InstanceId,
    /// Who this principal is in it.
    pub who: ParticipantId,
    /// The options its open carries.
    pub options: Option<Value>,
    /// Why, as this principal is told.
    pub reason: String,
    /// The principal that opened the instance.
    pub from: Principal,
}

impl<A> Pending<A> {
    /// As a tool handler sees it, under this principal's name for it.
    pub fn shown(&self, key: &InstanceKey) -> outcome::Invitation {
        outcome::Invitation {
            toolset: key.toolset.clone(),
            instance: key.instance.clone(),
            reason: self.reason.clone(),
            options: self.options.clone(),
            from: self.from.clone(),
        }
    }
}

impl<A: Clone> PrincipalCore<A> {
    /// The instance `id` (reached as `instance`) invites this principal, suggesting its
    /// own name for the instance.
    pub fn handle_invitation(&mut self, instance: A, id: InstanceId, invite: Invite) {
        let Invite {
            who,
            toolset,
            name,
            options,
            reason,
            from,
        } = invite;
        let pending = Pending {
            instance,
            id,
            who,
            options,
            reason,
            from,
        };
        let key = InstanceKey {
            instance: self.free_name(&toolset, name.as_deref()),
            toolset,
        };
        tracing::debug!(%key, "invited");
        // The inviting logic learns the name this principal sees (§7: its own).
        self.out.push_back(Output::Named {
            addr: pending.instance.clone(),
            who: pending.who,
            name: key.instance.clone(),
        });
        self.invitations.insert(key.clone(), pending);
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

    /// The instance ended or closed before this principal joined: its invitation goes.
    pub fn handle_withdrawn(&mut self, id: InstanceId, who: ParticipantId) {
        self.invitations
            .retain(|_, p| !(p.id == id && p.who == who));
    }

    /// The pending invitations, as a tool handler sees them.
    pub fn invitations(&self) -> Vec<outcome::Invitation> {
        self.invitations.iter().map(|(k, p)| p.shown(k)).collect()
    }

    /// A tool handler declines an invitation: it goes at once; the actor tells the
    /// instance (`Pending::instance`).
    pub fn handle_decline(&mut self, key: InstanceKey) -> Result<Pending<A>, DeclineError> {
        match self.invitations.remove(&key) {
            Some(pending) => {
                tracing::debug!(%key, "invitation declined");
                Ok(pending)
            }
            None => {
                let open = self.state.instance(&key).is_some();
                Err(DeclineError::NotInvited {
                    toolset: key.toolset,
                    instance: key.instance,
                    open,
                })
            }
        }
    }

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
        self.out.push_back(Output::Deliver { session, deliver });
    }

    /// §7: the name to suggest is the inviter's, unless this principal has that name open
    /// or promised to another invitation; then the first free `<name>-<n>`.
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
