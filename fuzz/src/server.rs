//! `server_request`: a server session reading arbitrary messages.
//!
//! # Input
//!
//! The first byte is flags: bit 0 starts the case with a valid handshake (`initialize`,
//! then `notifications/initialized`), bit 1 makes that handshake MCPL's with `toolHints`
//! (else plain MCP). The rest is split at `\n`; each line is decoded with
//! [`Message::decode`] and the ones that decode are sent, in order, to one session over an
//! in-memory link (the transport answers what does not decode, not the session). At most
//! [`MAX_MESSAGES`] are sent.
//!
//! # Properties
//!
//! - the session never panics;
//! - every request is answered exactly once, with its own id (a response with an unknown
//!   id, a `null` id, or a second response to the same request is a failure); a request
//!   named by a `notifications/cancelled` may go unanswered (MCP: a cancelled call gets no
//!   response) but is still never answered twice;
//! - the answers come without the host doing anything more (no deadlock): a `ping` sent
//!   after the input is answered, and then every request not cancelled, within
//!   [`ANSWER_WITHIN`];
//! - when the host hangs up, the session ends and closes its side within [`ANSWER_WITHIN`].
//!
//! # Speed
//!
//! libFuzzer calls the check in one process, input after input; one actix `System` is made
//! per thread and reused ([`check`] runs each case with `block_on` on it). A fresh
//! [`Server`] per case keeps cases independent (principals and their toolsets live in the
//! server), so a crash reproduces from its input alone.

use mcpl_protocol::Tool;
use mcpl_protocol::jsonrpc::{Id, Message, Notification, Request, Response};
use mcpl_protocol::mcp::{CallToolResult, CancelledParams};
use mcpl_server::{Server, ToolContext, ToolError};
use mcpl_transport::{Connection, Inbound, Principal, memory};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// How many decoded messages of one input are sent at most.
pub const MAX_MESSAGES: usize = 64;

/// How long the session may take to answer, or to end after the host hangs up. Generous:
/// it is only ever waited out when a property fails.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// One case, decoded from the fuzz input.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Start with a valid handshake.
    pub handshake: bool,
    /// Make it MCPL's, advertising `toolHints`.
    pub mcpl: bool,
    /// What the host sends after the handshake.
    pub messages: Vec<Message>,
}

impl Case {
    /// Decodes a case; `None` for empty input.
    pub fn decode(data: &[u8]) -> Option<Case> {
        let (&flags, rest) = data.split_first()?;
        let messages = rest
            .split(|&b| b == b'\n')
            .filter_map(|line| Message::decode(line).ok())
            .take(MAX_MESSAGES)
            .collect();
        Some(Case {
            handshake: flags & 1 == 1,
            mcpl: flags & 2 == 2,
            messages,
        })
    }

    /// Everything the host sends, the handshake first.
    fn all_messages(&self) -> Vec<Message> {
        let mut all = Vec::new();
        if self.handshake {
            let mut caps = json!({});
            if self.mcpl {
                caps = json!({"experimental": {"mcpl": {"version": "0.5", "toolHints": true, "pushEvents": true}}});
            }
            all.push(request(
                Id::String("handshake".into()),
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": caps,
                       "clientInfo": {"name": "fuzz-host", "version": "1"}}),
            ));
            all.push(Message::Notification(Notification {
                method: "notifications/initialized".into(),
                params: None,
            }));
        }
        all.extend(self.messages.iter().cloned());
        all
    }
}

fn request(id: Id, method: &str, params: Value) -> Message {
    Message::Request(Request {
        id,
        method: method.into(),
        params: Some(mcpl_protocol::jsonrpc::to_raw(&params)),
    })
}

thread_local! {
    /// One actix system per thread, reused by every case (see the module doc).
    static SYSTEM: actix::SystemRunner = actix::System::new();
}

/// Decodes a case from the input and checks it; empty input is skipped.
pub fn check(data: &[u8]) {
    if let Some(case) = Case::decode(data) {
        run(&case);
    }
}

