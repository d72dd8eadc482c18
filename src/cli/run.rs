//! The main job: probe the target, run the selected scenarios, report, and
//! turn the verdicts (and the baseline) into an exit code.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::select::{Candidate, Selectable};
use super::target::{build_target, era_choice};
use super::usage::Usage;
use super::write_file;
use super::{select, Format, RunArgs, EXIT_FAILURES, EXIT_INTERRUPTED, EXIT_OK, EXIT_UNREACHABLE};
use mcp_conform::builtin;
use mcp_conform::expr::EvalOptions;
use mcp_conform::report::console::{ConsoleOptions, ConsoleReporter};
use mcp_conform::report::data::{Collector, ReportData};
use mcp_conform::report::{github, html, json, junit, markdown, Renderer};
use mcp_conform::requirements;
use mcp_conform::run::baseline::{self, Baseline};
use mcp_conform::run::catalog_run::{run_catalog, Catalog, RunOptions};
use mcp_conform::run::events::Event;
use mcp_conform::run::probe::EraChoice;
use mcp_conform::run::property::PropertyRun;
use mcp_conform::run::Target;
use mcp_conform::run::{RunPolicy, Verdict};
use mcp_conform::scenario::model::Scenario;
use mcp_conform::schema::Schemas;
use mcp_conform::transport::stdio::kill_all_groups;

/// `--shard K/N`: the K-th of N deterministic slices (round robin over sorted ids).
pub fn shard<T: Selectable>(mut scenarios: Vec<T>, spec: &str) -> Result<Vec<T>> {
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
    scenarios.sort_by(|a, b| a.id().cmp(b.id()));
    Ok(scenarios
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % n == k - 1)
        .map(|(_, s)| s)
        .collect())
}

fn load_baseline(path: &Path) -> Result<Baseline, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    baseline::parse(&path.display().to_string(), &text).map_err(|e| e.to_string())
}

pub fn main_job(args: RunArgs) -> Result<u8> {
    match plan(&args) {
        Ok(Plan::Listed) => Ok(EXIT_OK),
        Ok(Plan::Run {
            scenarios,
            opts,
            policy,
        }) => execute(&args, scenarios, &opts, &policy),
        Err(usage) => Ok(usage.report()),
    }
}

/// What the arguments ask for, once every usage mistake is ruled out.
enum Plan {
    /// `--list` or `--list-profiles`: printed, nothing to run.
    Listed,
    Run {
        scenarios: Planned,
        opts: Box<RunOptions>,
        policy: RunPolicy,
    },
}

/// The scenarios a run will use.
enum Planned {
    /// Loaded and selected.
    Selected(Vec<Scenario>),
    /// Selected from the index of the built-in catalog and the user's own
    /// files: the built-in ones among them are compiled while the server
    /// starts (`select::builtins_may_load_later`).
    Later(Vec<Candidate>),
}

/// Checks the arguments and loads what the run needs, before any server
/// starts: every mistake found here is the user's to fix. Only the built-in
/// scenarios the run selects are left to compile while the server starts.
fn plan(args: &RunArgs) -> Result<Plan, Usage> {
    check_usage(args)?;
    if let Some(index) = builtin::index().filter(|_| select::builtins_may_load_later(args)) {
        let user = select::load_user_files(args)?;
        let (candidates, replaced) = select::candidates(index, user);
        for note in &replaced {
            eprintln!("{note}");
        }
        let selected = select::select(candidates, args).map_err(|e| e.to_string())?;
        let selected = match &args.shard {
            Some(spec) => shard(selected, spec)?,
            None => selected,
        };
        return run_plan(args, Planned::Later(selected));
    }
    let loaded = select::load(args)?;
    for note in &loaded.replaced {
        eprintln!("{note}");
    }
    if args.list_profiles {
        select::print_profiles(&loaded.scenarios, args.json);
        return Ok(Plan::Listed);
    }
    let mut selected = select::select(loaded.scenarios, args).map_err(|e| e.to_string())?;
    if let Some(spec) = &args.shard {
        selected = shard(selected, spec)?;
    }
    let selected = requirements::drafts_only_if(args.drafts_only, selected);
    if args.list {
        if args.json {
            select::print_list_json(&selected);
        } else {
            select::print_list(&selected);
        }
        return Ok(Plan::Listed);
    }
    run_plan(args, Planned::Selected(selected))
}

