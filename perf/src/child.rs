//! A measurement's child process (`sim-perf clients`, `sim-perf drop-hosts`): started
//! with its standard input and output piped, read a line at a time with a limit, told
//! to go by a line or by its input's end, and killed if dropped.

use super::PerfError;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::ChildStdout;

/// A child process of the measurement's own executable.
pub(crate) struct Child {
    process: tokio::process::Child,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Child {
    /// Runs `exe` with `args`, its standard error passed through.
    pub(crate) fn start(exe: &Path, args: &[String]) -> Result<Child, PerfError> {
        let mut process = tokio::process::Command::new(exe)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(PerfError::Child)?;
        let stdout = process
            .stdout
            .take()
            .ok_or(PerfError::Internal("no stdout"))?;
        Ok(Child {
            process,
            lines: BufReader::new(stdout).lines(),
        })
    }

    /// Its next line of output, within `within`; `what` names the stall.
    pub(crate) async fn line(
        &mut self,
        within: Duration,
        what: &'static str,
    ) -> Result<String, PerfError> {
        tokio::time::timeout(within, self.lines.next_line())
            .await
            .map_err(|_| PerfError::Stalled(what))?
            .map_err(PerfError::Child)?
            .ok_or(PerfError::Closed("(a child process's output)"))
    }

    /// Waits, within `within`, for its `ready N` with N at least `least`; returns N.
    pub(crate) async fn ready(
        &mut self,
        within: Duration,
        least: usize,
    ) -> Result<usize, PerfError> {
        let line = self.line(within, "a child process never got ready").await?;
        match line
            .strip_prefix("ready ")
            .and_then(|n| n.trim().parse::<usize>().ok())
        {
            Some(n) if n >= least => Ok(n),
            _ => Err(PerfError::ChildSaid(line)),
        }
    }

    /// Writes `line` to its standard input.
    pub(crate) async fn send_line(&mut self, line: &str) -> Result<(), PerfError> {
        let stdin = self
            .process
            .stdin
            .as_mut()
            .ok_or(PerfError::Internal("no stdin"))?;
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .map_err(PerfError::Child)?;
        stdin.flush().await.map_err(PerfError::Child)
    }

    /// Closes its standard input (the idle clients' signal to go).
    pub(crate) fn close_input(&mut self) {
        drop(self.process.stdin.take());
    }

    /// Waits for it to end, at most `within`.
    pub(crate) async fn wait(&mut self, within: Duration) {
        let _ = tokio::time::timeout(within, self.process.wait()).await;
    }
}
