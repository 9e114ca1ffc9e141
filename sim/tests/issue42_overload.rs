//! Issue #42: under overload the run slows down instead of falling over. An agent whose
//! server cannot be reached backs off between its calls (with jitter, up to a bound)
//! instead of calling five times a second for as long as the server stays away — at 3,000
//! agents, that retry rate was most of the load that kept the server from recovering.

use mcpl_transport::TransportError;
use sim::agent::scripted::{AFTER_ERROR, MAX_AFTER_ERROR};
use sim::agent::{AgentIo, GameKind, Phase, Policy, ScriptedAgent, Silent};
use sim::hosts::{LinkKnobs, start_host_with};
use sim::metrics::Metrics;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// A connector that finds nothing listening, every time, at once.
fn nothing_listens() -> mcpl_host::link::Connector {
    mcpl_host::link::Connector::from_fn(|| {
        Box::pin(async {
            Err(TransportError::Io(std::io::Error::from(
                std::io::ErrorKind::ConnectionRefused,
            )))
        })
    })
}

#[actix::test]
async fn issue42_an_agent_backs_off_while_its_server_is_unreachable() {
    tokio::time::pause();
    let host = start_host_with(nothing_listens(), &LinkKnobs::default(), 1, None).expect("a host");
    let metrics = Arc::new(Metrics::default());
    let io = AgentIo::new("p0000", host.clone(), Arc::new(Silent), metrics.clone());
    let (phase, watch) = watch::channel(Phase::Play);
    let agent = ScriptedAgent::new(Policy::random(GameKind::TicTacToe), 42);
    let run = actix::spawn(agent.run(io, watch));
    let minute = Duration::from_secs(60);
    // The paused clock moved by the test, 100 ms at a time, the agent's and the host's
    // tasks run between steps.
    let step = Duration::from_millis(100);
    for _ in 0..minute.as_millis() / step.as_millis() {
        tokio::time::advance(step).await;
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
    }
    let _ = phase.send(Phase::Stop);
    run.await.expect("the agent ran");

    let c = metrics.counts();
    // Every call was refused as unreachable: the agent tried to open a game, over and over
    // (backing off doubles to 4 s: a minute holds a dozen tries or more).
    assert_eq!(c.calls, c.tool_errors, "{c:?}");
    assert!(c.calls >= 10, "the agent kept trying: {c:?}");
    // At most one call per half of the longest wait, after the first few: far from the
    // 300 a minute that a fixed 200 ms between calls makes.
    let fixed = (minute.as_millis() / AFTER_ERROR.as_millis()) as u64;
    let bound = 8 + (minute.as_millis() / (MAX_AFTER_ERROR.as_millis() / 2)) as u64;
    assert!(
        c.calls <= bound && c.calls * 5 < fixed,
        "{} calls in a minute of an unreachable server (bound {bound}, fixed rate {fixed})",
        c.calls
    );
    host.stop().await;
}
