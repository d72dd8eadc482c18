//! The harness against hostile servers, over stdio
//! (fixtures/hostile/hostile_server.py) and over Streamable HTTP
//! (fixtures/hostile/hostile_http_server.py): every scenario gets a verdict
//! with a one-line reason naming what the server did, the run ends within
//! the timeouts' bound, the harness's memory stays bounded, and no process
//! of the run survives it. Ignored, with the reason, where python3 is
//! missing (unless the `python` prerequisite is required). Beside them, a
//! server that redirects to another host never gets the user's headers
//! there, and neither does a proxy the user did not name.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common;
use crate::prereq::{self, Prereq};

/// (mode, a phrase some verdict or server exit must contain).
const CASES: &[(&str, &str)] = &[
    ("never-answers", "no answer to initialize within 1000 ms"),
    ("answers-late", "no answer to initialize within 1000 ms"),
    ("exit-in-handshake", "exited with status 3"),
    ("exit-mid-scenario", "exited with status 5"),
    ("segfault", "killed by signal 11 (SIGSEGV)"),
    ("abort", "killed by signal 6 (SIGABRT)"),
    (
        "non-json",
        "not JSON-RPC messages, the last: line is not JSON",
    ),
    ("partial-line", "without ending the line"),
    ("huge-line", "line exceeded 16 MiB"),
    // an otherwise correct server: its stderr is kept bounded (peak RSS),
    // and no verdict shows it, since nothing failed
    ("stderr-flood", ""),
    ("notification-flood", ""),
    ("wrong-id", "expected exactly"),
    ("duplicate-id", "a second answer to request id"),
    ("two-answers", "a second answer to request id"),
    ("request-loop", "sent more than 100 requests"),
    ("close-stdout", "closed its output but is still running"),
    ("ignore-sigterm", "ignored SIGTERM and was killed"),
    ("fork-child-holding-stdout", "a child process holds it"),
    ("invalid-utf8", "not valid UTF-8"),
    ("deep-nesting", "recursion limit exceeded"),
];

/// (mode, phrase) over Streamable HTTP: the fifteen behaviours of a hostile
/// HTTP server the harness was first tried against, and four more.
const HTTP_CASES: &[(&str, &str)] = &[
    (
        "never-answers",
        "no HTTP response headers from http://127.0.0.1:",
    ),
    ("endless-sse", "no answer to tools/call within 1000 ms"),
    (
        "huge-sse-event",
        "one SSE event exceeded the 16 MiB cap; the harness stopped reading",
    ),
    (
        "huge-json-body",
        "the body declares Content-Length 1073741824, over the 16 MiB cap",
    ),
    (
        "endless-chunked",
        "the body exceeded the 16 MiB cap; the harness stopped reading",
    ),
    ("slow-headers", "within 1000 ms"),
    (
        "redirect-loop",
        "answered 307 Temporary Redirect to Location http://127.0.0.1:",
    ),
    (
        "redirect-other-host",
        "answered 307 Temporary Redirect to Location http://127.0.0.2:9/steal, a redirect mcp-conform does not follow; hint: MCP endpoints answer on the URL the client posts to; point --url at the final URL",
    ),
    (
        "html-200",
        "with 200 OK and no JSON-RPC response; a body that is not a JSON-RPC message (text/html): \"<!doctype html>",
    ),
    (
        "status-500",
        "answered its HTTP POST with 500 Internal Server Error and no JSON-RPC response; a body that is not a JSON-RPC message (text/plain): \"Internal Server Error\"",
    ),
    (
        "cut-short",
        "the body ended after 18 of 1000 bytes: error decoding response body",
    ),
    ("huge-session-id", "session deleted (HTTP 200)"),
    (
        "gzip-bomb",
        "the body has Content-Encoding: gzip, which the request did not accept; not decoded",
    ),
    ("wrong-id", "expected exactly"),
    (
        "notification-flood",
        "the SSE stream exceeded the 16 MiB cap in all; the harness stopped reading",
    ),
    ("close-without-answer", "connection closed before message completed"),
    ("huge-headers", "message head is too large"),
    ("slow-body", "no answer to tools/call within 1000 ms"),
    ("sse-not-json", "SSE event data is not JSON"),
];

/// The handshake allowance: 1 s where the case is about a server too slow
/// to answer it (it never answers, or answers after 2 s); 5 s for every
/// other case, so that python starting slowly on a loaded machine does not
/// turn the behaviour under test into a NOT RUN.
fn startup_timeout_ms(mode: &str) -> &'static str {
    match mode {
        "never-answers" | "answers-late" => "1000",
        _ => "5000",
    }
}

