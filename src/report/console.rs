//! Console output in the style of `cargo test`: a line per scenario as it
//! ends, then the details of every failure and warning, then a summary line.
//! On a terminal, a progress line names the scenarios still running.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::evidence::{self, DEFAULT_DIFF_LINES, SENT_CHARS};
use super::overview::{self, Brief, Overview, Problem};
use crate::run::events::{Event, RunInfo, Summary};
use crate::run::outcome::{Finding, Outcome, ScenarioResult};
use crate::run::policy::Verdict;
use crate::run::property::PropertyFailure;
use crate::session::transcript::Direction;

/// Scenarios running now, with when each began.
type Running = Arc<Mutex<Vec<(String, Instant)>>>;

/// How the console should look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConsoleOptions {
    pub color: bool,
    /// Lines of each finding's diff shown (`--diff-lines`; 0: all).
    pub diff_lines: usize,
    /// Wire transcripts of failing scenarios.
    pub verbose: bool,
    /// Only failures and the summary.
    pub quiet: bool,
    /// A progress bar is drawn (on a terminal only).
    pub progress: bool,
    /// Without a terminal: every this often, a line on stderr saying what
    /// is still running (a CI log shows the run is alive).
    pub heartbeat: Option<Duration>,
    /// Problems also as GitHub workflow annotations (under -q: instead of
    /// their line).
    pub github: bool,
    /// After the summary, this many of the slowest scenario runs, each with
    /// when it started (`--durations`; 0: every run).
    pub durations: Option<usize>,
}

impl Default for ConsoleOptions {
    fn default() -> Self {
        Self {
            color: false,
            diff_lines: DEFAULT_DIFF_LINES,
            verbose: false,
            quiet: false,
            progress: false,
            heartbeat: None,
            github: false,
            durations: None,
        }
    }
}

/// A scenario's evidence as plain text with every diff line: what the
/// console shows, for reports that carry it as text (JUnit).
pub fn plain_details(r: &ScenarioResult) -> String {
    let opts = ConsoleOptions {
        diff_lines: 0,
        ..ConsoleOptions::default()
    };
    let text = ConsoleReporter::new(std::io::sink(), opts).details(r);
    text.trim_start().to_string()
}

/// Writes human-readable output for a stream of events.
pub struct ConsoleReporter<W: Write> {
    out: W,
    opts: ConsoleOptions,
    /// Diff lines shown per finding (None: all).
    diff_lines: Option<usize>,
    results: Vec<ScenarioResult>,
    /// Every result, in brief (for the summary).
    briefs: Vec<Brief>,
    /// The eras tested, oldest first.
    eras: Vec<String>,
    bar: Option<indicatif::ProgressBar>,
    /// Results name their era (the run tests more than one).
    several_eras: bool,
    running: Running,
    /// Dropped when the run is done, which ends the heartbeat thread.
    heartbeat: Option<std::sync::mpsc::Sender<()>>,
    /// Each result's timing, kept for `--durations`.
    timings: Vec<Timing>,
}

/// When one scenario run started and how long it took.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Timing {
    id: String,
    era: String,
    started_ms: Option<u64>,
    duration_ms: u64,
}

impl Timing {
    fn of(r: &ScenarioResult) -> Self {
        Self {
            id: r.id.clone(),
            era: r.era.clone(),
            started_ms: r.started_ms,
            duration_ms: r.duration_ms,
        }
    }
}

/// ` [2025-11-25]` after a scenario's id, when the run tests several eras.
fn era_tag(several_eras: bool, era: &str) -> String {
    if several_eras && !era.is_empty() {
        format!(" [{era}]")
    } else {
        String::new()
    }
}

/// The `--durations` lines: the `n` slowest runs (0: all), longest first,
/// each with its span within the run where one was recorded.
fn slowest_lines(timings: &[Timing], n: usize, several_eras: bool) -> Vec<String> {
    let mut sorted: Vec<&Timing> = timings.iter().collect();
    sorted.sort_by(|a, b| b.duration_ms.cmp(&a.duration_ms).then(a.id.cmp(&b.id)));
    let shown = if n == 0 {
        sorted.len()
    } else {
        n.min(sorted.len())
    };
    let secs = |ms: u64| ms as f64 / 1000.0;
    let mut lines = vec![format!(
        "slowest {shown} of {} scenario runs (seconds from the start of the run):",
        timings.len()
    )];
    for t in &sorted[..shown] {
        let era = era_tag(several_eras, &t.era);
        let span = t.started_ms.map_or(String::new(), |start| {
            format!(", {:.2} to {:.2}", secs(start), secs(start + t.duration_ms))
        });
        lines.push(format!(
            "  {:>6.2} s  {}{era}{span}",
            secs(t.duration_ms),
            t.id
        ));
    }
    lines
}

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const CYAN: &str = "\x1b[36m";
const DIM: &str = "\x1b[2m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

