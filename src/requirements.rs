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
    /// What a level above the quote's own keyword rests on (None: the
    /// keyword itself). docs/interpretations.md#levels-on-a-basis gives the
    /// reason for each requirement that names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<Basis>,
    /// Scenario ids that cover the requirement.
    #[serde(default)]
    pub scenarios: Vec<String>,
    /// Whose rule it is on live traffic: the trace rules of `watch` and
    /// `client` judge clients too, the scenarios only servers.
    #[serde(default, skip_serializing_if = "RuleSide::is_server")]
    pub side: RuleSide,
    /// Ids of the trace rules (rules/trace/*.yaml) that cite the requirement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
}

/// The side a requirement binds: a server (every scenario's), a client, or
/// both (JSON-RPC's rules on every message).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleSide {
    #[default]
    Server,
    Client,
    Both,
}

impl RuleSide {
    fn is_server(&self) -> bool {
        *self == RuleSide::Server
    }
}

/// The section of docs/interpretations.md that gives each basis its reason.
pub const BASIS_ANCHOR: &str = "levels-on-a-basis";

/// Why a requirement may be graded above the RFC 2119 keyword of its quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// The document's own schema makes the field or shape required.
    Schema,
    /// The core behaviour the document defines in its specification text,
    /// without a keyword (what a `query` or a `filter` means).
    Definition,
}

impl Basis {
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Schema => "schema",
            Basis::Definition => "definition",
        }
    }
}

/// The strongest RFC 2119 keyword a quote puts on servers, as a level
/// (`None`: the quote has no keyword for servers). A sentence whose keyword
/// is preceded by a client as its subject ("the client MUST provide …") binds
/// clients, and a rule on clients never fails a server, so it is not counted.
pub fn keyword_ceiling(quote: &str) -> Option<Level> {
    keyword_ceiling_for(quote, RuleSide::Server)
}

/// The strongest RFC 2119 keyword a quote puts on `side`: a sentence whose
/// subject is the other side does not count (for `Both`, every sentence does).
pub fn keyword_ceiling_for(quote: &str, side: RuleSide) -> Option<Level> {
    quote
        .split(['.', ';', '\n', '…', ':'])
        .filter_map(|s| sentence_keyword(s, side))
        .min()
}

/// The level an RFC 2119 keyword (one word, upper case as the texts write
/// it) sets; None for any other word.
pub fn keyword_level(word: &str) -> Option<Level> {
    const KEYWORDS: [(&str, Level); 7] = [
        ("MUST", Level::Must),
        ("REQUIRED", Level::Must),
        ("SHALL", Level::Must),
        ("SHOULD", Level::Should),
        ("RECOMMENDED", Level::Should),
        ("MAY", Level::May),
        ("OPTIONAL", Level::May),
    ];
    KEYWORDS.iter().find(|(k, _)| *k == word).map(|(_, l)| *l)
}

/// The strongest keyword of one sentence, unless it binds the side other
/// than `side`: the nearest of "client" and "server" before the first
/// keyword is its subject.
fn sentence_keyword(sentence: &str, side: RuleSide) -> Option<Level> {
    let words: Vec<&str> = sentence
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let first = words.iter().position(|w| keyword_level(w).is_some())?;
    let subject = words[..first].iter().rev().find_map(|w| {
        let w = w.to_ascii_lowercase();
        (w.starts_with("client") || w.starts_with("server")).then_some(w)
    });
    let other = match side {
        RuleSide::Server => "client",
        RuleSide::Client => "server",
        RuleSide::Both => "",
    };
    if !other.is_empty() && subject.is_some_and(|w| w.starts_with(other)) {
        return None;
    }
    words[first..].iter().filter_map(|w| keyword_level(w)).min()
}

impl Requirement {
    /// The level as reports print it: "MUST", or "MUST, basis: definition".
    pub fn level_label(&self) -> String {
        match self.basis {
            Some(b) => format!("{}, basis: {}", self.level, b.as_str()),
            None => self.level.clone(),
        }
    }

