//! A TCP proxy between the surface host and a backing server: its upstream can be changed
//! (a restarted server), its connections cut (a drop), and what the server sends held back
//! and then let through (a call that cannot end until the test says so).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A TCP proxy to an upstream that can be changed, whose connections can be cut and whose
/// server-to-client bytes can be held.
pub struct Proxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    upstream: Arc<Mutex<SocketAddr>>,
    conns: Arc<Mutex<Vec<JoinHandle<()>>>>,
    held: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Proxy {
    /// Listens on loopback and forwards each connection to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let upstream = Arc::new(Mutex::new(upstream));
        let conns: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let (held, _) = watch::channel(false);
        let (up, cs, h) = (upstream.clone(), conns.clone(), held.clone());
        let task = tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let to = *up.lock().unwrap();
                let held = h.subscribe();
                let conn = tokio::spawn(async move {
                    // Nothing listening upstream: the client's connection is dropped.
                    if let Ok(out) = TcpStream::connect(to).await {
                        forward(inbound, out, held).await;
                    }
                });
                cs.lock().unwrap().push(conn);
            }
        });
        Proxy {
            addr,
            upstream,
            conns,
            held,
            task,
        }
    }

    /// Cuts every connection made so far.
    pub fn cut(&self) {
        for c in self.conns.lock().unwrap().drain(..) {
            c.abort();
        }
    }

    /// Sends later connections to `upstream`.
    pub fn point_to(&self, upstream: SocketAddr) {
        *self.upstream.lock().unwrap() = upstream;
    }

    /// Holds what the server sends from now on (the client's bytes still go through).
    pub fn hold(&self) {
        self.held.send_replace(true);
    }

    /// Lets through what was held, and what comes after.
    pub fn release(&self) {
        self.held.send_replace(false);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
        self.cut();
    }
}

/// Copies both ways until either side ends; server-to-client bytes wait while `held`.
async fn forward(client: TcpStream, server: TcpStream, mut held: watch::Receiver<bool>) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let up = tokio::io::copy(&mut client_read, &mut server_write);
    let down = async {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = match server_read.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if held.wait_for(|h| !*h).await.is_err()
                || client_write.write_all(&buf[..n]).await.is_err()
            {
                return;
            }
        }
    };
    tokio::select! {
        _ = up => {}
        () = down => {}
    }
}
