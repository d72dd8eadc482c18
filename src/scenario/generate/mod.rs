//! Generated inputs (`generate:`): named generators drawn from what the
//! server itself listed and from free text, a seeded PRNG so that a case
//! depends only on (seed, scenario id, case index, the server's listing),
//! and shrinking of a failing case. Pure: the runner (src/run/property.rs)
//! evaluates the generators' lists, sends the requests and says which
//! candidates failed.

pub mod gen;
pub mod near;
pub mod shrink;

use serde_json::{Map, Value};

use super::model::{Assertion, Expr, Step};
use super::source::Position;
pub use crate::rng::Rng;
pub use gen::{Edge, Gen, TextKind};

/// Cases per scenario when `cases:` is not given.
pub const DEFAULT_CASES: usize = 20;
/// Shrink attempts (each one real request sequence) when `max_shrinks:` is not given.
pub const DEFAULT_MAX_SHRINKS: usize = 60;

/// One generated case: each variable's value, in the block's order.
pub type Case = Vec<(String, Value)>;

/// The first case index an `examples:` entry takes: cases 0 and 1 are the
/// edges (smallest, largest).
pub const FIRST_EXAMPLE: usize = 2;

/// A `generate:` block: the property's per-case steps and checks.
#[derive(Debug, Clone, PartialEq)]
pub struct Generate {
    pub cases: usize,
    pub max_shrinks: usize,
    pub vars: Vec<(String, Gen)>,
    /// `examples:`: cases 2, 3, … give these variables the value of a CEL
    /// expression over the setup steps' answers (the shape a server
    /// breaks on, tried under every seed); the variables an example does
    /// not name are drawn as usual.
    pub examples: Vec<Vec<(String, Expr)>>,
    /// Run once per case, with every variable bound.
    pub steps: Vec<Step>,
    /// Checked after each case's steps.
    pub asserts: Vec<Assertion>,
    pub position: Position,
}

impl Generate {
    /// Draws case `index`; `sources[i]` is variable i's evaluated list and
    /// `examples[k]` the evaluated values of `examples:` entry k (case
    /// [`FIRST_EXAMPLE`] + k).
    pub fn draw(
        &self,
        seed: u64,
        scenario: &str,
        index: usize,
        sources: &[Vec<Value>],
        examples: &[Case],
    ) -> Case {
        let mut rng = Rng::for_case(seed, scenario, index);
        let edge = match index {
            0 => Some(Edge::Smallest),
            1 => Some(Edge::Largest),
            _ => None,
        };
        let example = index
            .checked_sub(FIRST_EXAMPLE)
            .and_then(|k| examples.get(k));
        self.vars
            .iter()
            .enumerate()
            .map(|(i, (name, gen))| {
                let source = sources.get(i).map_or(&[][..], Vec::as_slice);
                // Drawn even when the example gives it, so that the other
                // variables get the same values as without the example.
                let drawn = gen.draw_case(source, &mut rng, edge, index);
                let given = example.and_then(|e| e.iter().find(|(n, _)| n == name));
                (name.clone(), given.map_or(drawn, |(_, v)| v.clone()))
            })
            .collect()
    }

    /// Generators paired with their lists, as the shrinker wants them.
    pub fn with_sources<'a>(&'a self, sources: &'a [Vec<Value>]) -> Vec<(&'a Gen, &'a [Value])> {
        self.vars
            .iter()
            .enumerate()
            .map(|(i, (_, g))| (g, sources.get(i).map_or(&[][..], Vec::as_slice)))
            .collect()
    }
}

/// A case as one JSON object (for findings and reports).
pub fn case_json(case: &Case) -> Value {
    Value::Object(case.iter().cloned().collect::<Map<String, Value>>())
}

/// A subset of `x` with repeats and unknown names, for the tests of this
/// module tree.
#[cfg(test)]
pub(crate) fn test_subset() -> Gen {
    Gen::Subset {
        from: super::model::Expr::unplaced("x").unwrap_or_else(|e| panic!("{e}")),
        min: 0,
        max: None,
        repeats: true,
        unknown: true,
        variants: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `cases` cases of a subset `gs` of the listing and an int `n` in 0..=50.
    fn subset_and_int(cases: usize) -> Generate {
        Generate {
            cases,
            max_shrinks: 10,
            vars: vec![
                ("gs".into(), test_subset()),
                ("n".into(), Gen::Int { min: 0, max: 50 }),
            ],
            examples: Vec::new(),
            steps: Vec::new(),
            asserts: Vec::new(),
            position: Position::default(),
        }
    }

    #[test]
    fn a_case_depends_only_on_seed_scenario_index_and_listing() {
        let g = subset_and_int(5);
        let listing = vec![vec![json!("a"), json!("b"), json!("c"), json!("d")], vec![]];
        let a = g.draw(0, "p/x", 3, &listing, &[]);
        assert_ne!(a, g.draw(1, "p/x", 3, &listing, &[]));
        assert_eq!(a, g.draw(0, "p/x", 3, &listing, &[]));
        let all: Vec<Case> = (0..20)
            .map(|i| g.draw(0, "p/x", i, &listing, &[]))
            .collect();
        // The edges come first: nothing, then everything.
        assert_eq!(
            all[0],
            vec![("gs".into(), json!([])), ("n".into(), json!(0))]
        );
        assert_eq!(
            all[1],
            vec![
                ("gs".into(), json!(["a", "b", "c", "d"])),
                ("n".into(), json!(50))
            ]
        );
        assert!(all.iter().any(|c| c != &a));
        assert_eq!(case_json(&a).as_object().map(|m| m.len()), Some(2));
    }

    #[test]
    fn examples_take_the_cases_after_the_edges_under_every_seed() {
        let g = subset_and_int(6);
        let listing = vec![vec![json!("a"), json!("b"), json!("c")], vec![]];
        let examples: Vec<Case> = vec![vec![("gs".into(), json!(["b", "b"]))]];
        for seed in 0..10 {
            let plain: Vec<Case> = (0..6)
                .map(|i| g.draw(seed, "p/x", i, &listing, &[]))
                .collect();
            let with: Vec<Case> = (0..6)
                .map(|i| g.draw(seed, "p/x", i, &listing, &examples))
                .collect();
            // The example's variable is given; the other is drawn as without it.
            assert_eq!(with[FIRST_EXAMPLE][0], ("gs".into(), json!(["b", "b"])));
            assert_eq!(with[FIRST_EXAMPLE][1], plain[FIRST_EXAMPLE][1]);
            // Every other case is untouched.
            for i in (0..6).filter(|i| *i != FIRST_EXAMPLE) {
                assert_eq!(with[i], plain[i], "case {i}");
            }
        }
    }
}
