//! Matching a value against a compiled pattern: the first mismatch, or
//! every one up to a bound, each with the path in the value and the place
//! of the pattern node.

use serde_json::Value;

use super::compile::describe;
use super::{AltVerdict, Entry, LenBound, Node, ObjectPattern, Op, Operator, Pattern};
use crate::json::{json_eq, scalar_eq};
use crate::scenario::interpolate::ValueTemplate;
use crate::scenario::source::Place;

/// What a successful match chose along the way.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Matched {
    /// `$label`s of the `$one_of` alternatives that matched, with their paths.
    pub labels: Vec<(String, String)>,
    /// Non-pass verdicts of matched alternatives, with their notes.
    pub verdicts: Vec<(AltVerdict, String)>,
}

/// The first place where a value departs from its pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// A readable path in the answer, e.g. `result.tools[3].name`.
    pub path: String,
    pub message: String,
    /// The pattern node that did not match: its id and line:col.
    pub place: Place,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at {}: {}", self.path, self.message)
        }
    }
}

impl Pattern {
    /// Matches `value` (None = absent). A pattern with `${…}` must be
    /// resolved first; an unresolved one never matches.
    pub fn matches(&self, value: Option<&Value>) -> Result<Matched, Mismatch> {
        let mut matched = Matched::default();
        self.match_at(value, "", &mut matched)?;
        Ok(matched)
    }

    /// Every place (at most `limit`) where `value` departs from the pattern,
    /// the first one being the mismatch [`Pattern::matches`] reports. Plain
    /// objects and arrays, and `$each` alone, go on past their first bad key
    /// or item, so a report can list the other paths too; an operator that
    /// fails counts once.
    pub fn mismatches(&self, value: Option<&Value>, limit: usize) -> Vec<Mismatch> {
        let mut found = Vec::new();
        self.collect_mismatches(value, "", limit, &mut found);
        found
    }

    fn fail<T>(&self, path: &str, message: impl Into<String>) -> Result<T, Mismatch> {
        Err(Mismatch {
            path: path.to_string(),
            message: message.into(),
            place: self.place.clone(),
        })
    }

    fn collect_mismatches(
        &self,
        value: Option<&Value>,
        path: &str,
        limit: usize,
        found: &mut Vec<Mismatch>,
    ) {
        if found.len() >= limit {
            return;
        }
        match (&self.node, value) {
            (Node::Object(o), Some(Value::Object(obj))) if !o.has_ops() => {
                for (key, sub) in o.fields() {
                    sub.collect_mismatches(obj.get(key), &child_key(path, key), limit, found);
                }
            }
            (Node::Array(items), Some(Value::Array(arr))) if items.len() == arr.len() => {
                for (i, (p, v)) in items.iter().zip(arr).enumerate() {
                    p.collect_mismatches(Some(v), &format!("{path}[{i}]"), limit, found);
                }
            }
            (Node::Object(o), Some(Value::Array(arr))) if o.only_each().is_some() => {
                if let Some(each) = o.only_each() {
                    for (i, v) in arr.iter().enumerate() {
                        each.collect_mismatches(Some(v), &format!("{path}[{i}]"), limit, found);
                    }
                }
            }
            _ => {
                if let Err(e) = self.match_at(value, path, &mut Matched::default()) {
                    found.push(e);
                }
            }
        }
    }

    fn match_at(&self, value: Option<&Value>, path: &str, m: &mut Matched) -> Result<(), Mismatch> {
        match &self.node {
            Node::Object(o) if o.has_ops() => self.match_operators(o, value, path, m),
            Node::Object(o) => self.match_object(o, false, value, path, m),
            Node::Array(items) => self.match_array(items, value, path, m),
            Node::Template(t) => self.fail(
                path,
                format!("internal error: {:?} was not filled in", t.source()),
            ),
            Node::Literal(scalar) => match value {
                Some(v) if scalar_eq(scalar, v) => Ok(()),
                Some(v) => self.fail(
                    path,
                    format!("expected {}, found {}", describe(scalar), describe(v)),
                ),
                None => self.fail(
                    path,
                    format!("expected {}, but the key is absent", describe(scalar)),
                ),
            },
        }
    }

