//! `for_each` with `concurrency`, end to end over real pipes: against a
//! server that serves requests concurrently (fixtures/servers/
//! slow_tool_server.py), the calls after a slow tool go out and are
//! answered while it works, each answer is still checked in list order,
//! and the verdict is the one the same scenario gets one call at a time.
//! Ignored, with the reason, where python3 is missing (unless the
//! `python` prerequisite is required).

use std::path::Path;

use serde_json::Value;

use crate::common;
use crate::prereq::{self, Prereq};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    let tests: [(&str, fn()); 2] = [
        (
            "calls_after_a_slow_one_are_answered_while_it_works_and_checked_in_order",
            calls_after_a_slow_one_are_answered_while_it_works_and_checked_in_order,
        ),
        (
            "a_server_that_stops_reading_is_judged_within_the_request_timeout",
            a_server_that_stops_reading_is_judged_within_the_request_timeout,
        ),
    ];
    tests
        .into_iter()
        .map(|(name, body)| {
            prereq::trial(
                format!("concurrency::{name}"),
                Prereq::Python,
                prereq::python,
                body,
            )
        })
        .collect()
}

/// A scenario that calls every listed tool, bounded, `concurrency` at a
/// time, and checks each answer names its own tool.
fn scenario(concurrency: usize) -> String {
    format!(
        r#"id: core/unit-calls
title: every tool answers
profile: core
level: MUST
steps:
  - id: all
    request: tools/list
    capture:
      callable: "all.result.tools"
  - id: called
    for_each: "callable"
    as: tool
    concurrency: {concurrency}
    bounded: true
    request: tools/call
    params: {{ name: "${{tool.name}}", arguments: {{}} }}
    assert:
      - expr: "called.result.content[0].text == tool.name + ' done'"
        message: "the answer to ${{tool.name}} is another tool's: ${{called.result.content}}"
"#
    )
}

/// The JSON report of the scenario at `concurrency` against the server.
fn run(dir: &Path, concurrency: usize) -> Value {
    let scenarios = dir.join(format!("scenarios-{concurrency}"));
    std::fs::create_dir_all(&scenarios).expect("the scenario directory is made");
    std::fs::write(scenarios.join("calls.yaml"), scenario(concurrency))
        .expect("the scenario is written");
    let report = dir.join(format!("report-{concurrency}.json"));
    let server = common::root().join("fixtures/servers/slow_tool_server.py");
    let (scenarios, report, server) = (
        scenarios.display().to_string(),
        report.display().to_string(),
        server.display().to_string(),
    );
    let args = [
        "-q",
        "--protocol-version",
        "2025-11-25",
        "--no-builtin",
        "--call-budget-ms",
        "1500",
        "--scenarios",
        &scenarios,
        "--report-json",
        &report,
        "--",
        common::python3(),
        &server,
    ];
    let out = common::run_cli(&args);
    let text = std::fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("no report ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    serde_json::from_str(&text).expect("the report is JSON")
}

/// The one scenario's result.
fn result(report: &Value) -> &Value {
    &report["scenarios"][0]
}

/// The tools called, in the order their calls went out, and whether each
/// went out before `sleepy` was cancelled.
fn calls_before_cancel(result: &Value) -> Vec<(String, bool)> {
    let mut cancelled = false;
    let mut calls = Vec::new();
    for entry in result["transcript"].as_array().into_iter().flatten() {
        let message = &entry["message"];
        match message["method"].as_str() {
            Some("notifications/cancelled") => cancelled = true,
            Some("tools/call") if entry["direction"] == "sent" => {
                let name = message["params"]["name"].as_str().unwrap_or_default();
                calls.push((name.to_string(), !cancelled));
            }
            _ => {}
        }
    }
    calls
}

fn calls_after_a_slow_one_are_answered_while_it_works_and_checked_in_order() {
    let dir = common::output_dir("concurrency");
    let one_by_one = run(&dir, 1);
    let at_once = run(&dir, 8);
    for report in [&one_by_one, &at_once] {
        let r = result(report);
        let findings = r["findings"].to_string();
        assert_eq!(r["outcome"], "info", "{r:#}");
        assert!(
            findings.contains("tool sleepy not exercised: did not answer within 1.5 s"),
            "sleepy outlasts the budget: {findings}"
        );
        assert!(
            !findings.contains("another tool's"),
            "each answer is checked against its own item: {findings}"
        );
    }
    let names = |calls: &[(String, bool)]| calls.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    let sequential = calls_before_cancel(result(&one_by_one));
    let concurrent = calls_before_cancel(result(&at_once));
    assert_eq!(
        names(&sequential),
        names(&concurrent),
        "the same calls, in list order"
    );
    let after_sleepy = |calls: &[(String, bool)]| {
        calls
            .iter()
            .skip_while(|(n, _)| n != "sleepy")
            .skip(1)
            .filter(|(_, before)| *before)
            .count()
    };
    assert_eq!(
        after_sleepy(&sequential),
        0,
        "one at a time, the calls after sleepy wait for its cancellation: {sequential:?}"
    );
    assert_eq!(
        after_sleepy(&concurrent),
        3,
        "in flight together, the three calls after sleepy go out while it works: {concurrent:?}"
    );
}

/// A server that answers `initialize`, then stops reading its stdin.
const DEAF_SERVER: &str = r#"import json, sys, time
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "deaf", "version": "1"}}}), flush=True)
    elif m.get("method") == "notifications/initialized":
        break
time.sleep(30)
"#;

/// Requests too large for a pipe nobody reads, in flight together: their
/// send cannot end, and the step fails after `--timeout-ms`, not after a
/// fixed write limit of its own (10 s before).
const UNREAD: &str = r#"id: core/unit-unread
title: large pings to a server that no longer reads
profile: core
level: MUST
steps:
  - capture:
      pad: "lists.range(20000).map(i, '0123456789abcdef').join('')"
  - id: pinged
    for_each: "[1, 2]"
    as: n
    concurrency: 2
    request: ping
    params: { pad: "${pad}" }
"#;

fn a_server_that_stops_reading_is_judged_within_the_request_timeout() {
    let dir = common::output_dir("concurrency-unread");
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).expect("the scenario directory is made");
    std::fs::write(scenarios.join("unread.yaml"), UNREAD).expect("the scenario is written");
    let server = dir.join("deaf_server.py");
    std::fs::write(&server, DEAF_SERVER).expect("the server is written");
    let report = dir.join("report.json");
    let (scenarios, report_arg, server) = (
        scenarios.display().to_string(),
        report.display().to_string(),
        server.display().to_string(),
    );
    let out = common::run_cli(&[
        "-q",
        "--protocol-version",
        "2025-11-25",
        "--no-builtin",
        "--timeout-ms",
        "400",
        "--scenarios",
        &scenarios,
        "--report-json",
        &report_arg,
        "--",
        common::python3(),
        &server,
    ]);
    let text = std::fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("no report ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    let report: Value = serde_json::from_str(&text).expect("the report is JSON");
    let message = result(&report)["message"].to_string();
    // The request's own wait and the write's limit are the same 400 ms;
    // whichever ends first gives the verdict.
    let blocked = "the server stopped reading its stdin (a write blocked for 400 ms)";
    let unanswered = "no answer to ping within 400 ms";
    assert!(
        message.contains(blocked) || message.contains(unanswered),
        "the write is given the request timeout: {message}"
    );
}
