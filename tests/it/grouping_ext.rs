//! The grouping and SEP-1300 profiles against
//! `fixtures/servers/grouping_ext_server.py`, an independent server of the
//! grouping extension's current text (03d246f) that declares the extension
//! and not SEP-1300's `filtering`, answers `groups/list` in one page and
//! nests groups. Nothing may fail, warn or error on it: a correct server of
//! one draft does not fail a sibling draft for answering `groups/list`, which
//! both define. With the extension left undeclared, SEP-1300's capability
//! check fails it again.
//!
//! Needs python3: without it the trials are ignored with the reason, unless
//! the `python` prerequisite is required (CI requires it).

use libtest_mimic::Trial;
use serde_json::Value;

use crate::prereq::{self, Prereq};

pub fn trials() -> Vec<Trial> {
    vec![
        prereq::trial(
            "grouping_ext::a_server_of_the_current_grouping_text_gets_no_failure_or_warning",
            Prereq::Python,
            prereq::python,
            a_server_of_the_current_grouping_text_gets_no_failure_or_warning,
        ),
        prereq::trial(
            "grouping_ext::answering_groups_list_with_neither_capability_still_fails",
            Prereq::Python,
            prereq::python,
            answering_groups_list_with_neither_capability_still_fails,
        ),
    ]
}

/// The grouping and SEP-1300 profiles against the fixture, every era it
/// accepts: the JSON report's scenarios.
fn run(breaks: &[&str]) -> Vec<Value> {
    let dir = crate::common::scratch_dir(&format!("grouping-ext-{}", breaks.len()));
    let report = dir.join("report.json");
    let report_arg = report.display().to_string();
    let script = crate::common::root()
        .join("fixtures/servers/grouping_ext_server.py")
        .display()
        .to_string();
    let mut args = vec![
        "-q",
        "-p",
        "grouping",
        "-p",
        "sep-1300",
        "--timeout-ms",
        "10000",
        "--report-json",
        &report_arg,
        "--",
        crate::common::python3(),
        crate::common::FIXTURE_PYTHON_FLAGS,
        &script,
    ];
    for b in breaks {
        args.extend(["--break", b]);
    }
    crate::common::run_cli(&args);
    let json = crate::common::assert_valid_report(&report);
    json["scenarios"].as_array().cloned().unwrap_or_default()
}

fn outcome(r: &Value) -> &str {
    r["outcome"].as_str().unwrap_or_default()
}

fn a_server_of_the_current_grouping_text_gets_no_failure_or_warning() {
    let all = run(&[]);
    let bad: Vec<String> = all
        .iter()
        .filter(|r| matches!(outcome(r), "fail" | "warn" | "error"))
        .map(|r| {
            format!(
                "{} [{}] {}: {}",
                r["id"],
                r["era"],
                outcome(r),
                r["message"]
            )
        })
        .collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // the sibling draft's capability checks ran on it and passed
    for id in [
        "sep-1300/capability-declared",
        "sep-1300/no-capability-method-not-found",
    ] {
        let passed = all
            .iter()
            .filter(|r| r["id"] == id)
            .all(|r| outcome(r) == "pass");
        assert!(passed, "{id}: {all:?}");
    }
    // and the grouping profile did run: membership checked, groups/list one page
    let ran = |id: &str, want: &str| all.iter().any(|r| r["id"] == id && outcome(r) == want);
    assert!(ran("grouping/membership-shape", "pass"));
    assert!(ran("grouping/no-cycles", "pass"));
    assert!(ran("grouping/groups-list-pagination", "skip"));
}

fn answering_groups_list_with_neither_capability_still_fails() {
    let all = run(&["no-extension"]);
    let failed = all
        .iter()
        .filter(|r| r["id"] == "sep-1300/capability-declared")
        .all(|r| outcome(r) == "fail");
    assert!(failed, "{all:?}");
    let warned = all
        .iter()
        .filter(|r| r["id"] == "sep-1300/no-capability-method-not-found")
        .all(|r| outcome(r) == "warn");
    assert!(warned, "{all:?}");
}
