//! What `mcpl-host play` says of its servers' connections: the prompt's summary, a line
//! when a server's connection changes (with the cause when it goes: a refused token, a
//! refused connection, an unreachable host), and the `status` command's text. Read from
//! the host's [`HostStatus`]; pure.

use crate::state::HostStatus;
use std::collections::BTreeMap;

/// One server's connection, as a person is told it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    /// No attempt has ended yet.
    Connecting,
    /// Connected (its handshake done).
    Connected,
    /// Not connected; the host keeps trying. The cause, when known.
    Down(Option<String>),
}

impl Link {
    fn word(&self) -> &'static str {
        match self {
            Link::Connecting => "connecting",
            Link::Connected => "connected",
            Link::Down(_) => "not connected",
        }
    }
}

/// Every server's connection, by name.
pub type Links = BTreeMap<String, Link>;

/// The servers' connections in `status`.
pub fn links(status: &HostStatus) -> Links {
    status
        .servers
        .iter()
        .map(|(name, s)| {
            let link = if s.ready {
                Link::Connected
            } else if s.unreachable || s.down_because.is_some() {
                Link::Down(s.down_because.clone())
            } else {
                Link::Connecting
            };
            (name.clone(), link)
        })
        .collect()
}

/// The prompt: each server and its connection in a word, then `> `
/// (`[arcade: connected] > `).
pub fn prompt(links: &Links) -> String {
    let each: Vec<String> = links
        .iter()
        .map(|(name, link)| format!("{name}: {}", link.word()))
        .collect();
    format!("[{}] > ", each.join(" · "))
}

/// A line for each server whose connection changed from `before` to `now`; a server that
/// went down says why.
pub fn changes(before: &Links, now: &Links) -> Vec<String> {
    now.iter()
        .filter(|(name, link)| before.get(*name) != Some(link))
        .map(|(name, link)| line(name, link))
        .collect()
}

fn line(name: &str, link: &Link) -> String {
    match link {
        Link::Connecting => format!("{name}: connecting"),
        Link::Connected => format!("{name}: connected"),
        Link::Down(Some(cause)) => format!("{name}: not connected: {cause} (retrying)"),
        Link::Down(None) => format!("{name}: not connected (retrying)"),
    }
}

/// The `status` command's text: each server's connection, and what is open there.
pub fn status_text(status: &HostStatus) -> String {
    let links = links(status);
    let mut out = Vec::new();
    for (name, s) in &status.servers {
        let link = links.get(name).unwrap_or(&Link::Connecting);
        out.push(line(name, link));
        if !s.hints_count {
            if s.ready {
                out.push("  no toolsets: its tools are in your tool list (tools)".to_owned());
            }
            continue;
        }
        let open: Vec<String> = s
            .open
            .iter()
            .map(|(t, i)| match i {
                Some(i) => format!("{name}/{t}:{i}"),
                None => format!("{name}/{t}"),
            })
            .collect();
        if open.is_empty() {
            out.push("  nothing open".to_owned());
        } else {
            out.push(format!("  open: {}", open.join(", ")));
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::ServerStatus;

    fn status(servers: &[(&str, ServerStatus)]) -> HostStatus {
        HostStatus {
            servers: servers
                .iter()
                .map(|(n, s)| ((*n).to_owned(), s.clone()))
                .collect(),
            ..Default::default()
        }
    }

    fn up(open: &[(&str, Option<&str>)]) -> ServerStatus {
        ServerStatus {
            ready: true,
            settled: true,
            hints_count: true,
            open: open
                .iter()
                .map(|(t, i)| ((*t).to_owned(), i.map(str::to_owned)))
                .collect(),
            ..Default::default()
        }
    }

    fn down(cause: Option<&str>) -> ServerStatus {
        ServerStatus {
            unreachable: true,
            down_because: cause.map(str::to_owned),
            ..Default::default()
        }
    }

    #[test]
    fn the_prompt_says_each_servers_connection() {
        let s = status(&[
            ("arcade", up(&[])),
            ("docs", down(None)),
            ("new", ServerStatus::default()),
        ]);
        assert_eq!(
            prompt(&links(&s)),
            "[arcade: connected · docs: not connected · new: connecting] > "
        );
    }

    #[test]
    fn a_change_is_told_once_and_a_server_that_goes_says_why() {
        let starting = links(&status(&[("arcade", ServerStatus::default())]));
        let refused = links(&status(&[(
            "arcade",
            down(Some("the server refused the token (HTTP 401)")),
        )]));
        assert_eq!(
            changes(&starting, &refused),
            ["arcade: not connected: the server refused the token (HTTP 401) (retrying)"]
        );
        assert!(changes(&refused, &refused).is_empty(), "no change, no line");
        let other = links(&status(&[("arcade", down(Some("connection refused")))]));
        assert_eq!(
            changes(&refused, &other),
            ["arcade: not connected: connection refused (retrying)"]
        );
        let back = links(&status(&[("arcade", up(&[]))]));
        assert_eq!(changes(&other, &back), ["arcade: connected"]);
    }

    #[test]
    fn status_lists_connections_and_what_is_open() {
        let mut plain = up(&[]);
        plain.hints_count = false;
        let s = status(&[
            ("arcade", up(&[("lobby", None), ("go", Some("go-1"))])),
            ("docs", plain),
            (
                "remote",
                down(Some("connection refused: nothing listens there")),
            ),
        ]);
        assert_eq!(
            status_text(&s),
            "arcade: connected\n  open: arcade/lobby, arcade/go:go-1\n\
             docs: connected\n  no toolsets: its tools are in your tool list (tools)\n\
             remote: not connected: connection refused: nothing listens there (retrying)"
        );
    }
}
