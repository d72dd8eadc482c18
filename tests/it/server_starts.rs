//! What a run spends on starting its server, counted (`run.server_starts`
//! in the JSON report), not timed: the reference server's default run
//! stays under a ceiling, and a server that prints one banner line on stdout
//! at start-up costs about what the same server without it costs, while
//! `base/stdout-only-json` still fails it and every other verdict stays the
//! same.

use std::collections::BTreeMap;

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common;
use crate::prereq::{self, Prereq};

/// Server starts of the reference server's default run (every era, one
/// process per start). Lower it when sharing grows; never raise it to make
/// a change pass without saying why in the change. 107 when the count was
/// first taken; 112 after the 2026-07-28 per-connection checks of prompts
/// and resources, each of which opened a second session; 96 to 101 since
/// garbage runs on a warm server checked afterwards and shared scenarios
/// borrow their second sessions from the pool (how many a pool opens while
/// its servers are busy depends on timing); about 106 since the two
/// scenarios that open with a notification run on servers of their own
/// (their verdict depended on what a warm server had read before); 91 to
/// 98 since servers go onward from lane to lane (shared, then reused, then
/// garbage), second sessions wait for one another, and the two scenarios
/// that open with a notification need a server of their own only in
/// 2026-07-28; 90 to 92 (release build) since the servers of the version
/// negotiation property's cases serve the era's other scenarios; 64 to 67
/// since the progressive disclosure scenarios that only need a session
/// without authorizations in the stateful eras run on warm servers in
/// 2026-07-28 (`reused_in_eras`), and the ones whose checks no earlier
/// authorization sways join the description-authorizations group; 35 to
/// 40 since the progressive disclosure scenarios that need tools no read
/// authorized run on warm servers of their own group, picking tools no
/// earlier scenario there read (`confirm_fresh`). The ceiling keeps its
/// margin for a loaded machine, where pools open more.
const REFERENCE_CEILING: u64 = 50;

/// A banner may cost the servers of the scenarios it makes fail (a
/// scenario whose verdict is not a pass keeps its server's exit as
/// evidence), not one server per scenario.
const BANNER_EXTRA: u64 = 4;

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "server_starts::the_reference_run_stays_under_its_start_ceiling",
            || {
                the_reference_run_stays_under_its_start_ceiling();
                Ok(())
            },
        ),
        Trial::test(
            "server_starts::a_property_starts_one_server_per_case_and_none_ahead_of_a_case_that_never_comes",
            || {
                a_property_starts_one_server_per_case_and_none_ahead_of_a_case_that_never_comes();
                Ok(())
            },
        ),
        Trial::test(
            "server_starts::the_next_case_s_server_starts_while_a_case_runs",
            || {
                the_next_case_s_server_starts_while_a_case_runs();
                Ok(())
            },
        ),
        prereq::trial(
            "server_starts::a_banner_on_stdout_fails_one_scenario_and_costs_no_extra_servers",
            Prereq::Python,
            prereq::python,
            a_banner_on_stdout_fails_one_scenario_and_costs_no_extra_servers,
        ),
    ]
}

/// Runs the CLI against `server` and returns the JSON report.
fn run(name: &str, server: &[&str]) -> Value {
    run_with(name, &[], server)
}

