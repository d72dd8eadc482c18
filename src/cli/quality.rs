//! `mcp-conform quality`: relevance figures of every search surface beside
//! a BM25 baseline, and `--quality` on a normal run (the same figures as
//! info after the verdict, which they never change).
//!
//! Exit codes: 0 measured (or nothing to measure), 1 a `--min-…` gate not
//! met, 2 usage error or a bad `--queries` file, 3 the server could not be
//! started or reached.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

use super::target::{build_target, era_choice};
use super::write_file;
use super::{RunArgs, EXIT_FAILURES, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE};
use mcp_conform::quality::collect::{measure, QualityOptions};
use mcp_conform::quality::gates::{self, Gate, Metric};
use mcp_conform::quality::labelled;
use mcp_conform::quality::measure::QualityReport;
use mcp_conform::quality::report;
use mcp_conform::run::probe::EraChoice;

/// What only `quality` takes (the server and report options are a run's).
#[derive(Debug, Args)]
pub struct QualityFlags {
    /// A labelled query set (YAML: queries with the names of the items relevant
    /// to each, optionally graded) instead of queries built from the server's
    /// own catalog; docs/quality.md gives the format.
    #[arg(long, value_name = "FILE")]
    pub queries: Option<PathBuf>,
    /// At most N queries per surface, a sample drawn with --seed.
    #[arg(long, value_name = "N", value_parser = super::positive_usize)]
    pub max_queries: Option<usize>,
    /// Build no query from description sentences (names and rare words only).
    #[arg(long)]
    pub no_sentences: bool,
    /// Write the charts (server vs BM25, rank distribution) as one SVG file.
    #[arg(long, value_name = "FILE")]
    pub report_svg: Option<PathBuf>,
    /// Exit 1 when a surface's recall@1 is below X (0..1).
    #[arg(long, value_name = "X", value_parser = unit)]
    pub min_recall_at_1: Option<f64>,
    /// Exit 1 when a surface's recall@5 is below X (0..1).
    #[arg(long, value_name = "X", value_parser = unit)]
    pub min_recall_at_5: Option<f64>,
    /// Exit 1 when a surface's recall@10 is below X (0..1).
    #[arg(long, value_name = "X", value_parser = unit)]
    pub min_recall_at_10: Option<f64>,
    /// Exit 1 when a surface's MRR is below X (0..1).
    #[arg(long, value_name = "X", value_parser = unit)]
    pub min_mrr: Option<f64>,
    /// Exit 1 when a surface's nDCG@10 is below X (0..1).
    #[arg(long, value_name = "X", value_parser = unit)]
    pub min_ndcg_at_10: Option<f64>,
}

fn unit(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        Ok(x) => Err(format!("{x} is not between 0 and 1")),
        Err(e) => Err(e.to_string()),
    }
}

impl QualityFlags {
    fn gates(&self) -> Vec<Gate> {
        [
            (Metric::RecallAt1, self.min_recall_at_1),
            (Metric::RecallAt5, self.min_recall_at_5),
            (Metric::RecallAt10, self.min_recall_at_10),
            (Metric::Mrr, self.min_mrr),
            (Metric::NdcgAt10, self.min_ndcg_at_10),
        ]
        .into_iter()
        .filter_map(|(metric, min)| min.map(|min| Gate { metric, min }))
        .collect()
    }
}

/// A run's options that mean nothing to `quality`.
fn unused_run_options(args: &RunArgs) -> Option<&'static str> {
    [
        (args.reports.report_junit.is_some(), "--report-junit"),
        (args.reports.report_sarif.is_some(), "--report-sarif"),
        (args.baseline.is_some(), "--baseline"),
        (args.write_baseline.is_some(), "--write-baseline"),
        (args.shard.is_some(), "--shard"),
        (!args.filters.is_empty(), "-k/--filter"),
        (!args.profiles.is_empty(), "-p/--profile"),
        (args.list || args.list_profiles, "--list"),
        (args.quality, "--quality"),
    ]
    .into_iter()
    .find_map(|(set, name)| set.then_some(name))
}

