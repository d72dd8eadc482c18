//! Which parts of each variable a CEL expression can read.
//!
//! `all.result.tools.map(t, t.name)` reads the `name` of each item of
//! `all.result.tools`, and nothing else of `all`; only that much of the
//! binding has to be handed to the interpreter. Converting whole answers
//! (every tool's input schema, a paginated answer's `pages`) and copying
//! whole items into each loop variable was most of the harness's CPU time.
//!
//! The analysis walks the expression from the top, carrying the *demand* on
//! each sub-expression's value: what its context can observe of it. A field
//! selection narrows the demand on its operand to one field; an index to one
//! field or to the items; `map` and `filter` pass the demand on their
//! result's items to the element they append; a loop variable's reads become
//! reads of its range's items. Everything else (a function argument, an
//! operand of `==`, a value put in a literal map) demands the whole value,
//! so whatever the analysis does not understand is read whole.
//!
//! A helper that reads less of its arguments says so in its own table row
//! ([`Helper::reads`](super::Helper)); the walk asks the helpers it is
//! given, and a helper that says nothing reads its arguments whole.

use std::collections::{BTreeMap, HashMap};

use cel::common::ast::{operators, CallExpr, ComprehensionExpr, EntryExpr, Expr, LiteralValue};
use cel::IdedExpr;

use super::Helper;
use crate::json::ReadTree;

/// The helpers an expression may call, by name: what each reads of its
/// arguments is declared with it.
pub type HelperTable = HashMap<&'static str, Helper>;

/// What an expression reads, by variable name. Names of comprehension
/// accumulators may appear too; they match no binding, so they cost nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reads(BTreeMap<String, ReadTree>);

impl Reads {
    /// The reads of a whole expression, whose value is shown whole; a call
    /// of one of `helpers` reads what the helper declares.
    pub fn of(expr: &IdedExpr, helpers: &HelperTable) -> Reads {
        let mut walker = Walker {
            reads: Reads::default(),
            helpers,
        };
        walker.walk(expr, ReadTree::whole());
        walker.reads
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &ReadTree)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// What is read of `variable` (None: nothing at all).
    pub fn get(&self, variable: &str) -> Option<&ReadTree> {
        self.0.get(variable)
    }

    /// Adds what `other` reads.
    pub fn include(&mut self, other: &Reads) {
        self.absorb(other.clone());
    }

    fn add(&mut self, variable: &str, read: ReadTree) {
        self.0.entry(variable.to_string()).or_default().merge(read);
    }

    fn absorb(&mut self, other: Reads) {
        for (variable, read) in other.0 {
            self.add(&variable, read);
        }
    }
}

/// The analysis of one expression: the demand carried down from the top
/// (see the module's comment).
struct Walker<'h> {
    reads: Reads,
    helpers: &'h HelperTable,
}