    fn match_object(
        &self,
        o: &ObjectPattern,
        exact: bool,
        value: Option<&Value>,
        path: &str,
        m: &mut Matched,
    ) -> Result<(), Mismatch> {
        let Some(Value::Object(obj)) = value else {
            return match value {
                Some(v) => self.fail(path, format!("expected an object, found {}", describe(v))),
                None => self.fail(path, "expected an object, but the key is absent"),
            };
        };
        for (key, sub) in o.fields() {
            sub.match_at(obj.get(key), &child_key(path, key), m)?;
        }
        if exact {
            if let Some(extra) = obj
                .keys()
                .find(|k| !o.fields().any(|(f, _)| f == k.as_str()))
            {
                return self.fail(
                    &child_key(path, extra),
                    "unexpected key ($exact: true allows only the listed keys)",
                );
            }
        }
        Ok(())
    }

    fn match_array(
        &self,
        items: &[Pattern],
        value: Option<&Value>,
        path: &str,
        m: &mut Matched,
    ) -> Result<(), Mismatch> {
        let Some(Value::Array(arr)) = value else {
            return self.fail(
                path,
                format!(
                    "expected an array, found {}",
                    value.map_or("nothing".into(), describe)
                ),
            );
        };
        if arr.len() != items.len() {
            return self.fail(
                path,
                format!("expected {} items, found {}", items.len(), arr.len()),
            );
        }
        for (i, (p, v)) in items.iter().zip(arr).enumerate() {
            p.match_at(Some(v), &format!("{path}[{i}]"), m)?;
        }
        Ok(())
    }

    fn match_operators(
        &self,
        o: &ObjectPattern,
        value: Option<&Value>,
        path: &str,
        m: &mut Matched,
    ) -> Result<(), Mismatch> {
        if o.op(Operator::Absent).is_some() {
            return match value {
                None => Ok(()),
                Some(v) => self.fail(
                    path,
                    format!("expected the key to be absent, found {}", describe(v)),
                ),
            };
        }
        if let Some(Op::OneOf(alts)) = o.op(Operator::OneOf) {
            self.match_one_of(alts, value, path, m)?;
        }
        if let Some(Op::Not(inner)) = o.op(Operator::Not) {
            if inner.matches(value).is_ok() {
                return self.fail(
                    path,
                    format!("expected not to match {}", describe(inner.to_value())),
                );
            }
        }
        let has_fields = o.has_fields();
        let Some(v) = value else {
            let needs_value = o.entries.iter().any(
                |e| matches!(e, Entry::Op(n, _) if !matches!(n, Operator::Not | Operator::OneOf)),
            );
            if needs_value || has_fields {
                return self.fail(path, "expected a value, but the key is absent");
            }
            return Ok(());
        };
        for entry in &o.entries {
            if let Entry::Op(_, op) = entry {
                self.apply(op, v, path, m)?;
            }
        }
        if has_fields || o.exact {
            self.match_object(o, o.exact, Some(v), path, m)?;
        }
        Ok(())
    }

    fn match_one_of(
        &self,
        alts: &[Pattern],
        value: Option<&Value>,
        path: &str,
        m: &mut Matched,
    ) -> Result<(), Mismatch> {
        let mut reasons = Vec::new();
        for (i, alt) in alts.iter().enumerate() {
            let mut inner = Matched::default();
            let modifiers = match &alt.node {
                Node::Object(o) => Some(o.as_ref()),
                _ => None,
            };
            let label = modifiers
                .and_then(|o| o.label.as_ref())
                .map(|t| t.source().to_string());
            match alt.match_at(value, path, &mut inner) {
                Ok(()) => {
                    m.labels.extend(inner.labels);
                    m.verdicts.extend(inner.verdicts);
                    if let Some(label) = &label {
                        m.labels.push((path.to_string(), label.clone()));
                    }
                    if let Some(verdict) = modifiers
                        .and_then(|o| o.verdict)
                        .filter(|v| *v != AltVerdict::Pass)
                    {
                        let note = modifiers
                            .and_then(|o| o.note.as_ref())
                            .map(|t| t.source().to_string())
                            .unwrap_or_else(|| {
                                format!(
                                    "accepted alternative '{}'",
                                    label.as_deref().unwrap_or("unnamed")
                                )
                            });
                        m.verdicts.push((verdict, note));
                    }
                    return Ok(());
                }
                Err(e) => {
                    let name = label.unwrap_or_else(|| format!("#{}", i + 1));
                    reasons.push(format!("{name}: {e}"));
                }
            }
        }
        self.fail(
            path,
            format!(
                "matched none of the accepted outcomes ({})",
                reasons.join("; ")
            ),
        )
    }

