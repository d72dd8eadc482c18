//! Runs one client scenario: starts the scenario server (the reference
//! server, `serve-reference`, set up as the scenario says), puts the watch
//! relay between it and the client, starts the client command with the
//! official suite's convention, waits for it, and hands the conversation to
//! `grade`.
//!
//! Over HTTP the server is a process listening on a loopback port, the
//! relay runs in this process in front of it, and the client gets the
//! relay's URL as its last argument. Over stdio the client gets a command
//! line to spawn (`MCP_CONFORM_SERVER_COMMAND`, a JSON array): `mcp-conform
//! watch --record FILE -- mcp-conform serve-reference …`, whose record is
//! read back when the client is done.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

use crate::run::outcome::ScenarioResult;
use crate::transport::process_group::{self, Stop};
use crate::watch::rules::Rule;
use crate::watch::{record, relay_http, Sink};

use super::grade::{self, RunFacts};
use super::scenario::{self, ClientScenario};

/// The environment variable that names the scenario (the official suite's).
pub const ENV_SCENARIO: &str = "MCP_CONFORMANCE_SCENARIO";
/// The environment variable that holds the context JSON (the official suite's).
pub const ENV_CONTEXT: &str = "MCP_CONFORMANCE_CONTEXT";
/// Over stdio: the server command line the client spawns, as a JSON array.
pub const ENV_SERVER_COMMAND: &str = "MCP_CONFORM_SERVER_COMMAND";

/// How long the scenario server may take to say where it listens.
const SERVER_START: Duration = Duration::from_secs(10);
/// How long what the client left behind may take to end, asked or not.
const GROUP_GRACE: Duration = Duration::from_secs(3);
/// How much of the client's output a result keeps.
const OUTPUT_TAIL: usize = 4096;

/// What one run needs.
pub struct RunSpec<'a> {
    pub scenario: &'a ClientScenario,
    pub transport: &'a str,
    /// The era asked of the driver (context `protocolVersion`), if any.
    pub version: Option<&'a str>,
    /// The client command and its arguments.
    pub client: &'a [String],
    /// The mcp-conform binary that serves and relays.
    pub exe: &'a Path,
    pub timeout: Duration,
    /// A directory of this run's own for records, catalogs and logs.
    pub dir: &'a Path,
    pub rules: &'a [Rule],
}

/// The graded run, and the clientInfo the client sent (if any).
pub struct RunOutput {
    pub result: ScenarioResult,
    pub client_info: Value,
    /// Why the client command could not be started at all (it is not there,
    /// or not executable): no scenario can run it, so a run stops here.
    pub unstartable: Option<String>,
}

