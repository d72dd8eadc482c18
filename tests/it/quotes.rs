//! Every quote from a draft (scenario `spec:` entries, requirements and the
//! trace rules of `watch` and `client`) is
//! found verbatim in the draft's text: whitespace, Markdown emphasis and code
//! marks ignored, `…` marking an omission. The drafts' texts are not part of
//! this repository; the test reads them from `MCP_CONFORM_SEEDS_DIR`, else from
//! `../shared/seeds` and `../shared/specs` beside the checkout (where CI keeps
//! them) and, for the grouping extension, from fixtures/sources, and reports a draft whose text is not there as ignored, with the reason.
//! Each text is recognised by its content, not by its file name.
//!
//! Quotes of the released MCP 2026-07-28 revision are checked the same way
//! against its pages (a directory of `.mdx` files, recognised by a phrase
//! of the revision) and the descriptions of its schema (a `schema.json`
//! that defines UnsupportedProtocolVersionError), found in the same places and in
//! `../shared/mcp-schema`; without them the trial is ignored with the reason.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use libtest_mimic::Trial;
use mcp_conform::scenario::model::Provenance;
use mcp_conform::sources::{self, Source};

use crate::prereq::{self, Prereq};

/// A phrase only the text of that draft contains.
const MARKERS: &[(&str, &str)] = &[
    ("sep-1821", "SEP-1821: Add dynamic tool search support"),
    ("search-draft", "title: Search"),
    ("sep-1300", "SEP-1300: Tool Filtering with Groups and Tags"),
    (
        "progressive-disclosure",
        "Progressive Disclosure for Tool Descriptions",
    ),
    ("category-search", "/mcp-standard/search_tools"),
    // the superseded text first: both texts of the extension name it
    ("grouping-extension-493cf01", "### Purpose and Scope"),
    ("grouping-extension", "io.modelcontextprotocol/grouping"),
];

/// Where the texts are: the grouping extension's two texts are in the
/// repository (fixtures/sources, with their license), the others beside it.
fn text_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let in_repo = root.join("fixtures/sources");
    if let Some(dir) = std::env::var_os("MCP_CONFORM_SEEDS_DIR") {
        return vec![PathBuf::from(dir), in_repo];
    }
    let shared = root.join("../shared");
    vec![shared.join("seeds"), shared.join("specs"), in_repo]
}

/// Source id → the draft's text, for every text found.
fn texts() -> BTreeMap<&'static str, String> {
    let mut found = BTreeMap::new();
    for dir in text_dirs() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            // an index of the texts names them all: not one of them
            if entry.file_name().eq_ignore_ascii_case("README.md") {
                continue;
            }
            // a requirement catalog kept as test data quotes the drafts
            if entry.path().extension().is_some_and(|e| e == "yaml") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(entry.path()) else {
                continue;
            };
            if let Some((id, _)) = MARKERS.iter().find(|(_, m)| text.contains(m)) {
                found.insert(*id, text);
            }
        }
    }
    found
}

/// The released revision whose pages and schema quotes are checked.
const RELEASED: &str = "mcp-2026-07-28";
/// A phrase only the released revision's pages contain.
const RELEASED_MARKER: &str = "Revision 2026-07-28 changed the behavior of Streamable HTTP";

/// A definition only the released revision's schema has.
const RELEASED_SCHEMA_MARKER: &str = "UnsupportedProtocolVersionError";

/// Every `.mdx` file under `dir`, read and joined (a revision's pages).
fn pages_under(dir: &Path, out: &mut String) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            pages_under(&path, out);
        } else if path.extension().is_some_and(|x| x == "mdx") {
            if let Ok(text) = std::fs::read_to_string(&path) {
                out.push_str(&text);
                out.push('\n');
            }
        }
    }
}

/// Every `description` in a JSON schema, joined.
fn descriptions(v: &serde_json::Value, out: &mut String) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, x) in map {
                if let (true, Some(text)) = (k == "description", x.as_str()) {
                    out.push_str(text);
                    out.push('\n');
                } else {
                    descriptions(x, out);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|x| descriptions(x, out)),
        _ => {}
    }
}

