//! JSON arrays and objects as CEL lists and maps that convert an element
//! only when an expression reaches it.
//!
//! Converting an answer whole before evaluating was most of what an
//! expression cost on large catalogs: `tool_names(all)` converted 10,000
//! tools (every schema, every annotation) to hand the helper the JSON it
//! already had, and `all.result.tools.map(t, t.name)` built a map per tool
//! to read one field. Here a list converts an item when it is indexed or
//! iterated to, a map its members (each lazy in turn) when one is selected,
//! and each keeps what it converted, so a value read twice is converted once.
//!
//! Where the interpreter needs the built-in value itself (equality with a
//! built-in list or map, a downcast, `+`), the whole is converted once, of
//! the elements already made. Errors (a missing key, an index out of
//! range) are the built-in types' own: an empty built-in container reports
//! them.

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use cel::common::traits::{self, Adder, Container, Indexer, Iterable, Sizer, Zeroer};
use cel::common::types::{
    CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, CelUInt, Kind, Type,
};
use cel::common::value::{Builtin, BuiltinRef, CowVal, StaticVal, Val};
use cel::ExecutionError;
use serde_json::Value;

use super::cel_shared::Shared;
use super::json_at::{json_item, json_member, json_member_at, json_root, JsonAt};

/// JSON to a CEL value. Integers become `int` (not `uint`) when they fit, so
/// `type(x) == int` and comparisons with negative literals work on any JSON
/// integer; larger ones `uint`, the rest `double`. Lists and maps keep the
/// JSON they were made from (see `cel_shared`).
pub fn json_to_val(value: Value) -> Box<dyn Val> {
    json_at_to_val(&json_root(Arc::new(value)))
}

/// [`json_to_val`] of a place in a document the caller holds.
pub fn json_at_to_val(at: &JsonAt) -> Box<dyn Val> {
    match *at.get() {
        Value::Null => Box::new(CelNull),
        Value::Bool(b) => Box::new(CelBool::from(*b)),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Box::new(CelInt::from(i)),
            (None, Some(u)) => Box::new(CelUInt::from(u)),
            _ => Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN))),
        },
        Value::String(s) => Shared::boxed(CelString::from(s.clone())),
        Value::Array(_) => Box::new(JsonList::new(at.clone())),
        Value::Object(_) => Box::new(JsonMap::new(at.clone())),
    }
}

/// The JSON `value` stands for, if it is a list or map made whole from JSON.
pub fn json_of(value: &dyn Val) -> Option<&Value> {
    place_of(value).map(|at| *at.get())
}

/// The place in a document `value` stands for, if it is a list or map
/// made whole from JSON: a result that is such a value can be bound as that
/// place, with no copy of the JSON.
pub fn json_at_of(value: &dyn Val) -> Option<JsonAt> {
    place_of(value).cloned()
}

/// A share of `value` (its conversions included), if it is a list or map
/// made whole from JSON.
pub fn json_val_of(value: &dyn Val) -> Option<Box<dyn Val>> {
    let any = value.as_any()?;
    if let Some(list) = any.downcast_ref::<JsonList>() {
        return Some(Box::new(list.clone()));
    }
    any.downcast_ref::<JsonMap>()
        .map(|map| Box::new(map.clone()) as Box<dyn Val>)
}

fn place_of(value: &dyn Val) -> Option<&JsonAt> {
    let any = value.as_any()?;
    if let Some(list) = any.downcast_ref::<JsonList>() {
        return Some(list.at());
    }
    any.downcast_ref::<JsonMap>().map(JsonMap::at)
}

/// Lists with more items than this find a string through a set of their
/// strings; shorter ones compare in order, which is faster than hashing.
const SCAN_LIMIT: usize = 12;

/// Values converted when first reached, one slot per item or member.
type Slots = Box<[OnceLock<Box<dyn Val>>]>;

/// A JSON array as a CEL list; clones share the conversions.
#[derive(Debug, Clone)]
pub struct JsonList(Arc<ListInner>);