/// Runs one case on this thread's actix system; panics when a property fails.
pub fn run(case: &Case) {
    if let Err(failure) = SYSTEM.with(|system| system.block_on(session(case))) {
        panic!("{failure}\ncase: {case:#?}");
    }
}

/// The server every case talks to: tools that answer at once, after yielding (so a
/// cancellation can land while they run), and with a tool error.
fn server() -> Server {
    let schema = json!({"type": "object"});
    Server::builder("fuzz", "0.0.0")
        .tool(
            Tool::new("echo", "Says its arguments back", schema.clone()),
            |_ctx: ToolContext, args: Value| async move {
                Ok::<_, ToolError>(CallToolResult::text(args.to_string()))
            },
        )
        .tool(
            Tool::new(
                "wait",
                "Answers after a few turns of the runtime",
                schema.clone(),
            ),
            |_ctx: ToolContext, _args: Value| async move {
                for _ in 0..3 {
                    tokio::task::yield_now().await;
                }
                Ok::<_, ToolError>(CallToolResult::text("done"))
            },
        )
        .tool(
            Tool::new("fail", "Always fails", schema),
            |_ctx: ToolContext, _args: Value| async move {
                Err::<CallToolResult, _>(ToolError::failed("it always fails"))
            },
        )
        .build()
        .expect("the fuzz server is valid")
}

/// What the host sent that needs an answer, and what came back.
#[derive(Debug, Default)]
struct Ledger {
    /// How many requests were sent with each id.
    sent: BTreeMap<Id, usize>,
    /// Ids named by a `notifications/cancelled`.
    cancelled: BTreeSet<Id>,
    /// How many responses came with each id.
    answered: BTreeMap<Id, usize>,
}

impl Ledger {
    fn record_sent(&mut self, m: &Message) {
        match m {
            Message::Request(r) => *self.sent.entry(r.id.clone()).or_default() += 1,
            Message::Notification(n) if n.method == "notifications/cancelled" => {
                if let Ok(CancelledParams { request_id, .. }) = n.params_as::<CancelledParams>() {
                    self.cancelled.insert(request_id);
                }
            }
            _ => {}
        }
    }

    /// An id no request used, for the closing `ping`.
    fn fresh_id(&self) -> Id {
        (0u64..)
            .map(|n| Id::String(format!("fuzz-barrier-{n}")))
            .find(|id| !self.sent.contains_key(id) && !self.cancelled.contains(id))
            .expect("some id is unused")
    }

    fn record_answer(&mut self, r: &Response) -> Result<(), String> {
        let Some(id) = &r.id else {
            return Err(format!(
                "a response with a null id to a valid message: {r:?}"
            ));
        };
        let sent = self.sent.get(id).copied().unwrap_or(0);
        let answered = self.answered.entry(id.clone()).or_default();
        *answered += 1;
        if *answered > sent {
            return Err(format!(
                "id {id} answered {answered} times for {sent} requests: {r:?}"
            ));
        }
        Ok(())
    }

    fn answered(&self, id: &Id) -> usize {
        self.answered.get(id).copied().unwrap_or(0)
    }

    /// Requests not cancelled and not yet answered.
    fn missing(&self) -> Vec<&Id> {
        self.sent
            .iter()
            .filter(|(id, n)| !self.cancelled.contains(*id) && self.answered(id) < **n)
            .map(|(id, _)| id)
            .collect()
    }
}

