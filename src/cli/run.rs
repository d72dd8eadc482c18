//! The main job: probe the target, run the selected scenarios, report.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tokio::sync::mpsc;

use super::{select, RunArgs, EXIT_FAILURES, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE};
use mcp_conform::report::console::{ConsoleOptions, ConsoleReporter};
use mcp_conform::report::data::{Collector, ReportData};
use mcp_conform::report::{html, json, junit, markdown, Renderer};
use mcp_conform::run::events::{Event, RunInfo, Summary};
use mcp_conform::run::probe::probe;
use mcp_conform::run::scheduler::run_all;
use mcp_conform::run::{RunConfig, Target};
use mcp_conform::session::era::KNOWN_VERSIONS;
use mcp_conform::transport::stdio::kill_all_groups;
use mcp_conform::transport::StdioSpec;

/// The built-in reference server: this binary, re-executed.
fn default_target() -> Result<Vec<String>> {
    let exe = std::env::current_exe()
        .context("cannot find the mcp-conform executable to start the reference server")?;
    Ok(vec![
        exe.display().to_string(),
        "serve-reference".into(),
        "--control".into(),
    ])
}

fn build_target(args: &RunArgs) -> Result<Target> {
    let command = if args.command.is_empty() {
        default_target()?
    } else {
        args.command.clone()
    };
    let (program, rest) = command.split_first().context("empty server command")?;
    let mut spec = StdioSpec::new(program.clone(), rest.to_vec());
    spec.env = args.env.clone();
    spec.cwd = args.cwd.clone();
    Ok(Target::Stdio(spec))
}

fn install_user_schema(path: &std::path::Path) -> Result<()> {
    let text = std::fs::read_to_string(path).context("cannot read the file")?;
    let root: serde_json::Value = serde_json::from_str(&text).context("the file is not JSON")?;
    if root.get("$defs").is_none() && root.get("definitions").is_none() {
        anyhow::bail!("the schema has neither $defs nor definitions (expected an MCP schema.json)");
    }
    mcp_conform::schema::set_user_schema(&path.display().to_string(), root);
    Ok(())
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
    if let Some(path) = &args.mcp_schema {
        if let Err(e) = install_user_schema(path) {
            eprintln!("error: --mcp-schema {}: {e}", path.display());
            return Ok(EXIT_USAGE);
        }
    }
    let selected = select::select(scenarios, &args);
    if args.list {
        select::print_list(&selected);
        return Ok(EXIT_OK);
    }
    let requested = match args.protocol_version.as_str() {
        "auto" => None,
        v if KNOWN_VERSIONS.contains(&v) => Some(v.to_string()),
        v => {
            eprintln!(
                "error: unknown protocol version {v:?} (known: {}, or auto)",
                KNOWN_VERSIONS.join(", ")
            );
            return Ok(EXIT_USAGE);
        }
    };
    let target = build_target(&args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        tokio::select! {
            code = run_scenarios(args, target, requested, selected) => code,
            _ = tokio::signal::ctrl_c() => {
                kill_all_groups();
                eprintln!("\ninterrupted: every server process was stopped");
                Ok(130)
            }
        }
    })
}

/// The file reports asked for on the command line.
pub fn report_files(args: &RunArgs) -> Vec<(std::path::PathBuf, Renderer)> {
    let mut files: Vec<(std::path::PathBuf, Renderer)> = Vec::new();
    if let Some(dir) = &args.report_dir {
        files.push((dir.join("report.json"), json::render));
        files.push((dir.join("junit.xml"), junit::render));
        files.push((dir.join("report.md"), markdown::render));
        files.push((dir.join("report.html"), html::render));
    }
    let single: [(&Option<std::path::PathBuf>, Renderer); 4] = [
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

fn write_reports(args: &RunArgs, data: &ReportData) -> Result<()> {
    for (path, render) in report_files(args) {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::write(&path, render(data))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

async fn run_scenarios(
    args: RunArgs,
    target: Target,
    requested: Option<String>,
    scenarios: Vec<mcp_conform::scenario::model::Scenario>,
) -> Result<u8> {
    let started = Instant::now();
    let timeout = Duration::from_millis(args.timeout_ms);
    let probed = match probe(&target, requested.as_deref(), timeout).await {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(EXIT_UNREACHABLE);
        }
    };
    let fixture_match = mcp_conform::fixture::serves_reference_catalog(&probed.tool_names);
    let info = RunInfo {
        target: target.display(),
        transport: target.transport().to_string(),
        era: probed.era.version.clone(),
        server: probed.server.clone(),
        harness_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: chrono::Utc::now().to_rfc3339(),
        scenarios: scenarios.len(),
        fixture_match,
    };
    let cfg = Arc::new(RunConfig {
        target,
        era: probed.era,
        server: probed.server,
        timeout,
        fixture_match,
    });
    let stdout = std::io::stdout();
    let color = stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut console = ConsoleReporter::new(
        stdout,
        ConsoleOptions {
            color,
            verbose: args.verbose,
            quiet: args.quiet,
            progress: std::io::stderr().is_terminal() && !args.quiet,
        },
    );
    let order: Vec<String> = scenarios.iter().map(|s| s.id.clone()).collect();
    let mut collector = Collector::default();
    let started_event = Event::Started(Box::new(info));
    console.handle(&started_event);
    collector.handle(&started_event);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let runner = tokio::spawn(run_all(scenarios, cfg, jobs, tx));
    while let Some(event) = rx.recv().await {
        console.handle(&event);
        collector.handle(&event);
    }
    let results = runner
        .await
        .context("the scenario scheduler stopped unexpectedly")?;
    let summary = Summary::from_results(&results, started.elapsed().as_millis() as u64);
    let done = Event::Done(summary.clone());
    console.handle(&done);
    collector.handle(&done);
    if let Some(data) = collector.finish(&order, args.strict) {
        if let Err(e) = write_reports(&args, &data) {
            eprintln!("error: {e:#}");
            return Ok(EXIT_USAGE);
        }
    }
    let failed = summary.overall.failed + summary.overall.errors > 0;
    let strict_failed = args.strict && summary.overall.warned > 0;
    Ok(if failed || strict_failed {
        EXIT_FAILURES
    } else {
        EXIT_OK
    })
}