/// The run's settings beside its scenarios: the baseline, the schemas and
/// the eras, each refused here when the user's input is wrong.
fn run_plan(args: &RunArgs, scenarios: Planned) -> Result<Plan, Usage> {
    let baseline = args
        .baseline
        .as_deref()
        .map(load_baseline)
        .transpose()?
        .unwrap_or_default();
    let schemas = match &args.mcp_schema {
        None => Schemas::default(),
        Some(path) => Schemas::with_user_file(path).map_err(|e| {
            Usage::of_option("--mcp-schema", &path.display().to_string(), e.to_string())
        })?,
    };
    Ok(Plan::Run {
        scenarios,
        opts: Box::new(run_options(
            args,
            era_choice(&args.protocol_version)?,
            schemas,
        )),
        policy: RunPolicy {
            baseline,
            strict: args.strict,
            full_transcripts: args.full_transcripts,
        },
    })
}

/// The planned scenarios as the run takes them: the built-in ones, when
/// left for later, compile on a thread of their own from now on.
fn catalog(planned: Planned, drafts_only: bool) -> Catalog {
    let selected = match planned {
        Planned::Selected(scenarios) => return scenarios.into(),
        Planned::Later(selected) => selected,
    };
    let (sender, compiled) = tokio::sync::oneshot::channel();
    // A thread of its own rather than the runtime's blocking pool: a run
    // that ends before it is awaited (a server that never started) does not
    // wait for it.
    std::thread::spawn(move || {
        let _ = sender.send(select::compile(selected));
    });
    Catalog::loading(async move {
        let scenarios = compiled.await.map_err(|_| {
            "internal: the built-in scenarios were not compiled (their thread stopped)"
        })??;
        Ok(requirements::drafts_only_if(drafts_only, scenarios))
    })
}

/// Starts the target, runs the plan and reports; stops every server process
/// on Ctrl-C.
fn execute(
    args: &RunArgs,
    scenarios: Planned,
    opts: &RunOptions,
    policy: &RunPolicy,
) -> Result<u8> {
    let scenarios = catalog(scenarios, args.drafts_only);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let target = match build_target(args).await {
            Ok(t) => t,
            Err(e) => {
                print_not_started(&format!("{e:#}"), args.url.is_some(), &args.headers);
                return Ok(EXIT_UNREACHABLE);
            }
        };
        let code = tokio::select! {
            code = run_and_report(args, target.clone(), opts, scenarios, policy) => code,
            _ = tokio::signal::ctrl_c() => {
                kill_all_groups();
                eprintln!("\ninterrupted: every server process was stopped");
                Ok(EXIT_INTERRUPTED)
            }
        };
        if args.quality && matches!(code, Ok(c) if c <= EXIT_FAILURES) {
            super::quality::after_run(args, &target).await;
        }
        target.stop().await;
        code
    })
}

/// Usage mistakes found before anything starts: a mistyped subcommand taken
/// for a server command, report files that can't be written.
fn check_usage(args: &RunArgs) -> Result<()> {
    if let Some(program) = args.command.first() {
        check_program(program, args.command_after_separator)?;
    }
    for (path, _) in report_files(&args.reports.paths()) {
        check_writable(&path)?;
    }
    for path in [&args.write_baseline].into_iter().flatten() {
        check_writable(path)?;
    }
    Ok(())
}

const SUBCOMMANDS: &[&str] = &[
    "explain",
    "show",
    "merge",
    "matrix",
    "quality",
    "serve-reference",
    "watch",
    "client",
    "sources",
    "help",
];

