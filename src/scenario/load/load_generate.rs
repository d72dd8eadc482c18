//! Loading a `generate:` block: its generators, per-case steps and checks,
//! with the same `file:line:col` errors as the rest of the file.

use serde_json::{Map, Value};

use super::{raw, Loader};
use crate::scenario::generate::{
    Gen, Generate, TextKind, DEFAULT_CASES, DEFAULT_MAX_SHRINKS, FIRST_EXAMPLE,
};
use crate::scenario::model::Expr;
use crate::scenario::pattern::describe;
use crate::scenario::source::escape_pointer;

const DEFAULT_MAX_LEN: usize = 64;

impl Loader<'_> {
    pub(super) fn build_generate(
        &mut self,
        root: &Map<String, Value>,
        ids: &[String],
    ) -> Option<Box<Generate>> {
        let obj = self.mapping(root, "", "generate")?.clone();
        let base = "/generate";
        let mut vars = Vec::new();
        let specs = self
            .mapping(&obj, base, "vars")
            .cloned()
            .unwrap_or_default();
        for (name, spec) in &specs {
            let pointer = format!("{base}/vars/{}", escape_pointer(name));
            if ids.contains(name) {
                self.error(
                    &pointer,
                    format!("generated variable '{name}' has the name of a step"),
                );
            }
            let Some(spec) = spec.as_object() else {
                self.error(
                    &pointer,
                    format!("a generator is a mapping, found {}", describe(spec)),
                );
                continue;
            };
            if let Some(gen) = self.build_gen(&pointer, spec) {
                vars.push((name.clone(), gen));
            }
        }
        let cases = self.size(&obj, base, "cases").unwrap_or(DEFAULT_CASES);
        let examples = self.build_examples(base, &obj, &vars, cases);
        let mut seen: Vec<String> = ids.to_vec();
        let items = self.list(&obj, base, "steps");
        let steps = self.build_steps(items, &format!("{base}/steps"), &mut seen);
        let asserts = self.build_asserts(base, &obj);
        if steps.is_empty() && asserts.is_empty() {
            self.error(
                base,
                "a generate block checks something: give it steps or assert",
            );
        }
        Some(Box::new(Generate {
            cases,
            max_shrinks: self
                .size(&obj, base, "max_shrinks")
                .unwrap_or(DEFAULT_MAX_SHRINKS),
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
        obj: &Map<String, Value>,
        vars: &[(String, Gen)],
        cases: usize,
    ) -> Vec<Vec<(String, Expr)>> {
        let items = self.list(obj, base, "examples");
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
        for (at, item) in self.mappings(items, &format!("{base}/examples")) {
            let mut example = Vec::new();
            for name in item.keys() {
                let pointer = format!("{at}/{}", escape_pointer(name));
                if !vars.iter().any(|(v, _)| v == name) {
                    self.error(&pointer, format!("'{name}' is not a variable of vars"));
                    continue;
                }
                if let Some(cel) = self.text(&item, &at, name) {
                    example.push((name.clone(), self.expr(&pointer, &cel)));
                }
            }
            out.push(example);
        }
        out
    }

    /// A CEL key of a generator (`subset`, `pick`, `words`, …), compiled.
    fn gen_expr(&mut self, pointer: &str, spec: &Map<String, Value>, key: &str) -> Option<Expr> {
        let source = self.text(spec, pointer, key)?;
        Some(self.expr(&format!("{pointer}/{key}"), &source))
    }

    fn build_gen(&mut self, pointer: &str, spec: &Map<String, Value>) -> Option<Gen> {
        let flag = |loader: &mut Self, key: &str| loader.flag(spec, pointer, key, false);
        if spec.contains_key("subset") {
            let from = self.gen_expr(pointer, spec, "subset")?;
            let min = self.size(spec, pointer, "min").unwrap_or(0);
            let max = self.size(spec, pointer, "max");
            if max.is_some_and(|m| m < min) {
                self.error(pointer, "max is smaller than min");
            }
            return Some(Gen::Subset {
                from,
                min,
                max,
                repeats: flag(self, "repeats"),
                unknown: flag(self, "unknown"),
                variants: flag(self, "variants"),
            });
        }
        if spec.contains_key("pick") {
            return Some(Gen::Pick {
                from: self.gen_expr(pointer, spec, "pick")?,
                unknown: flag(self, "unknown"),
                variants: flag(self, "variants"),
            });
        }
        if spec.contains_key("text") {
            return self.build_text_gen(pointer, spec);
        }
        if let Some(bounds) = raw(spec, pointer, "int") {
            let pair = bounds.as_array().map(|b| {
                (
                    b.first().and_then(Value::as_i64),
                    b.get(1).and_then(Value::as_i64),
                    b.len(),
                )
            });
            let Some((Some(min), Some(max), 2)) = pair else {
                self.error(
                    &format!("{pointer}/int"),
                    "int takes [min, max], two whole numbers",
                );
                return None;
            };
            if max < min {
                self.error(pointer, "int: max is smaller than min");
            }
            return Some(Gen::Int { min, max });
        }
        if spec.contains_key("one_of") {
            let items = self.list(spec, pointer, "one_of");
            return Some(Gen::OneOf(items.to_vec()));
        }
        if spec.contains_key("near_miss") {
            return Some(Gen::NearMiss {
                from: self.gen_expr(pointer, spec, "near_miss")?,
            });
        }
        if spec.contains_key("combinations") {
            let items = self.list(spec, pointer, "combinations");
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

    /// `text: [kinds…]`, with `words:` for the `words` kind.
    fn build_text_gen(&mut self, pointer: &str, spec: &Map<String, Value>) -> Option<Gen> {
        let kinds = self.list(spec, pointer, "text");
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
        let words = self.gen_expr(pointer, spec, "words");
        if parsed.contains(&TextKind::Words) && words.is_none() {
            self.error(pointer, "text kind 'words' needs a `words:` list (CEL)");
        }
        Some(Gen::Text {
            kinds: parsed,
            words,
            max_len: self
                .size(spec, pointer, "max_len")
                .unwrap_or(DEFAULT_MAX_LEN),
        })
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
