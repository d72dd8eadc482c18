//! One immutable generation of the served catalog plus everything derived
//! from it. A mutation (control hook) builds a new snapshot; requests in
//! flight keep the one they started with.
//!
//! Derived structures (search indexes, filter bit sets) are built lazily on
//! first use so that start-up only pays for parsing.

use super::bitset::Bitset;
use super::catalog_file::{Catalog, Tool};
use super::index::{Field, SearchIndex};
use std::collections::HashMap;
use std::sync::OnceLock;

/// The description of the `tool_descriptions` resource: the workflow a
/// model must follow (section 4.2 of the draft).
pub const WORKFLOW: &str = "\
WORKFLOW: Step 1: Pick a tool from tools/list by what it does; the short descriptions there are \
enough to choose, but they carry no parameter details. Step 2: Fetch the full description of the \
tools you picked from this resource, naming them in the 'tools' query parameter (comma-separated, \
exactly as shown in tools/list): resource:///tool_descriptions?tools=page_create or \
resource:///tool_descriptions?tools=page_create,task_create. The answer is a JSON object with one \
entry per tool: full description, complete inputSchema, examples, usage and error guidance. \
Step 3: Call the tool with the parameters you learned. Fetching a tool's description authorizes \
that tool for the rest of this session. Calling a tool whose description was not fetched fails \
with TOOL_DESCRIPTION_REQUIRED, whose resource_uri says what to read. Always specify ?tools=: \
reading this resource without it fails with MISSING_TOOL_SELECTION.";

/// The progressive-disclosure resource.
pub const TOOL_DESCRIPTIONS_URI: &str = "resource:///tool_descriptions";
pub const TOOL_DESCRIPTIONS_TEMPLATE: &str = "resource:///tool_descriptions{?tools}";
pub const TOOL_DESCRIPTIONS_NAME: &str = "Tool Descriptions - Required for tool use";

/// Field weights: a word in the name says more about a tool than one in its
/// description.
const W_NAME: f32 = 3.0;
const W_TITLE: f32 = 2.0;
const W_TAG: f32 = 1.5;
const W_CATEGORY: f32 = 1.5;
const W_TEXT: f32 = 1.0;
/// A tool's fuller documentation, behind its listing: half a description
/// word, and it only ranks (see [`tool_documentation`]).
const W_DOCS: f32 = 0.5;

pub struct Snapshot {
    pub catalog: Catalog,
    pub generation: u64,
    /// Indices into `catalog.tools` of the tools the caller may see; a
    /// tool's position here is its document number everywhere else.
    visible: Vec<u32>,
    /// Documents sorted by name (binary search instead of a hash map:
    /// a 100k-entry map of owned names costs megabytes).
    by_name: Vec<u32>,
    /// Documents sorted by ASCII-lowercased name.
    by_lower_name: OnceLock<Vec<u32>>,
    filters: OnceLock<FilterIndex>,
    tool_index: OnceLock<SearchIndex>,
    prompt_index: OnceLock<SearchIndex>,
    resource_index: OnceLock<SearchIndex>,
}

#[derive(Default)]
pub struct FilterIndex {
    pub groups: HashMap<Box<str>, Bitset>,
    pub tags: HashMap<Box<str>, Bitset>,
}

impl Snapshot {
    pub fn new(catalog: Catalog, generation: u64) -> Self {
        let visible: Vec<u32> = catalog
            .tools
            .iter()
            .enumerate()
            .filter(|(_, t)| t.is_visible())
            .map(|(i, _)| i as u32)
            .collect();
        let name = |doc: u32| &*catalog.tools[visible[doc as usize] as usize].name;
        let mut by_name: Vec<u32> = (0..visible.len() as u32).collect();
        by_name.sort_unstable_by(|&a, &b| name(a).cmp(name(b)));
        Snapshot {
            catalog,
            generation,
            visible,
            by_name,
            by_lower_name: OnceLock::new(),
            filters: OnceLock::new(),
            tool_index: OnceLock::new(),
            prompt_index: OnceLock::new(),
            resource_index: OnceLock::new(),
        }
    }

    /// Number of visible tools.
    pub fn len(&self) -> usize {
        self.visible.len()
    }

