//! Pure scenario logic: the model, loading with `file:line:col` errors, the
//! JSON pattern matcher and the bounded diff of a mismatch, interpolation
//! and CEL. No I/O beyond reading files.

mod cel_distinct;
mod cel_lazy;
pub mod cel_shared;
pub mod cel_value;
pub mod diff;
pub mod expr;
mod expr_core;
pub mod expr_reads;
mod expr_regex;
mod expr_select;
pub mod generate;
pub mod interpolate;
mod json_set;
pub mod load;
pub mod model;
pub mod pattern;
pub mod source;
