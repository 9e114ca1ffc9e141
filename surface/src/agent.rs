//! A principal's agent for its modern requests: its [`HostHandle`], the tool list taken
//! once from it, and what the host showed outside results since the principal's previous
//! result ([`News`], with the backing servers' connections lost and back, [`Links`]).
//!
//! A modern client has no connection to keep this on (MCP 2026-07-28 is stateless: each
//! request stands alone, on any connection), so it is kept by principal, shared by every
//! request of that principal's, and lives as long as the principal's host
//! ([`crate::principals`] bounds how many and how long).
//!
//! The news is a small actor's (a task that owns it): the host's events are taken into
//! it as they are shown, so it stays bounded however long the principal is away, and a
//! result asks for it ([`Agent::take_news`]) only after the task has taken in every event
//! the host showed before the call returned — so what happened during a call is told in
//! that call's result, as on a legacy connection.

use crate::links::Links;
use crate::listing::surface_tools;
use crate::news::News;
use mcpl_host::host::{HostError, HostHandle, HostStatus, Shown};
use mcpl_protocol::mcp::Tool;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OnceCell, mpsc, oneshot, watch};

/// A result's request for the news: what waited, then gone.
struct Take {
    looked: bool,
    reply: oneshot::Sender<Option<String>>,
}

/// A principal's agent (module docs). Dropping every handle ends its news task; its host
/// is stopped by [`Agent::stop`].
#[derive(Debug)]
pub struct Agent {
    host: HostHandle,
    news: mpsc::Sender<Take>,
    tools: OnceCell<Vec<Tool>>,
    first_contact: Duration,
}

impl Agent {
    /// The agent of `host`, its news task started on the current actix system.
    /// `first_contact`: how long its first `tools/list` waits for the backing servers to
    /// settle before it lists what is known.
    pub fn start(host: HostHandle, first_contact: Duration) -> Arc<Agent> {
        // One request at a time asks; a few may queue.
        let (tx, rx) = mpsc::channel(16);
        actix::spawn(keep_news(host.subscribe(), host.status_watch(), rx));
        Arc::new(Agent {
            host,
            news: tx,
            tools: OnceCell::new(),
            first_contact,
        })
    }

    /// The principal's host.
    pub fn host(&self) -> &HostHandle {
        &self.host
    }

    /// The client's tool list: the four meta-tools and the backing servers' static tools,
    /// taken once — after the servers settled or [`Agent::start`]'s `first_contact`
    /// passed — and the same for every later request (§8.6: it never changes).
    pub async fn tools(&self) -> Result<&[Tool], HostError> {
        let tools = self
            .tools
            .get_or_try_init(|| async {
                let wait = self.first_contact;
                if tokio::time::timeout(wait, self.host.first_contact())
                    .await
                    .is_err()
                {
                    tracing::warn!(
                        "not every backing server settled in {wait:?}; listing what is known"
                    );
                }
                Ok::<_, HostError>(surface_tools(self.host.tools().await?))
            })
            .await?;
        Ok(tools)
    }

    /// What was shown since the principal's previous result, as the block that ends this
    /// one ([`News::take`]); `None` when nothing waits (or the news task ended).
    pub async fn take_news(&self, looked: bool) -> Option<String> {
        let (reply, answer) = oneshot::channel();
        self.news.send(Take { looked, reply }).await.ok()?;
        answer.await.ok().flatten()
    }

    /// Stops the principal's host (and so its links and stdio children).
    pub async fn stop(&self) {
        self.host.stop().await;
    }
}

/// The news task: takes in what the host shows and its connections' changes, and answers
/// each [`Take`] once every event already shown is in.
async fn keep_news(
    mut events: mpsc::UnboundedReceiver<Shown>,
    mut status: watch::Receiver<HostStatus>,
    mut takes: mpsc::Receiver<Take>,
) {
    let mut news = News::new();
    let mut links = Links::new();
    let mut seen_status = |status: &mut watch::Receiver<HostStatus>, news: &mut News| {
        let now = status.borrow_and_update().clone();
        for shown in links.update(&now) {
            news.push(&shown);
        }
    };
    loop {
        tokio::select! {
            biased;
            Some(shown) = events.recv() => news.push(&shown),
            Ok(()) = status.changed() => seen_status(&mut status, &mut news),
            take = takes.recv() => {
                let Some(Take { looked, reply }) = take else {
                    break;
                };
                // What the host showed before the call returned is in the channel already.
                while let Ok(shown) = events.try_recv() {
                    news.push(&shown);
                }
                if status.has_changed().unwrap_or(false) {
                    seen_status(&mut status, &mut news);
                }
                // A request that went away takes nothing: the news waits for the next.
                if !reply.is_closed() {
                    let _ = reply.send(news.take(looked));
                }
            }
        }
    }
}
