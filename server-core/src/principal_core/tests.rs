//! Unit tests of `PrincipalCore`, driven as the actor drives it: inputs in, outputs drained
//! with `poll`, one rule each (issue #38 item 1: the rules the principal's actor decided).
//! `A` is a plain number here: the core only carries the actor's addresses.

use super::*;
use crate::author::{Event, Refusal};
use crate::batch::{Batch, CallAnswer, Change, Closed, EnterFailure, Entered};
use crate::catalog::tests::arcade;
use crate::principal::{EndedIds, PrincipalConfig};
use crate::store::Ticket;
use mcpl_protocol::jsonrpc::Id;
use mcpl_protocol::mcp::CallToolResult;
use serde_json::json;
use std::time::{Duration, UNIX_EPOCH};

type Core = PrincipalCore<u32>;

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_796_040_000 + secs)
}

fn state_of(catalog: Catalog) -> PrincipalState {
    PrincipalState::new(
        Arc::new(catalog),
        PrincipalConfig::default(),
        EndedIds::new(0),
        at(0),
    )
}

/// A principal as its actor starts it: the default-open lobby is open in its state from
/// the start (§4.1), and its instance (address and id 1) runs.
fn core(anonymous: bool, keep: bool) -> Core {
    let mut c = PrincipalCore::new(state_of(arcade()), anonymous, keep, BTreeMap::new());
    for key in c.unlinked_instances() {
        c.handle_entered(
            key,
            HintDraft::new(),
            None,
            link(1, 1, 0),
            entered(None),
            at(0),
        );
    }
    drain(&mut c);
    c
}

fn drain(core: &mut Core) -> Vec<Output<u32>> {
    std::iter::from_fn(|| core.poll()).collect()
}

fn s(n: u64) -> SessionId {
    SessionId(n)
}

fn rpc(session: u64, request: i64) -> ReplyTo {
    ReplyTo {
        session: s(session),
        request: Id::Number(request),
        via: Via::Rpc,
    }
}

fn link(addr: u32, id: u64, who: u32) -> InstanceLink<u32> {
    InstanceLink {
        addr,
        id: InstanceId(id),
        who: ParticipantId(who),
    }
}

fn g(name: &str) -> InstanceKey {
    InstanceKey::instance("go", name)
}

fn entered(batch: Option<Batch>) -> Result<Entered, EnterFailure> {
    Ok(Entered {
        title: None,
        content: Vec::new(),
        batch,
    })
}

/// The keys of the `Start` outputs, with whether someone asked.
fn starts(outputs: &[Output<u32>]) -> Vec<(InstanceKey, bool)> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Start { key, reply, .. } => Some((key.clone(), reply.is_some())),
            _ => None,
        })
        .collect()
}

/// Feeds the instance's answer to every `Start` (instance ids from 1, addresses equal).
fn enter_all(core: &mut Core, outputs: Vec<Output<u32>>, now: SystemTime) {
    let mut next = 1;
    for o in outputs {
        if let Output::Start {
            key, base, reply, ..
        } = o
        {
            core.handle_entered(
                key,
                base,
                reply,
                link(next, next.into(), 0),
                entered(None),
                now,
            );
            next += 1;
        }
    }
}

/// Opens `go:<name>` on an attached core, as host 1 asks and the instance (address
/// `addr`, id `addr`) agrees.
fn open_go(core: &mut Core, name: &str, addr: u32) {
    core.handle_open(rpc(1, 100), "go".into(), Some(name.into()), None, at(1));
    let out = drain(core);
    let Some(Output::Start {
        key, base, reply, ..
    }) = out.into_iter().next()
    else {
        panic!("an open of a fresh name starts an instance");
    };
    core.handle_entered(
        key,
        base,
        reply,
        link(addr, addr.into(), 0),
        entered(None),
        at(1),
    );
    drain(core);
}

fn tells(outputs: &[Output<u32>]) -> Vec<&Applied> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Tell { applied, .. } => Some(applied),
            _ => None,
        })
        .collect()
}

fn ended_batch(key: InstanceKey, instance: u64, reason: &str) -> Batch {
    let mut b = Batch::new(InstanceId(instance), key);
    b.ended = Some(reason.into());
    b
}

