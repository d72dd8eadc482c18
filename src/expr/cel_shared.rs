//! A CEL list, map or string shared rather than copied, and the JSON it was
//! made from.
//!
//! The interpreter copies a value whenever it binds one it only borrows:
//! each element of a list to a comprehension's variable, each element a
//! `filter` keeps, a variable put in a list literal. A built-in map or list
//! copies all it holds, so `tools.filter(t, …)` over 10,000 tools copied
//! every tool twice. Behind an `Arc`, a copy is a reference count.
//!
//! Strings converted from JSON, and the lists and maps of a value cut down
//! to what an expression reads (`json_to_val_read`), are held this way.
//! Lists and maps converted whole are lazy instead (`cel_lazy`), and keep
//! the JSON they stand for, so that a helper handed `all.result.tools`
//! reads the answer itself instead of a JSON copy rebuilt from the CEL
//! value ([`json_of`]).
//!
//! The value still presents itself as the built-in it holds (`as_builtin`),
//! so the standard library's functions, equality with built-in values and
//! the helpers' downcasts see no difference.

use std::any::Any;
use std::sync::Arc;

use cel::common::traits::{Adder, Comparer, Container, Indexer, Iterable, Sizer, Zeroer};
use cel::common::types::{Type, DYN_TYPE};
use cel::common::value::{Builtin, BuiltinRef, CowVal, StaticVal, Val};
use cel::ExecutionError;

/// A built-in value (a list, map or string) behind an `Arc`.
#[derive(Debug)]
pub struct Shared {
    value: Arc<dyn Val>,
}

impl Shared {
    pub fn boxed(value: impl Val + 'static) -> Box<dyn Val> {
        Box::new(Shared {
            value: Arc::new(value),
        })
    }
}

impl Val for Shared {
    fn get_type(&self) -> &Type {
        self.value.get_type()
    }

    /// Only overload declarations ask for a Rust type's CEL type, and none
    /// names `Shared`; its values have the type of the value they hold.
    fn cel_type() -> &'static Type {
        &DYN_TYPE
    }

    fn as_adder<'b, 'v>(&'b self) -> Option<&'b (dyn Adder + 'v)>
    where
        Self: 'v,
    {
        self.value.as_adder()
    }

    fn as_comparer(&self) -> Option<&dyn Comparer> {
        self.value.as_comparer()
    }

    fn as_container(&self) -> Option<&dyn Container> {
        self.value.as_container()
    }

    fn as_indexer<'b, 'v>(&'b self) -> Option<&'b (dyn Indexer + 'v)>
    where
        Self: 'v,
    {
        self.value.as_indexer()
    }

    /// The interpreter moves an element out of a container it owns alone;
    /// a shared one hands out a share of its element instead.
    fn into_indexer<'v>(self: Box<Self>) -> Option<Box<dyn Indexer + 'v>>
    where
        Self: 'v,
    {
        self.value.as_indexer()?;
        Some(self)
    }

    fn as_iterable<'b, 'v>(&'b self) -> Option<&'b (dyn Iterable + 'v)>
    where
        Self: 'v,
    {
        self.value.as_iterable()
    }

    fn as_sizer(&self) -> Option<&dyn Sizer> {
        self.value.as_sizer()
    }

    fn as_zeroer(&self) -> Option<&dyn Zeroer> {
        self.value.as_zeroer()
    }

    fn equals(&self, other: &dyn Val) -> bool {
        self.value.equals(other)
    }

    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v>
    where
        Self: 'v,
    {
        Box::new(Shared {
            value: Arc::clone(&self.value),
        })
    }

    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }

    fn as_builtin<'b, 'v>(&'b self) -> BuiltinRef<'b, 'v>
    where
        Self: 'v,
    {
        self.value.as_builtin()
    }

    /// A copy of the value held, which the interpreter then owns.
    fn into_builtin<'v>(self: Box<Self>) -> Option<Builtin<'v>>
    where
        Self: 'v,
    {
        self.value.clone_as_boxed().into_builtin()
    }
}

impl StaticVal for Shared {}

impl Indexer for Shared {
    fn get<'b, 'v>(&'b self, idx: &dyn Val) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        match self.value.as_indexer() {
            Some(indexer) => indexer.get(idx),
            None => Err(ExecutionError::UnexpectedType {
                got: self.value.get_type().name().to_owned(),
                want: "an indexable value".to_owned(),
            }),
        }
    }

    fn steal<'v>(self: Box<Self>, idx: &dyn Val) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        self.get(idx).map(CowVal::into_owned)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::expr::cel_lazy::{json_at_to_val, json_of};
    use crate::expr::cel_value::{json_to_val_read, val_to_json};
    use crate::expr::json_at::json_root;
    use crate::expr::Bindings;
    use crate::json::ReadTree;
    use crate::scenario::helpers::eval;
    use serde_json::Value;

    fn bound(x: Value) -> Bindings {
        let mut b = Bindings::default();
        b.insert("x", x);
        b
    }

    #[test]
    fn shared_values_equal_built_in_ones_both_ways() {
        let b = bound(json!({"list": [1, "a", {"k": [true]}], "map": {"a": 1, "b": ["c"]}}));
        for source in [
            "x.list == [1, 'a', {'k': [true]}]",
            "[1, 'a', {'k': [true]}] == x.list",
            "x.map == {'a': 1, 'b': ['c']}",
            "{'b': ['c'], 'a': 1} == x.map",
            "'a' in x.list && {'k': [true]} in x.list && 'b' in x.map",
            "x.list[2].k[0] && size(x.list) == 3 && size(x.map.b[0]) == 1",
            "x.list + ['z'] == [1, 'a', {'k': [true]}, 'z']",
            "x.map.b[0] + 'd' == 'cd' && x.map.b[0].startsWith('c')",
            "x.list.filter(v, type(v) == map).map(v, v.k) == [[true]]",
        ] {
            assert_eq!(eval(source, &b).ok(), Some(json!(true)), "{source}");
        }
    }

    #[test]
    fn a_shared_value_nothing_else_holds_is_indexed_too() {
        // A helper's answer is owned by the interpreter: indexing it takes
        // the path that moves elements out of built-in containers.
        let b = bound(json!(null));
        let source = "parse_json('{\"a\": [1, {\"b\": \"c\"}]}').a[1].b == 'c'";
        assert_eq!(eval(source, &b).ok(), Some(json!(true)));
    }

    #[test]
    fn only_what_was_converted_whole_keeps_its_json() {
        let document = Arc::new(json!({"result": {"tools": [{"name": "a", "x": 1}]}}));
        let whole = json_at_to_val(&json_root(Arc::clone(&document)));
        assert_eq!(json_of(whole.as_ref()), Some(&*document));
        assert_eq!(val_to_json(whole.as_ref()).ok().as_ref(), Some(&*document));

        let read = ReadTree::whole_fields(&["id"]);
        let cut = json_to_val_read(&json_root(Arc::clone(&document)), &read);
        assert_eq!(
            json_of(cut.as_ref()),
            None,
            "a cut value has no JSON of its own"
        );
        assert_eq!(val_to_json(cut.as_ref()).ok(), Some(json!({})));
    }
}
