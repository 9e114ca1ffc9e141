//! The estimate of a validation over the (schema, args) pair: every applicator a validator
//! would run, `$ref` followed, one step per schema node visited and one per `enum` entry
//! compared (§6). An upper bound: `anyOf` counts every branch, `additionalProperties`
//! every member. It stops as soon as the budget is spent, so it costs at most the budget.
//!
//! Regex keywords are not walked: the check runs without them (`strip`).

use super::scan::Scanned;
use super::{CheckLimits, Unchecked};
use serde_json::{Map, Value};

/// Walks `schema` over `args` within `budget` steps and `max_depth` levels (a `$ref`
/// followed counts as a level, so a self-referring schema cannot loop). Returns the steps.
pub(super) fn walk(
    schema: &Value,
    args: &Value,
    scanned: &Scanned<'_>,
    limits: &CheckLimits,
    budget: usize,
) -> Result<usize, Unchecked> {
    let mut w = Walker {
        scanned,
        limits,
        budget,
        steps: 0,
    };
    w.visit(schema, args, 1)?;
    Ok(w.steps)
}

struct Walker<'s, 'a> {
    scanned: &'s Scanned<'a>,
    limits: &'s CheckLimits,
    /// What the scan left of the step limit.
    budget: usize,
    steps: usize,
}

/// A stand-in for a property name when walking `propertyNames` (only its type matters to
/// the estimate).
static NAME: Value = Value::String(String::new());

impl<'a> Walker<'_, 'a> {
    fn charge(&mut self, n: usize) -> Result<(), Unchecked> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.budget {
            return Err(Unchecked::TooManySteps {
                limit: self.limits.max_steps,
            });
        }
        Ok(())
    }

    fn visit(&mut self, schema: &Value, inst: &Value, level: usize) -> Result<(), Unchecked> {
        if level > self.limits.max_depth {
            return Err(Unchecked::TooDeep {
                limit: self.limits.max_depth,
            });
        }
        self.charge(1)?;
        let Value::Object(obj) = schema else {
            return Ok(());
        };
        if let Some(r) = obj.get("$ref") {
            let target = self.resolve(r)?;
            self.visit(target, inst, level + 1)?;
        }
        for k in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = obj.get(k) {
                for b in branches {
                    self.visit(b, inst, level + 1)?;
                }
            }
        }
        for k in ["not", "if", "then", "else"] {
            if let Some(sub) = obj.get(k) {
                self.visit(sub, inst, level + 1)?;
            }
        }
        if let Some(Value::Array(e)) = obj.get("enum") {
            self.charge(e.len())?;
        }
        if let Some(Value::Array(r)) = obj.get("required") {
            self.charge(r.len())?;
        }
        if let Value::Object(m) = inst {
            for k in ["dependentSchemas", "dependencies"] {
                if let Some(Value::Object(deps)) = obj.get(k) {
                    self.charge(deps.len())?;
                    for (name, sub) in deps {
                        if m.contains_key(name) && !sub.is_array() {
                            self.visit(sub, inst, level + 1)?;
                        }
                    }
                }
            }
        }
        match inst {
            Value::Object(m) => self.object(obj, m, level)?,
            Value::Array(a) => self.array(obj, a, level)?,
            _ => {}
        }
        Ok(())
    }

    fn object(
        &mut self,
        obj: &Map<String, Value>,
        m: &Map<String, Value>,
        level: usize,
    ) -> Result<(), Unchecked> {
        if let Some(Value::Object(props)) = obj.get("properties") {
            self.charge(props.len())?;
            for (name, sub) in props {
                if let Some(v) = m.get(name) {
                    self.visit(sub, v, level + 1)?;
                }
            }
        }
        for k in ["additionalProperties", "unevaluatedProperties"] {
            if let Some(sub) = obj.get(k) {
                self.charge(m.len())?;
                for v in m.values() {
                    self.visit(sub, v, level + 1)?;
                }
            }
        }
        if let Some(sub) = obj.get("propertyNames") {
            self.charge(m.len())?;
            for _ in m.keys() {
                self.visit(sub, &NAME, level + 1)?;
            }
        }
        Ok(())
    }

    fn array(
        &mut self,
        obj: &Map<String, Value>,
        a: &[Value],
        level: usize,
    ) -> Result<(), Unchecked> {
        let mut tuple = 0;
        for k in ["prefixItems", "items"] {
            if let Some(Value::Array(subs)) = obj.get(k) {
                for (sub, v) in subs.iter().zip(a) {
                    self.visit(sub, v, level + 1)?;
                }
                tuple = tuple.max(subs.len());
            }
        }
        let rest = a.get(tuple..).unwrap_or(&[]);
        if let Some(sub) = obj.get("items").filter(|s| !s.is_array()) {
            self.charge(rest.len())?;
            for v in rest {
                self.visit(sub, v, level + 1)?;
            }
        }
        for k in ["additionalItems", "unevaluatedItems", "contains"] {
            if let Some(sub) = obj.get(k) {
                self.charge(a.len())?;
                for v in a {
                    self.visit(sub, v, level + 1)?;
                }
            }
        }
        if obj.get("uniqueItems") == Some(&Value::Bool(true)) {
            self.charge(a.len())?;
        }
        Ok(())
    }

    /// Resolves a `$ref` (see [`Scanned::resolve`]).
    fn resolve(&self, r: &Value) -> Result<&'a Value, Unchecked> {
        self.scanned.resolve(r)
    }
}
