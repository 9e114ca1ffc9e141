//! `mcpl-host console`: reads requests from stdin, writes answers and events to stdout,
//! one JSON object per line (`mcpl_host::cli::console`). A line that cannot be read gets an
//! error answer; end of input ends the host. Input is read once every server has settled
//! or turned out unreachable, so a script's first line meets the servers' state.

use anyhow::Context as _;
use mcpl_host::cli::console::{self, Request};
use mcpl_host::host::HostHandle;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Stdout};

pub async fn run(host: HostHandle) -> anyhow::Result<()> {
    let mut events = host.subscribe();
    crate::first_contact(&host).await?;
    let mut out = tokio::io::stdout();
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    loop {
        tokio::select! {
            line = lines.next_line() => {
                let Some(line) = line.context("reading stdin")? else { break };
                if line.trim().is_empty() {
                    continue;
                }
                let answer = answer(&host, &line);
                tokio::pin!(answer);
                // Events go out as they happen, while the request is under way; those shown
                // before its answer go first.
                let reply = loop {
                    tokio::select! {
                        biased;
                        Some(e) = events.recv() => write(&mut out, &console::event(&e)).await?,
                        reply = &mut answer => break reply,
                    }
                };
                while let Ok(e) = events.try_recv() {
                    write(&mut out, &console::event(&e)).await?;
                }
                write(&mut out, &reply).await?;
            }
            Some(e) = events.recv() => write(&mut out, &console::event(&e)).await?,
        }
    }
    host.stop().await;
    Ok(())
}

async fn write(out: &mut Stdout, line: &str) -> anyhow::Result<()> {
    out.write_all(line.as_bytes()).await?;
    out.write_all(b"\n").await?;
    out.flush().await.context("writing stdout")
}

/// The answer line to one request line.
async fn answer(host: &HostHandle, line: &str) -> String {
    let l = console::parse(line);
    let id = &l.id;
    let request = match l.request {
        Ok(r) => r,
        Err(e) => return console::error(id, &e.to_string()),
    };
    let answered = match request {
        Request::Call { tool, args } => host
            .call(&tool, args)
            .await
            .map(|r| console::result(id, &r)),
        Request::Tools => host.tools().await.map(|t| console::tools(id, &t)),
        Request::Transcript => host.transcript().await.map(|t| console::transcript(id, &t)),
        Request::Turn => host
            .start_turn()
            .await
            .map(|r| console::reminder(id, r.as_ref())),
        Request::Boundary => match host.boundary().await {
            Ok(_) => host.tools().await.map(|t| console::tools(id, &t)),
            Err(e) => Err(e),
        },
        Request::Compact => match host.compact().await {
            Ok(_) => host.tools().await.map(|t| console::tools(id, &t)),
            Err(e) => Err(e),
        },
    };
    answered.unwrap_or_else(|e| console::error(id, &e.to_string()))
}
