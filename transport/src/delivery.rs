//! The seam for chaos testing a Streamable HTTP client: a hook awaited before each message
//! read is delivered to the connection's inbound channel.
//!
//! A Streamable HTTP link is unordered because POST responses and the GET stream are
//! separate HTTP streams (RFC-014 §5.2 is why a host cares). Each stream is read by its own
//! task, which awaits the hook before delivering each message, so delaying one stream's
//! messages holds back that stream only: order within a stream is kept, order across streams
//! is whatever the delays make it. A simulator builds its reorderings from this; this crate
//! builds none.

use crate::StreamId;
use mcpl_protocol::Message;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Which kind of HTTP stream a message was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamOrigin {
    /// The response to a POST (one JSON body, or an SSE stream), or a response the client
    /// made up for a request whose POST failed.
    PostResponse,
    /// The GET SSE stream of server-initiated messages.
    GetStream,
}

/// One message about to be delivered.
#[derive(Debug, Clone, Copy)]
pub struct Delivery<'a> {
    /// The stream it will be tagged with.
    pub stream: StreamId,
    /// What kind of stream that is.
    pub origin: StreamOrigin,
    /// The message.
    pub message: &'a Message,
}

type HookFn = dyn Fn(&Delivery<'_>) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync;

/// A function called for each message an HTTP client is about to deliver; the message is
/// delivered when the returned future completes. The future owns what it needs (it cannot
/// borrow the delivery).
#[derive(Clone)]
pub struct DeliveryHook(Arc<HookFn>);

impl DeliveryHook {
    /// Wraps a function returning the future to await.
    pub fn new<F, Fut>(f: F) -> Self
    where
        F: Fn(&Delivery<'_>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        DeliveryHook(Arc::new(move |d| Box::pin(f(d))))
    }

    /// Awaits the hook for one delivery.
    pub(crate) async fn before(&self, delivery: &Delivery<'_>) {
        (self.0)(delivery).await
    }
}

impl fmt::Debug for DeliveryHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DeliveryHook(..)")
    }
}
