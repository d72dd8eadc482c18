//! JSON values built at the size they hold.
//!
//! `serde_json` grows each array and object one member at a time, so a
//! tool's object of 2 members, an array of 3 tags or a `_meta` of 1 member
//! keeps room for 4, and the allocator keeps a block half empty when asked
//! to shrink it by half. On a list of 10,000 tools that slack was about a
//! third of every kept page. Here members are gathered in a reused buffer
//! and each container is made once, at its final size. The value is the one
//! `serde_json::from_str` gives (see the tests): same members, same order,
//! a repeated key's last value in its first place.

use std::cell::RefCell;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Buffers kept for reuse per thread, one per level of nesting in use.
const POOLED_BUFFERS: usize = 32;
/// A buffer that grew past this many members is dropped, not kept.
const POOLED_CAPACITY: usize = 4096;

thread_local! {
    static ITEMS: RefCell<Vec<Vec<Value>>> = const { RefCell::new(Vec::new()) };
    static MEMBERS: RefCell<Vec<Vec<(String, Value)>>> = const { RefCell::new(Vec::new()) };
}

/// Parses `text` as one JSON document.
pub fn from_str(text: &str) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Compact.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// A seed that deserializes any JSON value compactly.
#[derive(Debug, Clone, Copy)]
pub struct Compact;

impl<'de> DeserializeSeed<'de> for Compact {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(CompactVisitor)
    }
}

/// A `Visitor<Value = Value>`'s methods for JSON's scalars, each kept as
/// `serde_json` keeps it (`expecting` too).
#[macro_export]
macro_rules! json_scalars {
    () => {
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any JSON value")
        }

        fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }

        fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
            Ok(Value::from(v))
        }

        fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
            Ok(Value::from(v))
        }

        fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
            Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
        }

        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_string()))
        }

        fn visit_string<E>(self, v: String) -> Result<Value, E> {
            Ok(Value::String(v))
        }

        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }

        fn visit_none<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
    };
}
pub use crate::json_scalars;

struct CompactVisitor;

impl<'de> Visitor<'de> for CompactVisitor {
    type Value = Value;

    json_scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        array_of(|items| {
            while let Some(v) = seq.next_element_seed(Compact)? {
                items.push(v);
            }
            Ok(())
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        object_of(|members| {
            while let Some(key) = map.next_key::<String>()? {
                members.push((key, map.next_value_seed(Compact)?));
            }
            Ok(())
        })
    }
}

/// The array of what `fill` pushes, allocated once at its length.
pub fn array_of<E>(fill: impl FnOnce(&mut Vec<Value>) -> Result<(), E>) -> Result<Value, E> {
    let mut buffer = ITEMS
        .with(|pool| pool.borrow_mut().pop())
        .unwrap_or_default();
    let filled = fill(&mut buffer);
    // Moved into a vector of its own length; the buffer keeps its room.
    let mut items = Vec::with_capacity(buffer.len());
    items.append(&mut buffer);
    give_back(&ITEMS, buffer);
    filled.map(|()| Value::Array(items))
}

/// The object of the members `fill` pushes, in their order (a repeated
/// key's last value in its first place), allocated once at its size.
pub fn object_of<E>(
    fill: impl FnOnce(&mut Vec<(String, Value)>) -> Result<(), E>,
) -> Result<Value, E> {
    let mut buffer = MEMBERS
        .with(|pool| pool.borrow_mut().pop())
        .unwrap_or_default();
    let filled = fill(&mut buffer);
    let mut object = Map::with_capacity(buffer.len());
    for (key, value) in buffer.drain(..) {
        object.insert(key, value);
    }
    give_back(&MEMBERS, buffer);
    filled.map(|()| Value::Object(object))
}

/// The object of `members` (see [`object_of`]): a pruned answer may be
/// kept for the rest of a run.
pub fn object_from(members: impl IntoIterator<Item = (String, Value)>) -> Value {
    let built: Result<Value, std::convert::Infallible> = object_of(|buffer| {
        buffer.extend(members);
        Ok(())
    });
    built.unwrap_or_else(|never| match never {})
}

fn give_back<T: 'static>(
    pool: &'static std::thread::LocalKey<RefCell<Vec<Vec<T>>>>,
    buffer: Vec<T>,
) {
    if buffer.capacity() > POOLED_CAPACITY {
        return;
    }
    pool.with(|pool| {
        let mut pool = pool.borrow_mut();
        if pool.len() < POOLED_BUFFERS {
            pool.push(buffer);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_as_serde_json(text: &str) {
        let ours = from_str(text).expect("parses");
        let theirs: Value = serde_json::from_str(text).expect("parses");
        assert_eq!(ours, theirs, "{text}");
        // Same order of members too (the maps keep insertion order).
        assert_eq!(ours.to_string(), theirs.to_string(), "{text}");
    }

    #[test]
    fn gives_what_serde_json_gives() {
        for text in [
            "null",
            "true",
            "-12",
            "18446744073709551615",
            "1.5e300",
            "\"a\\u00e9\\n\"",
            "[]",
            "{}",
            "[1, [2, [3, [4, {\"a\": [5]}]]], \"x\"]",
            "{\"b\": 1, \"a\": {\"z\": [true, null], \"y\": {}}, \"c\": [{}]}",
            "{\"k\": 1, \"j\": 2, \"k\": 3}",
        ] {
            same_as_serde_json(text);
        }
    }

    #[test]
    fn containers_are_exactly_as_large_as_their_members() {
        let v = from_str("{\"tags\": [\"a\", \"b\", \"c\"], \"m\": {\"x\": 1}}").expect("parses");
        assert_eq!(v["tags"].as_array().map(Vec::capacity), Some(3));
        assert!(v["m"].as_object().is_some_and(|m| m.len() == 1));
    }

    #[test]
    fn refuses_what_serde_json_refuses() {
        for text in ["", "[1,", "{\"a\" 1}", "[1] x", "{\"a\": nul}"] {
            assert!(from_str(text).is_err(), "{text}");
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let deep = "[".repeat(10_000);
        assert!(from_str(&deep).is_err());
    }

    #[test]
    fn an_error_inside_leaves_the_buffers_usable() {
        assert!(from_str("[[1, 2, {\"a\": [3, x]}]]").is_err());
        same_as_serde_json("[[1, 2], {\"a\": [3, 4]}]");
    }
}