/// A server command without a slash must be a program on PATH; otherwise,
/// unless it came after `--`, it is most likely a mistyped subcommand. One
/// after `--` is left to fail to start, as a path that names no file does:
/// the run then says the server could not be started (exit 3).
fn check_program(program: &str, after_separator: bool) -> Result<()> {
    if super::argv::is_url(program) && !Path::new(program).exists() {
        bail!(
            "`{program}` is a URL, not a command: test a running Streamable HTTP server with \
             `mcp-conform --url {program}` (a command after it launches the server first)"
        );
    }
    if after_separator || program.contains('/') || on_path(program) {
        return Ok(());
    }
    let hint = select::closest(program, SUBCOMMANDS.iter().copied())
        .map(|c| format!(" (did you mean `mcp-conform {c}`?)"))
        .unwrap_or_default();
    bail!(
        "{program:?} is neither a subcommand nor a program on PATH{hint}; \
         subcommands: {}; a server command goes after `--`",
        SUBCOMMANDS.join(", ")
    )
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| is_executable(&dir.join(program)))
    })
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Windows runs a program by name with any of the PATHEXT extensions.
#[cfg(windows)]
fn is_executable(path: &Path) -> bool {
    let exts = std::env::var("PATHEXT").unwrap_or_else(|_| ".COM;.EXE;.BAT;.CMD".into());
    path.is_file()
        || exts
            .split(';')
            .filter(|e| !e.is_empty())
            .any(|e| path.with_extension(e.trim_start_matches('.')).is_file())
}

/// A report path whose directory can't be created or written is refused
/// before the run, not after it.
fn check_writable(path: &Path) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if path.is_dir() {
        bail!("{}: is a directory, not a file", path.display());
    }
    let mut existing = dir;
    while !existing.exists() {
        match existing.parent() {
            Some(p) if !p.as_os_str().is_empty() => existing = p,
            _ => {
                existing = Path::new(".");
                break;
            }
        }
    }
    if !existing.is_dir() {
        bail!(
            "{}: cannot write there ({} is not a directory)",
            path.display(),
            existing.display()
        );
    }
    let probe = existing.join(format!(".mcp-conform-write-check-{}", std::process::id()));
    match std::fs::write(&probe, b"") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => bail!("{}: cannot write there ({e})", path.display()),
    }
}

/// What a server over HTTP that refused the handshake wants, read from the
/// status the reason names: a credential (401), or a permission the
/// credential lacks (403); None for any other failure.
fn auth_hint(reason: &str, headers: &[(String, String)]) -> Option<&'static str> {
    let credential = headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
    if reason.contains("HTTP POST with 401") {
        return Some(if credential {
            "hint: the server refused the Authorization header given with --header \
             (401 Unauthorized): check the token, its expiry and its audience"
        } else {
            "hint: the server wants a credential (401 Unauthorized): pass one with \
             --header 'Authorization: Bearer TOKEN'"
        });
    }
    if reason.contains("HTTP POST with 403") {
        return Some(
            "hint: the server refused the request (403 Forbidden): the credential may lack \
             a permission or scope the server needs, or the server refuses this client",
        );
    }
    None
}

/// One block for a server that could not be started or reached.
fn print_not_started(reason: &str, over_http: bool, headers: &[(String, String)]) {
    let hint = match over_http.then(|| auth_hint(reason, headers)).flatten() {
        Some(hint) => hint,
        None if over_http => {
            "hint: check that the server listens on the --url address (scheme, host, port \
             and path, e.g. http://127.0.0.1:3000/mcp) and answers POST requests there"
        }
        None if reason.starts_with("cannot start `") => {
            "hint: the command could not be launched: a name without a slash is looked up on \
             PATH, a path is taken from the current directory, and either must be executable"
        }
        None => {
            "hint: run the command by hand to see it start; a stdio server must read JSON-RPC \
             on stdin and write only JSON-RPC to stdout (logs go to stderr)"
        }
    };
    print_nothing_tested("the server could not be started or reached", reason, hint);
}

/// The block of a run that tested nothing because `what` went wrong: the
/// error, the reason line by line, a hint, and the not-run result.
pub fn print_nothing_tested(what: &str, reason: &str, hint: &str) {
    eprintln!("error: {what}; nothing was tested");
    for line in reason.lines() {
        eprintln!("  {line}");
    }
    eprintln!("{hint}");
    eprintln!("conformance result: NOT RUN");
}

fn console(args: &RunArgs) -> ConsoleReporter<std::io::Stdout> {
    let stdout = std::io::stdout();
    let color = stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none();
    ConsoleReporter::new(
        stdout,
        ConsoleOptions {
            diff_lines: args.diff_lines,
            color,
            verbose: args.verbose,
            quiet: args.quiet,
            progress: std::io::stderr().is_terminal(),
            heartbeat: Some(Duration::from_secs(10)),
            github: args.format.unwrap_or_else(default_format) == Format::Github,
            durations: args.durations,
        },
    )
}

