//! Reporters: each consumes the runner's events and writes one format.

pub mod console;
pub mod diff;
