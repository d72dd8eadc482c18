//! `mcp-conform client` and its own driver `mcp-conform client-driver`:
//! arguments, the loop over scenarios, transports and eras, and the glue to
//! the console summary, the report files and the exit code.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;

use mcp_conform::client::runner::{self, RunSpec};
use mcp_conform::client::scenario::{self, ClientScenario};
use mcp_conform::report::console::{ConsoleOptions, ConsoleReporter};
use mcp_conform::report::data::{ReportData, FORMAT};
use mcp_conform::run::events::{Event, RunInfo, Summary};
use mcp_conform::run::outcome::ScenarioResult;
use mcp_conform::run::RunPolicy;
use mcp_conform::watch::rules;
use mcp_conform::watch::trace::Side;

use super::write_file;
use super::{EXIT_OK, EXIT_USAGE};

#[derive(Debug, Args)]
#[command(
    long_about = "Grades an MCP client: for each client scenario, serves a scenario server \
                  (the reference server, set up by the scenario), starts the client command, \
                  watches the conversation and checks the client's side against the trace rules.\n\n\
                  The client command is started the way the official MCP conformance suite starts \
                  it: over HTTP the server URL is appended as its last argument; over stdio the \
                  server command line to spawn is in MCP_CONFORM_SERVER_COMMAND (a JSON array). \
                  The scenario name is in MCP_CONFORMANCE_SCENARIO and its context (the actions \
                  to perform) in MCP_CONFORMANCE_CONTEXT. See docs/client.md.\n\n\
                  Exit codes: 0 no client MUST broken, 1 a MUST broken or a scenario not \
                  exercised, 2 usage error, 3 nothing tested (the client command could not be \
                  started, or every scenario was skipped)."
)]
pub struct ClientArgs {
    /// List the client scenarios (name, eras, transports, title) and exit.
    #[arg(long)]
    pub list: bool,
    /// Only scenarios whose name contains PATTERN (repeatable).
    #[arg(short = 'k', long = "filter", value_name = "PATTERN")]
    pub filters: Vec<String>,
    /// Only the scenarios of these files: official, base, discovery, mcp-2026 (repeatable).
    #[arg(short = 'p', long = "profile", value_name = "NAME")]
    pub profiles: Vec<String>,
    /// Transports to serve the scenarios over (repeatable; default both).
    #[arg(long = "transport", value_name = "http|stdio", value_parser = ["http", "stdio"])]
    pub transports: Vec<String>,
    /// Ask the driver for this protocol version (context `protocolVersion`; repeatable: one
    /// run per version). Default: the client chooses, and a scenario about another era is skipped.
    #[arg(long = "protocol-version", value_name = "VERSION")]
    pub versions: Vec<String>,
    /// How long one scenario's client may run before it is stopped.
    #[arg(long, value_name = "N", default_value_t = 30_000)]
    pub timeout_ms: u64,
    /// Scenario runs at once, each with a client, a scenario server and a
    /// relay of its own (default: 2 per core, at most 16); with 1, one at a
    /// time, for a client that cannot run beside itself (a fixed port, a
    /// shared state file).
    #[arg(short = 'j', long, value_name = "N", value_parser = super::positive_usize)]
    pub jobs: Option<usize>,
    /// Warnings (SHOULD) fail the run too.
    #[arg(long)]
    pub strict: bool,
    /// No per-scenario lines, only problems and the summary.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub reports: super::run::ReportArgs,
    /// The client command and its arguments (after `--`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CLIENT_CMD"
    )]
    pub command: Vec<String>,
}

