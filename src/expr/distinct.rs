//! `list.distinct()` in time linear in the list.
//!
//! The lists extension compares each element with every distinct one kept
//! so far: on 10,000 tool names that is 50 million comparisons, and on
//! 100,000 one expression took over a minute. This overload keeps the
//! extension's answer (the first of each run of equal elements, in order,
//! with CEL's equality, so `1`, `1u` and `1.0` are one element) and only
//! narrows whom each element is compared with: elements that are equal
//! have the same `likeness` hash, so only elements with the same hash are
//! compared.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use cel::common::types::{CelBool, CelDouble, CelInt, CelList, CelString, CelUInt, Kind, DYN_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{Env, ExecutionError};

/// Declares the overload. It must come before the lists extension's: the
/// first overload that accepts a call is the one that runs.
pub fn declare(env: &mut Env) {
    // A clash would be a programming error the unit tests catch.
    let _ = env.add_member_overload("distinct", "dyn.distinct()", DYN_TYPE, vec![], distinct);
}

fn distinct<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [list] = args.as_slice() else {
        return Err(ExecutionError::function_error(
            "distinct",
            "takes no argument",
        ));
    };
    let list = list.as_ref();
    let iterable = match (list.get_type().kind(), list.as_iterable()) {
        (Kind::List, Some(iterable)) => iterable,
        _ => {
            return Err(ExecutionError::no_such_member_overload(
                "distinct",
                vec![list.get_type().name().to_owned()],
            ))
        }
    };
    let mut kept: Vec<&dyn Val> = Vec::new();
    let mut by_hash: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut items = iterable.iter();
    while let Some(item) = items.next() {
        let alike = by_hash.entry(likeness(item)).or_default();
        if !alike.iter().any(|&k| item.equals(kept[k])) {
            alike.push(kept.len());
            kept.push(item);
        }
    }
    Ok(CowVal::owned(CelList::from(
        kept.into_iter()
            .map(|item| item.clone_as_boxed())
            .collect::<Vec<_>>(),
    )))
}

/// A hash on which CEL-equal values agree: numbers hash by their value as
/// a double (so `1`, `1u` and `1.0` agree), lists by their elements in
/// order, maps by their entries in any order. Values of other types hash by
/// their type alone and are told apart by equality.
fn likeness(value: &dyn Val) -> u64 {
    let mut hasher = DefaultHasher::new();
    hash_into(value, &mut hasher);
    hasher.finish()
}

fn hash_into(value: &dyn Val, hasher: &mut DefaultHasher) {
    let kind = value.get_type().kind();
    match kind {
        Kind::String => {
            0u8.hash(hasher);
            if let Some(s) = value.downcast_ref::<CelString>() {
                s.inner().hash(hasher);
            }
        }
        Kind::Boolean => {
            1u8.hash(hasher);
            if let Some(b) = value.downcast_ref::<CelBool>() {
                b.inner().hash(hasher);
            }
        }
        Kind::Int | Kind::UInt | Kind::Double => {
            2u8.hash(hasher);
            if let Some(number) = as_double(value) {
                // -0.0 == 0.0; NaN equals nothing, so any hash will do.
                (if number == 0.0 { 0.0 } else { number })
                    .to_bits()
                    .hash(hasher);
            }
        }
        Kind::List => {
            3u8.hash(hasher);
            if let Some(items) = value.as_iterable() {
                let mut items = items.iter();
                while let Some(item) = items.next() {
                    hash_into(item, hasher);
                }
            }
        }
        Kind::Map => {
            4u8.hash(hasher);
            hash_entries(value).hash(hasher);
        }
        _ => 5u8.hash(hasher),
    }
}

/// The entries of a map, each hashed alone and summed, so their order
/// doesn't count.
fn hash_entries(map: &dyn Val) -> u64 {
    let (Some(keys), Some(indexer)) = (map.as_iterable(), map.as_indexer()) else {
        return 0;
    };
    let mut sum = 0u64;
    let mut keys = keys.iter();
    while let Some(key) = keys.next() {
        let mut hasher = DefaultHasher::new();
        hash_into(key, &mut hasher);
        if let Ok(member) = indexer.get(key) {
            hash_into(member.as_ref(), &mut hasher);
        }
        sum = sum.wrapping_add(hasher.finish());
    }
    sum
}

fn as_double(value: &dyn Val) -> Option<f64> {
    if let Some(i) = value.downcast_ref::<CelInt>() {
        return Some(*i.inner() as f64);
    }
    if let Some(u) = value.downcast_ref::<CelUInt>() {
        return Some(*u.inner() as f64);
    }
    value.downcast_ref::<CelDouble>().map(|d| *d.inner())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::expr::Bindings;
    use crate::scenario::helpers::eval;

    fn is_true(source: &str) {
        let mut b = Bindings::default();
        b.insert("x", json!({"names": ["b", "a", "b", "c", "a"], "tools": [{"n": 1, "g": ["x"]}, {"g": ["x"], "n": 1.0}, {"n": 2}]}));
        assert_eq!(eval(source, &b).ok(), Some(json!(true)), "{source}");
    }

    #[test]
    fn keeps_the_first_of_equal_elements_in_order() {
        is_true("[1, 2, 2, 3, 3, 3].distinct() == [1, 2, 3]");
        is_true("['b', 'b', 'c', 'a', 'c'].distinct() == ['b', 'c', 'a']");
        is_true("[1, 'b', 2, 'b'].distinct() == [1, 'b', 2]");
        is_true("[[1], [1], [2]].distinct() == [[1], [2]]");
        is_true("[].distinct() == []");
        is_true("x.names.distinct() == ['b', 'a', 'c']");
    }

    #[test]
    fn numbers_of_different_types_are_one_element() {
        is_true("[1, 1u, 1.0, 2u].distinct() == [1, 2u]");
        is_true("[0.0, -0.0].distinct() == [0.0]");
        is_true("[{'a': 1}, {'a': 1u}, {'a': 1.5}].distinct() == [{'a': 1}, {'a': 1.5}]");
        is_true("x.tools.distinct() == [{'n': 1, 'g': ['x']}, {'n': 2}]");
    }

    #[test]
    fn values_without_a_hash_of_their_own_still_compare() {
        is_true("[b'a', b'a', b'b'].distinct() == [b'a', b'b']");
        is_true("[duration('1s'), duration('1s')].distinct() == [duration('1s')]");
    }

    #[test]
    fn a_value_that_is_no_list_has_no_distinct() {
        let b = Bindings::default();
        let error = eval("'abc'.distinct()", &b).expect_err("a string has no distinct()");
        assert!(error.to_string().contains("distinct"), "{error}");
    }
}
