//! Reading one key of a mapping with its type checked. The schema refuses a
//! value of the wrong type before the file is built, and these refuse it
//! again, at its `file:line:col`, so that a value the schema lets through
//! (`timeout_ms: 2.0` is an integer to JSON Schema) or a schema that drifts
//! from the loader never turns into a key dropped without a word.

use serde_json::{Map, Value};

use super::{describe_place, Loader};
use crate::scenario::model::{Level, SharedFinding};

/// Where shared findings are explained.
const SHARED_DOC: &str = "docs/popular-servers.md#";
use crate::scenario::pattern::describe;
use crate::scenario::source::escape_pointer;

/// A mapping of a scenario file.
pub(super) type Obj = Map<String, Value>;

/// The value under `key` of the mapping at `pointer`, as written. Every key
/// the builder reads goes through here or [`Loader::field`], so that a test
/// can compare what it reads with what the schema allows.
pub(super) fn raw<'v>(obj: &'v Obj, pointer: &str, key: &str) -> Option<&'v Value> {
    #[cfg(test)]
    tests::note(pointer, key);
    #[cfg(not(test))]
    let _ = pointer;
    obj.get(key)
}

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
        let value = raw(obj, pointer, key)?;
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
        if raw(obj, pointer, key).is_none() {
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

    /// `shared_finding: {note, see, transports}`: `note` and `see`
    /// required, `see` a section of docs/popular-servers.md
    /// (tests/it/scenarios.rs checks the anchor), `transports` the ones it
    /// is shared over (default: every one).
    pub(super) fn shared_finding(&mut self, root: &Obj) -> Option<SharedFinding> {
        let obj = self.mapping(root, "", "shared_finding")?.clone();
        let note = self.required_text(&obj, "/shared_finding", "note");
        let see = self.required_text(&obj, "/shared_finding", "see");
        let (note, see) = (note?, see?);
        if !see.starts_with(SHARED_DOC) {
            self.error(
                "/shared_finding/see",
                format!("shared_finding.see must name a section of {SHARED_DOC}…, found '{see}'"),
            );
        }
        if note.contains('\n') || note.trim().is_empty() {
            self.error(
                "/shared_finding/note",
                "shared_finding.note must be one line of text",
            );
        }
        // Each a known transport: the scenario schema says so first.
        let transports = self.strings(&obj, "/shared_finding", "transports");
        Some(SharedFinding {
            note,
            see,
            transports,
        })
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

#[cfg(test)]
pub(super) mod tests {
    use std::cell::RefCell;
    use std::collections::BTreeSet;

    use serde_json::Value;

    use crate::scenario::load::schema_document;
    use crate::scenario::load::tests::built_unchecked;

    thread_local! {
        /// (mapping kind, key) of every key the builder read on this thread.
        static READ: RefCell<BTreeSet<(&'static str, String)>> = const { RefCell::new(BTreeSet::new()) };
    }

    pub(super) fn note(pointer: &str, key: &str) {
        if let Some(kind) = kind(pointer) {
            READ.with(|r| r.borrow_mut().insert((kind, key.to_string())));
        }
    }

    /// Which mapping of a scenario file `pointer` is.
    fn kind(pointer: &str) -> Option<&'static str> {
        let parts: Vec<&str> = pointer
            .split('/')
            .skip(1)
            .map(|p| if p.parse::<usize>().is_ok() { "*" } else { p })
            .collect();
        Some(match parts.as_slice() {
            [] => "scenario",
            ["steps" | "cleanup", "*"] | ["generate", "steps", "*"] => "step",
            ["steps" | "cleanup", "*", "http"] | ["generate", "steps", "*", "http"] => "http",
            ["generate"] => "generate",
            ["generate", "vars", _] => "generator",
            [.., "assert", "*"] => "assertion",
            ["requires", "*"] | [.., "skip_unless"] => "requirement",
            _ => return None,
        })
    }

    /// The keys the schema allows in a kind of mapping.
    fn schema_keys(kind: &str) -> BTreeSet<String> {
        let one = |pointer: &str| vec![pointer.to_string()];
        let forms = match kind {
            "scenario" => one(""),
            "step" => one("/$defs/step"),
            "http" => one("/$defs/step/properties/http"),
            "generate" => one("/properties/generate"),
            "assertion" => one("/$defs/assertion/oneOf/1"),
            "requirement" => one("/$defs/requirement"),
            _ => {
                let generators = schema_document()
                    .pointer("/$defs/generator/oneOf")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                (0..generators)
                    .map(|i| format!("/$defs/generator/oneOf/{i}"))
                    .collect()
            }
        };
        forms
            .iter()
            .filter_map(|f| schema_document().pointer(&format!("{f}/properties")))
            .filter_map(Value::as_object)
            .flat_map(|m| m.keys().cloned())
            .collect()
    }

    /// Scenarios that, between them, take every branch of the builder: each
    /// action, each generator form, every list of checks.
    const EVERY_BRANCH: &[&str] = &[
        "id: base/a\ntitle: t\nprofile: base\nlevel: MUST\nrequires:\n  - { expr: \"true\", reason: r }\nassert: [{ expr: \"true\" }]\nspec: [{ doc: x }]\nsteps:\n  - { request: a, skip_unless: { expr: \"true\", reason: r } }\n  - { notify: a }\n  - { send_raw: a }\n  - { wait_notification: a }\n  - { sleep_ms: 1 }\n  - { http: { method: GET } }\ncleanup:\n  - { request: a }\n",
        "id: base/b\ntitle: t\nprofile: base\nlevel: MUST\nsteps:\n  - { id: all, request: a }\ngenerate:\n  vars:\n    a: { subset: \"[1]\" }\n    b: { pick: \"[1]\" }\n    c: { text: [words], words: \"['a']\" }\n    d: { int: [0, 1] }\n    e: { one_of: [1] }\n    f: { near_miss: \"['a']\" }\n    g: { combinations: [a] }\n  steps:\n    - { request: a }\n  assert: [\"true\"]\n",
    ];

    #[test]
    fn the_builder_reads_exactly_the_keys_the_schema_allows() {
        READ.with(|r| r.borrow_mut().clear());
        for text in EVERY_BRANCH {
            built_unchecked(text);
        }
        let read = READ.with(|r| r.borrow().clone());
        let mut wrong = Vec::new();
        for kind in [
            "scenario",
            "step",
            "http",
            "generate",
            "generator",
            "assertion",
            "requirement",
        ] {
            let read: BTreeSet<String> = read
                .iter()
                .filter(|(k, _)| *k == kind)
                .map(|(_, key)| key.clone())
                .collect();
            let allowed = schema_keys(kind);
            for key in read.difference(&allowed) {
                wrong.push(format!(
                    "{kind}: the loader reads '{key}', the schema refuses it"
                ));
            }
            for key in allowed.difference(&read) {
                wrong.push(format!(
                    "{kind}: the schema allows '{key}', the loader never reads it"
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
