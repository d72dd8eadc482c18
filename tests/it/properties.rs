//! Property scenarios end to end, driving the binary: a failure prints its
//! seed, the original and the minimal input and the command that replays
//! it; `--replay SEED:CASE` gives the same minimal input again; the JSON
//! report records the seed; and each property scenario catches a reference
//! fault that only generated inputs reach.

use crate::common;

use mcp_conform::scenario::model::Scenario;
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

/// A reference fault and the outcome it gives (fail, or warn where the rule
/// is a SHOULD).
type Catch = (&'static str, &'static str);

/// Each property scenario and the reference faults it catches on its own.
const CATCHES: &[(&str, &[Catch])] = &[
    (
        "sep-1300/property-filter",
        &[
            ("groups-all", "fail"),
            ("tags-any", "fail"),
            ("tags-ignore-groups", "fail"),
            ("empty-groups-match-none", "warn"),
            ("empty-tags-match-none", "warn"),
            ("cursor-drops-query", "fail"),
            ("cursor-duplicates", "fail"),
            ("filter-reveals-hidden", "fail"),
            // entry identity is SEP1300-FLT-05 (SHOULD), checked by
            // sep-1300/filter-entries-identical; the property checks names
            ("filter-groups-repeat-drops-next", "fail"),
            ("groups-list-duplicates", "fail"),
            ("tags-list-duplicates", "fail"),
            ("filtering-list-changed-string", "fail"),
        ],
    ),
    (
        "sep-1821/property-query",
        &[
            ("ignore-query", "fail"),
            ("query-nul-internal-error", "fail"),
            ("query-astral-internal-error", "fail"),
            ("query-as-regex", "fail"),
            ("query-reveals-hidden", "fail"),
            ("cursor-duplicates", "fail"),
            ("cursor-drops-query", "fail"),
        ],
    ),
    (
        "search/property-search",
        &[
            ("search-page-overflow", "fail"),
            ("search-cursor-drops-query", "fail"),
            ("search-non-ascii-off-by-one", "fail"),
            ("cursor-duplicates", "fail"),
            ("search-exposes-hidden", "warn"),
            ("search-unranked", "warn"),
            ("search-not-identical", "warn"),
            ("search-mixed-features", "warn"),
        ],
    ),
    (
        "category-search/property-tool-search",
        &[
            ("category-unsorted", "fail"),
            ("category-non-ascii-unsorted", "fail"),
            ("category-limit-ignored", "fail"),
            ("category-duplicate-matches", "fail"),
            ("category-total-is-page", "fail"),
            ("category-matches-tags", "fail"),
            ("category-tags-all", "fail"),
            ("category-filter-ignored-with-query", "fail"),
            ("category-counts-hidden", "fail"),
            ("category-shape", "fail"),
        ],
    ),
    (
        "category-search/property-bad-arguments",
        &[("category-bad-args-internal-error", "warn")],
    ),
    (
        "progressive-disclosure/property-tool-descriptions",
        &[
            ("pd-extra-tools", "fail"),
            ("pd-case-insensitive", "fail"),
            ("pd-authorize-any", "fail"),
            ("pd-no-auth", "fail"),
            ("pd-first-name-only", "fail"),
            ("pd-selection-capped", "fail"),
            ("pd-placeholder-schema", "fail"),
            ("pd-full-schemas-in-list", "fail"),
            ("pd-terse-resource", "fail"),
        ],
    ),
    (
        "progressive-disclosure/property-refusal-uri",
        &[("pd-resource-uri-bare", "fail")],
    ),
    (
        "progressive-disclosure/property-hidden-tools",
        &[("pd-describes-hidden", "fail")],
    ),
    (
        "sep-1821/property-undeclared-query",
        &[("query-capability-missing", "warn")],
    ),
    (
        "search/property-undeclared-search",
        &[("search-capability-missing", "fail")],
    ),
    (
        "sep-1300/property-undeclared-filter",
        &[("filtering-capability-missing", "fail")],
    ),
    (
        "search/property-missing-query",
        &[
            ("search-missing-query-ok", "warn"),
            ("search-cursor-without-query-ok", "warn"),
        ],
    ),
    (
        "progressive-disclosure/property-auth-persists",
        &[
            ("pd-auth-replaced", "fail"),
            ("pd-auth-filter-scoped", "fail"),
            ("pd-first-name-only", "fail"),
            ("pd-shared-auth", "fail"),
        ],
    ),
    (
        "progressive-disclosure/property-missing-selection",
        &[("pd-missing-selection-ok", "fail")],
    ),
    (
        "cross-feature/property-query-and-filter",
        &[("query-drops-filter", "warn")],
    ),
    (
        "cross-feature/property-two-sessions",
        &[("session-varying-results", "warn")],
    ),
];

/// Property scenarios that run only where a capability is left undeclared:
/// they skip on the clean reference, which declares every capability.
const CLEAN_SKIPS: &[&str] = &[
    "sep-1821/property-undeclared-query",
    "search/property-undeclared-search",
    "sep-1300/property-undeclared-filter",
];

/// Property scenarios, and reference faults under which they must pass: a
/// server that leaves the capability undeclared and behaves accordingly
/// (`query-capability-missing` with `ignore-query`: no filtering declared,
/// the query ignored).
const PASSES_UNDER: &[(&str, &[&str])] = &[(
    "sep-1821/property-undeclared-query",
    &["query-capability-missing", "ignore-query"],
)];

