//! The principals' agents for modern requests over Streamable HTTP: one [`Agent`] (and so
//! one host) per principal — the configured client a bearer token names — created on its
//! first request, shared by all of its requests, bounded by [`Pool`]: at most
//! [`Limits::max`], each closed after [`Limits::idle`] without a request in flight.
//!
//! The driver of [`Pool`]: it reads the clock, starts and stops hosts; what to start and
//! stop is the pool's.

use crate::agent::Agent;
use crate::config::ConfigError;
use crate::config::SurfaceConfig;
use crate::pool::{Admit, Limits, Pool};
use mcpl_host::host::{Host, HostError};
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Why a principal's request found no agent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AcquireError {
    /// Every kept principal has a request in flight, and there are as many as the cap.
    #[error(
        "the surface host serves {max} principals' requests already; try again once one is answered"
    )]
    Full {
        /// The cap.
        max: usize,
    },
    /// The principal has no configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The principal has as many requests in flight as it may.
    #[error("{limit} requests are being answered already; wait for one")]
    Busy {
        /// The bound.
        limit: usize,
    },
    /// The principal's host would not start.
    #[error("the host could not start: {0}")]
    Host(#[from] HostError),
}

impl AcquireError {
    /// The JSON-RPC error a client is answered with: -32600 for a principal's own excess
    /// (as on a legacy connection), -32603 for the rest.
    pub fn to_error(&self) -> ErrorObject {
        let code = match self {
            AcquireError::Busy { .. } => ErrorCode::INVALID_REQUEST,
            _ => ErrorCode::INTERNAL_ERROR,
        };
        ErrorObject::new(code, format!("the surface host: {self}"))
    }
}

/// The kept agents (module docs).
#[derive(Debug)]
pub struct Principals {
    config: Arc<SurfaceConfig>,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    pool: Pool,
    agents: HashMap<String, Arc<Agent>>,
}

/// A principal's agent while one of its requests is served; dropping it releases it.
#[derive(Debug)]
pub struct Lease {
    principals: Arc<Principals>,
    principal: String,
    agent: Arc<Agent>,
}

impl std::ops::Deref for Lease {
    type Target = Agent;
    fn deref(&self) -> &Agent {
        &self.agent
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let now = now();
        self.principals.lock().pool.release(&self.principal, now);
    }
}

/// Now, on tokio's clock (the pool takes it as an argument).
fn now() -> std::time::Instant {
    tokio::time::Instant::now().into_std()
}

