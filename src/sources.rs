//! The source registry (`scenarios/sources.yaml`): the public documents that
//! scenario `spec:` entries and requirements cite, with their status and
//! where a reader opens them; and this project's own rules
//! (`docs/interpretations.md`, embedded so `explain` works without the source tree).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::scenario::model::{Provenance, Scenario, SpecRef};
use crate::scenario::source::parse_yaml;

/// The id of this project's own rules document.
pub const INTERPRETATIONS: &str = "interpretations";

/// The project's interpretations document, as shipped.
pub const INTERPRETATIONS_TEXT: &str = include_str!("../docs/interpretations.md");
/// The source registry, embedded here (not read through `builtin`, which
/// loads scenarios and so depends on this module).
const SOURCES_TEXT: &str = include_str!("../scenarios/sources.yaml");

/// How far a document has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    #[serde(rename = "draft")]
    Draft,
    #[serde(rename = "closed")]
    Closed,
    #[serde(rename = "accepted")]
    Accepted,
    #[serde(rename = "final")]
    Final,
    #[serde(rename = "product design")]
    ProductDesign,
    #[serde(rename = "project")]
    Project,
    /// An earlier text of a document, replaced by a newer one in the same place.
    #[serde(rename = "superseded")]
    Superseded,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Draft => "draft",
            Status::Closed => "closed",
            Status::Accepted => "accepted",
            Status::Final => "final",
            Status::ProductDesign => "product design",
            Status::Project => "project",
            Status::Superseded => "superseded",
        }
    }
}

/// One cited document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub id: String,
    /// The public name.
    pub title: String,
    pub status: Status,
    /// Whose rule a quote from it is.
    pub provenance: Provenance,
    /// Where a reader opens it.
    #[serde(default)]
    pub url: Option<String>,
    /// Further public places (pull requests, schema files).
    #[serde(default)]
    pub links: Vec<String>,
    /// A document inside this repository (this project's own rules).
    #[serde(default)]
    pub file: Option<String>,
    /// When this text of the document was written, for a draft quoted at
    /// one commit: YYYY-MM-DD, or the known bound ("before YYYY-MM-DD").
    #[serde(default)]
    pub date: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
}

impl Source {
    /// Where to read `section` of it: the public URL, or the repository file
    /// with the section as its anchor.
    pub fn location(&self, section: Option<&str>) -> Option<String> {
        if let Some(url) = &self.url {
            return Some(url.clone());
        }
        let file = self.file.as_ref()?;
        Some(match section {
            Some(anchor) => format!("{file}#{anchor}"),
            None => file.clone(),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Registry {
    sources: Vec<Source>,
}

/// Why the source registry could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("sources.yaml: {0}")]
pub struct SourcesError(String);

/// Parses a registry text; ids must be unique.
pub fn parse(text: &str) -> Result<Vec<Source>, SourcesError> {
    let doc = parse_yaml(text).map_err(|e| SourcesError(e.to_string()))?;
    let registry: Registry =
        serde_json::from_value(doc.value).map_err(|e| SourcesError(e.to_string()))?;
    let mut seen = std::collections::BTreeSet::new();
    for s in &registry.sources {
        if !seen.insert(s.id.as_str()) {
            return Err(SourcesError(format!(
                "source id '{}' is listed twice",
                s.id
            )));
        }
    }
    Ok(registry.sources)
}

/// The built-in registry (empty when the file is missing).
pub fn all() -> Result<&'static [Source], SourcesError> {
    static ALL: OnceLock<Result<Vec<Source>, SourcesError>> = OnceLock::new();
    ALL.get_or_init(|| parse(SOURCES_TEXT))
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

/// One built-in source by id.
pub fn find(id: &str) -> Option<&'static Source> {
    all().ok()?.iter().find(|s| s.id == id)
}

/// Fills in what a reader needs from the registry: the source's public name,
/// whose rule it is, and where to read it (a deep link written in the
/// scenario wins). A `doc` the registry does not know is left as written.
pub fn resolve_with(registry: &[Source], spec: &mut SpecRef) {
    let Some(source) = registry.iter().find(|s| s.id == spec.doc) else {
        return;
    };
    spec.title = Some(source.title.clone());
    spec.provenance = Some(source.provenance);
    if spec.url.is_none() {
        spec.url = source.location(spec.section.as_deref());
    }
}

/// Names each cited source of each scenario and its location, for reports:
/// done once the scenarios are loaded, so that the loader stays pure.
pub fn resolve_scenarios(scenarios: &mut [Scenario]) {
    for s in scenarios {
        s.spec.iter_mut().for_each(resolve);
    }
}

/// [`resolve_with`] over the built-in registry.
pub fn resolve(spec: &mut SpecRef) {
    if let Ok(registry) = all() {
        resolve_with(registry, spec);
    }
}

/// The anchors of the interpretations document, in order, each with its text
/// (up to the next anchor). Anchors are written `<a id="NAME"></a>`.
pub fn interpretation_sections(text: &str) -> Vec<(&str, &str)> {
    const OPEN: &str = "<a id=\"";
    let mut starts = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find(OPEN) {
        let name_start = at + i + OPEN.len();
        let Some(len) = text[name_start..].find('"') else {
            break;
        };
        starts.push((name_start, &text[name_start..name_start + len]));
        at = name_start + len;
    }
    starts
        .iter()
        .enumerate()
        .map(|(k, (begin, name))| {
            let end = starts
                .get(k + 1)
                .map_or(text.len(), |(b, _)| *b - OPEN.len());
            (*name, &text[*begin..end])
        })
        .collect()
}

/// The text of one section of the shipped interpretations document.
pub fn interpretation(anchor: &str) -> Option<&'static str> {
    interpretation_sections(INTERPRETATIONS_TEXT)
        .into_iter()
        .find(|(name, _)| *name == anchor)
        .map(|(_, text)| text)
}

/// The one-paragraph rule of an interpretations section (after `**Rule.**`).
pub fn interpretation_rule(anchor: &str) -> Option<&'static str> {
    let text = interpretation(anchor)?;
    let start = text.find("**Rule.**")? + "**Rule.**".len();
    let rest = &text[start..];
    let end = rest.find("\n\n").unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// Text compared for "verbatim": whitespace, Markdown emphasis and code marks
/// ignored, typographic quotes read as plain ones, so a quote taken from a
/// rendered web page still matches the document's source text.
pub fn normalize(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '*' | '`'))
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' => '\'',
            '\u{201c}' | '\u{201d}' => '"',
            other => other,
        })
        .collect()
}