/// The request timeout over stdio: 1 s, which most cases wait out; 5 s
/// where the server answers every request (twice) and the case is about
/// what the harness makes of the extra answer. Only `base/stdout-only-json`
/// reports that, and with 1 s, a Python server slowed by a loaded machine
/// turned its verdict into a timeout that does not mention it.
fn timeout_ms(mode: &str) -> &'static str {
    match mode {
        "duplicate-id" | "two-answers" => "5000",
        _ => "1000",
    }
}

/// Scenarios at once: most cases spend their time waiting out 1 s
/// timeouts, so six overlap them; the huge line is buffered (up to 16 MiB)
/// by each scenario reading it, and the harness's memory bound below is
/// for two at once.
fn jobs(mode: &str) -> &'static str {
    match mode {
        "huge-line" => "2",
        _ => "6",
    }
}

/// Peak resident memory (VmHWM) of a running process, in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
}

/// One run of the harness: exit code, time, peak RSS (KiB), JSON report.
type Run = (Option<i32>, Duration, u64, Value);

/// The harness against the stdio hostile server in `mode`.
fn run_mode(mode: &str, marker: &str, dir: &std::path::Path) -> Run {
    let script = common::root().join("fixtures/hostile/hostile_server.py");
    let mut args: Vec<OsString> = [
        "-q",
        "-p",
        "base",
        "-j",
        jobs(mode),
        "--timeout-ms",
        timeout_ms(mode),
        "--startup-timeout-ms",
        startup_timeout_ms(mode),
        "--protocol-version",
        "2025-11-25",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    args.extend(["--", common::python3(), common::FIXTURE_PYTHON_FLAGS].map(OsString::from));
    args.push(script.into_os_string());
    args.extend([mode, marker].map(OsString::from));
    watch(mode, args, dir)
}

/// The harness against the HTTP hostile server in `mode`, which it launches
/// on a free loopback port (`--url U -- CMD`).
fn run_http_mode(mode: &str, marker: &str, dir: &std::path::Path) -> Run {
    let script = common::root().join("fixtures/hostile/hostile_http_server.py");
    let port = common::free_port().to_string();
    let mut args: Vec<OsString> = vec![
        "-q".into(),
        "-p".into(),
        "base".into(),
        "-j".into(),
        http_jobs(mode).into(),
        "--timeout-ms".into(),
        http_timeout_ms(mode).into(),
        "--startup-timeout-ms".into(),
        "5000".into(),
        "--protocol-version".into(),
        "2025-11-25".into(),
        "--header".into(),
        "x-api-key:SECRET123".into(),
        "--url".into(),
        format!("http://127.0.0.1:{port}/mcp").into(),
    ];
    args.extend(["--", common::python3(), common::FIXTURE_PYTHON_FLAGS].map(OsString::from));
    args.push(script.into_os_string());
    args.extend([mode, &port, marker].map(OsString::from));
    watch(&format!("http-{mode}"), args, dir)
}

/// Scenarios at once over HTTP: where each may hold a body or an SSE event
/// up to the 16 MiB cap, two, so that the memory bound below holds; six
/// elsewhere.
fn http_jobs(mode: &str) -> &'static str {
    match mode {
        "huge-sse-event" | "endless-chunked" | "notification-flood" => "2",
        _ => "6",
    }
}

/// The request timeout over HTTP: 5 s where the case is about a server
/// sending more than the cap, so that the cap, not the timeout, ends the
/// step on a loaded machine; 1 s elsewhere.
fn http_timeout_ms(mode: &str) -> &'static str {
    match mode {
        "huge-sse-event" | "endless-chunked" | "notification-flood" => "5000",
        _ => "1000",
    }
}

