//! Unit tests of `InstanceCore`, driven as the actor drives it: what a step of the logic
//! recorded goes in, a `Step` comes out (issue #38 item 1: the rules the instance's actor
//! decided). `R` is a plain number: the core only carries the actor's recipients.

use super::*;
use crate::author::Event;
use mcpl_protocol::jsonrpc::ErrorCode;
use serde_json::json;

type Core = InstanceCore<u32>;

fn alice() -> Principal {
    Principal::Named("alice".into())
}

fn bob() -> Principal {
    Principal::Named("bob".into())
}

const A: ParticipantId = ParticipantId(0);
const B: ParticipantId = ParticipantId(1);
const BOT: ParticipantId = ParticipantId(2);

/// An instance of Go opened by alice (as `go:g1`, options size 9), with bob invited as
/// participant 1 — joined when `joined` — and a bot as participant 2.
fn game(joined: bool) -> Core {
    let mut c = InstanceCore::new(InstanceId(7), "go".into());
    let link = Link {
        principal: 10,
        key: InstanceKey::instance("go", "g1"),
    };
    c.handle_start(A, alice(), link, Some("g1".into()), json!({"size": 9}));
    // What the logic's open did through its context: a participant invited, a bot.
    let mut ps = c.take_participants();
    ps.push(Participant {
        id: B,
        kind: ParticipantKind::Invited(bob()),
    });
    ps.push(Participant {
        id: BOT,
        kind: ParticipantKind::Bot("gnugo".into()),
    });
    c.put_participants(ps);
    let step = c.step(
        vec![Effect::Invite {
            who: B,
            reason: "a game?".into(),
            options: None,
        }],
        None,
        None,
    );
    assert_eq!(step.outgoing.len(), 1);
    if joined {
        c.admit_join(B, &bob()).expect("bob is invited");
        let link = Link {
            principal: 11,
            key: InstanceKey::instance("go", "with-alice"),
        };
        c.handle_join(B, bob(), link);
    }
    c
}

fn call(c: &mut Core, who: ParticipantId, session: u64, request: i64) -> (CallId, Waiter) {
    let w = Waiter::new(who, SessionId(session), Id::Number(request));
    (c.begin_call(w.clone()), w)
}

fn visible(tool: &str, to: Audience) -> Effect {
    Effect::Visible {
        to,
        tool: tool.into(),
        visible: true,
    }
}

fn tools(b: &Batch) -> Vec<&str> {
    b.changes
        .iter()
        .map(|c| match c {
            Change::Visible { tool, .. } | Change::Definition { tool, .. } => tool.as_str(),
            Change::Title(t) => t.as_str(),
        })
        .collect()
}

#[test]
fn issue38_01_a_step_reaches_each_present_principal_it_names_on_its_own_record() {
    // §4.6, §7: one batch per participant principal, under its own name for the instance;
    // the invited and the bot get none.
    let mut c = game(false);
    let step = c.step(vec![visible("play", Audience::All)], None, None);
    assert_eq!(step.batches.keys().copied().collect::<Vec<_>>(), [A]);
    let mut c = game(true);
    let step = c.step(
        vec![
            visible("play", Audience::AllBut(A)),
            Effect::Title {
                to: Audience::Only(A),
                title: "Go vs bob".into(),
            },
            Effect::Event {
                to: Audience::All,
                event: Event::text("bob joined"),
            },
        ],
        None,
        None,
    );
    let (a, b) = (&step.batches[&A], &step.batches[&B]);
    assert_eq!(a.key, InstanceKey::instance("go", "g1"));
    assert_eq!(b.key, InstanceKey::instance("go", "with-alice"));
    assert_eq!(tools(a), ["Go vs bob"]);
    assert_eq!(tools(b), ["play"]);
    assert_eq!((a.events.len(), b.events.len()), (1, 1));
    assert!(!step.batches.contains_key(&BOT));
}

#[test]
fn issue38_01_a_call_s_own_answer_is_not_deferred_and_any_other_answer_is() {
    // §5.3: a step's changes explain the call it runs for; a call it answers on the side
    // (the opponent's waiting move) is deferred.
    let mut c = game(true);
    let (bobs, _) = call(&mut c, B, 2, 20);
    let (alices, w) = call(&mut c, A, 1, 10);
    let own = c
        .end_call(alices)
        .map(|w| (w, Ok(CallToolResult::text("played"))));
    assert_eq!(
        own.as_ref().map(|(o, _)| o.request.clone()),
        Some(w.request)
    );
    let step = c.step(
        vec![Effect::Answer {
            call: bobs,
            result: Ok(CallToolResult::text("your move")),
        }],
        own,
        Some(alices),
    );
    let a = &step.batches[&A].answers;
    let b = &step.batches[&B].answers;
    assert_eq!(
        (a.len(), a[0].deferred, a[0].request.clone()),
        (1, false, Id::Number(10))
    );
    assert_eq!(
        (b.len(), b[0].deferred, b[0].request.clone()),
        (1, true, Id::Number(20))
    );
    assert_eq!(c.waiting().count(), 0);
}