#[derive(Debug)]
struct ListInner {
    at: JsonAt,
    items: Slots,
    /// The strings among the items, for `in` on long lists.
    strings: OnceLock<HashSet<Box<str>>>,
    whole: OnceLock<CelList<'static>>,
}

/// A JSON object as a CEL map with string keys; clones share the
/// conversions.
#[derive(Debug, Clone)]
pub struct JsonMap(Arc<MapInner>);

#[derive(Debug)]
struct MapInner {
    at: JsonAt,
    /// The keys in the object's order, for iteration.
    keys: OnceLock<Box<[Box<dyn Val>]>>,
    /// The members in the object's order, each converted when first read
    /// by its key (see [`JsonMap::member`]); the whole map shares them.
    members: OnceLock<Slots>,
    /// Made when the built-in map is asked for: the interpreter asks the
    /// operand of a `.f` or `[k]` whether it is an optional, which is asked
    /// of the built-in value (a selection on a loop's element does not ask:
    /// `select`), and equality compares built-in maps. Its members are
    /// the slots of `members`.
    whole: OnceLock<CelMap<'static>>,
}

impl JsonList {
    /// The list at `at`, which holds an array.
    pub fn new(at: JsonAt) -> Self {
        let len = at.get().as_array().map_or(0, Vec::len);
        JsonList(Arc::new(ListInner {
            items: (0..len).map(|_| OnceLock::new()).collect(),
            strings: OnceLock::new(),
            whole: OnceLock::new(),
            at,
        }))
    }

    pub fn json(&self) -> &Value {
        self.0.at.get()
    }

    /// The place in its document this list stands for.
    pub fn at(&self) -> &JsonAt {
        &self.0.at
    }

    fn item(&self, i: usize) -> &(dyn Val + 'static) {
        self.0.items[i]
            .get_or_init(|| json_at_to_val(&json_item(&self.0.at, i)))
            .as_ref()
    }

    fn whole(&self) -> &CelList<'static> {
        self.0.whole.get_or_init(|| {
            CelList::from(
                (0..self.0.items.len())
                    .map(|i| self.item(i).clone_as_boxed())
                    .collect::<Vec<_>>(),
            )
        })
    }

    fn strings(&self) -> &HashSet<Box<str>> {
        self.0.strings.get_or_init(|| {
            self.json()
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(Box::from)
                .collect()
        })
    }

    /// The position an int or uint index names, when it is in range; any
    /// other index goes to the built-in list for its answer or error.
    fn position(&self, idx: &dyn Val) -> Option<usize> {
        let at = match idx.get_type().kind() {
            Kind::Int => usize::try_from(*idx.downcast_ref::<CelInt>()?.inner()).ok()?,
            Kind::UInt => usize::try_from(*idx.downcast_ref::<CelUInt>()?.inner()).ok()?,
            _ => return None,
        };
        (at < self.0.items.len()).then_some(at)
    }
}

impl JsonMap {
    /// The map at `at`, which holds an object.
    pub fn new(at: JsonAt) -> Self {
        JsonMap(Arc::new(MapInner {
            keys: OnceLock::new(),
            members: OnceLock::new(),
            whole: OnceLock::new(),
            at,
        }))
    }

    /// The place in its document this map stands for.
    pub fn at(&self) -> &JsonAt {
        &self.0.at
    }

    fn object(&self) -> &serde_json::Map<String, Value> {
        static EMPTY: OnceLock<serde_json::Map<String, Value>> = OnceLock::new();
        self.0
            .at
            .get()
            .as_object()
            .unwrap_or_else(|| EMPTY.get_or_init(serde_json::Map::new))
    }

    fn keys(&self) -> &[Box<dyn Val>] {
        self.0.keys.get_or_init(|| {
            self.object()
                .keys()
                .map(|k| Box::new(CelString::from(k.clone())) as Box<dyn Val>)
                .collect()
        })
    }

