//! Arguments and subcommands; exit codes.

pub(crate) mod argv;
mod client;
mod combine;
mod explain;
mod quality;
mod run;
mod select;
mod sources;
mod target;
mod usage;
mod watch;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};

/// Conforms.
pub const EXIT_OK: u8 = 0;
/// Conformance failures or stale baseline entries.
pub const EXIT_FAILURES: u8 = 1;
/// Usage error or invalid scenario/baseline file.
pub const EXIT_USAGE: u8 = 2;
/// The target could not be started or reached.
pub const EXIT_UNREACHABLE: u8 = 3;
/// Interrupted (Ctrl-C): 128 + SIGINT, as shells report it.
pub const EXIT_INTERRUPTED: u8 = 130;

#[derive(Debug, Parser)]
#[command(
    name = "mcp-conform",
    version,
    about = "Conformance harness for MCP servers and the draft tool-discovery extensions",
    long_about = "Launches an MCP server (or, with no command, the built-in reference server), drives \
                  declarative scenarios at it, and reports pass / fail / warn / info / skip per requirement.\n\n\
                  Exit codes: 0 conforms, 1 conformance failures, 2 usage or scenario-file error, \
                  3 the server could not be started or reached.",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Merge JSON reports of shards (--shard K/N) of one run into one report.
    Merge {
        /// The shard reports (JSON).
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// The merged JSON report.
        #[arg(short, long, value_name = "FILE")]
        out: PathBuf,
        #[arg(long, value_name = "FILE")]
        report_junit: Option<PathBuf>,
        #[arg(long, value_name = "FILE")]
        report_markdown: Option<PathBuf>,
        #[arg(long, value_name = "FILE")]
        report_html: Option<PathBuf>,
    },
    /// Run the catalog against every server of FILE and write one comparison (matrix.md, matrix.html).
    #[command(
        long_about = "Runs the catalog against every server of FILE and writes one comparison \
                      (matrix.md, matrix.html, the drafts and quality tables, and one JSON report \
                      per server). A server that cannot be started or reached is a column that \
                      says why.\n\n\
                      Exit codes: 0 the comparison was written, 2 usage error or a bad FILE, \
                      3 no server of FILE could be started or reached (the comparison is still \
                      written, saying why for each)."
    )]
    Matrix {
        /// YAML: `servers: [{name, command: [..], env: {K: V}, cwd, protocol_version, faults: [..]}]` (no command = the built-in reference server, with `faults`).
        file: PathBuf,
        /// Where to write matrix.md, matrix.html and one JSON report per server.
        #[arg(long, value_name = "DIR", default_value = "matrix")]
        out_dir: PathBuf,
        /// Only scenarios of this profile (repeatable).
        #[arg(short = 'p', long = "profile", value_name = "NAME")]
        profiles: Vec<String>,
        #[arg(long, value_name = "N", default_value_t = 5000)]
        timeout_ms: u64,
        #[arg(short = 'j', long, value_name = "N")]
        jobs: Option<usize>,
    },
    /// Relevance figures of every search surface (tools/list query, tools/search,
    /// prompts/search, resources/search, tool_search) beside a BM25 baseline.
    /// Exit codes: 0 measured or nothing to measure, 1 a --min-… gate not met,
    /// 2 usage error or bad --queries file, 3 the server could not be reached.
    Quality {
        #[command(flatten)]
        flags: quality::QualityFlags,
        #[command(flatten)]
        run: Box<RunArgs>,
    },
    /// Serve the built-in reference server (stdio) that implements every profile.
    ServeReference(mcp_conform::reference::ServeArgs),
    /// Print a requirement (its rule, whose rule it is, quote, source and the scenarios that check it) or a scenario.
    Explain {
        /// A requirement id (e.g. SEP1300-FLT-01) or a scenario id; case does not matter.
        /// With --document: a source id of scenarios/sources.yaml (e.g. sep-1300).
        id: String,
        /// ID names a source document: list its requirements, levels, whose rule and words.
        #[arg(long)]
        document: bool,
    },
    /// What a newer text of a source document does to the requirements quoting it.
    #[command(subcommand)]
    Sources(sources::SourcesCommand),
    /// Relay an MCP conversation unchanged (stdio: `watch -- SERVER_CMD ARGS…`;
    /// Streamable HTTP: `watch --listen ADDR --upstream URL`) and check both
    /// sides against trace rules.
    Watch(watch::WatchArgs),
    /// Grade an MCP client: serve each client scenario, start the client command
    /// (`client -- CLIENT_CMD ARGS…`), and check its side of the conversation.
    Client(client::ClientArgs),
    /// mcp-conform's own client, following the driver convention of `client`
    /// (a testing aid; `--client-fault` breaks one client rule).
    #[command(hide = true)]
    ClientDriver(client::DriverArgs),
    /// Print a built-in scenario's YAML, after its requirements, level, whose rule each is, quotes and sources.
    Show {
        /// A scenario id (e.g. sep-1300/filter-each-group); case does not matter.
        id: String,
    },
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// List the selected scenarios (id, profile, level, title) and exit.
    #[arg(long)]
    pub list: bool,
    /// With --list or --list-profiles: print JSON for scripts.
    #[arg(long)]
    pub json: bool,
    /// List the profiles of the catalog with their scenario counts and exit.
    #[arg(long)]
    pub list_profiles: bool,
    /// Only scenarios whose id contains PATTERN or matches it as a glob, or that check
    /// the requirement id PATTERN (e.g. BASE-ERR-02) (repeatable; each must match something).
    #[arg(short = 'k', long = "filter", value_name = "PATTERN")]
    pub filters: Vec<String>,
    /// Leave out scenarios that PATTERN selects (same matching as -k; repeatable).
    #[arg(long = "skip", value_name = "PATTERN")]
    pub skip: Vec<String>,
    /// Only scenarios of this profile (repeatable).
    #[arg(short = 'p', long = "profile", value_name = "NAME")]
    pub profiles: Vec<String>,
    /// Scenario file or directory; adds to the built-in catalog, replacing scenarios with the same id (repeatable).
    #[arg(long = "scenarios", value_name = "PATH")]
    pub scenarios: Vec<PathBuf>,
    /// Do not load the built-in catalog (use only --scenarios).
    #[arg(long)]
    pub no_builtin: bool,
    /// Protocol eras to test: all (every era the server accepts, each run in full),
    /// auto (the newest one it accepts), or one version (2025-06-18, 2025-11-25, 2026-07-28).
    #[arg(long, value_name = "VERSION|all|auto", default_value = "all")]
    pub protocol_version: String,
    /// Scenarios run at once (default: 4 per core, at most 32); where a new
    /// session costs next to nothing (HTTP, the built-in reference), four
    /// times as many again of those that may spend their time waiting (a
    /// sleep, an awaited notification, a bounded call); with 1, one
    /// scenario at a time.
    #[arg(short = 'j', long, value_name = "N", value_parser = positive_usize)]
    pub jobs: Option<usize>,
    /// Per-request timeout in milliseconds.
    #[arg(long, value_name = "N", default_value_t = 5000, value_parser = positive_u64)]
    pub timeout_ms: u64,
    /// How long a stdio server may take to exit after its stdin closes before it is
    /// sent SIGTERM (then SIGKILL); the run does not wait for it.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub shutdown_grace_ms: u64,
    /// Every scenario on a fresh server, and no skipping decided from the probe
    /// (slower; for checking that sharing changes no verdict).
    #[arg(long)]
    pub isolate: bool,
    /// After the run, measure search relevance (as `mcp-conform quality` does) and
    /// print the figures as info; they never change the verdict or exit code.
    #[arg(long)]
    pub quality: bool,
    /// Warnings fail the run too.
    #[arg(long)]
    pub strict: bool,
    /// Grade only what the drafts and the MCP specification say: scenarios whose
    /// requirements are all this project's own rules (`source: project`) report INFO.
    #[arg(long)]
    pub drafts_only: bool,
    /// Seed of generated inputs (property scenarios): a number, or `random` for a
    /// fresh one (printed, and recorded in the JSON report as run.seed). Default 0.
    #[arg(long, value_name = "N|random", value_parser = parse_seed, conflicts_with = "replay")]
    pub seed: Option<u64>,
    /// Invariants that hold "for every group, tag or tool" check a sample of
    /// at most N of them, drawn with the run's seed, when the server lists
    /// more; smaller lists are checked whole. The verdict says how many were
    /// checked of how many.
    #[arg(long, value_name = "N", default_value_t = mcp_conform::run::DEFAULT_SAMPLE_SIZE)]
    pub sample_size: usize,
    /// Which tools scenarios may call: `read-only` (default) only tools whose
    /// annotations say readOnlyHint: true and not destructiveHint: true, so a
    /// run changes no data; `none` calls no tool; `all` calls every tool.
    /// Reading resources and getting prompts always run.
    #[arg(
        long,
        value_enum,
        value_name = "none|read-only|all",
        default_value = "read-only"
    )]
    pub call_tools: mcp_conform::run::executor::CallTools,
    /// How long each tool call of core/tools-call may take: a tool that has not
    /// answered by then is cancelled (stdio: notifications/cancelled; Streamable
    /// HTTP: its response stream closed) and reported as not exercised (info);
    /// it is not called again later in the run.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = positive_u64)]
    pub call_budget_ms: u64,
    /// Replay a property failure: `SEED` draws that run's cases again, `SEED:CASE`
    /// runs only that case of each property scenario (both print on every failure).
    #[arg(long, value_name = "SEED[:CASE]", value_parser = parse_replay)]
    pub replay: Option<mcp_conform::run::property::PropertyRun>,
    /// Show the wire transcript of failing scenarios, and every diff whole.
    #[arg(short, long)]
    pub verbose: bool,
    /// Lines of each finding's diff shown on the console (0: all; the JSON and HTML reports keep every line).
    #[arg(long, value_name = "N", default_value_t = mcp_conform::report::evidence::DEFAULT_DIFF_LINES)]
    pub diff_lines: usize,
    /// Print only failures and the summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// After the summary, print the N slowest scenario runs, each with when it started and ended (seconds from the start of the run; 0: every run). The JSON report records both for every run (`started_ms`, `duration_ms`)
    #[arg(long, value_name = "N")]
    pub durations: Option<usize>,
    /// Test a Streamable HTTP server at URL; with SERVER_CMD, launch it first and wait until the URL answers.
    #[arg(long, value_name = "URL", value_parser = parse_url)]
    pub url: Option<String>,
    /// The most the harness reads of one message from the server, in bytes: a stdio
    /// line, an HTTP body, one SSE event, and one HTTP response stream in all.
    #[arg(long, value_name = "BYTES", default_value_t = mcp_conform::jsonrpc::DEFAULT_MAX_LINE, value_parser = positive_usize)]
    pub max_message_bytes: usize,
    /// Send HTTP requests through this proxy (an http:// or https:// URL).
    /// Without it no proxy is used, whatever HTTP_PROXY, HTTPS_PROXY or ALL_PROXY say:
    /// a proxy receives every header you pass, so you name it yourself.
    #[arg(long, value_name = "URL", value_parser = parse_url, requires = "url")]
    pub proxy: Option<String>,
    /// Extra HTTP header for every request (K:V, repeatable), e.g. authorization.
    #[arg(long = "header", value_name = "K:V", value_parser = parse_header)]
    pub headers: Vec<(String, String)>,
    /// How long a launched server may take to start: to answer its handshake (stdio,
    /// each new process; never less than --timeout-ms) or its URL (HTTP); the request
    /// timeout applies after that.
    #[arg(long, value_name = "N", default_value_t = 10000, value_parser = positive_u64)]
    pub startup_timeout_ms: u64,
    /// Environment variable for the server (K=V, repeatable).
    #[arg(long = "env", value_name = "K=V", value_parser = parse_env)]
    pub env: Vec<(String, String)>,
    /// Expected failures (the official suite's format: `server: [scenario-id, scenario-id:check]`).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write the current failures as a baseline file.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Run only the K-th of N deterministic slices of the selected scenarios (e.g. 2/4).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Keep the wire transcript of passing and skipped scenarios in the reports too
    /// (by default only failures, warnings, errors and info keep theirs).
    #[arg(long)]
    pub full_transcripts: bool,
    #[command(flatten)]
    pub reports: run::ReportArgs,
    /// Console format: `text`, or `github` (failures and warnings also as workflow
    /// annotations on the scenario file and line). Default: github when
    /// GITHUB_ACTIONS=true, else text.
    #[arg(long, value_name = "text|github", value_enum)]
    pub format: Option<Format>,
    /// An official MCP JSON Schema to validate messages against too (BASE-SCHEMA-01).
    #[arg(long, value_name = "FILE")]
    pub mcp_schema: Option<PathBuf>,
    /// Working directory of the server.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Testing aid: the harness's sessions break one client rule on purpose
    /// (cursor-without-query, duplicate-id, answer-notification,
    /// no-initialized, no-meta-2026), to show `watch`'s client rules failing.
    #[arg(long, value_name = "NAME", hide = true, value_parser = parse_client_fault)]
    pub client_fault: Option<mcp_conform::session::client_fault::ClientFault>,
    /// The server command and its arguments (default: the built-in reference server).
    #[arg(trailing_var_arg = true, value_name = "SERVER_CMD")]
    pub command: Vec<String>,
    /// The command came after `--`: it is meant as one, never a mistyped
    /// subcommand.
    #[arg(skip)]
    pub command_after_separator: bool,
}

