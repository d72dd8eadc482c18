//! Shared helpers for the end-to-end tests: test servers and probing.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use mcp_conform::expr::{Bound, EvalOptions};
use mcp_conform::run::probe::probe;
use mcp_conform::run::{RunConfig, Target};
use mcp_conform::transport::StdioSpec;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The interpreter `python3` on PATH runs, by its own path, asked once; or
/// `python3` itself when that cannot be asked. PATH's `python3` may be a
/// version manager's shim (pyenv's is a shell script costing about 45 ms of
/// CPU per start, twice the interpreter's own start), and the suites start
/// Python servers hundreds of times.
pub fn python3() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "python3".to_string())
    })
}

/// What goes between the interpreter and a fixture server's script. The
/// fixture servers use only the standard library: `-S` starts Python
/// without site-packages, whose `.pth` files run at every start (on this
/// project's machines one imports certifi: 30 ms of CPU per start, against
/// 14 ms without), and the suites start fixture servers hundreds of times.
pub const FIXTURE_PYTHON_FLAGS: &str = "-S";

/// The tiny fixture server with `--break` flags.
pub fn tiny_server(breaks: &[&str]) -> Target {
    let mut args = vec![
        FIXTURE_PYTHON_FLAGS.to_string(),
        root()
            .join("fixtures/servers/tiny_server.py")
            .display()
            .to_string(),
    ];
    for b in breaks {
        args.push("--break".into());
        args.push((*b).to_string());
    }
    Target::Stdio(StdioSpec::new(python3(), args))
}

/// The reference server (this package's binary) with `--control` and faults.
pub fn reference_server(faults: &[&str]) -> Target {
    let mut args = vec!["serve-reference".to_string(), "--control".to_string()];
    for f in faults {
        args.push("--fault".into());
        args.push((*f).to_string());
    }
    Target::Stdio(StdioSpec::new(env!("CARGO_BIN_EXE_mcp-conform"), args))
}

thread_local! {
    /// Whether the run configurations this thread builds check the read
    /// analysis (see [`skip_read_checks_here`]).
    static CHECK_READS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// How the suites evaluate expressions: each also on the parts of its
/// variables it reads, which must give the same, unless this thread asked
/// otherwise.
fn eval_options() -> EvalOptions {
    EvalOptions {
        verify_reads: CHECK_READS.with(std::cell::Cell::get),
    }
}

/// The configurations this thread builds from now on evaluate each
/// expression once. A test that runs the catalog many times to check
/// something else (the fault matrix: about a hundred catalog runs) asks
/// this on its own threads; the rest of the suite, running beside it,
/// keeps checking the read analysis.
pub fn skip_read_checks_here() {
    CHECK_READS.with(|c| c.set(false));
}

/// Probes a target and builds the run configuration the CLI would build.
pub fn config(target: Target, version: Option<&str>) -> Arc<RunConfig> {
    let rt = runtime();
    let timeout = Duration::from_millis(3000);
    let probed = rt
        .block_on(probe(&target, version, timeout))
        .unwrap_or_else(|e| panic!("probe of {} failed: {e}", target.display()));
    let fixture_match = mcp_conform::fixture::serves_reference_catalog(&probed.tool_names);
    let mut cfg = RunConfig::isolated(target, probed.era, probed.server, timeout, fixture_match);
    cfg.probe = Some(Bound::from(probed.facts));
    // Every expression the suites evaluate also checks the read analysis.
    cfg.eval_options = eval_options();
    Arc::new(cfg)
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"))
}

/// The mcp-conform binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-conform")
}

/// The binary with `args`, from the repository root, colours off.
fn cli_command(args: &[&str]) -> Command {
    let mut command = Command::new(bin());
    command.args(args).current_dir(root()).env("NO_COLOR", "1");
    command
}

fn output_of(mut command: Command) -> std::process::Output {
    command
        .output()
        .unwrap_or_else(|e| panic!("cannot run mcp-conform: {e}"))
}

/// Runs the binary with `args` from the repository root (NO_COLOR set).
pub fn cli(args: &[&str]) -> std::process::Output {
    output_of(cli_command(args))
}

