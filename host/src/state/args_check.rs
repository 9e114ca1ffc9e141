//! The bounded check `toolsets--act` makes on `args` against a dynamic tool's **current**
//! `inputSchema` before sending (§6 "RFC §8.2", §7). Pure: no I/O, no clock.
//!
//! The schema is the server's and the arguments are the model's, so the host never runs
//! either unboundedly (§7):
//!
//! 1. `scan`: one pass over the schema's structure (not following `$ref`). A schema nested
//!    deeper than [`MAX_DEPTH`] levels, or with more schema nodes than the step budget, is
//!    [`Unchecked`]. The scan also notes what the later steps must refuse — among them any
//!    `$ref` to a member no keyword makes a subschema (`x-defs`), which `strip` never sees.
//! 2. `walk`: an estimate of the validation itself over the (schema, args) pair, following
//!    `$ref` and every applicator as a validator would, charging one step per schema node
//!    visited and one per `enum` entry compared. It stops as soon as the budget is spent, so
//!    the estimate costs at most the budget. Steps = schema nodes (compiling visits each once)
//!    + the walk's steps; more than [`MAX_STEPS`] is [`Unchecked`].
//! 3. `strip`: a copy of the schema without `pattern` and `patternProperties` — the host
//!    never evaluates a server's regex (§6). Dropping a constraint only relaxes a schema where
//!    it sits in a *positive* position; under `not`, an `if` condition, a `oneOf` branch or a
//!    `contains` bounded by `maxContains` it could make the check stricter than the server's,
//!    so such a schema is [`Unchecked`] instead. `additionalProperties` beside a dropped
//!    `patternProperties` is dropped too (it would now also judge the pattern's members).
//! 4. Compile the copy with the `jsonschema` crate (format assertions off, no remote
//!    references: the crate is built without them) and validate. A schema that does not
//!    compile is [`Unchecked`], as is a panic inside the crate, which is caught.
//!
//! [`ArgCheck::Invalid`] means the server would refuse the call too, and the host answers the
//! agent without sending. [`ArgCheck::Unchecked`] means "left to the server": the host
//! sends, and the server checks every call itself.
//!
//! §6 **\[project\]** (issue #36, item 14): when the only problems are values outside an
//! `enum`, the call is left to the server ([`Unchecked::OutsideEnum`]). An instance's
//! `enum` lists what is allowed *now* (a game's legal points); the host could only say a
//! value is not among them, where the server says why (the point is taken, a suicide, a
//! repeated position) and may read a value the enum spells otherwise (`e4` for `E4`). An
//! `enum` problem beside any other is still refused here, with the others.

mod scan;
mod strip;
#[cfg(test)]
mod tests;
mod walk;

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// §6: a schema nested deeper than this many levels is not checked by the host.
pub const MAX_DEPTH: usize = 24;

/// §6: a check that would take more than this many steps is not made by the host.
pub const MAX_STEPS: usize = 5_000;

/// How many problems an [`ArgCheck::Invalid`] lists at most.
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

/// One way the arguments do not fit the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where in the arguments: a JSON pointer (`""` is the arguments object itself).
    pub path: String,
    /// What is wrong, bounded in size.
    pub message: String,
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

/// The outcome of a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgCheck {
    /// The arguments fit the schema (as far as the host checks: no patterns, no formats).
    Valid,
    /// They do not; at least one problem.
    Invalid(Vec<Problem>),
    /// The host did not check; the server will.
    Unchecked(Unchecked),
}

/// Checks `args` against `schema` within the spec's bounds.
pub fn check(schema: &Value, args: &Value) -> ArgCheck {
    check_with(schema, args, &CheckLimits::default())
}

