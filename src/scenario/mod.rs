//! Pure scenario logic: the model, loading with `file:line:col` errors, the
//! JSON pattern matcher, interpolation and CEL. No I/O beyond reading files.

pub mod expr;
pub mod interpolate;
pub mod load;
pub mod model;
pub mod pattern;
pub mod source;
