//! The main job: probe the target, run the selected scenarios, report, and
//! turn the verdicts (and the baseline) into an exit code.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{select, RunArgs, EXIT_FAILURES, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE};
use mcp_conform::baseline::{self, Baseline};
use mcp_conform::report::console::{ConsoleOptions, ConsoleReporter};
use mcp_conform::report::data::{Collector, ReportData};
use mcp_conform::report::{html, json, junit, markdown, Renderer};
use mcp_conform::run::catalog::{run_catalog, RunOptions};
use mcp_conform::run::events::{Event, Summary};
use mcp_conform::run::{Outcome, ScenarioResult, Target};
use mcp_conform::scenario::model::Scenario;
use mcp_conform::session::era::KNOWN_VERSIONS;
use mcp_conform::transport::stdio::kill_all_groups;
use mcp_conform::transport::{HttpSpec, StdioSpec};

/// The built-in reference server: this binary, re-executed.
pub fn default_command() -> Result<Vec<String>> {
    let exe = std::env::current_exe()
        .context("cannot find the mcp-conform executable to start the reference server")?;
    Ok(vec![
        exe.display().to_string(),
        "serve-reference".into(),
        "--control".into(),
    ])
}

/// A stdio target from a command line (the reference server when empty).
pub fn stdio_target(
    command: &[String],
    env: &[(String, String)],
    cwd: Option<&Path>,
) -> Result<Target> {
    let command = if command.is_empty() {
        default_command()?
    } else {
        command.to_vec()
    };
    let (program, rest) = command.split_first().context("empty server command")?;
    let mut spec = StdioSpec::new(program.clone(), rest.to_vec());
    spec.env = env.to_vec();
    spec.cwd = cwd.map(Path::to_path_buf);
    Ok(Target::Stdio(spec))
}

/// `auto` → None; a known version → Some; anything else is a usage error.
pub fn protocol_version(text: &str) -> Result<Option<String>> {
    match text {
        "auto" => Ok(None),
        v if KNOWN_VERSIONS.contains(&v) => Ok(Some(v.to_string())),
        v => bail!(
            "unknown protocol version {v:?} (known: {}, or auto)",
            KNOWN_VERSIONS.join(", ")
        ),
    }
}

/// `--shard K/N`: the K-th of N deterministic slices (round robin over sorted ids).
pub fn shard(mut scenarios: Vec<Scenario>, spec: &str) -> Result<Vec<Scenario>> {
    let (k, n) = spec
        .split_once('/')
        .and_then(|(k, n)| {
            Some((
                k.trim().parse::<usize>().ok()?,
                n.trim().parse::<usize>().ok()?,
            ))
        })
        .filter(|(k, n)| *n >= 1 && (1..=*n).contains(k))
        .with_context(|| format!("--shard {spec:?}: expected K/N with 1 <= K <= N, e.g. 2/4"))?;
    scenarios.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(scenarios
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % n == k - 1)
        .map(|(_, s)| s)
        .collect())
}

fn install_user_schema(path: &Path) -> Result<()> {
    let text = std::fs::read_to_string(path).context("cannot read the file")?;
    let root: serde_json::Value = serde_json::from_str(&text).context("the file is not JSON")?;
    if root.get("$defs").is_none() && root.get("definitions").is_none() {
        bail!("the schema has neither $defs nor definitions (expected an MCP schema.json)");
    }
    mcp_conform::schema::set_user_schema(&path.display().to_string(), root);
    Ok(())
}

fn load_baseline(path: &Path) -> Result<Baseline, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    baseline::parse(&path.display().to_string(), &text).map_err(|e| e.to_string())
}

pub fn main_job(args: RunArgs) -> Result<u8> {
    let scenarios = match select::load(&args) {
        Ok(s) => s,
        Err(errors) => {
            eprintln!("{errors}");
            eprintln!(
                "error: {} problem(s) in scenario files; nothing was run",
                errors.0.len()
            );
            return Ok(EXIT_USAGE);
        }
    };
    let mut selected = select::select(scenarios, &args);
    if let Some(spec) = &args.shard {
        selected = match shard(selected, spec) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e:#}");
                return Ok(EXIT_USAGE);
            }
        };
    }
    if args.list {
        select::print_list(&selected);
        return Ok(EXIT_OK);
    }
    let base = match args.baseline.as_deref().map(load_baseline).transpose() {
        Ok(b) => b.unwrap_or_default(),
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    if let Some(path) = &args.mcp_schema {
        if let Err(e) = install_user_schema(path) {
            eprintln!("error: --mcp-schema {}: {e:#}", path.display());
            return Ok(EXIT_USAGE);
        }
    }
    let requested = match protocol_version(&args.protocol_version) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(EXIT_USAGE);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let target = match build_target(&args).await {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(EXIT_UNREACHABLE);
            }
        };
        let code = tokio::select! {
            code = run_and_report(&args, target.clone(), requested, selected, &base) => code,
            _ = tokio::signal::ctrl_c() => {
                kill_all_groups();
                eprintln!("\ninterrupted: every server process was stopped");
                Ok(130)
            }
        };
        target.stop().await;
        code
    })
}

