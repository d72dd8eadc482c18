//! Property scenarios end to end, driving the binary: a failure prints its
//! seed, the original and the minimal input and the command that replays
//! it; `--replay SEED:CASE` gives the same minimal input again; the JSON
//! report records the seed; and each property scenario catches a reference
//! fault that only generated inputs reach.

use crate::common;

use serde_json::Value;

/// Runs one scenario in one era against the reference with `faults`;
/// returns (stdout, the JSON report).
fn run(scenario: &str, faults: &[&str], extra: &[&str]) -> (String, Value) {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = common::output_dir(&format!("properties-{n}"));
    let report = dir.join("r.json");
    let report_arg = report.display().to_string();
    let mut args = vec![
        "-k",
        scenario,
        "--protocol-version",
        "2025-11-25",
        "--report-json",
        &report_arg,
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", common::bin(), "serve-reference"]);
    for f in faults {
        args.extend_from_slice(&["--fault", f]);
    }
    let out = common::run_cli(&args);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(report.exists(), "no report:\n{stdout}");
    // The schema knows run.seed and a finding's property block.
    let json = common::assert_valid_report(&report);
    (stdout, json)
}

/// The property block of the first finding that has one.
fn property(report: &Value) -> Value {
    report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["findings"].as_array().cloned().unwrap_or_default())
        .find_map(|f| f.get("property").cloned())
        .unwrap_or(Value::Null)
}

#[test]
fn a_failure_prints_its_seed_and_replays_to_the_same_minimal_case() {
    let id = "sep-1300/property-filter";
    let fault = ["filter-groups-repeat-drops-next"];
    let (stdout, report) = run(id, &fault, &[]);
    assert_eq!(report["run"]["seed"], 0, "the default seed is 0");
    let p = property(&report);
    assert!(
        p.is_object(),
        "no property failure in the report:\n{stdout}"
    );
    let (case, minimal) = (p["case"].as_u64().unwrap_or(999), p["minimal"].clone());
    // The minimal case still shows the defect: a repeated group.
    let gs: Vec<&str> = minimal["gs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut distinct = gs.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(
        distinct.len() < gs.len(),
        "minimal input without a repeat: {minimal}"
    );
    assert_ne!(p["original"], Value::Null);
    let replay = p["replay"].as_str().unwrap_or_default();
    assert!(
        replay.contains(&format!("--replay 0:{case}")) && replay.contains(id),
        "{replay}"
    );
    for line in [
        "generated case",
        "minimal input:",
        "original input:",
        "replay: mcp-conform",
    ] {
        assert!(stdout.contains(line), "console lacks {line:?}:\n{stdout}");
    }

    // The whole seed again, and then only the failing case: the same minimal input.
    let again = property(&run(id, &fault, &["--replay", "0"]).1);
    assert_eq!(again["minimal"], minimal);
    let only = property(&run(id, &fault, &["--replay", &format!("0:{case}")]).1);
    assert_eq!(only["minimal"], minimal);
    assert_eq!(only["case"].as_u64(), Some(case));

    // Another seed draws other cases (and still finds the defect or passes; never errors).
    let (_, other) = run(id, &fault, &["--seed", "7"]);
    assert_eq!(other["run"]["seed"], 7);
    assert_ne!(other["scenarios"][0]["outcome"], "error");
}

/// Each property scenario, against the clean reference and against the
/// fault added for it, which no hand-written scenario catches (the fault
/// matrix shows that).
#[test]
fn each_property_scenario_passes_clean_and_catches_its_fault() {
    let cases = [
        (
            "sep-1300/property-filter",
            "filter-groups-repeat-drops-next",
        ),
        ("sep-1821/property-query", "query-astral-internal-error"),
        ("search/property-search", "search-non-ascii-off-by-one"),
        (
            "category-search/property-tool-search",
            "category-non-ascii-unsorted",
        ),
        (
            "progressive-disclosure/property-tool-descriptions",
            "pd-selection-capped",
        ),
    ];
    for (id, fault) in cases {
        let (stdout, clean) = run(id, &[], &[]);
        assert_eq!(
            clean["scenarios"][0]["outcome"], "pass",
            "{id} clean:\n{stdout}"
        );
        let (stdout, broken) = run(id, &[fault], &[]);
        assert_eq!(
            broken["scenarios"][0]["outcome"], "fail",
            "{id} --fault {fault}:\n{stdout}"
        );
        assert!(property(&broken).is_object(), "{id}: no property block");
    }
}
