//! RFC-014's name grammar for toolsets and instances (spec §4.1, **\[project\]**).
//!
//! The RFC's own grammar is not public; the project's stand-in is
//! `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`. It leaves out `.`, `:` and `/`, which separate the
//! parts of host markers (`[server/toolset:instance]`) and namespaced tool names, and fits
//! SPEC §17.2's identifier charset, so a toolset name is a valid manifest member name.

/// The longest name the grammar allows.
pub const MAX_NAME_LEN: usize = 64;

/// Why a name does not fit the grammar.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// The name is empty.
    #[error("a name cannot be empty")]
    Empty,
    /// The name is longer than [`MAX_NAME_LEN`].
    #[error("a name is at most {MAX_NAME_LEN} characters, this one has {0}")]
    TooLong(usize),
    /// The first character is not a letter or digit.
    #[error("a name must start with a letter or digit, not {0:?}")]
    BadStart(char),
    /// A character outside `[A-Za-z0-9_-]`.
    #[error("{0:?} is not allowed in a name (letters, digits, '_' and '-' only)")]
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