#[derive(Debug, thiserror::Error)]
enum SetupError {
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
    #[error("cannot start the scenario server ({command}): {reason}")]
    Server { command: String, reason: String },
    #[error("the relay: {0}")]
    Relay(#[from] relay_http::HttpError),
    #[error("cannot start the client `{command}`: {reason}")]
    Client { command: String, reason: String },
    #[error("the stdio record {0}")]
    Record(#[from] record::RecordError),
}

/// Runs the scenario once; every failure of the harness's own side becomes
/// a result that says what went wrong.
pub async fn run(spec: &RunSpec<'_>) -> RunOutput {
    let started = Instant::now();
    let (mut sink, mut facts) = match converse(spec).await {
        Ok(done) => done,
        Err(e) => {
            let unstartable = matches!(e, SetupError::Client { .. }).then(|| e.to_string());
            let facts = RunFacts {
                transport: spec.transport.to_string(),
                asked: spec.version.map(str::to_string),
                setup_error: Some(e.to_string()),
                ..RunFacts::default()
            };
            let empty = Sink::new(Vec::new(), false, Box::new(std::io::sink()));
            let result = grade::grade(spec.scenario, &[], &[], &[], &empty.checker.conv, &facts);
            return RunOutput {
                result,
                client_info: Value::Null,
                unstartable,
            };
        }
    };
    facts.duration_ms = started.elapsed().as_millis() as u64;
    // A client stopped for running past its time did not end its
    // conversation: what it left unanswered proves nothing.
    if !facts.timed_out {
        sink.checker.finish();
    }
    let checker = &sink.checker;
    RunOutput {
        result: grade::grade(
            spec.scenario,
            &checker.rules,
            &checker.violations,
            &checker.exercised(),
            &checker.conv,
            &facts,
        ),
        client_info: client_info(&checker.conv.msgs),
        unstartable: None,
    }
}

async fn converse(spec: &RunSpec<'_>) -> Result<(Sink, RunFacts), SetupError> {
    let server_args = server_args(spec)?;
    match spec.transport {
        "http" => over_http(spec, &server_args).await,
        _ => over_stdio(spec, &server_args).await,
    }
}

/// `serve-reference` and the options the scenario's setup names.
fn server_args(spec: &RunSpec<'_>) -> Result<Vec<String>, SetupError> {
    let mut args = vec!["serve-reference".to_string()];
    if let Some(name) = &spec.scenario.server.catalog {
        let path = spec.dir.join(format!("{name}.json"));
        let text = scenario::catalog(name).unwrap_or_default();
        std::fs::write(&path, text).map_err(|e| SetupError::Write {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        args.extend(["--catalog".to_string(), path.display().to_string()]);
    }
    for b in &spec.scenario.server.behaviours {
        args.extend(["--fault".to_string(), b.clone()]);
    }
    for o in &spec.scenario.server.options {
        args.push(format!("--{o}"));
    }
    Ok(args)
}

fn quiet_sink(rules: &[Rule], http: bool) -> Sink {
    Sink::new(rules.to_vec(), http, Box::new(std::io::sink())).quiet(true)
}

async fn over_http(
    spec: &RunSpec<'_>,
    server_args: &[String],
) -> Result<(Sink, RunFacts), SetupError> {
    let (mut server, upstream) = start_http_server(spec.exe, server_args).await?;
    let listener = relay_http::bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let local = listener.local_addr().map_err(|e| {
        SetupError::Relay(relay_http::HttpError::Listen {
            addr: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
            reason: e.to_string(),
        })
    })?;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let sink = quiet_sink(spec.rules, true);
    let upstream_url = upstream.clone();
    let relay = tokio::spawn(async move {
        let stop = async move {
            let _ = stop_rx.await;
            "the client finished"
        };
        relay_http::serve_until(listener, &upstream_url, sink, stop).await
    });
    let url = format!("http://{local}/mcp");
    let facts = run_client(spec, Some(&url), &[]).await;
    let _ = stop_tx.send(());
    stop(&mut server).await;
    let watched = relay.await.map_err(|e| SetupError::Server {
        command: "the relay".into(),
        reason: e.to_string(),
    })??;
    Ok((watched.sink, facts?))
}

async fn over_stdio(
    spec: &RunSpec<'_>,
    server_args: &[String],
) -> Result<(Sink, RunFacts), SetupError> {
    let record_path = spec.dir.join("record.jsonl");
    // The relay writes its report last, once the record is complete.
    let done_path = spec.dir.join("relay-report.json");
    let exe = spec.exe.display().to_string();
    let mut command = vec![
        exe.clone(),
        "watch".to_string(),
        "--quiet".to_string(),
        "--record".to_string(),
        record_path.display().to_string(),
        "--report-json".to_string(),
        done_path.display().to_string(),
        "--".to_string(),
        exe,
    ];
    command.extend(server_args.iter().cloned());
    let env = [(ENV_SERVER_COMMAND, json!(command).to_string())];
    let facts = run_client(spec, None, &env).await?;
    // A client that spawned the relay in a process group of its own may
    // exit before the relay has written the last lines of the record.
    let deadline = Instant::now() + GROUP_GRACE;
    while record_path.exists() && !done_path.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let msgs = if record_path.exists() {
        record::read(&record_path)?
    } else {
        Vec::new()
    };
    let mut sink = quiet_sink(spec.rules, false);
    for m in msgs {
        sink.feed(m);
    }
    Ok((sink, facts))
}

/// Starts `serve-reference --http 127.0.0.1:0` and reads the URL it prints.
async fn start_http_server(
    exe: &Path,
    server_args: &[String],
) -> Result<(Child, String), SetupError> {
    let display = format!(
        "{} {} --http 127.0.0.1:0",
        exe.display(),
        server_args.join(" ")
    );
    let err = |reason: String| SetupError::Server {
        command: display.clone(),
        reason,
    };
    let mut cmd = Command::new(exe);
    cmd.args(server_args)
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| err(e.to_string()))?;
    let stderr = child.stderr.take().ok_or_else(|| err("no stderr".into()))?;
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let found = tokio::time::timeout(SERVER_START, async {
        let mut said = Vec::new();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(url) = line.strip_prefix("listening on ") {
                return Ok(url.trim().to_string());
            }
            said.push(line);
        }
        Err(said.join(" / "))
    })
    .await;
    match found {
        Ok(Ok(url)) => {
            // Keep draining its stderr so that the server never blocks on it.
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            Ok((child, url))
        }
        Ok(Err(said)) => Err(err(format!("it exited without listening: {said}"))),
        Err(_) => Err(err(format!(
            "it did not say where it listens within {} s",
            SERVER_START.as_secs()
        ))),
    }
}

/// Asks a server to stop, then makes sure.
async fn stop(child: &mut Child) {
    #[cfg(unix)]
    if let Some(pid) = child.id() {
        // SAFETY: kill(2) on the pid of a child this process started.
        unsafe {
            libc::kill(pid as i32, libc::SIGTERM);
        }
    }
    if tokio::time::timeout(Duration::from_secs(2), child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
}

/// Starts the client with the convention, waits for it (bounded), and
/// stops whatever it left running.
async fn run_client(
    spec: &RunSpec<'_>,
    url: Option<&str>,
    env: &[(&str, String)],
) -> Result<RunFacts, SetupError> {
    let (program, args) = spec
        .client
        .split_first()
        .ok_or_else(|| SetupError::Client {
            command: String::new(),
            reason: "no client command".into(),
        })?;
    let log_path = spec.dir.join("client-output.log");
    let log = std::fs::File::create(&log_path).map_err(|e| SetupError::Write {
        path: log_path.display().to_string(),
        reason: e.to_string(),
    })?;
    let log_err = log.try_clone().map_err(|e| SetupError::Write {
        path: log_path.display().to_string(),
        reason: e.to_string(),
    })?;
    let context = spec.scenario.context(spec.transport, spec.version);
    let mut cmd = Command::new(program);
    cmd.args(args)
        .args(url)
        .env(ENV_SCENARIO, &spec.scenario.name)
        .env(ENV_CONTEXT, context.to_string())
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    process_group::isolate(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| SetupError::Client {
        command: spec.client.join(" "),
        reason: crate::transport::stdio::spawn_reason(program, &e),
    })?;
    let pgid = child.id().map(|p| p as i32);
    let waited = tokio::time::timeout(spec.timeout, child.wait()).await;
    let (client_exit, client_ok, timed_out) = match waited {
        Ok(Ok(status)) => (
            process_group::describe_exit(&status),
            status.success(),
            false,
        ),
        Ok(Err(e)) => (format!("could not be waited for: {e}"), false, false),
        Err(_) => (
            format!(
                "was still running after {} s and was stopped",
                spec.timeout.as_secs_f64()
            ),
            false,
            true,
        ),
    };
    if let Some(pgid) = pgid {
        end_group(pgid, !timed_out).await;
    }
    let _ = child.kill().await;
    Ok(RunFacts {
        transport: spec.transport.to_string(),
        asked: spec.version.map(str::to_string),
        client_exit,
        client_ok,
        timed_out,
        client_output: tail(&log_path),
        setup_error: None,
        duration_ms: 0,
    })
}

/// Stops what the client left behind in its process group (a stdio
/// server it did not close, a helper process). A client that ended on its
/// own gets a moment first: the stdio relay it started ends by itself once
/// the client closed its stdin, after writing the last of the record.
/// Then asked, then forced.
async fn end_group(pgid: i32, client_ended: bool) {
    if client_ended && ended_within(pgid, GROUP_GRACE).await {
        return;
    }
    process_group::signal(pgid, Stop::Terminate);
    if ended_within(pgid, GROUP_GRACE).await {
        return;
    }
    process_group::signal(pgid, Stop::Kill);
}

/// Whether the group is gone within `wait`.
async fn ended_within(pgid: i32, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    while Instant::now() < deadline {
        if !group_alive(pgid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    !group_alive(pgid)
}

#[cfg(unix)]
fn group_alive(pgid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks that the group exists.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

#[cfg(not(unix))]
fn group_alive(_pgid: i32) -> bool {
    true
}

fn tail(path: &PathBuf) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let start = text.len().saturating_sub(OUTPUT_TAIL);
    String::from_utf8_lossy(&text[start..]).into_owned()
}

/// The clientInfo the client named: in initialize, or in a 2026-07-28
/// request's `_meta`.
fn client_info(msgs: &[crate::watch::trace::Msg]) -> Value {
    msgs.iter()
        .filter(|m| m.from == crate::watch::trace::Side::Client)
        .find_map(|m| {
            m.params()
                .and_then(|p| p.get("clientInfo"))
                .or_else(|| m.meta(crate::protocol::META_CLIENT_INFO))
                .cloned()
        })
        .unwrap_or(Value::Null)
}
