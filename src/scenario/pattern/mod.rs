//! The JSON pattern language of `expect`: objects match as subsets, arrays in
//! order and length, scalars by value, and `$`-operators say otherwise.
//!
//! A pattern is compiled once, when its scenario is loaded: operators become
//! [`Op`]s, regular expressions are compiled, `${…}` strings become compiled
//! templates, and every node knows its place in the file, so a mismatch
//! points at the line of the pattern leaf that failed. At run time only the
//! parts written with `${…}` are filled in ([`Pattern::resolve`]).

use std::borrow::Cow;

use regex::Regex;
use serde_json::{Map, Value};

use super::interpolate::{InterpolateError, Template, ValueTemplate};
use super::source::Place;
use crate::expr::{Bindings, Programs};
pub use crate::json::json_eq;
use crate::json::ReadTree;

mod answer_kind;
mod compile;
mod matching;

pub use answer_kind::kind_mismatch;
pub(crate) use compile::describe;
use compile::Compiler;
pub use matching::{Matched, Mismatch};

/// Declares [`Operator`] from one table: each row gives the variant, the
/// key as written, what its operand is ([`Operand`]), whether that operand
/// may be one `${…}` filled in at run time, and what the key does
/// ([`Role`]). Every list of operators (the lookup by name, the "known"
/// list of an error, the deferrable ones) is read from this table.
macro_rules! operators {
    ($($(#[$doc:meta])* $variant:ident = $name:literal, $operand:ident, defers: $defers:literal, $role:ident;)*) => {
        /// A `$`-key of a pattern.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Operator {
            $($(#[$doc])* $variant,)*
        }

        impl Operator {
            /// Every operator, in the order of the table.
            pub const ALL: &'static [Operator] = &[$(Operator::$variant),*];

            /// The key as written, e.g. `$min_len`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Operator::$variant => $name,)*
                }
            }

            /// What the operand is.
            pub fn operand(self) -> Operand {
                match self {
                    $(Operator::$variant => Operand::$operand,)*
                }
            }

            /// Whether the operand may be written as one `${…}`, typed once
            /// it is filled in.
            pub fn defers(self) -> bool {
                match self {
                    $(Operator::$variant => $defers,)*
                }
            }

            /// What the key does.
            pub fn role(self) -> Role {
                match self {
                    $(Operator::$variant => Role::$role,)*
                }
            }
        }
    };
}

operators! {
    /// The value's JSON type is one of those named.
    Type = "$type", TypeNames, defers: true, Test;
    /// The key is not there.
    Absent = "$absent", True, defers: false, Test;
    /// The key is there, with any value.
    Present = "$present", True, defers: false, Test;
    /// The string matches the regular expression.
    Regex = "$regex", Regex, defers: true, Test;
    /// An array item matches; a string contains; an object has the key.
    Contains = "$contains", Pattern, defers: false, Test;
    /// The same items in any order.
    Unordered = "$unordered", Patterns, defers: true, Test;
    /// Every item (or object value) matches.
    Each = "$each", Pattern, defers: false, Test;
    /// The length of an array, string or object is exactly n.
    Len = "$len", Count, defers: true, Test;
    /// … at least n.
    MinLen = "$min_len", Count, defers: true, Test;
    /// … at most n.
    MaxLen = "$max_len", Count, defers: true, Test;
    /// A number at least this.
    Gte = "$gte", Number, defers: true, Test;
    /// A number at most this.
    Lte = "$lte", Number, defers: true, Test;
    /// One of several acceptable outcomes matches.
    OneOf = "$one_of", Alternatives, defers: true, Test;
    /// The pattern does not match.
    Not = "$not", Pattern, defers: false, Test;
    /// Equal to the operand taken literally (no operators inside).
    Eq = "$eq", Literal, defers: false, Test;
    /// No keys beyond those listed.
    Exact = "$exact", True, defers: false, Object;
    /// The name a report gives the `$one_of` alternative that matched.
    Label = "$label", Text, defers: false, Alternative;
    /// What an accepted alternative makes of the verdict.
    Verdict = "$verdict", Verdict, defers: false, Alternative;
    /// The text of that warning or note.
    Note = "$note", Text, defers: false, Alternative;
}

impl Operator {
    /// The operator written as `name`.
    pub fn from_name(name: &str) -> Option<Operator> {
        Operator::ALL.iter().copied().find(|op| op.name() == name)
    }
}

/// What an operator takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    /// A type name or a non-empty list of them.
    TypeNames,
    /// Only `true`.
    True,
    /// A regular expression.
    Regex,
    /// One pattern.
    Pattern,
    /// A list of patterns.
    Patterns,
    /// A non-empty list of patterns, the alternatives.
    Alternatives,
    /// A non-negative integer.
    Count,
    /// A number.
    Number,
    /// Any JSON value, taken as written.
    Literal,
    /// A string (with `${…}` holes).
    Text,
    /// `pass`, `warn` or `info`.
    Verdict,
}

