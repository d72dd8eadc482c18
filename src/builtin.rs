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
    load(files::FILES.iter().filter(|(p, _)| is_scenario(p)))
}

/// Loads the built-in scenarios of these paths (of [`index`]), in the
/// catalog's order.
pub fn scenarios_at(paths: &[&str]) -> Result<Vec<Scenario>, LoadErrors> {
    load(
        files::FILES
            .iter()
            .filter(|(p, _)| is_scenario(p) && paths.contains(p)),
    )
}

fn is_scenario(path: &str) -> bool {
    path != "requirements.yaml" && path != "sources.yaml"
}

fn load<'a>(
    files: impl Iterator<Item = &'a (&'static str, &'static str)>,
) -> Result<Vec<Scenario>, LoadErrors> {
    let sources: Vec<(String, String)> = files
        .map(|(p, t)| (format!("{BUILTIN_PREFIX}{p}"), t.to_string()))
        .collect();
    let mut loaded = load_sources(&sources)?;
    crate::sources::resolve_scenarios(&mut loaded);
    Ok(loaded)
}

/// What selecting among a built-in scenario reads, known without compiling
/// it (read from its file when mcp-conform was built).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Indexed {
    /// Its path under scenarios/ (for [`scenarios_at`]).
    pub path: &'static str,
    pub id: &'static str,
    pub profile: &'static str,
    pub requirements: &'static [&'static str],
}

/// Every built-in scenario as selection sees it, in the catalog's order;
/// None when a file did not give its id, profile and requirements plainly
/// when mcp-conform was built (loading it then says what is wrong).
pub fn index() -> Option<Vec<Indexed>> {
    let index = files::INDEX?;
    Some(
        index
            .iter()
            .map(|&(path, id, profile, requirements)| Indexed {
                path,
                id,
                profile,
                requirements,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_reads_every_scenario_as_loading_it_does() {
        let loaded = scenarios().unwrap_or_else(|e| panic!("{e}"));
        let index = index()
            .unwrap_or_else(|| panic!("a built-in file has no plain id, profile or requirements"));
        assert_eq!(index.len(), loaded.len());
        for (entry, s) in index.iter().zip(&loaded) {
            assert_eq!(format!("{BUILTIN_PREFIX}{}", entry.path), s.origin);
            assert_eq!(entry.id, s.id);
            assert_eq!(entry.profile, s.profile);
            assert_eq!(entry.requirements, s.requirements.as_slice());
        }
    }

    #[test]
    fn scenarios_at_loads_those_paths_in_catalog_order() {
        let paths = ["core/ping.yaml", "base/handshake.yaml"];
        let ids: Vec<String> = scenarios_at(&paths)
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(ids, ["base/handshake", "core/ping"]);
    }
}