#[test]
fn issue38_01_the_first_session_opens_the_default_toolsets_and_no_later_one_does() {
    // §4.1, vector 25: the lobby is open from the start; once the last connection ended it
    // (§4.6), the next first session opens it again, its logic started unasked.
    let fresh = PrincipalCore::<u32>::new(state_of(arcade()), false, false, BTreeMap::new());
    assert_eq!(fresh.unlinked_instances(), [InstanceKey::toolset("lobby")]);
    let mut c = core(false, false);
    c.handle_attach(s(1), 0, at(0));
    assert!(drain(&mut c).is_empty(), "open already");
    c.handle_host_initialized(s(1), true, at(0));
    c.handle_detach(s(1), at(1));
    drain(&mut c);
    assert_eq!(c.state().instances().count(), 0);
    c.handle_attach(s(1), 0, at(2));
    let out = drain(&mut c);
    assert_eq!(starts(&out), [(InstanceKey::toolset("lobby"), false)]);
    enter_all(&mut c, out, at(2));
    drain(&mut c);
    c.handle_attach(s(2), 0, at(3));
    assert!(drain(&mut c).is_empty(), "a second session opens nothing");
}

#[test]
fn issue38_01_the_last_connection_ends_every_toolset_on_a_server_that_does_not_keep_them() {
    // §4.6: no keeping — the last connection's end ends everything, each instance told as
    // a leave, each end shown as a record with REASON_DISCONNECTED.
    let mut c = core(false, false);
    c.handle_attach(s(1), 0, at(0));
    drain(&mut c);
    open_go(&mut c, "g1", 7);
    c.handle_attach(s(2), 0, at(1));
    // Legacy connections (their hosts answered `initialize`): the profile's idle time
    // (S13) is for modern requests only.
    c.handle_host_initialized(s(2), true, at(1));
    drain(&mut c);
    c.handle_detach(s(1), at(2));
    assert!(drain(&mut c).is_empty(), "another connection remains");
    assert_eq!(c.state().instances().count(), 2);
    c.handle_detach(s(2), at(3));
    let out = drain(&mut c);
    let left: Vec<u32> = out
        .iter()
        .filter_map(|o| match o {
            Output::Leave(l) => Some(l.addr),
            _ => None,
        })
        .collect();
    assert_eq!(left, [7, 1], "go:g1 (7) and the lobby (1) hear the leave");
    assert_eq!(c.state().instances().count(), 0);
    let reasons: Vec<&str> = c
        .state()
        .ended_records()
        .map(|r| r.reason.as_str())
        .collect();
    assert_eq!(reasons, [REASON_DISCONNECTED, REASON_DISCONNECTED]);
    assert_eq!(
        c.retirement(at(4)),
        Retirement::At(at(3) + PrincipalConfig::default().ended_ttl),
        "a named principal's records are read until they expire"
    );
}

#[test]
fn stateless_s13_an_idle_principal_ends_its_toolsets_once_idle_for_the_idle_time() {
    // Profile §3.6: on a server that does not keep toolsets, the end of a modern request
    // (a session whose host never answered `initialize`) is no connection's end: the
    // toolsets end once the principal has been idle (no session) for the idle time.
    let mut c = core(false, false).with_idle_end(Duration::from_secs(60));
    c.handle_attach(s(1), 0, at(0));
    drain(&mut c);
    open_go(&mut c, "g1", 7);
    c.handle_detach(s(1), at(2));
    assert!(
        drain(&mut c).is_empty(),
        "a modern request's end ends nothing"
    );
    assert_eq!(c.state().instances().count(), 2);
    assert_eq!(
        c.retirement(at(2)),
        Retirement::At(at(62)),
        "look again then"
    );
    // A request within the idle time starts it again; the old deadline ends nothing.
    c.handle_attach(s(2), 0, at(50));
    drain(&mut c);
    c.handle_detach(s(2), at(51));
    c.handle_timeout(at(62));
    assert!(drain(&mut c).is_empty(), "idle since 51 only");
    assert_eq!(c.retirement(at(62)), Retirement::At(at(111)));
    c.handle_timeout(at(111));
    let left: Vec<u32> = drain(&mut c)
        .iter()
        .filter_map(|o| match o {
            Output::Leave(l) => Some(l.addr),
            _ => None,
        })
        .collect();
    assert_eq!(left, [7, 1], "go:g1 (7) and the lobby (1) hear the leave");
    let reasons: Vec<&str> = c
        .state()
        .ended_records()
        .map(|r| r.reason.as_str())
        .collect();
    assert_eq!(reasons, [REASON_IDLE, REASON_IDLE]);
    c.handle_timeout(at(500));
    assert!(drain(&mut c).is_empty(), "ended once");
}