impl<W: Write> ConsoleReporter<W> {
    pub fn new(out: W, opts: ConsoleOptions) -> Self {
        let lines = opts.diff_lines;
        Self {
            out,
            opts,
            diff_lines: (!opts.verbose && lines > 0).then_some(lines),
            results: Vec::new(),
            briefs: Vec::new(),
            eras: Vec::new(),
            bar: None,
            several_eras: false,
            running: Running::default(),
            heartbeat: None,
            timings: Vec::new(),
        }
    }

    /// Shows at most `lines` lines of each finding's diff (None: all).
    pub fn with_diff_lines(mut self, lines: Option<usize>) -> Self {
        self.diff_lines = lines;
        self
    }

    fn paint(&self, color: &str, text: &str) -> String {
        if self.opts.color {
            format!("{color}{text}{RESET}")
        } else {
            text.to_string()
        }
    }

    fn outcome_word(&self, outcome: Outcome) -> String {
        let (color, word) = match outcome {
            Outcome::Pass => (GREEN, "ok"),
            Outcome::Fail => (RED, "FAILED"),
            Outcome::Warn => (YELLOW, "warn"),
            Outcome::Info => (CYAN, "info"),
            Outcome::Skip => (DIM, "skipped"),
            Outcome::Error => (RED, "ERROR"),
        };
        self.paint(color, word)
    }

