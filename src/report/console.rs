//! Console output in the style of `cargo test`: a line per scenario as it
//! ends, then the details of every failure and warning, then a summary line.

use std::io::Write;

use crate::run::events::{Event, RunInfo, Summary};
use crate::run::outcome::{Outcome, ScenarioResult};
use crate::session::transcript::Direction;

/// How the console should look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConsoleOptions {
    pub color: bool,
    /// Wire transcripts of failing scenarios.
    pub verbose: bool,
    /// Only failures and the summary.
    pub quiet: bool,
    /// A progress bar is drawn (on a terminal only).
    pub progress: bool,
}

/// Writes human-readable output for a stream of events.
pub struct ConsoleReporter<W: Write> {
    out: W,
    opts: ConsoleOptions,
    results: Vec<ScenarioResult>,
    bar: Option<indicatif::ProgressBar>,
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
        Self {
            out,
            opts,
            results: Vec::new(),
            bar: None,
        }
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
            Event::Finished(result) => self.finished(result),
            Event::Done(summary) => self.done(summary),
        }
    }

    fn started(&mut self, info: &RunInfo) {
        let name = info
            .server
            .pointer("/serverInfo/name")
            .and_then(|v| v.as_str())
            .unwrap_or("unnamed server");
        let version = info
            .server
            .pointer("/serverInfo/version")
            .and_then(|v| v.as_str())
            .unwrap_or("?");
        if !self.opts.quiet {
            self.emit(&format!(
                "\nrunning {} scenarios against {name} {version} ({}, protocol {}, {})",
                info.scenarios, info.transport, info.era, info.target
            ));
        }
        if self.opts.progress {
            let bar = indicatif::ProgressBar::new(info.scenarios as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {wide_msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            self.bar = Some(bar);
        }
    }

    fn finished(&mut self, r: &ScenarioResult) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        let show = !self.opts.quiet || matches!(r.outcome, Outcome::Fail | Outcome::Error);
        if show {
            let mut line = format!("scenario {} ... {}", r.id, self.outcome_word(r.outcome));
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
        let mut problems: Vec<ScenarioResult> = self
            .results
            .iter()
            .filter(|r| {
                matches!(r.outcome, Outcome::Fail | Outcome::Error | Outcome::Warn)
                    && !r.expected_failure
            })
            .cloned()
            .collect();
        problems.sort_by(|a, b| {
            (a.outcome == Outcome::Warn)
                .cmp(&(b.outcome == Outcome::Warn))
                .then(a.id.cmp(&b.id))
        });
        if !problems.is_empty() {
            let _ = writeln!(self.out, "\n{}", self.paint(BOLD, "failures and warnings:"));
        }
        for r in &problems {
            let text = self.details(r);
            let _ = write!(self.out, "{text}");
        }
        let _ = writeln!(self.out);
        if summary.profiles.len() > 1 {
            for (profile, counts) in &summary.profiles {
                let _ = writeln!(self.out, "  {profile:<24} {}", counts.line());
            }
        }
        if summary.expected_failures > 0 {
            let _ = writeln!(
                self.out,
                "{} of the failures are expected (baseline)",
                summary.expected_failures
            );
        }
        let status = if summary.overall.failed + summary.overall.errors > summary.expected_failures
        {
            self.paint(RED, "FAILED")
        } else {
            self.paint(GREEN, "ok")
        };
        let _ = writeln!(
            self.out,
            "conformance result: {status}. {}; finished in {:.2}s",
            summary.overall.line(),
            summary.duration_ms as f64 / 1000.0
        );
        let _ = self.out.flush();
    }

    /// The full explanation of one failing or warning scenario.
    pub fn details(&self, r: &ScenarioResult) -> String {
        let mut s = String::new();
        let head = format!(
            "---- {} [{}] {} ----",
            r.id,
            r.level,
            self.outcome_word(r.outcome)
        );
        s.push_str(&format!("\n{}\n", self.paint(BOLD, &head)));
        s.push_str(&format!("{}\n", r.title));
        if !r.requirements.is_empty() {
            s.push_str(&format!("requirement: {}\n", r.requirements.join(", ")));
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
            let color = if f.outcome == Outcome::Fail {
                RED
            } else {
                YELLOW
            };
            s.push_str(&format!(
                "{}\n",
                self.paint(color, &format!("{}: {}", f.outcome, f.headline()))
            ));
            if let Some(path) = &f.path {
                if !path.is_empty() {
                    s.push_str(&format!("  first mismatch at: {path}\n"));
                }
            }
            if let Some(diff) = &f.diff {
                for line in diff.lines() {
                    let painted = if line.starts_with('+') && !line.starts_with("+++") {
                        self.paint(GREEN, line)
                    } else if line.starts_with('-') && !line.starts_with("---") {
                        self.paint(RED, line)
                    } else {
                        line.to_string()
                    };
                    s.push_str(&format!("  {painted}\n"));
                }
            } else if let Some(serde_json::Value::String(expr)) = &f.expected {
                s.push_str(&format!("  expression: {expr}\n"));
            }
        }
        if !r.alternatives.is_empty() {
            s.push_str(&format!("server chose: {}\n", r.alternatives.join(", ")));
        }
        if !r.stderr_tail.trim().is_empty() {
            s.push_str("server stderr (tail):\n");
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
                let text = match &e.message {
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