impl Operand {
    /// What the operand must be, for an error message (`$len takes …`).
    pub fn what(self) -> &'static str {
        match self {
            Operand::TypeNames => "a type name or a non-empty list of type names",
            Operand::True => "true",
            Operand::Regex => "a regular expression string",
            Operand::Pattern => "a pattern",
            Operand::Patterns => "a list of patterns",
            Operand::Alternatives => "a non-empty list of patterns",
            Operand::Count => "a non-negative integer",
            Operand::Number => "a number",
            Operand::Literal => "a JSON value",
            Operand::Text => "a string",
            Operand::Verdict => "one of \"pass\", \"warn\", \"info\"",
        }
    }
}

/// What a `$`-key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Tests the value it sits on.
    Test,
    /// Changes how the object it sits in is matched.
    Object,
    /// Describes the `$one_of` alternative it sits in (only there).
    Alternative,
}

/// A JSON type name of `$type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    Null,
    Boolean,
    Number,
    Integer,
    String,
    Array,
    Object,
}

impl JsonType {
    const ALL: [(&'static str, JsonType); 7] = [
        ("null", JsonType::Null),
        ("boolean", JsonType::Boolean),
        ("number", JsonType::Number),
        ("integer", JsonType::Integer),
        ("string", JsonType::String),
        ("array", JsonType::Array),
        ("object", JsonType::Object),
    ];

    fn parse(name: &str) -> Result<JsonType, String> {
        Self::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|(n, _)| *n).collect();
                format!(
                    "unknown type name \"{name}\" (expected one of {})",
                    names.join(", ")
                )
            })
    }

    fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, t)| *t == self)
            .map_or("?", |(n, _)| n)
    }

    fn holds(self, v: &Value) -> bool {
        match self {
            JsonType::Null => v.is_null(),
            JsonType::Boolean => v.is_boolean(),
            JsonType::Number => v.is_number(),
            JsonType::Integer => v.as_i64().is_some() || v.as_u64().is_some(),
            JsonType::String => v.is_string(),
            JsonType::Array => v.is_array(),
            JsonType::Object => v.is_object(),
        }
    }
}

/// What an accepted `$one_of` alternative makes of the scenario's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AltVerdict {
    Pass,
    Warn,
    Info,
}

impl AltVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            AltVerdict::Pass => "pass",
            AltVerdict::Warn => "warn",
            AltVerdict::Info => "info",
        }
    }
}

/// Which length bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LenBound {
    Exactly,
    AtLeast,
    AtMost,
}

/// One operator with its typed operand.
#[derive(Debug, Clone)]
pub enum Op {
    Type(Vec<JsonType>),
    Absent,
    Present,
    Regex(Regex),
    Contains(Box<Pattern>),
    Unordered(Vec<Pattern>),
    Each(Box<Pattern>),
    Len(LenBound, u64),
    /// `$gte` (true) or `$lte` (false).
    Bound(bool, f64),
    OneOf(Vec<Pattern>),
    Not(Box<Pattern>),
    Eq(ValueTemplate),
    /// An operand written as one `${…}`: typed once it is filled in.
    Deferred(Template),
    /// A filled-in operand that is not what the operator takes: every
    /// value mismatches, with this reason.
    Invalid(String),
}

impl PartialEq for Op {
    fn eq(&self, other: &Op) -> bool {
        match (self, other) {
            (Op::Regex(a), Op::Regex(b)) => a.as_str() == b.as_str(),
            (Op::Type(a), Op::Type(b)) => a == b,
            (Op::Contains(a), Op::Contains(b))
            | (Op::Each(a), Op::Each(b))
            | (Op::Not(a), Op::Not(b)) => a == b,
            (Op::Unordered(a), Op::Unordered(b)) | (Op::OneOf(a), Op::OneOf(b)) => a == b,
            (Op::Len(x, a), Op::Len(y, b)) => x == y && a == b,
            (Op::Bound(x, a), Op::Bound(y, b)) => x == y && a == b,
            (Op::Eq(a), Op::Eq(b)) => a == b,
            (Op::Deferred(a), Op::Deferred(b)) => a == b,
            (Op::Invalid(a), Op::Invalid(b)) => a == b,
            (Op::Absent, Op::Absent) | (Op::Present, Op::Present) => true,
            _ => false,
        }
    }
}