    fn emit(&mut self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => {
                let _ = writeln!(self.out, "{line}");
            }
        }
    }

    /// Handles one event.
    pub fn handle(&mut self, event: &Event) {
        match event {
            Event::Started(info) => self.started(info),
            Event::ScenarioStarted(id) => {
                if let Ok(mut running) = self.running.lock() {
                    running.push((id.clone(), Instant::now()));
                }
            }
            Event::Finished(result) => self.finished(result),
            Event::Done(summary) => self.done(summary),
        }
    }

    fn started(&mut self, info: &RunInfo) {
        // A client run names the client it grades (its clientInfo).
        let (peer, unnamed) = if info.server.get("clientInfo").is_some() {
            ("clientInfo", "the client")
        } else {
            ("serverInfo", "unnamed server")
        };
        let name = info
            .server
            .pointer(&format!("/{peer}/name"))
            .and_then(|v| v.as_str())
            .unwrap_or(unnamed);
        let version = info
            .server
            .pointer(&format!("/{peer}/version"))
            .and_then(|v| v.as_str())
            .unwrap_or("?");
        let graded = if peer == "clientInfo" && version == "?" {
            name.to_string()
        } else {
            format!("{name} {version}")
        };
        self.several_eras = info.eras.len() > 1;
        self.eras = info.eras.clone();
        let eras = if info.eras.is_empty() {
            info.era.clone()
        } else {
            info.eras.join(", ")
        };
        if !self.opts.quiet && !info.eras.is_empty() {
            // A seed other than the default is what a rerun needs: say it up front.
            let seed = if info.seed == 0 {
                String::new()
            } else {
                format!(", seed {}", info.seed)
            };
            self.emit(&format!(
                "\nrunning {} scenarios against {graded} ({}, protocol {eras}, {}{seed})",
                info.scenarios, info.transport, info.target
            ));
            if let Some(answered) = negotiated_other_revision(info) {
                self.emit(&format!(
                    "the server answered initialize with {answered}, a revision this run does not test: each era's rules are checked on that session"
                ));
            }
            if let Some(line) = info.tool_calls.as_ref().and_then(|t| t.line()) {
                self.emit(&line);
            }
            if let Some(narrowed) = &info.jobs_narrowed {
                self.emit(&narrowed.line());
            }
        }
        if self.opts.progress {
            let bar = indicatif::ProgressBar::new(info.scenarios as u64);
            let running = self.running.clone();
            // Drawn at every tick, so the times grow while a scenario waits.
            let names = move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                if let Ok(running) = running.lock() {
                    let _ = w.write_str(&running_line(&running, Instant::now()));
                }
            };
            bar.set_style(
                indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {running:.dim}")
                    .map(|style| style.with_key("running", names))
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar.enable_steady_tick(Duration::from_millis(250));
            self.bar = Some(bar);
        } else if let Some(every) = self.opts.heartbeat {
            self.heartbeat = Some(heartbeat(self.running.clone(), every));
        }
    }

    fn finished(&mut self, r: &ScenarioResult) {
        if let Ok(mut running) = self.running.lock() {
            if let Some(i) = running.iter().position(|(id, _)| *id == r.id) {
                running.remove(i);
            }
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        self.briefs.push(Brief::of(r));
        // A skip is no run: its time is the probe's decision, not the server's.
        if self.opts.durations.is_some() && r.outcome != Outcome::Skip {
            self.timings.push(Timing::of(r));
        }
        // Under -q, problems are printed once each at the end.
        if !self.opts.quiet {
            let era = era_tag(self.several_eras, &r.era);
            let mut line = format!(
                "scenario {}{era} ... {}",
                r.id,
                self.outcome_word(r.outcome)
            );
            if r.expected_failure {
                line.push_str(&self.paint(DIM, " (expected: listed in the baseline)"));
            }
            if matches!(r.outcome, Outcome::Skip | Outcome::Info | Outcome::Warn)
                && !r.message.is_empty()
            {
                line.push_str(&self.paint(DIM, &format!(" ({})", one_line(&r.message, 140))));
            }
            self.emit(&line);
        }
        // Only problems are shown again at the end; passing results are not kept.
        if matches!(r.outcome, Outcome::Fail | Outcome::Error | Outcome::Warn) {
            self.results.push(r.clone());
        }
    }

    fn done(&mut self, summary: &Summary) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        self.heartbeat = None;
        let results = std::mem::take(&mut self.results);
        let problems = overview::problems(&results);
        let view = Overview::of(&self.briefs, &self.eras);
        if self.opts.quiet {
            for p in &problems {
                let line = if self.opts.github {
                    super::github::annotation(p)
                } else {
                    self.problem_line(p)
                };
                self.line(&line);
            }
        } else {
            if self.opts.github {
                for p in &problems {
                    self.line(&super::github::annotation(p));
                }
            }
            if !problems.is_empty() {
                let head = self.paint(BOLD, "failures and warnings:");
                self.line(&format!("\n{head}"));
            }
            for p in &problems {
                let text = self.details_in(p.result, &p.eras.join(", "));
                let _ = write!(self.out, "{text}");
            }
            self.line("");
        }
        self.summary_lines(summary, &view);
        if let Some(n) = self.opts.durations {
            for line in slowest_lines(&self.timings, n, self.several_eras) {
                self.line(&line);
            }
        }
        if let Some(p) = problems.first().filter(|_| self.opts.quiet) {
            self.line(&hints(p.result));
        }
        let verdict = summary.verdict.clone().unwrap_or(Verdict::Ok);
        for entry in verdict.stale() {
            self.line(&format!(
                "stale baseline entry {entry}: the scenario no longer fails; remove it"
            ));
        }
        let color = if verdict.passes() { GREEN } else { RED };
        let result = format!("conformance result: {}", self.paint(color, &verdict.line()));
        self.line(&result);
        let _ = self.out.flush();
    }

    fn line(&mut self, text: &str) {
        let _ = writeln!(self.out, "{text}");
    }

    /// What applied and how it went, per era and per profile (without -q),
    /// and the profiles the server does not offer.
    fn summary_lines(&mut self, summary: &Summary, view: &Overview) {
        let skipped = if view.skipped > 0 {
            format!("; {} skipped as not applicable", view.skipped)
        } else {
            String::new()
        };
        let head = format!(
            "{}{skipped}; finished in {:.2}s",
            view.headline(),
            summary.duration_ms as f64 / 1000.0
        );
        self.line(&head);
        if self.opts.quiet {
            if let Some(line) = view.not_offered_line() {
                self.line(&line);
            }
        } else {
            if view.eras.len() > 1 {
                for (era, counts) in &view.eras {
                    self.line(&format!(
                        "  protocol {era:<12} {}",
                        overview::counted_line(counts)
                    ));
                }
            }
            // Profile counts run across every era: they add up to the same whole.
            let across = if view.eras.len() > 1 {
                ", all eras"
            } else {
                ""
            };
            for (profile, counts) in &view.profiles {
                self.line(&format!(
                    "  profile {profile:<13} {}{across}",
                    overview::counted_line(counts)
                ));
            }
            for n in &view.not_offered {
                self.line(&format!("  not offered: {}: {}", n.profile, n.reason));
            }
        }
        if summary.expected_failures > 0 {
            self.line(&format!(
                "{} of the failures are expected (baseline)",
                summary.expected_failures
            ));
        }
    }

    /// One distinct problem on one line (`-q`): level, scenario,
    /// requirement, the reason, and the eras it occurred in.
    fn problem_line(&self, p: &Problem) -> String {
        let r = p.result;
        let word = self.outcome_word(r.outcome);
        let shown = r.shown();
        let reqs = if shown.requirements.is_empty() {
            String::new()
        } else {
            format!(" {}", shown.requirements.join(","))
        };
        let eras = if self.several_eras && !p.eras.is_empty() {
            format!(" ({})", p.eras.join(", "))
        } else {
            String::new()
        };
        let mut line = format!(
            "{word} [{}] {}{reqs}{eras}: {}",
            shown.level,
            r.id,
            one_line(&r.message, 200)
        );
        if let Some(note) = r.shared_note() {
            line.push_str(&format!("\n  {}", self.paint(DIM, &note)));
        }
        line
    }

    /// The full explanation of one failing or warning scenario.
    pub fn details(&self, r: &ScenarioResult) -> String {
        self.details_in(r, &r.era)
    }

    /// `details`, naming `eras` (one or several, comma-separated) in the head.
    fn details_in(&self, r: &ScenarioResult, eras: &str) -> String {
        let mut s = String::new();
        let era = if eras.is_empty() {
            String::new()
        } else {
            format!(" (protocol {eras})")
        };
        let shown = r.shown();
        let head = format!(
            "---- {} [{}] {}{era} ----",
            r.id,
            shown.level,
            self.outcome_word(r.outcome)
        );
        s.push_str(&format!("\n{}\n", self.paint(BOLD, &head)));
        s.push_str(&format!("{}\n", r.title));
        if !shown.requirements.is_empty() {
            s.push_str(&format!("requirement: {}\n", shown.requirements.join(", ")));
        }
        if let Some(note) = r.shared_note() {
            s.push_str(&format!("{note}\n"));
        }
        for spec in &r.spec {
            s.push_str(&format!("spec: {}\n", spec.cite()));
            if let Some(q) = &spec.quote {
                s.push_str(&format!("  \"{}\"\n", one_line(q, 400)));
            }
        }
        if r.findings.is_empty() {
            s.push_str(&format!("{}\n", self.paint(RED, &r.message)));
        }
        for f in r.findings.iter().filter(|f| f.outcome != Outcome::Pass) {
            s.push_str(&self.finding(f));
        }
        if !r.alternatives.is_empty() {
            s.push_str(&format!("server chose: {}\n", r.alternatives.join(", ")));
        }
        if !r.stderr_tail.trim().is_empty() {
            // A client run's tail is the client's output, not a server's.
            let whose = if r.profile == "client" {
                "client output"
            } else {
                "server stderr"
            };
            s.push_str(&format!("{whose} (may be unrelated):\n"));
            for line in tail_lines(&r.stderr_tail, 20) {
                s.push_str(&format!("  {}\n", self.paint(DIM, line)));
            }
        }
        if self.opts.verbose {
            s.push_str("wire transcript:\n");
            for e in &r.transcript {
                let arrow = match e.direction {
                    Direction::Sent => "→",
                    Direction::Received => "←",
                    Direction::Note => "·",
                };
                let text = match &*e.message() {
                    serde_json::Value::String(t) => t.clone(),
                    v => v.to_string(),
                };
                s.push_str(&format!(
                    "  {:>6}ms {} {arrow} {}\n",
                    e.at_ms,
                    e.session,
                    one_line(&text, 400)
                ));
            }
            if r.transcript_dropped > 0 {
                s.push_str(&format!(
                    "  … {} more entries not kept\n",
                    r.transcript_dropped
                ));
            }
        }
        s
    }
}