/// How the console writes problems.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Github,
}

fn positive_usize(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

fn positive_u64(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// An http(s) URL with a host; anything else can't be a Streamable HTTP endpoint.
fn parse_url(s: &str) -> Result<String, String> {
    let url = reqwest::Url::parse(s)
        .map_err(|e| format!("not a URL ({e}); expected e.g. http://127.0.0.1:3000/mcp"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "the scheme must be http or https, not {:?} (Streamable HTTP runs over HTTP)",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("the URL has no host".into());
    }
    Ok(s.to_string())
}

fn parse_seed(s: &str) -> Result<u64, String> {
    if s == "random" {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).map_err(|e| format!("no random seed available: {e}"))?;
        return Ok(u64::from_le_bytes(bytes));
    }
    s.parse::<u64>()
        .map_err(|e| format!("expected a number or `random` ({e})"))
}

fn parse_replay(s: &str) -> Result<mcp_conform::run::property::PropertyRun, String> {
    mcp_conform::run::property::PropertyRun::parse_replay(s)
}

fn parse_header(s: &str) -> Result<(String, String), String> {
    match s.split_once(':') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("expected K:V, got {s:?}")),
    }
}

fn parse_client_fault(s: &str) -> Result<mcp_conform::session::client_fault::ClientFault, String> {
    s.parse()
        .map_err(|e: mcp_conform::session::client_fault::UnknownClientFault| e.to_string())
}

