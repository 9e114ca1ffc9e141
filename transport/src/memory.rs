//! In-process links: two [`Connection`]s joined by channels. Used by tests and by the
//! simulator's deterministic harness, where chaos is a filter on these queues.

use crate::{Connection, ConnectionInfo, Inbound, Outbound, Principal, StreamId, TransportKind};
use tokio::sync::mpsc;

/// The queue depth of each direction.
const DEPTH: usize = 1024;

/// A linked pair: `(client end, server end)`. Messages written on one end are read on the
/// other, in order, on `StreamId(0)`. `ordered` is what both ends report; the memory link
/// itself always preserves order (a harness that reorders sits between two pairs).
pub fn pair(principal: Principal, ordered: bool) -> (Connection, Connection) {
    let (client_tx, client_out) = mpsc::channel(DEPTH);
    let (server_tx, server_out) = mpsc::channel(DEPTH);
    let (client_in_tx, client_in) = mpsc::channel(DEPTH);
    let (server_in_tx, server_in) = mpsc::channel(DEPTH);
    tokio::spawn(forward(client_out, server_in_tx));
    tokio::spawn(forward(server_out, client_in_tx));
    let info = |principal| ConnectionInfo {
        kind: TransportKind::Memory,
        ordered,
        principal,
        peer: "memory".into(),
    };
    (
        Connection {
            info: info(None),
            outbound: Outbound::new(client_tx),
            inbound: client_in.into(),
        },
        Connection {
            info: info(Some(principal)),
            outbound: Outbound::new(server_tx),
            inbound: server_in.into(),
        },
    )
}

async fn forward(mut from: mpsc::Receiver<mcpl_protocol::Message>, to: mpsc::Sender<Inbound>) {
    while let Some(message) = from.recv().await {
        if to
            .send(Inbound::Message {
                stream: StreamId(0),
                message,
            })
            .await
            .is_err()
        {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::jsonrpc::{Id, Message, Request};

    #[tokio::test]
    async fn messages_cross_in_order_and_close_propagates() {
        let (client, mut server) = pair(Principal::Named("alice".into()), true);
        for i in 0..3 {
            client
                .outbound
                .send(Message::Request(Request {
                    id: Id::Number(i),
                    method: "ping".into(),
                    params: None,
                }))
                .await
                .unwrap();
        }
        for i in 0..3 {
            match server.inbound.recv().await {
                Some(Inbound::Message {
                    message: Message::Request(r),
                    ..
                }) => assert_eq!(r.id, Id::Number(i)),
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(
            server.info.principal,
            Some(Principal::Named("alice".into()))
        );
        drop(client);
        assert!(server.inbound.recv().await.is_none());
    }
}