#[test]
fn stateless_s13_a_request_after_the_idle_time_finds_the_toolsets_ended_before_the_timer() {
    // The actor's timer may come late: the next request's attach ends them first, and the
    // default-open lobby opens again for it (§4.1).
    let mut c = core(false, false).with_idle_end(Duration::from_secs(60));
    c.handle_attach(s(1), 0, at(0));
    drain(&mut c);
    open_go(&mut c, "g1", 7);
    c.handle_detach(s(1), at(2));
    drain(&mut c);
    c.handle_attach(s(2), 0, at(100));
    let out = drain(&mut c);
    assert!(
        out.iter()
            .any(|o| matches!(o, Output::Leave(l) if l.addr == 7))
    );
    assert_eq!(
        starts(&out),
        [(InstanceKey::toolset("lobby"), false)],
        "the lobby opens again"
    );
    assert_eq!(c.state().ended_records().count(), 2);
}

#[test]
fn stateless_s13_a_legacy_connection_ends_the_toolsets_at_once_and_a_kept_principal_never() {
    // §4.6 stays for legacy connections; a server that keeps toolsets has no idle time.
    let mut legacy = core(false, false).with_idle_end(Duration::from_secs(60));
    legacy.handle_attach(s(1), 0, at(0));
    legacy.handle_host_initialized(s(1), true, at(0));
    drain(&mut legacy);
    legacy.handle_detach(s(1), at(1));
    assert_eq!(legacy.state().instances().count(), 0);
    let mut kept = core(false, true).with_idle_end(Duration::from_secs(60));
    kept.handle_attach(s(1), 0, at(0));
    drain(&mut kept);
    kept.handle_detach(s(1), at(1));
    kept.handle_timeout(at(1_000));
    assert_eq!(kept.state().instances().count(), 1);
    assert_eq!(kept.retirement(at(1_000)), Retirement::Stay);
}

#[test]
fn issue38_01_a_kept_principal_keeps_its_toolsets_and_an_anonymous_one_keeps_nothing() {
    // §4.6: a server that keeps toolsets keeps a named principal's; an anonymous principal
    // can never come back, so nothing of it is kept, invitations included.
    let mut named = core(false, true);
    named.handle_attach(s(1), 0, at(0));
    drain(&mut named);
    named.handle_detach(s(1), at(1));
    assert!(drain(&mut named).is_empty());
    assert_eq!(named.state().instances().count(), 1);
    assert_eq!(named.retirement(at(1)), Retirement::Stay);

    let mut anon = core(true, true);
    anon.handle_attach(s(1), 0, at(0));
    drain(&mut anon);
    invite(&mut anon, 9);
    drain(&mut anon);
    anon.handle_detach(s(1), at(1));
    let out = drain(&mut anon);
    assert!(matches!(out.as_slice(), [Output::Leave(l)] if l.addr == 1));
    assert!(anon.invitations().is_empty());
    assert_eq!(anon.retirement(at(1)), Retirement::Idle);
}

#[test]
fn issue38_01_a_plain_host_opens_implicitly_when_it_initializes_and_again_after_an_end() {
    // §8: a host without toolHints uses the toolsets it can use without opening; after one
    // ends, it is opened again for it. A hinted host triggers nothing.
    let mut c = core(false, true);
    c.handle_attach(s(1), 0, at(0));
    drain(&mut c);
    drain(&mut c);
    c.handle_host_initialized(s(1), true, at(1));
    assert!(drain(&mut c).is_empty(), "a hinted host opens nothing");
    c.handle_attach(s(2), 0, at(1));
    c.handle_host_initialized(s(2), false, at(1));
    let out = drain(&mut c);
    let solo = InstanceKey::toolset("solo");
    assert_eq!(
        starts(&out),
        [(solo.clone(), false)],
        "the lobby is open already"
    );
    assert!(c.state().is_implicit(&solo));
    // The implicit instance's logic runs; its events reach the plain host only.
    c.handle_entered(
        solo.clone(),
        HintDraft::new(),
        None,
        link(5, 5, 0),
        entered(None),
        at(1),
    );
    drain(&mut c);
    let mut b = Batch::new(InstanceId(5), solo.clone());
    b.events.push(Event::text("solo says hi"));
    assert!(!c.handle_batch(b, at(2)));
    let out = drain(&mut c);
    let [Output::Tell { about, applied }] = out.as_slice() else {
        panic!("one tell, got {out:?}");
    };
    assert!(applied.hidden);
    let applied = Applied {
        events: applied.events.clone(),
        hidden: true,
        ..Applied::empty()
    };
    let told: Vec<SessionId> = c
        .split(about.clone(), applied, 1)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(told, [s(2)], "the hinted session hears nothing of it");
    // It ends (shown? no: an implicit instance leaves no record a hinted host would see),
    // and the plain host gets it again.
    assert!(c.handle_batch(ended_batch(solo.clone(), 5, "done"), at(3)));
    let out = drain(&mut c);
    assert!(matches!(out[0], Output::Unlink(ref l) if l.addr == 5));
    assert_eq!(starts(&out), [(solo, false)]);
}