/// A key of an object pattern: as written, or filled in at run time.
#[derive(Debug, Clone, PartialEq)]
pub enum Key {
    Fixed(String),
    Template(Template),
}

/// One entry of an object pattern, in the order written.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A plain key: the answer's value under it must match.
    Field(Key, Pattern),
    /// An operator that tests the value, with its typed operand.
    Op(Operator, Op),
}

/// An object pattern: its keys and operators, and the modifiers of an
/// object or of a `$one_of` alternative.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObjectPattern {
    pub entries: Vec<Entry>,
    /// `$exact: true`: no keys beyond the listed ones.
    pub exact: bool,
    pub label: Option<Template>,
    pub verdict: Option<AltVerdict>,
    pub note: Option<Template>,
}

impl ObjectPattern {
    pub fn has_ops(&self) -> bool {
        self.exact
            || self.label.is_some()
            || self.verdict.is_some()
            || self.note.is_some()
            || self.entries.iter().any(|e| matches!(e, Entry::Op(..)))
    }

    pub fn has_fields(&self) -> bool {
        self.entries.iter().any(|e| matches!(e, Entry::Field(..)))
    }

    pub fn op(&self, operator: Operator) -> Option<&Op> {
        self.entries.iter().find_map(|e| match e {
            Entry::Op(n, op) if *n == operator => Some(op),
            _ => None,
        })
    }

    /// The operand of a pattern that is `$each` and nothing else.
    fn only_each(&self) -> Option<&Pattern> {
        let plain =
            !self.exact && self.label.is_none() && self.verdict.is_none() && self.note.is_none();
        match self.entries.as_slice() {
            [Entry::Op(_, Op::Each(p))] if plain => Some(p),
            _ => None,
        }
    }

    pub fn fields(&self) -> impl Iterator<Item = (&str, &Pattern)> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Field(Key::Fixed(k), p) => Some((k.as_str(), p)),
            Entry::Field(Key::Template(t), p) => Some((t.source(), p)),
            Entry::Op(..) => None,
        })
    }
}

/// What a node of a pattern is.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A scalar, compared by value (numbers by numeric value).
    Literal(Value),
    /// A string with `${…}`: its value is a pattern once filled in.
    Template(Template),
    /// Items in order, as many as written.
    Array(Vec<Pattern>),
    Object(Box<ObjectPattern>),
}

/// A compiled pattern node: what it tests, where it is written, and the
/// JSON it was written as (for reports and diffs).
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    pub node: Node,
    pub place: Place,
    source: Value,
    /// Some part is written with `${…}` and is filled in at run time.
    dynamic: bool,
}

/// A problem in a pattern itself, found when the scenario is loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternError {
    /// JSON Pointer inside the pattern.
    pub pointer: String,
    pub message: String,
}

/// Compiles a pattern; `locate` gives the place of the node at a pointer
/// inside the pattern. Every problem is collected.
pub fn compile(
    value: &Value,
    locate: &dyn Fn(&str) -> Place,
) -> Result<Pattern, Vec<PatternError>> {
    compile_in(&mut super::helpers::programs(), value, locate)
}

/// [`compile`], with the expressions of its `${…}` compiled among `programs`.
pub fn compile_in(
    programs: &mut Programs,
    value: &Value,
    locate: &dyn Fn(&str) -> Place,
) -> Result<Pattern, Vec<PatternError>> {
    let mut c = Compiler {
        locate,
        errors: Vec::new(),
        runtime: false,
        programs,
    };
    let pattern = c.node(value, "", false);
    if c.errors.is_empty() {
        Ok(pattern)
    } else {
        Err(c.errors)
    }
}

/// Checks a pattern's operators and operands, collecting every problem.
pub fn check(pattern: &Value) -> Vec<PatternError> {
    compile(pattern, &|_| Place::default())
        .err()
        .unwrap_or_default()
}

