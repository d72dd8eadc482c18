//! The variables of an evaluation: JSON values bound by name, each with
//! the interpreter's values made of it so far.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cel::common::types::{CelList, Kind};
use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use serde_json::{Map, Value};

use super::cel_lazy::{json_at_of, json_val_of};
use super::cel_shared::Shared;
use super::cel_value::{json_to_val_read, val_to_json_read};
use super::json_at::{json_root, JsonAt};
use crate::json::{pruned_copy, ReadTree};
use crate::schema::Schemas;

/// Variables of CEL expressions. Each is kept as JSON, and given to the
/// interpreter as a value that converts what an expression reaches of it
/// (`cel_lazy`), kept for later expressions. Most answers a scenario binds
/// are never read, and the ones that are (a whole tool list, say) are read
/// by many expressions: converting at every evaluation was most of the
/// harness's CPU time. When reads are verified, each expression also runs
/// on its variables cut down to what it reads (`expr::reads`), the analysis
/// that decides what the runner keeps of a long answer.
#[derive(Debug, Clone, Default)]
pub struct Bindings {
    vars: HashMap<String, Bound>,
    /// What `schema_errors` validates against: the run's schemas.
    pub(super) schemas: Schemas,
    /// How the evaluations over these bindings are made.
    options: EvalOptions,
}

/// How expressions are evaluated, chosen by whoever makes the bindings (the
/// runner, from its configuration) and kept by every copy of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EvalOptions {
    /// Every evaluation runs twice, on whole values and on the parts of its
    /// variables it reads, and fails if the results differ. The test suites
    /// turn it on (the binary through `MCP_CONFORM_VERIFY_READS=1`), so
    /// every scenario they run checks the read analysis the runner prunes
    /// long answers with.
    pub verify_reads: bool,
}

/// A JSON value as bound to a variable, with the CEL values made of it so
/// far. Clones share both, so the many expressions of one scenario that
/// read a whole tool list convert each tool once. Scenarios that bind the
/// same stored walk each make their own (see [`Bound::with_own_conversions`]).
///
/// The JSON is a place in a document: the whole of it, or, for a capture
/// whose value is a part of another binding (`walk: wt`, `found:
/// walk.result.tools`), that part of the other binding's document, which is
/// shared rather than copied. A capture whose value is a list of such parts
/// (`all.result.tools.filter(…)`) holds those parts, not a copy of them.
#[derive(Clone)]
pub struct Bound {
    json: Held,
    cel: Arc<Conversions>,
}

/// What a binding's JSON is.
#[derive(Clone)]
enum Held {
    At(JsonAt),
    Items(Arc<Items>),
}

/// A list of places in documents other bindings hold: a filter of a
/// 10,000-tool answer kept as its tools, copied only for whoever asks for
/// the list as one JSON value (a report, an interpolated message).
pub(super) struct Items {
    places: Vec<JsonAt>,
    /// The CEL list of those places, sharing their conversions.
    cel: Arc<dyn Val>,
    /// The JSON array, made when first asked for.
    made: OnceLock<JsonAt>,
}

impl Items {
    /// The list `value` is, when each of its items is a list or map made
    /// whole from JSON.
    pub(super) fn of(value: &dyn Val) -> Option<Items> {
        let list = (value.get_type().kind() == Kind::List)
            .then(|| value.downcast_ref::<CelList>())
            .flatten()?;
        let shares = list
            .inner()
            .iter()
            .map(|item| json_val_of(item.as_ref()))
            .collect::<Option<Vec<_>>>()?;
        if shares.is_empty() {
            return None;
        }
        let places = shares
            .iter()
            .map(|share| json_at_of(share.as_ref()))
            .collect::<Option<Vec<_>>>()?;
        Some(Items {
            places,
            cel: Arc::from(Shared::boxed(CelList::from(shares))),
            made: OnceLock::new(),
        })
    }

    fn json(&self) -> &JsonAt {
        self.made.get_or_init(|| {
            let items = self.places.iter().map(|at| (*at.get()).clone()).collect();
            json_root(Arc::new(Value::Array(items)))
        })
    }

    /// The JSON array, each item copied only as far as `read` reads it.
    fn copied(&self, read: &ReadTree) -> Value {
        // Every item is JSON, so the conversion cannot fail.
        val_to_json_read(self.cel.as_ref(), read).unwrap_or_default()
    }
}

impl std::fmt::Debug for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bound")
            .field("json", self.json())
            .finish_non_exhaustive()
    }
}

impl Bound {
    pub fn new(json: Arc<Value>) -> Self {
        Bound::at(json_root(json))
    }

    pub(super) fn at(json: JsonAt) -> Self {
        Bound {
            json: Held::At(json),
            cel: Arc::default(),
        }
    }