/// Workflow annotations inside GitHub Actions, plain text elsewhere.
fn default_format() -> Format {
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        Format::Github
    } else {
        Format::Text
    }
}

/// How to run, as the arguments say.
fn run_options(args: &RunArgs, eras: EraChoice, schemas: Schemas) -> RunOptions {
    let mut opts = RunOptions::new(
        eras,
        Duration::from_millis(args.timeout_ms),
        args.jobs.unwrap_or_else(RunOptions::default_jobs),
    );
    opts.jobs_chosen = args.jobs.is_some();
    opts.shutdown_grace = Duration::from_millis(args.shutdown_grace_ms);
    opts.isolate = args.isolate;
    opts.startup = Duration::from_millis(args.startup_timeout_ms);
    opts.call_tools = args.call_tools;
    opts.call_budget = Duration::from_millis(args.call_budget_ms);
    opts.sample_size = args.sample_size;
    opts.property = args.replay.unwrap_or(PropertyRun {
        seed: args.seed.unwrap_or(0),
        case: None,
    });
    opts.schemas = schemas;
    opts.client_fault = args.client_fault;
    opts.eval_options = eval_options();
    opts
}

/// How expressions are evaluated: `MCP_CONFORM_VERIFY_READS=1` makes every
/// evaluation also check the read analysis (the test suites set it for the
/// binary). The environment is read here, at the edge, and nowhere else.
pub fn eval_options() -> EvalOptions {
    EvalOptions {
        verify_reads: std::env::var_os("MCP_CONFORM_VERIFY_READS").is_some_and(|v| v == "1"),
    }
}

async fn run_and_report(
    args: &RunArgs,
    target: Target,
    opts: &RunOptions,
    scenarios: Catalog,
    policy: &RunPolicy,
) -> Result<u8> {
    // The report lists scenarios in catalog order, known once compiled.
    let order = Arc::new(OnceLock::new());
    let noted = Arc::clone(&order);
    let scenarios = Catalog::loading(async move {
        let scenarios = scenarios.scenarios().await?;
        let _ = noted.set(scenarios.iter().map(|s| s.id.clone()).collect::<Vec<_>>());
        Ok(scenarios)
    });
    let mut console = console(args);
    let mut collector = Collector::default();
    let outcome = run_catalog(target, scenarios, opts, policy, |event| {
        if !matches!(event, Event::Done(_)) || !console_skips_done(&event) {
            console.handle(&event);
        }
        collector.handle(&event);
    })
    .await;
    let order = order.get().map_or(&[][..], Vec::as_slice);
    let Some(data) = collector.finish(order, args.strict) else {
        bail!("the run ended without a summary");
    };
    if let Err(e) = write_reports(args, &data) {
        return Ok(Usage::from(e).report());
    }
    let results = match outcome {
        Ok(r) => r,
        Err(e) => {
            print_not_started(&e.to_string(), args.url.is_some(), &args.headers);
            return Ok(EXIT_UNREACHABLE);
        }
    };
    for note in policy.baseline.label_notes(&results) {
        eprintln!("note: {note}");
    }
    if let Some(path) = &args.write_baseline {
        std::fs::write(path, baseline::write(&results, args.strict))
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote baseline {}", path.display());
    }
    Ok(data
        .summary
        .verdict
        .as_ref()
        .map_or(EXIT_FAILURES, |v| v.exit_code()))
}

/// A run that never started prints its own block instead of a summary.
fn console_skips_done(event: &Event) -> bool {
    matches!(event, Event::Done(s) if matches!(s.verdict, Some(Verdict::NotRun { .. })))
}

/// The SARIF log's name in `--report-dir`.
pub const REPORT_DIR_SARIF: &str = "report.sarif";