/// Runs the harness with `args` (and a JSON report), sampling its peak RSS.
fn watch(name: &str, args: Vec<OsString>, dir: &std::path::Path) -> Run {
    let report = dir.join(format!("{name}.json"));
    let stderr_path = dir.join(format!("{name}.stderr"));
    let stderr = std::fs::File::create(&stderr_path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let started = Instant::now();
    let mut child = Command::new(common::bin())
        .arg("--report-json")
        .arg(&report)
        .args(args)
        .current_dir(common::root())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut peak = 0;
    let status = loop {
        if let Some(kib) = peak_rss_kib(child.id()) {
            peak = peak.max(kib);
        }
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("{name}: the harness did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = std::fs::read_to_string(&report).unwrap_or_else(|e| {
        let said = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        let tail: String = said
            .lines()
            .rev()
            .take(20)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        panic!(
            "{name}: no report ({e}); the harness exited with {status}, its stderr ended:\n{tail}"
        )
    });
    let json: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    (status.code(), started.elapsed(), peak, json)
}

/// Hostile servers run at once: most of each run is spent waiting out
/// timeouts, so running them one after another took two minutes. Three: the
/// cases that must start within their 1 s allowance are about servers that
/// never make it anyway, every other case has 5 s to start (with four, and
/// a 1 s allowance for all, python start-up sometimes did not make it on a
/// loaded 2-core machine).
const AT_ONCE: usize = 3;

/// Cases that wait out a 1 s timeout in most scenarios (about 10 s each);
/// they start first, so the short ones fill the gaps and the trial does not
/// end with a long case started last.
const SLOW: &[&str] = &[
    "huge-line",
    "non-json",
    "partial-line",
    "invalid-utf8",
    "deep-nesting",
    "fork-child-holding-stdout",
];

/// The order the cases start in: slow ones first, each group in `CASES` order.
fn start_order() -> Vec<usize> {
    let (slow, quick): (Vec<usize>, Vec<usize>) =
        (0..CASES.len()).partition(|&i| SLOW.contains(&CASES[i].0));
    slow.into_iter().chain(quick).collect()
}

/// Processes whose command line carries `marker`, killed if there are any.
fn processes_left(marker: &str) -> String {
    let left = Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if !left.is_empty() {
        let _ = Command::new("pkill").args(["-9", "-f", marker]).status();
    }
    left
}

/// Every case, `AT_ONCE` at a time, in `order`; (processes left behind,
/// run) in the order of `cases`.
fn run_modes(
    trial: &str,
    cases: &[(&str, &str)],
    order: &[usize],
    run: impl Fn(&str, &str) -> Run + Sync,
) -> Vec<(String, Run)> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..AT_ONCE {
            scope.spawn(|| loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&i) = order.get(n) else {
                    break;
                };
                let (mode, _) = cases[i];
                // The trial's name is in the marker: the stdio and HTTP trials run
                // at once and share case names, and each must see only its own
                // processes.
                let marker = format!("hostile-marker-{}-{trial}-{mode}", std::process::id());
                let ran = run(mode, &marker);
                // Checked as soon as the harness is gone, as a user would.
                let left = processes_left(&marker);
                if let Ok(mut d) = done.lock() {
                    d.push((i, left, ran));
                }
            });
        }
    });
    let mut runs = done.into_inner().unwrap_or_default();
    runs.sort_by_key(|(i, _, _)| *i);
    assert_eq!(runs.len(), cases.len(), "a hostile run panicked");
    runs.into_iter().map(|(_, left, run)| (left, run)).collect()
}

pub fn trials() -> Vec<Trial> {
    vec![
        prereq::trial(
            "hostile::every_hostile_server_gets_named_verdicts_and_leaves_nothing_behind",
            Prereq::Python,
            prereq::python,
            every_hostile_server_gets_named_verdicts_and_leaves_nothing_behind,
        ),
        prereq::trial(
            "hostile::every_hostile_http_server_gets_named_verdicts_and_leaves_nothing_behind",
            Prereq::Python,
            prereq::python,
            every_hostile_http_server_gets_named_verdicts_and_leaves_nothing_behind,
        ),
        prereq::trial(
            "hostile::a_dual_era_server_checking_modern_headers_is_sent_none_in_an_earlier_era",
            Prereq::Python,
            prereq::python,
            a_dual_era_server_checking_modern_headers_is_sent_none_in_an_earlier_era,
        ),
        prereq::trial(
            "hostile::a_failure_shared_over_stdio_carries_no_note_over_http",
            Prereq::Python,
            prereq::python,
            a_failure_shared_over_stdio_carries_no_note_over_http,
        ),
        Trial::test(
            "hostile::a_proxy_from_the_environment_never_gets_the_users_header",
            || {
                a_proxy_from_the_environment_never_gets_the_users_header();
                Ok(())
            },
        ),
        Trial::test(
            "hostile::a_header_the_user_gives_never_reaches_the_host_a_redirect_names",
            || {
                a_header_the_user_gives_never_reaches_the_host_a_redirect_names();
                Ok(())
            },
        ),
    ]
}

