//! The requirement registry (`scenarios/requirements.yaml`): every rule the
//! built-in scenarios must cover, with its level, source and quote.

use serde::{Deserialize, Serialize};

use crate::builtin;
use crate::scenario::source::parse_yaml;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    pub id: String,
    pub level: String,
    pub profile: String,
    pub text: String,
    pub document: String,
    /// Whose rule this is: the draft's, the MCP specification's, or this
    /// project's own judgment (documented in docs/interpretations.md).
    #[serde(default)]
    pub source: Option<Provenance>,
    #[serde(default)]
    pub section: Option<String>,
    #[serde(default)]
    pub quote: Option<String>,
    /// Scenario ids that cover the requirement.
    #[serde(default)]
    pub scenarios: Vec<String>,
}

/// Where a requirement's rule comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provenance {
    /// An extension draft (or product design) the profile follows.
    Draft,
    /// A released MCP specification or JSON-RPC 2.0.
    McpSpec,
    /// This project's own reading where the drafts are silent or disagree.
    Project,
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
