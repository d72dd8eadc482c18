//! The expression engine: CEL (`assert`, `capture`, `requires`,
//! `for_each`, `${…}`) with the helper functions a spec editor needs.
//! Values cross its boundary as JSON.
//!
//! One door, three steps:
//! - [`Engine::new`] makes the language, with the standard helpers and the
//!   tables of [`Helper`]s its user declares (the scenarios' own, in
//!   `scenario::helpers`); a helper's row says what it reads.
//! - [`Engine::compile`] (or [`Programs::compile`], once per text while
//!   loading, collecting what the programs read) gives a [`Compiled`]
//!   program and [`Compiled::reads`], what it reads of each variable.
//! - [`Compiled::eval`] and its kin evaluate it against [`Bindings`], with
//!   the [`EvalOptions`] the bindings carry.
//!
//! The engine names no module of the scenario layer: it knows JSON
//! (`crate::json`), the run's schemas (`schema_errors`) and nothing else of
//! the harness.

mod bindings;
mod cel_lazy;
mod cel_shared;
mod cel_value;
mod distinct;
mod engine;
mod helper;
mod helpers;
mod json_at;
mod parse;
mod reads;
mod regex;
mod select;

pub use bindings::{Bindings, Bound, EvalOptions};
pub use engine::{Compiled, Engine, ExprError, Programs};
pub(crate) use helper::helper_table;
pub use helper::{call, list_arg, str_arg, strings, Args, ArgsRead, Helper, HelperResult};
#[cfg(test)]
pub(crate) use parse::agrees_with_environment_parser;
pub use reads::Reads;