/// [`cli`], with every expression also checking the read analysis.
pub fn run_cli(args: &[&str]) -> std::process::Output {
    let mut command = cli_command(args);
    command.env("MCP_CONFORM_VERIFY_READS", "1");
    output_of(command)
}

/// Bytes a process wrote, as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Console output without what changes from run to run: durations,
/// absolute paths and request ids.
pub fn redact_console(s: &str) -> String {
    let s = s
        .replace(bin(), "[BIN]")
        .replace(&root().display().to_string(), "[ROOT]");
    let re = regex::Regex::new(r"finished in [0-9.]+s").unwrap_or_else(|e| panic!("{e}"));
    redact_request_ids(&re.replace_all(&s, "finished in [TIME]"))
}

/// A fresh directory for one test's output, under target/test-output/.
pub fn output_dir(name: &str) -> PathBuf {
    let dir = root().join("target/test-output").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// The result of scenario `id` in a JSON report (its first era's).
pub fn scenario_result<'a>(
    report: &'a serde_json::Value,
    id: &str,
) -> Option<&'a serde_json::Value> {
    report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["id"] == id)
}

/// Checks a JSON report against schemas/report.schema.json.
pub fn assert_valid_report(path: &std::path::Path) -> serde_json::Value {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("schemas/report.schema.json")).unwrap_or_default(),
    )
    .unwrap_or_else(|e| panic!("report schema: {e}"));
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let report: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let validator =
        jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("report schema: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{} breaks the report schema:\n{}",
        path.display(),
        errors.join("\n")
    );
    report
}

