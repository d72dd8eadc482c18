//! `merge` (shard reports into one) and `matrix` (many servers, one comparison).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use super::target::{era_choice, stdio_target};
use super::write_file;
use super::EXIT_OK;
use mcp_conform::quality::measure::QualityReport;
use mcp_conform::report::data::{Collector, FORMAT};
use mcp_conform::report::matrix::{self, Column};
use mcp_conform::report::{html, json, junit, markdown};
use mcp_conform::run::catalog_run::{run_catalog, RunOptions};
use mcp_conform::run::events::Summary;
use mcp_conform::run::{RunPolicy, Target};
use mcp_conform::scenario::model::Scenario;
use mcp_conform::transport::HttpSpec;

/// Merges shard reports of one target into one report.
pub fn merge(
    inputs: &[PathBuf],
    out: &Path,
    junit_out: Option<&Path>,
    md_out: Option<&Path>,
    html_out: Option<&Path>,
) -> Result<u8> {
    let mut reports = Vec::new();
    for path in inputs {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let data = json::parse(&text)
            .with_context(|| format!("{} is not an mcp-conform report", path.display()))?;
        if data.format != FORMAT {
            bail!(
                "{}: format {:?}, expected {FORMAT:?}",
                path.display(),
                data.format
            );
        }
        reports.push((path, data));
    }
    let Some((first_path, first)) = reports.first() else {
        bail!("merge needs at least one report");
    };
    let mut merged = first.clone();
    merged.scenarios.clear();
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (path, data) in &reports {
        if data.run.target != first.run.target || data.run.eras != first.run.eras {
            bail!(
                "{} tested `{}` ({}), but {} tested `{}` ({}): only shards of one run can be merged",
                path.display(), data.run.target, data.run.era, first_path.display(), first.run.target, first.run.era
            );
        }
        for s in &data.scenarios {
            let key = format!("{} ({})", s.id, s.era);
            if let Some(other) = seen.insert(key.clone(), (*path).clone()) {
                bail!(
                    "scenario {key} is in both {} and {}",
                    other.display(),
                    path.display()
                );
            }
            merged.scenarios.push(s.clone());
        }
        merged.strict |= data.strict;
    }
    merged
        .scenarios
        .sort_by(|a, b| (&a.era, &a.id).cmp(&(&b.era, &b.id)));
    let wall = reports
        .iter()
        .map(|(_, d)| d.summary.duration_ms)
        .max()
        .unwrap_or(0);
    merged.summary = Summary::from_results(&merged.scenarios, wall);
    let policy = RunPolicy {
        strict: merged.strict,
        ..RunPolicy::default()
    };
    let verdict = policy.verdict(&merged.scenarios);
    merged.summary.verdict = Some(verdict.clone());
    merged.run.scenarios = merged.scenarios.len();
    write_file(out, &json::render(&merged))?;
    if let Some(p) = junit_out {
        write_file(p, &junit::render(&merged))?;
    }
    if let Some(p) = md_out {
        write_file(p, &markdown::render(&merged))?;
    }
    if let Some(p) = html_out {
        write_file(p, &html::render(&merged))?;
    }
    println!(
        "merged {} reports ({} scenarios) into {}: {}",
        reports.len(),
        merged.scenarios.len(),
        out.display(),
        merged.summary.overall.line()
    );
    println!("conformance result: {}", verdict.line());
    Ok(verdict.exit_code())
}

/// One server of a matrix file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MatrixServer {
    name: String,
    /// Command and arguments; empty or absent = the built-in reference server.
    #[serde(default)]
    command: Vec<String>,
    /// With no command: faults to inject into the built-in reference server.
    #[serde(default)]
    faults: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    cwd: Option<PathBuf>,
    #[serde(default)]
    protocol_version: Option<String>,
    /// A Streamable HTTP endpoint: a running server, or the one `command` starts.
    #[serde(default)]
    url: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MatrixFile {
    servers: Vec<MatrixServer>,
}

/// Runs the catalog against every server of `file` and writes one comparison.
pub fn matrix(
    file: &Path,
    out_dir: &Path,
    profiles: &[String],
    timeout_ms: u64,
    jobs: Option<usize>,
) -> Result<u8> {
    let spec = read_matrix_file(file)?;
    let scenarios = mcp_conform::builtin::scenarios().map_err(|e| anyhow::anyhow!("{e}"))?;
    let scenarios: Vec<_> = scenarios
        .into_iter()
        .filter(|s| profiles.is_empty() || profiles.contains(&s.profile))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut columns = Vec::new();
    let mut quality_rows = Vec::new();
    let mut reached = 0;
    for server in &spec.servers {
        let target = matrix_target(server, timeout_ms, &runtime)?;
        let mut opts = RunOptions::new(
            era_choice(server.protocol_version.as_deref().unwrap_or("all"))?,
            Duration::from_millis(timeout_ms),
            jobs.unwrap_or_else(RunOptions::default_jobs),
        );
        opts.eval_options = super::run::eval_options();
        let mut collector = Collector::default();
        let policy = RunPolicy::default();
        let launched = target.clone();
        let run = runtime.block_on(run_catalog(
            target,
            scenarios.clone(),
            &opts,
            &policy,
            |e| collector.handle(&e),
        ));
        quality_rows.push((
            server.name.clone(),
            runtime.block_on(super::quality::for_matrix(&launched, timeout_ms)),
        ));
        runtime.block_on(launched.stop());
        let outcome = run.map(|_| collector).map_err(|e| e.message);
        reached += usize::from(outcome.is_ok());
        columns.push(column(server, outcome, &scenarios, out_dir)?);
    }
    write_matrix(out_dir, &columns, &quality_rows)?;
    if reached == 0 {
        eprintln!(
            "error: no server of {} could be started or reached, so nothing was compared \
             (the matrix in {} says why for each)",
            file.display(),
            out_dir.display()
        );
        return Ok(super::EXIT_UNREACHABLE);
    }
    Ok(EXIT_OK)
}

