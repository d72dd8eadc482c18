//! `mcp-conform quality` end to end: the built-in reference server's
//! figures on every surface with the baseline (console snapshot, latency
//! redacted; JSON), the unranked-search fault's far lower MRR, a gate's
//! exit code, and a labelled set's file:line:col error.

use serde_json::Value;

use crate::common::{self, text};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        reference_figures_for_every_surface,
        unranked_search_fault_lowers_mrr,
        shipped_labelled_set_is_measured_with_styles,
        bad_labelled_set_names_file_line_and_column,
        a_run_with_quality_adds_info_and_keeps_its_verdict,
    ]
}

/// Latencies vary from run to run; everything else is seeded.
fn redact(console: &str) -> String {
    let latency = regex::Regex::new(r"p(50|95) [0-9.]+ ms").unwrap_or_else(|e| panic!("{e}"));
    let target = regex::Regex::new(r"quality: .*? \(stdio").unwrap_or_else(|e| panic!("{e}"));
    let s = latency.replace_all(console, "p$1 [ms]");
    target
        .replace_all(&s, "quality: [reference] (stdio")
        .into_owned()
}

fn surface<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["surfaces"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["surface"] == name))
        .unwrap_or_else(|| panic!("no {name} in {report}"))
}

fn mrr(report: &Value, name: &str, who: &str) -> f64 {
    surface(report, name)[who]["mrr"]["mean"]
        .as_f64()
        .unwrap_or_else(|| panic!("{name} {who} MRR"))
}

fn read_json(path: &std::path::Path) -> Value {
    let t = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&t).unwrap_or_else(|e| panic!("{e}"))
}

fn reference_figures_for_every_surface() {
    let dir = common::output_dir("quality-reference");
    let json = dir.join("quality.json");
    let out = common::cli(&[
        "quality",
        "--max-queries",
        "40",
        "--report-json",
        &json.display().to_string(),
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    insta::assert_snapshot!("quality_reference_console", redact(&stdout));
    let report = read_json(&json);
    for name in [
        "tools/list query",
        "tools/search",
        "prompts/search",
        "resources/search",
        "tool_search",
    ] {
        let s = surface(&report, name);
        assert!(
            s["baseline"]["mrr"]["mean"].is_f64(),
            "{name}: a baseline beside it"
        );
        let q = &s["queries"][0];
        assert!(
            q["ranks"].is_array() && q["baseline_ranks"].is_array(),
            "{q}"
        );
    }
    assert!(report["absent"].as_array().is_some_and(Vec::is_empty));
}

fn unranked_search_fault_lowers_mrr() {
    let dir = common::output_dir("quality-unranked");
    let measure = |name: &str, faults: &[&str]| {
        let json = dir.join(format!("{name}.json"));
        let j = json.display().to_string();
        let mut args = vec![
            "quality",
            "--max-queries",
            "60",
            "--report-json",
            &j,
            "--",
            common::bin(),
            "serve-reference",
        ];
        for f in faults {
            args.extend(["--fault", f]);
        }
        let out = common::cli(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        read_json(&json)
    };
    let clean = measure("clean", &[]);
    let faulty = measure("unranked", &["search-unranked"]);
    for name in ["tools/search", "prompts/search", "resources/search"] {
        let (c, f) = (mrr(&clean, name, "server"), mrr(&faulty, name, "server"));
        assert!(c - f >= 0.3, "{name}: clean MRR {c:.2}, unranked {f:.2}");
        // The baseline is the harness's: the same on both.
        assert_eq!(
            mrr(&clean, name, "baseline"),
            mrr(&faulty, name, "baseline")
        );
    }
    // A CI gate on it: exit 1 with the surface named.
    let out = common::cli(&[
        "quality",
        "--max-queries",
        "30",
        "--min-mrr",
        "0.9",
        "--",
        common::bin(),
        "serve-reference",
        "--fault",
        "search-unranked",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("gate not met: tools/search: MRR"),
        "{}",
        text(&out.stderr)
    );
}

fn shipped_labelled_set_is_measured_with_styles() {
    let out = common::cli(&[
        "quality",
        "--queries",
        "docs/quality/reference-queries.yaml",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("own (24)") && stdout.contains("paraphrase (24)"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("not in the server's catalog"),
        "every labelled name exists: {stdout}"
    );
}

fn bad_labelled_set_names_file_line_and_column() {
    let dir = common::output_dir("quality-bad-set");
    let file = dir.join("q.yaml");
    std::fs::write(
        &file,
        "queries:\n  - query: create a page\n    relevant: {page_create: -1}\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let f = file.display().to_string();
    let out = common::cli(&["quality", "--queries", &f]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("{f}:3:29: the grade of `page_create`")),
        "{stderr}"
    );
}

/// `--quality` on a run: the figures follow the summary as info; the exit
/// code stays the run's, even when the ranking is careless.
fn a_run_with_quality_adds_info_and_keeps_its_verdict() {
    let out = common::cli(&[
        "-q",
        "-p",
        "sep-1300",
        "--quality",
        "--",
        common::bin(),
        "serve-reference",
        "--fault",
        "search-unranked",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let info = stdout
        .find("INFO  search quality")
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        stdout.find("conformance result:").is_some_and(|v| v < info),
        "{stdout}"
    );
    assert!(
        stdout[info..].contains("tools/search: 314 queries"),
        "{stdout}"
    );
}