/// [`run`] with `options` before the server.
fn run_with(name: &str, options: &[&str], server: &[&str]) -> Value {
    // A directory per run: `output_dir` empties the one it names, and the
    // trials run at once (a shared one lost another trial's report).
    let report = common::output_dir(&format!("server_starts-run-{name}")).join("report.json");
    let report_arg = report.display().to_string();
    let mut args = vec!["-q", "--report-json", &report_arg];
    args.extend(options);
    args.push("--");
    args.extend(server);
    let out = common::cli(&args);
    assert!(
        report.is_file(),
        "{name}: no report; {}; stdout: {}; stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    common::assert_valid_report(&report)
}

fn starts(report: &Value) -> u64 {
    report["run"]["server_starts"]
        .as_u64()
        .unwrap_or_else(|| panic!("no run.server_starts in {}", report["run"]))
}

/// (era, scenario id) → outcome.
fn verdicts(report: &Value) -> BTreeMap<(String, String), String> {
    report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| ((text(&s["era"]), text(&s["id"])), text(&s["outcome"])))
        .collect()
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

fn the_reference_run_stays_under_its_start_ceiling() {
    let report = run("reference", &[common::bin(), "serve-reference"]);
    let n = starts(&report);
    assert!(n > 0, "a stdio run starts its server at least once");
    assert!(
        n <= REFERENCE_CEILING,
        "the reference run started its server {n} times (ceiling {REFERENCE_CEILING})"
    );
}

/// The version negotiation property opens a server for each of its four
/// cases, each case's started while the case before it runs: the run
/// costs the probe's server and one per case, the last case starting none
/// for a case after it.
fn a_property_starts_one_server_per_case_and_none_ahead_of_a_case_that_never_comes() {
    let report = run_with(
        "property",
        &[
            "--protocol-version",
            "2025-11-25",
            "-k",
            "base/property-version-negotiation",
        ],
        &[common::bin(), "serve-reference"],
    );
    let verdict = verdicts(&report);
    assert_eq!(
        verdict.values().collect::<Vec<_>>(),
        ["pass"],
        "{verdict:?}"
    );
    assert_eq!(
        starts(&report),
        1 + 4,
        "the probe's server and one per case"
    );
}

/// The first case's server (the run's second start, after the probe's)
/// will not answer until a third server has started, and gives up after
/// three seconds: it answers only if the next case's server is started
/// while this case runs, as it is when starts overlap cases.
fn the_next_case_s_server_starts_while_a_case_runs() {
    let dir = common::output_dir("server_starts-ahead");
    let log = dir.join("starts.log");
    let _ = std::fs::remove_file(&log);
    let script = dir.join("server.sh");
    let body = format!(
        "#!/bin/sh\nlog='{log}'\necho start >> \"$log\"\n\
         if [ \"$(wc -l < \"$log\")\" -eq 2 ]; then\n\
         tries=0\n\
         while [ \"$(wc -l < \"$log\")\" -lt 3 ]; do\n\
         tries=$((tries + 1)); [ \"$tries\" -gt 30 ] && exit 3\n\
         sleep 0.1\n\
         done\n\
         fi\n\
         exec '{bin}' serve-reference\n",
        log = log.display(),
        bin = common::bin()
    );
    common::write_script(&script, &body);
    let script = script.display().to_string();
    let report = run_with(
        "ahead",
        &[
            "--protocol-version",
            "2025-11-25",
            "-k",
            "base/property-version-negotiation",
        ],
        &[&script],
    );
    let verdict = verdicts(&report);
    assert_eq!(
        verdict.values().collect::<Vec<_>>(),
        ["pass"],
        "the first case's server gave up waiting for the next one's: {}",
        report["scenarios"][0]["message"]
    );
}

fn a_banner_on_stdout_fails_one_scenario_and_costs_no_extra_servers() {
    let tiny = common::root().join("fixtures/servers/tiny_server.py");
    let tiny = tiny.display().to_string();
    let python = common::python3();
    let plain = run("plain", &[python, "-S", &tiny]);
    let banner = run("banner", &[python, "-S", &tiny, "--break", "banner"]);
    let (plain_starts, banner_starts) = (starts(&plain), starts(&banner));
    assert!(
        banner_starts <= plain_starts + BANNER_EXTRA,
        "the banner server was started {banner_starts} times, the plain one {plain_starts}"
    );
    let (plain, banner) = (verdicts(&plain), verdicts(&banner));
    assert_eq!(
        plain.keys().collect::<Vec<_>>(),
        banner.keys().collect::<Vec<_>>()
    );
    for (key, outcome) in &banner {
        let before = &plain[key];
        if key.1 == "base/stdout-only-json" {
            assert_eq!(outcome, "fail", "{key:?}: the banner breaks the stdio rule");
            assert_eq!(before, "pass", "{key:?} without the banner");
        } else {
            assert_eq!(outcome, before, "{key:?}: the banner changed this verdict");
        }
    }
}