impl<W: Write> ConsoleReporter<W> {
    /// One finding: its headline, where it departs, what the server sent and
    /// the diff (capped at `diff_lines`).
    fn finding(&self, f: &Finding) -> String {
        let color = if f.outcome == Outcome::Fail {
            RED
        } else {
            YELLOW
        };
        let mut s = format!("{}\n", self.paint(color, &f.pointed()));
        if let Some(path) = f.path.as_deref().filter(|p| !p.is_empty()) {
            s.push_str(&format!("  first mismatch at: {path}\n"));
        }
        if !f.other_paths.is_empty() {
            s.push_str(&format!("  also at: {}\n", f.other_paths.join(", ")));
        }
        if let Some(p) = &f.property {
            s.push_str(&property_lines(p));
        }
        if let Some(actual) = &f.actual {
            let (label, sent) = evidence::sent(actual, f.sent_by.as_deref(), SENT_CHARS);
            s.push_str(&format!("  {label}: {sent}\n"));
        }
        if let Some(text) = &f.diff {
            let capped = if f.outcome == Outcome::Warn && !self.opts.verbose {
                evidence::first_change(text, self.diff_lines)
            } else {
                evidence::cap(text, self.diff_lines)
            };
            for line in capped.lines {
                let painted = if line.starts_with('+') && !line.starts_with("+++") {
                    self.paint(GREEN, line)
                } else if line.starts_with('-') && !line.starts_with("---") {
                    self.paint(RED, line)
                } else {
                    line.to_string()
                };
                s.push_str(&format!("  {painted}\n"));
            }
            if capped.hidden > 0 {
                let note = format!(
                    "… {} more diff lines (all of them with -v or --diff-lines 0) …",
                    capped.hidden
                );
                s.push_str(&format!("  {}\n", self.paint(DIM, &note)));
            }
        } else if let Some(serde_json::Value::String(expr)) = &f.expected {
            s.push_str(&format!("  expression: {expr}\n"));
        }
        s
    }
}

