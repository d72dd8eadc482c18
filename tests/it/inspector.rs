//! Real third-party clients drive a real server through `mcp-conform watch`:
//! the MCP Inspector's CLI (`@modelcontextprotocol/inspector-cli`) lists and
//! calls tools, and the Python SDK's `ClientSession`
//! (fixtures/clients/py_session.py) runs its session, each against
//! `@modelcontextprotocol/server-everything`, over stdio and over Streamable
//! HTTP. The client gets its answers through the proxy, watch grades both
//! sides and finds nothing broken, and no process is left running.
//! scripts/watch-reports.sh runs the same command lines and writes the
//! reports committed under reports/watch/.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{bin, free_port, root, scratch_dir};
use crate::prereq::{trial, Prereq};

/// Set on every process a trial starts (and inherited by theirs): what is
/// still running with it once the trial is over was left behind.
const MARK: &str = "MCP_CONFORM_TRIAL";

/// The tool argument the Inspector sends, to be found in its output.
const MESSAGE: &str = "relayed-through-watch";

/// How long one client run may take before the trial gives up on it.
const CLIENT_LIMIT: Duration = Duration::from_secs(60);

pub fn trials() -> Vec<libtest_mimic::Trial> {
    vec![
        trial(
            "inspector::inspector_cli_lists_and_calls_tools_through_watch_over_stdio",
            Prereq::Peers,
            inspector_installed,
            inspector_cli_lists_and_calls_tools_through_watch_over_stdio,
        ),
        trial(
            "inspector::inspector_cli_lists_and_calls_tools_through_watch_over_http",
            Prereq::Peers,
            inspector_installed,
            inspector_cli_lists_and_calls_tools_through_watch_over_http,
        ),
        trial(
            "inspector::python_sdk_session_through_watch_to_server_everything_over_stdio",
            Prereq::Peers,
            python_sdk_installed,
            python_sdk_session_through_watch_to_server_everything_over_stdio,
        ),
        trial(
            "inspector::python_sdk_session_through_watch_to_server_everything_over_http",
            Prereq::Peers,
            python_sdk_installed,
            python_sdk_session_through_watch_to_server_everything_over_http,
        ),
        trial(
            "inspector::a_server_fault_under_the_inspector_cli_is_a_problem",
            Prereq::Peers,
            inspector_installed,
            a_server_fault_under_the_inspector_cli_is_a_problem,
        ),
        libtest_mimic::Trial::test("inspector::a_process_left_behind_is_found", || {
            a_process_left_behind_is_found();
            Ok(())
        }),
    ]
}

fn node_modules() -> PathBuf {
    root().join("target/peers/node/node_modules")
}

fn everything() -> String {
    node_modules()
        .join("@modelcontextprotocol/server-everything/dist/index.js")
        .display()
        .to_string()
}

fn inspector_package() -> PathBuf {
    node_modules().join("@modelcontextprotocol/inspector-cli")
}

fn python() -> PathBuf {
    root().join("target/peers/python/bin/python")
}

fn inspector_installed() -> Result<(), String> {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let package = inspector_package().join("package.json");
    if node && package.is_file() && Path::new(&everything()).is_file() {
        Ok(())
    } else {
        Err(format!(
            "node, {} and server-everything (scripts/install-peers.sh)",
            package.display()
        ))
    }
}

fn python_sdk_installed() -> Result<(), String> {
    crate::prereq::python_sdk()?;
    if Path::new(&everything()).is_file() {
        Ok(())
    } else {
        Err(format!("{} (scripts/install-peers.sh)", everything()))
    }
}

/// The Inspector's CLI with `args`, run the way its README shows
/// (`mcp-inspector-cli --cli TARGET… --method M`).
fn inspector(args: &[String]) -> Command {
    let mut cmd = Command::new(node_modules().join(".bin/mcp-inspector-cli"));
    cmd.arg("--cli").args(args);
    // inspector-cli 1.0.3 looks for its own package.json at `../package.json`
    // relative to the working directory and fails with "Cannot find module"
    // anywhere else: its build/ directory is one where that holds.
    cmd.current_dir(inspector_package().join("build"));
    cmd
}

fn list_tools() -> Vec<String> {
    vec!["--method".into(), "tools/list".into()]
}

fn call_echo() -> Vec<String> {
    [
        "--method",
        "tools/call",
        "--tool-name",
        "echo",
        "--tool-arg",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("message={MESSAGE}")])
    .collect()
}

/// What one client run left: its exit status and output, and watch's report.
struct Run {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    report: Value,
}