/// See [`Pattern::read_tree`], on a pattern as written.
fn pattern_read(pattern: &Value) -> ReadTree {
    let Some(members) = pattern.as_object() else {
        // A literal or an array is compared whole.
        return ReadTree::whole();
    };
    let mut read = ReadTree::default();
    for (key, sub) in members {
        match key.as_str() {
            // Words for the report, and tests of the node's presence or type,
            // which a value cut down keeps.
            "$label" | "$note" | "$verdict" | "$type" | "$absent" | "$present" => {}
            // A list cut down keeps its length when its items are read;
            // an object read by items is kept whole (its length is its keys).
            "$len" | "$min_len" | "$max_len" => {
                read.merge(ReadTree::default().with_each_item(ReadTree::default()));
            }
            "$each" => read.merge(ReadTree::default().with_each_item(pattern_read(sub))),
            "$one_of" => match sub.as_array() {
                Some(alternatives) => alternatives
                    .iter()
                    .for_each(|a| read.merge(pattern_read(a))),
                None => return ReadTree::whole(),
            },
            // Any other operator may look at the node as a whole.
            key if key.starts_with('$') => return ReadTree::whole(),
            key => read.merge(ReadTree::default().with_field(key, pattern_read(sub))),
        }
    }
    read
}

impl Pattern {
    /// A pattern made of a value computed at run time (a filled-in `${…}`):
    /// every node takes `place`; operands that do not fit their operator
    /// make the pattern mismatch with the reason.
    pub fn from_value(value: &Value, place: &Place) -> Pattern {
        let mut c = Compiler {
            locate: &|_| place.clone(),
            errors: Vec::new(),
            runtime: true,
            programs: &mut super::helpers::programs(),
        };
        c.node(value, "", false)
    }

    /// The pattern as JSON (filled in, once resolved).
    pub fn to_value(&self) -> &Value {
        &self.source
    }

    /// What matching may look at of an answer: an answer cut down to this
    /// (see `crate::json::prune`) matches exactly when the whole one does. A
    /// pattern known only at run time, a literal, and any operator that may
    /// test a node as a whole read that node whole; `$type`, `$absent` and
    /// `$present` read only its presence and type, and a length its items'
    /// count. On a long list whose pattern asks only that it be an array, the
    /// items are then kept as far as the scenario reads them, not whole.
    pub fn read_tree(&self) -> ReadTree {
        if self.dynamic {
            return ReadTree::whole();
        }
        pattern_read(&self.source)
    }

    /// Whether a `${…}` is filled in at run time.
    pub fn is_dynamic(&self) -> bool {
        self.dynamic
    }

    /// The object pattern under `key`, if this node is an object naming it.
    pub fn field(&self, key: &str) -> Option<&Pattern> {
        match &self.node {
            Node::Object(o) => o.fields().find(|(k, _)| *k == key).map(|(_, p)| p),
            _ => None,
        }
    }

    /// The pattern with every `${…}` filled in; a pattern without any is
    /// used as it is.
    pub fn resolve(&self, bindings: &Bindings) -> Result<Cow<'_, Pattern>, InterpolateError> {
        if !self.dynamic {
            return Ok(Cow::Borrowed(self));
        }
        self.resolved(bindings).map(Cow::Owned)
    }

    fn resolved(&self, b: &Bindings) -> Result<Pattern, InterpolateError> {
        if !self.dynamic {
            return Ok(self.clone());
        }
        Ok(match &self.node {
            Node::Template(t) => Pattern::from_value(&t.render(b)?, &self.place),
            Node::Literal(_) => self.clone(),
            Node::Array(items) => {
                let items = items
                    .iter()
                    .map(|p| p.resolved(b))
                    .collect::<Result<Vec<_>, _>>()?;
                let source = Value::Array(items.iter().map(|p| p.source.clone()).collect());
                Pattern {
                    node: Node::Array(items),
                    place: self.place.clone(),
                    source,
                    dynamic: false,
                }
            }
            Node::Object(o) => self.resolved_object(o, b)?,
        })
    }

    fn resolved_object(
        &self,
        o: &ObjectPattern,
        b: &Bindings,
    ) -> Result<Pattern, InterpolateError> {
        let mut out = ObjectPattern {
            exact: o.exact,
            verdict: o.verdict,
            ..ObjectPattern::default()
        };
        let mut source = Map::new();
        if o.exact {
            source.insert(Operator::Exact.name().into(), Value::Bool(true));
        }
        if let Some(v) = o.verdict {
            source.insert(
                Operator::Verdict.name().into(),
                Value::String(v.as_str().into()),
            );
        }
        for (operator, t, slot) in [
            (Operator::Label, &o.label, &mut out.label),
            (Operator::Note, &o.note, &mut out.note),
        ] {
            if let Some(t) = t {
                let text = t.render_text(b)?;
                source.insert(operator.name().into(), Value::String(text.clone()));
                *slot = Some(Template::literal(&text));
            }
        }
        for entry in &o.entries {
            match entry {
                Entry::Field(key, p) => {
                    let key = match key {
                        Key::Fixed(k) => k.clone(),
                        Key::Template(t) => t.render_text(b)?,
                    };
                    let p = p.resolved(b)?;
                    source.insert(key.clone(), p.source.clone());
                    out.entries.push(Entry::Field(Key::Fixed(key), p));
                }
                Entry::Op(operator, op) => {
                    let (op, operand) = resolve_op(*operator, op, &self.place, b)?;
                    source.insert(operator.name().into(), operand);
                    out.entries.push(Entry::Op(*operator, op));
                }
            }
        }
        // `$absent` and friends sit in the source as written.
        for (k, v) in self.source.as_object().into_iter().flatten() {
            if !source.contains_key(k) {
                source.insert(k.clone(), v.clone());
            }
        }
        let source = reorder_like(&self.source, source);
        Ok(Pattern {
            node: Node::Object(Box::new(out)),
            place: self.place.clone(),
            source: Value::Object(source),
            dynamic: false,
        })
    }
}

