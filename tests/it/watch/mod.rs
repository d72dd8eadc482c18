//! `mcp-conform watch` end to end: the harness (a real client) runs through
//! the proxy against the reference server (a real server), over real pipes
//! and real HTTP. The relay is byte-exact both ways and adds nothing to
//! stdout; no process is left behind; each client rule fails on a faulty
//! client (`--client-fault`) and each server rule on a faulty server
//! (`serve-reference --fault`), never the other side's; a replayed record
//! gives the same findings as the live run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{bin, scratch_dir, text, write_script};

mod http;

pub fn trials() -> Vec<libtest_mimic::Trial> {
    let mut list = trials![
        relay_is_byte_exact_both_ways_and_stdout_holds_only_server_bytes,
        no_process_is_left_when_the_host_closes_stdin,
        no_server_is_left_when_watch_itself_is_killed,
        sigterm_writes_the_reports_and_stops_the_server,
        client_faults_fail_their_client_rules_only,
        server_faults_fail_their_server_rules_only,
        a_server_answering_ids_as_floats_blames_no_client_rule,
        a_clean_conversation_passes_and_exits_zero,
        replay_gives_the_findings_of_the_live_run,
        an_unstartable_server_exits_3,
    ];
    list.extend(http::trials());
    list.push(crate::prereq::trial(
        "watch::python_sdk_client_session_through_watch",
        crate::prereq::Prereq::Peers,
        crate::prereq::python_sdk,
        python_sdk_client_session_through_watch,
    ));
    list
}

/// The Python SDK's ClientSession (a real third-party client) through
/// watch against the reference server: the relay carries its whole session
/// and neither side breaks a rule.
fn python_sdk_client_session_through_watch() {
    let dir = scratch_dir("watch-python-sdk");
    let report = dir.join("report.json");
    let python = crate::common::root().join("target/peers/python/bin/python");
    let out = Command::new(python)
        .arg(crate::common::root().join("fixtures/clients/py_session.py"))
        .args(["--", bin(), "watch", "-q", "--report-json"])
        .arg(&report)
        .args(["--", bin(), "serve-reference"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        broken(std::slice::from_ref(&report)),
        Vec::<(String, String)>::new()
    );
    let seen = report["scenarios"]
        .as_array()
        .and_then(|s| s.iter().find(|r| r["id"] == "watch/transcript"))
        .and_then(|t| t["transcript"].as_array().map(Vec::len))
        .unwrap_or(0);
    assert!(seen >= 10, "{seen} messages seen");
}

/// A host script for the harness to launch: it runs `watch` (with `flags`)
/// in front of the reference server (with `faults`), one report and record
/// per process, named by the script's pid.
fn host_script(dir: &Path, flags: &str, faults: &[&str]) -> PathBuf {
    let faults: String = faults.iter().map(|f| format!(" --fault {f}")).collect();
    let script = dir.join("host.sh");
    let d = dir.display();
    let b = bin();
    write_script(
        &script,
        &format!(
            "#!/bin/sh\nexec {b} watch -q {flags} --report-json {d}/report.$$.json --record {d}/record.$$.jsonl -- {b} serve-reference{faults}\n"
        ),
    );
    script
}

/// Runs the harness as the host, through `host`, with `args`.
///
/// A watch writes its report after its host closes it. The harness's
/// default 100 ms grace (then SIGTERM, then SIGKILL) is shorter than a
/// slow machine takes to write the megabytes a long session's report
/// holds, and a killed watch leaves no report; a real host gives its server
/// time to exit, and so does this one.
fn harness(host: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(bin());
    cmd.args(["-q", "-j", "2", "--shutdown-grace-ms", "10000"])
        .args(args)
        .arg("--")
        .arg(host);
    cmd.env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run the harness: {e}"))
}

/// The JSON reports watch wrote into `dir`.
fn reports(dir: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        if name.is_some_and(|n| n.starts_with("report.") && n.ends_with(".json")) {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            out.push(
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
            );
        }
    }
    assert!(
        !out.is_empty(),
        "watch wrote no report into {}",
        dir.display()
    );
    out
}