/// `mcp-conform client-driver`: mcp-conform's own MCP client, following the
/// driver convention (a testing aid: with --client-fault it breaks a rule).
#[derive(Debug, Args)]
pub struct DriverArgs {
    /// Break one client rule on purpose (an unknown NAME lists them).
    #[arg(long, value_name = "NAME", value_parser = super::parse_client_fault)]
    pub client_fault: Option<mcp_conform::session::client_fault::ClientFault>,
    /// The protocol version to speak (default: the context's, else the newest stateful one).
    #[arg(long, value_name = "VERSION")]
    pub protocol_version: Option<String>,
    /// The server URL (HTTP); without it, MCP_CONFORM_SERVER_COMMAND is spawned.
    pub url: Option<String>,
}

pub fn main(args: ClientArgs) -> Result<u8> {
    let all = match scenario::builtin() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    let chosen = select(&all, &args);
    if args.list {
        for s in &chosen {
            println!(
                "{:<32} {:<34} {:<11} {}",
                s.name,
                s.eras.join(","),
                s.transports.join(","),
                s.title
            );
        }
        return Ok(EXIT_OK);
    }
    if chosen.is_empty() {
        eprintln!(
            "error: no client scenario matches the -k / -p given (see `mcp-conform client --list`)"
        );
        return Ok(EXIT_USAGE);
    }
    if args.command.is_empty() {
        eprintln!("error: client needs the client command after `--` (e.g. `mcp-conform client -- node my-driver.js`)");
        return Ok(EXIT_USAGE);
    }
    let rules: Vec<rules::Rule> = rules::builtin()
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .into_iter()
        .filter(|r| r.side == Side::Client)
        .collect();
    let exe = std::env::current_exe().context("cannot find the mcp-conform binary")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let started_at = chrono::Utc::now().to_rfc3339();
    let began = Instant::now();
    let work = std::env::temp_dir().join(format!("mcp-conform-client-{}", std::process::id()));
    let mut console = console(&args);
    let info = run_info(&args, &chosen, &started_at, serde_json::Value::Null);
    console.handle(&Event::Started(Box::new(info)));
    let runs = plan(&chosen, &args);
    let jobs = args.jobs.unwrap_or_else(default_jobs);
    let ran = runtime.block_on(run_each(
        &runs,
        &args,
        &exe,
        &rules,
        &work,
        jobs,
        &mut console,
    ))?;
    let _ = std::fs::remove_dir_all(&work);
    runtime.shutdown_timeout(Duration::from_millis(100));
    let unstartable = ran.unstartable.clone();
    let data = report(&args, &chosen, ran, &started_at, began);
    if let Some(why) = &unstartable {
        print_not_started(why, &args.command);
    } else {
        console.handle(&Event::Done(data.summary.clone()));
        eprintln!(
            "mcp-conform client: graded {}",
            graded(&data.run.server["clientInfo"], &args.command)
        );
    }
    for (path, render) in super::run::report_files(&args.reports.paths()) {
        write_file(&path, &render(&data))?;
    }
    Ok(data
        .summary
        .verdict
        .as_ref()
        .map_or(super::EXIT_FAILURES, |v| v.exit_code()))
}

/// Client runs at once by default. A run waits most of its time (on the
/// client, on process starts), and one that starts an interpreter costs
/// most of a core while it starts: two per core keeps the cores busy
/// without queueing every start at once.
fn default_jobs() -> usize {
    (mcp_conform::run::cores() * 2).clamp(2, 16)
}

/// One block for a client command that could not be started: what the
/// system said, and what to try.
fn print_not_started(why: &str, command: &[String]) {
    let hint = format!(
        "hint: check that `{}` runs by hand (a path to an executable, or a program on PATH, \
         then its arguments); over HTTP mcp-conform appends the server URL as its last argument",
        command.first().map_or("", String::as_str)
    );
    super::run::print_nothing_tested("the client could not be started", why, &hint);
}

/// What [`run_each`] gives back.
struct Ran {
    /// In plan order.
    results: Vec<ScenarioResult>,
    /// What the client first sent as its clientInfo.
    client_info: serde_json::Value,
    /// Why the client command could not be started, if so.
    unstartable: Option<String>,
}

