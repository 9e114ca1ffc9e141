//! The messages between a principal's actor and an instance's as they cross nodes
//! (issue #41, `docs/ownership.md` §2): when a principal's owner and an instance's differ,
//! what the actors say to each other goes as JSON on NATS subjects named by the actor
//! (`mcpl.i.<id>`, `mcpl.a.<principal>`). This module is the messages and their bounded
//! encoding; `mcpl_server`'s `actors/remote.rs` sends them through its `Peers`.
//!
//! **\[project\]** Each message is one JSON object named by its kind in `snake_case`
//! (`{"call": {…}}`, serde's external tagging), the core's own values inside as they
//! serialize (ids as numbers, a call's outcome as `{"Ok": …}`/`{"Err": …}`): readable in
//! a NATS monitor, and checked against the bus's bound both ways ([`encode`], [`decode`]).
//!
//! What stays local is not here: `Start` (an instance starts on its opener's node, §1),
//! the commit queue's tickets and promises (`Batch::kept` is never sent; a batch crosses
//! only once its step is kept, from the instance's outbox, §3), and the actors' addresses
//! (a link across nodes is the principal's name and its key for the instance).
//!
//! | message | direction | as |
//! |---|---|---|
//! | [`ToInstance::Join`] → [`Reply::Entered`], [`ToInstance::Close`] → [`Reply::Closed`], [`ToInstance::Decline`] → [`Reply::Declined`] | principal → instance | request/reply |
//! | [`ToInstance::Call`], [`ToInstance::Leave`], [`ToInstance::Unlink`], [`ToInstance::InvitationNamed`] | principal → instance | one-way, [`Numbered`] |
//! | [`ToPrincipal::Batched`] | instance → principal | one-way, [`Numbered`], from the outbox |
//! | [`ToPrincipal::Invitation`], [`ToPrincipal::InvitationWithdrawn`] | instance → principal | one-way to the principal's subject |
//!
//! Anonymous principals never cross nodes (§1 of the design: they run where their
//! connection landed and are never invited, RFC-014 §4.6): a principal is named by its
//! name, and an invitation from an anonymous principal cannot be encoded
//! ([`WireError::Anonymous`]).

use crate::author::ParticipantId;
use crate::batch::{Batch, Closed, EnterFailure, Entered};
use crate::ids::{InstanceId, SessionId};
use crate::instance_core::Invite;
use crate::principal::InstanceKey;
use mcpl_protocol::jsonrpc::Id;
use mcpl_protocol::principal::Principal;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a principal's actor says to an instance's on another node (on `mcpl.i.<id>`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToInstance {
    /// An invited principal opens the instance (§4.6): answered [`Reply::Entered`].
    Join {
        /// The invitee's place in the instance.
        who: ParticipantId,
        /// The principal's name.
        principal: String,
        /// The principal's key for the instance (§7).
        key: InstanceKey,
    },
    /// A participant closes the instance (`toolsets/close`, §4.2): answered
    /// [`Reply::Closed`].
    Close {
        /// The participant.
        who: ParticipantId,
    },
    /// The invited principal declines (§4.6): answered [`Reply::Declined`].
    Decline {
        /// The invitee's place in the instance.
        who: ParticipantId,
        /// The principal's name.
        principal: String,
    },
    /// A participant called a tool of the toolset; the answer comes back in a batch.
    Call {
        /// The participant.
        who: ParticipantId,
        /// The caller's name and key, for an answer even once it is no longer linked.
        principal: String,
        /// The caller's key for the instance.
        key: InstanceKey,
        /// The calling session (on the principal's owner).
        session: SessionId,
        /// The call's request id.
        request: Id,
        /// The tool.
        tool: String,
        /// Its arguments.
        arguments: Map<String, Value>,
    },
    /// A participant's record ended on its principal's side: the logic hears it as a
    /// close, nothing goes back.
    Leave {
        /// The participant.
        who: ParticipantId,
    },
    /// A principal dropped its link after applying the instance's end.
    Unlink {
        /// The participant.
        who: ParticipantId,
    },
    /// The invited principal received the invitation and shows it under `name` (§7).
    InvitationNamed {
        /// The invitee's place in the instance.
        who: ParticipantId,
        /// Its name for the instance; `None` for a toolset without instances.
        name: Option<String>,
    },
}

/// What an instance's actor answers a request of [`ToInstance`].
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// To [`ToInstance::Join`]: the newcomer's answer and changes, or why not.
    Entered(Result<Entered, EnterFailure>),
    /// To [`ToInstance::Close`].
    Closed(Closed),
    /// To [`ToInstance::Decline`]: done.
    Declined,
}

