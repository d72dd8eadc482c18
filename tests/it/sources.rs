//! Every quote points at something a reader can open: each built-in `spec:`
//! entry and each requirement's `document` names a source of
//! scenarios/sources.yaml that has a public URL or is a file of this
//! repository; a rule of this project cites an anchor of
//! docs/interpretations.md and its quote is found there verbatim.

use std::path::Path;

use mcp_conform::scenario::model::Provenance;
use mcp_conform::sources::{self, INTERPRETATIONS};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// What is wrong with one citation (`doc`, `section`, `quote`), if anything.
fn citation_problems(
    at: &str,
    doc: &str,
    section: Option<&str>,
    quote: Option<&str>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(source) = sources::find(doc) else {
        return vec![format!(
            "{at}: cites {doc:?}, which is not a source id of scenarios/sources.yaml"
        )];
    };
    match (&source.url, &source.file) {
        (Some(url), _) if url.starts_with("https://") => {}
        (Some(url), _) => problems.push(format!(
            "{at}: source {doc} has a URL that is not https: {url}"
        )),
        (None, Some(file)) if root().join(file).is_file() => {}
        (None, Some(file)) => problems.push(format!(
            "{at}: source {doc} names {file}, which is not in the repository"
        )),
        (None, None) => problems.push(format!(
            "{at}: source {doc} has neither a URL nor a repository file"
        )),
    }
    if doc == INTERPRETATIONS {
        let text = std::fs::read_to_string(root().join("docs/interpretations.md"))
            .unwrap_or_else(|e| panic!("docs/interpretations.md: {e}"));
        let sections = sources::interpretation_sections(&text);
        match section.and_then(|a| sections.iter().find(|(name, _)| *name == a)) {
            None => problems.push(format!(
                "{at}: section {section:?} is not an anchor of docs/interpretations.md"
            )),
            Some((_, body)) => match quote {
                None => problems.push(format!("{at}: a project rule needs its quote")),
                Some(q) => {
                    let missing = sources::missing_fragments(q, body);
                    if !missing.is_empty() {
                        problems.push(format!(
                            "{at}: quote not found verbatim in docs/interpretations.md#{}: {missing:?}",
                            section.unwrap_or_default()
                        ));
                    }
                }
            },
        }
    }
    problems
}

fn every_spec_entry_and_requirement_points_at_a_document_a_reader_can_open() {
    let scenarios = mcp_conform::builtin::scenarios().unwrap_or_else(|e| panic!("{e}"));
    let mut problems = Vec::new();
    for s in &scenarios {
        for spec in &s.spec {
            problems.extend(citation_problems(
                &format!("scenario {}", s.id),
                &spec.doc,
                spec.section.as_deref(),
                spec.quote.as_deref(),
            ));
            if spec.url.is_none() || spec.title.is_none() || spec.provenance.is_none() {
                problems.push(format!(
                    "scenario {}: {} was not resolved on loading",
                    s.id, spec.doc
                ));
            }
        }
    }
    let registry = mcp_conform::requirements::all().unwrap_or_else(|e| panic!("{e}"));
    for r in &registry {
        problems.extend(citation_problems(
            &format!("requirement {}", r.id),
            &r.document,
            r.section.as_deref(),
            r.quote.as_deref(),
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn a_citation_that_points_at_nothing_is_caught() {
    assert!(!citation_problems("x", "NOTES.md", None, None).is_empty());
    assert!(!citation_problems("x", INTERPRETATIONS, Some("no-such-anchor"), Some("q")).is_empty());
    assert!(!citation_problems(
        "x",
        INTERPRETATIONS,
        Some("empty-filter-arrays"),
        Some("groups: [] means every group")
    )
    .is_empty());
    assert!(citation_problems(
        "x",
        INTERPRETATIONS,
        Some("empty-filter-arrays"),
        Some("`groups: []` imposes no group constraint")
    )
    .is_empty());
}

fn the_shipped_interpretations_are_the_repository_file() {
    let text = std::fs::read_to_string(root().join("docs/interpretations.md"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text, sources::INTERPRETATIONS_TEXT);
}

fn no_citation_names_a_file_outside_the_repository() {
    let scenarios = mcp_conform::builtin::scenarios().unwrap_or_else(|e| panic!("{e}"));
    let registry = mcp_conform::requirements::all().unwrap_or_else(|e| panic!("{e}"));
    let texts = scenarios
        .iter()
        .flat_map(|s| &s.spec)
        .flat_map(|spec| [Some(&spec.doc), spec.section.as_ref(), spec.quote.as_ref()])
        .chain(
            registry
                .iter()
                .flat_map(|r| [Some(&r.document), r.section.as_ref(), r.quote.as_ref()]),
        )
        .flatten();
    // a working file's name (an upper-case Markdown file, a numbered text
    // file, a folder of drafts) means the reader cannot open what is cited
    let private = regex::Regex::new(r"[A-Z]{3,}\.md|\b[0-9]{3}_[0-9a-f]{8,}|\bseeds?\b")
        .unwrap_or_else(|e| panic!("{e}"));
    let bad: Vec<&String> = texts.filter(|t| private.is_match(t)).collect();
    assert!(bad.is_empty(), "citations of private files: {bad:?}");
}

/// The requirements whose quote is this project's own words (docs/interpretations.md),
/// not a draft's or the specification's; a change to this list is deliberate.
fn requirements_quoting_this_projects_words_are_named() {
    let registry = mcp_conform::requirements::all().unwrap_or_else(|e| panic!("{e}"));
    let own: Vec<&str> = registry
        .iter()
        .filter(|r| r.document == INTERPRETATIONS)
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(
        own,
        [
            "SEARCH-RES-04",
            "SEARCH-PAG-03",
            "SEARCH-SEC-01",
            "SEP1300-NEG-01",
            "SEP1300-NEG-02",
            "PD-ERA-01",
            "X-01",
            "X-03",
            "X-06"
        ]
    );
    for r in registry.iter().filter(|r| r.document == INTERPRETATIONS) {
        assert_eq!(
            r.source,
            Provenance::Project,
            "{} quotes this project's rules",
            r.id
        );
    }
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        every_spec_entry_and_requirement_points_at_a_document_a_reader_can_open,
        a_citation_that_points_at_nothing_is_caught,
        the_shipped_interpretations_are_the_repository_file,
        no_citation_names_a_file_outside_the_repository,
        requirements_quoting_this_projects_words_are_named
    ]
}