    /// Why the level rests on its basis: the requirement's row of
    /// docs/interpretations.md#levels-on-a-basis (None without a basis).
    pub fn basis_reason(&self) -> Option<String> {
        self.basis?;
        let section = crate::sources::interpretation(BASIS_ANCHOR)?;
        let prefix = format!("| {} |", self.id);
        let row = section.lines().find(|l| l.starts_with(&prefix))?;
        let cells: Vec<&str> = row.trim_matches('|').split(" | ").collect();
        cells.last().map(|c| c.trim().to_string())
    }

    /// The level's ceiling: at most the quote's keyword, unless a basis is named.
    pub fn level_exceeds_text(&self) -> bool {
        let (Some(level), None) = (self.grade(), self.basis) else {
            return false;
        };
        let ceiling = self
            .quote
            .as_deref()
            .and_then(|q| keyword_ceiling_for(q, self.side))
            .unwrap_or(Level::Should);
        // Level orders MUST < SHOULD < MAY < INFO: a smaller level is stronger.
        level < ceiling
    }
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

/// The built-in registry, read once (empty when it cannot be read; the
/// tests read it with [`all`] and fail on an error).
fn cached() -> &'static [Requirement] {
    static REGISTRY: std::sync::OnceLock<Vec<Requirement>> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| all().unwrap_or_default())
}

/// "ID: basis" for each of these requirements whose level rests on a basis.
pub fn bases_of(ids: &[String]) -> Vec<String> {
    ids.iter()
        .filter_map(|id| {
            let r = cached().iter().find(|r| &r.id == id)?;
            Some(format!("{id}: {}", r.basis?.as_str()))
        })
        .collect()
}

/// The level of a requirement of the built-in registry.
pub fn level_of(id: &str) -> Option<Level> {
    cached().iter().find(|r| r.id == id)?.grade()
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
            basis: None,
            scenarios: Vec::new(),
            side: RuleSide::Server,
            rules: Vec::new(),
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
    fn the_keyword_ceiling_is_the_strongest_keyword_on_servers() {
        assert_eq!(
            keyword_ceiling("Servers MUST declare it."),
            Some(Level::Must)
        );
        assert_eq!(
            keyword_ceiling("Invalid cursors SHOULD result in -32602."),
            Some(Level::Should)
        );
        assert_eq!(
            keyword_ceiling("Servers MAY omit it; they SHOULD not."),
            Some(Level::Should)
        );
        assert_eq!(keyword_ceiling("-32602 Invalid params"), None);
        // a must on the client binds no server
        assert_eq!(
            keyword_ceiling("Pagination is handled through the cursor, but the client **MUST** provide the query."),
            None
        );
        assert_eq!(
            keyword_ceiling(
                "When a server's tool definition includes it, conforming clients MUST mirror it"
            ),
            None
        );
        assert_eq!(
            keyword_ceiling("If the server receives a request it MUST respond"),
            Some(Level::Must)
        );
        // "must" in lower case is not a keyword
        assert_eq!(keyword_ceiling("it must be so"), None);
        // on a client's side the server's sentences do not count
        let both = "The server MUST answer. The client SHOULD wait.";
        assert_eq!(keyword_ceiling(both), Some(Level::Must));
        assert_eq!(
            keyword_ceiling_for(both, RuleSide::Client),
            Some(Level::Should)
        );
        assert_eq!(keyword_ceiling_for(both, RuleSide::Both), Some(Level::Must));
    }

    #[test]
    fn a_level_above_its_text_needs_a_basis() {
        let mut r = requirement("A", Provenance::Draft);
        r.level = "MUST".into();
        r.quote = Some("Includes a name.".into());
        assert!(r.level_exceeds_text());
        r.basis = Some(Basis::Schema);
        assert!(!r.level_exceeds_text());
        r.basis = None;
        r.quote = Some("Servers MUST include a name.".into());
        assert!(!r.level_exceeds_text());
        r.level = "SHOULD".into();
        r.quote = Some("Servers MAY include a name.".into());
        assert!(r.level_exceeds_text());
        r.quote = Some("Names are unique.".into());
        assert!(!r.level_exceeds_text(), "no keyword: SHOULD at most");
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
