//! The warm pool over stdio: the probe's server serves the shared scenarios
//! of its era, one at a time, without another server being started; a
//! server that warned but stayed healthy is handed on, and so is one that
//! dropped a request but read on; a scenario that ends its server runs last
//! among the reused ones, one that never uses its main session starts no
//! server for it, one opened without the handshake hands its server on
//! once its own initialize settled on the era, and so do a property's
//! cases; a legacy server's refused discover falls back to initialize; an
//! answer to a notification written late is not the next scenario's.
//! Counted with a wrapper that notes each start of the reference server,
//! or the report's `run.server_starts`.

use std::path::PathBuf;

use crate::common;
use crate::prereq::{self, Prereq};

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

fn a_server_that_dropped_a_request_is_handed_on() {
    let (_, clean) = starts("unanswered-clean", &UNANSWERED, &[]);
    assert_eq!(clean, 1, "a clean server serves both");
    let (_, count) = starts("unanswered", &UNANSWERED, &["id-large-dropped"]);
    assert_eq!(
        count, 1,
        "the server answered the sentinel behind the request it dropped: it read on, and serves the next scenario (a late answer would be set aside)"
    );
}

/// Writes scenarios `base/unit-<name>` of the same era, one per
/// `(name, yaml)`: `yaml` is what goes between the header and the steps.
fn write_scenarios(dir: &std::path::Path, scenarios: &[(&str, &str, &str)]) -> PathBuf {
    let root = dir.join("scenarios");
    std::fs::create_dir_all(&root).expect("the scenario directory is made");
    for (name, extra, steps) in scenarios {
        let text = format!(
            "id: base/unit-{name}\ntitle: a scenario\nprofile: base\nlevel: MUST\n{extra}steps:\n{steps}"
        );
        std::fs::write(root.join(format!("{name}.yaml")), text).expect("the scenario is written");
    }
    root
}

/// A step that lists tools on `session` (main when empty).
fn list_tools(session: &str) -> String {
    let on = if session.is_empty() {
        String::new()
    } else {
        format!("    session: {session}\n")
    };
    format!(
        "  - request: tools/list\n{on}    expect:\n      result: {{ tools: {{ $type: array }} }}\n"
    )
}

/// Runs `scenarios` (see [`write_scenarios`]) alone, one at a time in
/// their start order; returns how many servers started.
fn custom_starts(name: &str, scenarios: &[(&str, &str, &str)]) -> usize {
    let dir = common::output_dir(&format!("warm-pool-{name}"));
    let (script, log) = counting_server(&dir);
    let _ = std::fs::remove_file(&log);
    let script = script.display().to_string();
    let era = ["--protocol-version", "2025-11-25"];
    passing_run(&dir, scenarios, &era, &[&script]);
    std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .count()
}

