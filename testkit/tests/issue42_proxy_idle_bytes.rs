//! Issue #42, from outside: connections idle through the fault proxy hold no read buffers.
//! This binary's global allocator counts the bytes live (which is why the test has a
//! binary of its own: the tests of `it` running beside it would change the count). Each
//! proxied connection held two 16 KiB buffers, one per direction, for its whole life: at
//! 3,000 simulated agents, their HTTP hosts' connections all proxied, about 60 KiB of
//! each agent's share of the process.

use mcpl_testkit::alloc::Counting;
use mcpl_testkit::proxy::Proxy;
use mcpl_testkit::within;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[global_allocator]
static COUNTING: Counting = Counting;

/// Connections held idle at once.
const CONNECTIONS: usize = 64;

/// An upstream that echoes what it reads through a small buffer of its own (so that what
/// is counted is the proxy's).
async fn echo() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut c, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut b = [0u8; 64];
                while let Ok(n @ 1..) = c.read(&mut b).await {
                    if c.write_all(&b[..n]).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    addr
}

#[tokio::test]
async fn issue42_an_idle_proxied_connection_holds_no_read_buffer() {
    within(async {
        let proxy = Proxy::start(echo().await).await.unwrap();
        // One connection first, so what is made once (the runtime's tables) is in the
        // baseline.
        let mut warm = TcpStream::connect(proxy.addr()).await.unwrap();
        ping(&mut warm).await;
        let before = Counting::live();
        let mut held = Vec::new();
        for _ in 0..CONNECTIONS {
            let mut c = TcpStream::connect(proxy.addr()).await.unwrap();
            // Both directions have carried bytes: each pump has read once.
            ping(&mut c).await;
            held.push(c);
        }
        let per = (Counting::live() - before) / CONNECTIONS as isize;
        assert_eq!(proxy.stats().accepted, CONNECTIONS as u64 + 1);
        // Both ends' sockets, the proxy's task and its two pumps: a few KiB. Two 16 KiB
        // read buffers alone were 32 KiB.
        assert!(
            per < 8 * 1024,
            "each idle proxied connection holds {per} bytes (its client and echo included)"
        );
    })
    .await;
}

/// A byte there and back.
async fn ping(c: &mut TcpStream) {
    c.write_all(b"p").await.unwrap();
    let mut b = [0u8; 1];
    c.read_exact(&mut b).await.unwrap();
    assert_eq!(&b, b"p");
}
