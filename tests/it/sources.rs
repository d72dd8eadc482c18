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
            "SEP1821-Q-06",
            "SEARCH-RES-04",
            "SEARCH-PAG-03",
            "SEARCH-SEC-01",
            "SEP1300-FLT-05",
            "SEP1300-NEG-01",
            "SEP1300-NEG-02",
            "PD-ERA-01",
            "X-01",
            "X-03",
            "X-06",
            "GRP-LIST-02",
            "GRP-NEST-01",
            "GRP-NEST-02",
            "GRP-LC-02"
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

/// `sources check` against the two texts of the grouping extension kept in
/// fixtures/sources: its JSON report and exit code.
fn sources_check(text: &str, requirements: Option<&str>) -> (Option<i32>, serde_json::Value) {
    let text = format!("fixtures/sources/{text}");
    let mut args = vec![
        "sources",
        "check",
        "grouping-extension",
        "--text",
        &text,
        "--json",
    ];
    if let Some(file) = requirements {
        args.extend(["--requirements", file]);
    }
    let out = crate::common::run_cli(&args);
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "sources check printed no JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), json)
}

fn ids(report: &serde_json::Value, key: &str) -> Vec<String> {
    report[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

const BEFORE: &str = "fixtures/sources/requirements-before-03d246f.yaml";

/// The catalog as it was before the re-base quoted 493cf01: against 03d246f
/// every grouping requirement but the two whose words both texts share is
/// gone, the nested-groups MUST NOTs among them, each with a nearest passage.
fn the_catalog_before_the_rebase_loses_its_nested_group_rules_on_03d246f() {
    let (code, report) = sources_check("grouping-extension-03d246f.mdx", Some(BEFORE));
    assert_eq!(code, Some(1), "a quote is gone: exit 1");
    assert_eq!(
        ids(&report, "gone"),
        [
            "GRP-CAP-01",
            "GRP-LIST-01",
            "GRP-LIST-02",
            "GRP-MEM-01",
            "GRP-MEM-02",
            "GRP-MEM-04",
            "GRP-NEST-01",
            "GRP-NEST-02",
            "GRP-LC-01",
            "GRP-LC-02",
            "GRP-LC-03",
            "GRP-X-01",
            "GRP-X-02"
        ]
    );
    assert_eq!(ids(&report, "verbatim"), ["GRP-DEG-01", "GRP-MEM-03"]);
    for gone in report["gone"].as_array().into_iter().flatten() {
        let nearest = &gone["nearest"][0];
        assert!(
            nearest["passage"].as_str().is_some_and(|p| !p.is_empty())
                && nearest["score"]
                    .as_f64()
                    .is_some_and(|s| (0.0..1.0).contains(&s))
                && nearest["diff"]
                    .as_str()
                    .is_some_and(|d| d.contains("[-") || d.contains("{+")),
            "{gone}"
        );
    }
    let cap = &report["gone"][0]["nearest"][0];
    assert!(
        cap["passage"].as_str().is_some_and(
            |p| p.starts_with("Servers that support groups MUST declare the capability")
        ),
        "{cap}"
    );
}

/// The re-based catalog: nothing is gone on 03d246f; on 493cf01 exactly the
/// requirements whose quotes are new in 03d246f are listed.
fn the_rebased_catalog_stands_on_03d246f_and_names_what_493cf01_lacks() {
    let (code, report) = sources_check("grouping-extension-03d246f.mdx", None);
    assert_eq!(code, Some(0), "{report}");
    assert!(ids(&report, "gone").is_empty(), "{report}");
    let (code, report) = sources_check("grouping-extension-493cf01.mdx", None);
    assert_eq!(code, Some(1));
    assert_eq!(
        ids(&report, "gone"),
        [
            "GRP-CAP-01",
            "GRP-LIST-01",
            "GRP-MEM-01",
            "GRP-MEM-02",
            "GRP-MEM-04",
            "GRP-LC-01",
            "GRP-LC-03",
            "GRP-X-01",
            "GRP-X-02"
        ]
    );
    assert_eq!(ids(&report, "verbatim"), ["GRP-DEG-01", "GRP-MEM-03"]);
    // 493cf01's nested-group MUST NOTs are normative sentences no requirement
    // of the re-based catalog quotes from that text
    let unquoted: Vec<&str> = report["not_quoted"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["sentence"].as_str())
        .collect();
    assert!(
        unquoted.contains(&"Servers MUST NOT create cyclic membership (e.g., group A belongs to group B, and group B belongs to group A)."),
        "{unquoted:?}"
    );
}

/// The console report names each part, and an unknown source id is a usage error.
fn sources_check_prints_each_part_and_refuses_an_unknown_source() {
    let out = crate::common::run_cli(&[
        "sources",
        "check",
        "grouping-extension",
        "--text",
        "fixtures/sources/grouping-extension-03d246f.mdx",
        "--requirements",
        BEFORE,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    insta::assert_snapshot!("sources_check_before_rebase_on_03d246f", text);
    let out = crate::common::run_cli(&[
        "sources",
        "check",
        "no-such-draft",
        "--text",
        "fixtures/sources/grouping-extension-03d246f.mdx",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no source document \"no-such-draft\""));
}

/// Every draft requirement of the grouping profile is graded at most as
/// strongly as the strongest RFC 2119 keyword of its quote.
fn grouping_requirements_are_graded_no_higher_than_their_quotes() {
    use mcp_conform::scenario::model::Level;
    let registry = mcp_conform::requirements::all().unwrap_or_else(|e| panic!("{e}"));
    let mut problems = Vec::new();
    // a project rule's basis is its section of docs/interpretations.md
    for r in registry
        .iter()
        .filter(|r| r.profile == "grouping" && r.source == Provenance::Draft)
    {
        let keyword = r
            .quote
            .as_deref()
            .and_then(mcp_conform::sources_check::strongest_keyword)
            .map_or(Level::Info, |k| match k {
                "MUST" => Level::Must,
                "SHOULD" => Level::Should,
                _ => Level::May,
            });
        if r.grade().is_some_and(|level| level < keyword) {
            problems.push(format!(
                "{} is {} but its quote's strongest keyword is {keyword}",
                r.id, r.level
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        every_spec_entry_and_requirement_points_at_a_document_a_reader_can_open,
        a_citation_that_points_at_nothing_is_caught,
        the_shipped_interpretations_are_the_repository_file,
        no_citation_names_a_file_outside_the_repository,
        requirements_quoting_this_projects_words_are_named,
        the_catalog_before_the_rebase_loses_its_nested_group_rules_on_03d246f,
        the_rebased_catalog_stands_on_03d246f_and_names_what_493cf01_lacks,
        sources_check_prints_each_part_and_refuses_an_unknown_source,
        grouping_requirements_are_graded_no_higher_than_their_quotes
    ]
}
