//! Relevance figures for a server's search surfaces (`mcp-conform quality`):
//! the pure part. Queries are built from the server's own catalog
//! ([`queries`]) or read from a labelled set ([`labelled`]); each query's
//! ranked answer is scored ([`metrics`]) beside a BM25 baseline over the
//! same items ([`bm25`]). The one part that talks to the server is
//! [`collect`] (it probes and queries through the runner's sessions); the
//! tables, JSON, Markdown and HTML are [`report`]'s, which only reads a
//! finished [`measure::QualityReport`]. The command is `cli/quality.rs`.

pub mod bm25;
pub mod collect;
pub mod gates;
pub mod labelled;
pub mod measure;
pub mod metrics;
pub mod queries;
pub mod report;
pub mod stopwords;

#[cfg(test)]
mod reference_ranking;

use serde::Serialize;

/// A search surface the drafts define.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Surface {
    /// SEP-1821: `query` on `tools/list`.
    #[serde(rename = "tools/list query")]
    ToolsListQuery,
    /// The search draft: `tools/search`.
    #[serde(rename = "tools/search")]
    ToolsSearch,
    #[serde(rename = "prompts/search")]
    PromptsSearch,
    #[serde(rename = "resources/search")]
    ResourcesSearch,
    /// The category-search document: the `tool_search` tool.
    #[serde(rename = "tool_search")]
    CategoryToolSearch,
}

impl Surface {
    pub const ALL: [Surface; 5] = [
        Surface::ToolsListQuery,
        Surface::ToolsSearch,
        Surface::PromptsSearch,
        Surface::ResourcesSearch,
        Surface::CategoryToolSearch,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Surface::ToolsListQuery => "tools/list query",
            Surface::ToolsSearch => "tools/search",
            Surface::PromptsSearch => "prompts/search",
            Surface::ResourcesSearch => "resources/search",
            Surface::CategoryToolSearch => "tool_search",
        }
    }

    /// Which catalog the surface searches.
    pub fn feature(self) -> Feature {
        match self {
            Surface::PromptsSearch => Feature::Prompts,
            Surface::ResourcesSearch => Feature::Resources,
            _ => Feature::Tools,
        }
    }

    /// The requirement whose relevance SHOULD the figures inform.
    pub fn requirement(self) -> &'static str {
        match self {
            Surface::ToolsListQuery => "SEP1821-Q-03",
            Surface::CategoryToolSearch => "CAT-02",
            _ => "SEARCH-RES-03",
        }
    }
}

/// The catalog an item comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Feature {
    Tools,
    Prompts,
    Resources,
}

impl Feature {
    pub fn parse(text: &str) -> Option<Feature> {
        match text {
            "tools" => Some(Feature::Tools),
            "prompts" => Some(Feature::Prompts),
            "resources" => Some(Feature::Resources),
            _ => None,
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            Feature::Tools => "tools",
            Feature::Prompts => "prompts",
            Feature::Resources => "resources",
        }
    }
}

/// One searchable item, as its `*/list` entry names and describes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    pub name: String,
    pub description: String,
}

/// How a query was made.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryKind {
    /// The words of the item's name.
    Name,
    /// The rarest words of its description.
    Rare,
    /// A sentence of its description without the name's words.
    Sentence,
    /// From a labelled set; the label is the set's `style` (or `labelled`).
    #[serde(untagged)]
    Labelled(String),
}

impl QueryKind {
    pub fn label(&self) -> &str {
        match self {
            QueryKind::Name => "name",
            QueryKind::Rare => "rare",
            QueryKind::Sentence => "sentence",
            QueryKind::Labelled(s) => s,
        }
    }
}

/// An item that answers a query, with its grade (1 when ungraded).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Relevant {
    pub name: String,
    pub grade: f64,
}

/// A query and what answers it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Query {
    pub text: String,
    pub kind: QueryKind,
    pub feature: Feature,
    pub relevant: Vec<Relevant>,
}
