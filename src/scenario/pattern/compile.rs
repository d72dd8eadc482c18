//! Compiling a pattern as written: operators to [`Op`]s, regular
//! expressions compiled, `${…}` strings to templates, every problem
//! collected with its place.

use regex::Regex;
use serde_json::{Map, Value};

use super::{
    AltVerdict, Entry, JsonType, Key, LenBound, Node, ObjectPattern, Op, Operand, Operator,
    Pattern, PatternError, Role,
};
use crate::expr::{Bindings, Programs};
use crate::scenario::interpolate::{Template, ValueTemplate};
use crate::scenario::source::{escape_pointer, Place};

pub(super) struct Compiler<'a> {
    pub(super) locate: &'a dyn Fn(&str) -> Place,
    pub(super) errors: Vec<PatternError>,
    /// Compiling a filled-in value: its strings are data, never templates.
    pub(super) runtime: bool,
    /// Where the expressions of `${…}` are compiled.
    pub(super) programs: &'a mut Programs,
}

impl Compiler<'_> {
    fn error(&mut self, pointer: &str, message: impl Into<String>) {
        self.errors.push(PatternError {
            pointer: pointer.to_string(),
            message: message.into(),
        });
    }

    pub(super) fn node(&mut self, value: &Value, ptr: &str, in_alternative: bool) -> Pattern {
        let place = (self.locate)(ptr);
        let (node, dynamic) = match value {
            Value::String(s) if !self.runtime && s.contains("${") => {
                match Template::compile_in(self.programs, s) {
                    Ok(t) if t.is_literal() => {
                        let text = t.render_text(&Bindings::default()).unwrap_or_default();
                        (Node::Literal(Value::String(text)), false)
                    }
                    Ok(t) => (Node::Template(t), true),
                    Err(e) => {
                        self.error(ptr, e.to_string());
                        (Node::Literal(value.clone()), false)
                    }
                }
            }
            Value::Array(items) => {
                let items: Vec<Pattern> = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.node(item, &format!("{ptr}/{i}"), false))
                    .collect();
                let dynamic = items.iter().any(|p| p.dynamic);
                (Node::Array(items), dynamic)
            }
            Value::Object(map) => {
                let (o, dynamic) = self.object(map, ptr, in_alternative);
                (Node::Object(Box::new(o)), dynamic)
            }
            scalar => (Node::Literal(scalar.clone()), false),
        };
        // A part without holes shows as it reads: `$${` written for `${`.
        let source = if dynamic || self.runtime {
            value.clone()
        } else {
            unescape(value)
        };
        Pattern {
            node,
            place,
            source,
            dynamic,
        }
    }

    fn object(
        &mut self,
        map: &Map<String, Value>,
        ptr: &str,
        in_alt: bool,
    ) -> (ObjectPattern, bool) {
        let mut o = ObjectPattern::default();
        let mut dynamic = false;
        for (key, operand) in map {
            let at = format!("{ptr}/{}", escape_pointer(key));
            if key.starts_with('$') {
                dynamic |= self.dollar_key(key, operand, &at, in_alt, &mut o);
            } else {
                let key = if !self.runtime && key.contains("${") {
                    let t = self.template(key, &at);
                    dynamic |= !t.is_literal();
                    Key::Template(t)
                } else {
                    Key::Fixed(key.clone())
                };
                let p = self.node(operand, &at, false);
                dynamic |= p.dynamic;
                o.entries.push(Entry::Field(key, p));
            }
        }
        (o, dynamic)
    }

    /// One `$`-key of an object pattern, recorded in `o`; whether it is
    /// filled in at run time.
    fn dollar_key(
        &mut self,
        key: &str,
        operand: &Value,
        at: &str,
        in_alt: bool,
        o: &mut ObjectPattern,
    ) -> bool {
        let Some(operator) = Operator::from_name(key) else {
            self.error(at, unknown_operator(key));
            return false;
        };
        match operator.role() {
            Role::Alternative if !in_alt => {
                self.error(
                    at,
                    format!("{key} is only allowed directly inside a $one_of alternative"),
                );
                false
            }
            Role::Test => match self.operator(operator, operand, at) {
                Some(op) => {
                    let dynamic = op_is_dynamic(&op);
                    o.entries.push(Entry::Op(operator, op));
                    dynamic
                }
                None => false,
            },
            Role::Object | Role::Alternative => self.modifier(operator, operand, at, o),
        }
    }

    /// `$exact`, `$label`, `$verdict` or `$note`, recorded in `o`; whether
    /// it is filled in at run time.
    fn modifier(
        &mut self,
        operator: Operator,
        operand: &Value,
        at: &str,
        o: &mut ObjectPattern,
    ) -> bool {
        let verdict = match operand.as_str() {
            Some("pass") => Some(AltVerdict::Pass),
            Some("warn") => Some(AltVerdict::Warn),
            Some("info") => Some(AltVerdict::Info),
            _ => None,
        };
        let fits = match operator.operand() {
            Operand::True => operand == &Value::Bool(true),
            Operand::Text => operand.is_string(),
            Operand::Verdict => verdict.is_some(),
            _ => false,
        };
        if !self.check(operator, operand, at, fits) {
            return false;
        }
        let mut text = || self.template(operand.as_str().unwrap_or_default(), at);
        let template = match operator {
            Operator::Exact => {
                o.exact = true;
                return false;
            }
            Operator::Verdict => {
                o.verdict = verdict;
                return false;
            }
            Operator::Label => o.label.insert(text()),
            _ => o.note.insert(text()),
        };
        !template.is_literal()
    }

    /// A compiled template; one without holes holds its text with `$${`
    /// written as `${`.
    fn template(&mut self, text: &str, at: &str) -> Template {
        if self.runtime {
            return Template::literal(text);
        }
        match Template::compile_in(self.programs, text) {
            Ok(t) if t.is_literal() => {
                Template::literal(&t.render_text(&Bindings::default()).unwrap_or_default())
            }
            Ok(t) => t,
            Err(e) => {
                self.error(at, e.to_string());
                Template::literal(text)
            }
        }
    }

    /// Records `$key takes {what}` unless `ok`; gives `ok`.
    fn check(&mut self, operator: Operator, operand: &Value, at: &str, ok: bool) -> bool {
        if !ok {
            self.error(
                at,
                format!(
                    "{} takes {}, found {}",
                    operator.name(),
                    operator.operand().what(),
                    describe(operand)
                ),
            );
        }
        ok
    }

    /// The typed operator, or None after recording why the operand does not fit.
    pub(super) fn operator(&mut self, operator: Operator, operand: &Value, at: &str) -> Option<Op> {
        if !self.runtime && operator.defers() {
            if let Some(text) = operand.as_str().filter(|t| t.contains("${")) {
                let t = self.template(text, at);
                return Some(Op::Deferred(t));
            }
        }
        let fits = |c: &mut Self, ok: bool| c.check(operator, operand, at, ok);
        match operator {
            Operator::Type => self.type_names(operand, at),
            Operator::Absent => fits(self, operand == &Value::Bool(true)).then_some(Op::Absent),
            Operator::Present => fits(self, operand == &Value::Bool(true)).then_some(Op::Present),
            Operator::Regex => match operand {
                Value::String(re) => self.regex(re, at),
                _ => {
                    fits(self, false);
                    None
                }
            },
            Operator::Len | Operator::MinLen | Operator::MaxLen => {
                let n = operand.as_u64();
                fits(self, n.is_some()).then(|| {
                    let bound = match operator {
                        Operator::Len => LenBound::Exactly,
                        Operator::MinLen => LenBound::AtLeast,
                        _ => LenBound::AtMost,
                    };
                    Op::Len(bound, n.unwrap_or(0))
                })
            }
            Operator::Gte | Operator::Lte => {
                let n = operand.as_f64().filter(|_| operand.is_number());
                fits(self, n.is_some())
                    .then(|| Op::Bound(operator == Operator::Gte, n.unwrap_or(0.0)))
            }
            Operator::OneOf => match operand {
                Value::Array(alts) if !alts.is_empty() => {
                    Some(Op::OneOf(self.items(alts, at, true)))
                }
                _ => {
                    fits(self, false);
                    None
                }
            },
            Operator::Unordered => match operand {
                Value::Array(items) => Some(Op::Unordered(self.items(items, at, false))),
                _ => {
                    fits(self, false);
                    None
                }
            },
            Operator::Contains => Some(Op::Contains(Box::new(self.node(operand, at, false)))),
            Operator::Each => Some(Op::Each(Box::new(self.node(operand, at, false)))),
            Operator::Not => Some(Op::Not(Box::new(self.node(operand, at, false)))),
            Operator::Eq => {
                if self.runtime {
                    return Some(Op::Eq(ValueTemplate::Literal(operand.clone())));
                }
                match ValueTemplate::compile_in(self.programs, operand) {
                    Ok(t) => Some(Op::Eq(t)),
                    Err(e) => {
                        self.error(at, e.to_string());
                        None
                    }
                }
            }
            // Modifiers are read by `modifier`, never as a test of a value.
            Operator::Exact | Operator::Label | Operator::Verdict | Operator::Note => None,
        }
    }

    /// The patterns of a list operand (`$one_of`, `$unordered`).
    fn items(&mut self, items: &[Value], at: &str, alternatives: bool) -> Vec<Pattern> {
        items
            .iter()
            .enumerate()
            .map(|(i, item)| self.node(item, &format!("{at}/{i}"), alternatives))
            .collect()
    }

    /// `$type`: one type name or a non-empty list of them.
    fn type_names(&mut self, operand: &Value, at: &str) -> Option<Op> {
        let names: Vec<&Value> = match operand {
            Value::String(_) => vec![operand],
            Value::Array(ts) if !ts.is_empty() => ts.iter().collect(),
            _ => {
                self.check(Operator::Type, operand, at, false);
                return None;
            }
        };
        let mut types = Vec::new();
        for name in names {
            let parsed = match name {
                Value::String(t) => JsonType::parse(t),
                other => Err(format!(
                    "$type list entries must be type names, found {}",
                    describe(other)
                )),
            };
            match parsed {
                Ok(t) => types.push(t),
                Err(message) => {
                    self.error(at, message);
                    return None;
                }
            }
        }
        Some(Op::Type(types))
    }

    /// `$regex`, compiled now so that a bad one is a load error.
    fn regex(&mut self, re: &str, at: &str) -> Option<Op> {
        match Regex::new(re) {
            Ok(re) => Some(Op::Regex(re)),
            Err(e) => {
                let text = e.to_string();
                let reason = text
                    .lines()
                    .last()
                    .unwrap_or(&text)
                    .trim_start_matches("error: ")
                    .to_string();
                self.error(at, format!("$regex {re:?} does not compile: {reason}"));
                None
            }
        }
    }
}