/// Runs every planned (scenario, transport, version), `jobs` at a time,
/// each in a directory of its own under `work`; results come back, and
/// reach the console, in plan order. Returns them with the clientInfo the
/// client first sent. A client command that cannot be started ends the
/// loop at the first result that says so (every other run would say the
/// same); the runs under way are dropped, their servers killed on drop.
async fn run_each(
    runs: &[(&ClientScenario, String, Option<String>)],
    args: &ClientArgs,
    exe: &std::path::Path,
    rules: &[rules::Rule],
    work: &std::path::Path,
    jobs: usize,
    console: &mut ConsoleReporter<std::io::Stderr>,
) -> Result<Ran> {
    use futures::StreamExt;
    let mut outputs = futures::stream::iter(runs.iter().enumerate())
        .map(|(i, (s, transport, version))| async move {
            let dir = work.join(i.to_string());
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            let spec = RunSpec {
                scenario: s,
                transport,
                version: version.as_deref(),
                client: &args.command,
                exe,
                timeout: Duration::from_millis(args.timeout_ms),
                dir: &dir,
                rules,
            };
            Ok::<_, anyhow::Error>(runner::run(&spec).await)
        })
        .buffered(jobs.max(1));
    let mut results = Vec::new();
    let mut client_info = serde_json::Value::Null;
    while let Some(out) = outputs.next().await {
        let out = out?;
        if out.unstartable.is_some() {
            results.push(out.result);
            return Ok(Ran {
                results,
                client_info,
                unstartable: out.unstartable,
            });
        }
        if client_info.is_null() {
            client_info = out.client_info;
        }
        console.handle(&Event::Finished(Box::new(out.result.clone())));
        results.push(out.result);
    }
    Ok(Ran {
        results,
        client_info,
        unstartable: None,
    })
}

/// The client as the summary names it: its clientInfo and the command.
fn graded(info: &serde_json::Value, command: &[String]) -> String {
    let name = info.get("name").and_then(|v| v.as_str());
    let version = info.get("version").and_then(|v| v.as_str());
    match (name, version) {
        (Some(n), Some(v)) => format!("{n} {v} (`{}`)", command.join(" ")),
        (Some(n), None) => format!("{n} (`{}`)", command.join(" ")),
        _ => format!("`{}` (it sent no clientInfo)", command.join(" ")),
    }
}

fn select<'a>(all: &'a [ClientScenario], args: &ClientArgs) -> Vec<&'a ClientScenario> {
    all.iter()
        .filter(|s| {
            args.filters.is_empty() || args.filters.iter().any(|f| s.name.contains(f.as_str()))
        })
        .filter(|s| {
            args.profiles.is_empty()
                || args
                    .profiles
                    .iter()
                    .any(|p| s.origin.starts_with(&format!("client-scenarios/{p}.yaml")))
        })
        .collect()
}

/// Every run: each scenario over each transport it and the user allow, once
/// per asked version it applies in (or once, the client choosing).
fn plan<'a>(
    chosen: &[&'a ClientScenario],
    args: &ClientArgs,
) -> Vec<(&'a ClientScenario, String, Option<String>)> {
    let mut runs = Vec::new();
    for s in chosen {
        for t in &s.transports {
            if !args.transports.is_empty() && !args.transports.contains(t) {
                continue;
            }
            if args.versions.is_empty() {
                runs.push((*s, t.clone(), None));
            }
            for v in args.versions.iter().filter(|v| s.eras.contains(v)) {
                runs.push((*s, t.clone(), Some(v.clone())));
            }
        }
    }
    runs
}

fn console(args: &ClientArgs) -> ConsoleReporter<std::io::Stderr> {
    let stderr = std::io::stderr();
    let color = stderr.is_terminal() && std::env::var_os("NO_COLOR").is_none();
    ConsoleReporter::new(
        stderr,
        ConsoleOptions {
            color,
            quiet: args.quiet,
            ..ConsoleOptions::default()
        },
    )
}