impl Walker<'_> {
    fn walk(&mut self, expr: &IdedExpr, demand: ReadTree) {
        match &expr.expr {
            Expr::Ident(name) => self.reads.add(name, demand),
            // `has(x.f)` only observes whether `f` is there.
            Expr::Select(select) if select.test => self.walk(
                &select.operand,
                ReadTree::field(&select.field, ReadTree::default()),
            ),
            Expr::Select(select) => {
                self.walk(&select.operand, ReadTree::field(&select.field, demand))
            }
            Expr::Call(call) => self.walk_call(call, demand),
            Expr::Comprehension(c) => self.walk_comprehension(c, demand),
            Expr::List(list) => {
                let item = demand.item_demand();
                for element in &list.elements {
                    self.walk(element, item.clone());
                }
            }
            Expr::Map(map) => map.entries.iter().for_each(|e| self.walk_entry(&e.expr)),
            Expr::Struct(s) => s.entries.iter().for_each(|e| self.walk_entry(&e.expr)),
            Expr::Literal(_) | Expr::Unspecified => {}
        }
    }

    fn walk_entry(&mut self, entry: &EntryExpr) {
        match entry {
            EntryExpr::MapEntry(e) => {
                self.walk(&e.key, ReadTree::whole());
                self.walk(&e.value, ReadTree::whole());
            }
            EntryExpr::StructField(f) => self.walk(&f.value, ReadTree::whole()),
        }
    }

    fn walk_call(&mut self, call: &CallExpr, demand: ReadTree) {
        if call.target.is_none() && self.walk_helper(call) {
            return;
        }
        match (call.func_name.as_str(), &call.target, call.args.as_slice()) {
            (operators::INDEX, None, [operand, index]) => {
                self.walk(index, ReadTree::whole());
                let narrowed = match &index.expr {
                    Expr::Literal(LiteralValue::String(key)) => {
                        ReadTree::field(key.inner(), demand)
                    }
                    _ => ReadTree::items(demand),
                };
                self.walk(operand, narrowed);
            }
            // Only the argument's type is observed.
            ("type", None, [value]) => self.walk(value, ReadTree::default()),
            // The length of a list (each item present, none read); a map's
            // or a string's size needs all of it, as the conversion gives.
            ("size", None, [value]) => self.walk(value, ReadTree::items(ReadTree::default())),
            ("size", Some(value), []) => self.walk(value, ReadTree::items(ReadTree::default())),
            (operators::CONDITIONAL, None, [condition, then, otherwise]) => {
                self.walk(condition, ReadTree::whole());
                self.walk(then, demand.clone());
                self.walk(otherwise, demand);
            }
            _ => {
                if let Some(target) = &call.target {
                    self.walk(target, ReadTree::whole());
                }
                for arg in &call.args {
                    self.walk(arg, ReadTree::whole());
                }
            }
        }
    }

    /// A call of a helper that declares what it reads: walks its arguments
    /// with those reads. False when the call is no such helper's, or has
    /// another number of arguments than the helper takes.
    fn walk_helper(&mut self, call: &CallExpr) -> bool {
        let Some(declared) = self
            .helpers
            .get(call.func_name.as_str())
            .filter(|h| h.arity == call.args.len())
            .and_then(|h| h.reads)
        else {
            return false;
        };
        let literals: Vec<Option<&str>> = call.args.iter().map(string_literal).collect();
        let reads = declared(&literals);
        if reads.len() != call.args.len() {
            return false;
        }
        for (arg, read) in call.args.iter().zip(reads) {
            self.walk(arg, read);
        }
        true
    }

    fn walk_comprehension(&mut self, c: &ComprehensionExpr, demand: ReadTree) {
        let mut body = Walker {
            reads: Reads::default(),
            helpers: self.helpers,
        };
        match appended_items(c) {
            Some((guard, appended)) => {
                if let Some(guard) = guard {
                    body.walk(guard, ReadTree::whole());
                }
                let item = demand.item_demand();
                for element in appended {
                    body.walk(element, item.clone());
                }
                body.walk(&c.accu_init, ReadTree::whole());
                body.walk(&c.loop_cond, ReadTree::whole());
            }
            None => {
                for part in [&c.accu_init, &c.loop_cond, &c.loop_step, &c.result] {
                    body.walk(part, ReadTree::whole());
                }
            }
        }
        // Inside the body these names are the loop's own, not bindings.
        body.reads.0.remove(&c.accu_var);
        let per_item = body.reads.0.remove(&c.iter_var).unwrap_or_default();
        let range = match &c.iter_var2 {
            // Two variables (index and value, key and value): read it whole.
            Some(second) => {
                body.reads.0.remove(second);
                ReadTree::whole()
            }
            None => ReadTree::items(per_item),
        };
        self.walk(&c.iter_range, range);
        self.reads.absorb(body.reads);
    }
}

