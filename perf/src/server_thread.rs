//! [`ServerThread`]: a server the measurements compare against (rmcp's, the floors) on a
//! thread of its own with its own tokio runtime, bound to 127.0.0.1 port 0, stopped when
//! dropped.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// See the module docs.
pub struct ServerThread {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ServerThread {
    /// Binds 127.0.0.1 port 0 on a thread named `name` running `runtime`, and serves the
    /// listener with `serve` until dropped. What the server left open (streams, sessions)
    /// goes with the runtime.
    pub fn start<F, Fut>(name: &str, runtime: tokio::runtime::Runtime, serve: F) -> io::Result<Self>
    where
        F: FnOnce(TcpListener) -> Fut + Send + 'static,
        Fut: Future<Output = ()>,
    {
        let (bound_tx, bound_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match TcpListener::bind(("127.0.0.1", 0)).await {
                        Ok(l) => l,
                        Err(e) => return drop(bound_tx.send(Err(e))),
                    };
                    let _ = bound_tx.send(listener.local_addr());
                    tokio::select! {
                        () = serve(listener) => {}
                        _ = stopped => {}
                    }
                });
                runtime.shutdown_background();
            })?;
        let addr = bound_rx
            .recv()
            .map_err(|_| io::Error::other("the server's thread stopped"))??;
        Ok(ServerThread {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address bound.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for ServerThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
