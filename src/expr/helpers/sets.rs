//! JSON values as members of a set, for the set helpers (`same_set`,
//! `subset`, `unique`, `intersect`, `minus`).
//!
//! Two values are the same member when `json_equal` holds between them:
//! objects compare by their members whatever the key order, and numbers by
//! value (`1.0` is `1`). The helpers once wrote a canonical text of every
//! item and compared those; on lists of ten thousand tools, writing and
//! sorting every schema made `subset(found, all.result.tools)` the costliest
//! call of a run. Here a value is hashed and compared where it lies, with no
//! copy.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hash, Hasher};

use serde_json::{Number, Value};

use crate::expr::helper::{helper_table, list_arg, Args, Helper, HelperResult};
use crate::json::{integral_value, json_eq};

/// The helpers of this module.
pub const HELPERS: &[Helper] = helper_table! {
    same_set: 2, subset: 2, intersect: 2, minus: 2, unique: 1, json_equal: 2,
};

/// A borrowed JSON value that hashes and compares as a set member.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a>(pub &'a Value);

/// The distinct members of a list.
pub fn set_of(items: &[Value]) -> HashSet<Member<'_>> {
    items.iter().map(Member).collect()
}

impl PartialEq for Member<'_> {
    fn eq(&self, other: &Self) -> bool {
        json_eq(self.0, other.0)
    }
}

impl Eq for Member<'_> {}

/// Numbers equal by value must hash alike: as the integer they equal,
/// else as a double.
fn number_key(n: &Number) -> Result<i128, u64> {
    integral_value(n).ok_or_else(|| n.as_f64().unwrap_or_default().to_bits())
}

impl Hash for Member<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        write_member(self.0, state);
    }
}

/// Members of an object are hashed on their own and summed, so the sum
/// does not depend on the order the keys came in.
fn write_member<H: Hasher>(v: &Value, state: &mut H) {
    match v {
        Value::Null => state.write_u8(0),
        Value::Bool(b) => {
            state.write_u8(1);
            b.hash(state);
        }
        Value::Number(n) => {
            state.write_u8(2);
            number_key(n).hash(state);
        }
        Value::String(s) => {
            state.write_u8(3);
            s.hash(state);
        }
        Value::Array(items) => {
            state.write_u8(4);
            state.write_usize(items.len());
            for item in items {
                write_member(item, state);
            }
        }
        Value::Object(map) => {
            state.write_u8(5);
            state.write_usize(map.len());
            let entries = std::hash::BuildHasherDefault::<std::hash::DefaultHasher>::default();
            let sum = map.iter().fold(0u64, |sum, (k, v)| {
                let mut entry = entries.build_hasher();
                k.hash(&mut entry);
                write_member(v, &mut entry);
                sum.wrapping_add(entry.finish())
            });
            state.write_u64(sum);
        }
    }
}

fn same_set(a: &Args) -> HelperResult {
    Ok(Value::Bool(
        set_of(list_arg("same_set", &a[0])?) == set_of(list_arg("same_set", &a[1])?),
    ))
}

fn subset(a: &Args) -> HelperResult {
    let whole = set_of(list_arg("subset", &a[1])?);
    Ok(Value::Bool(
        list_arg("subset", &a[0])?
            .iter()
            .all(|x| whole.contains(&Member(x))),
    ))
}

/// The items of `a` that are (`keep`) or are not in `b`, in `a`'s order:
/// one pass over each list, where `a.filter(x, x in b)` scans `b` for every
/// item of `a` (quadratic on lists of thousands of tools).
fn sift(name: &str, a: &Args, keep: bool) -> HelperResult {
    let other = set_of(list_arg(name, &a[1])?);
    Ok(Value::Array(
        list_arg(name, &a[0])?
            .iter()
            .filter(|x| other.contains(&Member(x)) == keep)
            .cloned()
            .collect(),
    ))
}

fn intersect(a: &Args) -> HelperResult {
    sift("intersect", a, true)
}

fn minus(a: &Args) -> HelperResult {
    sift("minus", a, false)
}

fn unique(a: &Args) -> HelperResult {
    let items = list_arg("unique", &a[0])?;
    Ok(Value::Bool(set_of(items).len() == items.len()))
}

fn json_equal(a: &Args) -> HelperResult {
    Ok(Value::Bool(json_eq(&a[0], &a[1])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn values() -> Vec<Value> {
        vec![
            json!(null),
            json!(true),
            json!(false),
            json!(1),
            json!(1.0),
            json!(-0.0),
            json!(0),
            json!(2.5),
            json!(u64::MAX),
            json!(1e16),
            json!(10_000_000_000_000_000u64),
            json!(9_007_199_254_740_993u64),
            json!(9_007_199_254_740_992.0),
            json!("1"),
            json!("a\"b"),
            json!([]),
            json!([1, 2]),
            json!([2, 1]),
            json!([1.0, 2]),
            json!({}),
            json!({"a": 1, "b": [true]}),
            json!({"b": [true], "a": 1.0}),
            json!({"b": [true], "a": 2}),
            json!({"a": {"x": null}}),
            json!({"a": {"x": false}}),
        ]
    }

    #[test]
    fn members_that_are_equal_hash_alike() {
        let hasher = std::hash::RandomState::new();
        let mut equal_pairs = 0;
        for a in values() {
            for b in values() {
                assert_eq!(Member(&a) == Member(&b), json_eq(&a, &b), "{a} against {b}");
                if Member(&a) == Member(&b) {
                    equal_pairs += 1;
                    assert_eq!(
                        hasher.hash_one(Member(&a)),
                        hasher.hash_one(Member(&b)),
                        "{a} and {b} are equal, so they must hash alike"
                    );
                }
            }
        }
        // each value with itself, and the pairs equal across forms
        assert!(equal_pairs > values().len(), "{equal_pairs}");
    }

    #[test]
    fn members_are_equal_as_json_values_whatever_the_key_order() {
        let same = |a: Value, b: Value| Member(&a) == Member(&b);
        assert!(same(
            json!({"a": 1, "b": [true]}),
            json!({"b": [true], "a": 1.0})
        ));
        assert!(same(json!(1e16), json!(10_000_000_000_000_000u64)));
        assert!(!same(
            json!(9_007_199_254_740_993u64),
            json!(9_007_199_254_740_992.0)
        ));
        assert!(!same(json!([1, 2]), json!([2, 1])));
        assert!(!same(json!("1"), json!(1)));
        assert!(!same(json!({"a": null}), json!({})));
    }

    #[test]
    fn a_set_holds_each_member_once() {
        let items = vec![json!({"a": 1, "b": 2}), json!({"b": 2, "a": 1.0}), json!(3)];
        assert_eq!(set_of(&items).len(), 2);
    }
}