/// The shape of `map` and `filter`: the result is the accumulator, which
/// each step extends by a list literal, maybe under a guard
/// (`cond ? acc + [e] : acc`). Gives the guard and the appended elements.
fn appended_items(c: &ComprehensionExpr) -> Option<(Option<&IdedExpr>, &[IdedExpr])> {
    if !is_ident(&c.result, &c.accu_var) {
        return None;
    }
    if let Some(elements) = appended(&c.loop_step, &c.accu_var) {
        return Some((None, elements));
    }
    let Expr::Call(call) = &c.loop_step.expr else {
        return None;
    };
    match (call.func_name.as_str(), &call.target, call.args.as_slice()) {
        (operators::CONDITIONAL, None, [guard, step, otherwise])
            if is_ident(otherwise, &c.accu_var) =>
        {
            Some((Some(guard), appended(step, &c.accu_var)?))
        }
        _ => None,
    }
}

/// The text of a string literal.
fn string_literal(expr: &IdedExpr) -> Option<&str> {
    match &expr.expr {
        Expr::Literal(LiteralValue::String(text)) => Some(text.inner()),
        _ => None,
    }
}

fn is_ident(expr: &IdedExpr, name: &str) -> bool {
    matches!(&expr.expr, Expr::Ident(n) if n == name)
}

