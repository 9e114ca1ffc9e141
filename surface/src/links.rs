//! A backing server's connection, told to the client when it changes: the host tells what
//! changed in the toolsets (an instance that is gone is told closed once, vector 9), but
//! not that a connection went or came back — a person at `play` sees that in the prompt; a
//! model behind a plain MCP client would only see calls fail. So the surface host tells it
//! once per change: when a connection that was up is lost, and when it is back, with what
//! the host adopted there (§4.3: the server's own statement, never a re-open).
//!
//! Pure: fed the host's status snapshots.

use mcpl_host::host::{HostStatus, Shown, ShownKind};
use std::collections::BTreeMap;

/// The most characters of a cause told (the host words it, but it can quote a peer).
const MAX_CAUSE: usize = 200;

/// What the client was last told of each server's connection.
#[derive(Debug, Default)]
pub struct Links {
    /// Per server: true while it is up as far as the client was told, and the connection
    /// (epoch) it was last seen up on.
    up: BTreeMap<String, (bool, u64)>,
}

impl Links {
    /// Nothing told yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The messages a new status calls for: a server that was up and is not, or that was
    /// lost and is settled again. A server's first connection is not news.
    pub fn update(&mut self, status: &HostStatus) -> Vec<Shown> {
        let mut out = Vec::new();
        for (name, s) in &status.servers {
            let seen = self.up.get(name).copied();
            let was = seen.map(|(up, _)| up);
            // Up on another connection than the last one seen up: it went and came back
            // between two snapshots (the status is a watch, which keeps the latest only).
            let replaced = seen.is_some_and(|(up, epoch)| up && s.settled && s.epoch != epoch);
            let now = if s.settled {
                true
            } else if s.unreachable || !s.ready {
                false
            } else {
                // Connected, not settled yet: nothing to tell either way.
                continue;
            };
            if replaced {
                out.push(notice(
                    name,
                    format!(
                        "Notice from the surface host about {name}: the connection to {name} was lost and is back; {}.",
                        still_open(name, &s.open)
                    ),
                ));
            }
            match (was, now) {
                (Some(true), false) => {
                    let why = s
                        .down_because
                        .as_deref()
                        .map(|c| format!(" ({})", clip(c)))
                        .unwrap_or_default();
                    out.push(notice(
                        name,
                        format!(
                            "Notice from the surface host about {name}: the connection to {name} was lost{why}. \
                             It is reconnecting; calls to {name} fail until it is back, and you will be told."
                        ),
                    ));
                }
                (Some(false), true) => {
                    out.push(notice(
                        name,
                        format!(
                            "Notice from the surface host about {name}: connected again; {}.",
                            still_open(name, &s.open)
                        ),
                    ));
                }
                _ => {}
            }
            // A server never up is not "lost": its first settling is the start.
            if now || was.is_some() {
                self.up.insert(name.clone(), (now, s.epoch));
            }
        }
        out
    }
}

/// What is open at `server` now, as its statement said (adopted, §4.3).
fn still_open(server: &str, open: &[(String, Option<String>)]) -> String {
    if open.is_empty() {
        return "nothing is open there".to_owned();
    }
    let open: Vec<String> = open
        .iter()
        .map(|(t, i)| match i {
            Some(i) => format!("[{server}/{t}:{i}]"),
            None => format!("[{server}/{t}]"),
        })
        .collect();
    format!("open there, as {server} states it: {}", open.join(", "))
}

fn notice(server: &str, text: String) -> Shown {
    Shown {
        seq: 0,
        kind: ShownKind::Notice,
        server: Some(server.to_owned()),
        text,
        restates: false,
    }
}

fn clip(s: &str) -> String {
    let one_line = s.replace(['\n', '\r', '\t'], " ");
    if one_line.chars().count() <= MAX_CAUSE {
        return one_line;
    }
    let mut out: String = one_line.chars().take(MAX_CAUSE).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_host::host::ServerStatus;

    fn status(settled: bool, unreachable: bool, open: &[(&str, Option<&str>)]) -> HostStatus {
        let s = ServerStatus {
            ready: settled,
            settled,
            unreachable,
            down_because: unreachable.then(|| "connection refused\nnothing listens".to_owned()),
            open: open
                .iter()
                .map(|(t, i)| (t.to_string(), i.map(str::to_owned)))
                .collect(),
            ..Default::default()
        };
        HostStatus {
            servers: [("arcade".to_owned(), s)].into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_loss_and_a_return_are_told_once_each_and_the_start_is_not() {
        let mut l = Links::new();
        assert!(l.update(&status(false, false, &[])).is_empty());
        assert!(l.update(&status(true, false, &[])).is_empty(), "the start");
        assert!(l.update(&status(true, false, &[])).is_empty());
        let lost = l.update(&status(false, true, &[]));
        assert_eq!(lost.len(), 1);
        assert!(
            lost[0]
                .text
                .contains("the connection to arcade was lost (connection refused nothing listens)"),
            "{}",
            lost[0].text
        );
        assert!(l.update(&status(false, true, &[])).is_empty(), "once");
        let back = l.update(&status(true, false, &[("tictactoe", Some("t1"))]));
        assert_eq!(back.len(), 1);
        assert!(
            back[0].text.contains(
                "connected again; open there, as arcade states it: [arcade/tictactoe:t1]"
            ),
            "{}",
            back[0].text
        );
        assert!(l.update(&status(true, false, &[])).is_empty(), "once");
    }

    #[test]
    fn a_loss_between_two_snapshots_is_told_by_the_new_connection() {
        let mut l = Links::new();
        let mut first = status(true, false, &[]);
        first.servers.get_mut("arcade").unwrap().epoch = 1;
        assert!(l.update(&first).is_empty());
        let mut second = status(true, false, &[("go", Some("g"))]);
        second.servers.get_mut("arcade").unwrap().epoch = 2;
        let told = l.update(&second);
        assert_eq!(told.len(), 1);
        assert!(
            told[0]
                .text
                .contains("was lost and is back; open there, as arcade states it: [arcade/go:g]"),
            "{}",
            told[0].text
        );
        assert!(l.update(&second).is_empty(), "once");
    }

    #[test]
    fn a_server_unreachable_from_the_start_is_not_lost() {
        let mut l = Links::new();
        assert!(l.update(&status(false, true, &[])).is_empty());
        assert!(l.update(&status(true, false, &[])).is_empty());
        assert_eq!(l.update(&status(false, true, &[])).len(), 1);
    }

    #[test]
    fn a_cause_is_bounded() {
        let mut l = Links::new();
        l.update(&status(true, false, &[]));
        let mut s = status(false, true, &[]);
        s.servers.get_mut("arcade").unwrap().down_because = Some("x".repeat(10_000));
        let lost = l.update(&s);
        assert!(lost[0].text.len() < 600, "{}", lost[0].text.len());
    }
}