    pub fn is_empty(&self) -> bool {
        self.visible.is_empty()
    }

    pub fn tool(&self, doc: u32) -> &Tool {
        &self.catalog.tools[self.visible[doc as usize] as usize]
    }

    pub fn tools(&self) -> impl Iterator<Item = &Tool> + '_ {
        self.visible
            .iter()
            .map(|&i| &self.catalog.tools[i as usize])
    }

    /// The document number of a visible tool, by exact name.
    pub fn doc(&self, name: &str) -> Option<u32> {
        self.by_name
            .binary_search_by(|&d| (*self.tool(d).name).cmp(name))
            .ok()
            .map(|i| self.by_name[i])
    }

    /// Documents whose name matches `name` ignoring ASCII case.
    pub fn docs_ignoring_case(&self, name: &str) -> &[u32] {
        let sorted = self.by_lower_name.get_or_init(|| {
            let mut docs = self.by_name.clone();
            docs.sort_by(|&a, &b| cmp_ignoring_case(&self.tool(a).name, &self.tool(b).name));
            docs
        });
        let start =
            sorted.partition_point(|&d| cmp_ignoring_case(&self.tool(d).name, name).is_lt());
        let end = sorted.partition_point(|&d| cmp_ignoring_case(&self.tool(d).name, name).is_le());
        &sorted[start..end]
    }

    /// Tools whose name equals the query: verbatim, ignoring case, or as its
    /// words joined by `_` ("page create" → `page_create`).
    pub fn exact_tools(&self, query: &str) -> Vec<u32> {
        let mut out: Vec<u32> = self.docs_ignoring_case(query.trim()).to_vec();
        let joined = super::text::words(query).collect::<Vec<_>>().join("_");
        out.extend_from_slice(self.docs_ignoring_case(&joined));
        out.sort_unstable();
        out.dedup();
        out
    }

    pub fn filters(&self) -> &FilterIndex {
        self.filters.get_or_init(|| {
            let mut f = FilterIndex::default();
            let n = self.len();
            for (doc, tool) in self.tools().enumerate() {
                for g in tool.groups.iter() {
                    f.groups
                        .entry(g.as_ref().into())
                        .or_insert_with(|| Bitset::empty(n))
                        .insert(doc);
                }
                for t in tool.tags.iter() {
                    f.tags
                        .entry(t.as_ref().into())
                        .or_insert_with(|| Bitset::empty(n))
                        .insert(doc);
                }
            }
            f
        })
    }

    pub fn tool_index(&self) -> &SearchIndex {
        self.tool_index.get_or_init(|| {
            let names: Vec<&str> = self.tools().map(|t| &*t.name).collect();
            let tools: Vec<&Tool> = self.tools().collect();
            SearchIndex::build(&names, |doc| {
                let t = tools[doc];
                let mut fields = vec![
                    field(&t.name, W_NAME),
                    field(&t.title, W_TITLE),
                    field(&t.description, W_TEXT),
                ];
                fields.extend(t.tags.iter().map(|tag| field(tag, W_TAG)));
                if let Some(cat) = &t.category {
                    fields.push(field(cat, W_CATEGORY));
                    if let Some(c) = self.catalog.category(cat) {
                        fields.push(field(&c.name, W_CATEGORY));
                    }
                }
                fields.push(Field::ranking(tool_documentation(t), W_DOCS));
                fields
            })
        })
    }

    pub fn prompt_index(&self) -> &SearchIndex {
        self.prompt_index.get_or_init(|| {
            let prompts = &self.catalog.prompts;
            let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
            SearchIndex::build(&names, |doc| {
                let p = &prompts[doc];
                let mut fields = vec![
                    field(&p.name, W_NAME),
                    field(&p.title, W_TITLE),
                    field(&p.description, W_TEXT),
                ];
                for a in &p.arguments {
                    fields.push(field(&a.name, W_TEXT));
                    fields.push(field(&a.description, W_TEXT));
                }
                fields
            })
        })
    }

    /// Resources are indexed deeply: their text is searchable too (the
    /// search draft asks for it). Document 0 is the tool-descriptions
    /// resource; document `i + 1` is catalog resource `i`.
    pub fn resource_index(&self) -> &SearchIndex {
        self.resource_index.get_or_init(|| {
            let res = &self.catalog.resources;
            let mut names = vec![TOOL_DESCRIPTIONS_URI];
            names.extend(res.iter().map(|r| r.uri.as_str()));
            SearchIndex::build(&names, |doc| {
                if doc == 0 {
                    return vec![
                        field("tool_descriptions", W_NAME),
                        field(TOOL_DESCRIPTIONS_NAME, W_TITLE),
                        field(WORKFLOW, W_TEXT),
                    ];
                }
                let r = &res[doc - 1];
                vec![
                    field(&r.name, W_NAME),
                    field(&r.title, W_TITLE),
                    field(&r.uri, W_TEXT),
                    field(&r.description, W_TEXT),
                    field(&r.text, W_TEXT),
                ]
            })
        })
    }
}