pub(crate) fn parse_env(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("expected K=V, got {s:?}")),
    }
}

/// Runs the command and returns the process exit code; `raw` are the
/// arguments as given (without the program name), for the mistakes the
/// parser cannot see.
pub fn dispatch(cli: Cli, raw: &[String]) -> Result<u8> {
    if cli.command.is_none() {
        match argv::check(raw) {
            Ok(warnings) => warnings.iter().for_each(|w| eprintln!("{w}")),
            Err(e) => return Ok(usage::Usage::Message(e.to_string()).report()),
        }
    }
    match cli.command {
        Some(Command::Explain { id, document: true }) => explain::document(&id),
        Some(Command::Explain { id, .. }) => explain::explain(&id),
        Some(Command::Show { id }) => explain::show(&id),
        Some(Command::Sources(command)) => sources::run(&command),
        Some(Command::Merge {
            reports,
            out,
            report_junit,
            report_markdown,
            report_html,
        }) => combine::merge(
            &reports,
            &out,
            report_junit.as_deref(),
            report_markdown.as_deref(),
            report_html.as_deref(),
        ),
        Some(Command::Matrix {
            file,
            out_dir,
            profiles,
            timeout_ms,
            jobs,
        }) => combine::matrix(&file, &out_dir, &profiles, timeout_ms, jobs),
        Some(Command::Quality { flags, run }) => quality::main(flags, *run),
        Some(Command::ServeReference(args)) => {
            mcp_conform::reference::run(args)?;
            Ok(EXIT_OK)
        }
        Some(Command::Watch(args)) => watch::main(args),
        Some(Command::Client(args)) => client::main(args),
        Some(Command::ClientDriver(args)) => client::driver(args),
        None => {
            let mut run = cli.run;
            run.command_after_separator = raw.iter().any(|a| a == "--");
            run::main_job(run)
        }
    }
}