#[test]
fn issue38_01_a_hold_covers_its_whole_step_and_the_oldest_held_call_per_session() {
    // §5.3 (`hold_for`): the changes recorded before the hold are covered too; a session
    // with two held calls has its oldest named.
    let mut c = game(true);
    let (first, _) = call(&mut c, A, 1, 10);
    let (second, _) = call(&mut c, A, 1, 11);
    let (other, _) = call(&mut c, A, 3, 30);
    let step = c.step(
        vec![
            visible("play", Audience::All),
            Effect::Hold { call: second },
            Effect::Hold { call: first },
            Effect::Hold { call: other },
        ],
        None,
        None,
    );
    assert_eq!(
        step.batches[&A].holds,
        [
            (SessionId(1), Id::Number(10)),
            (SessionId(3), Id::Number(30))
        ]
    );
    assert!(step.batches[&B].holds.is_empty());
    // A held call answered leaves nothing held.
    let step = c.step(
        vec![Effect::Answer {
            call: first,
            result: Ok(CallToolResult::text("done")),
        }],
        None,
        None,
    );
    assert_eq!(
        step.batches[&A].holds,
        [
            (SessionId(1), Id::Number(11)),
            (SessionId(3), Id::Number(30))
        ]
    );
}

#[test]
fn issue38_01_an_end_ends_every_record_answers_every_waiting_call_and_withdraws_invitations() {
    // §4.3, §4.6: the logic's end reaches each present principal with its reason and last
    // view; calls still waiting are answered (deferred, but for the caller's own);
    // invitations not taken up are withdrawn.
    let mut c = game(false);
    let (waiting, _) = call(&mut c, A, 1, 10);
    let (mine, _) = call(&mut c, A, 1, 11);
    let step = c.step(
        vec![Effect::End {
            reason: "alice resigned".into(),
            view: Some("final board".into()),
        }],
        None,
        Some(mine),
    );
    let a = &step.batches[&A];
    assert_eq!(a.ended.as_deref(), Some("alice resigned"));
    assert_eq!(a.last_view.as_deref(), Some("final board"));
    let answers: Vec<(Id, bool)> = a
        .answers
        .iter()
        .map(|x| (x.request.clone(), x.deferred))
        .collect();
    assert_eq!(answers, [(Id::Number(10), true), (Id::Number(11), false)]);
    assert!(
        a.answers
            .iter()
            .all(|x| { x.outcome.as_ref().is_ok_and(|r| r.is_error) })
    );
    let _ = waiting;
    assert!(matches!(
        step.outgoing.as_slice(),
        [Outgoing::Withdraw { to, who }] if *to == bob() && *who == B
    ));
    assert_eq!(c.ended(), Some("alice resigned"));
    assert_eq!(
        c.admit_call(A),
        Err("go has ended: alice resigned".to_owned())
    );
}

#[test]
fn issue38_01_a_panic_ends_the_instance_with_internal_error_and_its_calls_fail() {
    // A panic in the logic: every record ends with INTERNAL_ERROR; the calls it owed,
    // the one running among them, fail with -32603.
    let mut c = game(true);
    let (_, bobs) = call(&mut c, B, 2, 20);
    let _ = bobs;
    let (running, w) = call(&mut c, A, 1, 10);
    c.end_call(running);
    let step = c.fail("index out of bounds", Some(w));
    for who in [A, B] {
        let b = &step.batches[&who];
        assert_eq!(b.ended.as_deref(), Some(INTERNAL_ERROR));
        assert_eq!(b.answers.len(), 1);
        let code = b.answers[0].outcome.as_ref().map_err(|e| e.code);
        assert_eq!(code, Err(ErrorCode::INTERNAL_ERROR));
    }
    assert!(!step.batches[&A].answers[0].deferred);
    assert!(step.batches[&B].answers[0].deferred);
}