impl Principals {
    /// None kept yet; hosts are configured from `config`.
    pub fn new(config: Arc<SurfaceConfig>, limits: Limits) -> Arc<Self> {
        Arc::new(Principals {
            config,
            state: Mutex::new(State {
                pool: Pool::new(limits),
                agents: HashMap::new(),
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding it leaves the maps as they were between two statements.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The agent of `principal` for one request: its kept one, or a new one (its host
    /// started on the current actix system). Idle principals past their time are closed
    /// first.
    pub fn acquire(self: &Arc<Self>, principal: &str) -> Result<Lease, AcquireError> {
        // A principal the configuration does not name makes no room for itself.
        let host_config = self.config.host_config(principal)?;
        let now = now();
        let mut state = self.lock();
        for gone in state.pool.expire(now) {
            close(&mut state, &gone, "idle");
        }
        match state.pool.admit(principal, now) {
            Admit::Full => {
                let max = state.pool.limits().max;
                tracing::info!(%principal, max, "a modern request refused: every kept principal has one in flight");
                return Err(AcquireError::Full { max });
            }
            Admit::Busy => {
                let limit = state.pool.limits().in_flight;
                return Err(AcquireError::Busy { limit });
            }
            Admit::Start { evict: Some(evict) } => {
                close(&mut state, &evict, "the least recently used, to make room");
            }
            Admit::Start { evict: None } | Admit::Kept => {}
        }
        // Kept in the pool means kept here: both change under this lock.
        let agent = match state.agents.get(principal) {
            Some(agent) => agent.clone(),
            None => {
                let host = match Host::start(host_config) {
                    Ok(host) => host,
                    Err(e) => {
                        state.pool.forget(principal);
                        return Err(e.into());
                    }
                };
                tracing::debug!(%principal, kept = state.pool.len(), "a principal's host starts for its modern requests");
                let agent = Agent::start(host, self.config.first_contact);
                state.agents.insert(principal.to_owned(), agent.clone());
                agent
            }
        };
        Ok(Lease {
            principals: self.clone(),
            principal: principal.to_owned(),
            agent,
        })
    }

    /// How many principals have a host kept.
    pub fn len(&self) -> usize {
        self.lock().pool.len()
    }

    /// True when none has.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Closes idle principals' hosts as they expire, forever: run it on its own task.
    pub async fn close_idle(self: Arc<Self>) {
        loop {
            let next = {
                let mut state = self.lock();
                for gone in state.pool.expire(now()) {
                    close(&mut state, &gone, "idle");
                }
                state.pool.next_expiry()
            };
            // Nothing idle: a principal released from now on expires no sooner than this.
            let wait = next.map_or(self.lock().pool.limits().idle, |at| {
                at.saturating_duration_since(now())
            });
            tokio::time::sleep(wait.max(Duration::from_millis(10))).await;
        }
    }
}

/// Stops `principal`'s host (on its own task) and forgets its agent.
fn close(state: &mut State, principal: &str, why: &str) {
    if let Some(agent) = state.agents.remove(principal) {
        tracing::debug!(%principal, why, "a principal's host closes");
        actix::spawn(async move { agent.stop().await });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(limits: &str) -> Arc<SurfaceConfig> {
        let text = format!(
            r#"{{"mcpServers": {{"a": {{"command": "/nonexistent/mcpl-none"}}}},
                 "surface": {{{limits} "clients": {{"alice": {{}}, "bob": {{}}}}}}}}"#
        );
        Arc::new(SurfaceConfig::parse(&text).unwrap())
    }

    #[actix::test]
    async fn issue39_10_an_idle_principals_host_is_closed_on_time_without_a_request() {
        tokio::time::pause();
        let principals = Principals::new(
            config(""),
            Limits {
                max: 4,
                idle: Duration::from_secs(600),
                in_flight: 16,
            },
        );
        let closer = actix::spawn(principals.clone().close_idle());
        let alice = principals.acquire("alice").unwrap();
        let host = alice.host().clone();
        let again = principals.acquire("alice").unwrap();
        assert_eq!(principals.len(), 1, "one host for both requests");
        drop(again);
        // In flight: kept however long it takes.
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert_eq!(principals.len(), 1);
        drop(alice);
        tokio::time::sleep(Duration::from_secs(599)).await;
        assert_eq!(principals.len(), 1, "not idle long enough");
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(principals.is_empty(), "closed without another request");
        // Its host is stopped.
        mcpl_testkit::within(async {
            while host.tools().await.is_ok() {
                tokio::task::yield_now().await;
            }
        })
        .await;
        closer.abort();
    }

    #[actix::test]
    async fn issue39_10_a_principal_refused_when_every_kept_one_is_busy() {
        let principals = Principals::new(
            config(""),
            Limits {
                max: 1,
                idle: Duration::from_secs(600),
                in_flight: 2,
            },
        );
        let alice = principals.acquire("alice").unwrap();
        let second = principals.acquire("alice").unwrap();
        let e = principals.acquire("alice").unwrap_err();
        assert!(matches!(e, AcquireError::Busy { limit: 2 }), "{e}");
        assert_eq!(e.to_error().code, ErrorCode::INVALID_REQUEST);
        drop(second);
        let e = principals.acquire("bob").unwrap_err();
        assert!(matches!(e, AcquireError::Full { max: 1 }), "{e}");
        assert_eq!(e.to_error().code, ErrorCode::INTERNAL_ERROR);
        assert!(matches!(
            principals.acquire("local").unwrap_err(),
            AcquireError::Full { .. }
        ));
        drop(alice);
        let bob = principals.acquire("bob").unwrap();
        assert_eq!(principals.len(), 1, "alice's idle host made room");
        drop(bob);
        assert!(matches!(
            principals.acquire("mallory").unwrap_err(),
            AcquireError::Config(_)
        ));
        assert_eq!(
            principals.len(),
            1,
            "a principal without a configuration is not kept"
        );
    }
}