    /// The same JSON, shared, with none of the CEL values made of it so
    /// far. A stored walk is handed to each scenario this way: the values
    /// one scenario makes of a 10,000-tool list are dropped when it ends,
    /// instead of growing with every scenario for the whole run. Kept for
    /// the run, they held 25 to 35 MiB more at the peak and interleaved with
    /// each scenario's short-lived values, for about 6% less CPU.
    pub fn with_own_conversions(&self) -> Self {
        Bound {
            json: self.json.clone(),
            cel: Arc::default(),
        }
    }

    /// Whether the two hold the same CEL values made of their JSON.
    #[cfg(test)]
    pub fn shares_conversions_with(&self, other: &Bound) -> bool {
        Arc::ptr_eq(&self.cel, &other.cel)
    }

    pub(super) fn items(items: Items) -> Self {
        Bound {
            json: Held::Items(Arc::new(items)),
            cel: Arc::default(),
        }
    }

    pub fn json(&self) -> &Value {
        match &self.json {
            Held::At(at) => at.get(),
            Held::Items(items) => items.json().get(),
        }
    }

    /// The JSON, moved out when this is the whole of a document nothing
    /// else holds.
    pub fn into_json(self) -> Value {
        self.into_json_kept(&ReadTree::whole())
    }

    /// [`Bound::into_json`] of a value of which only `read` is used: a
    /// document shared with another holder (a walk kept for later
    /// scenarios), or a part of one, is copied only that far.
    pub fn into_json_kept(self, read: &ReadTree) -> Value {
        let at = match self.json {
            Held::At(at) => at,
            Held::Items(items) => return items.copied(read),
        };
        let whole = std::ptr::eq(*at.get(), &**at.backing_cart());
        if !whole {
            return pruned_copy(at.get(), read);
        }
        match Arc::try_unwrap(at.into_backing_cart()) {
            Ok(document) => document,
            Err(shared) => pruned_copy(&shared, read),
        }
    }

    /// The first `n` items of a list, moved out of a document nothing else
    /// holds and copied otherwise (a `for_each` over a filter of a long
    /// answer takes the few it runs, not a copy of all); None when this is
    /// not a list.
    pub fn into_first_items(self, n: usize) -> Option<Vec<Value>> {
        if let Held::Items(items) = &self.json {
            let first = items.places.iter().take(n);
            return Some(first.map(|at| (*at.get()).clone()).collect());
        }
        let len = self.json().as_array()?.len();
        if n < len {
            return self.json().as_array().map(|items| items[..n].to_vec());
        }
        match self.into_json() {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    fn cel_value(&self, read: &ReadTree) -> Arc<dyn Val> {
        match &self.json {
            Held::At(at) => self.cel.get(at, read),
            Held::Items(items) if read.is_whole() => Arc::clone(&items.cel),
            Held::Items(items) => self.cel.get(items.json(), read),
        }
    }
}

impl From<Value> for Bound {
    fn from(json: Value) -> Self {
        Bound::new(Arc::new(json))
    }
}

impl From<Arc<Value>> for Bound {
    fn from(json: Arc<Value>) -> Self {
        Bound::new(json)
    }
}

/// The CEL values made of one binding so far (the whole, and the cuts
/// verification asks for), by the part they cover.
#[derive(Debug, Default)]
struct Conversions(Mutex<Vec<(ReadTree, Arc<dyn Val>)>>);

/// Conversions kept of one binding: a value read in many different ways
/// would otherwise hold a copy per way. The oldest is dropped first;
/// whoever still uses it keeps it.
const MAX_CONVERSIONS: usize = 8;

impl Conversions {
    fn get(&self, json: &JsonAt, read: &ReadTree) -> Arc<dyn Val> {
        // A poisoned lock only means another conversion panicked; the values
        // already stored are whole.
        let mut made = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let covering = made.iter().find(|(covers, _)| covers == read);
        if let Some((_, value)) = covering {
            return Arc::clone(value);
        }
        let value: Arc<dyn Val> = Arc::from(json_to_val_read(json, read));
        if made.len() == MAX_CONVERSIONS {
            made.remove(0);
        }
        made.push((read.clone(), Arc::clone(&value)));
        value
    }
}

impl Bindings {
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<Bound>) {
        self.vars.insert(name.into(), value.into());
    }

    pub fn remove(&mut self, name: &str) {
        self.vars.remove(name);
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.vars.get(name).map(Bound::json)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.vars.contains_key(name)
    }

    /// Validates with the run's schemas (the shipped ones by default).
    pub fn set_schemas(&mut self, schemas: Schemas) {
        self.schemas = schemas;
    }

    /// Evaluates with these options (none by default).
    pub fn set_options(&mut self, options: EvalOptions) {
        self.options = options;
    }

    pub fn options(&self) -> EvalOptions {
        self.options
    }

    pub(super) fn cel_value(&self, name: &str, read: &ReadTree) -> Option<Arc<dyn Val>> {
        Some(self.vars.get(name)?.cel_value(read))
    }
}

impl From<Map<String, Value>> for Bindings {
    fn from(json: Map<String, Value>) -> Self {
        let mut b = Bindings::default();
        for (k, v) in json {
            b.insert(k, v);
        }
        b
    }
}

/// The variables one evaluation reads, lent to the interpreter by reference.
pub(super) struct Lent<'a>(pub(super) Vec<(&'a str, Arc<dyn Val>)>);

