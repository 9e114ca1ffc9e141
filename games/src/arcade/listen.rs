//! Serving an [`Arcade`] on the SDK's transports, and the bearer tokens that map
//! connections to principals (§4.6).
//!
//! - [`ws`] and [`http`] bind a listener and serve every connection it accepts until the
//!   returned [`Listener`] is dropped (the SDK's [`mcpl_server::listen`]); the Streamable
//!   HTTP endpoint is at [`HTTP_PATH`].
//! - [`stdio`] serves this process's stdin/stdout as one configured principal.
//! - [`parse_token`] and [`parse_tokens_file`] read `NAME=SECRET` pairs.
//!
//! **The tokens file**: one `NAME=SECRET` per line; blank lines and lines starting with
//! `#` are skipped; spaces around `=` and at the ends are ignored. A name is a player's
//! name — `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$` (it appears in instance names and texts) and
//! not `bot`; a secret is at least one character with no whitespace, and no secret may
//! map to two names. A name may have several secrets.

use super::Arcade;
use super::shared::RESERVED_NAMES;
use mcpl_protocol::names::is_valid_name;
use mcpl_server::listen;
use mcpl_transport::{ServerOptions, stdio as transport_stdio};
use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

pub use mcpl_server::listen::{HTTP_PATH, Listener};

/// A token that could not be read. Each names the line (1-based; 0 for a `--token` flag).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// No `=` between name and secret.
    #[error("line {line}: expected NAME=SECRET")]
    Syntax {
        /// The line.
        line: usize,
    },
    /// The name is not a valid player name.
    #[error(
        "line {line}: {name:?} is not a valid player name (letters, digits, '_' and '-', at most 64, not \"bot\")"
    )]
    BadName {
        /// The line.
        line: usize,
        /// The name.
        name: String,
    },
    /// The secret is empty or contains whitespace.
    #[error("line {line}: the secret must be non-empty and contain no whitespace")]
    BadSecret {
        /// The line.
        line: usize,
    },
    /// The secret already maps to another name.
    #[error("line {line}: this secret is already the token of {other:?}")]
    DuplicateSecret {
        /// The line.
        line: usize,
        /// The name it maps to already.
        other: String,
    },
}

/// One `NAME=SECRET` (line `line` of a file, 0 for a flag).
pub fn parse_token(text: &str, line: usize) -> Result<(String, String), TokenError> {
    let (name, secret) = text.split_once('=').ok_or(TokenError::Syntax { line })?;
    let (name, secret) = (name.trim(), secret.trim());
    if !is_valid_name(name) || RESERVED_NAMES.contains(&name) {
        return Err(TokenError::BadName {
            line,
            name: name.to_owned(),
        });
    }
    if secret.is_empty() || secret.chars().any(char::is_whitespace) {
        return Err(TokenError::BadSecret { line });
    }
    Ok((name.to_owned(), secret.to_owned()))
}

/// A tokens file (module docs), as `(name, secret)` pairs in file order.
pub fn parse_tokens_file(text: &str) -> Result<Vec<(String, String)>, TokenError> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .map(|(line, l)| parse_token(l, line))
        .collect()
}

/// The secret → name map a [`ServerOptions`] takes; a secret given twice for two names
/// is refused (the same pair twice is harmless).
pub fn token_map(
    tokens: impl IntoIterator<Item = (usize, String, String)>,
) -> Result<HashMap<String, String>, TokenError> {
    let mut map: HashMap<String, String> = HashMap::new();
    for (line, name, secret) in tokens {
        match map.get(&secret) {
            Some(other) if *other != name => {
                return Err(TokenError::DuplicateSecret {
                    line,
                    other: other.clone(),
                });
            }
            _ => {
                map.insert(secret, name);
            }
        }
    }
    Ok(map)
}

/// Serves `arcade` over WebSocket on `addr` (the SDK's accept loop, each connection
/// through [`Arcade::serve`] so it counts as online). Must run inside a tokio runtime.
pub async fn ws(
    arcade: &Arcade,
    addr: SocketAddr,
    opts: Arc<ServerOptions>,
) -> io::Result<Listener> {
    let arcade = arcade.clone();
    listen::ws(addr, opts, move |conn| {
        arcade.serve(conn);
    })
    .await
}

/// Serves `arcade` over Streamable HTTP on `addr`, endpoint [`HTTP_PATH`]. Must run inside
/// a tokio runtime.
pub async fn http(
    arcade: &Arcade,
    addr: SocketAddr,
    opts: Arc<ServerOptions>,
) -> io::Result<Listener> {
    let arcade = arcade.clone();
    listen::http(addr, opts, move |conn| {
        arcade.serve(conn);
    })
    .await
}

/// Serves `arcade` on this process's stdin/stdout as `opts.stdio_principal`; the returned
/// future resolves once the session has ended (stdin closed) and its last answers are
/// written. Nothing else may write to stdout meanwhile.
pub fn stdio(arcade: &Arcade, opts: &ServerOptions) -> transport_stdio::Drained {
    let (conn, drained) = transport_stdio::serve_stdio_drained(opts);
    arcade.serve(conn);
    drained
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_read_with_their_line_numbers() {
        let file = "# players\nalice=s3cret\n\n  bob = b0b  \n";
        assert_eq!(
            parse_tokens_file(file).unwrap(),
            [
                ("alice".to_owned(), "s3cret".to_owned()),
                ("bob".to_owned(), "b0b".to_owned())
            ]
        );
        assert_eq!(
            parse_tokens_file("alice=a\nbob\n"),
            Err(TokenError::Syntax { line: 2 })
        );
        assert!(matches!(
            parse_tokens_file("bot=x"),
            Err(TokenError::BadName { line: 1, .. })
        ));
        assert!(matches!(
            parse_token("a.b=x", 0),
            Err(TokenError::BadName { line: 0, .. })
        ));
        assert_eq!(
            parse_token("alice=two words", 3),
            Err(TokenError::BadSecret { line: 3 })
        );
        assert_eq!(
            parse_token("alice=", 4),
            Err(TokenError::BadSecret { line: 4 })
        );
    }

    #[test]
    fn a_secret_maps_to_one_name() {
        let map = token_map([
            (1, "alice".into(), "x".into()),
            (2, "alice".into(), "y".into()),
            (3, "alice".into(), "x".into()),
        ])
        .unwrap();
        assert_eq!(map.len(), 2);
        assert_eq!(
            token_map([
                (1, "alice".into(), "x".into()),
                (2, "bob".into(), "x".into())
            ]),
            Err(TokenError::DuplicateSecret {
                line: 2,
                other: "alice".into()
            })
        );
    }
}
