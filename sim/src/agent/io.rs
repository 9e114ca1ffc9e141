//! [`AgentIo`]: an agent's only way to the world — the host's tool list, its transcript,
//! and tool calls through a [`HostHandle`] — instrumented for the report and shown to an
//! [`Observer`] (the demo prints it).

use crate::metrics::Metrics;
use mcpl_host::host::{HostError, HostHandle, Shown};
use mcpl_protocol::{CallToolResult, Tool};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Sees what agents do and are shown, as it happens.
pub trait Observer: Send + Sync {
    /// An agent is about to call a tool.
    fn calling(&self, agent: &str, tool: &str, args: &Value);
    /// An agent read a message the host showed it (tool results included, in order).
    fn shown(&self, agent: &str, shown: &Shown);
}

/// An observer that sees nothing (load runs).
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Observer for Silent {
    fn calling(&self, _: &str, _: &str, _: &Value) {}
    fn shown(&self, _: &str, _: &Shown) {}
}

/// How long a call may take before the run counts it as hung: well past the host's own
/// request timeout (30 s), which answers every call with a result or a tool error.
pub const HUNG_AFTER: Duration = Duration::from_secs(75);

/// An agent's handle on its host. See the module docs.
pub struct AgentIo {
    name: String,
    host: HostHandle,
    wake: mpsc::UnboundedReceiver<Shown>,
    observer: Arc<dyn Observer>,
    metrics: Arc<Metrics>,
    /// A call since the last [`AgentIo::take_error`] came back as a tool error.
    errored: bool,
    /// A call came back saying the server could not be reached ([`unreachable`]) since
    /// the agent last saw the server's state ([`AgentIo::saw_whole_state`]).
    unsure: bool,
    /// Re-issue a call whose answer was lost, once, counting it here
    /// ([`AgentIo::reissuing`]).
    reissue: Option<Arc<AtomicU64>>,
    /// The calls in a row, up to the last, that came back saying the server could not be
    /// reached ([`unreachable`]); any other answer sets it back to 0.
    unreachable_in_row: u32,
}

/// True when a tool error is the host saying it could not reach the server — not
/// connected just now, not reachable, no answer in time, the connection closed under the
/// call — rather than the server or the host refusing the call: what was asked may still
/// be done once the host is connected again, or may have been done unseen. These are the
/// host's own words (its `MetaError::NotConnected`, `MetaError::NotSettled` and
/// `CallFailure` texts), read as a model would read them.
pub fn unreachable(error: &str) -> bool {
    [
        "is not connected right now",
        "is not reachable: ",
        "did not answer in time",
        "(code -32000)",
        // Connected, its state not read yet: nothing was sent (issue #42).
        "what is open there is still being read",
    ]
    .iter()
    .any(|w| error.contains(w))
}

/// True when a tool error is not a refusal of what was asked: the server could not be
/// reached ([`unreachable()`]), or it answered `-32603` saying to try again — between arcade
/// nodes (issue #41), a call to a game whose node died before another adopted it ("the
/// instance runs on another server and the call did not get through (nobody serves
/// instance 194 now): try again"), or a node not serving the player just then ("the
/// request did not run; retry it", "the request may have run"). **\[project\]** Read from
/// the server's words, as a model would: the host shows a tool error's text, not its
/// `data.retryable`.
pub fn try_again(error: &str) -> bool {
    unreachable(error)
        || (error.contains("(code -32603)")
            && (error.contains("try again")
                || error.contains("retry it")
                || error.contains("may have run")))
}

/// True when a tool error says a call was sent and its answer never came back: the
/// outcome is unknown ([`crate::agent::modern::unknown_outcome`]), and it is not the host
/// saying it sent nothing (not connected just now).
pub fn sent_unanswered(error: &str) -> bool {
    crate::agent::modern::unknown_outcome(error) && !error.contains("is not connected right now")
}

impl AgentIo {
    /// The handle for agent `name` on `host`; it subscribes to what is shown outside tool
    /// results, to wake when something happens.
    pub fn new(
        name: impl Into<String>,
        host: HostHandle,
        observer: Arc<dyn Observer>,
        metrics: Arc<Metrics>,
    ) -> Self {
        let wake = host.subscribe();
        AgentIo {
            name: name.into(),
            host,
            wake,
            observer,
            metrics,
            errored: false,
            unsure: false,
            reissue: None,
            unreachable_in_row: 0,
        }
    }