/// A generated case's failure: seed and case, the minimal and the original
/// input (cut to one line each), and how to replay it.
fn property_lines(p: &PropertyFailure) -> String {
    let one_line = |v: &serde_json::Value| {
        let text = escape_invisible(&v.to_string());
        match text.char_indices().nth(SENT_CHARS) {
            Some((at, _)) => format!("{}… ({} characters)", &text[..at], text.chars().count()),
            None => text,
        }
    };
    format!(
        "  generated case {} of {} (seed {}), shrunk in {} attempts\n  minimal input: {}\n  original input: {}\n  replay: {}\n",
        p.case,
        p.cases,
        p.seed,
        p.shrink_attempts,
        one_line(&p.minimal),
        one_line(&p.original),
        p.replay
    )
}

/// Characters a terminal does not show as themselves (C1 controls, bidi
/// overrides and isolates, zero-width joiners) written as `\u{…}`, so that a
/// generated input reads as what was sent.
fn escape_invisible(text: &str) -> String {
    text.chars()
        .map(|c| {
            let n = u32::from(c);
            let hidden = c.is_control()
                || (0x200B..=0x200F).contains(&n)
                || (0x202A..=0x202E).contains(&n)
                || (0x2066..=0x2069).contains(&n)
                || n == 0xFEFF;
            if hidden {
                format!("\\u{{{n:04x}}}")
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A thread that writes to stderr every `every` what is still running, until
/// the returned sender is dropped.
fn heartbeat(running: Running, every: Duration) -> std::sync::mpsc::Sender<()> {
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let started = Instant::now();
    std::thread::spawn(move || {
        while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
            let line = running
                .lock()
                .map(|r| running_line(&r, Instant::now()))
                .unwrap_or_default();
            if !line.is_empty() {
                eprintln!("[{:.0}s] still {line}", started.elapsed().as_secs_f64());
            }
        }
    });
    stop
}

/// The progress line's list of running scenarios, longest-running first:
/// `running base/x 5.2s, base/y 0.4s (+3 more)`.
fn running_line(running: &[(String, Instant)], now: Instant) -> String {
    const SHOWN: usize = 3;
    if running.is_empty() {
        return String::new();
    }
    let mut by_age: Vec<&(String, Instant)> = running.iter().collect();
    by_age.sort_by_key(|(_, since)| *since);
    let names: Vec<String> = by_age
        .iter()
        .take(SHOWN)
        .map(|(id, since)| {
            let secs = now.saturating_duration_since(*since).as_secs_f64();
            format!("{id} {secs:.1}s")
        })
        .collect();
    let more = running.len().saturating_sub(SHOWN);
    let more = if more > 0 {
        format!(" (+{more} more)")
    } else {
        String::new()
    };
    format!("running {}{more}", names.join(", "))
}

/// The revision the server answered `initialize` with, when it is none of
/// those the run tests: a server that speaks only an older one (2024-11-05)
/// answers every initialize with it, as version negotiation allows, and
/// the run's eras then name what was asked, not what was spoken.
fn negotiated_other_revision(info: &RunInfo) -> Option<&str> {
    let answered = info.server.get("protocolVersion")?.as_str()?;
    let tested = info.eras.iter().chain([&info.era]).any(|e| e == answered);
    (!tested).then_some(answered)
}

/// Where to read more about the first problem (`-q`).
fn hints(r: &ScenarioResult) -> String {
    let explain = r
        .shown()
        .requirements
        .first()
        .map(|req| format!(", the rule: `mcp-conform explain {req}`"))
        .unwrap_or_default();
    let scenario = match r
        .id
        .strip_prefix("client/")
        .filter(|_| r.profile == "client")
    {
        // A client scenario's result is `client/<name>/<transport>`.
        Some(rest) => {
            let name = rest.rsplit_once('/').map_or(rest, |(n, _)| n);
            format!("`mcp-conform client --list -k {name}`")
        }
        None => format!("`mcp-conform show {}`", r.id),
    };
    format!("more: the scenario: {scenario}{explain}; the evidence: run without -q")
}

fn tail_lines(text: &str, n: usize) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// A text on one line, cut to `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        let cut: String = flat.chars().take(max).collect();
        format!("{cut}…")
    } else {
        flat
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::outcome::Finding;

    fn result_with(finding: Finding) -> ScenarioResult {
        let mut r = ScenarioResult::for_test("base/y", Outcome::Fail);
        r.findings = vec![finding];
        r
    }

    fn timing(id: &str, era: &str, started_ms: Option<u64>, duration_ms: u64) -> Timing {
        Timing {
            id: id.into(),
            era: era.into(),
            started_ms,
            duration_ms,
        }
    }

    #[test]
    fn durations_lists_the_slowest_runs_longest_first_with_their_span() {
        let timings = [
            timing("base/a", "2025-06-18", Some(10), 5),
            timing("core/slow", "2025-11-25", Some(566), 1184),
            timing("core/mid", "2025-06-18", Some(900), 300),
            timing("watch/rule", "", None, 40),
        ];
        let lines = slowest_lines(&timings, 2, true);
        assert_eq!(
            lines,
            [
                "slowest 2 of 4 scenario runs (seconds from the start of the run):",
                "    1.18 s  core/slow [2025-11-25], 0.57 to 1.75",
                "    0.30 s  core/mid [2025-06-18], 0.90 to 1.20",
            ]
        );
        let all = slowest_lines(&timings, 0, false);
        assert_eq!(all.len(), 5, "{all:?}");
        assert_eq!(all[4], "    0.01 s  base/a, 0.01 to 0.01");
        assert_eq!(
            all[3], "    0.04 s  watch/rule",
            "no span where none was recorded"
        );
    }

    #[test]
    fn durations_are_printed_after_the_summary_only_when_asked() {
        let run = |durations: Option<usize>| {
            let mut console = ConsoleReporter::new(
                Vec::new(),
                ConsoleOptions {
                    durations,
                    ..ConsoleOptions::default()
                },
            );
            let mut r = ScenarioResult::for_test("base/y", Outcome::Pass);
            r.started_ms = Some(120);
            r.duration_ms = 250;
            console.handle(&Event::Finished(Box::new(r)));
            console.handle(&Event::Done(Summary::from_results(&[], 400)));
            String::from_utf8(console.out).unwrap_or_default()
        };
        let asked = run(Some(3));
        assert!(
            asked.contains("slowest 1 of 1 scenario runs")
                && asked.contains("0.25 s  base/y, 0.12 to 0.37"),
            "{asked}"
        );
        assert!(!run(None).contains("slowest"));
    }

    #[test]
    fn the_same_failure_in_several_eras_is_explained_once() {
        let f = Finding::new(Outcome::Fail, Some("step 1".into()), "no answer");
        let mut a = result_with(f.clone());
        a.era = "2025-06-18".into();
        a.message = "no answer".into();
        let mut b = result_with(f);
        b.era = "2025-11-25".into();
        b.message = "no answer".into();
        let mut c = result_with(Finding::new(Outcome::Fail, Some("step 1".into()), "other"));
        c.era = "2026-07-28".into();
        c.message = "other".into();
        let results = [a, b, c];
        let problems = overview::problems(&results);
        assert_eq!(problems.len(), 2);
        let console = ConsoleReporter::new(Vec::new(), ConsoleOptions::default());
        let first = console.details_in(problems[0].result, &problems[0].eras.join(", "));
        assert!(
            first.contains("(protocol 2025-06-18, 2025-11-25)"),
            "{first}"
        );
        let mut quiet = ConsoleReporter::new(Vec::new(), ConsoleOptions::default());
        quiet.several_eras = true;
        assert_eq!(
            quiet.problem_line(&problems[0]),
            "FAILED [MUST] base/y (2025-06-18, 2025-11-25): no answer"
        );
    }

    #[test]
    fn the_header_says_when_the_server_answered_another_revision() {
        let mut info = RunInfo {
            target: "server".into(),
            transport: "stdio".into(),
            era: "2025-11-25".into(),
            eras: vec!["2025-06-18".into(), "2025-11-25".into()],
            probes: Default::default(),
            server: serde_json::json!({"protocolVersion": "2024-11-05"}),
            harness_version: String::new(),
            started_at: String::new(),
            scenarios: 1,
            fixture_match: false,
            seed: 0,
            tool_calls: None,
            server_starts: None,
            jobs_narrowed: None,
        };
        assert_eq!(negotiated_other_revision(&info), Some("2024-11-05"));
        info.server = serde_json::json!({"protocolVersion": "2025-11-25"});
        assert_eq!(negotiated_other_revision(&info), None, "an era tested");
        info.server = serde_json::json!({"supportedVersions": ["2026-07-28"]});
        assert_eq!(negotiated_other_revision(&info), None, "no initialize");
    }

    #[test]
    fn a_long_diff_is_capped_unless_verbose() {
        let mut f = Finding::new(Outcome::Fail, Some("step 1".into()), "bad")
            .with_answer(&serde_json::json!({"id": 1, "request": {"method": "ping"}}));
        f.diff = Some((1..=100).map(|i| format!("+line {i}\n")).collect());
        let r = result_with(f);
        let quiet = ConsoleReporter::new(Vec::new(), ConsoleOptions::default())
            .with_diff_lines(Some(40))
            .details(&r);
        assert!(
            quiet.contains("+line 40\n") && !quiet.contains("+line 41\n"),
            "{quiet}"
        );
        assert!(quiet.contains("… 60 more diff lines"), "{quiet}");
        assert!(quiet.contains("  server sent: {\"id\":1}\n"), "{quiet}");
        let verbose = ConsoleOptions {
            verbose: true,
            ..ConsoleOptions::default()
        };
        let whole = ConsoleReporter::new(Vec::new(), verbose).details(&r);
        assert!(
            whole.contains("+line 100\n") && !whole.contains("more diff lines"),
            "{whole}"
        );
    }

    #[test]
    fn the_progress_line_names_the_longest_running_scenarios() {
        let now = Instant::now();
        let at = |ms: u64| now - Duration::from_millis(ms);
        let running = vec![
            ("a".to_string(), at(100)),
            ("b".to_string(), at(5200)),
            ("c".to_string(), at(300)),
            ("d".to_string(), at(50)),
        ];
        assert_eq!(
            running_line(&running, now),
            "running b 5.2s, c 0.3s, a 0.1s (+1 more)"
        );
        assert_eq!(running_line(&[], now), "");
    }
}