fn every_hostile_server_gets_named_verdicts_and_leaves_nothing_behind() {
    let dir = common::output_dir("hostile");
    let runs = run_modes("stdio", CASES, &start_order(), |mode, marker| {
        run_mode(mode, marker, &dir)
    });
    let (table, problems) = judge(CASES, runs, None);
    println!("{table}");
    let _ = std::fs::write(dir.join("hostile.md"), &table);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn every_hostile_http_server_gets_named_verdicts_and_leaves_nothing_behind() {
    let dir = common::output_dir("hostile-http");
    let order: Vec<usize> = (0..HTTP_CASES.len()).collect();
    let runs = run_modes("http", HTTP_CASES, &order, |mode, marker| {
        run_http_mode(mode, marker, &dir)
    });
    let (table, problems) = judge(HTTP_CASES, runs, Some(longest_allowed_ms));
    println!("{table}");
    let _ = std::fs::write(dir.join("hostile-http.md"), &table);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Everything a run's verdicts say: each scenario's message, stderr tail,
/// server exits and findings, and the run's verdict.
fn verdict_texts(report: &Value) -> Vec<String> {
    let scenarios = report["scenarios"].as_array().cloned().unwrap_or_default();
    let verdict_reason = report["summary"]["verdict"]["reason"]
        .as_str()
        .map(str::to_string);
    scenarios
        .iter()
        .flat_map(|s| {
            let mut t = vec![
                s["message"].as_str().unwrap_or("").to_string(),
                s["stderr_tail"]
                    .as_str()
                    .unwrap_or("")
                    .chars()
                    .take(200)
                    .collect(),
            ];
            t.extend(
                s["server_exits"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string),
            );
            t.extend(
                s["findings"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f["message"].as_str())
                    .map(str::to_string),
            );
            t
        })
        .chain(verdict_reason)
        .collect()
}

/// The bound on one scenario's time: the step that meets the behaviour
/// ends within its timeout plus one second; the handshake and the steps
/// before it get as long again.
fn longest_allowed_ms(mode: &str) -> u64 {
    let timeout: u64 = http_timeout_ms(mode).parse().unwrap_or(1000);
    2 * (timeout + 1000) + 2000
}

/// The table of runs (markdown) and what is wrong with them: a case whose
/// verdicts do not name its behaviour, an unexpected exit code, a scenario
/// without a verdict, memory or time past the bound, a process left.
/// `longest_allowed` bounds one scenario's time, where given.
fn judge(
    cases: &[(&str, &str)],
    runs: Vec<(String, Run)>,
    longest_allowed: Option<fn(&str) -> u64>,
) -> (String, Vec<String>) {
    let expected_scenarios = mcp_conform::builtin::scenarios()
        .unwrap_or_default()
        .into_iter()
        .filter(|s| s.profile == "base")
        .count();
    let mut table = String::from(
        "| behaviour | exit | time to verdicts | longest scenario | peak RSS | reason |\n|---|---|---|---|---|---|\n",
    );
    let mut problems = Vec::new();
    for ((mode, phrase), (left, (code, took, peak, report))) in cases.iter().zip(runs) {
        let scenarios = report["scenarios"].as_array().cloned().unwrap_or_default();
        // A server that fails every handshake is one NOT RUN verdict (exit 3),
        // not an error per scenario.
        let not_run = report["summary"]["verdict"]["status"] == "not_run";
        if not_run && code != Some(3) {
            problems.push(format!("{mode}: NOT RUN but exit code {code:?}"));
        }
        if !not_run && scenarios.len() != expected_scenarios {
            problems.push(format!(
                "{mode}: {} verdicts for {expected_scenarios} scenarios",
                scenarios.len()
            ));
        }
        let texts = verdict_texts(&report);
        if !texts.iter().any(|t| t.contains(phrase)) {
            problems.push(format!("{mode}: no verdict mentions {phrase:?}"));
        }
        // Flooding stderr or notifications and ignoring SIGTERM break no
        // rule: such a server that is otherwise correct conforms (exit 0),
        // its behaviour named in the verdicts all the same.
        let lawful = matches!(
            *mode,
            "stderr-flood" | "notification-flood" | "ignore-sigterm"
        );
        if !(matches!(code, Some(1) | Some(3)) || (lawful && code == Some(0))) {
            problems.push(format!("{mode}: exit code {code:?}, expected 1 or 3"));
        }
        if peak > 128 * 1024 {
            problems.push(format!(
                "{mode}: harness peak RSS {} MiB > 128 MiB",
                peak / 1024
            ));
        }
        if took > Duration::from_secs(60) {
            problems.push(format!("{mode}: took {took:?}"));
        }
        // One scenario: its handshake and the steps before the one that
        // met the behaviour, which ends within its timeout plus one second.
        let longest = scenarios
            .iter()
            .filter_map(|s| s["duration_ms"].as_u64())
            .max()
            .unwrap_or(0);
        if longest_allowed.is_some_and(|bound| longest > bound(mode)) {
            problems.push(format!("{mode}: a scenario took {longest} ms"));
        }
        if !left.is_empty() {
            problems.push(format!("{mode}: processes left behind: {left}"));
        }
        let reason = texts
            .iter()
            .find(|t| !phrase.is_empty() && t.contains(phrase))
            .cloned()
            .unwrap_or_default();
        table.push_str(&format!(
            "| {mode} | {} | {:.2} s | {:.2} s | {} MiB | {} |\n",
            code.unwrap_or(-1),
            took.as_secs_f64(),
            longest as f64 / 1000.0,
            peak / 1024,
            reason
                .replace('|', "\\|")
                .chars()
                .take(240)
                .collect::<String>()
        ));
    }
    (table, problems)
}

/// A listener on another loopback host (127.0.0.2) that records whatever
/// reaches it, and a server on 127.0.0.1 that answers every request with a
/// `307` pointing there; the harness runs with a secret header against the
/// first. Nothing may reach the second: a redirect is not followed.
/// A loopback listener on `ip` that records what each connection sent and
/// answers every one with `answer`: its port, and what it has seen.
fn recording_listener(ip: &str, answer: String) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener =
        TcpListener::bind((ip, 0)).unwrap_or_else(|e| panic!("cannot listen on {ip}: {e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let _ = conn.set_read_timeout(Some(Duration::from_millis(500)));
            let mut buf = [0u8; 8192];
            let n = conn.read(&mut buf).unwrap_or(0);
            if let Ok(mut s) = record.lock() {
                s.push(String::from_utf8_lossy(&buf[..n]).into_owned());
            }
            let _ = conn.write_all(answer.as_bytes());
        }
    });
    (port, seen)
}

