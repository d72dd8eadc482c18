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
    let tests: [(&str, fn()); 3] = [
        (
            "calls_after_a_slow_one_are_answered_while_it_works_and_checked_in_order",
            calls_after_a_slow_one_are_answered_while_it_works_and_checked_in_order,
        ),
        (
            "a_server_that_stops_reading_is_judged_within_the_request_timeout",
            a_server_that_stops_reading_is_judged_within_the_request_timeout,
        ),
        (
            "a_slow_tool_is_waited_out_once_by_the_scenarios_that_call_it_together",
            a_slow_tool_is_waited_out_once_by_the_scenarios_that_call_it_together,
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

/// The JSON report of a run of `scenarios` (file name, text) alone, in
/// 2025-11-25, with `options`, against the Python server at `server`; its
/// files go under `dir/tag`.
fn report_of(
    dir: &Path,
    tag: &str,
    scenarios: &[(String, String)],
    options: &[&str],
    server: &Path,
) -> Value {
    let folder = dir.join(format!("scenarios-{tag}"));
    std::fs::create_dir_all(&folder).expect("the scenario directory is made");
    for (name, text) in scenarios {
        std::fs::write(folder.join(name), text).expect("the scenario is written");
    }
    let report = dir.join(format!("report-{tag}.json"));
    let (folder, report_arg, server) = (
        folder.display().to_string(),
        report.display().to_string(),
        server.display().to_string(),
    );
    let mut args = vec!["-q", "--protocol-version", "2025-11-25", "--no-builtin"];
    args.extend_from_slice(options);
    args.extend([
        "--scenarios",
        &folder,
        "--report-json",
        &report_arg,
        "--",
        common::python3(),
        &server,
    ]);
    let out = common::run_cli(&args);
    let text = std::fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("no report ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    serde_json::from_str(&text).expect("the report is JSON")
}

/// The server that serves requests concurrently, with one slow tool.
fn slow_tool_server() -> std::path::PathBuf {
    common::root().join("fixtures/servers/slow_tool_server.py")
}

/// The JSON report of the scenario at `concurrency` against the server.
fn run(dir: &Path, concurrency: usize) -> Value {
    let calls = [("calls.yaml".to_string(), scenario(concurrency))];
    let options = ["--call-budget-ms", "1500"];
    report_of(
        dir,
        &concurrency.to_string(),
        &calls,
        &options,
        &slow_tool_server(),
    )
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
    let server = dir.join("deaf_server.py");
    std::fs::write(&server, DEAF_SERVER).expect("the server is written");
    let unread = [("unread.yaml".to_string(), UNREAD.to_string())];
    let report = report_of(&dir, "unread", &unread, &["--timeout-ms", "400"], &server);
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

/// A scenario that calls `sleepy` bounded, beside a quick tool.
fn sleepy_caller(id: &str) -> String {
    format!(
        r#"id: {id}
title: sleepy is called
profile: core
level: MUST
steps:
  - id: called
    for_each: "['quick_1', 'sleepy']"
    as: name
    concurrency: 2
    bounded: true
    request: tools/call
    params: {{ name: "${{name}}", arguments: {{}} }}
"#
    )
}

/// Three scenarios on servers of their own call the slow tool at about the
/// same time: the first call waits out the budget, and the others wait for
/// its outcome instead of sending calls of their own (three calls before).
fn a_slow_tool_is_waited_out_once_by_the_scenarios_that_call_it_together() {
    let dir = common::output_dir("concurrency-slow-once");
    let callers: Vec<(String, String)> = ["core/unit-a", "core/unit-b", "core/unit-c"]
        .iter()
        .map(|id| (format!("{}.yaml", id.replace('/', "-")), sleepy_caller(id)))
        .collect();
    // A budget long enough for the three servers to start within it.
    let options = ["--call-budget-ms", "4000", "--env", "SLEEPY_SECONDS=30"];
    let report = report_of(&dir, "slow-once", &callers, &options, &slow_tool_server());
    let results = report["scenarios"].as_array().cloned().unwrap_or_default();
    assert_eq!(results.len(), 3, "{report:#}");
    let mut sent = 0;
    for r in &results {
        assert_eq!(r["outcome"], "info", "{r:#}");
        sent += calls_before_cancel(r)
            .iter()
            .filter(|(name, _)| name == "sleepy")
            .count();
    }
    let findings: Vec<String> = results.iter().map(|r| r["findings"].to_string()).collect();
    assert_eq!(
        sent, 1,
        "one call of sleepy in the whole run, the others waited for it: {findings:#?}"
    );
    let learnt = findings
        .iter()
        .filter(|f| f.contains("in this run, so it was not called again"))
        .count();
    assert!(
        learnt >= 2,
        "the scenarios that did not call it say whose call they learnt from: {findings:#?}"
    );
}