    fn apply(&self, op: &Op, v: &Value, path: &str, m: &mut Matched) -> Result<(), Mismatch> {
        match op {
            Op::Type(types) => {
                if types.iter().any(|t| t.holds(v)) {
                    Ok(())
                } else {
                    let names: Vec<&str> = types.iter().map(|t| t.name()).collect();
                    self.fail(
                        path,
                        format!(
                            "expected type {}, found {}",
                            names.join(" or "),
                            crate::jsonrpc::type_name(v)
                        ),
                    )
                }
            }
            Op::Regex(re) => match v.as_str() {
                Some(s) if re.is_match(s) => Ok(()),
                Some(s) => self.fail(
                    path,
                    format!(
                        "{} does not match /{}/",
                        describe(&Value::String(s.into())),
                        re.as_str()
                    ),
                ),
                None => self.fail(
                    path,
                    format!("$regex needs a string, found {}", describe(v)),
                ),
            },
            Op::Contains(operand) => self.match_contains(operand, v, path),
            Op::Each(operand) => self.match_each(operand, v, path, m),
            Op::Unordered(patterns) => self.match_unordered(patterns, v, path),
            Op::Len(bound, n) => self.check_len(*bound, *n, v, path),
            Op::Bound(gte, bound) => self.check_bound(*gte, *bound, v, path),
            Op::Eq(expected) => {
                let expected = match expected {
                    ValueTemplate::Literal(e) => e,
                    _ => return self.fail(path, "internal error: $eq was not filled in"),
                };
                if json_eq(expected, v) {
                    Ok(())
                } else {
                    self.fail(
                        path,
                        format!(
                            "expected exactly {}, found {}",
                            describe(expected),
                            describe(v)
                        ),
                    )
                }
            }
            Op::Deferred(t) => self.fail(
                path,
                format!("internal error: {:?} was not filled in", t.source()),
            ),
            Op::Invalid(why) => self.fail(path, why.clone()),
            Op::Absent | Op::Present | Op::OneOf(_) | Op::Not(_) => Ok(()),
        }
    }

    fn match_contains(&self, operand: &Pattern, v: &Value, path: &str) -> Result<(), Mismatch> {
        let text = match &operand.node {
            Node::Literal(Value::String(s)) => Some(s.as_str()),
            _ => None,
        };
        match v {
            Value::String(s) => match text {
                Some(needle) if s.contains(needle) => Ok(()),
                Some(needle) => self.fail(path, format!("expected the text to contain {needle:?}")),
                None => self.fail(path, "$contains on a string needs a string operand"),
            },
            Value::Array(items) => {
                if items.iter().any(|item| operand.matches(Some(item)).is_ok()) {
                    Ok(())
                } else {
                    self.fail(
                        path,
                        format!(
                            "no item of the {}-item array matches {}",
                            items.len(),
                            describe(operand.to_value())
                        ),
                    )
                }
            }
            Value::Object(obj) => match text {
                Some(key) if obj.contains_key(key) => Ok(()),
                _ => self.fail(
                    path,
                    format!(
                        "expected the object to contain key {}",
                        describe(operand.to_value())
                    ),
                ),
            },
            other => self.fail(
                path,
                format!(
                    "$contains needs a string, array or object, found {}",
                    describe(other)
                ),
            ),
        }
    }