/// What an instance's actor says to a principal's on another node (on
/// `mcpl.a.<principal>`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToPrincipal {
    /// One step of the instance for the principal, kept before it is sent.
    Batched(Batch),
    /// The instance invites the principal (§4.6); nobody holding it, the receiving node
    /// starts it (its first use).
    Invitation {
        /// The instance.
        id: InstanceId,
        /// The invitation.
        invite: RemoteInvite,
    },
    /// The instance ended or closed before the invited principal joined.
    InvitationWithdrawn {
        /// The instance.
        id: InstanceId,
        /// The invitee's place in it.
        who: ParticipantId,
    },
}

/// An [`Invite`] as it crosses nodes: its opener by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteInvite {
    /// Who the invitee is in the instance.
    pub who: ParticipantId,
    /// The toolset.
    pub toolset: String,
    /// The opener's name for the instance (§7), suggested as the invitee's.
    pub name: Option<String>,
    /// The options its open carries.
    pub options: Option<Value>,
    /// Why, as the invitee is told.
    pub reason: String,
    /// The name of the principal that opened the instance.
    pub from: String,
}

impl TryFrom<Invite> for RemoteInvite {
    type Error = WireError;

    /// Refused for an invitation from an anonymous principal, which never crosses nodes.
    fn try_from(i: Invite) -> Result<Self, WireError> {
        let from = match i.from {
            Principal::Named(name) => name,
            Principal::Anonymous(_) => return Err(WireError::Anonymous),
        };
        Ok(RemoteInvite {
            who: i.who,
            toolset: i.toolset,
            name: i.name,
            options: i.options,
            reason: i.reason,
            from,
        })
    }
}

impl From<RemoteInvite> for Invite {
    fn from(i: RemoteInvite) -> Self {
        Invite {
            who: i.who,
            toolset: i.toolset,
            name: i.name,
            options: i.options,
            reason: i.reason,
            from: Principal::Named(i.from),
        }
    }
}

/// A one-way message in its stream — one per instance, participant and direction
/// (`docs/ownership.md` §2): NATS core may drop a message, so the sender numbers them,
/// sends again what is not acknowledged, and the receiver drops a number it has seen and
/// acknowledges ([`Ack`]).
#[derive(Debug, Serialize, Deserialize)]
pub struct Numbered<T> {
    /// Which stream: its sender's, drawn at random (**\[project\]**): a receiver seeing
    /// another stream starts counting again. An instance's stream to a participant's
    /// principal is drawn once and kept in the instance's record with its numbers (§3's
    /// outbox), so an instance adopted elsewhere goes on with it. 0 for a request
    /// answered with a [`Reply`], and for answers told outside a step, in no stream.
    pub stream: u64,
    /// From 1, one more for each message of the stream.
    pub number: u64,
    /// The message.
    pub message: T,
}

/// The receiver of a stream applied every message up to `number`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ack {
    /// The last number applied.
    pub number: u64,
}

/// Why a message could not be encoded or decoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// Larger than the bus takes (`BusConfig::max_message`): refused before anything is
    /// sent, or before a received one is read.
    #[error("the message is {size} bytes, over the bound of {max}")]
    TooLarge {
        /// Its size.
        size: usize,
        /// The bound.
        max: usize,
    },
    /// Not a message of this kind (a peer's bad input).
    #[error("the message cannot be read: {0}")]
    Malformed(String),
    /// An anonymous principal's invitation: anonymous principals never cross nodes.
    #[error("an anonymous principal's invitation does not cross nodes")]
    Anonymous,
}

