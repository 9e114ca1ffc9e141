//! [`HostHandle`]: the Host's address with async methods, and its status watch.

use super::actor::Host;
use super::error::HostError;
use super::messages::{
    Boundary, Call, Compact, Definition, GetTools, StartTurn, Stop, Subscribe, TakeTranscript,
    Visible,
};
use super::shown::Shown;
use crate::state::HostStatus;
use actix::Addr;
use mcpl_protocol::{CallToolResult, Tool};
use serde_json::Value;
use tokio::sync::{mpsc, watch};

/// A handle to a running [`Host`]. Cloning gives another handle to the same host.
#[derive(Debug, Clone)]
pub struct HostHandle {
    addr: Addr<Host>,
    status: watch::Receiver<HostStatus>,
}

impl HostHandle {
    pub(super) fn new(addr: Addr<Host>, status: watch::Receiver<HostStatus>) -> Self {
        HostHandle { addr, status }
    }

    /// The actor's address (for [`super::Call`] and the other messages).
    pub fn addr(&self) -> &Addr<Host> {
        &self.addr
    }

    /// Calls a tool as the agent: a meta-tool or a static `server--tool`. Whatever goes
    /// wrong with the call is in the result (`isError`); only a stopped host is an error.
    pub async fn call(&self, name: &str, args: Value) -> Result<CallToolResult, HostError> {
        let call = Call {
            name: name.to_owned(),
            args,
        };
        Ok(self.addr.send(call).await?)
    }

    /// The model's tool list.
    pub async fn tools(&self) -> Result<Vec<Tool>, HostError> {
        Ok(self.addr.send(GetTools).await?)
    }

    /// The model's tool list as sent: JSON, byte for byte (vector 12).
    pub async fn tools_json(&self) -> Result<String, HostError> {
        let tools = self.tools().await?;
        Ok(serde_json::to_string(&tools).unwrap_or_default())
    }

    /// The messages shown to the agent since the last call.
    pub async fn transcript(&self) -> Result<Vec<Shown>, HostError> {
        Ok(self.addr.send(TakeTranscript).await?)
    }

    /// The agent's turn starts: the reminder shown, if one was due.
    pub async fn start_turn(&self) -> Result<Option<Shown>, HostError> {
        Ok(self.addr.send(StartTurn).await?)
    }

    /// A tool-list boundary; true when the model's list changed.
    pub async fn boundary(&self) -> Result<bool, HostError> {
        Ok(self.addr.send(Boundary).await?)
    }

    /// A compaction (and the boundary that comes with it); true when the list changed.
    pub async fn compact(&self) -> Result<bool, HostError> {
        Ok(self.addr.send(Compact).await?)
    }

    /// The current definition of a dynamic tool offered through `act`.
    pub async fn definition(
        &self,
        server: Option<&str>,
        tool: &str,
        instance: Option<&str>,
    ) -> Result<Option<Tool>, HostError> {
        let msg = Definition {
            server: server.map(str::to_owned),
            tool: tool.to_owned(),
            instance: instance.map(str::to_owned),
        };
        Ok(self.addr.send(msg).await?)
    }

    /// Whether `server`'s hint state holds `tool` visible in `instance` (or outside
    /// instances, with `None`): the host's belief, as the server's changes were applied
    /// (§5.2). `None` when there is no such server or hints do not count on it.
    pub async fn is_visible(
        &self,
        server: &str,
        tool: &str,
        instance: Option<&str>,
    ) -> Result<Option<bool>, HostError> {
        let msg = Visible {
            server: server.to_owned(),
            tool: tool.to_owned(),
            instance: instance.map(str::to_owned),
        };
        Ok(self.addr.send(msg).await?)
    }

    /// What is shown outside tool results — notices, pushes, reminders — as it is shown,
    /// from the moment the host handles this subscription.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<Shown> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.addr.do_send(Subscribe(tx));
        rx
    }

    /// The latest status.
    pub fn status(&self) -> HostStatus {
        self.status.borrow().clone()
    }

    /// A receiver of the status, to await its changes (`changed`) as they are published.
    pub fn status_watch(&self) -> watch::Receiver<HostStatus> {
        self.status.clone()
    }

    /// Waits until the status satisfies `ready`, and returns it.
    pub async fn wait_for(
        &self,
        mut ready: impl FnMut(&HostStatus) -> bool,
    ) -> Result<HostStatus, HostError> {
        let mut rx = self.status.clone();
        let s = rx
            .wait_for(|s| ready(s))
            .await
            .map_err(|_| HostError::Stopped)?;
        Ok(s.clone())
    }

    /// Waits until every server is settled or unreachable: what the agent is shown at
    /// its start is then complete (a front end starts reading its input here).
    pub async fn first_contact(&self) -> Result<HostStatus, HostError> {
        self.wait_for(|s| s.servers.values().all(|x| x.settled || x.unreachable))
            .await
    }

    /// Stops the host and its links.
    pub async fn stop(&self) {
        // A host that has stopped already is what was asked for.
        let _ = self.addr.send(Stop).await;
    }
}