/// A matrix file: YAML, its errors placed at file:line:col.
fn read_matrix_file(file: &Path) -> Result<MatrixFile> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let doc = mcp_conform::scenario::source::parse_yaml(&text)
        .map_err(|e| anyhow::anyhow!("{}:{e}", file.display()))?;
    let spec: MatrixFile = serde_json::from_value(doc.value)
        .with_context(|| format!("{}: not a matrix file", file.display()))?;
    if spec.servers.is_empty() {
        bail!("{}: `servers` lists no server to compare", file.display());
    }
    Ok(spec)
}

/// The target of one matrix server: its command (the built-in reference
/// server with its faults when it names none) over stdio, or its URL,
/// with the command launched behind it when there is one.
fn matrix_target(
    server: &MatrixServer,
    timeout_ms: u64,
    runtime: &tokio::runtime::Runtime,
) -> Result<Target> {
    let env: Vec<(String, String)> = server.env.clone().into_iter().collect();
    let command = if server.command.is_empty() {
        let mut c = super::target::default_command()?;
        for f in &server.faults {
            c.extend(["--fault".to_string(), f.clone()]);
        }
        c
    } else {
        server.command.clone()
    };
    let Some(url) = &server.url else {
        return stdio_target(&command, &env, server.cwd.as_deref());
    };
    let mut spec = HttpSpec::new(url.clone());
    spec.timeout = Duration::from_millis(timeout_ms);
    if server.command.is_empty() && server.faults.is_empty() {
        return Ok(Target::Http {
            spec,
            process: None,
            command: None,
        });
    }
    let Target::Stdio(launch) = stdio_target(&command, &env, server.cwd.as_deref())? else {
        bail!("internal: a command line must give a stdio target");
    };
    runtime
        .block_on(Target::launch_http(spec, launch, Duration::from_secs(10)))
        .with_context(|| format!("{}: cannot start its server", server.name))
}

/// One server's column: its results (also written to `<slug>.json`), or
/// why it could not be reached.
fn column(
    server: &MatrixServer,
    outcome: std::result::Result<Collector, String>,
    scenarios: &[Scenario],
    out_dir: &Path,
) -> Result<Column> {
    let collector = match outcome {
        Ok(collector) => collector,
        Err(message) => {
            println!("{:<28} unreachable: {}", server.name, message);
            return Ok(Column {
                name: server.name.clone(),
                data: None,
                unreachable: Some(message),
            });
        }
    };
    let order: Vec<String> = scenarios.iter().map(|s| s.id.clone()).collect();
    let data = collector
        .finish(&order, false)
        .context("run ended without a summary")?;
    println!("{:<28} {}", server.name, data.summary.overall.line());
    write_file(
        &out_dir.join(format!("{}.json", slug(&server.name))),
        &json::render(&data),
    )?;
    Ok(Column {
        name: server.name.clone(),
        data: Some(data),
        unreachable: None,
    })
}

/// The comparison files: matrix and drafts (Markdown and HTML), quality.
fn write_matrix(
    out_dir: &Path,
    columns: &[Column],
    quality_rows: &[(String, Option<QualityReport>)],
) -> Result<()> {
    let requirements = mcp_conform::requirements::all().unwrap_or_default();
    let sources = mcp_conform::sources::all().unwrap_or_default();
    write_file(
        &out_dir.join("drafts.md"),
        &mcp_conform::report::drafts::markdown(columns, &requirements, sources),
    )?;
    write_file(
        &out_dir.join("drafts.html"),
        &mcp_conform::report::drafts::html(columns, &requirements, sources),
    )?;
    write_file(
        &out_dir.join("matrix.md"),
        &matrix::markdown(columns, &requirements),
    )?;
    write_file(
        &out_dir.join("matrix.html"),
        &matrix::html(columns, &requirements),
    )?;
    write_file(
        &out_dir.join("quality.md"),
        &mcp_conform::quality::report::matrix_markdown(quality_rows),
    )?;
    println!(
        "wrote matrix.md, matrix.html, drafts.md, drafts.html and quality.md in {}",
        out_dir.display()
    );
    Ok(())
}

fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}