/// Seeds every catch must hold under (a few, to stay cheap; the examples of
/// each scenario put the decisive inputs in every seed's early cases).
const SEEDS: [u64; 3] = [0, 3, 7];

/// Each property scenario, in-process against the reference with `faults`
/// under `seed` (protocol 2025-11-25): its outcome.
fn outcome_under(catalog: &[Scenario], id: &str, faults: &[&str], seed: u64) -> String {
    use mcp_conform::run::scheduler::run_all;
    let scenarios: Vec<Scenario> = catalog.iter().filter(|s| s.id == id).cloned().collect();
    assert_eq!(scenarios.len(), 1, "no built-in scenario {id}");
    let mut cfg = (*common::config(common::reference_server(faults), Some("2025-11-25"))).clone();
    cfg.property.seed = seed;
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let results = common::runtime().block_on(run_all(scenarios, std::sync::Arc::new(cfg), 1, tx));
    results
        .first()
        .map(|r| format!("{:?}", r.outcome).to_lowercase())
        .unwrap_or_default()
}

/// Every property scenario passes the clean reference (or skips there, the
/// ones for undeclared capabilities, and passes a server that leaves the
/// capability undeclared and ignores it) and catches each of its faults
/// under seeds 0, 3 and 7: no catch depends on a lucky draw.
fn every_property_catch_holds_under_several_seeds() {
    let catalog = mcp_conform::builtin::scenarios().unwrap_or_else(|e| panic!("{e}"));
    // (scenario, faults, expected outcome, seed)
    let mut jobs: Vec<(&str, Vec<&str>, &str, u64)> = Vec::new();
    for (id, faults) in CATCHES {
        let clean = if CLEAN_SKIPS.contains(id) {
            "skip"
        } else {
            "pass"
        };
        for seed in SEEDS {
            jobs.push((id, Vec::new(), clean, seed));
            jobs.extend(faults.iter().map(|(f, want)| (*id, vec![*f], *want, seed)));
        }
    }
    for (id, faults) in PASSES_UNDER {
        jobs.extend(SEEDS.map(|seed| (*id, faults.to_vec(), "pass", seed)));
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let misses = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| loop {
                // The verdicts are what this test checks (see fault_matrix.rs).
                common::skip_read_checks_here();
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((id, faults, want, seed)) = jobs.get(i) else {
                    break;
                };
                let got = outcome_under(&catalog, id, faults, *seed);
                if got != *want {
                    if let Ok(mut m) = misses.lock() {
                        m.push(format!(
                            "{id} --fault {faults:?} --seed {seed}: {got}, expected {want}"
                        ));
                    }
                }
            });
        }
    });
    let misses = misses.into_inner().unwrap_or_default();
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

/// A plain server: two tools, neither `tools.filtering`, `filtering` nor
/// any `search` declared, every method beyond the handshake, ping and tools/list unknown.
#[cfg(unix)]
const PLAIN_SERVER: &str = r#"#!/bin/sh
tools='[{"name":"alpha_read","description":"Reads alpha records.","inputSchema":{"type":"object"}},{"name":"beta_write","description":"Writes beta records.","inputSchema":{"type":"object"}}]'
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/^.*"id":\([0-9][0-9]*\).*$/\1/p')
  [ -n "$id" ] || continue
  method=$(printf '%s' "$line" | sed -n 's/^.*"method":"\([^"]*\)".*$/\1/p')
  case "$method" in
    initialize) echo '{"jsonrpc":"2.0","id":'"$id"',"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"plain","version":"1"}}}' ;;
    ping) echo '{"jsonrpc":"2.0","id":'"$id"',"result":{}}' ;;
    tools/list) echo '{"jsonrpc":"2.0","id":'"$id"',"result":{"tools":'"$tools"'}}' ;;
    *) echo '{"jsonrpc":"2.0","id":'"$id"',"error":{"code":-32601,"message":"Method not found"}}' ;;
  esac
done
"#;

/// The properties for undeclared capabilities run (not skip) on a server
/// that declares neither filtering nor search, and pass it: its tools/list
/// ignores the query and the filter, and its */search, groups/list and
/// tags/list methods are unknown.
#[cfg(unix)]
fn the_undeclared_capability_properties_pass_a_server_that_declares_and_serves_neither() {
    let dir = common::output_dir("properties-plain");
    let server = dir.join("plain.sh");
    common::write_script(&server, PLAIN_SERVER);
    let report = dir.join("r.json");
    let report_arg = report.display().to_string();
    let server_arg = server.display().to_string();
    let out = common::run_cli(&[
        "-k",
        "sep-1821/property-undeclared-query",
        "-k",
        "search/property-undeclared-search",
        "-k",
        "sep-1300/property-undeclared-filter",
        "--protocol-version",
        "2025-11-25",
        "--report-json",
        &report_arg,
        "--",
        &server_arg,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = common::assert_valid_report(&report);
    let outcomes: Vec<(String, String)> = json["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            (
                s["id"].as_str().unwrap_or_default().to_string(),
                s["outcome"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(outcomes.len(), 3, "{stdout}");
    assert!(
        outcomes.iter().all(|(_, o)| o == "pass"),
        "{outcomes:?}\n{stdout}"
    );
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        a_failure_prints_its_seed_and_replays_to_the_same_minimal_case,
        each_property_scenario_passes_clean_and_catches_its_fault,
        every_property_catch_holds_under_several_seeds,
        the_undeclared_capability_properties_pass_a_server_that_declares_and_serves_neither
    ]
}
