//! Pure scenario logic: the model, loading with `file:line:col` errors, the
//! JSON pattern matcher and the bounded diff of a mismatch, interpolation,
//! and the profiles' helpers of the expression language (`crate::expr`).
//! No I/O beyond reading files.

pub mod diff;
pub mod generate;
pub mod helpers;
pub mod interpolate;
pub mod load;
pub mod model;
pub mod pattern;
pub mod source;
