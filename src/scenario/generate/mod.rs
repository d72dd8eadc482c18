//! Generated inputs (`generate:`): named generators drawn from what the
//! server itself listed and from free text, a seeded PRNG so that a case
//! depends only on (seed, scenario id, case index, the server's listing),
//! and shrinking of a failing case. Pure: the runner (src/run/property.rs)
//! evaluates the generators' lists, sends the requests and says which
//! candidates failed.

pub mod gen;
pub mod rng;
pub mod shrink;

use serde_json::{Map, Value};

use super::model::{Assertion, Step};
use super::source::Position;
pub use gen::{Edge, Gen, TextKind};
pub use rng::Rng;

/// Cases per scenario when `cases:` is not given.
pub const DEFAULT_CASES: usize = 20;
/// Shrink attempts (each one real request sequence) when `max_shrinks:` is not given.
pub const DEFAULT_MAX_SHRINKS: usize = 60;

/// One generated case: each variable's value, in the block's order.
pub type Case = Vec<(String, Value)>;

/// A `generate:` block: the property's per-case steps and checks.
#[derive(Debug, Clone, PartialEq)]
pub struct Generate {
    pub cases: usize,
    pub max_shrinks: usize,
    pub vars: Vec<(String, Gen)>,
    /// Run once per case, with every variable bound.
    pub steps: Vec<Step>,
    /// Checked after each case's steps.
    pub asserts: Vec<Assertion>,
    pub position: Position,
}

impl Generate {
    /// Draws case `index`; `sources[i]` is variable i's evaluated list.
    pub fn draw(&self, seed: u64, scenario: &str, index: usize, sources: &[Vec<Value>]) -> Case {
        let mut rng = Rng::for_case(seed, scenario, index);
        let edge = match index {
            0 => Some(Edge::Smallest),
            1 => Some(Edge::Largest),
            _ => None,
        };
        self.vars
            .iter()
            .enumerate()
            .map(|(i, (name, gen))| {
                let source = sources.get(i).map_or(&[][..], Vec::as_slice);
                (name.clone(), gen.draw_at(source, &mut rng, edge))
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

    #[test]
    fn a_case_depends_only_on_seed_scenario_index_and_listing() {
        let g = Generate {
            cases: 5,
            max_shrinks: 10,
            vars: vec![
                ("gs".into(), test_subset()),
                ("n".into(), Gen::Int { min: 0, max: 50 }),
            ],
            steps: Vec::new(),
            asserts: Vec::new(),
            position: Position::default(),
        };
        let listing = vec![vec![json!("a"), json!("b"), json!("c"), json!("d")], vec![]];
        let a = g.draw(0, "p/x", 3, &listing);
        assert_ne!(a, g.draw(1, "p/x", 3, &listing));
        assert_eq!(a, g.draw(0, "p/x", 3, &listing));
        let all: Vec<Case> = (0..20).map(|i| g.draw(0, "p/x", i, &listing)).collect();
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
}