impl VariableResolver for Lent<'_> {
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        self.0
            .iter()
            .find(|(name, _)| *name == variable)
            .map(|(_, value)| CowVal::Borrowed(value.as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::helpers::{compile, eval};
    use serde_json::json;

    /// A capture of a part of another binding shares that binding's JSON:
    /// on a 10,000-tool walk, `walk: cond ? wt : wp` and `found:
    /// walk.result.tools` were two more copies of the walk.
    #[test]
    fn a_part_of_a_binding_is_bound_without_a_copy() {
        let all = Arc::new(json!({"result": {"tools": [{"name": "a"}, {"name": "b"}]}}));
        let mut b = Bindings::default();
        b.insert("all", Arc::clone(&all));
        let tools = compile("true ? all.result.tools : []")
            .and_then(|c| c.eval_bound(&b))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(std::ptr::eq(tools.json(), &all["result"]["tools"]));
        b.insert("tools", tools);
        let second = compile("tools[1]")
            .and_then(|c| c.eval_bound(&b))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(std::ptr::eq(second.json(), &all["result"]["tools"][1]));
        // Moved out, a part is a copy; the document stays as it was.
        assert_eq!(second.into_json(), json!({"name": "b"}));
        assert_eq!(eval("size(tools)", &b), Ok(json!(2)));
        // A value the expression made is its own document.
        let made = compile("all.result.tools.map(t, t.name)")
            .and_then(|c| c.eval_bound(&b))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(made.into_json(), json!(["a", "b"]));
    }

    /// A capture that keeps some items of another binding's list holds
    /// those items, not copies: `named: all.result.tools.filter(…)` over a
    /// 10,000-tool walk was a second copy of the walk. Read back, as a
    /// whole, cut down or in part, it is the list the filter made.
    #[test]
    fn a_filter_of_a_binding_holds_its_items_without_a_copy() {
        let all = Arc::new(json!({"result": {"tools": [
            {"name": "a", "n": 1}, {"name": "b", "n": 2}, {"name": "c", "n": 3}
        ]}}));
        let mut b = Bindings::default();
        b.insert("all", Arc::clone(&all));
        let kept = compile("all.result.tools.filter(t, t.n != 2)")
            .and_then(|c| c.eval_bound(&b))
            .unwrap_or_else(|e| panic!("{e}"));
        let Held::Items(items) = &kept.json else {
            panic!("a filter of JSON items is held as those items");
        };
        assert!(std::ptr::eq(
            *items.places[1].get(),
            &all["result"]["tools"][2]
        ));
        let expected = json!([{"name": "a", "n": 1}, {"name": "c", "n": 3}]);
        assert_eq!(kept.json(), &expected);
        b.insert("kept", kept.clone());
        assert_eq!(eval("kept.map(t, t.name)", &b), Ok(json!(["a", "c"])));
        assert_eq!(eval("kept[1]", &b), Ok(json!({"name": "c", "n": 3})));
        assert_eq!(eval("size(kept) == 2 && kept == kept", &b), Ok(json!(true)));
        let names = ReadTree::default().with_each_item(ReadTree::whole_fields(&["name"]));
        assert_eq!(
            kept.clone().into_json_kept(&names),
            json!([{"name": "a"}, {"name": "c"}])
        );
        assert_eq!(
            kept.clone().into_first_items(1),
            Some(vec![json!({"name": "a", "n": 1})])
        );
        assert_eq!(kept.into_json(), expected);
        // A list that is not all JSON items is made as before.
        let mixed = compile("all.result.tools.filter(t, t.n != 2) + [1]")
            .and_then(|c| c.eval_bound(&b))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(mixed.json, Held::At(_)));
        assert_eq!(
            mixed.into_json(),
            json!([{"name": "a", "n": 1}, {"name": "c", "n": 3}, 1])
        );
    }

    #[test]
    fn the_options_go_with_every_copy_of_the_bindings() {
        let mut b = Bindings::default();
        assert!(!b.options().verify_reads, "off unless asked for");
        b.set_options(EvalOptions { verify_reads: true });
        let copy = b.clone();
        assert!(copy.options().verify_reads);
    }
}