/// Writes a report file, creating its folder.
///
/// A regular file is written beside itself and renamed into place, so a
/// process stopped while writing (a `watch` its host killed after a short
/// grace) leaves the previous file or none, never a truncated report. Other
/// paths (`/dev/stdout`, a pipe) are written as they are.
pub fn write_file(path: &Path, text: &str) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    // A symlink is written through, so it stays a link.
    let special = std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file());
    let name = path.file_name().filter(|_| !special);
    let Some(name) = name else {
        return std::fs::write(path, text)
            .with_context(|| format!("cannot write {}", path.display()));
    };
    let staged = staged_beside(dir, name);
    let written = std::fs::write(&staged, text).and_then(|()| std::fs::rename(&staged, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&staged);
    }
    written.with_context(|| format!("cannot write {}", path.display()))
}

/// A hidden file beside the report `name` in `dir`, unique per write: two
/// writes of one path (two threads, two processes) never share one.
fn staged_beside(dir: Option<&Path>, name: &std::ffi::OsStr) -> PathBuf {
    static WRITES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut staged = std::ffi::OsString::from(".");
    staged.push(name);
    staged.push(format!(".{}-{n}.partial", std::process::id()));
    dir.map_or_else(|| PathBuf::from(&staged), |d| d.join(&staged))
}

