//! `mcp-conform client` end to end: real client processes against the
//! scenario servers it serves, over real pipes and real HTTP on loopback.
//! mcp-conform's own client driver passes every scenario in every era and
//! breaks each client rule it is told to (`--client-fault`), never a server
//! rule; a driver written to the official suite's convention runs
//! unchanged; the three SDK drivers give their committed verdicts; a client
//! that hangs or cannot start gets a verdict and leaves nothing behind.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{self, bin, root, scratch_dir, text};
use crate::prereq::{self, Prereq};

pub fn trials() -> Vec<Trial> {
    let mut list = trials![
        the_own_driver_passes_every_scenario_in_every_era,
        every_client_fault_breaks_its_rules_and_no_server_rule,
        every_client_rule_is_shown_failing_by_a_fault,
        at_least_twenty_scenarios_over_both_transports,
        a_hanging_client_is_stopped_with_a_verdict_and_nothing_left,
        runs_side_by_side_keep_the_order_and_verdicts_of_one_at_a_time,
        a_client_that_cannot_start_is_an_error_not_a_pass,
        the_rmcp_driver_gives_its_committed_verdicts,
    ];
    list.push(prereq::trial(
        "client::an_official_convention_driver_runs_unchanged",
        Prereq::Python,
        prereq::python,
        an_official_convention_driver_runs_unchanged,
    ));
    list.push(prereq::trial(
        "client::a_run_that_graded_nothing_does_not_pass",
        Prereq::Python,
        prereq::python,
        a_run_that_graded_nothing_does_not_pass,
    ));
    list.push(prereq::trial(
        "client::the_typescript_sdk_driver_gives_its_committed_verdicts",
        Prereq::Peers,
        typescript_sdk,
        the_typescript_sdk_driver_gives_its_committed_verdicts,
    ));
    list.push(prereq::trial(
        "client::the_guide_s_dozen_line_driver_runs_as_written",
        Prereq::Peers,
        prereq::python_sdk,
        the_guide_s_dozen_line_driver_runs_as_written,
    ));
    list.push(prereq::trial(
        "client::the_python_sdk_driver_gives_its_committed_verdicts",
        Prereq::Peers,
        prereq::python_sdk,
        the_python_sdk_driver_gives_its_committed_verdicts,
    ));
    list
}

/// The client rules no client fault shows failing yet, each with the reason.
const NOT_SHOWN: &[(&str, &str)] = &[(
    "client/http-session-delete",
    "judged only when `mcp-conform watch` ends: a client scenario's conversation ends with the scenario, not when the client leaves; watch::http::http_session_delete_is_info_and_the_harness_holds_it shows it failing",
)];

/// Each fault and client rules it must break (it may break more: a
/// client that misbehaves once is often confused afterwards, and the rules
/// say so).
const FAULTS: &[(&str, &[&str])] = &[
    (
        "cursor-without-query",
        &[
            "client/sep1821-cursor-query",
            "client/search-cursor-query",
            "client/sep1300-cursor-filter",
        ],
    ),
    (
        "duplicate-id",
        &[
            "client/unique-request-ids",
            "client/unique-request-ids-session",
        ],
    ),
    (
        "answer-notification",
        &[
            "client/no-response-to-notification",
            "client/response-matches-request",
        ],
    ),
    ("no-initialized", &["client/initialized-before-requests"]),
    (
        "no-meta-2026",
        &[
            "client/meta-protocol-version",
            "client/meta-client-capabilities",
            "client/meta-client-info",
        ],
    ),
    ("jsonrpc-1", &["client/jsonrpc-version"]),
    ("null-id", &["client/request-id"]),
    ("result-and-error", &["client/result-or-error"]),
    (
        "error-code-string",
        &[
            "client/error-code-integer",
            "client/http-no-posted-responses",
        ],
    ),
    ("reserved-error-code", &["client/reserved-error-codes"]),
    ("result-without-type", &["client/result-type"]),
    ("unknown-progress", &["client/progress-token-known"]),
    (
        "cancel-unknown",
        &[
            "client/cancel-in-flight",
            "client/cancel-client-requests-only",
        ],
    ),
    ("cancel-initialize", &["client/no-cancel-initialize"]),
    (
        "cancel-silently",
        &["client/cancel-notifies", "client/cancel-notifies-stdio"],
    ),
    ("ping-before-initialize", &["client/initialize-first"]),
    (
        "request-before-initialize-answer",
        &["client/no-requests-before-init-answer"],
    ),
    ("not-json-rpc", &["client/json-message"]),
    ("ping-answer-not-empty", &["client/ping-empty"]),
    (
        "relist-without-query",
        &["client/sep1821-relist-same-query"],
    ),
    (
        "initialize-after-discover",
        &["client/no-initialize-to-modern-server"],
    ),
    ("retry-refused-version", &["client/retry-supported-version"]),
    (
        "repeat-bare-read",
        &["client/pd-no-bare-read-after-refusal"],
    ),
    (
        "ignore-capabilities",
        &[
            "client/sep1821-query-needs-capability",
            "client/sep1300-filter-needs-capability",
            "client/search-needs-capability",
        ],
    ),
    ("http-no-accept", &["client/http-accept"]),
    ("http-no-session-id", &["client/http-session-id"]),
    (
        "http-no-version-header",
        &["client/http-protocol-version-header"],
    ),
    (
        "http-version-mismatch",
        &["client/http-protocol-version-matches"],
    ),
    ("http-wrong-method", &["client/http-mcp-method"]),
    ("http-wrong-name", &["client/http-mcp-name"]),
    ("http-no-param-headers", &["client/http-param-headers"]),
    ("http-get-stream", &["client/http-no-get-stream"]),
];