/// `mcp-conform quality`.
pub fn main(flags: QualityFlags, args: RunArgs) -> Result<u8> {
    if let Some(name) = unused_run_options(&args) {
        eprintln!("error: {name} is an option of a conformance run, not of `mcp-conform quality`");
        return Ok(EXIT_USAGE);
    }
    let labelled = match &flags.queries {
        Some(path) => match read_labelled(path) {
            Ok(set) => Some(set),
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(EXIT_USAGE);
            }
        },
        None => None,
    };
    let mut opts = match options(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(EXIT_USAGE);
        }
    };
    opts.max_queries = flags.max_queries;
    opts.sentences = !flags.no_sentences;
    opts.labelled = labelled;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let measured = runtime.block_on(async {
        let target = build_target(&args).await?;
        let measured = measure(&target, &opts).await;
        target.stop().await;
        Ok::<_, anyhow::Error>(measured?)
    });
    let report = match measured {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: the server could not be started or reached; nothing was measured");
            for line in format!("{e:#}").lines() {
                eprintln!("  {line}");
            }
            return Ok(EXIT_UNREACHABLE);
        }
    };
    print!("{}", report::console(&report));
    if let Err(e) = write_reports(&args, flags.report_svg.as_deref(), &report) {
        eprintln!("error: {e:#}");
        return Ok(EXIT_USAGE);
    }
    let missed = gates::check(&flags.gates(), &report.surfaces);
    for line in &missed {
        eprintln!("gate not met: {line}");
    }
    Ok(if missed.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILURES
    })
}

/// A labelled set, or the one-line error naming file:line:col.
fn read_labelled(path: &Path) -> Result<(String, Vec<mcp_conform::quality::Query>), String> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: cannot read: {e}"))?;
    let set = labelled::parse(&file, &text).map_err(|e| e.to_string())?;
    Ok((file, set))
}

/// The measurement options a run's flags give: its era (`all`, the run's
/// default, means the newest here: one era is measured), timeouts, seed.
pub fn options(args: &RunArgs) -> Result<QualityOptions> {
    let mut opts = QualityOptions::new(Duration::from_millis(args.timeout_ms));
    opts.startup = Duration::from_millis(args.startup_timeout_ms);
    opts.seed = args.seed.unwrap_or(0);
    opts.era = match era_choice(&args.protocol_version)? {
        EraChoice::All => EraChoice::Auto,
        other => other,
    };
    Ok(opts)
}

/// The report files asked for: `--report-json`, `--report-markdown`,
/// `--report-html`, `--report-dir` (quality.json, quality.md, quality.html,
/// quality.svg) and `--report-svg`.
pub fn write_reports(args: &RunArgs, svg: Option<&Path>, r: &QualityReport) -> Result<()> {
    type Render = fn(&QualityReport) -> String;
    let mut files: Vec<(PathBuf, Render)> = Vec::new();
    if let Some(dir) = &args.reports.report_dir {
        files.push((dir.join("quality.json"), report::json));
        files.push((dir.join("quality.md"), report::markdown));
        files.push((dir.join("quality.html"), report::html));
        files.push((dir.join("quality.svg"), report::svg));
    }
    let single: [(Option<&Path>, Render); 4] = [
        (args.reports.report_json.as_deref(), report::json),
        (args.reports.report_markdown.as_deref(), report::markdown),
        (args.reports.report_html.as_deref(), report::html),
        (svg, report::svg),
    ];
    for (path, render) in single {
        if let Some(p) = path {
            files.push((p.to_path_buf(), render));
        }
    }
    for (path, render) in files {
        write_file(&path, &render(r))?;
    }
    Ok(())
}

/// `--quality` on a normal run: the figures, after the verdict, as info on
/// the relevance SHOULD of each surface; the exit code stays the run's.
pub async fn after_run(args: &RunArgs, target: &mcp_conform::run::Target) {
    let opts = match options(args) {
        // The run's sessions carry its client fault; so do these.
        Ok(o) => QualityOptions {
            client_fault: args.client_fault,
            ..o
        },
        Err(e) => {
            eprintln!("quality: {e:#}");
            return;
        }
    };
    match measure(target, &opts).await {
        Ok(r) => {
            println!(
                "\nINFO  search quality (--quality; informs the relevance SHOULD of each surface, \
                 never the verdict)"
            );
            print!("{}", report::console(&r));
            if let Some(dir) = &args.reports.report_dir {
                for (name, text) in [
                    ("quality.json", report::json(&r)),
                    ("quality.html", report::html(&r)),
                ] {
                    if let Err(e) = write_file(&dir.join(name), &text) {
                        eprintln!("quality: {e:#}");
                    }
                }
            }
        }
        Err(e) => eprintln!("quality: not measured: {e}"),
    }
}

/// Queries per surface in a matrix's quality column: enough for a figure
/// with an interval, bounded so that a matrix of many servers stays quick.
const MATRIX_QUERIES: usize = 100;

/// The quality column of one matrix server (none when it could not be
/// measured).
pub async fn for_matrix(
    target: &mcp_conform::run::Target,
    timeout_ms: u64,
) -> Option<QualityReport> {
    let mut opts = QualityOptions::new(Duration::from_millis(timeout_ms));
    opts.max_queries = Some(MATRIX_QUERIES);
    measure(target, &opts).await.ok()
}