/// Rule ids that failed (or warned) in any report, by side.
pub(crate) fn broken(reports: &[Value]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = reports
        .iter()
        .flat_map(|r| r["scenarios"].as_array().cloned().unwrap_or_default())
        .filter(|s| matches!(s["outcome"].as_str(), Some("fail" | "warn" | "info")))
        .filter(|s| s["id"] != "watch/transcript")
        .map(|s| {
            (
                s["profile"].as_str().unwrap_or_default().to_string(),
                s["id"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

fn relay_is_byte_exact_both_ways_and_stdout_holds_only_server_bytes() {
    let dir = scratch_dir("watch-bytes");
    let d = dir.display();
    let b = bin();
    // host side: what the harness wrote and read; server side: what the
    // server read and wrote. All four named by the outer shell's pid.
    let script = dir.join("tap.sh");
    write_script(
        &script,
        &format!(
            "#!/bin/sh\ntee {d}/host-in.$$ | {b} watch -q -- sh -c \"tee {d}/server-in.$$ | {b} serve-reference | tee {d}/server-out.$$\" | tee {d}/host-out.$$\n"
        ),
    );
    let out = harness(
        &script,
        &["-p", "base", "-p", "sep-1821", "--protocol-version", "all"],
    );
    assert!(out.status.code().is_some(), "{}", text(&out.stderr));
    let mut pairs = 0;
    let mut bytes = 0;
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix("host-in.") else {
            continue;
        };
        let read = |n: &str| std::fs::read(dir.join(format!("{n}.{pid}"))).unwrap_or_default();
        let (host_in, server_in) = (read("host-in"), read("server-in"));
        let (server_out, host_out) = (read("server-out"), read("host-out"));
        assert_eq!(
            host_in, server_in,
            "client->server bytes differ (pid {pid})"
        );
        assert_eq!(
            server_out, host_out,
            "server->client bytes differ (pid {pid})"
        );
        pairs += 1;
        bytes += host_in.len() + host_out.len();
    }
    assert!(
        pairs >= 5 && bytes > 10_000,
        "{pairs} connections, {bytes} bytes"
    );
}

/// Whether process `pid` still exists (a zombie counts as gone).
fn alive(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty() && !stat.contains(") Z ")
}

fn wait_gone(pids: &[i32], within: Duration) -> Vec<i32> {
    let deadline = Instant::now() + within;
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn read_pid(path: &Path) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let t = std::fs::read_to_string(path).unwrap_or_default();
        if let Ok(p) = t.trim().parse() {
            return p;
        }
        assert!(
            Instant::now() < deadline,
            "{} never written",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn no_process_is_left_when_the_host_closes_stdin() {
    let dir = scratch_dir("watch-leftover");
    let server = dir.join("stubborn.sh");
    // A server that ignores the end of its input and starts a child of its own.
    write_script(
        &server,
        &format!(
            "#!/bin/sh\necho $$ > {d}/pid\nsleep 300 &\necho $! > {d}/child\nwait\n",
            d = dir.display()
        ),
    );
    let mut watch = Command::new(bin())
        .args(["watch", "-q", "--shutdown-grace-ms", "200", "--"])
        .arg(&server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let pids = [read_pid(&dir.join("pid")), read_pid(&dir.join("child"))];
    drop(watch.stdin.take());
    let status = watch.wait().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(status.code(), Some(0));
    assert_eq!(wait_gone(&pids, Duration::from_secs(5)), Vec::<i32>::new());
}

fn no_server_is_left_when_watch_itself_is_killed() {
    let dir = scratch_dir("watch-killed");
    let server = dir.join("server.sh");
    write_script(
        &server,
        &format!(
            "#!/bin/sh\necho $$ > {d}/pid\nexec {b} serve-reference\n",
            d = dir.display(),
            b = bin()
        ),
    );
    let mut watch = Command::new(bin())
        .args(["watch", "-q", "--"])
        .arg(&server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let pid = read_pid(&dir.join("pid"));
    watch.kill().unwrap_or_else(|e| panic!("{e}"));
    let _ = watch.wait();
    assert_eq!(wait_gone(&[pid], Duration::from_secs(5)), Vec::<i32>::new());
}

/// Sends `lines` to a watch of the reference server, each request after
/// the answer to the one before; then closes stdin (or sends SIGTERM).
fn converse(
    dir: &Path,
    lines: &[&str],
    extra: &[&str],
    sigterm: bool,
) -> (std::process::Output, Value) {
    use std::io::BufRead;
    let report = dir.join("report.json");
    let mut watch = Command::new(bin())
        .args(["watch", "-q", "--report-json"])
        .arg(&report)
        .args(extra)
        .arg("--")
        .args([bin(), "serve-reference"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stdin = watch.stdin.take().unwrap_or_else(|| panic!("stdin"));
    let mut stdout =
        std::io::BufReader::new(watch.stdout.take().unwrap_or_else(|| panic!("stdout")));
    let mut answers = Vec::new();
    for l in lines {
        stdin
            .write_all(format!("{l}\n").as_bytes())
            .and_then(|_| stdin.flush())
            .unwrap_or_else(|e| panic!("{e}"));
        if l.contains("\"id\"") {
            let mut answer = String::new();
            stdout
                .read_line(&mut answer)
                .unwrap_or_else(|e| panic!("{e}"));
            answers.push(answer);
        }
    }
    if sigterm {
        // SAFETY: kill(2) on a child we started; no memory is involved.
        unsafe {
            libc::kill(watch.id() as i32, libc::SIGTERM);
        }
    } else {
        drop(stdin);
    }
    let mut rest = Vec::new();
    let _ = std::io::Read::read_to_end(&mut stdout, &mut rest);
    let mut out = watch.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let mut all = answers.concat().into_bytes();
    all.extend(rest);
    out.stdout = all;
    let text =
        std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("{}: {e}", report.display()));
    (
        out,
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}")),
    )
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

fn sigterm_writes_the_reports_and_stops_the_server() {
    let dir = scratch_dir("watch-sigterm");
    let (out, report) = converse(&dir, &[INIT, INITIALIZED, LIST], &[], true);
    let transcript = report["scenarios"]
        .as_array()
        .and_then(|s| s.iter().find(|r| r["id"] == "watch/transcript"))
        .cloned()
        .unwrap_or_default();
    assert!(
        transcript["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("5 messages"),
        "{transcript}"
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

fn a_clean_conversation_passes_and_exits_zero() {
    let dir = scratch_dir("watch-clean");
    let (out, report) = converse(&dir, &[INIT, INITIALIZED, LIST], &[], false);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(broken(&[report]), Vec::<(String, String)>::new());
    // A watched conversation's report is a report like any other.
    crate::common::assert_valid_report(&dir.join("report.json"));
    // stdout holds the server's two answers and nothing else.
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert!(stdout
        .lines()
        .all(|l| serde_json::from_str::<Value>(l).is_ok()));
}

fn replay_gives_the_findings_of_the_live_run() {
    let dir = scratch_dir("watch-replay");
    let record = dir.join("record.jsonl");
    let dup = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let (out, live) = converse(
        &dir,
        &[INIT, dup, INITIALIZED, LIST],
        &["--record", record.to_str().unwrap_or_default()],
        false,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let replayed_path = dir.join("replayed.json");
    let replay = Command::new(bin())
        .args(["watch", "-q", "--replay"])
        .arg(&record)
        .arg("--report-json")
        .arg(&replayed_path)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(replay.status.code(), Some(1), "{}", text(&replay.stderr));
    crate::common::assert_valid_report(&dir.join("replayed.json"));
    let replayed: Value =
        serde_json::from_str(&std::fs::read_to_string(&replayed_path).unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}"));
    let findings = |r: &Value| -> Vec<Value> {
        r["scenarios"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["id"] != "watch/transcript")
            .map(|s| serde_json::json!([s["id"], s["outcome"], s["message"]]))
            .collect()
    };
    assert_eq!(findings(&live), findings(&replayed));
    // `--report-dir` writes the five formats, as a run's does.
    let report_dir = dir.join("all-formats");
    let all = Command::new(bin())
        .args(["watch", "-q", "--replay"])
        .arg(&record)
        .arg("--report-dir")
        .arg(&report_dir)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(all.status.code(), Some(1), "{}", text(&all.stderr));
    for file in [
        "report.json",
        "junit.xml",
        "report.md",
        "report.html",
        "report.sarif",
    ] {
        assert!(
            report_dir.join(file).is_file(),
            "--report-dir wrote no {file}"
        );
    }
    let broke = broken(&[live]);
    assert!(
        broke.contains(&("client".into(), "client/unique-request-ids-session".into()))
            && broke.contains(&("client".into(), "client/initialized-before-requests".into())),
        "{broke:?}"
    );
}

fn an_unstartable_server_exits_3() {
    let out = Command::new(bin())
        .args(["watch", "--", "/nonexistent/mcp-server"])
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    assert!(
        text(&out.stderr).contains("cannot start the server"),
        "{}",
        text(&out.stderr)
    );
}

/// (client fault, harness arguments, the client rules it must break).
const CLIENT_FAULTS: &[(&str, &[&str], &[&str])] = &[
    (
        "duplicate-id",
        &["-k", "core/ping", "--protocol-version", "2025-11-25"],
        &["client/unique-request-ids"],
    ),
    (
        "answer-notification",
        &["-k", "core/ping", "--protocol-version", "2025-11-25"],
        &[
            "client/no-response-to-notification",
            "client/response-matches-request",
        ],
    ),
    (
        "no-initialized",
        &["-k", "core/ping", "--protocol-version", "2025-11-25"],
        &["client/initialized-before-requests"],
    ),
    (
        "no-meta-2026",
        &["-k", "core/ping", "--protocol-version", "2026-07-28"],
        &[
            "client/meta-protocol-version",
            "client/meta-client-capabilities",
        ],
    ),
    (
        "cursor-without-query",
        &[
            "-k",
            "search/pagination-walk",
            "-k",
            "sep-1821/query-pagination",
            "--protocol-version",
            "2025-11-25",
        ],
        &["client/search-cursor-query", "client/sep1821-cursor-query"],
    ),
];

fn client_faults_fail_their_client_rules_only() {
    for (fault, args, rules) in CLIENT_FAULTS {
        let dir = scratch_dir(&format!("watch-client-{fault}"));
        let host = host_script(&dir, "", &[]);
        let mut all = vec!["--client-fault", fault];
        all.extend_from_slice(args);
        let _ = harness(&host, &all);
        let broke = broken(&reports(&dir));
        for rule in *rules {
            assert!(
                broke.contains(&("client".to_string(), rule.to_string())),
                "--client-fault {fault}: {rule} did not fail; broken: {broke:?}"
            );
        }
        let servers: Vec<_> = broke.iter().filter(|(side, _)| side == "server").collect();
        assert!(
            servers.is_empty(),
            "--client-fault {fault} failed server rules: {servers:?}"
        );
    }
}

/// (server fault, harness arguments, the server rules it must break).
const SERVER_FAULTS: &[(&str, &[&str], &[&str])] = &[
    (
        "notification-answered",
        &[
            "-k",
            "base/notification-no-reply",
            "--protocol-version",
            "2025-11-25",
        ],
        &["server/no-response-to-notification"],
    ),
    (
        "ping-not-empty",
        &["-k", "core/ping", "--protocol-version", "2025-11-25"],
        &["server/ping-empty"],
    ),
    (
        "result-type-lists-only",
        &[
            "-k",
            "mcp-2026/result-type-everywhere",
            "--protocol-version",
            "2026-07-28",
        ],
        &["server/result-type"],
    ),
    (
        "read-no-cache-hints",
        &[
            "-k",
            "mcp-2026/cache-hints",
            "--protocol-version",
            "2026-07-28",
        ],
        &["server/cache-hints"],
    ),
    (
        "log-without-log-level",
        &[
            "-k",
            "mcp-2026/no-log-without-level",
            "--protocol-version",
            "2026-07-28",
        ],
        &["server/log-level-requested"],
    ),
    (
        // The fault fires on a tools/call that is answered. On a fresh
        // reference server a catalog tool is refused with
        // TOOL_DESCRIPTION_REQUIRED until its description is read, so
        // core/progress-unrequested's calls never reach it; category-search
        // calls tool_search, which answers, with no progressToken: the
        // fault's progress names token 0, which no request carried.
        "progress-unrequested",
        &[
            "-k",
            "category-search/default-limit",
            "--protocol-version",
            "2025-11-25",
        ],
        &["server/progress-token-known"],
    ),
    (
        "id-non-ascii-mangled",
        &[
            "-k",
            "base/id-non-ascii",
            "--protocol-version",
            "2025-11-25",
        ],
        &["server/response-matches-request"],
    ),
];

/// Under `--fault id-as-float` the server answers id 0 as 0.0: that breaks
/// server/response-matches-request, and no client rule (the client's later
/// requests come after an answer to its initialize, malformed or not).
fn a_server_answering_ids_as_floats_blames_no_client_rule() {
    let dir = scratch_dir("watch-server-id-as-float");
    let host = host_script(&dir, "", &["id-as-float"]);
    let _ = harness(
        &host,
        &["-k", "core/ping", "--protocol-version", "2025-11-25"],
    );
    let broke = broken(&reports(&dir));
    assert!(
        broke.contains(&(
            "server".to_string(),
            "server/response-matches-request".to_string()
        )),
        "{broke:?}"
    );
    let clients: Vec<&(String, String)> =
        broke.iter().filter(|(side, _)| side == "client").collect();
    assert!(
        clients.is_empty(),
        "client rules blamed for the server's ids: {clients:?}"
    );
}

fn server_faults_fail_their_server_rules_only() {
    for (fault, args, rules) in SERVER_FAULTS {
        let dir = scratch_dir(&format!("watch-server-{fault}"));
        let host = host_script(&dir, "", &[fault]);
        let _ = harness(&host, args);
        let broke = broken(&reports(&dir));
        for rule in *rules {
            assert!(
                broke.contains(&("server".to_string(), rule.to_string())),
                "--fault {fault}: {rule} did not fail; broken: {broke:?}"
            );
        }
    }
    // The clean server breaks no server rule under the same traffic.
    let dir = scratch_dir("watch-server-clean");
    let host = host_script(&dir, "", &[]);
    let _ = harness(
        &host,
        &[
            "-p",
            "base",
            "-p",
            "core",
            "-p",
            "mcp-2026",
            "--protocol-version",
            "all",
        ],
    );
    let broke = broken(&reports(&dir));
    let servers: Vec<_> = broke.iter().filter(|(side, _)| side == "server").collect();
    assert!(
        servers.is_empty(),
        "the clean reference server broke: {servers:?}"
    );
}
