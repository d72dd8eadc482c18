//! The level a report shows beside a finding is the level it broke, in
//! every format: a warning is never shown beside MUST, a failure never
//! beside SHOULD, and a finding names the requirement at that level. The
//! run: the reference server with three faults that each break a check of a
//! MUST scenario, two of them at SHOULD (a large id dropped, an invalid
//! message without id dropped) and one at MUST (an unparsable line dropped,
//! a finding every SDK-based server shares, which says so).

use std::path::Path;

use serde_json::Value;

use crate::common;

/// The run, with every file report and the console's `-q` and GitHub lines.
fn faulty_run(dir: &Path, github: bool) -> String {
    let d = dir.display().to_string();
    let mut args = vec![
        "-q",
        "-p",
        "base",
        "--protocol-version",
        "2025-11-25",
        "--report-dir",
        &d,
    ];
    if github {
        args.extend(["--format", "github"]);
    }
    args.extend([
        "--",
        common::bin(),
        "serve-reference",
        "--fault",
        "id-large-dropped",
        "--fault",
        "invalid-request-no-id-silent",
        "--fault",
        "parse-error-silent",
    ]);
    let out = common::run_cli(&args);
    assert_eq!(out.status.code(), Some(1), "{}", common::text(&out.stderr));
    common::text(&out.stdout)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A line that puts a warning beside MUST or a failure beside SHOULD.
fn mismatched(line: &str, warn: &[&str], fail: &[&str]) -> bool {
    let has = |words: &[&str]| words.iter().any(|w| line.contains(w));
    (has(warn) && line.contains("MUST")) || (has(fail) && line.contains("SHOULD"))
}

fn no_format_shows_a_warning_beside_must_or_a_failure_beside_should() {
    let dir = common::output_dir("levels-shown");
    let console = faulty_run(&dir, false);
    // The console's -q lines: `warn [SHOULD] base/id-large-integer BASE-ID-02: …`.
    assert!(
        console.contains("warn [SHOULD] base/id-large-integer BASE-ID-02:"),
        "{console}"
    );
    assert!(
        console.contains("FAILED [MUST] base/parse-error BASE-ERR-03:"),
        "{console}"
    );
    for line in console.lines() {
        assert!(
            !mismatched(line, &["warn ["], &["FAILED ["]),
            "console: {line}"
        );
    }
    // Shared findings say so, with where it is explained.
    assert!(
        console.contains("shared: every server tested on the TypeScript, Python and Rust (rmcp) MCP SDKs fails this")
            && console.contains("(see docs/popular-servers.md#shared-failure-an-unparsable-line-gets-no-answer)"),
        "{console}"
    );

    let report = common::assert_valid_report(&dir.join("report.json"));
    let mut seen = (0, 0);
    for s in report["scenarios"].as_array().into_iter().flatten() {
        let level = s["broken"]["level"].as_str();
        match s["outcome"].as_str() {
            Some("warn") => {
                seen.0 += 1;
                assert_eq!(level, Some("SHOULD"), "json: {}", s["id"]);
            }
            Some("fail") => {
                seen.1 += 1;
                assert_eq!(level, Some("MUST"), "json: {}", s["id"]);
            }
            _ => {}
        }
        if s["id"] == "base/id-large-integer" {
            assert_eq!(
                s["broken"]["requirements"],
                serde_json::json!(["BASE-ID-02"])
            );
            assert_eq!(s["level"], "MUST", "the scenario's own level is kept");
        }
    }
    assert!(
        seen.0 >= 2 && seen.1 >= 1,
        "warnings and failures: {seen:?}"
    );

    let md = read(&dir.join("report.md"));
    for line in md.lines() {
        assert!(
            !mismatched(line, &["⚠️", "| warn |"], &["❌", "| fail |"]),
            "markdown: {line}"
        );
    }
    assert!(
        md.contains("#### ⚠️ `base/id-large-integer` [SHOULD] warn"),
        "{md}"
    );
    assert!(md.contains("docs/popular-servers.md#shared-failure-an-unparsable-line-gets-no-answer"));

    let html = read(&dir.join("report.html"));
    for card in html.split("<div class=\"problem ").skip(1) {
        let head = &card[..card.find("</div>").unwrap_or(card.len())];
        assert!(
            !mismatched(head, &["o-warn"], &["o-fail"]),
            "html card: {head}"
        );
    }
    assert!(html.contains("class=\"level\">SHOULD</span> <span class=\"id\">base/id-large-integer</span> <span class=\"reqs\">BASE-ID-02</span>"));
    assert!(
        html.contains("docs/popular-servers.md#shared-failure-an-unparsable-line-gets-no-answer")
    );

    let junit = read(&dir.join("junit.xml"));
    for case in junit.split("<testcase").skip(1) {
        let warned = case.contains("<system-out>warn:");
        let failed = case.contains("<failure");
        let level = case
            .split("name=\"level\" value=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or("");
        assert!(
            !(warned && level == "MUST" || failed && level == "SHOULD"),
            "junit: {case}"
        );
        assert!(!case.contains("type=\"SHOULD fail\"") && !case.contains("type=\"MUST warn\""));
    }

    let sarif: Value = serde_json::from_str(&read(&dir.join("report.sarif")))
        .unwrap_or_else(|e| panic!("report.sarif: {e}"));
    let results = sarif["runs"][0]["results"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(!results.is_empty());
    for r in &results {
        let expected = if r["level"] == "warning" {
            "SHOULD"
        } else {
            "MUST"
        };
        assert_eq!(r["properties"]["level"], expected, "sarif: {r}");
        if r["properties"]["scenario"] == "base/id-large-integer" {
            assert_eq!(r["ruleId"], "BASE-ID-02");
        }
    }
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for rule in &rules {
        let warns = rule["defaultConfiguration"]["level"] == "warning";
        assert_eq!(
            rule["properties"]["level"],
            if warns { "SHOULD" } else { "MUST" },
            "{rule}"
        );
    }

    let annotations = faulty_run(&common::output_dir("levels-shown-github"), true);
    let lines: Vec<&str> = annotations
        .lines()
        .filter(|l| l.starts_with("::"))
        .collect();
    assert!(!lines.is_empty(), "{annotations}");
    for line in lines {
        assert!(
            !mismatched(line, &["::warning"], &["::error"]),
            "annotation: {line}"
        );
    }
    assert!(
        annotations.contains("title=base/id-large-integer [SHOULD] BASE-ID-02"),
        "{annotations}"
    );
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![no_format_shows_a_warning_beside_must_or_a_failure_beside_should]
}