fn inspector_cli_lists_and_calls_tools_through_watch_over_stdio() {
    let dir = scratch_dir("inspector-stdio");
    for (name, method) in [("list", list_tools()), ("call", call_echo())] {
        let report = dir.join(format!("{name}.json"));
        // The Inspector's launcher drops a `--` before handing the arguments
        // on, so watch gets the server command as its first plain word.
        let mut args = stdio_watch(&report);
        args.extend(["node".to_string(), everything(), "stdio".into()]);
        args.extend(method);
        let (status, stdout, stderr) = run_client(&dir, name, inspector(&args));
        let run = Run {
            status,
            stdout,
            stderr,
            report: read_report(&report),
        };
        assert_inspector_answered(name, &run);
        assert_graded(&run, name == "call");
    }
    assert_none_left(&dir);
}

fn inspector_cli_lists_and_calls_tools_through_watch_over_http() {
    let dir = scratch_dir("inspector-http");
    let (mut server, upstream) = start_everything_http(&dir);
    for (name, method) in [("list", list_tools()), ("call", call_echo())] {
        // One proxy per session: watch checks what it relays as one
        // conversation (docs/watch.md, Limits).
        let run = through_http_watch(&dir, name, upstream, |url| {
            let mut args = vec![url.to_string(), "--transport".into(), "http".into()];
            args.extend(method.clone());
            inspector(&args)
        });
        assert_inspector_answered(name, &run);
        // The Inspector's CLI leaves its session without DELETE (it opened a
        // GET stream and exits): reported as info, the one finding expected.
        assert_graded_but(&run, name == "call", &["client/http-session-delete"]);
        assert_eq!(
            rule_outcome(&run.report, "client/http-session-delete"),
            "info"
        );
    }
    stop(&mut server);
    assert_none_left(&dir);
}

fn python_sdk_session_through_watch_to_server_everything_over_stdio() {
    let dir = scratch_dir("inspector-python-stdio");
    let report = dir.join("session.json");
    let mut cmd = Command::new(python());
    cmd.arg(root().join("fixtures/clients/py_session.py"))
        .arg("--")
        .args(stdio_watch(&report))
        // The SDK hands its server a minimal environment, without the mark:
        // watch passes it on to the server so that a leftover would be seen.
        .args(["--env".to_string(), format!("{MARK}={}", dir.display())])
        .args([
            "--".to_string(),
            "node".into(),
            everything(),
            "stdio".into(),
        ]);
    let (status, stdout, stderr) = run_client(&dir, "session", cmd);
    let run = Run {
        status,
        stdout,
        stderr,
        report: read_report(&report),
    };
    assert_python_answered(&run);
    assert_graded(&run, false);
    assert_none_left(&dir);
}

fn python_sdk_session_through_watch_to_server_everything_over_http() {
    let dir = scratch_dir("inspector-python-http");
    let (mut server, upstream) = start_everything_http(&dir);
    let run = through_http_watch(&dir, "session", upstream, |url| {
        let mut cmd = Command::new(python());
        cmd.arg(root().join("fixtures/clients/py_session.py"))
            .arg(url);
        cmd
    });
    assert_python_answered(&run);
    assert_graded(&run, false);
    // The SDK's client ends its session with DELETE.
    assert_eq!(
        rule_outcome(&run.report, "client/http-session-delete"),
        "pass"
    );
    stop(&mut server);
    assert_none_left(&dir);
}

/// The checks above fail on a run that breaks them: the reference server
/// echoing request ids as floats (`--fault id-as-float`) under the
/// Inspector's listing is a server rule broken, and the run is no clean one.
fn a_server_fault_under_the_inspector_cli_is_a_problem() {
    let dir = scratch_dir("inspector-fault");
    let report = dir.join("list.json");
    let mut args = stdio_watch(&report);
    args.extend([bin().to_string(), "serve-reference".into()]);
    args.extend(["--fault".into(), "id-as-float".into()]);
    args.extend(list_tools());
    let (status, stdout, stderr) = run_client(&dir, "list", inspector(&args));
    let run = Run {
        status,
        stdout,
        stderr,
        report: read_report(&report),
    };
    // JavaScript reads 0.0 as 0: the Inspector itself got its answers.
    assert!(run.status.success(), "{}", run.stderr);
    let problems = graded_problems(&run, true);
    assert!(
        problems.contains(&"server broke server/response-matches-request".to_string()),
        "{problems:#?}"
    );
    assert!(
        problems.iter().any(|p| p.starts_with("no call of echo")),
        "{problems:#?}"
    );
    assert_none_left(&dir);
}