fn run_info(
    args: &ClientArgs,
    chosen: &[&ClientScenario],
    started_at: &str,
    client: serde_json::Value,
) -> RunInfo {
    let transports = if args.transports.is_empty() {
        "http, stdio".to_string()
    } else {
        args.transports.join(", ")
    };
    RunInfo {
        target: args.command.join(" "),
        transport: format!("{transports} (client)"),
        era: args.versions.first().cloned().unwrap_or_default(),
        eras: args.versions.clone(),
        probes: Default::default(),
        // The party graded, under the key every report reads a name from.
        server: if client.is_null() {
            // Not known until the client speaks: the console says "the client".
            serde_json::json!({"clientInfo": null})
        } else {
            serde_json::json!({"serverInfo": client.clone(), "clientInfo": client})
        },
        harness_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: started_at.to_string(),
        scenarios: chosen.len(),
        fixture_match: false,
        seed: 0,
        tool_calls: None,
        server_starts: None,
        jobs_narrowed: None,
    }
}

fn report(
    args: &ClientArgs,
    chosen: &[&ClientScenario],
    ran: Ran,
    started_at: &str,
    began: Instant,
) -> ReportData {
    let policy = RunPolicy {
        strict: args.strict,
        ..RunPolicy::default()
    };
    let mut results = ran.results;
    for r in &mut results {
        policy.apply(r);
    }
    let mut summary = Summary::from_results(&results, began.elapsed().as_millis() as u64);
    summary.verdict = Some(verdict(&policy, &results, ran.unstartable.as_deref()));
    let mut run = run_info(args, chosen, started_at, ran.client_info);
    let mut eras: Vec<String> = results
        .iter()
        .map(|r| r.era.clone())
        .filter(|e| !e.is_empty())
        .collect();
    eras.sort();
    eras.dedup();
    run.era = eras.last().cloned().unwrap_or_default();
    run.eras = eras;
    ReportData {
        format: FORMAT.to_string(),
        run,
        summary,
        scenarios: results,
        strict: args.strict,
    }
}

/// The run's verdict; a run whose client could not be started, or in
/// which every scenario was skipped, tested nothing, and must not gate
/// green (exit 3).
fn verdict(
    policy: &RunPolicy,
    results: &[ScenarioResult],
    unstartable: Option<&str>,
) -> mcp_conform::run::policy::Verdict {
    if let Some(why) = unstartable {
        return mcp_conform::run::policy::Verdict::NotRun {
            reason: format!("the client could not be started ({why})"),
        };
    }
    let graded = results
        .iter()
        .any(|r| r.outcome != mcp_conform::run::outcome::Outcome::Skip);
    if graded {
        return policy.verdict(results);
    }
    let why = results
        .first()
        .map_or("no client scenario was selected".to_string(), |r| {
            r.message.clone()
        });
    mcp_conform::run::policy::Verdict::NotRun {
        reason: format!("no client scenario applied to this client, so nothing was tested ({why})"),
    }
}

/// `mcp-conform client-driver`: exit 0 when every action went through, 1
/// when one failed, 3 when it could not connect.
pub fn driver(args: DriverArgs) -> Result<u8> {
    let job = match mcp_conform::client::driver::Job::from_env(args.url.clone()) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let done = runtime.block_on(mcp_conform::client::driver::drive(
        &job,
        args.protocol_version.as_deref(),
        args.client_fault,
    ));
    match done {
        Ok(failed) if failed.is_empty() => Ok(EXIT_OK),
        Ok(failed) => {
            for f in failed {
                eprintln!("client-driver: action failed: {f}");
            }
            Ok(super::EXIT_FAILURES)
        }
        Err(e) => {
            eprintln!("client-driver: {e}");
            Ok(super::EXIT_UNREACHABLE)
        }
    }
}