#[test]
fn issue38_01_a_catalog_without_tool_hints_makes_every_host_plain() {
    // §4.1 (vector 34), §8: with toolHints withdrawn every connection is a plain one, and
    // the implicit opens follow for all of them.
    let mut c = core(false, true);
    c.handle_attach(s(1), 0, at(0));
    drain(&mut c);
    c.handle_host_initialized(s(1), true, at(0));
    drain(&mut c);
    c.handle_swap_catalog(Arc::new(arcade().without_tool_hints()), at(1));
    let out = drain(&mut c);
    assert!(matches!(out[0], Output::Swapped { .. }));
    assert_eq!(starts(&out), [(InstanceKey::toolset("solo"), false)]);
    // With hints kept, a hinted-only principal opens nothing implicitly.
    let mut c = core(false, true);
    c.handle_attach(s(1), 0, at(0));
    drain(&mut c);
    c.handle_host_initialized(s(1), true, at(0));
    drain(&mut c);
    c.handle_swap_catalog(Arc::new(arcade()), at(1));
    let out = drain(&mut c);
    assert!(matches!(out.as_slice(), [Output::Swapped { .. }]));
}

#[test]
fn issue38_01_a_close_the_principal_asked_for_leaves_no_record_and_another_end_does() {
    // §4.3 (revision 4): an asked end, whatever the logic's batch says, leaves no ended
    // record; an end the principal did not ask for is shown, with its reason.
    let mut c = core(false, true);
    c.handle_attach(s(1), 0, at(0));
    drain(&mut c);
    open_go(&mut c, "g1", 7);
    open_go(&mut c, "g2", 8);

    c.handle_close(rpc(1, 200), "go".into(), Some("g1".into()), false);
    let out = drain(&mut c);
    let [Output::Close { key, reply, link }] = out.as_slice() else {
        panic!("the instance is asked, got {out:?}");
    };
    assert_eq!((key, link.as_ref().map(|l| l.addr)), (&g("g1"), Some(7)));
    // The logic resigns the game: its batch ends the whole instance.
    let closed = Closed {
        content: Vec::new(),
        batch: Some(ended_batch(g("g1"), 7, "resigned")),
    };
    c.handle_closed(key.clone(), reply.clone(), Some(closed), at(2));
    let out = drain(&mut c);
    let told = tells(&out);
    assert_eq!(told.len(), 1);
    assert!(matches!(
        &told[0].answers[0],
        (id, Answer { body: AnswerBody::Close(Ok(_)), .. }) if *id == s(1)
    ));
    let closed = &told[0].draft.toolsets;
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0].ended, None, "no ended record to name");
    assert_eq!(c.state().ended_records().count(), 0);

    // g2 ends on its own (the opponent won): shown.
    assert!(c.handle_batch(ended_batch(g("g2"), 8, "lost on time"), at(3)));
    let records: Vec<(Option<String>, String)> = c
        .state()
        .ended_records()
        .map(|r| (r.instance.clone(), r.reason.clone()))
        .collect();
    assert_eq!(records, [(Some("g2".into()), "lost on time".into())]);
}

