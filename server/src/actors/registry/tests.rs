//! The registry on its own: a session attaching while its principal retires is never lost.
//! Messages are sent without awaiting, so the mailbox order the test relies on is the order
//! of the sends.

use super::*;
use crate::actors::principal::{ForSession, SessionAddr};
use crate::ids::SessionId;

/// A session that hears what its principal says and ignores it.
struct Quiet;

impl Actor for Quiet {
    type Context = Context<Self>;
}

impl Handler<ForSession> for Quiet {
    type Result = ();
    fn handle(&mut self, _: ForSession, _: &mut Context<Self>) {}
}

fn session_addr() -> SessionAddr {
    SessionAddr::new(Quiet.start().recipient())
}

fn attach(principal: &Principal, id: u64) -> AttachSession {
    AttachSession {
        principal: principal.clone(),
        id: SessionId(id),
        to: session_addr(),
        arbiter: Arbiter::current(),
    }
}

fn detach(principal: &Principal, id: u64) -> DetachSession {
    DetachSession {
        principal: principal.clone(),
        id: SessionId(id),
    }
}

fn registry() -> (Addr<Registry>, Arc<Published>) {
    let server = crate::Server::builder("registry", "0.1.0")
        .build()
        .expect("a valid server");
    let published = Arc::new(Published::new());
    let p = published.clone();
    (Registry::new(server.shared.clone(), p).start(), published)
}

#[actix::test]
async fn an_idle_principal_retires_and_a_later_session_gets_a_fresh_actor() {
    let (registry, published) = registry();
    let alice = Principal::Named("alice".into());
    let first = registry.send(attach(&alice, 1)).await.unwrap().unwrap();
    assert_eq!(published.principals.load(Ordering::Relaxed), 1);
    assert_eq!(
        published
            .online
            .lock()
            .unwrap()
            .iter()
            .cloned()
            .collect::<Vec<_>>(),
        vec![alice.clone()]
    );
    registry.do_send(detach(&alice, 1));
    // Idle, then Retire: the count drops once the actor has stopped.
    let mut sessions = published.sessions.subscribe();
    sessions.wait_for(|n| *n == 0).await.unwrap();
    while first.connected() {
        tokio::task::yield_now().await;
    }
    assert_eq!(published.principals.load(Ordering::Relaxed), 0);
    assert!(published.online.lock().unwrap().is_empty());
    let second = registry.send(attach(&alice, 2)).await.unwrap().unwrap();
    assert_ne!(first, second, "a retired principal's actor is not reused");
    assert!(second.connected());
}

#[actix::test]
async fn a_session_attaching_while_its_principal_retires_reaches_a_live_actor() {
    let (registry, published) = registry();
    let alice = Principal::Named("alice".into());
    let first = registry.send(attach(&alice, 1)).await.unwrap().unwrap();
    // In one mailbox turn: the last session goes (the principal becomes idle), the
    // registry is told so (as the principal would), and a new session attaches before the
    // principal has answered Retire — the attach is held, then reaches a fresh actor.
    registry.do_send(detach(&alice, 1));
    registry.do_send(Idle {
        principal: alice.clone(),
        generation: 1,
    });
    let second = registry.send(attach(&alice, 2)).await.unwrap().unwrap();
    assert_ne!(first, second, "the retired actor is not handed out");
    assert!(second.connected(), "the session's principal is alive");
    assert_eq!(published.principals.load(Ordering::Relaxed), 1);
    assert_eq!(*published.sessions.borrow(), 1);
}

#[actix::test]
async fn a_principal_asked_to_retire_while_a_session_is_attached_stays() {
    let (registry, published) = registry();
    let alice = Principal::Named("alice".into());
    let first = registry.send(attach(&alice, 1)).await.unwrap().unwrap();
    // A stale Idle (the principal had nothing before the session came): it answers Retire
    // with false, and what was held meanwhile reaches the same actor.
    registry.do_send(Idle {
        principal: alice.clone(),
        generation: 1,
    });
    let second = registry.send(attach(&alice, 2)).await.unwrap().unwrap();
    assert_eq!(first, second);
    assert!(first.connected());
    assert_eq!(published.principals.load(Ordering::Relaxed), 1);
    assert_eq!(*published.sessions.borrow(), 2);
}

#[test]
fn a_principal_that_cannot_be_read_is_read_again_after_doubling_waits_up_to_the_most() {
    let secs: Vec<u64> = (1..=8).map(|n| read_again_after(n).as_secs()).collect();
    assert_eq!(secs, [1, 2, 4, 8, 16, 30, 30, 30]);
    assert_eq!(read_again_after(u32::MAX), READ_AGAIN_MAX);
}