    fn match_each(
        &self,
        operand: &Pattern,
        v: &Value,
        path: &str,
        m: &mut Matched,
    ) -> Result<(), Mismatch> {
        match v {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    operand.match_at(Some(item), &format!("{path}[{i}]"), m)?;
                }
                Ok(())
            }
            Value::Object(obj) => {
                for (k, item) in obj {
                    operand.match_at(Some(item), &child_key(path, k), m)?;
                }
                Ok(())
            }
            other => self.fail(
                path,
                format!("$each needs an array or object, found {}", describe(other)),
            ),
        }
    }

    /// Every pattern must match a distinct item, and no item may be left over.
    fn match_unordered(&self, patterns: &[Pattern], v: &Value, path: &str) -> Result<(), Mismatch> {
        let Value::Array(items) = v else {
            return self.fail(
                path,
                format!("$unordered needs an array, found {}", describe(v)),
            );
        };
        if items.len() != patterns.len() {
            return self.fail(
                path,
                format!(
                    "expected {} items in any order, found {}",
                    patterns.len(),
                    items.len()
                ),
            );
        }
        let fits: Vec<Vec<bool>> = patterns
            .iter()
            .map(|p| {
                items
                    .iter()
                    .map(|item| p.matches(Some(item)).is_ok())
                    .collect()
            })
            .collect();
        let mut owner: Vec<Option<usize>> = vec![None; items.len()];
        for (p, pattern) in patterns.iter().enumerate() {
            let mut seen = vec![false; items.len()];
            if !augment(p, &fits, &mut owner, &mut seen) {
                return pattern.fail(
                    path,
                    format!(
                        "no distinct item matches {} (patterns matched in any order)",
                        describe(pattern.to_value())
                    ),
                );
            }
        }
        Ok(())
    }

    fn check_len(&self, bound: LenBound, n: u64, v: &Value, path: &str) -> Result<(), Mismatch> {
        let op = match bound {
            LenBound::Exactly => Operator::Len,
            LenBound::AtLeast => Operator::MinLen,
            LenBound::AtMost => Operator::MaxLen,
        }
        .name();
        let len = match v {
            Value::Array(a) => a.len(),
            Value::String(s) => s.chars().count(),
            Value::Object(o) => o.len(),
            other => {
                return self.fail(
                    path,
                    format!(
                        "{op} needs an array, string or object, found {}",
                        describe(other)
                    ),
                )
            }
        } as u64;
        let (ok, relation) = match bound {
            LenBound::Exactly => (len == n, "exactly"),
            LenBound::AtLeast => (len >= n, "at least"),
            LenBound::AtMost => (len <= n, "at most"),
        };
        if ok {
            Ok(())
        } else {
            self.fail(path, format!("expected length {relation} {n}, found {len}"))
        }
    }

    fn check_bound(&self, gte: bool, bound: f64, v: &Value, path: &str) -> Result<(), Mismatch> {
        let op = if gte { Operator::Gte } else { Operator::Lte }.name();
        let Some(x) = v.as_f64() else {
            return self.fail(path, format!("{op} needs a number, found {}", describe(v)));
        };
        let ok = if gte { x >= bound } else { x <= bound };
        if ok {
            Ok(())
        } else {
            let relation = if gte { ">=" } else { "<=" };
            self.fail(
                path,
                format!("expected a number {relation} {bound}, found {x}"),
            )
        }
    }
}

/// Kuhn's augmenting path: finds an item for pattern `p`, moving earlier choices if needed.
fn augment(p: usize, fits: &[Vec<bool>], owner: &mut [Option<usize>], seen: &mut [bool]) -> bool {
    for item in 0..owner.len() {
        if fits[p][item] && !seen[item] {
            seen[item] = true;
            if owner[item].is_none_or(|q| augment(q, fits, owner, seen)) {
                owner[item] = Some(p);
                return true;
            }
        }
    }
    false
}

fn child_key(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}
