//! The stdio transport (MCP 2025-11-25, "Transports" § stdio): one JSON-RPC message per line,
//! UTF-8, no embedded newlines, both ways.
//!
//! - [`spawn`]: the client end. Launches the server as a child process and speaks over its
//!   stdin/stdout. When every [`Outbound`] clone is dropped the child's stdin is closed (MCP's
//!   shutdown signal); a child still running [`CHILD_EXIT_GRACE`] later is killed, and so is
//!   one whose connection is dropped with the runtime.
//! - [`serve_stdio`]: the server end, on this process's own stdin/stdout, serving
//!   [`ServerOptions::stdio_principal`].
//! - [`from_io`]: either end over any reader and writer (tests drive it with
//!   `tokio::io::duplex`).
//!
//! The two directions are independent, like the pipes under them: the inbound channel ends
//! at EOF, and the writer goes on until every `Outbound` is dropped or a write fails (so a
//! server can still answer what it read just before its stdin closed). A line longer than
//! the limit is refused with [`Inbound::TooLarge`] and the rest of it skipped; a line that is
//! not a message is [`Inbound::Malformed`]; empty lines are skipped. The link goes on.

use crate::config::ChildStderr;
use crate::{
    ClientOptions, Connection, ConnectionInfo, Inbound, Outbound, Principal, ServerOptions,
    StreamId, TransportError, TransportKind, WhyEnded,
};
use bytes::BytesMut;
use mcpl_protocol::Message;
use mcpl_protocol::jsonrpc::DecodeError;
use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::future::Future;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter,
};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::codec::{Decoder, LinesCodec, LinesCodecError};

/// The queue depth of each direction.
const DEPTH: usize = 1024;

/// How long a child may take to exit after its stdin is closed before it is killed.
pub const CHILD_EXIT_GRACE: Duration = Duration::from_secs(2);

/// Resolves once the writer has written and flushed everything queued and shut its side
/// down: after every [`Outbound`] clone was dropped, or on a write error. A stdio server
/// awaits it before exiting so its last responses are not lost.
#[derive(Debug)]
pub struct Drained(JoinHandle<()>);

impl Future for Drained {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // A writer task never panics; if the runtime cancelled it there is nothing to wait for.
        Pin::new(&mut self.0).poll(cx).map(|_| ())
    }
}

/// A link over any byte reader and writer, newline-delimited JSON both ways.
/// `StreamId(0)` tags everything read; `info` is reported as given.
pub fn from_io<R, W>(
    reader: R,
    writer: W,
    info: ConnectionInfo,
    max_message_size: usize,
) -> Connection
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    from_io_drained(reader, writer, info, max_message_size).0
}

/// [`from_io`], also returning a future that resolves when the writer is done.
pub fn from_io_drained<R, W>(
    reader: R,
    writer: W,
    info: ConnectionInfo,
    max_message_size: usize,
) -> (Connection, Drained)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (out_tx, out_rx) = mpsc::channel(DEPTH);
    let (in_tx, in_rx) = mpsc::channel(DEPTH);
    tokio::spawn(read_lines(reader, in_tx, max_message_size));
    let writer = tokio::spawn(write_lines(writer, out_rx));
    (
        Connection {
            info,
            outbound: Outbound::new(out_tx),
            inbound: in_rx.into(),
        },
        Drained(writer),
    )
}

/// The server end on this process's stdin/stdout, serving `opts.stdio_principal`.
/// Nothing else may write to stdout (MCP): log to stderr. Tokio reads stdin on a blocking
/// thread, which keeps a runtime from shutting down while a read is pending: a server that
/// decides to quit before its stdin closes should `std::process::exit` once drained.
pub fn serve_stdio(opts: &ServerOptions) -> Connection {
    serve_stdio_drained(opts).0
}

/// [`serve_stdio`], also returning a future to await before exiting, so that what was
/// written last reaches stdout.
pub fn serve_stdio_drained(opts: &ServerOptions) -> (Connection, Drained) {
    let info = ConnectionInfo {
        kind: TransportKind::Stdio,
        ordered: true,
        principal: Some(Principal::Named(opts.stdio_principal.clone())),
        peer: "stdio".to_owned(),
    };
    from_io_drained(
        tokio::io::stdin(),
        tokio::io::stdout(),
        info,
        opts.max_message_size,
    )
}

/// No variables added to a child's environment: the `env` of a [`spawn`] that inherits this
/// process's environment as it is.
pub const NO_ENV: [(&str, &str); 0] = [];

