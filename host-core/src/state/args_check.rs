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

mod limits;
mod scan;
mod strip;
#[cfg(test)]
mod tests;
mod walk;

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;
use std::panic::{AssertUnwindSafe, catch_unwind};

use limits::cut;
pub use limits::{CheckLimits, MAX_DEPTH, MAX_MESSAGE_CHARS, MAX_PROBLEMS, MAX_STEPS, Unchecked};

/// One way the arguments do not fit the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where in the arguments: a JSON pointer (`""` is the arguments object itself).
    pub path: String,
    /// What is wrong, bounded in size.
    pub message: String,
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
