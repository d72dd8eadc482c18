//! The warm pool over stdio: the probe's server serves the shared scenarios
//! of its era, one at a time, without another server being started; a
//! server that warned but stayed healthy is handed on, one that left a
//! request unanswered is not.
//! Counted with a wrapper that notes each start of the reference server.

use std::path::PathBuf;

use crate::common;

/// A script that records each start in `starts.log` and runs the reference.
fn counting_server(dir: &std::path::Path) -> (PathBuf, PathBuf) {
    let log = dir.join("starts.log");
    let script = dir.join("server.sh");
    let body = format!(
        "#!/bin/sh\necho start >> '{}'\nexec '{}' serve-reference \"$@\"\n",
        log.display(),
        common::bin()
    );
    common::write_script(&script, &body);
    (script, log)
}

/// Runs `scenarios` (all `isolation: shared`) in one era, one at a time;
/// returns the run's exit code and how many servers were started.
fn starts(name: &str, scenarios: &[&str], faults: &[&str]) -> (Option<i32>, usize) {
    let dir = common::output_dir(&format!("warm-pool-{name}"));
    let (script, log) = counting_server(&dir);
    let script = script.display().to_string();
    let mut args = vec!["-q", "--jobs", "1", "--protocol-version", "2025-11-25"];
    for id in scenarios {
        args.extend(["-k", id]);
    }
    args.extend(["--", &script]);
    for f in faults {
        args.extend(["--fault", f]);
    }
    let out = common::run_cli(&args);
    let count = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .count();
    (out.status.code(), count)
}

/// Run in the catalog's order (`--jobs 1`): the one that warns under
/// `invalid-cursor-ok` is not the last, so a scenario comes after it.
const SHARED: [&str; 4] = [
    "base/error-shape",
    "base/handshake",
    "base/invalid-cursor",
    "base/unknown-method",
];

fn the_probes_server_serves_every_shared_scenario_of_its_era() {
    let (code, count) = starts("clean", &SHARED, &[]);
    assert_eq!(code, Some(0));
    assert_eq!(count, 1, "the probe's server only, reused by all four");
}

fn a_server_that_warned_but_answered_everything_is_handed_on() {
    let (code, count) = starts("warned", &SHARED, &["invalid-cursor-ok"]);
    assert_eq!(code, Some(0), "a SHOULD warns and the run passes");
    assert_eq!(
        count, 1,
        "the warning left the server healthy: it serves the rest"
    );
}

/// `base/id-large-integer` comes before `base/unknown-method` in the
/// catalog's order.
const UNANSWERED: [&str; 2] = ["base/id-large-integer", "base/unknown-method"];

fn a_server_that_left_a_request_unanswered_is_stopped_and_the_next_scenario_gets_another() {
    let (_, clean) = starts("unanswered-clean", &UNANSWERED, &[]);
    assert_eq!(clean, 1, "a clean server serves both");
    let (_, count) = starts("unanswered", &UNANSWERED, &["id-large-dropped"]);
    assert_eq!(
        count, 2,
        "the dropped request could still be answered late: the next scenario gets another server"
    );
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        the_probes_server_serves_every_shared_scenario_of_its_era,
        a_server_that_warned_but_answered_everything_is_handed_on,
        a_server_that_left_a_request_unanswered_is_stopped_and_the_next_scenario_gets_another
    ]
}