    /// Re-issues, once, each call whose answer was lost on its way ([`sent_unanswered`]:
    /// the request may have run), as a model
    /// retries a call that failed for no reason of its own; each re-issue is counted in
    /// `count`. The result shown is the second call's (the first is in the transcript
    /// too). Issue #40: a re-issued open adopts what the first opened, a re-issued close
    /// succeeds again (profile §3.4, vector S12).
    pub fn reissuing(mut self, count: Arc<AtomicU64>) -> Self {
        self.reissue = Some(count);
        self
    }

    /// The agent's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The host (for its status: a run waits on it; agents never read state from it).
    pub fn host(&self) -> &HostHandle {
        &self.host
    }

    /// The shared counters.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The model's tool list.
    pub async fn tools(&self) -> Result<Vec<Tool>, HostError> {
        self.host.tools().await
    }

    /// A dynamic tool's current definition as the host offers it through `act` (§5.1: an
    /// instance's own definition, a game's legal moves).
    pub async fn definition(&self, tool: &str, instance: &str) -> Result<Option<Tool>, HostError> {
        self.host.definition(None, tool, Some(instance)).await
    }

    /// Calls a tool as the model would; the result is also in the transcript. A call whose
    /// answer was lost is issued again once when [`AgentIo::reissuing`].
    pub async fn call(&mut self, tool: &str, args: Value) -> Result<CallToolResult, HostError> {
        let first = self.call_once(tool, args.clone()).await?;
        match &self.reissue {
            Some(count) if first.is_error && sent_unanswered(&first.joined_text()) => {
                count.fetch_add(1, Ordering::Relaxed);
                self.call_once(tool, args).await
            }
            _ => Ok(first),
        }
    }

    async fn call_once(&mut self, tool: &str, args: Value) -> Result<CallToolResult, HostError> {
        self.observer.calling(&self.name, tool, &args);
        let start = Instant::now();
        self.metrics.call_started();
        let r = tokio::time::timeout(HUNG_AFTER, self.host.call(tool, args)).await;
        let took = start.elapsed();
        match r {
            Ok(Ok(result)) => {
                self.metrics.call_finished(took, result.is_error);
                if result.is_error {
                    self.metrics.tool_error(&result.joined_text());
                }
                self.errored |= result.is_error;
                let cut_off = result.is_error && unreachable(&result.joined_text());
                self.unsure |= cut_off;
                self.unreachable_in_row = if cut_off {
                    self.unreachable_in_row.saturating_add(1)
                } else {
                    0
                };
                Ok(result)
            }
            Ok(Err(e)) => {
                self.metrics.call_lost();
                Err(e)
            }
            Err(_) => {
                self.metrics.call_hung(&self.name, tool);
                Ok(CallToolResult::error("the simulator gave up waiting"))
            }
        }
    }

    /// True when a call came back as a tool error since the last time this was asked.
    pub fn take_error(&mut self) -> bool {
        std::mem::take(&mut self.errored)
    }

    /// How many calls in a row, up to the last one, came back saying the server could not
    /// be reached (0 when the last was answered otherwise): what an agent backs off by.
    pub fn unreachable_in_row(&self) -> u32 {
        self.unreachable_in_row
    }

    /// True when a call came back saying the server could not be reached since the agent
    /// last saw the server's state: what that call did, or what changed meanwhile, may
    /// not have been told yet.
    pub fn unsure(&self) -> bool {
        self.unsure
    }

    /// The agent saw the server's state (a `toolsets--look` answered while connected).
    pub fn saw_whole_state(&mut self) {
        self.unsure = false;
    }

    /// Everything shown since the last read, in order, each passed to the observer.
    pub async fn read(&mut self) -> Result<Vec<Shown>, HostError> {
        while self.wake.try_recv().is_ok() {}
        let shown = self.host.transcript().await?;
        for s in &shown {
            self.observer.shown(&self.name, s);
        }
        Ok(shown)
    }

    /// The start of a turn: a reminder, if the host has one due (it is in the transcript).
    pub async fn start_turn(&self) -> Result<(), HostError> {
        self.host.start_turn().await.map(drop)
    }

    /// Waits until something is shown outside a tool result, or `max` passes.
    pub async fn wait(&mut self, max: Duration) {
        let _ = tokio::time::timeout(max, self.wake.recv()).await;
    }
}
