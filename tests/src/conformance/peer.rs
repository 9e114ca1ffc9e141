//! [`Peer`]: the runner's host side of one link of `mcpl-transport`: the one raw peer of
//! the tests ([`mcpl_testkit::Peer`] on a connection's [`TestEnd`]), which writes exact JSON-RPC and
//! keeps every message read in arrival order, plus what the runner needs on top: it
//! answers the server's requests (pushes by a [`PushAnswer`] policy), records every rev it
//! reads, so a vector can check the order rules of §5.2 on any transport, and turns a read
//! that fails into a [`VectorError`] instead of a panic.
//!
//! Nothing here sleeps: every wait reads the link until what it waits for arrives, bounded
//! by a limit only a failing server reaches.

use super::error::{Checked, VectorError, ensure, violation};
use super::wire::{Carrier, hints_of, method_of};
use mcpl_testkit::{ReadError, msg};
use mcpl_transport::Connection;
use mcpl_transport::testkit::{TestEnd, TestPeer};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::time::Duration;
use tokio::time::Instant;

/// How the peer answers the server's `push/event` requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushAnswer {
    /// `{accepted: true}`.
    Accept,
    /// `{accepted: false, reason}`.
    Refuse,
    /// A JSON-RPC error (-32603).
    Error,
}

/// What the peer advertises in `initialize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostKind {
    /// An MCPL host advertising `toolHints` (§2).
    Hinted,
    /// An MCPL host without `toolHints`.
    McplPlain,
    /// A plain MCP host: no `experimental.mcpl` at all.
    PlainMcp,
}

/// One rev read, and how it came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RevSeen {
    /// The rev.
    pub rev: u64,
    /// Its carrier.
    pub carrier: Carrier,
}

/// A raw client on one link. See the module docs.
pub struct Peer {
    label: String,
    raw: TestPeer,
    ordered: bool,
    /// The host advertised `toolHints` (set by the handshake).
    pub(super) hinted: bool,
    /// The link carries modern requests (MCP 2026-07-28, no handshake): its results carry
    /// the stateless profile's versioned hints, never a rev (set by [`Ctx::modern`]).
    ///
    /// [`Ctx::modern`]: super::target::Ctx::modern
    pub(super) modern: bool,
    /// Server requests and notifications no wait has taken yet.
    unclaimed: VecDeque<Value>,
    /// Responses no wait has taken yet, in arrival order.
    responses: Vec<Value>,
    revs: Vec<RevSeen>,
    /// Rule breaks seen while reading, reported by [`Peer::finish`].
    problems: Vec<String>,
    /// How the next pushes are answered.
    pub push_answer: PushAnswer,
}

impl Peer {
    /// A peer on `conn`; `limit` bounds each wait.
    pub fn new(label: impl Into<String>, conn: Connection, limit: Duration) -> Peer {
        Peer {
            label: label.into(),
            ordered: conn.info.ordered,
            raw: TestEnd::peer(conn).with_limit(limit),
            hinted: false,
            modern: false,
            unclaimed: VecDeque::new(),
            responses: Vec::new(),
            revs: Vec::new(),
            problems: Vec::new(),
            push_answer: PushAnswer::Accept,
        }
    }

    /// The name the vector gave this connection, for messages.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// True when the link delivers in the order the server wrote (stdio, WebSocket).
    pub fn ordered(&self) -> bool {
        self.ordered
    }

    /// Every message read so far, in arrival order.
    pub fn log(&self) -> &[Value] {
        self.raw.log()
    }

    /// Every rev read so far, in arrival order.
    pub fn revs(&self) -> &[RevSeen] {
        &self.revs
    }

    /// The highest rev read so far (0 before any).
    pub fn last_rev(&self) -> u64 {
        self.revs.iter().map(|r| r.rev).max().unwrap_or(0)
    }

    async fn send(&mut self, v: Value) -> Checked {
        let label = &self.label;
        self.raw
            .try_send(v)
            .await
            .map_err(|why| VectorError::Closed(format!("writing on {label}: {why}")))
    }

    /// Sends a request without waiting for its answer; returns its id.
    pub async fn send_request(&mut self, method: &str, params: Value) -> Checked<Value> {
        let id = self.raw.take_id();
        self.send(msg::request(id.clone(), method, params)).await?;
        Ok(id)
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) -> Checked {
        self.send(msg::notification(method, params)).await
    }

    /// Waits for the response to `id` and returns it whole.
    pub async fn response(&mut self, id: &Value, what: &str) -> Checked<Value> {
        let deadline = self.raw.deadline();
        loop {
            if let Some(at) = self.responses.iter().position(|r| r["id"] == *id) {
                return Ok(self.responses.remove(at));
            }
            self.read(what, deadline).await?;
        }
    }

    /// Sends a request and returns its response whole (a result or an error).
    pub async fn request(&mut self, method: &str, params: Value) -> Checked<Value> {
        let id = self.send_request(method, params).await?;
        self.response(&id, &format!("the answer to {method}")).await
    }

    /// Sends a request that must succeed and returns its result.
    pub async fn result(&mut self, method: &str, params: Value) -> Checked<Value> {
        let r = self.request(method, params).await?;
        match r.get("result") {
            Some(result) => Ok(result.clone()),
            None => Err(violation(format!(
                "{method} failed on {}: {}",
                self.label, r["error"]
            ))),
        }
    }

    /// Waits for a server request or notification matching `pred`, taking it.
    pub async fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Checked<Value> {
        let deadline = self.raw.deadline();
        loop {
            if let Some(at) = self.unclaimed.iter().position(&pred) {
                return Ok(self.unclaimed.remove(at).expect("the position is in range"));
            }
            self.read(what, deadline).await?;
        }
    }