#[test]
fn issue38_01_a_batch_from_an_instance_no_longer_linked_changes_nothing_but_answers() {
    // A late batch of a closed instance (or of one closed and opened again as another)
    // must not change the new one's record; its answers still go out.
    let mut c = core(false, true);
    c.handle_attach(s(1), 0, at(0));
    drain(&mut c);
    open_go(&mut c, "g1", 7);
    let mut late = Batch::new(InstanceId(99), g("g1"));
    late.changes.push(Change::Visible {
        tool: "play".into(),
        visible: true,
    });
    late.answers.push(CallAnswer {
        session: s(1),
        request: Id::Number(5),
        outcome: Ok(CallToolResult::text("late")),
        deferred: true,
    });
    late.kept = Ticket::NONE;
    c.handle_batch(late, at(2));
    let out = drain(&mut c);
    let told = tells(&out);
    assert!(told[0].draft.is_empty());
    assert_eq!(told[0].answers.len(), 1);
    assert!(!c.state().instance(&g("g1")).unwrap().is_visible("play"));
}

#[test]
fn issue38_01_each_session_gets_the_same_draft_its_own_answers_and_its_hold() {
    // §4.6: one draft for every connection (each numbers it itself); §5.3: answers and
    // holds go to their own session; a session attached after the change was made is
    // not told it (issue #42 item 1).
    let mut c = core(false, true);
    c.handle_attach(s(1), 0, at(0));
    c.handle_attach(s(2), 0, at(0));
    c.handle_attach(s(3), 5, at(0));
    drain(&mut c);
    let mut draft = HintDraft::new();
    draft.toolsets.push(mcpl_protocol::hints::ToolsetChange {
        toolset: "go".into(),
        instance: Some("g1".into()),
        state: mcpl_protocol::hints::ToolsetState::Open,
        title: None,
        reason: None,
        ended: None,
    });
    let answer = |n| Answer {
        request: Id::Number(n),
        body: AnswerBody::Call(Ok(CallToolResult::text("ok"))),
        deferred: false,
    };
    let applied = Applied {
        draft: draft.clone(),
        answers: vec![(s(2), answer(1)), (s(1), answer(2)), (s(9), answer(3))],
        holds: vec![(s(2), Id::Number(4))],
        ..Applied::empty()
    };
    let split = c.split(Some(g("g1")), applied, 5);
    let got: Vec<(SessionId, Vec<Id>, Option<Id>)> = split
        .iter()
        .map(|(id, d)| {
            assert_eq!(d.draft, draft);
            let answers = d.answers.iter().map(|a| a.request.clone()).collect();
            (*id, answers, d.hold.clone())
        })
        .collect();
    assert_eq!(
        got,
        [
            (s(1), vec![Id::Number(2)], None),
            (s(2), vec![Id::Number(1)], Some(Id::Number(4))),
        ],
        "session 3 came after; session 9 is gone"
    );
    assert!(
        c.split(None, Applied::empty(), 9).is_empty(),
        "silence tells no one"
    );
}

/// Instance `addr` invites, as `g` of `go`.
fn invite(c: &mut PrincipalCore<u32>, addr: u32) {
    let invite = crate::instance_core::Invite {
        who: ParticipantId(1),
        toolset: "go".into(),
        name: Some("g".into()),
        options: Some(json!({"size": 9})),
        reason: "alice invites you to Go".into(),
        from: crate::Principal::Named("alice".into()),
    };
    c.handle_invitation(addr, InstanceId(addr.into()), invite);
}

