//! Reading one key of a mapping with its type checked. The schema refuses a
//! value of the wrong type before the file is built, and these refuse it
//! again, at its `file:line:col`, so that a value the schema lets through
//! (`timeout_ms: 2.0` is an integer to JSON Schema) or a schema that drifts
//! from the loader never turns into a key dropped without a word.

use serde_json::{Map, Value};

use super::{describe_place, Loader};
use crate::scenario::model::Level;
use crate::scenario::pattern::describe;
use crate::scenario::source::escape_pointer;

/// A mapping of a scenario file.
pub(super) type Obj = Map<String, Value>;

impl Loader<'_> {
    /// The value under `key` of the mapping at `pointer`, if `read` takes
    /// it; a value it does not take is an error saying it must be `what`.
    pub(super) fn field<'v, T>(
        &mut self,
        obj: &'v Obj,
        pointer: &str,
        key: &str,
        what: &str,
        read: impl FnOnce(&'v Value) -> Option<T>,
    ) -> Option<T> {
        let value = obj.get(key)?;
        let taken = read(value);
        if taken.is_none() {
            let at = format!("{pointer}/{}", escape_pointer(key));
            self.error(
                &at,
                format!(
                    "{} takes {what}, found {}",
                    describe_place(&at),
                    describe(value)
                ),
            );
        }
        taken
    }

    pub(super) fn text(&mut self, obj: &Obj, pointer: &str, key: &str) -> Option<String> {
        self.field(obj, pointer, key, "a string", |v| {
            v.as_str().map(str::to_string)
        })
    }

    /// A key the file must have: its absence is an error too.
    pub(super) fn required_text(&mut self, obj: &Obj, pointer: &str, key: &str) -> Option<String> {
        if !obj.contains_key(key) {
            self.error(
                pointer,
                format!("{} is missing required key {key}", describe_place(pointer)),
            );
            return None;
        }
        self.text(obj, pointer, key)
    }

    /// A count, a size or milliseconds: a whole number without a decimal
    /// point (`2.0` would otherwise be read as no value at all).
    pub(super) fn count(&mut self, obj: &Obj, pointer: &str, key: &str) -> Option<u64> {
        self.field(
            obj,
            pointer,
            key,
            "a whole number (written without a decimal point)",
            Value::as_u64,
        )
    }

    /// A `count` as a size.
    pub(super) fn size(&mut self, obj: &Obj, pointer: &str, key: &str) -> Option<usize> {
        self.count(obj, pointer, key)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
    }

    pub(super) fn flag(&mut self, obj: &Obj, pointer: &str, key: &str, default: bool) -> bool {
        self.field(obj, pointer, key, "true or false", Value::as_bool)
            .unwrap_or(default)
    }

    pub(super) fn level(&mut self, obj: &Obj, pointer: &str) -> Option<Level> {
        self.field(
            obj,
            pointer,
            "level",
            "one of MUST, SHOULD, MAY, INFO",
            |v| serde_json::from_value(v.clone()).ok(),
        )
    }

    pub(super) fn list<'v>(&mut self, obj: &'v Obj, pointer: &str, key: &str) -> &'v [Value] {
        self.field(obj, pointer, key, "a list", Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    pub(super) fn mapping<'v>(
        &mut self,
        obj: &'v Obj,
        pointer: &str,
        key: &str,
    ) -> Option<&'v Obj> {
        self.field(obj, pointer, key, "a mapping", Value::as_object)
    }

    /// A list of strings; an item of another type is an error at the item.
    pub(super) fn strings(&mut self, obj: &Obj, pointer: &str, key: &str) -> Vec<String> {
        let at = format!("{pointer}/{}", escape_pointer(key));
        let mut out = Vec::new();
        for (i, item) in self.list(obj, pointer, key).iter().enumerate() {
            match item.as_str() {
                Some(s) => out.push(s.to_string()),
                None => self.error(
                    &format!("{at}/{i}"),
                    format!(
                        "{} takes a string, found {}",
                        describe_place(&format!("{at}/{i}")),
                        describe(item)
                    ),
                ),
            }
        }
        out
    }

    /// Each item of a list of mappings, with its pointer; an item that is
    /// not a mapping is an error at the item.
    pub(super) fn mappings(&mut self, items: &[Value], at: &str) -> Vec<(String, Obj)> {
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let pointer = format!("{at}/{i}");
            match item.as_object() {
                Some(obj) => out.push((pointer, obj.clone())),
                None => self.error(
                    &pointer,
                    format!(
                        "{} must be a mapping, found {}",
                        describe_place(&pointer),
                        describe(item)
                    ),
                ),
            }
        }
        out
    }
}
