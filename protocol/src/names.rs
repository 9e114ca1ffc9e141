//! RFC-014's names for toolsets and instances (spec §4.1, **\[project\]**): strict in what
//! this project makes, liberal in what it accepts.
//!
//! The RFC's own grammar is not public. Two grammars stand in for it:
//!
//! - [`check_name`], for names this project **generates or declares** (its server's toolsets,
//!   the names its host proposes, a server's chosen instance names):
//!   `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`. It leaves out `.`, `:` and `/`, which separate the
//!   parts of host markers (`[server/toolset:instance]`) and namespaced tool names, and fits
//!   SPEC §17.2's charset (a toolset name is a manifest member name).
//! - [`check_peer_name`], for names a **peer** sends (a toolset another server declares, an
//!   instance name another host proposes or another server chose): SPEC §17.2's identifier
//!   charset `[A-Za-z0-9._:*-]`, 1 to [`MAX_PEER_NAME_LEN`] bytes — every name a conforming
//!   manifest can hold. Markers that show such a name are only read by people; tools are
//!   addressed by their arguments, never by parsing a marker.

/// The longest name the grammar allows.
pub const MAX_NAME_LEN: usize = 64;

/// Why a name does not fit the grammar.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// The name is empty.
    #[error("a name cannot be empty")]
    Empty,
    /// The name is longer than the grammar allows.
    #[error("a name is too long ({0} bytes)")]
    TooLong(usize),
    /// The first character is not a letter or digit.
    #[error("a name must start with a letter or digit, not {0:?}")]
    BadStart(char),
    /// A character outside the grammar's.
    #[error("{0:?} is not allowed in a name")]
    BadChar(char),
}

/// Checks a toolset or instance name against the grammar.
pub fn check_name(name: &str) -> Result<(), NameError> {
    let mut chars = name.chars();
    let first = chars.next().ok_or(NameError::Empty)?;
    if !first.is_ascii_alphanumeric() {
        return Err(NameError::BadStart(first));
    }
    if let Some(c) = chars.find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-')) {
        return Err(NameError::BadChar(c));
    }
    // Every accepted character is ASCII, so bytes are characters here.
    if name.len() > MAX_NAME_LEN {
        return Err(NameError::TooLong(name.len()));
    }
    Ok(())
}

/// The longest name accepted from a peer.
pub const MAX_PEER_NAME_LEN: usize = 128;

/// Checks a name a peer sent: non-empty, at most [`MAX_PEER_NAME_LEN`] bytes, and within
/// SPEC §17.2's identifier charset `[A-Za-z0-9._:*-]`.
pub fn check_peer_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "._:*-".contains(*c)))
    {
        return Err(NameError::BadChar(c));
    }
    if name.len() > MAX_PEER_NAME_LEN {
        return Err(NameError::TooLong(name.len()));
    }
    Ok(())
}

/// True when `name` fits the grammar.
pub fn is_valid_name(name: &str) -> bool {
    check_name(name).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn examples() {
        for ok in ["go", "g1", "game-2", "A_b-9", "9x9", &"a".repeat(64)] {
            assert_eq!(check_name(ok), Ok(()), "{ok}");
        }
        assert_eq!(check_name(""), Err(NameError::Empty));
        assert_eq!(check_name("-go"), Err(NameError::BadStart('-')));
        assert_eq!(check_name("_go"), Err(NameError::BadStart('_')));
        assert_eq!(check_name("a.b"), Err(NameError::BadChar('.')));
        assert_eq!(check_name("a:b"), Err(NameError::BadChar(':')));
        assert_eq!(check_name("a/b"), Err(NameError::BadChar('/')));
        assert_eq!(check_name("é"), Err(NameError::BadStart('é')));
        assert_eq!(check_name("aé"), Err(NameError::BadChar('é')));
        assert_eq!(check_name(&"a".repeat(65)), Err(NameError::TooLong(65)));
    }

    #[test]
    fn peer_names_take_the_identifier_charset() {
        for ok in ["g.1", "a:b", "x*", "-go", "_", &"a".repeat(128)] {
            assert_eq!(check_peer_name(ok), Ok(()), "{ok}");
        }
        assert_eq!(check_peer_name(""), Err(NameError::Empty));
        assert_eq!(check_peer_name("a/b"), Err(NameError::BadChar('/')));
        assert_eq!(check_peer_name("a b"), Err(NameError::BadChar(' ')));
        assert_eq!(check_peer_name("é"), Err(NameError::BadChar('é')));
        assert_eq!(
            check_peer_name(&"a".repeat(129)),
            Err(NameError::TooLong(129))
        );
        // Every name this project makes is one a peer may send.
        assert!(check_peer_name("game-2").is_ok() && check_name("game-2").is_ok());
    }

    proptest! {
        #[test]
        fn agrees_with_the_regex(s in "\\PC{0,70}") {
            let expected = {
                let b = s.as_bytes();
                !b.is_empty() && b.len() <= 64 && b[0].is_ascii_alphanumeric()
                    && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
            };
            prop_assert_eq!(is_valid_name(&s), expected);
        }
    }
}