/// `message` as JSON, at most `max` bytes.
pub fn encode<T: Serialize>(message: &T, max: usize) -> Result<Vec<u8>, WireError> {
    let bytes = serde_json::to_vec(message).map_err(|e| WireError::Malformed(e.to_string()))?;
    if bytes.len() > max {
        return Err(WireError::TooLarge {
            size: bytes.len(),
            max,
        });
    }
    Ok(bytes)
}

/// A message read from `bytes`, refused unread when over `max` bytes.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], max: usize) -> Result<T, WireError> {
    if bytes.len() > max {
        return Err(WireError::TooLarge {
            size: bytes.len(),
            max,
        });
    }
    serde_json::from_slice(bytes).map_err(|e| WireError::Malformed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::author::{Event, Refusal};
    use crate::batch::{CallAnswer, Change};
    use mcpl_protocol::jsonrpc::ErrorObject;
    use mcpl_protocol::mcp::{CallToolResult, ContentBlock};
    use serde_json::json;

    const MAX: usize = 1 << 20;

    fn key() -> InstanceKey {
        InstanceKey {
            toolset: "go".into(),
            instance: Some("g1".into()),
        }
    }

    /// A batch with something of every kind.
    fn batch() -> Batch {
        let mut b = Batch::new(InstanceId(7), key());
        b.changes = vec![
            Change::Visible {
                tool: "play".into(),
                visible: true,
            },
            Change::Definition {
                tool: "play".into(),
                definition: None,
            },
            Change::Title("Go vs bob".into()),
        ];
        b.events = vec![Event::text("bob played D4").turn()];
        b.answers = vec![
            CallAnswer {
                session: SessionId(3),
                request: Id::Number(12),
                outcome: Ok(CallToolResult::text("played")),
                deferred: false,
            },
            CallAnswer {
                session: SessionId(4),
                request: Id::String("r".into()),
                outcome: Err(ErrorObject::internal("no")),
                deferred: true,
            },
        ];
        b.ended = Some("won".into());
        b.last_view = Some("the board".into());
        b.holds = vec![(SessionId(3), Id::Number(13))];
        b
    }

    /// Encoded, decoded and encoded again: the same JSON both times (the types hold no
    /// `PartialEq`; their JSON says everything they carry).
    fn round_trip<T: Serialize + DeserializeOwned>(message: &T) -> Value {
        let bytes = encode(message, MAX).unwrap();
        let back: T = decode(&bytes, MAX).unwrap();
        let first: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), first);
        first
    }

    #[test]
    fn every_message_to_an_instance_reads_back_as_it_was_written() {
        let who = ParticipantId(1);
        let mut arguments = Map::new();
        arguments.insert("move".into(), json!("D4"));
        let messages = [
            ToInstance::Join {
                who,
                principal: "bob".into(),
                key: key(),
            },
            ToInstance::Close { who },
            ToInstance::Decline {
                who,
                principal: "bob".into(),
            },
            ToInstance::Call {
                who,
                principal: "bob".into(),
                key: key(),
                session: SessionId(9),
                request: Id::Number(5),
                tool: "play".into(),
                arguments,
            },
            ToInstance::Leave { who },
            ToInstance::Unlink { who },
            ToInstance::InvitationNamed {
                who,
                name: Some("g2".into()),
            },
        ];
        let call = round_trip(&messages[3]);
        for message in messages {
            round_trip(&Numbered {
                stream: 3,
                number: 4,
                message,
            });
        }
        assert_eq!(call["call"]["arguments"], json!({"move": "D4"}), "{call}");
        assert_eq!(call["call"]["session"], 9, "{call}");
    }

    #[test]
    fn every_message_to_a_principal_and_every_reply_reads_back_as_it_was_written() {
        let batched = round_trip(&Numbered {
            stream: 3,
            number: 2,
            message: ToPrincipal::Batched(batch()),
        });
        let b = &batched["message"]["batched"];
        assert_eq!(b["instance"], 7, "{batched}");
        assert_eq!(b["last_view"], "the board", "{batched}");
        assert!(b.get("kept").is_none(), "a ticket is its node's: {batched}");
        round_trip(&ToPrincipal::InvitationWithdrawn {
            id: InstanceId(7),
            who: ParticipantId(1),
        });
        let invite = Invite {
            who: ParticipantId(1),
            toolset: "go".into(),
            name: Some("g1".into()),
            options: Some(json!({"size": 9})),
            reason: "alice wants a game".into(),
            from: Principal::Named("alice".into()),
        };
        let remote = RemoteInvite::try_from(invite.clone()).unwrap();
        round_trip(&ToPrincipal::Invitation {
            id: InstanceId(7),
            invite: remote.clone(),
        });
        let back = Invite::from(remote);
        assert_eq!(
            (back.from, back.who, back.options),
            (invite.from, invite.who, invite.options)
        );

        round_trip(&Reply::Entered(Ok(Entered {
            title: Some("Go".into()),
            content: vec![ContentBlock::text("Joined.")],
            batch: Some(batch()),
        })));
        for failure in [
            EnterFailure::Refused(Refusal::new("full")),
            EnterFailure::Internal,
            EnterFailure::Unavailable("the database went away".into()),
        ] {
            round_trip(&Reply::Entered(Err(failure)));
        }
        round_trip(&Reply::Closed(Closed {
            content: vec![],
            batch: None,
        }));
        round_trip(&Reply::Declined);
        round_trip(&Ack { number: 2 });
    }

    #[test]
    fn a_batch_read_from_another_node_holds_all_it_said_and_no_ticket() {
        let sent = batch();
        let bytes = encode(&sent, MAX).unwrap();
        let back: Batch = decode(&bytes, MAX).unwrap();
        assert_eq!(back.kept, crate::store::Ticket::NONE);
        assert_eq!((back.instance, &back.key), (InstanceId(7), &key()));
        assert_eq!(back.events, sent.events);
        assert_eq!(back.holds, sent.holds);
        assert_eq!(back.ended.as_deref(), Some("won"));
        assert_eq!(back.last_view.as_deref(), Some("the board"));
        assert!(matches!(
            &back.changes[..],
            [
                Change::Visible { visible: true, .. },
                Change::Definition {
                    definition: None,
                    ..
                },
                Change::Title(t),
            ] if t == "Go vs bob"
        ));
        let answers: Vec<_> = back
            .answers
            .iter()
            .map(|a| (a.session, a.request.clone(), a.outcome.is_ok(), a.deferred))
            .collect();
        assert_eq!(
            answers,
            [
                (SessionId(3), Id::Number(12), true, false),
                (SessionId(4), Id::String("r".into()), false, true)
            ]
        );
    }

    #[test]
    fn oversized_malformed_and_anonymous_messages_are_clear_errors() {
        let big = ToInstance::InvitationNamed {
            who: ParticipantId(0),
            name: Some("x".repeat(100)),
        };
        assert!(matches!(
            encode(&big, 64),
            Err(WireError::TooLarge { max: 64, .. })
        ));
        let bytes = encode(&big, MAX).unwrap();
        assert!(matches!(
            decode::<ToInstance>(&bytes, 64),
            Err(WireError::TooLarge { max: 64, .. })
        ));
        for bad in [&b"{"[..], br#"{"join": {"who": "one"}}"#, br#"{"fly": {}}"#] {
            let e = decode::<ToInstance>(bad, MAX).unwrap_err();
            assert!(matches!(e, WireError::Malformed(_)), "{e}");
        }
        let anonymous = Invite {
            who: ParticipantId(1),
            toolset: "go".into(),
            name: None,
            options: None,
            reason: "a game".into(),
            from: Principal::Anonymous(3),
        };
        assert!(matches!(
            RemoteInvite::try_from(anonymous),
            Err(WireError::Anonymous)
        ));
    }
}
