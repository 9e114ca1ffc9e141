//! [`Peer`]: a raw host-side client over one link of `mcpl-transport`. It sends exact
//! JSON-RPC, keeps every message read in arrival order, answers the server's requests
//! (pushes by a [`PushAnswer`] policy), and records every rev it reads, so a vector can
//! check the order rules of §5.2 on any transport.
//!
//! Nothing here sleeps: every wait reads the link until what it waits for arrives, bounded
//! by a limit only a failing server reaches.

use super::error::{Checked, VectorError, ensure, violation};
use super::wire::{Carrier, hints_of, method_of};
use mcpl_protocol::{Id, Message, Notification, Request, Response};
use mcpl_transport::{Connection, Inbound, Outbound};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::time::Duration;
use tokio::sync::mpsc;
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
    out: Outbound,
    inbound: mpsc::Receiver<Inbound>,
    ordered: bool,
    limit: Duration,
    next_id: i64,
    /// The host advertised `toolHints` (set by the handshake).
    pub(super) hinted: bool,
    /// Server requests and notifications no wait has taken yet.
    unclaimed: VecDeque<Value>,
    /// Responses no wait has taken yet.
    responses: HashMap<Id, Value>,
    log: Vec<Value>,
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
            out: conn.outbound,
            inbound: conn.inbound,
            limit,
            next_id: 1,
            hinted: false,
            unclaimed: VecDeque::new(),
            responses: HashMap::new(),
            log: Vec::new(),
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
        &self.log
    }

    /// Every rev read so far, in arrival order.
    pub fn revs(&self) -> &[RevSeen] {
        &self.revs
    }

    /// The highest rev read so far (0 before any).
    pub fn last_rev(&self) -> u64 {
        self.revs.iter().map(|r| r.rev).max().unwrap_or(0)
    }

    async fn send(&self, m: Message) -> Checked {
        self.out.send(m).await?;
        Ok(())
    }

    /// Sends a request without waiting for its answer; returns its id.
    pub async fn send_request(&mut self, method: &str, params: Value) -> Checked<Id> {
        let id = Id::Number(self.next_id);
        self.next_id += 1;
        let req = Request {
            id: id.clone(),
            method: method.to_owned(),
            params: Some(params),
        };
        self.send(req.into()).await?;
        Ok(id)
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) -> Checked {
        let n = Notification {
            method: method.to_owned(),
            params: Some(params),
        };
        self.send(n.into()).await
    }

    /// Waits for the response to `id` and returns it whole.
    pub async fn response(&mut self, id: &Id, what: &str) -> Checked<Value> {
        let deadline = Instant::now() + self.limit;
        loop {
            if let Some(r) = self.responses.remove(id) {
                return Ok(r);
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
        let deadline = Instant::now() + self.limit;
        loop {
            if let Some(at) = self.unclaimed.iter().position(&pred) {
                return Ok(self.unclaimed.remove(at).expect("the position is in range"));
            }
            self.read(what, deadline).await?;
        }
    }

    /// Waits until rev `rev` has been read.
    pub async fn wait_rev(&mut self, rev: u64, what: &str) -> Checked {
        let deadline = Instant::now() + self.limit;
        while !self.revs.iter().any(|r| r.rev == rev) {
            self.read(what, deadline).await?;
        }
        Ok(())
    }

    async fn read(&mut self, what: &str, deadline: Instant) -> Checked {
        let label = &self.label;
        let item = tokio::time::timeout_at(deadline, self.inbound.recv())
            .await
            .map_err(|_| VectorError::Timeout(format!("{what} on {label}")))?
            .ok_or_else(|| VectorError::Closed(format!("{what} on {label}")))?;
        match item {
            Inbound::Message { message, .. } => self.take_in(message).await,
            Inbound::Malformed { error, .. } => Err(VectorError::Undecodable(error.to_string())),
            Inbound::TooLarge { size, limit, .. } => Err(VectorError::Undecodable(format!(
                "a message of {size} bytes, over the limit of {limit}"
            ))),
        }
    }

    async fn take_in(&mut self, message: Message) -> Checked {
        let v =
            serde_json::to_value(&message).map_err(|e| VectorError::Undecodable(e.to_string()))?;
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
        self.log.push(v.clone());
        match message {
            Message::Response(r) => {
                if let Some(id) = r.id {
                    self.responses.insert(id, v);
                }
            }
            Message::Request(req) => {
                let answer = match req.method.as_str() {
                    "push/event" => match self.push_answer {
                        PushAnswer::Accept => Response::ok(req.id, json!({"accepted": true})),
                        PushAnswer::Refuse => Response::ok(
                            req.id,
                            json!({"accepted": false, "reason": "refused by the conformance runner"}),
                        ),
                        PushAnswer::Error => Response::err(
                            Some(req.id),
                            mcpl_protocol::ErrorObject::internal(
                                "the runner answers with an error",
                            ),
                        ),
                    },
                    "ping" => Response::ok(req.id, json!({})),
                    other => Response::err(
                        Some(req.id),
                        mcpl_protocol::ErrorObject::method_not_found(other),
                    ),
                };
                self.send(answer.into()).await?;
                self.unclaimed.push_back(v);
            }
            Message::Notification(_) => self.unclaimed.push_back(v),
        }
        Ok(())
    }

    /// Ends a vector's use of the connection and checks what holds on every connection:
    /// nothing read broke a rule, and the revs read are consecutive from 1 (in arrival
    /// order on an ordered link, §5.2). A hinted connection reads a statement first and
    /// waits for every rev up to its rev, so no change is still in flight.
    pub async fn finish(&mut self) -> Checked {
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
