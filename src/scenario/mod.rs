//! Pure scenario logic: the model, loading with `file:line:col` errors, the
//! JSON pattern matcher, interpolation and CEL. No I/O beyond reading files.

mod cel_value;
pub mod expr;
mod expr_reads;
pub mod interpolate;
pub mod load;
pub mod model;
pub mod pattern;
pub mod source;