/// The client end: spawns `program` with `args`, these `env` variables added to its
/// environment ([`NO_ENV`] for none; an MCP client's `mcpServers` entry gives `command`,
/// `args` and `env`), and speaks over its stdin/stdout. The values are not logged. Must be
/// called inside a Tokio runtime. Fails only if the process cannot be started.
pub fn spawn<P, I, S, E, K, V>(
    program: P,
    args: I,
    env: E,
    opts: &ClientOptions,
) -> Result<Connection, TransportError>
where
    P: AsRef<OsStr>,
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
    E: IntoIterator<Item = (K, V)>,
    K: AsRef<OsStr>,
    V: AsRef<OsStr>,
{
    let mut command = Command::new(program.as_ref());
    command.args(args);
    // The peer's name for logs is taken before the environment is added: `Command`'s
    // `Debug` shows the variables set, and an `env` holds credentials.
    let peer = format!("{:?}", command.as_std());
    let env: Vec<(OsString, OsString)> = env
        .into_iter()
        .map(|(k, v)| (k.as_ref().to_owned(), v.as_ref().to_owned()))
        .collect();
    // The program is looked up in the child's `PATH` when the environment given sets one.
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var_os("PATH"));
    command.envs(env);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(match opts.child_stderr {
            ChildStderr::Inherit => Stdio::inherit(),
            ChildStderr::Tracing => Stdio::piped(),
            ChildStderr::Discard => Stdio::null(),
        })
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|e| spawn_error(program.as_ref(), path.as_deref(), &e))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(TransportError::Io(std::io::Error::other(
            "the child's stdin/stdout were not piped",
        )));
    };
    let tail = StderrTail::default();
    let forwarding = child
        .stderr
        .take()
        .map(|stderr| tokio::spawn(forward_stderr(stderr, peer.clone(), tail.clone())));
    let info = ConnectionInfo {
        kind: TransportKind::Stdio,
        ordered: true,
        principal: None,
        peer: peer.clone(),
    };
    let why: WhyEnded = WhyEnded::default();
    let (exited_tx, exited_rx) = tokio::sync::oneshot::channel();
    let stdout = EndAfterExit {
        inner: stdout,
        exited: Some(exited_rx),
        deadline: None,
    };
    let (mut conn, drained) = from_io_drained(stdout, stdin, info, opts.max_message_size);
    conn.inbound = conn.inbound.with_why_ended(why.clone());
    let ended = Ended {
        why,
        told: exited_tx,
    };
    tokio::spawn(supervise(child, drained, peer, forwarding, tail, ended));
    Ok(conn)
}

/// A child's stdout whose end is held back until the child has been reaped (or
/// [`EXIT_WAIT`] has passed), so that why it exited is known by the time the link reads
/// the end ([`Incoming::why_ended`]).
struct EndAfterExit {
    inner: tokio::process::ChildStdout,
    exited: Option<tokio::sync::oneshot::Receiver<()>>,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
}

/// How long the end of a child's stdout waits for the child's exit to be known.
const EXIT_WAIT: Duration = Duration::from_secs(1);

impl AsyncRead for EndAfterExit {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) if buf.filled().len() == before => {}
            other => return other,
        }
        // The end: wait for the exit (or the deadline), then say it.
        let this = &mut *self;
        if let Some(exited) = &mut this.exited {
            let deadline = this
                .deadline
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(EXIT_WAIT)));
            if Pin::new(exited).poll(cx).is_pending() && deadline.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.exited = None;
        }
        Poll::Ready(Ok(()))
    }
}

/// What [`supervise`] tells the reading end when the child has exited.
struct Ended {
    why: WhyEnded,
    told: tokio::sync::oneshot::Sender<()>,
}

/// The error for a program that could not be started, naming it and, when it was not
/// found, the `PATH` it was looked for in (issue #43: `No such file or directory` alone
/// says neither).
fn spawn_error(program: &OsStr, path: Option<&OsStr>, e: &std::io::Error) -> TransportError {
    let name = program.to_string_lossy().into_owned();
    let reason = match e.kind() {
        std::io::ErrorKind::NotFound if name.contains(std::path::MAIN_SEPARATOR) => {
            format!("no such file ({e})")
        }
        std::io::ErrorKind::NotFound => {
            let path = path.map_or_else(
                || "no PATH is set".to_owned(),
                |p| format!("PATH={}", p.to_string_lossy()),
            );
            format!(
                "no such program on the PATH ({path}): give its full path as the command, or \
                 start this process with the program's directory on its PATH"
            )
        }
        std::io::ErrorKind::PermissionDenied => format!("it is not executable ({e})"),
        _ => e.to_string(),
    };
    TransportError::Spawn {
        program: name,
        reason,
    }
}

/// The last lines a child wrote to its stderr (piped into tracing), kept so that they can
/// be said again at WARN when it exits by itself: at INFO they are easily missed, and they
/// usually say why (issue #43).
#[derive(Clone, Default)]
struct StderrTail(Arc<Mutex<VecDeque<String>>>);

/// How many of a child's last stderr lines are kept, and how long each may be, in bytes.
const TAIL_LINES: usize = 8;
const TAIL_LINE_BYTES: usize = 400;