/// A process that escaped its parent's process group while carrying the
/// mark is found, and so would fail `assert_none_left`.
fn a_process_left_behind_is_found() {
    let dir = scratch_dir("inspector-leftover");
    let mut sh = Command::new("sh")
        .args(["-c", "setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $!"])
        .env(MARK, &dir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut pid = String::new();
    if let Some(out) = sh.stdout.as_mut() {
        let _ = std::io::Read::read_to_string(out, &mut pid);
    }
    let _ = sh.wait();
    let left = marked(&dir);
    // SAFETY: kill(2) on the process this trial started.
    if let Ok(pid) = pid.trim().parse::<i32>() {
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    assert!(
        left.iter().any(|l| l.contains("sleep 30")),
        "the leftover sleep was not found: {left:?}"
    );
}

/// `watch` over stdio, writing its JSON report to `report`, ready for the
/// server command.
fn stdio_watch(report: &Path) -> Vec<String> {
    vec![
        bin().to_string(),
        "watch".into(),
        "-q".into(),
        "--report-json".into(),
        report.display().to_string(),
    ]
}

/// Runs `client` with the mark set and its output in files under `dir`
/// (named `name`), for at most `CLIENT_LIMIT`: its status, stdout, stderr.
fn run_client(dir: &Path, name: &str, mut client: Command) -> (ExitStatus, String, String) {
    let out = dir.join(format!("{name}.stdout"));
    let err = dir.join(format!("{name}.stderr"));
    let file = |p: &Path| std::fs::File::create(p).unwrap_or_else(|e| panic!("{e}"));
    let mut child = client
        .env(MARK, dir)
        .stdin(Stdio::null())
        .stdout(file(&out))
        .stderr(file(&err))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start the client {name}: {e}"));
    let status = wait_within(&mut child, CLIENT_LIMIT)
        .unwrap_or_else(|| panic!("the client {name} did not finish within {CLIENT_LIMIT:?}"));
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    (status, read(&out), read(&err))
}

/// A watch's report, once it is there. A client may exit without waiting
/// for the server it stopped, so watch can still be writing when the client
/// is done; watch renames its report into place whole, so a report that is
/// there is complete.
fn read_report(path: &Path) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !path.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("watch wrote no report {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The client `client(url)` through a `watch --listen` of its own in front
/// of the server on `upstream`; watch is then stopped with SIGTERM, as a
/// host stops it, and must exit 0 (nothing failed) after writing its report.
fn through_http_watch(
    dir: &Path,
    name: &str,
    upstream: u16,
    client: impl Fn(&str) -> Command,
) -> Run {
    let report = dir.join(format!("{name}.json"));
    let (mut watch, port) = start_listening(dir, name, |port| {
        let mut cmd = Command::new(bin());
        cmd.args(["watch", "-q", "--listen", &format!("127.0.0.1:{port}")])
            .args(["--upstream", &format!("http://127.0.0.1:{upstream}/mcp")])
            .arg("--report-json")
            .arg(&report);
        cmd
    });
    let (status, stdout, stderr) =
        run_client(dir, name, client(&format!("http://127.0.0.1:{port}/mcp")));
    // SAFETY: kill(2) on a child this trial started; no memory is involved.
    unsafe {
        libc::kill(watch.id() as i32, libc::SIGTERM);
    }
    let stopped = wait_within(&mut watch, Duration::from_secs(10))
        .unwrap_or_else(|| panic!("watch did not stop within 10 s of SIGTERM"));
    let report = read_report(&report);
    assert!(stopped.success(), "watch exited {stopped}: {report}");
    Run {
        status,
        stdout,
        stderr,
        report,
    }
}

/// server-everything over Streamable HTTP on a free port: the child and its port.
fn start_everything_http(dir: &Path) -> (Child, u16) {
    start_listening(dir, "server-everything", |port| {
        let mut cmd = Command::new("node");
        cmd.args([everything().as_str(), "streamableHttp"])
            .env("PORT", port.to_string());
        cmd
    })
}

/// Starts `command(port)` (with the mark, output in files under `dir`) on
/// a free port until one start listens there; a port taken between the
/// draw and the bind makes the child exit, and another port is drawn.
fn start_listening(dir: &Path, name: &str, command: impl Fn(u16) -> Command) -> (Child, u16) {
    let log = dir.join(format!("{name}.log"));
    for _ in 0..5 {
        let port = free_port();
        let file = std::fs::File::create(&log).unwrap_or_else(|e| panic!("{e}"));
        let err = file.try_clone().unwrap_or_else(|e| panic!("{e}"));
        let mut child = command(port)
            .env(MARK, dir)
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        if listens(&mut child, port) {
            return (child, port);
        }
        stop(&mut child);
    }
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    panic!("{name} never listened on a free port: {text}")
}

/// Whether `child` is listening on `port` within 15 s (false once it exits).
fn listens(child: &mut Child, port: u16) -> bool {
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return false;
        }
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn wait_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if Instant::now() > deadline {
            stop(child);
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stop(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Processes other than zombies whose environment or command line holds
/// the mark of `dir`: pid and command line.
fn marked(dir: &Path) -> Vec<String> {
    let mark = dir.display().to_string();
    let env = format!("{MARK}={mark}");
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let proc_dir = entry.path();
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let environ = std::fs::read(proc_dir.join("environ")).unwrap_or_default();
        let cmdline = std::fs::read(proc_dir.join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let has_env = environ.split(|b| *b == 0).any(|v| v == env.as_bytes());
        let stat = std::fs::read_to_string(proc_dir.join("stat")).unwrap_or_default();
        if (has_env || cmdline.contains(&mark)) && !stat.is_empty() && !stat.contains(") Z ") {
            out.push(format!("{pid} {cmdline}"));
        }
    }
    out
}

/// No process the trial started (nor any of theirs) still runs, 5 s on.
fn assert_none_left(dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = marked(dir);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "left running: {left:#?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The Inspector printed the tool list (with `echo`), or echo's answer.
fn assert_inspector_answered(name: &str, run: &Run) {
    assert!(run.status.success(), "{name}: {}", run.stderr);
    let answer: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{name}: stdout is not JSON ({e}): {}", run.stdout));
    if name == "list" {
        let tools = answer["tools"].as_array().cloned().unwrap_or_default();
        assert!(
            tools.iter().any(|t| t["name"] == "echo"),
            "no echo tool listed: {answer}"
        );
    } else {
        assert_eq!(
            answer["content"][0]["text"],
            format!("Echo: {MESSAGE}"),
            "{answer}"
        );
    }
}

/// The Python session listed tools and finished.
fn assert_python_answered(run: &Run) {
    assert!(run.status.success(), "{}", run.stderr);
    let tools = run
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("tools: "))
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or(0);
    assert!(tools > 0, "the session listed no tools: {}", run.stderr);
}

/// Both sides were graded and neither broke a rule; the transcript holds
/// the listing (and, when `called`, the call with its argument).
fn assert_graded(run: &Run, called: bool) {
    let problems = graded_problems(run, called);
    assert!(problems.is_empty(), "{problems:#?}\n{}", run.stdout);
}

/// As [`assert_graded`], with the rules in `expected` broken and no other.
fn assert_graded_but(run: &Run, called: bool, expected: &[&str]) {
    let problems: Vec<String> = graded_problems(run, called)
        .into_iter()
        .filter(|p| !expected.iter().any(|r| p == &format!("client broke {r}")))
        .collect();
    assert!(problems.is_empty(), "{problems:#?}\n{}", run.stdout);
}

/// The outcome of one rule in a watch report.
fn rule_outcome(report: &Value, id: &str) -> String {
    report["scenarios"]
        .as_array()
        .and_then(|s| s.iter().find(|r| r["id"] == id))
        .and_then(|r| r["outcome"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// What keeps a run from being cleanly graded, one line each.
fn graded_problems(run: &Run, called: bool) -> Vec<String> {
    let report = &run.report;
    let mut problems = Vec::new();
    for side in ["client", "server"] {
        if report["summary"]["profiles"][side]["passed"].as_u64() < Some(1) {
            problems.push(format!("no {side} rule was graded: {}", report["summary"]));
        }
    }
    for (side, rule) in crate::watch::broken(std::slice::from_ref(report)) {
        problems.push(format!("{side} broke {rule}"));
    }
    let sent = |method: &str| {
        transcript(report)
            .into_iter()
            .filter(|m| m["message"]["method"] == method)
            .map(|m| m["message"].clone())
            .collect::<Vec<_>>()
    };
    if sent("tools/list").is_empty() {
        problems.push("no tools/list relayed".into());
    }
    let calls = sent("tools/call");
    if called
        && !calls
            .iter()
            .any(|c| c["params"]["arguments"]["message"] == MESSAGE)
    {
        problems.push(format!("no call of echo relayed: {calls:?}"));
    }
    problems
}

fn transcript(report: &Value) -> Vec<Value> {
    report["scenarios"]
        .as_array()
        .and_then(|s| s.iter().find(|r| r["id"] == "watch/transcript"))
        .and_then(|t| t["transcript"].as_array().cloned())
        .unwrap_or_default()
}