/// The pieces of a quote that must each be found in its document: a quote may
/// leave text out with `…`.
pub fn quote_fragments(quote: &str) -> Vec<String> {
    quote
        .split('…')
        .map(normalize)
        .filter(|f| !f.is_empty())
        .collect()
}

/// The fragments of `quote` not found in `document` (empty when it is verbatim).
pub fn missing_fragments(quote: &str, document: &str) -> Vec<String> {
    let doc = normalize(document);
    quote_fragments(quote)
        .into_iter()
        .filter(|f| !doc.contains(f.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_registry_parses_and_every_source_can_be_opened() {
        let all = all().unwrap_or_else(|e| panic!("{e}"));
        assert!(all.len() >= 11);
        for s in all {
            assert!(
                s.url.is_some() || s.file.is_some(),
                "{} has neither url nor file",
                s.id
            );
        }
        assert_eq!(
            find(INTERPRETATIONS).map(|s| s.provenance),
            Some(Provenance::Project)
        );
    }

    #[test]
    fn resolve_fills_name_provenance_and_location() {
        let mut spec = SpecRef {
            doc: INTERPRETATIONS.into(),
            section: Some("empty-filter-arrays".into()),
            quote: None,
            url: None,
            applies: None,
            title: None,
            provenance: None,
        };
        resolve(&mut spec);
        assert_eq!(
            spec.url.as_deref(),
            Some("docs/interpretations.md#empty-filter-arrays")
        );
        assert_eq!(spec.provenance, Some(Provenance::Project));
        let mut deep = SpecRef {
            doc: "jsonrpc-2.0".into(),
            url: Some("https://www.jsonrpc.org/specification#error_object".into()),
            ..spec.clone()
        };
        resolve(&mut deep);
        assert_eq!(
            deep.url.as_deref(),
            Some("https://www.jsonrpc.org/specification#error_object")
        );
        assert_eq!(deep.title.as_deref(), Some("JSON-RPC 2.0 Specification"));
        let mut unknown = SpecRef {
            doc: "my notes".into(),
            url: None,
            title: None,
            provenance: None,
            ..spec
        };
        resolve(&mut unknown);
        assert_eq!(
            (unknown.url, unknown.title, unknown.provenance),
            (None, None, None)
        );
    }

    #[test]
    fn duplicate_ids_are_refused() {
        let one = "{id: a, title: A, status: draft, provenance: draft, url: 'https://x'}";
        assert!(parse(&format!("sources: [{one}, {one}]")).is_err());
        assert!(parse(&format!("sources: [{one}]")).is_ok());
    }

    #[test]
    fn quotes_match_across_whitespace_emphasis_and_ellipses() {
        let doc = "Servers **MUST** declare\nthe `search` capability. Later: rate limiting.";
        assert!(missing_fragments("Servers MUST declare the search capability", doc).is_empty());
        assert!(missing_fragments("Servers MUST declare … rate limiting", doc).is_empty());
        assert_eq!(
            missing_fragments("Servers MUST declare … caching", doc),
            vec!["caching".to_string()]
        );
    }

    #[test]
    fn interpretation_sections_split_on_anchors() {
        let rule = interpretation_rule("empty-filter-arrays").unwrap_or_default();
        assert!(
            rule.starts_with("`tags: []` imposes no tag constraint"),
            "{rule}"
        );
        let names: Vec<&str> = interpretation_sections(INTERPRETATIONS_TEXT)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert!(names.contains(&"grading") && names.contains(&"cursor-reuse"));
    }
}