/// Runs `scenarios` (see [`write_scenarios`]) in `dir`, alone and one at
/// a time in their start order, with `options`, against `server` (a
/// command and its arguments); the run must pass. Returns its JSON report.
fn passing_run(
    dir: &std::path::Path,
    scenarios: &[(&str, &str, &str)],
    options: &[&str],
    server: &[&str],
) -> serde_json::Value {
    let scenarios = write_scenarios(dir, scenarios).display().to_string();
    let report = dir.join("report.json");
    let report_arg = report.display().to_string();
    let mut args = vec!["-q", "--jobs", "1", "--no-builtin"];
    args.extend_from_slice(options);
    args.extend([
        "--scenarios",
        &scenarios,
        "--report-json",
        &report_arg,
        "--",
    ]);
    args.extend_from_slice(server);
    let out = common::run_cli(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = std::fs::read_to_string(&report).expect("the report is written");
    serde_json::from_str(&text).expect("the report is JSON")
}

fn a_scenario_that_ends_its_server_hands_it_to_no_other() {
    let main = list_tools("");
    let kept = "isolation: reused\n";
    let ends = "isolation: reused\nends_server: true\n";
    assert_eq!(
        custom_starts("reused-kept", &[("a", kept, &main), ("b", kept, &main)]),
        1,
        "the probe's server serves both reused scenarios"
    );
    assert_eq!(
        custom_starts("reused-ended", &[("a", ends, &main), ("b", ends, &main)]),
        2,
        "the server of the scenario that ends it is stopped: the next one gets another"
    );
}

/// Listed first, the scenario that ends its server (and waits for
/// nothing) still runs after the other reused one: its server serves no
/// scenario after it.
fn a_scenario_that_ends_its_server_runs_last_in_its_lane() {
    let main = list_tools("");
    let ends = "isolation: reused\nends_server: true\n";
    assert_eq!(
        custom_starts(
            "reused-ends-last",
            &[("a", ends, &main), ("b", "isolation: reused\n", &main)]
        ),
        1,
        "b runs on the probe's server before a ends it"
    );
}

/// A scenario whose steps all name a session of their own starts a server
/// for each of them, and none for a main session it never uses.
fn a_scenario_that_never_uses_its_main_session_starts_no_server_for_it() {
    let other = list_tools("b");
    assert_eq!(
        custom_starts("no-main", &[("a", "isolation: fresh\n", &other)]),
        2,
        "the probe's server and session b's"
    );
}

/// A `hands_on` scenario opened without the handshake that sends
/// `initialize` for `version` and a ping, as `core/ping-before-initialized`
/// does (in 2025-11-25).
fn pings_before_initialized(version: &str) -> String {
    format!(
        "  - request: initialize\n    params: {{ protocolVersion: \"{version}\", capabilities: {{}}, clientInfo: {{ name: t, version: \"0\" }} }}\n  - request: ping\n    expect: {{ result: {{ $type: object }} }}\n"
    )
}

/// A scenario that writes an unparsable line (it runs in the garbage lane).
const GARBAGE: &str = "  - send_raw: '{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\", '\n    expect: { error: { code: -32700 } }\n  - request: ping\n    expect: { result: { $type: object } }\n";

/// The server of a scenario opened without the handshake serves the
/// garbage lane once its own initialize settled on the era (the harness
/// sends the notifications/initialized it left out): the probe's server
/// goes to the reused scenario, and no third server starts. One whose
/// initialize settled on another version is stopped.
fn a_scenario_opened_without_the_handshake_hands_its_server_on_once_its_initialize_named_the_era() {
    let donor = "handshake: false\nhands_on: true\n";
    let reused = "isolation: reused\n";
    let run = |name: &str, version: &str| {
        let ping = pings_before_initialized(version);
        custom_starts(
            name,
            &[
                ("a", donor, &ping),
                ("b", reused, &list_tools("")),
                ("c", reused, GARBAGE),
            ],
        )
    };
    assert_eq!(
        run("lifecycle-completed", "2025-11-25"),
        2,
        "the probe's server and a's, which then serves c"
    );
    assert_eq!(
        run("lifecycle-other-version", "2025-06-18"),
        3,
        "a's server spoke 2025-06-18: c gets a server of its own"
    );
}

/// Where an era has more than one scenario that hands its server on, the
/// one that only read gives it to the second sessions of the shared
/// scenarios, which would otherwise start a server; the other one's
/// (which sent a notification) serves only the lanes after them.
fn a_donor_that_only_read_gives_its_server_to_the_second_sessions() {
    let donor = "hands_on: true\n";
    let notifies = format!("  - notify: notifications/unit/noted\n{}", list_tools(""));
    let two_sessions = format!("{}{}", list_tools(""), list_tools("other"));
    let starts = custom_starts(
        "read-donor-to-seconds",
        &[
            ("a", donor, &list_tools("")),
            ("b", donor, &notifies),
            ("c", "isolation: shared\n", &two_sessions),
        ],
    );
    assert_eq!(
        starts, 3,
        "the probe's server and the donors' own: c's second session is a's server"
    );
    // The era's only donor (b is written for another era) feeds the
    // garbage lane, as before: c's second session starts a server.
    let other_era = format!("{donor}eras: [2026-07-28]\n");
    let starts = custom_starts(
        "only-donor-to-garbage",
        &[
            ("a", donor, &list_tools("")),
            ("b", &other_era, &notifies),
            ("c", "isolation: shared\n", &two_sessions),
            ("d", "isolation: reused\n", GARBAGE),
        ],
    );
    assert_eq!(
        starts, 3,
        "the probe's server, a's (which serves d) and c's second session's"
    );
}

/// A property whose cases each open a server without the handshake, as
/// `base/property-version-negotiation` does: `initialize` for the era.
const CASES_OPEN_SERVERS: &str = "generate:\n  cases: 2\n  vars:\n    n: { int: [1, 2] }\n  steps:\n    - session: fresh\n      handshake: false\n      request: initialize\n      params: { protocolVersion: \"2025-11-25\", capabilities: {}, clientInfo: { name: t, version: \"0\" } }\n      expect: { result: { protocolVersion: \"2025-11-25\" } }\n";

/// The servers a `reused` property's cases opened for themselves serve the
/// era's other scenarios once their initialize settled on the era: the
/// first goes to the shared scenarios (it only did the handshake), where
/// a shared scenario's second session finds it, and the second to the
/// garbage lane, which then needs no server of the probe's.
fn a_propertys_case_servers_serve_the_other_scenarios() {
    let property = format!("isolation: reused\n{CASES_OPEN_SERVERS}");
    let two_sessions = format!("{}{}", list_tools(""), list_tools("other"));
    let starts = custom_starts(
        "property-case-servers",
        &[
            ("a", &property, "  - capture: { x: \"1\" }\n"),
            ("b", "isolation: shared\n", &two_sessions),
            ("c", "isolation: reused\n", GARBAGE),
        ],
    );
    assert_eq!(
        starts, 3,
        "the probe's server and the two cases': b's second session is the first case's"
    );
}

/// A server that speaks no 2026-07-28 refuses `server/discover` with an
/// error; as a dual-era client would, the run goes on with `initialize` on
/// that connection. A scenario that opens its session without the
/// handshake sends that `initialize` itself, on that connection; where
/// there is none, the run sends the era's handshake and the server joins
/// the shared scenarios: a shared scenario's second session is that server.
fn a_legacy_servers_refused_discover_falls_back_to_initialize() {
    let two_sessions = format!("{}{}", list_tools(""), list_tools("other"));
    let ping = pings_before_initialized("2025-11-25");
    let unshaken = "handshake: false\nhands_on: true\n";
    let cases: [(&str, (&str, &str, &str)); 2] = [
        ("shared", ("b", "isolation: shared\n", &two_sessions)),
        ("unshaken", ("a", unshaken, &ping)),
    ];
    for (name, scenario) in cases {
        let dir = common::output_dir(&format!("warm-pool-legacy-fallback-{name}"));
        let server = common::root().join("fixtures/servers/slow_tool_server.py");
        let server = server.display().to_string();
        let json = passing_run(&dir, &[scenario], &[], &[common::python3(), &server]);
        let run = &json["run"];
        assert_eq!(run["eras"], serde_json::json!(["2025-11-25"]), "{run}");
        assert_eq!(
            run["server_starts"], 3,
            "{name}: one probe per era (2025-06-18 was answered with 2025-11-25, 2026-07-28 refused), and the refused one serves the scenario's session"
        );
    }
}

/// A server that answers a notification (it should not: `notification-answered`
/// writes -32601 with id null) writes that answer after the scenario that
/// sent it may have ended. The warm server is checked with a ping before
/// it serves the next scenario, and what came before the ping's answer is
/// set aside: taken for the next scenario's answer, it failed a ping that
/// a fresh server answers.
fn an_answer_to_a_notification_is_not_the_next_scenarios() {
    let dir = common::output_dir("warm-pool-notification-answered");
    let notify = "  - notify: notifications/unit/unknown\n";
    let ping = "  - request: ping\n    expect:\n      result: {}\n";
    let reused = "isolation: reused\n";
    let server = [
        common::bin(),
        "serve-reference",
        "--fault",
        "notification-answered",
    ];
    let json = passing_run(
        &dir,
        &[("a", reused, notify), ("b", reused, ping)],
        &["--protocol-version", "2025-11-25"],
        &server,
    );
    assert_eq!(json["run"]["server_starts"], 1, "b ran on a's server");
}

/// A warm server of the reused lanes carries what earlier scenarios left
/// in its session: under `pd-auth-filter-scoped` a description read
/// authorizes only the tools of the session's last filtered listing, and
/// an unfiltered listing clears that. The category-search scenarios begin
/// with an unfiltered walk; taken from the store of walks, it never reached
/// a server whose session a shared filter scenario had left filtered, and
/// their read of tool_search authorized nothing (warn; pass with
/// `--isolate`). One job at a time, so that the shared filters run first
/// and their servers go onward to the scenarios that read descriptions.
fn a_reused_scenarios_own_listing_resets_what_an_earlier_filter_left() {
    let dir = common::output_dir("warm-pool-filter-view");
    let report = dir.join("report.json").display().to_string();
    let bin = common::bin();
    let out = common::run_cli(&[
        "-q",
        "-j",
        "1",
        "--protocol-version",
        "2025-06-18",
        "-p",
        "sep-1300",
        "-p",
        "category-search",
        "--report-json",
        &report,
        "--",
        bin,
        "serve-reference",
        "--fault",
        "pd-auth-filter-scoped",
    ]);
    let text = std::fs::read_to_string(&report).expect("the report is written");
    let json: serde_json::Value = serde_json::from_str(&text).expect("the report is JSON");
    let outcome = |id: &str| {
        json["scenarios"]
            .as_array()
            .and_then(|all| all.iter().find(|s| s["id"] == id))
            .map(|s| s["outcome"].clone())
    };
    for id in [
        "category-search/category-counts-match",
        "category-search/default-limit",
    ] {
        assert_eq!(
            outcome(id),
            Some(serde_json::json!("pass")),
            "{id}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    let fallback = prereq::trial(
        "warm_pool::a_legacy_servers_refused_discover_falls_back_to_initialize",
        Prereq::Python,
        prereq::python,
        a_legacy_servers_refused_discover_falls_back_to_initialize,
    );
    let mut trials = trials![
        the_probes_server_serves_every_shared_scenario_of_its_era,
        a_server_that_warned_but_answered_everything_is_handed_on,
        a_server_that_dropped_a_request_is_handed_on,
        a_scenario_that_ends_its_server_hands_it_to_no_other,
        a_scenario_that_ends_its_server_runs_last_in_its_lane,
        a_scenario_that_never_uses_its_main_session_starts_no_server_for_it,
        a_scenario_opened_without_the_handshake_hands_its_server_on_once_its_initialize_named_the_era,
        a_donor_that_only_read_gives_its_server_to_the_second_sessions,
        a_propertys_case_servers_serve_the_other_scenarios,
        an_answer_to_a_notification_is_not_the_next_scenarios,
        a_reused_scenarios_own_listing_resets_what_an_earlier_filter_left
    ];
    trials.push(fallback);
    trials
}