/// `value` with every `$${` written as `${` (a part without holes).
fn unescape(value: &Value) -> Value {
    match value {
        Value::String(s) if s.contains("$${") => Value::String(s.replace("$${", "${")),
        Value::Array(items) => Value::Array(items.iter().map(unescape).collect()),
        Value::Object(map) if value.to_string().contains("$${") => Value::Object(
            map.iter()
                .map(|(k, v)| (k.replace("$${", "${"), unescape(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn op_is_dynamic(op: &Op) -> bool {
    match op {
        Op::Deferred(_) => true,
        Op::Eq(t) => !t.is_literal(),
        Op::Contains(p) | Op::Each(p) | Op::Not(p) => p.dynamic,
        Op::OneOf(ps) | Op::Unordered(ps) => ps.iter().any(|p| p.dynamic),
        _ => false,
    }
}

fn unknown_operator(key: &str) -> String {
    let known: Vec<&str> = Operator::ALL.iter().map(|op| op.name()).collect();
    let suggestion = known
        .iter()
        .min_by_key(|k| strsim::levenshtein(k, key))
        .filter(|k| strsim::levenshtein(k, key) <= 3)
        .map(|k| format!("; did you mean {k}?"))
        .unwrap_or_default();
    format!(
        "unknown operator {key}{suggestion} (known: {})",
        known.join(", ")
    )
}

/// A value as JSON for a message, cut at 40 characters.
pub(crate) fn describe(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 40 {
        format!("{}…", &text[..text.floor_char_boundary(40)])
    } else {
        text
    }
}
