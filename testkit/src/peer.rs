//! [`Peer`]: one end of a connection speaking raw JSON-RPC over a [`Link`].
//!
//! The test writes exact JSON ([`Peer::send`]) and reads exactly what the other side
//! wrote. Messages a test skips over while waiting for another stay queued, in order
//! ([`Peer::unread`]); every message read is logged ([`Peer::log`]).
//!
//! Two ways to read: the plain methods ([`Peer::recv`], [`Peer::next_where`], …) fail the
//! test when the limit passes or the connection ends; [`Peer::read`] and
//! [`Peer::try_next_where`] return a [`ReadError`] instead, for a caller that reports
//! failures itself (the conformance runner).

use crate::link::{Closed, Link, Received};
use crate::{LIMIT, msg};
use serde_json::{Value, json};
use std::borrow::Borrow;
use std::collections::VecDeque;
use std::time::Duration;
use tokio::time::Instant;

/// Why a read returned no message.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadError {
    /// Nothing came before the deadline.
    Timeout,
    /// The connection ended.
    Closed(Closed),
    /// The other side wrote something that is not a JSON message: why.
    Unreadable(String),
}

/// One end of a connection, speaking raw JSON. See the module docs.
pub struct Peer<L> {
    link: L,
    unread: VecDeque<Value>,
    next_id: i64,
    log: Vec<Value>,
    limit: Duration,
}

impl<L: Link> Peer<L> {
    /// A peer on `link`, each wait bounded by [`LIMIT`].
    pub fn new(link: L) -> Self {
        Peer {
            link,
            unread: VecDeque::new(),
            next_id: 1,
            log: Vec::new(),
            limit: LIMIT,
        }
    }

    /// The same peer with each wait bounded by `limit`.
    pub fn with_limit(mut self, limit: Duration) -> Self {
        self.limit = limit;
        self
    }

    /// How long each wait lasts.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// The link, for what only it can do.
    pub fn link(&self) -> &L {
        &self.link
    }

    /// The link, for what only it can do.
    pub fn link_mut(&mut self) -> &mut L {
        &mut self.link
    }

    // ---- writing ---------------------------------------------------------------------

    /// Writes `v`; `Err` says why the link took nothing.
    pub async fn try_send(&mut self, v: impl Borrow<Value>) -> Result<(), String> {
        self.link.send(v.borrow().clone()).await
    }

    /// Writes `v`, failing the test if the link is gone.
    pub async fn send(&mut self, v: impl Borrow<Value>) {
        let v = v.borrow();
        if let Err(why) = self.link.send(v.clone()).await {
            panic!("the link took no message ({why}): {v}");
        }
    }