/// Checks `args` against `schema` within `limits`.
pub fn check_with(schema: &Value, args: &Value, limits: &CheckLimits) -> ArgCheck {
    match estimate(schema, args, limits) {
        Ok(_) => {}
        Err(reason) => return ArgCheck::Unchecked(reason),
    }
    let stripped = strip::strip(schema);
    // The crate is third-party code fed a peer's schema: a panic in it must not take the
    // host down (a session never panics on what a peer sends).
    let outcome = catch_unwind(AssertUnwindSafe(|| validate(&stripped, args, limits)));
    match outcome {
        Ok(result) => result,
        Err(_) => {
            tracing::warn!("schema validator panicked; the call is left to the server");
            ArgCheck::Unchecked(Unchecked::CheckerFailed)
        }
    }
}

/// The steps a check of `args` against `schema` would take (schema nodes plus the walk),
/// or why it would not be made. Costs at most about `limits.max_steps` steps itself.
pub fn estimate(schema: &Value, args: &Value, limits: &CheckLimits) -> Result<usize, Unchecked> {
    let scanned = scan::scan(schema, limits)?;
    if scanned.dynamic_refs {
        return Err(Unchecked::DynamicRef);
    }
    if scanned.regex_negated
        || (scanned.regex && scanned.refs && scanned.non_monotone)
        || (scanned.pattern_properties && scanned.unevaluated_properties)
    {
        return Err(Unchecked::RegexNotDroppable);
    }
    // Every reference, whether or not these arguments reach it: the validator compiles
    // them all (§6: a reference to anything not stripped is left to the server).
    for r in &scanned.ref_values {
        if let Err(e @ Unchecked::RefOutsideSchemas { .. }) = scanned.resolve(r) {
            return Err(e);
        }
    }
    let budget = limits.max_steps.saturating_sub(scanned.nodes);
    let walked = walk::walk(schema, args, &scanned, limits, budget)?;
    Ok(scanned.nodes + walked)
}

fn validate(schema: &Value, args: &Value, limits: &CheckLimits) -> ArgCheck {
    let validator = match jsonschema::options()
        .should_validate_formats(false)
        .build(schema)
    {
        Ok(v) => v,
        Err(e) => {
            return ArgCheck::Unchecked(Unchecked::DoesNotCompile {
                detail: cut(&e.to_string(), limits.max_message_chars),
            });
        }
    };
    let errors: Vec<_> = validator
        .iter_errors(args)
        .take(limits.max_problems.max(1))
        .collect();
    if errors.is_empty() {
        return ArgCheck::Valid;
    }
    // Module docs. (Under `not`, `anyOf` or `oneOf` an `enum` fails as that keyword, so
    // what is left to the server is values outside an `enum` that must hold.)
    if errors
        .iter()
        .all(|e| matches!(e.kind, ValidationErrorKind::Enum { .. }))
    {
        return ArgCheck::Unchecked(Unchecked::OutsideEnum);
    }
    let problems = errors
        .iter()
        .map(|e| Problem {
            path: e.instance_path.to_string(),
            message: message(e, limits),
        })
        .collect();
    ArgCheck::Invalid(problems)
}

/// An `enum` of more entries than this is not listed in a problem: it is counted.
pub const ENUM_LISTED: usize = 8;

/// A problem's message, bounded. A value outside a long `enum` (a game's legal moves, one
/// per point) is said to be outside it, with the count: the crate's message would quote
/// every entry and be cut mid-list, which tells the agent nothing.
fn message(e: &jsonschema::ValidationError<'_>, limits: &CheckLimits) -> String {
    if let ValidationErrorKind::Enum { options } = &e.kind
        && let Some(entries) = options.as_array().filter(|o| o.len() > ENUM_LISTED)
    {
        let value = cut(&e.instance.to_string(), 60);
        let said = format!(
            "{value} is not one of the {} values allowed now",
            entries.len()
        );
        return cut(&said, limits.max_message_chars);
    }
    cut(&e.to_string(), limits.max_message_chars)
}

/// `s` cut to `max` characters, with an ellipsis when cut.
fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((at, _)) => format!("{}…", &s[..at]),
    }
}