    /// The member `key`, at position `i` of the object, converted once.
    /// Among a tool's dozen members it is reached by its position (hashing
    /// the key again cost more than the rest of reading it); the object's
    /// members can be reached by position only one after another, so a
    /// later one of a big object is found by its key.
    fn member_at(&self, i: usize, key: &str) -> &(dyn Val + 'static) {
        let members = self
            .0
            .members
            .get_or_init(|| (0..self.object().len()).map(|_| OnceLock::new()).collect());
        members[i]
            .get_or_init(|| {
                let at = if i < SCAN_LIMIT {
                    json_member_at(&self.0.at, i)
                } else {
                    json_member(&self.0.at, key)
                };
                json_at_to_val(&at)
            })
            .as_ref()
    }

    /// The member `key`, found by comparing keys (for small objects: a
    /// tool has a dozen at most): reading one field of each of 10,000
    /// tools then converts that field alone, where the built-in map made
    /// every member and a hash table per tool.
    fn member(&self, key: &str) -> Option<&(dyn Val + 'static)> {
        let i = self.object().keys().position(|k| k == key)?;
        Some(self.member_at(i, key))
    }

    /// The built-in map of the members, each converted when reached.
    fn whole(&self) -> &CelMap<'static> {
        self.0.whole.get_or_init(|| {
            CelMap::from(
                self.object()
                    .keys()
                    .enumerate()
                    .map(|(i, k)| {
                        let member = self.member_at(i, k).clone_as_boxed();
                        (CelMapKey::from(k.clone()), member)
                    })
                    .collect::<HashMap<_, _>>(),
            )
        })
    }
}

/// The built-in empty list and map: what they answer for an index or key
/// they lack is what a built-in container answers.
fn empty_list() -> &'static CelList<'static> {
    static EMPTY: OnceLock<CelList<'static>> = OnceLock::new();
    EMPTY.get_or_init(CelList::default)
}

fn empty_map() -> &'static CelMap<'static> {
    static EMPTY: OnceLock<CelMap<'static>> = OnceLock::new();
    EMPTY.get_or_init(CelMap::default)
}

/// Lends the elements of a lazy list or the keys of a lazy map.
struct Lending<'b> {
    next: usize,
    len: usize,
    at: Box<dyn Fn(usize) -> &'b (dyn Val + 'static) + 'b>,
}

impl<'b, 'v> traits::Iterator<'b, 'v> for Lending<'b> {
    fn next(&mut self) -> Option<&'b (dyn Val + 'v)> {
        if self.next == self.len {
            return None;
        }
        let item = (self.at)(self.next);
        self.next += 1;
        Some(item)
    }
}

