//! [`Gather`]: a socket wrapper that holds what is written until a flush, so that a long
//! message sent in fragments ([`FRAGMENT`](super::link::FRAGMENT) bytes each, to keep
//! tungstenite's write buffer small) still reaches the socket in one write rather than one
//! a fragment, and gives its room back once written.
//!
//! tungstenite writes its buffer out whenever it holds [`write_buffer_size`] bytes — a
//! fragment — so without this a 40 KiB answer took forty `writev`s (and, with
//! `TCP_NODELAY`, forty segments). Here the fragments gather in a buffer of ours, written
//! whole at the link's flush (after the last fragment). Only a write longer than a
//! fragment — tungstenite writing its buffer out mid-message — is held; a shorter one
//! (the message's end, or a reply tungstenite writes and never flushes, as the close a
//! server answers with as it ends) goes at once, with what is held before it. A buffer
//! grown past [`KEEP`] is
//! freed once written, so an idle link keeps nothing of its largest message (issue #42:
//! the idle session). What gathers is bounded: past [`LIMIT`] bytes a write first waits
//! for the socket to take what is held, so a slow peer holds the writer back as before.
//!
//! [`write_buffer_size`]: tokio_tungstenite::tungstenite::protocol::WebSocketConfig::write_buffer_size

use super::link::FRAGMENT;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A buffer that grew past this is freed once written, rather than kept for the link's life.
pub(crate) const KEEP: usize = 4 * 1024;

/// At most this much is held unwritten: a write past it first drains what is held.
pub(crate) const LIMIT: usize = 64 * 1024;

/// A socket whose writes are held until a flush (module docs). Reads pass through.
#[derive(Debug)]
pub(crate) struct Gather<S> {
    inner: S,
    /// What was written and not yet given to the socket, from `sent` on.
    held: Vec<u8>,
    /// How much of `held` the socket already took.
    sent: usize,
}

impl<S> Gather<S> {
    /// Wraps `inner`.
    pub(crate) fn new(inner: S) -> Self {
        Gather {
            inner,
            held: Vec::new(),
            sent: 0,
        }
    }

    /// The room the held buffer keeps (for tests).
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.held.capacity()
    }
}

impl<S: AsyncWrite + Unpin> Gather<S> {
    /// Gives the socket everything held; then frees a grown buffer.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.held.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.held[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.sent = 0;
        if self.held.capacity() > KEEP {
            self.held = Vec::new();
        } else {
            self.held.clear();
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Gather<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Gather<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        if data.len() <= FRAGMENT {
            // Not a fragment's write-out: the end of a message at its flush, or a reply
            // tungstenite writes without a flush (the close a server answers as it ends):
            // it goes now, with what is held before it, in one write.
            if me.held.len() == me.sent {
                return Pin::new(&mut me.inner).poll_write(cx, data);
            }
            me.held.extend_from_slice(data);
            // Taken even if the socket is full now: the next write or flush drains it.
            let _ = me.poll_drain(cx)?;
            return Poll::Ready(Ok(data.len()));
        }
        if me.held.len() - me.sent + data.len() > LIMIT {
            ready!(me.poll_drain(cx))?;
            // Larger than the bound on its own: straight to the socket.
            if data.len() > LIMIT {
                return Pin::new(&mut me.inner).poll_write(cx, data);
            }
        }
        me.held.extend_from_slice(data);
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        ready!(me.poll_drain(cx))?;
        Pin::new(&mut me.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        ready!(me.poll_drain(cx))?;
        Pin::new(&mut me.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A socket that counts the writes it is given.
    struct Counting {
        writes: usize,
        bytes: Vec<u8>,
    }

    impl AsyncWrite for Counting {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            data: &[u8],
        ) -> Poll<io::Result<usize>> {
            let me = self.get_mut();
            me.writes += 1;
            me.bytes.extend_from_slice(data);
            Poll::Ready(Ok(data.len()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn fragments_reach_the_socket_in_one_write_at_the_flush_and_the_room_goes_back() {
        let mut g = Gather::new(Counting {
            writes: 0,
            bytes: Vec::new(),
        });
        // tungstenite writes a fragment out with its header: a little over FRAGMENT.
        let pieces: Vec<Vec<u8>> = (0..40u8).map(|i| vec![i; FRAGMENT + 4]).collect();
        for p in &pieces {
            g.write_all(p).await.unwrap();
        }
        assert_eq!(g.inner.writes, 0, "no fragment goes before the end");
        // The message's end (what tungstenite writes at the flush) takes all with it.
        g.write_all(&[99; 300]).await.unwrap();
        assert_eq!(
            g.inner.writes, 1,
            "forty fragments and the end in one write"
        );
        g.flush().await.unwrap();
        assert_eq!(g.inner.writes, 1, "nothing left for the flush");
        assert_eq!(g.inner.bytes, [pieces.concat(), vec![99; 300]].concat());
        assert_eq!(g.capacity(), 0, "a grown buffer is freed once written");
        // A short write with nothing held goes at once, never held (a close reply that
        // tungstenite writes and never flushes).
        g.write_all(&[0x88, 0]).await.unwrap();
        assert_eq!(g.inner.writes, 2);
        assert_eq!(g.capacity(), 0);
    }

    #[tokio::test]
    async fn what_is_held_is_bounded_a_write_past_the_bound_drains_first() {
        let mut g = Gather::new(Counting {
            writes: 0,
            bytes: Vec::new(),
        });
        let piece = vec![7u8; 2048];
        for _ in 0..(LIMIT / 2048) {
            g.write_all(&piece).await.unwrap();
        }
        assert_eq!(g.inner.writes, 0);
        g.write_all(&piece).await.unwrap();
        assert_eq!(
            g.inner.writes, 1,
            "the bound reached, what was held went first"
        );
        assert_eq!(g.inner.bytes.len(), LIMIT);
        // One write larger than the bound goes straight through.
        g.write_all(&vec![1u8; LIMIT + 1]).await.unwrap();
        g.flush().await.unwrap();
        assert_eq!(g.inner.bytes.len(), 2 * LIMIT + 2048 + 1);
    }

    #[tokio::test]
    async fn reads_pass_through() {
        let (a, mut b) = tokio::io::duplex(64);
        let mut g = Gather::new(a);
        b.write_all(b"hello").await.unwrap();
        let mut got = [0u8; 5];
        g.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"hello");
    }
}
