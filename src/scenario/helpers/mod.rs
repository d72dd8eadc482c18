//! The scenarios' expression language: the engine (`crate::expr`) with the
//! helpers of the profiles registered. Scenario code compiles through
//! [`engine`] (or a [`Programs`] of it while loading), never through an
//! engine of its own.

mod core;
mod profile;

use std::sync::OnceLock;

use serde_json::Value;

use crate::expr::{Bindings, Compiled, Engine, ExprError, Helper, Programs};

/// The profiles' helpers, by module.
const PROFILE: &[&[Helper]] = &[profile::HELPERS];

/// The engine of every scenario: made once, and the same for every run.
pub fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| Engine::new(PROFILE))
}

/// A table of programs for one load (see [`Programs`]).
pub fn programs() -> Programs {
    Programs::new(engine().clone())
}

/// Compiles an expression of the scenarios' language.
pub fn compile(source: &str) -> Result<Compiled, ExprError> {
    engine().compile(source)
}

/// Compiles and evaluates `source` once (tests and one-off checks; a
/// scenario's expressions are compiled when it is loaded).
pub fn eval(source: &str, bindings: &Bindings) -> Result<Value, ExprError> {
    compile(source)?.eval(bindings)
}

/// Compiles and evaluates an expression that must give a boolean.
pub fn eval_bool(source: &str, bindings: &Bindings) -> Result<bool, ExprError> {
    compile(source)?.eval_bool(bindings)
}

#[cfg(test)]
mod tests;