/// `accu + [e, ...]`: the elements appended.
fn appended<'e>(step: &'e IdedExpr, accu: &str) -> Option<&'e [IdedExpr]> {
    let Expr::Call(call) = &step.expr else {
        return None;
    };
    match (call.func_name.as_str(), &call.target, call.args.as_slice()) {
        (operators::ADD, None, [lhs, rhs]) if is_ident(lhs, accu) => match &rhs.expr {
            Expr::List(list) => Some(list.elements.as_slice()),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `source` reads, with every helper of the scenarios known.
    fn reads(source: &str) -> BTreeMap<String, ReadTree> {
        let program = crate::scenario::helpers::compile(source).expect("compiles");
        program.reads().0.clone()
    }

    fn fields(entries: &[(&str, ReadTree)]) -> ReadTree {
        entries.iter().fold(ReadTree::default(), |read, (k, v)| {
            read.with_field(k, v.clone())
        })
    }

    fn whole() -> ReadTree {
        ReadTree::whole()
    }

    #[test]
    fn field_chains_read_only_their_paths() {
        let r = reads("all.result.tools == [] && has(all.result.nextCursor)");
        assert_eq!(
            r["all"],
            fields(&[(
                "result",
                fields(&[("tools", whole()), ("nextCursor", ReadTree::default())])
            )])
        );
    }

    #[test]
    fn a_field_is_guard_reads_only_the_type_of_its_field() {
        let r = reads("xs.filter(t, field_is(t, 'name', 'string')).map(t, t.name)");
        assert_eq!(r["xs"], ReadTree::items(fields(&[("name", whole())])));
        let r = reads("xs.all(t, field_is(t, 'uri', 'string'))");
        assert_eq!(
            r["xs"],
            ReadTree::items(fields(&[("uri", ReadTree::default())]))
        );
    }

    #[test]
    fn a_path_guard_reads_only_its_path() {
        assert_eq!(
            reads("has_path(server, 'capabilities.tools.search') || is_true(server, 'a.b')"),
            BTreeMap::from([(
                "server".to_string(),
                fields(&[
                    (
                        "capabilities",
                        fields(&[("tools", fields(&[("search", ReadTree::default())]))])
                    ),
                    ("a", fields(&[("b", ReadTree::default())])),
                ])
            )])
        );
        assert_eq!(
            reads("has_path(server, path)")["server"],
            whole(),
            "a path that is not a literal reads the whole value"
        );
    }

    #[test]
    fn memberships_reads_the_id_and_the_meta_of_each_item() {
        let r = reads("memberships(xs.result.tools, 'tool', 'name', key)");
        let item = fields(&[("_meta", whole()), ("name", whole())]);
        assert_eq!(
            r["xs"],
            fields(&[("result", fields(&[("tools", ReadTree::items(item))]))])
        );
        assert_eq!(r["key"], whole());
    }

    #[test]
    fn groups_of_reads_only_the_membership_fields() {
        let r = reads("xs.filter(t, 'g' in groups_of(t)).map(t, t.name)");
        let meta = fields(&[(crate::protocol::META_GROUPS, whole())]);
        assert_eq!(
            r["xs"],
            ReadTree::items(fields(&[
                ("groups", whole()),
                ("_meta", meta),
                ("name", whole())
            ]))
        );
    }

    #[test]
    fn loops_read_only_what_their_variable_reads_of_each_item() {
        let r = reads("all.result.tools.map(t, t.name) == ['a']");
        let tools = ReadTree::items(fields(&[("name", whole())]));
        assert_eq!(r["all"], fields(&[("result", fields(&[("tools", tools)]))]));
        assert!(!r.contains_key("t"), "the loop variable is not a binding");
    }

    #[test]
    fn filter_then_map_reads_the_fields_of_both() {
        let r = reads("xs.filter(t, has(t.tags) && 'x' in t.tags).map(t, t.name)");
        assert_eq!(
            r["xs"],
            ReadTree::items(fields(&[("tags", whole()), ("name", whole())]))
        );
        // A filter whose items are shown whole reads them whole.
        assert_eq!(reads("xs.filter(t, t.ok)")["xs"], ReadTree::items(whole()));
        assert_eq!(
            reads("xs.all(t, t.ok)")["xs"],
            ReadTree::items(fields(&[("ok", whole())]))
        );
    }

    #[test]
    fn indexes_read_one_field_or_the_items() {
        let r = reads("pages[0].result.tools.size() > 0 && m['k'].v == 1");
        let counted = ReadTree::items(ReadTree::default());
        assert_eq!(
            r["pages"],
            ReadTree::items(fields(&[("result", fields(&[("tools", counted)]))]))
        );
        assert_eq!(r["m"], fields(&[("k", fields(&[("v", whole())]))]));
        let r = reads("lists.range(size(xs)).all(i, xs[i].name == names[i])");
        assert_eq!(r["xs"], ReadTree::items(fields(&[("name", whole())])));
        assert_eq!(r["names"], ReadTree::items(whole()));
    }

    #[test]
    fn any_other_use_reads_the_whole_value() {
        for source in [
            "all == other",
            "all.result.tools == [] && keys(all) == []",
            "all.all(i, v, v == 1)",
            "{'a': all}.a.result",
        ] {
            assert_eq!(reads(source)["all"], whole(), "{source}");
        }
        // A loop variable used bare reads its items whole.
        assert_eq!(
            reads("all.result.tools.map(t, t) == []")["all"],
            fields(&[("result", fields(&[("tools", ReadTree::items(whole()))]))])
        );
        // A list literal passes the demand on its items through.
        assert_eq!(
            reads("[all][0].result")["all"],
            fields(&[("result", whole())])
        );
        // Iterating a map reads its keys: the conversion keeps an object
        // whose items are read whole.
        assert_eq!(
            reads("all.exists(k, k == 'result')")["all"],
            ReadTree::items(whole())
        );
        // A shorter path covers a longer one, in either order.
        let r = reads("all.result.tools == [] && keys(all.result) == []");
        assert_eq!(r["all"], fields(&[("result", whole())]));
    }

    #[test]
    fn presence_type_and_length_read_almost_nothing() {
        let r = reads("has(x.a) && type(y) == map && size(z) == 2 && z.size() > 0");
        assert_eq!(r["x"], fields(&[("a", ReadTree::default())]));
        assert_eq!(r["y"], ReadTree::default());
        assert_eq!(r["z"], ReadTree::items(ReadTree::default()));
    }

    #[test]
    fn shadowed_names_are_the_loop_variable() {
        let r = reads("xs.map(all, all.name) == [] && all.result == 1");
        assert_eq!(r["all"], fields(&[("result", whole())]));
        assert_eq!(r["xs"], ReadTree::items(fields(&[("name", whole())])));
    }

    #[test]
    fn selections_of_call_results_read_the_call_arguments() {
        let r = reads("parse_json(raw.text).result.tools == [] && (c ? a.x : b.y) == 1");
        assert_eq!(r["raw"], fields(&[("text", whole())]));
        assert_eq!(r["a"], fields(&[("x", whole())]));
        assert_eq!(r["b"], fields(&[("y", whole())]));
        assert_eq!(r["c"], whole());
    }
}
