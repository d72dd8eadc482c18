//! The helpers every user of the engine gets, one module per kind, each
//! with its table of helpers and what they read.

mod lists;
mod paths;
mod sets;
mod text;

use super::Helper;

/// Every standard helper, by module.
pub const STANDARD: &[&[Helper]] = &[sets::HELPERS, lists::HELPERS, text::HELPERS, paths::HELPERS];