    /// The next request id this peer numbers (1, 2, …).
    pub fn take_id(&mut self) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        id
    }

    /// Sends a request with the next id and returns that id; `Err` as [`Peer::try_send`].
    pub async fn try_send_request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.take_id();
        self.try_send(msg::request(id.clone(), method, params))
            .await
            .map(|()| id)
    }

    /// Sends a request with the next id and returns that id.
    pub async fn send_request(&mut self, method: &str, params: Value) -> Value {
        let id = self.take_id();
        self.send(msg::request(id.clone(), method, params)).await;
        id
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(msg::notification(method, params)).await;
    }

    /// Answers `request` with `result`.
    pub async fn reply(&mut self, request: &Value, result: Value) {
        self.send(msg::result(&request["id"], result)).await;
    }

    // ---- reading, reporting failures -------------------------------------------------

    /// The deadline of a wait starting now.
    pub fn deadline(&self) -> Instant {
        Instant::now() + self.limit
    }

    /// Reads the next message from the link (not from the unread queue), logging it.
    pub async fn read(&mut self, deadline: Instant) -> Result<Value, ReadError> {
        match tokio::time::timeout_at(deadline, self.link.next()).await {
            Err(_) => Err(ReadError::Timeout),
            Ok(Received::Message(v)) => {
                self.log.push(v.clone());
                Ok(v)
            }
            Ok(Received::Unreadable(why)) => Err(ReadError::Unreadable(why)),
            Ok(Received::Closed(c)) => Err(ReadError::Closed(c)),
        }
    }

    /// The next message matching `pred` (an unread one first); those before it stay
    /// unread, in order.
    pub async fn try_next_where(
        &mut self,
        pred: impl Fn(&Value) -> bool,
        deadline: Instant,
    ) -> Result<Value, ReadError> {
        if let Some(i) = self.unread.iter().position(&pred) {
            return Ok(self.unread.remove(i).expect("the position is in range"));
        }
        loop {
            let v = self.read(deadline).await?;
            if pred(&v) {
                return Ok(v);
            }
            self.unread.push_back(v);
        }
    }

    /// Puts `v` back at the end of the unread queue.
    pub fn keep(&mut self, v: Value) {
        self.unread.push_back(v);
    }

    // ---- reading, failing the test ---------------------------------------------------

    fn failed(&self, e: ReadError, what: &str) -> ! {
        match e {
            ReadError::Timeout => panic!("no {what} within {:?}", self.limit),
            ReadError::Closed(c) => panic!("the connection ended ({c:?}) while {what} was awaited"),
            ReadError::Unreadable(why) => {
                panic!("the other side wrote something unreadable: {why}")
            }
        }
    }

    /// The next message (an unread one first).
    pub async fn recv(&mut self) -> Value {
        if let Some(v) = self.unread.pop_front() {
            return v;
        }
        let deadline = self.deadline();
        match self.read(deadline).await {
            Ok(v) => v,
            Err(e) => self.failed(e, "a message"),
        }
    }

    /// The next message matching `pred`; those before it stay unread, in order.
    pub async fn next_where(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = self.deadline();
        match self.try_next_where(pred, deadline).await {
            Ok(v) => v,
            Err(e) => self.failed(e, "the message awaited"),
        }
    }

    /// The next request (or notification) of `method`.
    pub async fn expect_request(&mut self, method: &str) -> Value {
        self.next_where(|v| msg::is_method(v, method)).await
    }

    /// The next message, which must be a request of `method` (not a notification, not
    /// anything else first); returns it.
    pub async fn expect_next(&mut self, method: &str) -> Value {
        let m = self.recv().await;
        assert!(
            msg::is_method(&m, method) && m.get("id").is_some(),
            "expected a {method} request next, got {m}"
        );
        m
    }

    /// Asserts the other side ends the connection without writing anything more.
    pub async fn expect_closed(&mut self) {
        if let Some(m) = self.unread.pop_front() {
            panic!("expected the connection to end, the other side wrote {m}");
        }
        let deadline = self.deadline();
        match self.read(deadline).await {
            Err(ReadError::Closed(_)) => {}
            Ok(m) => panic!("expected the connection to end, the other side wrote {m}"),
            Err(e) => self.failed(e, "the end of the connection"),
        }
    }

    /// The response to `id`.
    pub async fn response(&mut self, id: &Value) -> Value {
        self.next_where(|v| msg::is_response(v) && v["id"] == *id)
            .await
    }

    /// Sends a request and returns its response; messages read meanwhile stay unread.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params).await;
        self.response(&id).await
    }

    /// Sends `v` and returns the next message, whatever it is: for a test that states
    /// the order of what comes back.
    pub async fn exchange(&mut self, v: impl Borrow<Value>) -> Value {
        self.send(v).await;
        self.recv().await
    }

    /// Asserts the next message is exactly `expected`.
    pub async fn expect(&mut self, expected: Value) {
        let got = self.recv().await;
        assert_eq!(got, expected, "\n got: {got:#}\nwant: {expected:#}");
    }

    /// Sends `v` and asserts the next message is exactly `expected`.
    pub async fn expect_after(&mut self, v: impl Borrow<Value>, expected: Value) {
        self.send(v).await;
        self.expect(expected).await;
    }

    /// Reads until the connection ends and says how (messages read meanwhile are kept).
    pub async fn closed(&mut self) -> Closed {
        let deadline = self.deadline();
        loop {
            match self.read(deadline).await {
                Ok(v) => self.unread.push_back(v),
                Err(ReadError::Closed(c)) => return c,
                Err(ReadError::Unreadable(_)) => continue,
                Err(e) => self.failed(e, "the end of the connection"),
            }
        }
    }

    // ---- what was read ---------------------------------------------------------------

    /// Messages read but not yet taken.
    pub fn unread(&self) -> &VecDeque<Value> {
        &self.unread
    }

    /// Every message read on this connection, in order.
    pub fn log(&self) -> &[Value] {
        &self.log
    }

    /// How many requests or notifications of `method` were read.
    pub fn count(&self, method: &str) -> usize {
        self.log
            .iter()
            .filter(|v| msg::is_method(v, method))
            .count()
    }
}
