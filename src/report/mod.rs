//! Reporters: each consumes the runner's events (or a [`data::ReportData`]
//! collected from them) and writes one format. None of them runs anything.

pub mod console;
pub mod data;
pub mod drafts;
pub mod evidence;
pub mod github;
pub mod html;
mod html_problems;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod matrix;
pub mod overview;

/// A file format: renders a finished run as text.
pub type Renderer = fn(&data::ReportData) -> String;