/// Removes what changes from run to run: times, durations, absolute paths.
pub fn redact(text: &str) -> String {
    // The binary first: it is under the root only with the default target
    // directory, and a snapshot must not depend on CARGO_TARGET_DIR.
    let text = text
        .replace(bin(), "[BIN]")
        .replace(&root().display().to_string(), "[ROOT]");
    let rules = [
        (r#"time="[0-9.]+""#, r#"time="[T]""#),
        (r"finished in [0-9.]+s", "finished in [TIME]"),
        (r"[0-9]+ms", "[N]ms"),
    ];
    let text = rules.iter().fold(text, |acc, (re, with)| {
        regex::Regex::new(re)
            .map(|r| r.replace_all(&acc, *with).into_owned())
            .unwrap_or(acc)
    });
    redact_request_ids(&text)
}

/// A warm server's request ids keep counting across the scenarios it
/// serves, so an id depends on which scenarios ran on it before.
pub fn redact_request_ids(text: &str) -> String {
    let rules = [
        (r#""id":\s?[0-9]+"#, r#""id":[ID]"#),
        (r#"&quot;id&quot;:[0-9]+"#, r#"&quot;id&quot;:[ID]"#),
    ];
    rules.iter().fold(text.to_string(), |acc, (re, with)| {
        regex::Regex::new(re)
            .map(|r| r.replace_all(&acc, *with).into_owned())
            .unwrap_or(acc)
    })
}

/// Console output with the scenario lines sorted: they arrive in completion
/// order, so a snapshot needs them in a stable one.
pub fn stable_console(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("scenario "))
        .unwrap_or(0);
    let end = lines
        .iter()
        .rposition(|l| l.starts_with("scenario "))
        .map_or(start, |e| e + 1);
    lines[start..end].sort_unstable();
    lines.join("\n")
}

/// A loopback port nobody listens on right now.
/// A loopback port nothing listens on, for a server the test starts next.
///
/// It is drawn from below the kernel's ephemeral range (32768 and up on
/// Linux): a port the kernel hands out for `bind(0)` is also one it hands to
/// the next outgoing connection, and with hundreds of trials connecting in
/// parallel, one of them took the port between this check and the server's
/// own bind. Ports are drawn at random so parallel trials rarely draw the same
/// one; `bind(0)` is the fallback.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static DRAWS: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut state = nanos ^ (u64::from(std::process::id()) << 32);
    for _ in 0..256 {
        state = state.wrapping_add(DRAWS.fetch_add(1, Ordering::Relaxed) | 1);
        let port = 20_000 + (splitmix(state) % 12_000) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}

fn splitmix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Whether a server failed to start only because its port was taken after
/// [`free_port`] found it free: then a test draws another port and retries.
pub fn port_was_taken(error: &str) -> bool {
    error.contains("Address already in use") || error.contains("os error 98")
}

/// Runs `scenarios` against one reference server (with `--control` and
/// `faults`) over Streamable HTTP, the way `--url URL -- CMD` does: one
/// server for the run, a new HTTP session per scenario session.
pub fn run_over_http(
    scenarios: &[mcp_conform::scenario::model::Scenario],
    faults: &[&str],
    version: Option<&str>,
    jobs: usize,
) -> Vec<mcp_conform::run::ScenarioResult> {
    let timeout = Duration::from_millis(3000);
    runtime().block_on(async move {
        let target = launch_http_reference(faults, timeout).await;
        let probed = probe(&target, version, timeout)
            .await
            .unwrap_or_else(|e| panic!("probe of {} failed: {e}", target.display()));
        let fixture_match = mcp_conform::fixture::serves_reference_catalog(&probed.tool_names);
        let mut cfg = RunConfig::isolated(
            target.clone(),
            probed.era,
            probed.server,
            timeout,
            fixture_match,
        );
        cfg.probe = Some(Bound::from(probed.facts));
        cfg.eval_options = eval_options();
        let cfg = Arc::new(cfg);
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let results = mcp_conform::run::scheduler::run_all(scenarios.to_vec(), cfg, jobs, tx).await;
        target.stop().await;
        results
    })
}

/// Starts `serve-reference --control --http` with `faults` on a free port,
/// drawing another port when the one drawn was taken before the server bound
/// it.
pub async fn launch_http_reference(faults: &[&str], timeout: Duration) -> Target {
    use mcp_conform::transport::HttpSpec;
    let mut last = String::new();
    for _ in 0..5 {
        let addr = format!("127.0.0.1:{}", free_port());
        let mut args = vec![
            "serve-reference".to_string(),
            "--control".to_string(),
            "--http".to_string(),
            addr.clone(),
        ];
        for f in faults {
            args.push("--fault".into());
            args.push((*f).to_string());
        }
        let mut spec = HttpSpec::new(format!("http://{addr}/mcp"));
        spec.timeout = timeout;
        match Target::launch_http(spec, StdioSpec::new(bin(), args), Duration::from_secs(20)).await
        {
            Ok(target) => return target,
            Err(e) if port_was_taken(&e.to_string()) => last = e.to_string(),
            Err(e) => panic!("cannot launch the HTTP reference server: {e}"),
        }
    }
    panic!("cannot launch the HTTP reference server: every port drawn was taken: {last}")
}

/// Runs the whole catalog against a peer server with its expected-failures
/// baseline (`fixtures/peers/{name}.baseline.yaml`), writing
/// `{dir}/{name}.json` and `{name}.md`. `options` go before `--` (e.g.
/// `--url`, `--env`), `command` after it. Fails the test when a scenario
/// could not be evaluated or the verdicts differ from the baseline; returns
/// the JSON report.
pub fn run_peer(
    name: &str,
    dir: &std::path::Path,
    options: &[String],
    command: &[String],
) -> serde_json::Value {
    let baseline = root().join(format!("fixtures/peers/{name}.baseline.yaml"));
    let report = dir.join(format!("{name}.json"));
    let mut args: Vec<String> = vec![
        "-q".into(),
        "-j".into(),
        "2".into(),
        "--baseline".into(),
        baseline.display().to_string(),
        "--report-json".into(),
        report.display().to_string(),
        "--report-markdown".into(),
        dir.join(format!("{name}.md")).display().to_string(),
    ];
    args.extend_from_slice(options);
    args.push("--".into());
    args.extend_from_slice(command);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_cli(&argv);
    let report = assert_valid_report(&report);
    let errors: Vec<String> = report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["outcome"] == "error")
        .map(|s| format!("{}: {}", s["id"], s["message"]))
        .collect();
    assert!(
        errors.is_empty(),
        "{name}: scenarios that could not be evaluated:\n{}",
        errors.join("\n")
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{name}: the verdicts differ from {}\n{}\n{}",
        baseline.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    report
}

/// A fresh, empty directory for one test's files (under cargo's target tmp dir).
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// Writes an executable shell script (a stand-in server for a test).
#[cfg(unix)]
pub fn write_script(path: &std::path::Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, body).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
