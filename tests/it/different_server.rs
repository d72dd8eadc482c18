//! The whole built-in catalog against `fixtures/servers/different_server.py`:
//! a small, correct server whose design differs from the reference server's
//! wherever the drafts leave room (7 tools, 3 a page, its own cursors and
//! error carriers, a precise search, membership only in the grouping
//! extension's `_meta`, the literal readings of the drafts' silent points).
//! No scenario may fail or error on it in any era, and each reading it takes
//! must show up as a labelled alternative, an info note, or a "not exercised"
//! skip, never as a silent pass.
//!
//! Needs python3: without it the trial is ignored with the reason, unless
//! the `python` prerequisite is required (CI requires it).

use std::path::Path;
use std::process::Command;

use libtest_mimic::Trial;
use serde_json::Value;

use crate::prereq::{self, Prereq};

pub fn trials() -> Vec<Trial> {
    vec![prereq::trial(
        "different_server::a_correct_server_of_another_design_fails_nothing_and_its_readings_are_named",
        Prereq::Python,
        prereq::python,
        a_correct_server_of_another_design_fails_nothing_and_its_readings_are_named,
    )]
}

/// Runs the catalog against the fixture and returns the JSON report's scenarios.
fn run_catalog() -> Vec<Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let report = std::env::temp_dir().join(format!(
        "mcp-conform-different-server-{}.json",
        std::process::id()
    ));
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-conform"))
        .current_dir(root)
        // Python starts slowly on a loaded machine.
        .args(["-q", "--timeout-ms", "10000", "--report-json"])
        .arg(&report)
        .args([
            "--",
            crate::common::python3(),
            crate::common::FIXTURE_PYTHON_FLAGS,
            "fixtures/servers/different_server.py",
        ])
        .output()
        .expect("the mcp-conform binary runs");
    let text = std::fs::read_to_string(&report).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}); exit {:?}\nstdout:\n{}\nstderr:\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let _ = std::fs::remove_file(&report);
    let json: Value = serde_json::from_str(&text).expect("the JSON report parses");
    json["scenarios"]
        .as_array()
        .cloned()
        .expect("the report lists its scenarios")
}

fn field<'a>(r: &'a Value, key: &str) -> &'a str {
    r[key].as_str().unwrap_or_default()
}

/// The results of one scenario, one per era.
fn results<'a>(all: &'a [Value], id: &str) -> Vec<&'a Value> {
    let found: Vec<&Value> = all.iter().filter(|r| field(r, "id") == id).collect();
    assert!(!found.is_empty(), "{id} is not in the report");
    found
}

/// Every era's result of `id` has `outcome`, and says `words` in its label
/// (alternatives) or message.
fn shows(all: &[Value], id: &str, outcome: &str, words: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for r in results(all, id) {
        let alternatives = r["alternatives"].to_string();
        if field(r, "outcome") != outcome
            || !(alternatives.contains(words) || field(r, "message").contains(words))
        {
            problems.push(format!(
                "{id} [{}]: expected {outcome} showing {words:?}, got {}: {} {alternatives}",
                field(r, "era"),
                field(r, "outcome"),
                field(r, "message")
            ));
        }
    }
    problems
}

fn a_correct_server_of_another_design_fails_nothing_and_its_readings_are_named() {
    let all = run_catalog();
    let eras: std::collections::BTreeSet<&str> = all.iter().map(|r| field(r, "era")).collect();
    assert_eq!(
        eras.into_iter().collect::<Vec<_>>(),
        ["2025-06-18", "2025-11-25", "2026-07-28"],
        "the fixture speaks the two stateful eras and the stateless one"
    );

    let broken: Vec<String> = all
        .iter()
        .filter(|r| matches!(field(r, "outcome"), "fail" | "error"))
        .map(|r| {
            format!(
                "{} [{}] {}: {}",
                field(r, "id"),
                field(r, "era"),
                field(r, "outcome"),
                field(r, "message")
            )
        })
        .collect();
    assert!(
        broken.is_empty(),
        "a correct server of another design must not fail or error:\n{}",
        broken.join("\n")
    );

    let mut problems = Vec::new();
    // Its readings of the drafts' silent points, each named.
    for (id, outcome, words) in [
        // groups: [] read literally: no tool is in ANY of no groups (a project rule: warns)
        (
            "sep-1300/empty-groups-no-constraint",
            "warn",
            "in none of no groups",
        ),
        (
            "progressive-disclosure/missing-selection-bare",
            "pass",
            "in the resource content",
        ),
        (
            "progressive-disclosure/auth-required-before-fetch",
            "pass",
            "in an isError tool result",
        ),
        (
            "grouping/cross-draft-filter-nested",
            "info",
            "direct members only",
        ),
        (
            "progressive-disclosure/list-minimal-schema",
            "info",
            "detailed inputSchema",
        ),
        (
            "cross-feature/pd-searched-entries-minimal",
            "info",
            "keep their full input schema",
        ),
        ("search/cursor-other-query", "pass", "rejected with -32602"),
        ("sep-1821/query-empty-or-blank", "info", "empty query"),
        // 7 tools never fill a page of 10: the limit cannot be exercised
        ("search/tools-page-size", "skip", "not exercised"),
        (
            "grouping/cross-draft-tool-groups",
            "skip",
            "membership is stated only in _meta",
        ),
    ] {
        let stateful_only = id.starts_with("progressive-disclosure/auth")
            || id == "progressive-disclosure/list-minimal-schema";
        for p in shows(&all, id, outcome, words) {
            if !(stateful_only && p.contains("[2026-07-28]")) {
                problems.push(p);
            }
        }
    }
    // Paging, cursors and filters are exercised on 3-a-page answers, with
    // membership read from _meta: these pass, not skip.
    for id in [
        "search/pagination-walk",
        "search/missing-query-cursor-only",
        "sep-1821/query-pagination",
        "sep-1300/filter-pagination",
        "sep-1300/filter-each-group",
        "sep-1300/filter-group-pairs",
        "cross-feature/query-filter-cursor-replay",
        "cross-feature/cursor-other-group-filter",
    ] {
        for r in results(&all, id) {
            if field(r, "outcome") != "pass" {
                problems.push(format!(
                    "{id} [{}]: expected pass (exercised), got {}: {}",
                    field(r, "era"),
                    field(r, "outcome"),
                    field(r, "message")
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    let count = |o: &str| all.iter().filter(|r| field(r, "outcome") == o).count();
    println!(
        "different_server.py: {} pass, {} warn, {} info, {} skip",
        count("pass"),
        count("warn"),
        count("info"),
        count("skip")
    );
}