#[cfg(test)]
mod tests {
    use super::write_file;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("mcp-conform-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_report_being_rewritten_is_never_seen_half_written() {
        let dir = scratch("write-file-whole");
        let path = dir.join("report.json");
        let a = "a".repeat(4 << 20);
        let b = "b".repeat(4 << 20);
        write_file(&path, &a).expect("first write");
        // Two writers at once, as two threads might.
        let writers: Vec<_> = (0..2)
            .map(|w| {
                let path = path.clone();
                let (a, b) = (a.clone(), b.clone());
                std::thread::spawn(move || {
                    for i in 0..20 {
                        let text = if (i + w) % 2 == 0 { &b } else { &a };
                        write_file(&path, text).expect("rewrite");
                    }
                })
            })
            .collect();
        while writers.iter().any(|w| !w.is_finished()) {
            let seen = std::fs::read_to_string(&path).expect("the report is always there");
            assert!(
                seen == a || seen == b,
                "read {} bytes of a report being rewritten",
                seen.len()
            );
        }
        for w in writers {
            w.join().expect("writer");
        }
        let left: Vec<_> = std::fs::read_dir(&dir)
            .expect("dir")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("report.json")]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_report_path_that_is_a_symlink_stays_one() {
        let dir = scratch("write-file-link");
        std::fs::create_dir_all(&dir).expect("dir");
        let target = dir.join("target.json");
        let link = dir.join("report.json");
        std::fs::write(&target, "old").expect("target");
        std::os::unix::fs::symlink(&target, &link).expect("link");
        write_file(&link, "new").expect("write through the link");
        assert!(std::fs::symlink_metadata(&link)
            .expect("link")
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&target).expect("target"), "new");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