/// `filled` with its keys in the order of `written` (keys filled in at run
/// time keep their place among the others).
fn reorder_like(written: &Value, mut filled: Map<String, Value>) -> Map<String, Value> {
    let Some(written) = written.as_object() else {
        return filled;
    };
    let mut out = Map::new();
    for k in written.keys() {
        if let Some(v) = filled.remove(k) {
            out.insert(k.clone(), v);
        }
    }
    out.extend(filled);
    out
}

/// An operator with its `${…}` filled in, and its operand as JSON.
fn resolve_op(
    operator: Operator,
    op: &Op,
    place: &Place,
    b: &Bindings,
) -> Result<(Op, Value), InterpolateError> {
    let boxed =
        |p: &Pattern| -> Result<Box<Pattern>, InterpolateError> { Ok(Box::new(p.resolved(b)?)) };
    let list = |ps: &[Pattern]| {
        ps.iter()
            .map(|p| p.resolved(b))
            .collect::<Result<Vec<_>, _>>()
    };
    let sources = |ps: &[Pattern]| Value::Array(ps.iter().map(|p| p.source.clone()).collect());
    Ok(match op {
        Op::Deferred(t) => {
            let operand = t.render(b)?;
            let mut c = Compiler {
                locate: &|_| place.clone(),
                errors: Vec::new(),
                runtime: true,
                programs: &mut super::helpers::programs(),
            };
            let op = c.operator(operator, &operand, "").unwrap_or_else(|| {
                Op::Invalid(
                    c.errors
                        .first()
                        .map_or_else(String::new, |e| e.message.clone()),
                )
            });
            (op, operand)
        }
        Op::Contains(p) => {
            let p = boxed(p)?;
            let v = p.source.clone();
            (Op::Contains(p), v)
        }
        Op::Each(p) => {
            let p = boxed(p)?;
            let v = p.source.clone();
            (Op::Each(p), v)
        }
        Op::Not(p) => {
            let p = boxed(p)?;
            let v = p.source.clone();
            (Op::Not(p), v)
        }
        Op::OneOf(ps) => {
            let ps = list(ps)?;
            let v = sources(&ps);
            (Op::OneOf(ps), v)
        }
        Op::Unordered(ps) => {
            let ps = list(ps)?;
            let v = sources(&ps);
            (Op::Unordered(ps), v)
        }
        Op::Eq(t) => {
            let v = t.render(b)?;
            (Op::Eq(ValueTemplate::Literal(v.clone())), v)
        }
        other => (other.clone(), Value::Null),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compiled(p: &Value) -> Pattern {
        compile(p, &|ptr| Place {
            id: Place::id_of(&format!("/expect{ptr}")),
            position: Default::default(),
        })
        .unwrap_or_else(|e| panic!("{e:?}"))
    }
    fn matches(p: &Value, v: Option<&Value>) -> Result<Matched, Mismatch> {
        compiled(p).matches(v)
    }
    fn mismatches(p: &Value, v: Option<&Value>, limit: usize) -> Vec<Mismatch> {
        compiled(p).mismatches(v, limit)
    }

    fn ok(p: Value, v: Value) -> Matched {
        matches(&p, Some(&v)).unwrap_or_else(|e| panic!("should match: {e}"))
    }
    fn bad(p: Value, v: Value) -> Mismatch {
        matches(&p, Some(&v)).expect_err("should not match")
    }

    #[test]
    fn the_scenario_schema_names_exactly_the_operators() {
        let schema: Value = serde_json::from_str(crate::scenario::load::SCENARIO_SCHEMA)
            .unwrap_or_else(|e| panic!("{e}"));
        let in_schema: Vec<&str> = schema["$defs"]["pattern"]["properties"]
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let in_table: Vec<&str> = Operator::ALL.iter().map(|op| op.name()).collect();
        assert_eq!(
            in_schema, in_table,
            "schemas/scenario.schema.json $defs.pattern"
        );
    }

    #[test]
    fn the_scenario_guide_names_every_operator() {
        let guide = include_str!("../../../scenarios/README.md");
        let section = guide
            .split("## `expect`: the JSON pattern")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .unwrap_or_default();
        for op in Operator::ALL {
            assert!(
                section.contains(&format!("`{}", op.name())),
                "scenarios/README.md does not describe {}",
                op.name()
            );
        }
        let deferred = section
            .split("\n\n")
            .find(|paragraph| paragraph.contains("one `${…}`"))
            .unwrap_or_default();
        for op in Operator::ALL {
            assert_eq!(
                deferred.contains(&format!("`{}`", op.name())),
                op.defers(),
                "scenarios/README.md, operands written as one `${{…}}`: {} ({deferred})",
                op.name()
            );
        }
    }

    #[test]
    fn names_and_operators_are_one_to_one() {
        for op in Operator::ALL {
            assert_eq!(Operator::from_name(op.name()), Some(*op));
            assert!(op.name().starts_with('$'));
            // Only a test of a value has an operand to fill in at run time.
            assert!(!op.defers() || op.role() == Role::Test, "{op:?}");
        }
        assert_eq!(Operator::from_name("$lenn"), None);
        let mut names: Vec<&str> = Operator::ALL.iter().map(|op| op.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Operator::ALL.len());
    }

    #[test]
    fn a_deferrable_operand_is_filled_in_and_typed_then() {
        for op in Operator::ALL {
            let pattern = json!({ op.name(): "${x}" });
            let p = compile(&pattern, &|_| Place::default());
            let deferred = p.as_ref().ok().and_then(|p| match &p.node {
                Node::Object(o) => o.op(*op).map(|o| matches!(o, Op::Deferred(_))),
                _ => None,
            });
            if op.defers() {
                assert_eq!(deferred, Some(true), "{}", op.name());
            } else {
                assert_ne!(deferred, Some(true), "{}", op.name());
            }
        }
    }

    #[test]
    fn objects_are_subsets_unless_exact() {
        ok(json!({"a": 1}), json!({"a": 1, "b": 2}));
        let m = bad(json!({"a": 1, "$exact": true}), json!({"a": 1, "b": 2}));
        assert_eq!(m.path, "b");
        assert_eq!(
            bad(json!({"a": {"b": 2}}), json!({"a": {"b": 3}})).path,
            "a.b"
        );
    }

    #[test]
    fn arrays_match_in_order_and_length() {
        ok(json!([1, {"x": 2}]), json!([1, {"x": 2, "y": 0}]));
        assert!(bad(json!([1, 2]), json!([2, 1])).path == "[0]");
        assert!(bad(json!([1]), json!([1, 2]))
            .message
            .contains("expected 1 items"));
    }

    #[test]
    fn type_presence_and_absence() {
        ok(
            json!({"code": {"$type": "integer"}}),
            json!({"code": -32601}),
        );
        bad(
            json!({"code": {"$type": "integer"}}),
            json!({"code": "-32601"}),
        );
        ok(json!({"x": {"$absent": true}}), json!({}));
        bad(json!({"x": {"$absent": true}}), json!({"x": null}));
        ok(json!({"x": {"$present": true}}), json!({"x": null}));
        bad(json!({"x": {"$present": true}}), json!({}));
        ok(json!({"$type": ["string", "null"]}), json!(null));
    }

    #[test]
    fn collection_operators() {
        ok(
            json!({"$contains": {"name": "a"}}),
            json!([{"name": "b"}, {"name": "a"}]),
        );
        ok(json!({"$contains": "ell"}), json!("hello"));
        ok(json!({"$each": {"$type": "string"}}), json!(["a", "b"]));
        bad(json!({"$each": {"$type": "string"}}), json!(["a", 1]));
        ok(json!({"$unordered": [2, 1]}), json!([1, 2]));
        bad(json!({"$unordered": [1, 1]}), json!([1, 2]));
        ok(
            json!({"$unordered": [{"$type": "number"}, 1]}),
            json!([1, 5]),
        );
        ok(
            json!({"$len": 2, "$max_len": 3, "$min_len": 1}),
            json!([1, 2]),
        );
        bad(json!({"$max_len": 10}), json!((0..11).collect::<Vec<_>>()));
        ok(json!({"$gte": 1, "$lte": 3}), json!(2));
        ok(json!({"$regex": "^tool_"}), json!("tool_search"));
        ok(json!({"$not": {"$type": "string"}}), json!(3));
        ok(json!({"$eq": {"$type": "x"}}), json!({"$type": "x"}));
    }

    #[test]
    fn one_of_records_label_and_verdict() {
        let p = json!({"$one_of": [
            {"$label": "rejected", "error": {"code": -32602}},
            {"$label": "ignored", "$verdict": "warn", "$note": "query was ignored", "result": {}}
        ]});
        let m = ok(p.clone(), json!({"error": {"code": -32602}}));
        assert_eq!(m.labels, vec![(String::new(), "rejected".to_string())]);
        assert!(m.verdicts.is_empty());
        let m = ok(p.clone(), json!({"result": {"tools": []}}));
        assert_eq!(
            m.verdicts,
            vec![(AltVerdict::Warn, "query was ignored".into())]
        );
        let e = bad(p, json!({"error": {"code": -32603}}));
        assert!(
            e.message.contains("rejected:") && e.message.contains("ignored:"),
            "{e}"
        );
    }

    #[test]
    fn checker_reports_bad_operators_with_pointers() {
        let errors =
            check(&json!({"result": {"tools": {"$lenn": 3, "$regex": "("}}, "x": {"$label": "a"}}));
        let pointers: Vec<_> = errors.iter().map(|e| e.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            ["/result/tools/$lenn", "/result/tools/$regex", "/x/$label"]
        );
        assert!(
            errors[0].message.contains("did you mean $len"),
            "{}",
            errors[0].message
        );
        assert!(check(&json!({"$one_of": [{"$label": "x", "$verdict": "warn"}]})).is_empty());
        assert!(!check(&json!({"$type": "int"})).is_empty());
    }

    #[test]
    fn integers_beyond_two_to_the_53_are_not_equal_to_their_nearest_double() {
        let big: Value = serde_json::from_str("9007199254740993").unwrap_or_default();
        let rounded: Value = serde_json::from_str("9007199254740992.0").unwrap_or_default();
        assert!(!json_eq(&big, &rounded));
        assert!(!json_eq(&rounded, &big));
        let exact: Value = serde_json::from_str("9007199254740992").unwrap_or_default();
        assert!(json_eq(&exact, &rounded));
        assert!(json_eq(&serde_json::json!(7), &serde_json::json!(7.0)));
        assert!(!json_eq(&serde_json::json!(7), &serde_json::json!(7.5)));
        assert!(json_eq(
            &serde_json::json!(u64::MAX),
            &serde_json::json!(u64::MAX)
        ));
        assert!(!json_eq(
            &serde_json::json!(-1),
            &serde_json::json!(u64::MAX)
        ));
    }

    #[test]
    fn every_mismatch_is_listed_first_one_first() {
        let pattern = json!({"id": 1, "result": {"tools": {"$each": {"name": {"$type": "string"}}}, "x": [1, 2]}});
        let value =
            json!({"id": 2, "result": {"tools": [{"name": "a"}, {"name": 3}, {}], "x": [1, 5]}});
        let paths: Vec<String> = mismatches(&pattern, Some(&value), 10)
            .into_iter()
            .map(|m| m.path)
            .collect();
        assert_eq!(
            paths,
            [
                "id",
                "result.tools[1].name",
                "result.tools[2].name",
                "result.x[1]"
            ]
        );
        let first = matches(&pattern, Some(&value)).err().map(|m| m.path);
        assert_eq!(first.as_deref(), Some("id"));
        assert_eq!(mismatches(&pattern, Some(&value), 2).len(), 2);
        assert!(mismatches(&json!({"a": 1}), Some(&json!({"a": 1})), 10).is_empty());
    }

    #[test]
    fn regexes_are_compiled_once_when_the_pattern_is() {
        let p = compiled(&json!({"name": {"$regex": "^tool_"}}));
        let Some(Node::Object(o)) = p.field("name").map(|f| &f.node) else {
            panic!("an object pattern");
        };
        assert!(matches!(o.op(Operator::Regex), Some(Op::Regex(re)) if re.as_str() == "^tool_"));
        assert!(!p.is_dynamic());
    }

    #[test]
    fn a_pattern_reads_what_it_tests_and_an_answer_cut_to_that_matches_alike() {
        let read = |written: &Value| {
            compile(written, &|_| Place::default())
                .expect("a valid pattern")
                .read_tree()
        };
        let tools = json!({"result": {"tools": [{"name": "a", "inputSchema": {"type": "object"}}, {"name": "b"}]}, "pages": [{}]});
        let cut = |written: &Value| crate::json::pruned_copy(&tools, &read(written));
        let type_only = json!({"result": {"tools": {"$type": "array"}}});
        assert_eq!(cut(&type_only), json!({"result": {"tools": []}}));
        assert_eq!(
            cut(&json!({"result": {"tools": {"$min_len": 2}}})),
            json!({"result": {"tools": [{}, {}]}})
        );
        assert_eq!(
            cut(&json!({"result": {"tools": {"$each": {"name": {"$type": "string"}}}}})),
            json!({"result": {"tools": [{"name": "a"}, {"name": "b"}]}})
        );
        assert_eq!(
            cut(&json!({"result": {"tools": {"$each": {"name": {"$regex": "^a"}}}}})),
            json!({"result": {"tools": [{"name": "a"}, {"name": "b"}]}})
        );
        assert_eq!(
            cut(
                &json!({"$one_of": [{"result": {"tools": {"$type": "array"}}}, {"$label": "refused", "error": {"code": -32602}}]})
            ),
            json!({"result": {"tools": []}})
        );
        for whole in [
            json!({"result": {"tools": [{"name": "a"}]}}),
            json!({"result": {"tools": {"$contains": {"name": "a"}}}}),
            json!({"$exact": true, "result": {}}),
            json!({"$not": {"error": {}}}),
        ] {
            let kept = cut(&whole);
            assert_eq!(
                matches(&whole, Some(&kept)).is_ok(),
                matches(&whole, Some(&tools)).is_ok(),
                "{whole}"
            );
            if whole.get("result").is_some() {
                assert_eq!(kept["result"], tools["result"], "{whole}");
            }
        }
        assert!(read(&json!({"result": {"tools": "${expected}"}})).is_whole());
        for written in [&type_only, &json!({"result": {"tools": {"$len": 3}}})] {
            assert_eq!(
                matches(written, Some(&cut(written))).is_ok(),
                matches(written, Some(&tools)).is_ok(),
                "{written}"
            );
        }
    }

    #[test]
    fn a_mismatch_names_the_pattern_leaf_that_failed() {
        let p = json!({"result": {"tools": {"$each": {"name": {"$type": "string"}}}}});
        let m =
            matches(&p, Some(&json!({"result": {"tools": [{"name": 1}]}}))).expect_err("mismatch");
        assert_eq!(m.path, "result.tools[0].name");
        assert_eq!(m.place.id, "expect.result.tools.$each.name");
    }

    #[test]
    fn holes_are_filled_in_at_run_time_and_only_there() {
        let b = crate::expr::Bindings::from(
            json!({"g": "pages", "n": 2, "names": [{"name": "a"}, {"name": "b"}]})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        let p = compiled(&json!({
            "groups": {"$contains": "${g}"},
            "tools": {"$len": "${n}", "$unordered": "${names}"},
            "note": "literal $${g}"
        }));
        assert!(p.is_dynamic());
        let resolved = p.resolve(&b).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            resolved.to_value(),
            &json!({"groups": {"$contains": "pages"}, "tools": {"$len": 2, "$unordered": [{"name": "a"}, {"name": "b"}]}, "note": "literal ${g}"})
        );
        let answer = json!({"groups": ["x", "pages"], "tools": [{"name": "b"}, {"name": "a", "x": 1}], "note": "literal ${g}"});
        assert!(resolved.matches(Some(&answer)).is_ok());
        let fixed = compiled(&json!({"a": 1}));
        assert!(matches!(fixed.resolve(&b), Ok(Cow::Borrowed(_))));
    }
}