#[test]
fn issue38_01_an_invitation_is_named_by_the_invitee_and_suggested_to_ready_sessions() {
    // §4.6, §7: the name shown is the invitee's own (the inviter's unless taken); the
    // inviting logic learns it; ready sessions get a suggestion, a plain one the compat
    // call to join with (§8); opening that name joins instead of starting.
    let mut c = core(false, true);
    c.handle_attach(s(1), 0, at(0));
    c.handle_attach(s(2), 0, at(0));
    c.handle_attach(s(3), 0, at(0));
    drain(&mut c);
    c.handle_host_initialized(s(2), false, at(0));
    drain(&mut c);
    c.handle_ready(s(1));
    c.handle_ready(s(2));
    assert!(drain(&mut c).is_empty(), "nothing to tell yet");
    open_go(&mut c, "g", 7);
    invite(&mut c, 9);
    let out = drain(&mut c);
    assert!(matches!(
        &out[0],
        Output::Named { addr: 9, who, name: Some(n) } if *who == ParticipantId(1) && n == "g-2"
    ));
    let texts: Vec<(SessionId, String, usize)> = out[1..]
        .iter()
        .map(|o| match o {
            Output::Deliver { session, deliver } => (
                *session,
                serde_json::to_string(&deliver.events[0].content).unwrap(),
                deliver.draft.suggest.len(),
            ),
            other => panic!("a delivery, got {other:?}"),
        })
        .collect();
    assert_eq!(texts.len(), 2, "session 3 is not ready");
    assert!(texts[0].0 == s(1) && texts[0].1.contains("(open go:g-2 to join)"));
    assert!(
        texts[1].0 == s(2)
            && texts[1].1.contains(
                r#"call toolset_open {\"toolset\": \"go\", \"instance\": \"g-2\"} to join"#
            )
    );
    c.handle_ready(s(3));
    assert!(
        matches!(drain(&mut c).as_slice(), [Output::Deliver { session, .. }] if *session == s(3))
    );

    c.handle_open(rpc(1, 300), "go".into(), Some("g-2".into()), None, at(2));
    let out = drain(&mut c);
    assert!(matches!(
        out.as_slice(),
        [Output::Join { key, link, .. }] if *key == g("g-2") && link.addr == 9
    ));
    assert!(c.invitations().is_empty());
}

#[test]
fn issue38_01_a_failed_open_is_taken_back_and_answered() {
    // An instance that refuses its open leaves nothing: no record, no ended record, and
    // the asker reads why.
    let mut c = core(false, true);
    c.handle_attach(s(1), 0, at(0));
    drain(&mut c);
    c.handle_open(rpc(1, 1), "go".into(), Some("g1".into()), None, at(1));
    let Some(Output::Start {
        key, base, reply, ..
    }) = drain(&mut c).into_iter().next()
    else {
        panic!("a start");
    };
    let refused = Err(EnterFailure::Refused(Refusal::new("no boards left")));
    c.handle_entered(key, base, reply, link(7, 7, 0), refused, at(1));
    let out = drain(&mut c);
    assert!(matches!(
        out.as_slice(),
        [Output::Answer { answer: Answer { body: AnswerBody::Open(Err(e)), .. }, .. }] if e.message == "no boards left"
    ));
    assert!(c.state().instance(&g("g1")).is_none());
    assert!(!c.links().contains_key(&g("g1")));
    assert_eq!(c.state().ended_records().count(), 0);
}

#[test]
fn issue38_01_a_call_goes_to_its_instance_to_a_handler_or_is_refused() {
    // §4.5: the instance resolved runs the call; a tool with its own handler runs in the
    // session; a closed toolset's tool is refused with a reason (vector 11).
    let mut c = core(false, true);
    c.handle_attach(s(1), 0, at(0));
    drain(&mut c);
    open_go(&mut c, "g1", 7);
    let call = |tool: &str| CallRequest {
        session: s(1),
        call: HostCall {
            request: Id::Number(1),
            tool: tool.into(),
            arguments: None,
            instance: None,
            plain: false,
            meta: None,
        },
    };
    c.handle_call(call("resign"), |_| false, at(2));
    assert!(matches!(
        drain(&mut c).as_slice(),
        [Output::Call { link, key, tool, .. }] if link.addr == 7 && *key == g("g1") && tool == "resign"
    ));
    c.handle_call(call("status"), |t| t == "status", at(2));
    assert!(matches!(
        drain(&mut c).as_slice(),
        [Output::Answer {
            answer: Answer {
                body: AnswerBody::RunHandler { direct: true, .. },
                ..
            },
            ..
        }]
    ));
    c.handle_call(call("hint"), |_| false, at(2));
    assert!(matches!(
        drain(&mut c).as_slice(),
        [Output::Answer { answer: Answer { body: AnswerBody::Call(Ok(r)), .. }, .. }] if r.is_error
    ));
}