async fn session(case: &Case) -> Result<(), String> {
    let server = server();
    let (client, conn) = memory::pair(Principal::Named("fuzz".into()), true);
    let _session = server.serve(conn);
    let Connection {
        outbound,
        mut inbound,
        ..
    } = client;

    let mut ledger = Ledger::default();
    for m in case.all_messages() {
        ledger.record_sent(&m);
        outbound
            .send(m)
            .await
            .map_err(|e| format!("the session closed the link while the host wrote: {e}"))?;
    }
    // Answered in order after everything before it has been read (the session writes a
    // `ping`'s answer at once); forwarded requests may still be on their way.
    let barrier = ledger.fresh_id();
    let ping = request(barrier.clone(), "ping", json!({}));
    ledger.record_sent(&ping);
    outbound
        .send(ping)
        .await
        .map_err(|e| format!("the session closed the link before the barrier: {e}"))?;

    let deadline = tokio::time::Instant::now() + ANSWER_WITHIN;
    while ledger.answered(&barrier) == 0 || !ledger.missing().is_empty() {
        match tokio::time::timeout_at(deadline, inbound.recv()).await {
            Err(_) => {
                return Err(format!(
                    "no answer within {ANSWER_WITHIN:?} for {:?}",
                    ledger.missing()
                ));
            }
            Ok(None) => {
                return Err(format!(
                    "the session closed the link with {:?} unanswered",
                    ledger.missing()
                ));
            }
            Ok(Some(Inbound::Message {
                message: Message::Response(r),
                ..
            })) => ledger.record_answer(&r)?,
            // The server's own requests and notifications (none is needed here).
            Ok(Some(_)) => {}
        }
    }

    // Hang up: the session must end, and must not answer anything twice on its way out.
    drop(outbound);
    let deadline = tokio::time::Instant::now() + ANSWER_WITHIN;
    loop {
        match tokio::time::timeout_at(deadline, inbound.recv()).await {
            Err(_) => {
                return Err(format!(
                    "the session did not end within {ANSWER_WITHIN:?} of the host hanging up"
                ));
            }
            Ok(None) => return Ok(()),
            Ok(Some(Inbound::Message {
                message: Message::Response(r),
                ..
            })) => ledger.record_answer(&r)?,
            Ok(Some(_)) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(id: Option<Id>) -> Response {
        Response {
            id,
            outcome: Ok(mcpl_protocol::jsonrpc::to_raw(&json!({}))),
        }
    }

    fn ping(id: i64) -> Message {
        request(Id::Number(id), "ping", json!({}))
    }

    #[test]
    fn a_case_is_its_flags_and_the_lines_that_decode() {
        let data =
            b"\x03{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{}}\nnot json\n\n[1]";
        let case = Case::decode(data).expect("a case");
        assert!(case.handshake && case.mcpl);
        assert_eq!(case.messages, vec![ping(1)]);
        assert_eq!(
            case.all_messages().len(),
            3,
            "initialize, initialized, the ping"
        );
        assert!(!Case::decode(b"\x02").expect("a case").handshake);
        assert_eq!(Case::decode(b""), None);
    }

    #[test]
    fn the_ledger_refuses_a_second_answer_an_unknown_id_and_a_null_id() {
        let mut ledger = Ledger::default();
        ledger.record_sent(&ping(1));
        assert_eq!(ledger.missing(), vec![&Id::Number(1)]);
        assert!(ledger.record_answer(&response(Some(Id::Number(1)))).is_ok());
        assert!(ledger.missing().is_empty());
        assert!(
            ledger
                .record_answer(&response(Some(Id::Number(1))))
                .is_err()
        );
        assert!(
            ledger
                .record_answer(&response(Some(Id::Number(2))))
                .is_err()
        );
        assert!(ledger.record_answer(&response(None)).is_err());
    }

    #[test]
    fn a_cancelled_request_may_go_unanswered_but_not_twice() {
        let mut ledger = Ledger::default();
        ledger.record_sent(&ping(4));
        ledger.record_sent(&Message::Notification(Notification {
            method: "notifications/cancelled".into(),
            params: Some(mcpl_protocol::jsonrpc::to_raw(&json!({"requestId": 4}))),
        }));
        assert!(ledger.missing().is_empty());
        assert!(ledger.record_answer(&response(Some(Id::Number(4)))).is_ok());
        assert!(
            ledger
                .record_answer(&response(Some(Id::Number(4))))
                .is_err()
        );
    }

    #[test]
    fn the_barrier_id_is_one_no_request_used() {
        let mut ledger = Ledger::default();
        let first = ledger.fresh_id();
        ledger.record_sent(&request(first.clone(), "ping", json!({})));
        assert_ne!(ledger.fresh_id(), first);
    }
}