#[test]
fn issue38_01_a_call_is_refused_after_its_caller_left_and_the_last_one_leaving_ends_it() {
    // §4.2, §4.6: a participant leaving has its waiting calls answered; once nobody is
    // present the instance ends ("closed") without anyone to tell.
    let mut c = game(true);
    call(&mut c, A, 1, 10);
    call(&mut c, B, 2, 20);
    let mut batch = Batch::new(InstanceId(7), InstanceKey::instance("go", "g1"));
    assert!(!c.remove(A, &mut batch), "bob is still playing");
    assert_eq!(batch.answers.len(), 1);
    assert_eq!(batch.answers[0].request, Id::Number(10));
    assert!(batch.answers[0].deferred);
    assert_eq!(
        c.admit_call(A),
        Err("You are no longer in this go instance.".to_owned())
    );
    assert_eq!(c.admit_call(B), Ok(()));
    let mut batch = Batch::new(InstanceId(7), InstanceKey::instance("go", "with-alice"));
    assert!(c.remove(B, &mut batch));
    assert_eq!(c.ended(), Some("closed"));
    assert!(c.is_unlinked());
}

#[test]
fn issue38_01_only_an_invited_principal_joins_and_not_once_the_instance_ended() {
    // §4.6, §7.
    let c = game(false);
    assert!(c.admit_join(B, &bob()).is_ok());
    assert_eq!(
        c.admit_join(B, &alice())
            .map_err(|r| r.message().to_owned()),
        Err("the invitation is no longer open".to_owned())
    );
    assert!(c.admit_join(BOT, &bob()).is_err());
    let c = game(true);
    assert!(c.admit_join(B, &bob()).is_err(), "joined already");
    let mut c = game(false);
    c.step(
        vec![Effect::End {
            reason: "over".into(),
            view: None,
        }],
        None,
        None,
    );
    assert_eq!(
        c.admit_join(B, &bob()).map_err(|r| r.message().to_owned()),
        Err("it has ended: over".to_owned())
    );
    assert!(!c.handle_decline(B, alice()), "not alice's invitation");
    assert!(c.handle_decline(B, bob()));
    assert!(!c.handle_decline(B, bob()), "declined already");
}

#[test]
fn issue38_01_an_invitation_carries_the_instance_s_options_unless_the_logic_names_others() {
    // §4.6: the invitation suggests joining as the instance is; after a restart the
    // invitations not taken up are sent again.
    let mut c = game(false);
    let invites = c.invitations();
    assert!(matches!(
        invites.as_slice(),
        [Outgoing::Invite { to, invite: Invite { who, name, options: Some(o), from, .. } }]
            if *to == bob() && *who == B && name.as_deref() == Some("g1")
                && *o == json!({"size": 9}) && *from == alice()
    ));
    let mut ps = c.take_participants();
    ps.push(Participant {
        id: ParticipantId(3),
        kind: ParticipantKind::Invited(Principal::Named("carol".into())),
    });
    c.put_participants(ps);
    let step = c.step(
        vec![
            Effect::Invite {
                who: ParticipantId(3),
                reason: "watch?".into(),
                options: Some(json!({"size": 19})),
            },
            Effect::Wake {
                after: Duration::from_secs(30),
                tag: 4,
            },
        ],
        None,
        None,
    );
    assert!(matches!(
        step.outgoing.as_slice(),
        [Outgoing::Invite { invite: Invite { options: Some(o), .. }, .. }]
            if *o == json!({"size": 19})
    ));
    assert_eq!(step.timers, [(Duration::from_secs(30), 4)]);
    // Named under the invitee's own name (§7), which the logic then uses.
    assert!(c.handle_named(B, Some("alices-game")));
    assert_eq!(c.names().get(&B).map(String::as_str), Some("alices-game"));
    assert!(!c.handle_named(A, Some("x")), "alice is no invitee");
}

#[test]
fn issue38_01_a_principal_whose_record_ended_hears_only_answers() {
    // §4.6: a leave (its last connection closed, a manifest change) — the close step's
    // changes, events and end are not its any more; answers still are.
    let mut b = Batch::new(InstanceId(7), InstanceKey::instance("go", "g1"));
    b.changes.push(Change::Title("t".into()));
    b.events.push(Event::text("e"));
    b.ended = Some("closed".into());
    b.answers.push(CallAnswer {
        session: SessionId(1),
        request: Id::Number(1),
        outcome: Ok(CallToolResult::text("a")),
        deferred: true,
    });
    left(&mut b);
    assert!(b.changes.is_empty() && b.events.is_empty() && b.ended.is_none());
    assert_eq!(b.answers.len(), 1);
}