fn seen_by(listener: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    listener.lock().map(|s| s.clone()).unwrap_or_default()
}

const NOT_FOUND: &str = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// Runs the handshake against `url` with a secret header, more arguments
/// and environment variables.
fn handshake_with_secret(url: &str, more: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let out = Command::new(common::bin())
        .args([
            "-q",
            "-p",
            "base",
            "-k",
            "handshake",
            "--timeout-ms",
            "2000",
        ])
        .args(["--protocol-version", "2025-11-25"])
        .args(["--header", "x-api-key:SECRET123", "--url", url])
        .args(more)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// The `http` scenarios that run in every era build their request body
/// whole. In 2025-11-25 it must not carry 2026-07-28's `_meta`: a dual-era
/// server takes such a request for a 2026-07-28 one and refuses it for the
/// headers that revision mirrors (supergateway 4.0.0 does, and
/// request-content-type failed it, a MUST, for answering 400).
fn a_dual_era_server_checking_modern_headers_is_sent_none_in_an_earlier_era() {
    let (report, stderr) = strict_http_run(
        "dual-era-headers",
        &[
            "transport-http/request-content-type",
            "transport-http/foreign-origin-403",
        ],
    );
    let outcome = |id: &str| common::scenario_result(&report, id).map(|s| s["outcome"].clone());
    assert_eq!(
        outcome("transport-http/request-content-type"),
        Some(Value::from("pass")),
        "{stderr}"
    );
    // The server validates no Origin: served, which the MUST fails, not
    // refused for its headers, which would only warn.
    assert_eq!(
        outcome("transport-http/foreign-origin-403"),
        Some(Value::from("fail")),
        "{stderr}"
    );
}

/// The SDKs' stdio transports drop an unparsable line; over Streamable
/// HTTP a server that fails base/parse-error does so in its own way
/// (supergateway 4.0.0 answers an HTML 400 page), and the stdio note
/// beside it misled. This server closes the connection on it.
fn a_failure_shared_over_stdio_carries_no_note_over_http() {
    let (report, stderr) = strict_http_run("shared-over-stdio", &["base/parse-error"]);
    let result = common::scenario_result(&report, "base/parse-error")
        .unwrap_or_else(|| panic!("base/parse-error not in the report: {stderr}"));
    assert_eq!(result["outcome"], "fail", "{stderr}");
    assert!(result.get("shared_finding").is_none(), "{result}");
    assert!(!stderr.contains("shared:"), "{stderr}");
}

/// A 2025-11-25 run of the scenarios `selected` (each a `-k`) against
/// hostile_http_server.py in `modern-meta-headers` mode, launched by the
/// run: its JSON report, and its stderr.
fn strict_http_run(name: &str, selected: &[&str]) -> (Value, String) {
    let dir = common::output_dir(name);
    let report = dir.join("report.json").display().to_string();
    let script = common::root().join("fixtures/hostile/hostile_http_server.py");
    let script = script.display().to_string();
    let port = common::free_port().to_string();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut args = vec!["-q"];
    for id in selected {
        args.extend(["-k", id]);
    }
    args.extend([
        "--protocol-version",
        "2025-11-25",
        "--report-json",
        &report,
        "--url",
        &url,
        "--",
        common::python3(),
        common::FIXTURE_PYTHON_FLAGS,
        &script,
        "modern-meta-headers",
        &port,
    ]);
    let out = common::run_cli(&args);
    let report = common::assert_valid_report(std::path::Path::new(&report));
    (report, common::text(&out.stderr))
}

/// A proxy set in the environment is a host the user did not name on the
/// command line: it gets nothing. One named with --proxy gets the requests.
fn a_proxy_from_the_environment_never_gets_the_users_header() {
    let (proxy_port, proxy) = recording_listener("127.0.0.2", NOT_FOUND.to_string());
    let (server_port, server) = recording_listener("127.0.0.1", NOT_FOUND.to_string());
    let proxy_url = format!("http://127.0.0.2:{proxy_port}");
    let url = format!("http://127.0.0.1:{server_port}/mcp");
    let env: Vec<(&str, &str)> = [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "all_proxy",
    ]
    .into_iter()
    .map(|k| (k, proxy_url.as_str()))
    .chain([("NO_PROXY", ""), ("no_proxy", "")])
    .collect();
    let (_, text) = handshake_with_secret(&url, &[], &env);
    assert!(
        seen_by(&proxy).is_empty(),
        "the environment's proxy got connections: {:?}\n{text}",
        seen_by(&proxy)
    );
    assert!(
        seen_by(&server).iter().any(|r| r.contains("SECRET123")),
        "the server at --url did not get the request: {text}"
    );
    let (_, text) = handshake_with_secret(&url, &["--proxy", &proxy_url], &[]);
    assert!(
        seen_by(&proxy)
            .iter()
            .any(|r| r.contains(&url) && r.contains("SECRET123")),
        "the proxy named with --proxy did not get the request: {:?}\n{text}",
        seen_by(&proxy)
    );
}

fn a_header_the_user_gives_never_reaches_the_host_a_redirect_names() {
    let other = TcpListener::bind("127.0.0.2:0")
        .unwrap_or_else(|e| panic!("cannot listen on 127.0.0.2 (loopback): {e}"));
    let steal = format!(
        "http://127.0.0.2:{}/steal",
        other.local_addr().map(|a| a.port()).unwrap_or(0)
    );
    other
        .set_nonblocking(true)
        .unwrap_or_else(|e| panic!("{e}"));
    let redirect = format!(
        "HTTP/1.1 307 Temporary Redirect\r\nLocation: {steal}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    let (port, first_saw) = recording_listener("127.0.0.1", redirect);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (code, text) =
        handshake_with_secret(&url, &["--header", "authorization:Bearer SECRET456"], &[]);
    let mut reached = Vec::new();
    while let Ok((mut conn, _)) = other.accept() {
        let _ = conn.set_nonblocking(false);
        let _ = conn.set_read_timeout(Some(Duration::from_millis(200)));
        let mut buf = Vec::new();
        let _ = conn.read_to_end(&mut buf);
        reached.push(String::from_utf8_lossy(&buf).into_owned());
    }
    assert!(
        reached.is_empty(),
        "the redirect's host got connections: {reached:?}"
    );
    assert!(
        seen_by(&first_saw).iter().any(|r| r.contains("SECRET123")),
        "the server at --url did not get the request: {:?}",
        seen_by(&first_saw)
    );
    assert_eq!(code, Some(3), "{text}");
    assert!(
        text.contains(&format!(
            "answered 307 Temporary Redirect to Location {steal}"
        )) && text.contains("point --url at the final URL"),
        "{text}"
    );
}