#[test]
fn issue38_01_after_a_restart_what_did_not_come_back_ends_with_a_record_saying_why() {
    // §4.3, §4.6 (issue #15): a link to a running instance is kept; one whose instance
    // ended gets its own reason, one lost gets REASON_LOST; an instanced toolset's
    // instance no link reaches ends too; the default-open lobby waits for its actor.
    use crate::store::records::{LinkRecord, REASON_LOST};
    let mut state = state_of(arcade());
    for name in ["g1", "g2", "g3", "g4"] {
        state.open("go", Some(name), None, at(1)).expect("go opens");
    }
    let record = |name: &str, instance: u64| LinkRecord {
        key: g(name),
        instance,
        who: 0,
        heard: None,
    };
    let records = vec![record("g1", 1), record("g2", 2), record("g3", 3)];
    let back = read_back(
        state,
        records,
        |id| (id == 1).then_some(100u32),
        |id| (id == 2).then(|| "alice won".to_owned()),
        at(2),
    );
    assert_eq!(back.links.keys().cloned().collect::<Vec<_>>(), [g("g1")]);
    assert_eq!(back.links[&g("g1")].addr, 100);
    assert_eq!(back.lost, [3]);
    assert_eq!(back.lost_unlinked, 1);
    let ended: Vec<(String, String)> = back
        .state
        .ended_records()
        .map(|r| (r.instance.clone().unwrap_or_default(), r.reason.clone()))
        .collect();
    assert_eq!(
        ended,
        [
            ("g2".to_owned(), "alice won".to_owned()),
            ("g3".to_owned(), REASON_LOST.to_owned()),
            ("g4".to_owned(), REASON_LOST.to_owned()),
        ]
    );
    let open: Vec<InstanceKey> = back.state.instances().map(|i| i.key().clone()).collect();
    assert_eq!(open, [g("g1"), InstanceKey::toolset("lobby")]);
}

/// A drained output queue keeps the room a call's turn takes, and gives back what a burst
/// grew it to (issue #42: an idle principal holds no burst's queue).
#[test]
fn a_drained_output_queue_keeps_a_turns_room_and_frees_a_bursts() {
    let mut c = core(false, true);
    c.handle_attach(s(1), 0, at(0));
    drain(&mut c);
    let call = |n: i64| CallRequest {
        session: s(1),
        call: HostCall {
            request: Id::Number(n),
            tool: "status".into(),
            arguments: None,
            instance: None,
            plain: false,
            meta: None,
        },
    };
    c.handle_call(call(1), |_| true, at(1));
    assert_eq!(drain(&mut c).len(), 1, "one answer");
    assert_eq!(c.out.capacity(), KEPT_OUTPUTS, "a turn's room, and no more");
    let burst = 2 * KEPT_OUTPUTS as i64 + 2;
    for n in 2..=burst + 1 {
        c.handle_call(call(n), |_| true, at(1));
    }
    assert!(c.out.capacity() > KEPT_OUTPUTS);
    assert_eq!(drain(&mut c).len(), burst as usize, "every call answered");
    assert_eq!(
        c.out.capacity(),
        KEPT_OUTPUTS,
        "a burst's queue is given back once drained, a turn's room kept"
    );
}

/// The state handed to the store and the one a session attaching meanwhile is given are
/// one, shared, when nothing changed between (issue #42: each idle principal held a copy
/// of its statement for that session); a change makes a new one.
#[test]
fn a_state_made_again_unchanged_is_shared_not_copied() {
    let mut c = core(false, true);
    c.handle_attach(s(1), 0, at(0));
    drain(&mut c);
    let handed = c.versioned_now();
    let given = c.given();
    assert!(Arc::ptr_eq(&handed, &given), "one state, shared");
    assert!(
        Arc::ptr_eq(&c.versioned_now(), &handed),
        "and made again, the same"
    );
    open_go(&mut c, "g1", 7);
    let changed = c.versioned_now();
    assert!(changed.version() > handed.version());
    assert!(
        !Arc::ptr_eq(&changed, &handed),
        "a change is a state of its own"
    );
}

#[test]
fn issue41_a_relinked_instance_is_reached_at_its_new_address() {
    // Issue #41: an instance released and adopted again runs behind another address; the
    // link keeps its key and participant, and an unknown instance links nothing.
    let mut c = core(false, true);
    let lobby = InstanceKey::toolset("lobby");
    assert_eq!(c.links()[&lobby].addr, 1);
    assert_eq!(
        c.relink(InstanceId(1), 7),
        Some((lobby.clone(), ParticipantId(0)))
    );
    assert_eq!(c.links()[&lobby].addr, 7);
    assert_eq!(c.relink(InstanceId(99), 8), None);
    assert_eq!(
        c.links()[&lobby].addr,
        7,
        "another instance's relink changes nothing"
    );
}
