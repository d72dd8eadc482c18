//! Loading a `generate:` block: its generators, per-case steps and checks,
//! with the same `file:line:col` errors as the rest of the file.

use serde_json::{Map, Value};

use super::{get_u64, Loader};
use crate::scenario::generate::{
    Gen, Generate, TextKind, DEFAULT_CASES, DEFAULT_MAX_SHRINKS, FIRST_EXAMPLE,
};
use crate::scenario::model::{Expr, Step};

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
        let cases = get_u64(&obj, "cases").map_or(DEFAULT_CASES, |n| n as usize);
        let examples = self.build_examples(base, obj.get("examples"), &vars, cases);
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
            cases,
            max_shrinks: get_u64(&obj, "max_shrinks").map_or(DEFAULT_MAX_SHRINKS, |n| n as usize),
            vars,
            examples,
            steps,
            asserts,
            position: self.doc.position(base),
        }))
    }

    /// `examples:`: a list of maps from a variable to a CEL expression; the
    /// entries take cases 2, 3, … so each must fit in `cases`.
    fn build_examples(
        &mut self,
        base: &str,
        value: Option<&Value>,
        vars: &[(String, Gen)],
        cases: usize,
    ) -> Vec<Vec<(String, Expr)>> {
        let items = value.and_then(Value::as_array).cloned().unwrap_or_default();
        if !items.is_empty() && FIRST_EXAMPLE + items.len() > cases {
            self.error(
                &format!("{base}/examples"),
                format!(
                    "{} examples take cases {FIRST_EXAMPLE} to {}, beyond the {cases} cases",
                    items.len(),
                    FIRST_EXAMPLE + items.len() - 1
                ),
            );
        }
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let mut example = Vec::new();
            for (name, cel) in item.as_object().into_iter().flatten() {
                let pointer = format!("{base}/examples/{i}/{name}");
                if !vars.iter().any(|(v, _)| v == name) {
                    self.error(&pointer, format!("'{name}' is not a variable of vars"));
                    continue;
                }
                if let Some(cel) = cel.as_str() {
                    example.push((name.clone(), self.expr(&pointer, cel)));
                }
            }
            out.push(example);
        }
        out
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
        if let Some(from) = spec.get("near_miss").and_then(Value::as_str) {
            return Some(Gen::NearMiss {
                from: self.expr(&format!("{pointer}/near_miss"), from),
            });
        }
        if let Some(items) = spec.get("combinations").and_then(Value::as_array) {
            let names: Vec<String> = items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect();
            if names.is_empty() || names.len() != items.len() {
                self.error(pointer, "combinations takes a list of argument names");
            }
            return Some(Gen::Combinations(names));
        }
        self.error(
            pointer,
            "a generator is one of subset, pick, text, int, one_of, near_miss, combinations",
        );
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::load::load_str;

    fn with_generate(block: &str) -> String {
        format!(
            "id: base/p\ntitle: t\nprofile: base\nlevel: MUST\nrequirements: [BASE-ERR-01]\n\
             steps:\n  - id: all\n    request: tools/list\n{block}"
        )
    }

    const VARS: &str =
        "generate:\n  cases: 4\n  vars:\n    gs: { subset: \"[1, 2]\" }\n    n: { int: [0, 3] }\n";
    const CHECK: &str = "  assert:\n    - \"true\"\n";

    #[test]
    fn examples_name_variables_and_fit_in_the_cases() {
        let good = with_generate(&format!(
            "{VARS}  examples:\n    - {{ gs: \"[2, 2]\" }}\n    - {{ gs: \"[]\", n: \"3\" }}\n{CHECK}"
        ));
        let s = load_str("t.yaml", &good).unwrap_or_else(|e| panic!("{e:?}"));
        let g = s.generate.unwrap_or_else(|| panic!("no generate block"));
        assert_eq!(g.examples.len(), 2);
        assert_eq!(g.examples[1][1].0, "n");

        let unknown = with_generate(&format!(
            "{VARS}  examples:\n    - {{ nope: \"1\" }}\n{CHECK}"
        ));
        let e = format!(
            "{:?}",
            load_str("t.yaml", &unknown).expect_err("unknown var")
        );
        assert!(e.contains("'nope' is not a variable"), "{e}");

        let too_many = with_generate(&format!(
            "{VARS}  examples:\n    - {{ n: \"1\" }}\n    - {{ n: \"2\" }}\n    - {{ n: \"0\" }}\n{CHECK}"
        ));
        let e = format!("{:?}", load_str("t.yaml", &too_many).expect_err("too many"));
        assert!(e.contains("beyond the 4 cases"), "{e}");
    }

    #[test]
    fn near_miss_and_combinations_load_and_bad_ones_are_placed() {
        let good = with_generate(
            "generate:\n  cases: 4\n  vars:\n    nm: { near_miss: \"['a', 'b']\" }\n    present: { combinations: [limit, query] }\n  assert:\n    - \"true\"\n",
        );
        let s = load_str("t.yaml", &good).unwrap_or_else(|e| panic!("{e:?}"));
        let g = s.generate.unwrap_or_else(|| panic!("no generate block"));
        assert!(matches!(
            g.vars[0].1,
            crate::scenario::generate::Gen::NearMiss { .. }
        ));
        assert_eq!(
            g.vars[1].1,
            crate::scenario::generate::Gen::Combinations(vec!["limit".into(), "query".into()])
        );
        let bad = with_generate(
            "generate:\n  vars:\n    present: { combinations: [1] }\n  assert:\n    - \"true\"\n",
        );
        let e = format!("{:?}", load_str("t.yaml", &bad).expect_err("not names"));
        // Placed at the generator's own line (the schema refuses it first).
        assert!(
            e.contains("line: 11") && e.contains("generate.vars.present"),
            "{e}"
        );
    }

    #[test]
    fn handshake_false_needs_a_session_of_its_own() {
        let base = "id: base/p\ntitle: t\nprofile: base\nlevel: MUST\nrequirements: [BASE-ERR-01]\nsteps:\n";
        let good =
            format!("{base}  - session: raw\n    handshake: false\n    request: initialize\n");
        let s = load_str("t.yaml", &good).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(!s.steps[0].handshake);
        let bad = format!("{base}  - handshake: false\n    request: initialize\n");
        let e = format!("{:?}", load_str("t.yaml", &bad).expect_err("main session"));
        assert!(e.contains("handshake: false needs a `session:`"), "{e}");
    }
}
