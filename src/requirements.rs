//! The requirement registry (`scenarios/requirements.yaml`): every rule the
//! built-in scenarios must cover, with its level, source and quote.

use serde::{Deserialize, Serialize};

use crate::builtin;
pub use crate::scenario::model::Provenance;
use crate::scenario::model::{Level, Scenario};
use crate::scenario::source::parse_yaml;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    pub id: String,
    pub level: String,
    pub profile: String,
    pub text: String,
    /// The cited document: a source id from scenarios/sources.yaml.
    pub document: String,
    /// Whose rule this is: the draft's, the MCP specification's, or this
    /// project's own judgment (documented in docs/interpretations.md).
    pub source: Provenance,
    #[serde(default)]
    pub section: Option<String>,
    #[serde(default)]
    pub quote: Option<String>,
    /// Scenario ids that cover the requirement.
    #[serde(default)]
    pub scenarios: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Registry {
    requirements: Vec<Requirement>,
}

/// Why the registry could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("requirements.yaml: {0}")]
pub struct RegistryError(String);

/// Parses a registry text.
pub fn parse(text: &str) -> Result<Vec<Requirement>, RegistryError> {
    let doc = parse_yaml(text).map_err(|e| RegistryError(e.to_string()))?;
    let registry: Registry =
        serde_json::from_value(doc.value).map_err(|e| RegistryError(e.to_string()))?;
    Ok(registry.requirements)
}

/// The built-in registry (empty when the file is missing).
pub fn all() -> Result<Vec<Requirement>, RegistryError> {
    builtin::file("requirements.yaml").map_or(Ok(Vec::new()), parse)
}

/// One requirement by id.
pub fn find(id: &str) -> Option<Requirement> {
    all().ok()?.into_iter().find(|r| r.id == id)
}

impl Requirement {
    /// The level as the scenario model knows it (`None` for a misspelt level;
    /// tests/requirements.rs rejects those).
    pub fn grade(&self) -> Option<Level> {
        serde_json::from_value(serde_json::Value::String(self.level.clone())).ok()
    }
}

/// `--drafts-only`: a scenario whose requirements are all this project's own
/// rules (`source: project`) is reported as INFO, so what remains graded is
/// what the drafts and the MCP specification themselves demand. Scenarios
/// naming no requirement, or one the registry does not know, keep their level.
pub fn drafts_only_with(registry: &[Requirement], scenarios: &mut [Scenario]) {
    for s in scenarios.iter_mut() {
        let project_only = !s.requirements.is_empty()
            && s.requirements.iter().all(|id| {
                registry
                    .iter()
                    .any(|r| &r.id == id && r.source == Provenance::Project)
            });
        if project_only {
            s.level = Level::Info;
        }
    }
}

/// [`drafts_only_with`] over the built-in registry.
pub fn drafts_only(scenarios: &mut [Scenario]) {
    drafts_only_with(&all().unwrap_or_default(), scenarios);
}

/// `drafts_only` when `on`, for a one-line call in the selection pipeline.
pub fn drafts_only_if(on: bool, mut scenarios: Vec<Scenario>) -> Vec<Scenario> {
    if on {
        drafts_only(&mut scenarios);
    }
    scenarios
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requirement(id: &str, source: Provenance) -> Requirement {
        Requirement {
            id: id.into(),
            level: "SHOULD".into(),
            profile: "p".into(),
            text: "t".into(),
            document: "interpretations".into(),
            source,
            section: None,
            quote: None,
            scenarios: Vec::new(),
        }
    }

    fn scenario(requirements: &[&str]) -> Scenario {
        let text = format!(
            "id: p/s\ntitle: t\nprofile: p\nlevel: SHOULD\nrequirements: [{}]\nsteps:\n  - request: tools/list\n",
            requirements.join(", ")
        );
        let mut loaded = crate::scenario::load::load_sources(&[("s.yaml".into(), text)])
            .unwrap_or_else(|e| panic!("{e}"));
        loaded.remove(0)
    }

    #[test]
    fn drafts_only_turns_project_only_scenarios_into_info() {
        let registry = [
            requirement("P-1", Provenance::Project),
            requirement("P-2", Provenance::Project),
            requirement("D-1", Provenance::Draft),
        ];
        let mut scenarios = [
            scenario(&["P-1"]),
            scenario(&["P-1", "P-2"]),
            scenario(&["P-1", "D-1"]),
            scenario(&["NO-SUCH"]),
            scenario(&[]),
        ];
        drafts_only_with(&registry, &mut scenarios);
        let levels: Vec<Level> = scenarios.iter().map(|s| s.level).collect();
        assert_eq!(
            levels,
            [
                Level::Info,
                Level::Info,
                Level::Should,
                Level::Should,
                Level::Should
            ]
        );
    }

    #[test]
    fn every_built_in_requirement_parses_with_a_source_and_a_level() {
        let all = all().unwrap_or_else(|e| panic!("{e}"));
        assert!(!all.is_empty());
        for r in &all {
            assert!(r.grade().is_some(), "{}: level {:?}", r.id, r.level);
        }
        // a requirement without `source` is refused
        let text = "requirements:\n  - {id: A, level: MUST, profile: p, text: t, document: d}\n";
        assert!(parse(text).is_err());
    }
}
