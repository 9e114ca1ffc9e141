//! What this binary's tests share: a client of a server on an in-process link.

use mcpl_server::protocol::jsonrpc::Message;
use mcpl_server::transport::{Connection, Inbound, memory};
use mcpl_server::{Principal, Server};
use serde_json::Value;

/// A client of `who`'s on an in-process link.
pub(crate) struct Client {
    link: Connection,
    _session: mcpl_server::SessionHandle,
}

impl Client {
    /// Connects `who` to `server`.
    pub(crate) fn connect(server: &Server, who: &str) -> Client {
        let (link, end) = memory::pair(Principal::Named(who.into()), true);
        let session = server.serve(end);
        Client {
            link,
            _session: session,
        }
    }

    /// Sends `request` (a JSON-RPC message as JSON).
    pub(crate) async fn send(&self, request: Value) {
        let message: Message = serde_json::from_value(request).expect("a message");
        self.link.outbound.send(message).await.expect("the link");
    }

    /// The next response (notifications skipped).
    pub(crate) async fn response(&mut self) -> Value {
        loop {
            let read = mcpl_testkit::within(self.link.inbound.recv()).await;
            let Some(Inbound::Message { message, .. }) = read else {
                panic!("the link closed: {read:?}");
            };
            let v = serde_json::to_value(&message).expect("JSON");
            if v.get("method").is_none() {
                return v;
            }
        }
    }

    /// The next `push/event` (answered as accepted), other messages skipped: its params.
    pub(crate) async fn push(&mut self) -> Value {
        loop {
            let read = mcpl_testkit::within(self.link.inbound.recv()).await;
            let Some(Inbound::Message { message, .. }) = read else {
                panic!("the link closed: {read:?}");
            };
            let v = serde_json::to_value(&message).expect("JSON");
            if v["method"] == "push/event" {
                let accepted = serde_json::json!({"jsonrpc": "2.0", "id": v["id"].clone(),
                    "result": {"accepted": true}});
                self.send(accepted).await;
                return v["params"].clone();
            }
        }
    }

    /// Sends `request` and returns its response.
    pub(crate) async fn exchange(&mut self, request: Value) -> Value {
        self.send(request).await;
        self.response().await
    }
}