/// The report options of `watch` and `client` (a run has the same ones
/// among its own).
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Write the JSON report (format mcp-conform/report@1) to FILE.
    #[arg(long, value_name = "FILE")]
    pub report_json: Option<PathBuf>,
    /// Write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub report_junit: Option<PathBuf>,
    /// Write a Markdown summary (for a CI job summary or a PR comment) to FILE.
    #[arg(long, value_name = "FILE")]
    pub report_markdown: Option<PathBuf>,
    /// Write a self-contained HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub report_html: Option<PathBuf>,
    /// Write a SARIF 2.1.0 log (for GitHub code scanning) to FILE: one result per
    /// distinct failure or warning, one rule per requirement.
    #[arg(long, value_name = "FILE")]
    pub report_sarif: Option<PathBuf>,
    /// Write all five reports into DIR: report.json, junit.xml, report.md,
    /// report.html and report.sarif.
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
}

impl ReportArgs {
    pub fn paths(&self) -> ReportPaths<'_> {
        ReportPaths {
            dir: self.report_dir.as_ref(),
            json: self.report_json.as_ref(),
            junit: self.report_junit.as_ref(),
            markdown: self.report_markdown.as_ref(),
            html: self.report_html.as_ref(),
            sarif: self.report_sarif.as_ref(),
        }
    }
}

/// The report files a command line asks for: `--report-dir` and the five
/// single-file options, as `run`, `watch` and `client` take them.
pub struct ReportPaths<'a> {
    pub dir: Option<&'a PathBuf>,
    pub json: Option<&'a PathBuf>,
    pub junit: Option<&'a PathBuf>,
    pub markdown: Option<&'a PathBuf>,
    pub html: Option<&'a PathBuf>,
    pub sarif: Option<&'a PathBuf>,
}

/// The file reports asked for on the command line (a file named twice, as
/// the GitHub Action names `--report-sarif DIR/report.sarif`, is written once).
pub fn report_files(paths: &ReportPaths<'_>) -> Vec<(PathBuf, Renderer)> {
    let mut files: Vec<(PathBuf, Renderer)> = Vec::new();
    if let Some(dir) = paths.dir {
        files.push((dir.join("report.json"), json::render));
        files.push((dir.join("junit.xml"), junit::render));
        files.push((dir.join("report.md"), markdown::render));
        files.push((dir.join("report.html"), html::render));
        files.push((dir.join(REPORT_DIR_SARIF), github::sarif));
    }
    let single: [(Option<&PathBuf>, Renderer); 5] = [
        (paths.json, json::render),
        (paths.junit, junit::render),
        (paths.markdown, markdown::render),
        (paths.html, html::render),
        (paths.sarif, github::sarif),
    ];
    for (path, render) in single {
        if let Some(p) = path.filter(|p| !files.iter().any(|(f, _)| f == *p)) {
            files.push((p.clone(), render));
        }
    }
    files
}

/// Writes `data` to every report file asked for.
pub fn write_reports(args: &RunArgs, data: &ReportData) -> Result<()> {
    for (path, render) in report_files(&args.reports.paths()) {
        write_file(&path, &render(data))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::auth_hint;

    const REFUSED: &str = "cannot talk to http://127.0.0.1:1/mcp: no answer to initialize: \
                           the server answered its HTTP POST with 401 Unauthorized and no \
                           JSON-RPC response";

    fn header(k: &str) -> Vec<(String, String)> {
        vec![(k.to_string(), "Bearer x".to_string())]
    }

    #[test]
    fn a_401_asks_for_a_credential_or_says_the_one_given_was_refused() {
        let without = auth_hint(REFUSED, &[]).unwrap_or_default();
        assert!(
            without.contains("--header 'Authorization: Bearer TOKEN'"),
            "{without}"
        );
        let with = auth_hint(REFUSED, &header("authorization")).unwrap_or_default();
        assert!(with.contains("refused the Authorization header"), "{with}");
        let other = auth_hint(REFUSED, &header("X-Api-Key")).unwrap_or_default();
        assert_eq!(
            other, without,
            "only an Authorization header is a credential given"
        );
    }

    #[test]
    fn a_403_names_a_missing_permission_and_other_failures_get_no_auth_hint() {
        let forbidden = REFUSED.replace("401 Unauthorized", "403 Forbidden");
        assert!(auth_hint(&forbidden, &[]).is_some_and(|h| h.contains("403 Forbidden")));
        let missing = REFUSED.replace("401 Unauthorized", "404 Not Found");
        assert_eq!(auth_hint(&missing, &[]), None);
        assert_eq!(auth_hint("connection refused", &[]), None);
    }
}