impl StderrTail {
    fn push(&self, line: &str) {
        let mut cut = line.len().min(TAIL_LINE_BYTES);
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        let mut lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line[..cut].to_owned());
    }

    fn joined(&self) -> String {
        let lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        lines
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

/// How long an exited child's stderr is read on for its last lines (a grandchild may hold
/// the pipe open).
const TAIL_WAIT: Duration = Duration::from_millis(500);

/// Reaps the child; once its stdin is closed, gives it [`CHILD_EXIT_GRACE`] to exit, then
/// kills it (MCP: "close stdin, wait, then terminate"). A child that exits by itself while
/// the link still wants it (before or at `initialize`, typically: a store locked by another
/// process, a bad flag) is said at WARN, with its exit status and its last stderr lines
/// (issue #43).
async fn supervise(
    mut child: Child,
    drained: Drained,
    peer: String,
    forwarding: Option<JoinHandle<()>>,
    tail: StderrTail,
    ended: Ended,
) {
    tokio::select! {
        status = child.wait() => {
            if let Some(forwarding) = forwarding {
                let _ = tokio::time::timeout(TAIL_WAIT, forwarding).await;
            }
            let status = match status {
                Ok(s) => s.to_string(),
                Err(e) => format!("status unknown ({e})"),
            };
            let said = tail.joined();
            let why = if said.is_empty() {
                format!("the server process exited ({status})")
            } else {
                format!("the server process exited ({status}); its last stderr lines: {said}")
            };
            tracing::warn!(%peer, "stdio server exited by itself ({status}){}",
                if said.is_empty() { String::new() } else { format!("; its last stderr lines: {said}") });
            let _ = ended.why.set(why);
            let _ = ended.told.send(());
            return;
        }
        () = drained => {}
    }
    // Our own end: nothing more to say (the reading end goes at its deadline at most).
    let _ = ended.told.send(());
    match tokio::time::timeout(CHILD_EXIT_GRACE, child.wait()).await {
        Ok(status) => tracing::debug!(%peer, ?status, "stdio server exited after its stdin closed"),
        Err(_) => {
            tracing::warn!(%peer, "stdio server still running {CHILD_EXIT_GRACE:?} after its stdin closed; killing it");
            let _ = child.kill().await;
        }
    }
}

async fn forward_stderr(stderr: tokio::process::ChildStderr, peer: String, tail: StderrTail) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::info!(target: "mcpl_transport::stdio::child", %peer, "{line}");
        tail.push(&line);
    }
}

/// Reads lines until EOF or a read error, delivering each as a message, a decode failure or
/// a size refusal. `LinesCodec` is driven by hand rather than through `FramedRead` because a
/// `FramedRead` stream ends after the first error, and an over-long line must not end the link.
async fn read_lines<R: AsyncRead + Unpin>(
    mut reader: R,
    inbound: mpsc::Sender<Inbound>,
    limit: usize,
) {
    let stream = StreamId(0);
    let mut codec = LinesCodec::new_with_max_length(limit);
    let mut buf = BytesMut::with_capacity(8 * 1024);
    let mut eof = false;
    loop {
        let decoded = if eof {
            codec.decode_eof(&mut buf)
        } else {
            codec.decode(&mut buf)
        };
        let item = match decoded {
            Ok(Some(line)) if line.trim().is_empty() => continue,
            Ok(Some(line)) => match Message::decode_str(&line) {
                Ok(message) => Inbound::Message { stream, message },
                Err(error) => Inbound::Malformed { stream, error },
            },
            // The codec skips the rest of the line by itself; only a lower bound is known.
            Err(LinesCodecError::MaxLineLengthExceeded) => Inbound::TooLarge {
                stream,
                size: limit + 1,
                limit,
            },
            // The only other error the codec reports for a complete line is invalid UTF-8.
            Err(LinesCodecError::Io(e)) => Inbound::Malformed {
                stream,
                error: DecodeError::Parse(e.to_string()),
            },
            Ok(None) if eof => return,
            Ok(None) => {
                match reader.read_buf(&mut buf).await {
                    Ok(0) => eof = true,
                    Ok(_) => {}
                    Err(e) => {
                        tracing::debug!(error = %e, "stdio read failed; closing inbound");
                        return;
                    }
                }
                continue;
            }
        };
        if inbound.send(item).await.is_err() {
            return;
        }
    }
}

/// Writes each queued message as one line, flushing whenever the queue runs dry.
async fn write_lines<W: AsyncWrite + Unpin>(writer: W, mut outbound: mpsc::Receiver<Message>) {
    let mut writer = BufWriter::new(writer);
    while let Some(message) = outbound.recv().await {
        let mut line = message.encode();
        line.push('\n');
        let written = async {
            writer.write_all(line.as_bytes()).await?;
            if outbound.is_empty() {
                writer.flush().await?;
            }
            Ok::<_, std::io::Error>(())
        };
        if let Err(e) = written.await {
            tracing::debug!(error = %e, "stdio write failed; closing outbound");
            return;
        }
    }
    let _ = writer.flush().await;
    let _ = writer.shutdown().await;
}