/// Runs `mcp-conform client ARGS -- CLIENT` with a JSON report; returns the
/// exit code, the report and stderr.
fn client_run(
    name: &str,
    args: &[&str],
    client: &[&str],
    env: &[(&str, &str)],
) -> (i32, Value, String) {
    let dir = scratch_dir(&format!("client-{name}"));
    let report = dir.join("report.json");
    let out = Command::new(bin())
        .arg("client")
        .arg("--report-json")
        .arg(&report)
        .args(args)
        .arg("--")
        .args(client)
        .envs(env.iter().copied())
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let stderr = text(&out.stderr);
    let json: Value = std::fs::read_to_string(&report)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| panic!("{name}: no report; stderr:\n{stderr}"));
    (out.status.code().unwrap_or(-1), json, stderr)
}

/// The directory `client_run` used for `name` (left in place after it).
fn scratch_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn results(report: &Value) -> Vec<&Value> {
    report["scenarios"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// The rule ids a report's findings name (`client/x (MUST): …`).
fn broken_rules(report: &Value) -> BTreeSet<String> {
    results(report)
        .iter()
        .flat_map(|r| r["findings"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| {
            let m = f["message"].as_str()?.to_string();
            let (id, _) = m.split_once(" (")?;
            id.contains('/').then(|| id.to_string())
        })
        .collect()
}

/// Every client rule of rules/trace/.
fn client_rules() -> BTreeSet<String> {
    mcp_conform::watch::rules::builtin()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .filter(|r| r.side == mcp_conform::watch::trace::Side::Client)
        .map(|r| r.id)
        .collect()
}

const ERAS: [&str; 6] = [
    "--protocol-version",
    "2025-06-18",
    "--protocol-version",
    "2025-11-25",
    "--protocol-version",
    "2026-07-28",
];

fn the_own_driver_passes_every_scenario_in_every_era() {
    let (code, report, stderr) = client_run("own-clean", &ERAS, &[bin(), "client-driver"], &[]);
    // A client run's report is a report like any other.
    common::assert_valid_report(&scratch_path("client-own-clean").join("report.json"));
    assert_eq!(
        report["run"]["server"]["clientInfo"]["name"], "mcp-conform",
        "{}",
        report["run"]
    );
    let bad: Vec<String> = results(&report)
        .iter()
        .filter(|r| r["outcome"] != "pass")
        .map(|r| {
            format!(
                "{} ({}): {} {}",
                r["id"], r["era"], r["outcome"], r["message"]
            )
        })
        .collect();
    assert!(bad.is_empty(), "{}\n{stderr}", bad.join("\n"));
    assert_eq!(code, 0, "{stderr}");
    let eras: BTreeSet<&str> = results(&report)
        .iter()
        .filter_map(|r| r["era"].as_str())
        .collect();
    assert_eq!(eras.len(), 3, "{eras:?}");
    assert!(stderr.contains("graded mcp-conform"), "{stderr}");
}

/// One run per fault: the rules it names break, and nothing but client
/// rules are ever named (a rule on servers never fails a client).
fn fault_runs() -> &'static BTreeMap<&'static str, BTreeSet<String>> {
    static RUNS: std::sync::OnceLock<BTreeMap<&'static str, BTreeSet<String>>> =
        std::sync::OnceLock::new();
    RUNS.get_or_init(|| {
        let eras = [
            "--protocol-version",
            "2025-11-25",
            "--protocol-version",
            "2026-07-28",
            "-q",
        ];
        std::thread::scope(|scope| {
            let handles: Vec<_> = FAULTS
                .chunks(FAULTS.len().div_ceil(3))
                .map(|chunk| {
                    scope.spawn(move || {
                        chunk
                            .iter()
                            .map(|(fault, _)| {
                                let (code, report, stderr) = client_run(
                                    &format!("fault-{fault}"),
                                    &eras,
                                    &[bin(), "client-driver", "--client-fault", fault],
                                    &[],
                                );
                                // 1 where a MUST broke; 0 where only an INFO rule did.
                                assert!(
                                    code == 0 || code == 1,
                                    "--client-fault {fault}: exit {code}\n{stderr}"
                                );
                                (*fault, broken_rules(&report))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        })
    })
}

fn every_client_fault_breaks_its_rules_and_no_server_rule() {
    let runs = fault_runs();
    assert_eq!(runs.len(), FAULTS.len(), "a fault run panicked");
    for (fault, expected) in FAULTS {
        let broke = &runs[fault];
        for rule in *expected {
            assert!(
                broke.contains(*rule),
                "--client-fault {fault}: {rule} held; broken: {broke:?}"
            );
        }
        assert!(
            broke.iter().all(|r| r.starts_with("client/")),
            "--client-fault {fault} named a rule that is not a client rule: {broke:?}"
        );
    }
}

fn every_client_rule_is_shown_failing_by_a_fault() {
    let shown: BTreeSet<String> = fault_runs().values().flatten().cloned().collect();
    let unshown: Vec<String> = client_rules()
        .into_iter()
        .filter(|r| !shown.contains(r) && !NOT_SHOWN.iter().any(|(n, _)| n == r))
        .collect();
    assert!(
        unshown.is_empty(),
        "client rules no fault breaks: {unshown:?}"
    );
    for (rule, why) in NOT_SHOWN {
        assert!(
            !shown.contains(*rule),
            "{rule} is shown failing now; drop it from NOT_SHOWN ({why})"
        );
    }
}

fn at_least_twenty_scenarios_over_both_transports() {
    let out = Command::new(bin())
        .args(["client", "--list"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let listed = text(&out.stdout);
    let names: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.len() >= 20, "{listed}");
    for official in ["initialize", "tools_call"] {
        assert!(names.contains(&official), "{official} missing:\n{listed}");
    }
    let both = listed.lines().filter(|l| l.contains("http,stdio")).count();
    assert!(both >= 15, "{listed}");
}

fn a_hanging_client_is_stopped_with_a_verdict_and_nothing_left() {
    let marker = format!("client-hang-marker-{}", std::process::id());
    let script = format!("import time, sys; time.sleep(60)  # {marker}");
    let started = Instant::now();
    let (code, report, stderr) = client_run(
        "hang",
        &[
            "-k",
            "handshake",
            "--transport",
            "http",
            "--timeout-ms",
            "1000",
        ],
        &[common::python3(), "-c", &script],
        &[],
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(code, 1, "{stderr}");
    let r = results(&report)[0];
    assert_eq!(r["outcome"], "error", "{r}");
    let message = r["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("not exercised") && message.contains("was still running after 1 s"),
        "{message}"
    );
    let left = Command::new("pgrep")
        .args(["-f", &marker])
        .output()
        .map(|o| text(&o.stdout))
        .unwrap_or_default();
    assert!(left.trim().is_empty(), "processes left behind: {left}");
}

/// `-j`: the runs overlap (their durations add up to more than the
/// run's), and the report lists the same outcomes in the same order as
/// one run at a time.
fn runs_side_by_side_keep_the_order_and_verdicts_of_one_at_a_time() {
    let ran = |name: &str, jobs: &str| {
        let mut args = ERAS[2..].to_vec();
        args.extend(["-j", jobs, "-q"]);
        let (code, report, stderr) = client_run(name, &args, &[bin(), "client-driver"], &[]);
        assert_eq!(code, 0, "-j {jobs}: {stderr}");
        report
    };
    let listed = |report: &Value| -> Vec<String> {
        results(report)
            .iter()
            .map(|r| format!("{} {} {}", r["id"], r["era"], r["outcome"]))
            .collect()
    };
    let one = ran("jobs-one", "1");
    let many = ran("jobs-eight", "8");
    assert_eq!(listed(&one), listed(&many));
    assert!(listed(&one).len() > 40, "{:?}", listed(&one));
    let overlap = |report: &Value| {
        let each: u64 = results(report)
            .iter()
            .filter_map(|r| r["duration_ms"].as_u64())
            .sum();
        let whole = report["summary"]["duration_ms"]
            .as_u64()
            .unwrap_or(u64::MAX);
        (each, whole)
    };
    let (each, whole) = overlap(&many);
    assert!(
        each > whole * 2,
        "-j 8: runs took {each} ms in all, the run {whole} ms"
    );
    let (each, whole) = overlap(&one);
    assert!(
        each <= whole,
        "-j 1: runs took {each} ms in all, the run {whole} ms"
    );
}

/// A client command that is not there is not a client that failed 57
/// scenarios: the run stops at the first, says why once, and exits 3 (nothing
/// was tested), its report saying the same.
fn a_client_that_cannot_start_is_an_error_not_a_pass() {
    let (code, report, stderr) =
        client_run("no-such-client", &[], &["/nonexistent/mcp-client"], &[]);
    assert_eq!(code, 3, "{stderr}");
    assert_eq!(
        report["summary"]["verdict"]["status"], "not_run",
        "{report}"
    );
    let results = results(&report);
    assert_eq!(
        results.len(),
        1,
        "the run went on past the first: {results:?}"
    );
    let r = results[0];
    assert_eq!(r["outcome"], "error", "{r}");
    assert!(
        r["message"]
            .as_str()
            .unwrap_or_default()
            .contains("cannot start the client"),
        "{r}"
    );
    assert!(
        stderr.contains("error: the client could not be started; nothing was tested")
            && stderr.contains("No such file or directory")
            && stderr.contains("conformance result: NOT RUN"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("cannot start the client").count(),
        1,
        "said more than once:\n{stderr}"
    );
}

fn an_official_convention_driver_runs_unchanged() {
    let script = root().join("fixtures/clients/official_convention_client.py");
    let script = script.display().to_string();
    let (code, report, stderr) = client_run(
        "official",
        &[
            "-k",
            "initialize",
            "-k",
            "tools_call",
            "--transport",
            "http",
        ],
        &[common::python3(), &script],
        &[],
    );
    let outcomes: Vec<(String, String)> = results(&report)
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap_or_default().to_string(),
                r["outcome"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            ("client/initialize/http".to_string(), "pass".to_string()),
            ("client/tools_call/http".to_string(), "pass".to_string())
        ],
        "{stderr}"
    );
    assert_eq!(code, 0);
}

/// Compares a driver's verdicts with the committed ones
/// (`fixtures/clients/drivers/verdicts/NAME.txt`; MCP_CONFORM_UPDATE_VERDICTS=1
/// rewrites them).
fn assert_verdicts(name: &str, report: &Value, stderr: &str) {
    let mut lines: Vec<String> = results(report)
        .iter()
        .map(|r| {
            format!(
                "{} {} {}",
                r["id"].as_str().unwrap_or_default(),
                r["era"].as_str().unwrap_or_default(),
                r["outcome"].as_str().unwrap_or_default()
            )
        })
        .collect();
    lines.sort();
    let actual = lines.join("\n") + "\n";
    let path = root().join(format!("fixtures/clients/drivers/verdicts/{name}.txt"));
    if std::env::var_os("MCP_CONFORM_UPDATE_VERDICTS").is_some() {
        let _ = std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")));
        std::fs::write(&path, &actual).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        actual, committed,
        "{name}: the verdicts differ from {} (MCP_CONFORM_UPDATE_VERDICTS=1 rewrites it after a review)\n{stderr}",
        path.display()
    );
}

fn node_modules() -> PathBuf {
    root().join("target/peers/node/node_modules")
}

fn typescript_sdk() -> Result<(), String> {
    let sdk = node_modules().join("@modelcontextprotocol/sdk/package.json");
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if node && sdk.exists() {
        Ok(())
    } else {
        Err(format!(
            "node and {} (scripts/install-peers.sh)",
            sdk.display()
        ))
    }
}

fn the_typescript_sdk_driver_gives_its_committed_verdicts() {
    let driver = root()
        .join("fixtures/clients/drivers/typescript_sdk.cjs")
        .display()
        .to_string();
    let modules = node_modules().display().to_string();
    let (_, report, stderr) = client_run(
        "typescript-sdk",
        &[],
        &["node", &driver],
        &[("NODE_PATH", &modules)],
    );
    assert!(
        stderr.contains("graded typescript-sdk (@modelcontextprotocol/sdk) 1."),
        "{stderr}"
    );
    assert_verdicts("typescript-sdk", &report, &stderr);
}

fn the_python_sdk_driver_gives_its_committed_verdicts() {
    let python = root()
        .join("target/peers/python/bin/python")
        .display()
        .to_string();
    let driver = root()
        .join("fixtures/clients/drivers/python_sdk.py")
        .display()
        .to_string();
    let (_, report, stderr) = client_run("python-sdk", &[], &[&python, &driver], &[]);
    assert!(stderr.contains("graded python-sdk (mcp) 2."), "{stderr}");
    assert_verdicts("python-sdk", &report, &stderr);
    // The SDK speaks 2026-07-28 by itself; asked for 2025-11-25 it takes the
    // initialize handshake, where the progressive-disclosure flow applies.
    let (_, report, stderr) = client_run(
        "python-sdk-2025",
        &[
            "--protocol-version",
            "2025-11-25",
            "-k",
            "description",
            "-k",
            "initialize",
            "-k",
            "ping",
            "-k",
            "relist",
        ],
        &[&python, &driver],
        &[],
    );
    assert_verdicts("python-sdk-2025-11-25", &report, &stderr);
}

fn the_rmcp_driver_gives_its_committed_verdicts() {
    let driver = crate::rmcp_peers::example("rmcp_driver")
        .display()
        .to_string();
    let (_, report, stderr) = client_run("rmcp", &[], &[&driver], &[]);
    assert!(stderr.contains("graded rmcp 3."), "{stderr}");
    assert_verdicts("rmcp", &report, &stderr);
}

/// The Python driver docs/client.md and the README show, run as written: the official
/// scenarios pass, and one that wants every page is not exercised (the
/// snippet reads one page), as the guide says.
fn the_guide_s_dozen_line_driver_runs_as_written() {
    let guide = std::fs::read_to_string(root().join("docs/client.md")).unwrap_or_default();
    let code = guide
        .split("```python\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap_or_else(|| panic!("docs/client.md shows no Python driver"));
    // The README shows the same driver.
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap_or_default();
    assert!(
        readme.contains(&format!("```python\n{code}```")),
        "README.md and docs/client.md show different drivers"
    );
    let dir = scratch_dir("guide-driver-script");
    let script = dir.join("driver.py");
    std::fs::write(&script, code).unwrap_or_else(|e| panic!("{e}"));
    let python = root()
        .join("target/peers/python/bin/python")
        .display()
        .to_string();
    let script = script.display().to_string();
    let (_, report, stderr) = client_run(
        "guide-driver",
        &[
            "--transport",
            "http",
            "-k",
            "initialize",
            "-k",
            "tools_call",
            "-k",
            "list-all-pages",
        ],
        &[&python, &script],
        &[],
    );
    let outcome = |id: &str| {
        results(&report)
            .iter()
            .find(|r| r["id"] == id)
            .map(|r| r["outcome"].as_str().unwrap_or_default().to_string())
            .unwrap_or_default()
    };
    assert_eq!(outcome("client/initialize/http"), "skip", "{stderr}");
    assert_eq!(outcome("client/tools_call/http"), "pass", "{stderr}");
    assert_eq!(outcome("client/list-all-pages/http"), "error", "{stderr}");
}

/// A client that speaks no era the selected scenarios are about is skipped
/// everywhere: the run tested nothing, and exits 3 rather than 0.
fn a_run_that_graded_nothing_does_not_pass() {
    let script = root().join("fixtures/clients/official_convention_client.py");
    let script = script.display().to_string();
    let (code, report, stderr) = client_run(
        "graded-nothing",
        &["-p", "mcp-2026", "--transport", "http"],
        &[common::python3(), &script],
        &[],
    );
    assert!(
        results(&report).iter().all(|r| r["outcome"] == "skip"),
        "{stderr}"
    );
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("NOT RUN: no client scenario applied"),
        "{stderr}"
    );
}