/// stdio (a command, or the reference server) or HTTP (`--url`, maybe launching the command).
async fn build_target(args: &RunArgs) -> Result<Target> {
    let Some(url) = &args.url else {
        return stdio_target(&args.command, &args.env, args.cwd.as_deref());
    };
    let mut spec = HttpSpec::new(url.clone());
    spec.headers = args.headers.clone();
    spec.timeout = Duration::from_millis(args.timeout_ms);
    if args.command.is_empty() {
        return Ok(Target::Http {
            spec,
            process: None,
            command: None,
        });
    }
    let Target::Stdio(command) = stdio_target(&args.command, &args.env, args.cwd.as_deref())?
    else {
        bail!("internal: a command line must give a stdio target");
    };
    Ok(Target::launch_http(
        spec,
        command,
        Duration::from_millis(args.startup_timeout_ms),
    )
    .await?)
}

fn console(args: &RunArgs) -> ConsoleReporter<std::io::Stdout> {
    let stdout = std::io::stdout();
    let color = stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none();
    ConsoleReporter::new(
        stdout,
        ConsoleOptions {
            color,
            verbose: args.verbose,
            quiet: args.quiet,
            progress: std::io::stderr().is_terminal() && !args.quiet,
        },
    )
}

async fn run_and_report(
    args: &RunArgs,
    target: Target,
    requested: Option<String>,
    scenarios: Vec<Scenario>,
    base: &Baseline,
) -> Result<u8> {
    let opts = RunOptions {
        protocol_version: requested,
        timeout: Duration::from_millis(args.timeout_ms),
        jobs: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get())),
    };
    let order: Vec<String> = scenarios.iter().map(|s| s.id.clone()).collect();
    let mut console = console(args);
    let mut collector = Collector::default();
    // What the summary needs of each result (the results themselves are in the collector).
    let mut marked: Vec<ScenarioResult> = Vec::new();
    let outcome = run_catalog(target, scenarios, &opts, |event| {
        let event = match event {
            Event::Finished(mut r) => {
                r.expected_failure = baseline::is_failing(&r, args.strict) && base.expects(&r);
                if !args.full_transcripts && matches!(r.outcome, Outcome::Pass | Outcome::Skip) {
                    r.transcript_dropped += r.transcript.len();
                    r.transcript.clear();
                }
                marked.push(ScenarioResult {
                    transcript: Vec::new(),
                    findings: Vec::new(),
                    stderr_tail: String::new(),
                    ..(*r).clone()
                });
                Event::Finished(r)
            }
            Event::Done(s) => {
                let mut summary = Summary::from_results(&marked, s.duration_ms);
                summary.duration_ms = s.duration_ms;
                Event::Done(summary)
            }
            other => other,
        };
        console.handle(&event);
        collector.handle(&event);
    })
    .await;
    let Some(data) = collector.finish(&order, args.strict) else {
        bail!("the run ended without a summary");
    };
    if let Err(e) = write_reports(args, &data) {
        eprintln!("error: {e:#}");
        return Ok(EXIT_USAGE);
    }
    let results = match outcome {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(EXIT_UNREACHABLE);
        }
    };
    if let Some(path) = &args.write_baseline {
        std::fs::write(path, baseline::write(&results, args.strict))
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote baseline {}", path.display());
    }
    let stale = base.stale(&data.scenarios, args.strict);
    for entry in &stale {
        println!(
            "stale baseline entry {entry} ({}): the scenario no longer fails; remove it",
            entry.position
        );
    }
    let unexpected = data
        .scenarios
        .iter()
        .filter(|r| baseline::is_failing(r, args.strict) && !r.expected_failure)
        .count();
    Ok(if unexpected > 0 || !stale.is_empty() {
        EXIT_FAILURES
    } else {
        EXIT_OK
    })
}

/// The file reports asked for on the command line.
pub fn report_files(args: &RunArgs) -> Vec<(PathBuf, Renderer)> {
    let mut files: Vec<(PathBuf, Renderer)> = Vec::new();
    if let Some(dir) = &args.report_dir {
        files.push((dir.join("report.json"), json::render));
        files.push((dir.join("junit.xml"), junit::render));
        files.push((dir.join("report.md"), markdown::render));
        files.push((dir.join("report.html"), html::render));
    }
    let single: [(&Option<PathBuf>, Renderer); 4] = [
        (&args.report_json, json::render),
        (&args.report_junit, junit::render),
        (&args.report_markdown, markdown::render),
        (&args.report_html, html::render),
    ];
    for (path, render) in single {
        if let Some(p) = path {
            files.push((p.clone(), render));
        }
    }
    files
}

/// Writes `data` to every report file asked for.
pub fn write_reports(args: &RunArgs, data: &ReportData) -> Result<()> {
    for (path, render) in report_files(args) {
        write_file(&path, &render(data))?;
    }
    Ok(())
}

pub fn write_file(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