fn cmp_ignoring_case(a: &str, b: &str) -> std::cmp::Ordering {
    let lower = |s: &str| {
        s.bytes()
            .map(|b| b.to_ascii_lowercase())
            .collect::<Vec<u8>>()
    };
    if a.is_ascii() && b.is_ascii() {
        a.bytes()
            .map(|b| b.to_ascii_lowercase())
            .cmp(b.bytes().map(|b| b.to_ascii_lowercase()))
    } else {
        lower(a).cmp(&lower(b))
    }
}

fn field(text: &str, weight: f32) -> Field<'_> {
    Field::selecting(text, weight)
}

/// The prose a tool keeps behind its listing that says what it is for: its
/// full description, its `when_to_use` guidance, the descriptions of its
/// examples and of its input parameters. They say in more and other words
/// what the tool does, so among the tools a query's words select, the one
/// whose documentation also speaks of the rest of the query ranks higher.
/// Left out: `when_not_to_use` and error guidance, which describe the cases
/// and name the tools that are *not* this one.
fn tool_documentation(tool: &Tool) -> String {
    let details = tool.details();
    let mut out = String::new();
    let mut push = |v: &serde_json::Value| {
        if let Some(s) = v.as_str() {
            out.push_str(s);
            out.push('\n');
        }
    };
    push(&details["full_description"]);
    push(&details["usage_guidance"]["when_to_use"]);
    for example in details["examples"].as_array().into_iter().flatten() {
        push(&example["description"]);
    }
    let props = details["inputSchema"]["properties"].as_object();
    for prop in props.into_iter().flat_map(|p| p.values()) {
        push(&prop["description"]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mini() -> Snapshot {
        let cat = Catalog::from_slice(include_bytes!("../../../fixtures/catalogs/mini.json"))
            .expect("mini loads");
        Snapshot::new(cat, 1)
    }

    #[test]
    fn hidden_tools_are_not_documents() {
        let s = mini();
        assert_eq!(s.len(), 14);
        assert!(s.doc("admin_purge_workspace").is_none());
        assert!(s.tools().all(|t| &*t.name != "admin_purge_workspace"));
        assert!(s.filters().groups.get("admin-ops").map(|b| b.count()) == Some(1));
    }

    #[test]
    fn a_tool_is_documented_by_its_guidance_examples_and_parameters() {
        let s = mini();
        let doc = s.doc("page_create").expect("known");
        let text = tool_documentation(s.tool(doc));
        for part in [
            "starts as a draft",           // full description
            "when you need to",            // when_to_use
            "Draft page",                  // an example's description
            "Space that will contain the", // a parameter's description
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
        assert!(!text.contains("case-sensitive"), "notes are not indexed");
        // The documentation ranks; it does not select: "markdown" is only in
        // the documentation of page_create and page_update.
        assert_eq!(s.tool_index().search("markdown", None, &[], 0, 10).total, 0);
    }

    #[test]
    fn exact_names() {
        let s = mini();
        let doc = s.doc("page_create").expect("known");
        assert_eq!(s.exact_tools("Page Create"), [doc]);
        assert_eq!(s.exact_tools(" page_create "), [doc]);
        assert!(s.exact_tools("page").is_empty());
    }
}
