//! The built-in scenario catalog and requirement registry, embedded at build time.

use crate::scenario::load::{load_sources, LoadErrors};
use crate::scenario::model::{Scenario, BUILTIN_PREFIX};

mod files {
    include!(concat!(env!("OUT_DIR"), "/builtin_scenarios.rs"));
}

/// Every embedded file: (path under scenarios/, text).
pub fn files() -> &'static [(&'static str, &'static str)] {
    files::FILES
}

/// The text of an embedded file, e.g. `requirements.yaml`.
pub fn file(path: &str) -> Option<&'static str> {
    files::FILES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, t)| *t)
}

/// Loads the built-in scenarios (named `builtin:<path>` in errors).
pub fn scenarios() -> Result<Vec<Scenario>, LoadErrors> {
    let sources: Vec<(String, String)> = files::FILES
        .iter()
        .filter(|(p, _)| *p != "requirements.yaml" && *p != "sources.yaml")
        .map(|(p, t)| (format!("{BUILTIN_PREFIX}{p}"), t.to_string()))
        .collect();
    let mut loaded = load_sources(&sources)?;
    crate::sources::resolve_scenarios(&mut loaded);
    Ok(loaded)
}
