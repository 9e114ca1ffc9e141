//! The bounds of a check and why one was left to the server: what every step of the
//! check (`scan`, `walk`, `strip`) shares, kept apart so that they depend on it and not on
//! the module that composes them.

/// §6: a schema nested deeper than this many levels is not checked by the host.
pub const MAX_DEPTH: usize = 24;

/// §6: a check that would take more than this many steps is not made by the host.
pub const MAX_STEPS: usize = 5_000;

/// How many problems an [`ArgCheck::Invalid`](super::ArgCheck::Invalid) lists at most.
pub const MAX_PROBLEMS: usize = 8;

/// How long a problem's message may be (the crate's messages quote the value and the
/// schema, which are not ours to repeat at length).
pub const MAX_MESSAGE_CHARS: usize = 300;

/// The bounds of a check. [`CheckLimits::default`] is the spec's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckLimits {
    /// Levels of schema nesting checked (§6: 24).
    pub max_depth: usize,
    /// Steps a check may take (§6: 5,000).
    pub max_steps: usize,
    /// Problems listed at most.
    pub max_problems: usize,
    /// Characters per problem message at most.
    pub max_message_chars: usize,
}

impl Default for CheckLimits {
    fn default() -> Self {
        CheckLimits {
            max_depth: MAX_DEPTH,
            max_steps: MAX_STEPS,
            max_problems: MAX_PROBLEMS,
            max_message_chars: MAX_MESSAGE_CHARS,
        }
    }
}

/// Why the host left a check to the server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unchecked {
    /// The schema, or the walk through it with these arguments, nests deeper than the limit.
    #[error("the schema nests deeper than {limit} levels")]
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// The check would take more steps than the limit.
    #[error("checking would take more than {limit} steps")]
    TooManySteps {
        /// The limit.
        limit: usize,
    },
    /// A regex keyword sits where dropping it could make the check stricter than the
    /// server's (under `not`, `if`, `oneOf`, a bounded `contains`, or beside
    /// `unevaluatedProperties`).
    #[error("the schema uses a pattern the host cannot leave out safely")]
    RegexNotDroppable,
    /// A `$ref` the host does not resolve (not within the schema, or scoped by a nested
    /// `$id`).
    #[error("the schema refers to {reference:?}, which the host does not resolve")]
    UnresolvableRef {
        /// The reference, bounded in size.
        reference: String,
    },
    /// A `$ref` to a member that no keyword makes a subschema (`#/x-defs/m`): the host did
    /// not strip its regexes, so it leaves the check to the server (§6).
    #[error("the schema refers to {reference:?}, outside the subschemas the host checks")]
    RefOutsideSchemas {
        /// The reference, bounded in size.
        reference: String,
    },
    /// `$dynamicRef` / `$recursiveRef`, which the host does not estimate.
    #[error("the schema uses dynamic references")]
    DynamicRef,
    /// The schema does not compile.
    #[error("the schema does not compile: {detail}")]
    DoesNotCompile {
        /// The compiler's message, bounded in size.
        detail: String,
    },
    /// The validator failed (a caught panic).
    #[error("the schema validator failed")]
    CheckerFailed,
    /// The only problems were values outside an `enum`: the server says why (module docs).
    #[error("a value is outside an enum; the server says why")]
    OutsideEnum,
}

/// `s` cut to `max` characters, with an ellipsis when cut.
pub(super) fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((at, _)) => format!("{}…", &s[..at]),
    }
}
