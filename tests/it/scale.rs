//! A large catalog: the reference server serving a generated catalog of
//! 5,000 tools, one era, the scenarios whose walks and invariants grow with
//! the server (pagination, search, filters, every group and tag). A correct
//! server never fails for being large: no page cap, no "did not end within
//! N pages" (a broad search of 5,000 tools at 10 a page is hundreds of pages).

use crate::common::{assert_valid_report, bin, output_dir, run_cli, text};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        five_thousand_tools_no_failure,
        a_large_catalog_narrows_the_default_jobs_and_never_a_chosen_number,
        a_server_of_the_stateless_era_alone_narrows_the_default_jobs_too
    ]
}

/// The scenarios that walk whole lists, or loop over every group, tag or
/// search result: the size-dependent ones, as a sample of the catalog.
const SAMPLE: &[&str] = &[
    "search/pagination-walk",
    "search/cursor-other-query",
    "search/property-search",
    "search/tools-identical-to-list",
    "cross-feature/pd-fetch-outside-filter",
    "cross-feature/query-and-filter",
    "cross-feature/query-filter-cursor-replay",
    "sep-1300/filter-pagination",
    "sep-1300/filter-each-tag",
    "sep-1821/query-pagination",
    "grouping/groups-list-pagination",
];

/// A reference catalog of `tools` generated tools (`serve-reference
/// --catalog-gen`), written in `dir`; its path.
fn generated_catalog(dir: &std::path::Path, tools: usize) -> String {
    let catalog = dir.join(format!("catalog-{tools}.json"));
    let catalog = catalog.to_string_lossy().into_owned();
    let count = tools.to_string();
    let gen = run_cli(&[
        "serve-reference",
        "--catalog-gen",
        &count,
        "--out",
        &catalog,
    ]);
    assert!(gen.status.success(), "{}", text(&gen.stderr));
    catalog
}

fn five_thousand_tools_no_failure() {
    let dir = output_dir("scale");
    let catalog = generated_catalog(&dir, 5000);
    let report = dir.join("report.json");
    let report_arg = report.to_string_lossy().into_owned();
    let mut args = vec![
        "-q",
        "-j",
        "2",
        "--protocol-version",
        "2025-11-25",
        "--report-json",
        report_arg.as_str(),
    ];
    for id in SAMPLE.iter().copied() {
        args.extend(["-k", id]);
    }
    args.extend(["--", bin(), "serve-reference", "--catalog", &catalog[..]]);
    // Without the read verification: it evaluates every expression twice,
    // and this trial is about the harness's own limits, not the analysis.
    let out = crate::common::cli(&args);
    let report = assert_valid_report(&report);
    let scenarios = report["scenarios"].as_array().cloned().unwrap_or_default();
    assert_eq!(scenarios.len(), SAMPLE.len(), "{}", text(&out.stdout));
    let bad: Vec<String> = scenarios
        .iter()
        .filter(|s| matches!(s["outcome"].as_str(), Some("fail" | "warn" | "error")))
        .map(|s| format!("{} {}: {}", s["outcome"], s["id"], s["message"]))
        .collect();
    assert!(
        bad.is_empty(),
        "a correct 5,000-tool server failed:\n{}",
        bad.join("\n")
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

/// Over 20,000 tools, `-j` left to its default runs two scenarios at a
/// time (`RunOptions::jobs_for`), says so on the console and in the JSON
/// report; `-j 8` runs eight, and the report says nothing of it.
fn a_large_catalog_narrows_the_default_jobs_and_never_a_chosen_number() {
    let dir = output_dir("scale-jobs");
    let catalog = generated_catalog(&dir, 20_000);
    let run = |jobs: Option<&str>, name: &str| {
        let report = dir.join(name);
        let report_arg = report.to_string_lossy().into_owned();
        let mut args = vec![
            "--protocol-version",
            "2025-11-25",
            "-k",
            "core/ping",
            "--report-json",
            report_arg.as_str(),
        ];
        if let Some(jobs) = jobs {
            args.extend(["-j", jobs]);
        }
        args.extend(["--", bin(), "serve-reference", "--catalog", &catalog[..]]);
        let out = crate::common::cli(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
        (out, assert_valid_report(&report))
    };

    let (out, report) = run(None, "default.json");
    let narrowed = &report["run"]["jobs_narrowed"];
    assert_eq!(narrowed["jobs"], 2, "{narrowed}");
    assert_eq!(narrowed["tools"], 20_000, "{narrowed}");
    assert!(
        narrowed["default"].as_u64().is_some_and(|d| d > 2),
        "{narrowed}"
    );
    let line = format!(
        "20000 tools listed: 2 scenarios at a time instead of {}",
        narrowed["default"]
    );
    assert!(text(&out.stdout).contains(&line), "{}", text(&out.stdout));

    let (out, report) = run(Some("8"), "chosen.json");
    assert!(
        report["run"].get("jobs_narrowed").is_none(),
        "{}",
        report["run"]
    );
    assert!(
        !text(&out.stdout).contains("tools listed:"),
        "{}",
        text(&out.stdout)
    );
}

/// A server that speaks only 2026-07-28 is probed in that era alone, and
/// its listing sizes the jobs as a stateful era's does: nothing runs
/// before its probe ends, so nothing starts at the unsized default.
fn a_server_of_the_stateless_era_alone_narrows_the_default_jobs_too() {
    let dir = output_dir("scale-jobs-stateless");
    let catalog = generated_catalog(&dir, 20_000);
    let report = dir.join("report.json");
    let report_arg = report.to_string_lossy().into_owned();
    let out = crate::common::cli(&[
        "-k",
        "core/ping",
        "--report-json",
        report_arg.as_str(),
        "--",
        bin(),
        "serve-reference",
        "--modern-only",
        "--catalog",
        &catalog[..],
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let report = assert_valid_report(&report);
    assert_eq!(report["run"]["eras"], serde_json::json!(["2026-07-28"]));
    let narrowed = &report["run"]["jobs_narrowed"];
    assert_eq!(narrowed["jobs"], 2, "{}", report["run"]);
    assert_eq!(narrowed["tools"], 20_000, "{narrowed}");
    assert!(
        text(&out.stdout).contains("20000 tools listed: 2 scenarios at a time"),
        "{}",
        text(&out.stdout)
    );
}