/// The released revision's pages and schema descriptions, when both are found.
fn released_text() -> Option<String> {
    let mut dirs = text_dirs();
    if std::env::var_os("MCP_CONFORM_SEEDS_DIR").is_none() {
        dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/mcp-schema"));
    }
    let (mut pages, mut schema) = (None, None);
    for dir in &dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for path in entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
            let mut text = String::new();
            pages_under(&path, &mut text);
            if text.contains(RELEASED_MARKER) {
                pages.get_or_insert(text);
            }
            let json = std::fs::read_to_string(path.join("schema.json")).ok();
            let parsed = json.and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
            // Only the 2026-07-28 schema defines this error.
            let released = |v: &serde_json::Value| v["$defs"].get(RELEASED_SCHEMA_MARKER).is_some();
            if let Some(v) = parsed.filter(released) {
                let mut text = String::new();
                descriptions(&v, &mut text);
                schema.get_or_insert(text);
            }
        }
    }
    Some(format!("{}\n{}", pages?, schema?))
}

/// (where, quote) of every built-in quote citing `source`.
fn quotes_of(source: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let scenarios = mcp_conform::builtin::scenarios().unwrap_or_else(|e| panic!("{e}"));
    for s in &scenarios {
        for spec in s.spec.iter().filter(|spec| spec.doc == source) {
            if let Some(q) = &spec.quote {
                out.push((format!("scenario {}", s.id), q.clone()));
            }
        }
    }
    let registry = mcp_conform::requirements::all().unwrap_or_else(|e| panic!("{e}"));
    for r in registry.iter().filter(|r| r.document == source) {
        if let Some(q) = &r.quote {
            out.push((format!("requirement {}", r.id), q.clone()));
        }
    }
    // The trace rules of `watch` and `client` quote the same texts.
    let rules = mcp_conform::watch::rules::builtin().unwrap_or_else(|e| panic!("{e}"));
    for r in rules.iter().filter(|r| r.spec.doc == source) {
        if let Some(q) = &r.spec.quote {
            out.push((format!("trace rule {} ({})", r.id, r.origin), q.clone()));
        }
    }
    out
}

/// Why the text of `source` is missing and where to find it.
fn missing(source: &Source) -> String {
    format!(
        "the text of {} is not available to this test; set MCP_CONFORM_SEEDS_DIR to a directory holding it (public location: {})",
        source.title,
        source.url.as_deref().unwrap_or("none")
    )
}

/// Panics with every quote of `source` not found verbatim in `text`.
fn check(source: &Source, text: &str) {
    // Markdown's other emphasis mark (`_requests_` in the released pages)
    // is ignored like `*`.
    let text = text.replace('_', "");
    let problems: Vec<String> = quotes_of(&source.id)
        .into_iter()
        .filter_map(|(at, quote)| {
            let missing = sources::missing_fragments(&quote.replace('_', ""), &text);
            (!missing.is_empty()).then(|| {
                format!(
                    "{at}: not verbatim in {}: {missing:?}\n  quote: {quote}",
                    source.id
                )
            })
        })
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Panics with every quote of the server rules' table
/// (docs/mcp-2026-server-rules.md) not found verbatim in the released pages.
fn check_table(text: &str) {
    let text = text.replace('_', "");
    let problems: Vec<String> = crate::server_rules::rows()
        .into_iter()
        .filter_map(|row| {
            let quote = row.quote.replace("\\|", "|").replace('_', "");
            let missing = sources::missing_fragments(&quote, &text);
            (!missing.is_empty()).then(|| {
                format!(
                    "docs/mcp-2026-server-rules.md:{}: not verbatim in {RELEASED}: {missing:?}",
                    row.line
                )
            })
        })
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

pub fn trials() -> Vec<Trial> {
    let all = sources::all().unwrap_or_else(|e| panic!("{e}"));
    let mut texts = texts();
    let released = released_text();
    let table_text = released.clone();
    let table = prereq::trial(
        "quotes::mcp-2026-server-rules-table",
        Prereq::Drafts,
        move || {
            if released.is_some() {
                Ok(())
            } else {
                Err("the released MCP 2026-07-28 pages are not available to this test; set MCP_CONFORM_SEEDS_DIR to a directory holding them (public location: https://modelcontextprotocol.io/specification/2026-07-28)".to_string())
            }
        },
        move || check_table(&table_text.unwrap_or_default()),
    );
    if let Some(text) = released_text() {
        texts.insert(RELEASED, text);
    }
    std::iter::once(table)
        .chain(
            all.iter()
                .filter(|s| s.provenance == Provenance::Draft || s.id == RELEASED)
                .map(|s| {
                    let text = texts.remove(s.id.as_str());
                    let found = text.is_some();
                    prereq::trial(
                        format!("quotes::{}", s.id),
                        Prereq::Drafts,
                        move || if found { Ok(()) } else { Err(missing(s)) },
                        move || check(s, &text.unwrap_or_default()),
                    )
                }),
        )
        .collect()
}
