//! `mcp-conform watch`: arguments, and the glue from a watched (or
//! replayed) conversation to the console summary, the report files and the
//! exit code.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;

use mcp_conform::report::console::{ConsoleOptions, ConsoleReporter};
use mcp_conform::report::data::ReportData;
use mcp_conform::run::events::Event;
use mcp_conform::watch::relay_stdio::{self, StdioOptions};
use mcp_conform::watch::report::{self, Target};
use mcp_conform::watch::{record, rules, Sink};

use super::{write_file, EXIT_UNREACHABLE, EXIT_USAGE};

#[derive(Debug, Args)]
#[command(
    long_about = "A transparent proxy between an MCP host and a server: relays both directions \
                  unchanged and checks the conversation against trace rules, client and server.\n\n\
                  stdio: put `mcp-conform watch [OPTIONS] -- SERVER_CMD ARGS...` where the host \
                  launches the server. Streamable HTTP: `mcp-conform watch --listen ADDR --upstream URL`.\n\n\
                  Exit codes: 0 no MUST broken, 1 a MUST broken (by either side), 2 usage error, \
                  3 the server could not be started or reached."
)]
pub struct WatchArgs {
    /// Write live findings to FILE instead of stderr.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Write every message (both directions, with timestamps and HTTP headers) to FILE as JSON lines.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Check a transcript written by --record instead of relaying.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["listen", "command"])]
    pub replay: Option<PathBuf>,
    /// Streamable HTTP: listen on ADDR (e.g. 127.0.0.1:8931) and forward to --upstream.
    #[arg(
        long,
        value_name = "ADDR",
        requires = "upstream",
        conflicts_with = "command"
    )]
    pub listen: Option<std::net::SocketAddr>,
    /// Streamable HTTP: the server's MCP endpoint; nothing is forwarded anywhere else.
    #[arg(long, value_name = "URL", requires = "listen")]
    pub upstream: Option<String>,
    /// How long the server may take to exit after the host closes its stdin
    /// before it is sent SIGTERM (then SIGKILL).
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub shutdown_grace_ms: u64,
    /// Environment variable for the server (K=V, repeatable).
    #[arg(long = "env", value_name = "K=V", value_parser = super::parse_env)]
    pub env: Vec<(String, String)>,
    /// Working directory of the server.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// No live findings and no summary (the report files still have them).
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub reports: super::run::ReportArgs,
    /// The server command and its arguments (after `--`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "SERVER_CMD"
    )]
    pub command: Vec<String>,
}

pub fn main(args: WatchArgs) -> Result<u8> {
    let rules = match rules::builtin() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    if let Some(path) = &args.replay {
        return replay(&args, rules, path);
    }
    if args.listen.is_none() && args.command.is_empty() {
        eprintln!("error: watch needs a server command after `--`, --listen ADDR --upstream URL, or --replay FILE");
        return Ok(EXIT_USAGE);
    }
    let started_at = chrono::Utc::now().to_rfc3339();
    let began = Instant::now();
    let sink = sink(&args, rules.clone())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let (sink, target, note) = match (&args.listen, &args.upstream) {
        (Some(addr), Some(url)) => {
            match runtime.block_on(mcp_conform::watch::relay_http::run(*addr, url, sink)) {
                Ok(w) => (w.sink, target(url, "streamable-http (watch)"), w.ended),
                Err(e) => {
                    eprintln!("error: {e}");
                    return Ok(EXIT_UNREACHABLE);
                }
            }
        }
        _ => {
            let opts = StdioOptions {
                command: args.command.clone(),
                env: args.env.clone(),
                cwd: args.cwd.clone(),
                grace: Duration::from_millis(args.shutdown_grace_ms),
            };
            match runtime.block_on(relay_stdio::run(&opts, sink)) {
                Ok(w) => (
                    w.sink,
                    target(&args.command.join(" "), "stdio (watch)"),
                    format!("{}; the server {}", w.ended, w.server_exit),
                ),
                Err(e) => {
                    eprintln!("error: {e}");
                    return Ok(EXIT_UNREACHABLE);
                }
            }
        }
    };
    runtime.shutdown_timeout(Duration::from_millis(100));
    let target = Target {
        duration_ms: began.elapsed().as_millis() as u64,
        started_at,
        ..target
    };
    let data = report::build(&sink.checker, &target);
    finish(&args, &data, Some(&note))
}

fn target(what: &str, transport: &str) -> Target {
    Target {
        target: what.to_string(),
        transport: transport.to_string(),
        ..Target::default()
    }
}

/// The live-findings sink: stderr, or `--log FILE`; with `--record FILE` too.
fn sink(args: &WatchArgs, rules: Vec<rules::Rule>) -> Result<Sink> {
    let live: Box<dyn Write + Send> = match &args.log {
        Some(path) => Box::new(
            std::fs::File::create(path)
                .with_context(|| format!("cannot write --log {}", path.display()))?,
        ),
        None => Box::new(std::io::stderr()),
    };
    let http = args.listen.is_some();
    let mut sink = Sink::new(rules, http, live).quiet(args.quiet && args.log.is_none());
    if let Some(path) = &args.record {
        let file = std::fs::File::create(path)
            .with_context(|| format!("cannot write --record {}", path.display()))?;
        sink = sink.recording(Box::new(std::io::BufWriter::new(file)));
    }
    Ok(sink)
}

fn replay(args: &WatchArgs, rules: Vec<rules::Rule>, path: &std::path::Path) -> Result<u8> {
    let msgs = match record::read(path) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    let http = msgs.iter().any(|m| m.http.is_some());
    let live: Box<dyn Write + Send> = match &args.log {
        Some(p) => Box::new(
            std::fs::File::create(p)
                .with_context(|| format!("cannot write --log {}", p.display()))?,
        ),
        None => Box::new(std::io::stderr()),
    };
    let mut sink = Sink::new(rules, http, live).quiet(args.quiet && args.log.is_none());
    let duration_ms = msgs.last().map_or(0, |m| m.at_ms);
    for m in msgs {
        sink.feed(m);
    }
    sink.close();
    let target = Target {
        target: path.display().to_string(),
        transport: if http {
            "streamable-http (replay)"
        } else {
            "stdio (replay)"
        }
        .to_string(),
        duration_ms,
        started_at: chrono::Utc::now().to_rfc3339(),
    };
    let data = report::build(&sink.checker, &target);
    finish(args, &data, None)
}

/// Writes the report files and the summary; returns the exit code.
fn finish(args: &WatchArgs, data: &ReportData, note: Option<&str>) -> Result<u8> {
    for (path, render) in super::run::report_files(&args.reports.paths()) {
        write_file(&path, &render(data))?;
    }
    if !args.quiet {
        summary(data, note);
    }
    Ok(data
        .summary
        .verdict
        .as_ref()
        .map_or(super::EXIT_FAILURES, |v| v.exit_code()))
}

/// The console summary goes to stderr: stdout belongs to the server.
fn summary(data: &ReportData, note: Option<&str>) {
    let stderr = std::io::stderr();
    let color = stderr.is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut console = ConsoleReporter::new(
        stderr,
        ConsoleOptions {
            color,
            quiet: true,
            ..ConsoleOptions::default()
        },
    );
    if let Some(note) = note {
        eprintln!("mcp-conform watch: {note}");
    }
    console.handle(&Event::Started(Box::new(data.run.clone())));
    for r in &data.scenarios {
        console.handle(&Event::Finished(Box::new(r.clone())));
    }
    console.handle(&Event::Done(data.summary.clone()));
}