    /// Waits until rev `rev` has been read.
    pub async fn wait_rev(&mut self, rev: u64, what: &str) -> Checked {
        let deadline = self.raw.deadline();
        while !self.revs.iter().any(|r| r.rev == rev) {
            self.read(what, deadline).await?;
        }
        Ok(())
    }

    async fn read(&mut self, what: &str, deadline: Instant) -> Checked {
        let label = &self.label;
        let v = self.raw.read(deadline).await.map_err(|e| match e {
            ReadError::Timeout => VectorError::Timeout(format!("{what} on {label}")),
            ReadError::Closed(_) => VectorError::Closed(format!("{what} on {label}")),
            ReadError::Unreadable(why) => VectorError::Undecodable(why),
        })?;
        self.take_in(v).await
    }

    async fn take_in(&mut self, v: Value) -> Checked {
        if self.modern {
            return self.take_in_modern(v).await;
        }
        if let Some((changes, carrier)) = hints_of(&v) {
            match changes.get("rev").and_then(Value::as_u64) {
                Some(rev) if rev > 0 => self.revs.push(RevSeen { rev, carrier }),
                _ => self.problems.push(format!(
                    "hint changes without a positive integer rev: {changes}"
                )),
            }
            if !self.hinted {
                self.problems.push(format!(
                    "hint changes sent to a host that did not advertise toolHints (§2): {v}"
                ));
            }
        }
        if is_push_with_coalesce_and_hints(&v) {
            self.problems.push(format!(
                "hints on a push with a coalesce member (§5.2): {v}"
            ));
        }
        match (method_of(&v), v.get("id")) {
            (None, _) => self.responses.push(v),
            (Some(method), Some(id)) => {
                let answer = match method {
                    "push/event" => match self.push_answer {
                        PushAnswer::Accept => msg::result(id, json!({"accepted": true})),
                        PushAnswer::Refuse => msg::result(
                            id,
                            json!({"accepted": false, "reason": "refused by the conformance runner"}),
                        ),
                        PushAnswer::Error => {
                            msg::error(id, -32603, "the runner answers with an error")
                        }
                    },
                    "ping" => msg::result(id, json!({})),
                    other => msg::error(id, -32601, &format!("method not found: {other}")),
                };
                self.send(answer).await?;
                self.unclaimed.push_back(v);
            }
            (Some(_), None) => self.unclaimed.push_back(v),
        }
        Ok(())
    }

    /// A message on a modern link: MCP 2026-07-28 has no server-to-client requests, and
    /// the stateless profile carries changes in results and on listen streams only
    /// (profile §1, §3.5), so a request or a legacy carrier is noted as a rule broken.
    async fn take_in_modern(&mut self, v: Value) -> Checked {
        match (method_of(&v), v.get("id")) {
            (None, _) => self.responses.push(v),
            (Some(method), Some(id)) => {
                self.problems.push(format!(
                    "a {method} request on a modern link, where MCP 2026-07-28 has no server-to-client requests: {v}"
                ));
                let answer = msg::error(id, -32601, &format!("method not found: {method}"));
                self.send(answer).await?;
            }
            (Some(method), None) => {
                if method == "tools/hints" {
                    self.problems.push(format!(
                        "tools/hints on a modern link: the profile carries changes in results and on listen streams only (§3.5): {v}"
                    ));
                }
                self.unclaimed.push_back(v);
            }
        }
        Ok(())
    }

    /// Ends a vector's use of the connection and checks what holds on every connection:
    /// nothing read broke a rule, and the revs read are consecutive from 1 (in arrival
    /// order on an ordered link, §5.2). A hinted connection reads a statement first and
    /// waits for every rev up to its rev, so no change is still in flight.
    pub async fn finish(&mut self) -> Checked {
        if self.modern {
            return match self.problems.first() {
                Some(p) => Err(violation(format!("on {}: {p}", self.label))),
                None => Ok(()),
            };
        }
        if self.hinted {
            let s = self.statement().await?;
            let top = s
                .pointer("/_meta/mcpl~1hints/rev")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            // On an ordered link whatever was written before the statement has been read:
            // a rev still missing is a gap, which `check_revs` names. On Streamable HTTP
            // it may still be on its way.
            if !self.ordered {
                for rev in 1..=top {
                    self.wait_rev(rev, &format!("rev {rev} (the statement took {top})"))
                        .await?;
                }
            }
        } else {
            self.ping().await?;
        }
        if let Some(p) = self.problems.first() {
            return Err(violation(format!("on {}: {p}", self.label)));
        }
        self.check_revs()
    }

    /// Checks the revs read so far are consecutive from 1, each once, and, on an ordered
    /// link, read in that order (§5.2).
    pub fn check_revs(&self) -> Checked {
        let got: Vec<u64> = self.revs.iter().map(|r| r.rev).collect();
        let mut sorted = got.clone();
        sorted.sort_unstable();
        let want: Vec<u64> = (1..=got.len() as u64).collect();
        if self.ordered {
            ensure(got == want, || {
                format!(
                    "revs on {} (an ordered link) arrived as {got:?}, not consecutively from 1 (§5.2)",
                    self.label
                )
            })
        } else {
            ensure(sorted == want, || {
                format!(
                    "revs on {} are {sorted:?}, not each of 1..={} once (§5.2)",
                    self.label,
                    got.len()
                )
            })
        }
    }

    /// Closes the connection (stdio: the child's stdin closes and it exits).
    pub fn close(self) {
        drop(self);
    }
}

fn is_push_with_coalesce_and_hints(v: &Value) -> bool {
    method_of(v) == Some("push/event")
        && v.pointer("/params/coalesce").is_some()
        && v.pointer("/params/hints").is_some()
}
