//! Loading a `generate:` block: its generators, per-case steps and checks,
//! with the same `file:line:col` errors as the rest of the file.

use serde_json::{Map, Value};

use super::{get_u64, Loader};
use crate::scenario::generate::{Gen, Generate, TextKind, DEFAULT_CASES, DEFAULT_MAX_SHRINKS};
use crate::scenario::model::Step;

const DEFAULT_MAX_LEN: usize = 64;

impl Loader<'_> {
    pub(super) fn build_generate(
        &mut self,
        value: Option<&Value>,
        ids: &[String],
    ) -> Option<Box<Generate>> {
        let obj = value?.as_object()?.clone();
        let base = "/generate";
        let mut vars = Vec::new();
        for (name, spec) in obj
            .get("vars")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let pointer = format!("{base}/vars/{name}");
            if ids.contains(name) {
                self.error(
                    &pointer,
                    format!("generated variable '{name}' has the name of a step"),
                );
            }
            if let Some(gen) = spec.as_object().and_then(|s| self.build_gen(&pointer, s)) {
                vars.push((name.clone(), gen));
            }
        }
        let mut steps: Vec<Step> = Vec::new();
        let mut seen: Vec<String> = ids.to_vec();
        for (i, step) in obj
            .get("steps")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let pointer = format!("{base}/steps/{i}");
            if let Some(step) = step.as_object().and_then(|s| self.build_step(&pointer, s)) {
                if let Some(id) = &step.id {
                    if seen.contains(id) {
                        self.error(
                            &format!("{pointer}/id"),
                            format!("step id '{id}' is used twice"),
                        );
                    }
                    seen.push(id.clone());
                }
                steps.push(step);
            }
        }
        let asserts = self.build_asserts(base, obj.get("assert"));
        if steps.is_empty() && asserts.is_empty() {
            self.error(
                base,
                "a generate block checks something: give it steps or assert",
            );
        }
        Some(Box::new(Generate {
            cases: get_u64(&obj, "cases").map_or(DEFAULT_CASES, |n| n as usize),
            max_shrinks: get_u64(&obj, "max_shrinks").map_or(DEFAULT_MAX_SHRINKS, |n| n as usize),
            vars,
            steps,
            asserts,
            position: self.doc.position(base),
        }))
    }

    fn build_gen(&mut self, pointer: &str, spec: &Map<String, Value>) -> Option<Gen> {
        let flag = |key: &str| spec.get(key).and_then(Value::as_bool).unwrap_or(false);
        let size = |key: &str| spec.get(key).and_then(Value::as_u64).map(|n| n as usize);
        if let Some(from) = spec.get("subset").and_then(Value::as_str) {
            let (min, max) = (size("min").unwrap_or(0), size("max"));
            if max.is_some_and(|m| m < min) {
                self.error(pointer, "max is smaller than min");
            }
            return Some(Gen::Subset {
                from: self.expr(&format!("{pointer}/subset"), from),
                min,
                max,
                repeats: flag("repeats"),
                unknown: flag("unknown"),
                variants: flag("variants"),
            });
        }
        if let Some(from) = spec.get("pick").and_then(Value::as_str) {
            return Some(Gen::Pick {
                from: self.expr(&format!("{pointer}/pick"), from),
                unknown: flag("unknown"),
                variants: flag("variants"),
            });
        }
        if let Some(kinds) = spec.get("text").and_then(Value::as_array) {
            let mut parsed = Vec::new();
            for (i, k) in kinds.iter().enumerate() {
                match k.as_str().and_then(TextKind::parse) {
                    Some(kind) => parsed.push(kind),
                    None => {
                        let names: Vec<&str> = TextKind::ALL.iter().map(|(n, _)| *n).collect();
                        self.error(
                            &format!("{pointer}/text/{i}"),
                            format!("unknown text kind {k}; known: {}", names.join(", ")),
                        );
                    }
                }
            }
            let words = spec
                .get("words")
                .and_then(Value::as_str)
                .map(|w| self.expr(&format!("{pointer}/words"), w));
            if parsed.contains(&TextKind::Words) && words.is_none() {
                self.error(pointer, "text kind 'words' needs a `words:` list (CEL)");
            }
            return Some(Gen::Text {
                kinds: parsed,
                words,
                max_len: size("max_len").unwrap_or(DEFAULT_MAX_LEN),
            });
        }
        if let Some(bounds) = spec.get("int").and_then(Value::as_array) {
            let (Some(min), Some(max)) = (
                bounds.first().and_then(Value::as_i64),
                bounds.get(1).and_then(Value::as_i64),
            ) else {
                self.error(pointer, "int takes [min, max]");
                return None;
            };
            if max < min {
                self.error(pointer, "int: max is smaller than min");
            }
            return Some(Gen::Int { min, max });
        }
        if let Some(items) = spec.get("one_of").and_then(Value::as_array) {
            return Some(Gen::OneOf(items.clone()));
        }
        self.error(
            pointer,
            "a generator is one of subset, pick, text, int, one_of",
        );
        None
    }
}