/// The `Val` of a lazy container. What its built-in form is and does comes
/// from that form: its type, equality, `+`, downcasts. Reading it
/// (indexing, iteration, size, `in`) is the lazy value's own.
macro_rules! lazy_container_val {
    ($lazy:ty, $builtin:ident, $variant:ident) => {
        impl Val for $lazy {
            fn get_type(&self) -> &Type {
                <$builtin as Val>::cel_type()
            }

            fn cel_type() -> &'static Type {
                <$builtin as Val>::cel_type()
            }

            fn as_adder<'b, 'v>(&'b self) -> Option<&'b (dyn Adder + 'v)>
            where
                Self: 'v,
            {
                self.whole().as_adder()
            }

            fn as_container(&self) -> Option<&dyn Container> {
                Some(self)
            }

            fn as_indexer<'b, 'v>(&'b self) -> Option<&'b (dyn Indexer + 'v)>
            where
                Self: 'v,
            {
                Some(self)
            }

            /// Elements are shared, never moved out: the interpreter's copy
            /// of an element is a new reference to it.
            fn into_indexer<'v>(self: Box<Self>) -> Option<Box<dyn Indexer + 'v>>
            where
                Self: 'v,
            {
                Some(self)
            }

            fn as_iterable<'b, 'v>(&'b self) -> Option<&'b (dyn Iterable + 'v)>
            where
                Self: 'v,
            {
                Some(self)
            }

            fn as_sizer(&self) -> Option<&dyn Sizer> {
                Some(self)
            }

            fn as_zeroer(&self) -> Option<&dyn Zeroer> {
                Some(self)
            }

            fn equals(&self, other: &dyn Val) -> bool {
                self.whole().equals(other)
            }

            fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v>
            where
                Self: 'v,
            {
                Box::new(self.clone())
            }

            fn as_any(&self) -> Option<&dyn Any> {
                Some(self)
            }

            fn as_builtin<'b, 'v>(&'b self) -> BuiltinRef<'b, 'v>
            where
                Self: 'v,
            {
                self.whole().as_builtin()
            }

            fn into_builtin<'v>(self: Box<Self>) -> Option<Builtin<'v>>
            where
                Self: 'v,
            {
                Some(Builtin::$variant(self.whole().clone()))
            }
        }

        impl StaticVal for $lazy {}
    };
}

lazy_container_val!(JsonList, CelList, List);
lazy_container_val!(JsonMap, CelMap, Map);

impl Indexer for JsonList {
    fn get<'b, 'v>(&'b self, idx: &dyn Val) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        match self.position(idx) {
            Some(i) => Ok(CowVal::Borrowed(self.item(i))),
            None if matches!(idx.get_type().kind(), Kind::Int | Kind::UInt) => {
                empty_list().get(idx)
            }
            None => self.whole().get(idx),
        }
    }

    fn steal<'v>(self: Box<Self>, idx: &dyn Val) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        self.get(idx).map(CowVal::into_owned)
    }
}

impl Iterable for JsonList {
    fn iter<'b, 'v>(&'b self) -> Box<dyn traits::Iterator<'b, 'v> + 'b>
    where
        Self: 'v,
    {
        Box::new(Lending {
            next: 0,
            len: self.0.items.len(),
            at: Box::new(move |i| self.item(i)),
        })
    }
}

impl Container for JsonList {
    /// A string is equal to strings only, so on a long list it is looked
    /// up among them: `t.name in names` inside a loop over the tools was
    /// quadratic in the catalog.
    fn contains(&self, value: &dyn Val) -> Result<bool, ExecutionError> {
        match value.downcast_ref::<CelString>() {
            Some(text) if self.0.items.len() > SCAN_LIMIT => {
                Ok(self.strings().contains::<str>(text.inner()))
            }
            _ => Ok((0..self.0.items.len()).any(|i| self.item(i).equals(value))),
        }
    }
}

impl Sizer for JsonList {
    fn size(&self) -> CelInt {
        CelInt::from(self.0.items.len() as i64)
    }
}

impl Zeroer for JsonList {
    fn is_zero_value(&self) -> bool {
        self.0.items.is_empty()
    }
}

impl Indexer for JsonMap {
    fn get<'b, 'v>(&'b self, key: &dyn Val) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        match key.downcast_ref::<CelString>() {
            Some(name) if self.object().len() <= SCAN_LIMIT => match self.member(name.inner()) {
                Some(member) => Ok(CowVal::Borrowed(member)),
                None => empty_map().get(key),
            },
            _ => self.whole().get(key),
        }
    }

    fn steal<'v>(self: Box<Self>, key: &dyn Val) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        self.get(key).map(CowVal::into_owned)
    }
}

impl Iterable for JsonMap {
    /// The keys, in the object's order (a built-in map has none).
    fn iter<'b, 'v>(&'b self) -> Box<dyn traits::Iterator<'b, 'v> + 'b>
    where
        Self: 'v,
    {
        let keys = self.keys();
        Box::new(Lending {
            next: 0,
            len: keys.len(),
            at: Box::new(move |i| keys[i].as_ref()),
        })
    }
}

impl Container for JsonMap {
    fn contains(&self, key: &dyn Val) -> Result<bool, ExecutionError> {
        match key.downcast_ref::<CelString>() {
            Some(key) => Ok(self.object().contains_key(key.inner())),
            None => empty_map().contains(key),
        }
    }
}

impl Sizer for JsonMap {
    fn size(&self) -> CelInt {
        CelInt::from(self.object().len() as i64)
    }
}

impl Zeroer for JsonMap {
    fn is_zero_value(&self) -> bool {
        self.object().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::expr::Bindings;
    use crate::scenario::helpers::eval;

    fn bound() -> Bindings {
        let names: Vec<String> = (0..40).map(|i| format!("n{i}")).collect();
        let mut b = Bindings::default();
        b.insert(
            "x",
            json!({
                "list": [1, "a", {"k": [true]}],
                "map": {"z": 1, "a": ["c"], "m": {"q": null}},
                "names": names,
                "mixed": (0..20).map(|i| json!(i)).chain([json!("s"), json!(2.0)]).collect::<Vec<_>>(),
                "wide": (0..30).map(|i| (format!("k{i}"), json!(i))).collect::<serde_json::Map<_, _>>(),
            }),
        );
        b
    }

    fn is_true(source: &str) {
        assert_eq!(eval(source, &bound()).ok(), Some(json!(true)), "{source}");
    }

    #[test]
    fn lazy_values_equal_built_in_ones_both_ways() {
        is_true("x.list == [1, 'a', {'k': [true]}] && [1, 'a', {'k': [true]}] == x.list");
        is_true("x.map == {'a': ['c'], 'z': 1, 'm': {'q': null}} && {'z': 1, 'a': ['c'], 'm': {'q': null}} == x.map");
        is_true("x.list != [1, 'a'] && x.map.m != {}");
        is_true(
            "[x.map.m] == [{'q': null}] && x.map.m in [{'q': null}] && {'k': [true]} in x.list",
        );
    }

    #[test]
    fn indexing_selection_and_presence_as_built_in() {
        is_true("x.list[2].k[0] && x.list[1u] == 'a' && x.list[0.0] == 1");
        is_true("has(x.map.m.q) && !has(x.map.m.r) && size(x.map) == 3 && size(x.list) == 3");
        is_true("'a' in x.map && !('b' in x.map) && !(1 in x.map)");
        is_true("x.map.?r.orValue(5) == 5 && x.list[?7].orValue(0) == 0");
        is_true("x.list + ['z'] == [1, 'a', {'k': [true]}, 'z']");
    }

    #[test]
    fn errors_are_the_built_in_ones() {
        let b = bound();
        for (lazy, built_in) in [
            ("x.map.nope", "{'z': 1}.nope"),
            ("x.list[7]", "[1, 2][7]"),
            ("x.list[-1]", "[1, 2][-1]"),
            ("x.list['a']", "[1, 2]['a']"),
            ("x.map[1]", "{'z': 1}[1]"),
        ] {
            let lazy_error = eval(lazy, &b).map_err(|e| e.to_string());
            let built_in_error = eval(built_in, &b).map_err(|e| e.to_string());
            assert!(lazy_error.is_err(), "{lazy}");
            assert_eq!(lazy_error, built_in_error, "{lazy} against {built_in}");
        }
    }

    /// Members are reached by position in small objects and by key past
    /// the first dozen: either way each is the member of its own key.
    #[test]
    fn every_member_of_a_wide_map_is_its_own() {
        is_true("x.wide.k0 == 0 && x.wide.k11 == 11 && x.wide.k12 == 12 && x.wide.k29 == 29");
        is_true("x.wide.all(k, x.wide[k] == int(k.substring(1)))");
        is_true("x.wide == x.wide && size(x.wide) == 30 && !has(x.wide.k30)");
        is_true("x.map.a == ['c'] && x.map.m.q == null && x.map.z == 1");
    }

    #[test]
    fn a_map_iterates_its_keys_in_the_object_s_order() {
        is_true("x.map.map(k, k) == ['z', 'a', 'm']");
    }

    #[test]
    fn membership_in_a_long_list_is_equality() {
        is_true("'n39' in x.names && !('n40' in x.names) && !(3 in x.names)");
        // a string is looked up among the strings, a number among the numbers
        is_true("'s' in x.mixed && 2 in x.mixed && 19u in x.mixed && !('2' in x.mixed)");
    }

    #[test]
    fn helpers_read_the_json_a_lazy_value_stands_for() {
        is_true("size(keys(x.map)) == 3 && unique(x.names)");
    }
}
