//! The one event stream of a run; every reporter is fed from it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::outcome::{Outcome, ScenarioResult};
use super::policy::Verdict;

/// Facts about the run, known before the first scenario ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The command line or URL under test.
    pub target: String,
    pub transport: String,
    /// The newest protocol version tested (the only one unless several were).
    pub era: String,
    /// Every protocol version tested, oldest first; each scenario ran once in each.
    #[serde(default)]
    pub eras: Vec<String>,
    /// Per era, what the probe found (tool names, resource URIs, prompt names).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub probes: BTreeMap<String, Value>,
    /// The server's handshake answer (serverInfo, capabilities, instructions…).
    pub server: Value,
    pub harness_version: String,
    /// RFC 3339 start time.
    pub started_at: String,
    pub scenarios: usize,
    pub fixture_match: bool,
    /// The seed of generated cases (`--seed`; 0 unless asked otherwise):
    /// `--replay SEED` draws the same cases again.
    #[serde(default)]
    pub seed: u64,
    /// Which tools the run could call, and how many it left uncalled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<ToolCalls>,
    /// Server processes the run started, probe and every scenario's
    /// included (known when the run is done; absent in process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_starts: Option<usize>,
    /// Where the default number of scenarios at once was narrowed for a
    /// large catalog: to what, from what, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs_narrowed: Option<NarrowedJobs>,
}

/// Scenarios at once where `-j` was left to its default and the catalog
/// is large (`RunOptions::jobs_for`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NarrowedJobs {
    /// Scenarios at once in this run.
    pub jobs: usize,
    /// The default it was narrowed from.
    pub default: usize,
    /// The most tools a probe listed.
    pub tools: usize,
}

impl NarrowedJobs {
    /// What a run with `opts` does for a server that lists `tools` tools:
    /// None where the number stays.
    pub fn of(opts: &super::catalog_run::RunOptions, tools: usize) -> Option<Self> {
        let jobs = opts.jobs_for(tools);
        (jobs < opts.jobs).then_some(NarrowedJobs {
            jobs,
            default: opts.jobs,
            tools,
        })
    }

    /// The console's line for it.
    pub fn line(&self) -> String {
        format!(
            "{} tools listed: {} scenarios at a time instead of {}, so that their listings fit in memory (-j N chooses)",
            self.tools, self.jobs, self.default
        )
    }
}

/// `--call-tools` and the listed tools it leaves uncalled, by reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCalls {
    pub policy: String,
    pub listed: usize,
    pub uncalled: usize,
    /// Uncalled for lacking `readOnlyHint: true`.
    pub not_read_only: usize,
    /// Uncalled for `destructiveHint: true` (though marked read-only).
    pub destructive: usize,
}

impl ToolCalls {
    pub fn of(policy: super::executor::CallTools, probe: &super::probe::Probe) -> Self {
        use super::executor::CallTools;
        let listed = probe.tool_names.len();
        let h = probe.hints;
        let (not_read_only, destructive) = match policy {
            CallTools::ReadOnly => (h.not_read_only, h.destructive),
            _ => (0, 0),
        };
        let uncalled = match policy {
            CallTools::None => listed,
            CallTools::ReadOnly => not_read_only + destructive,
            CallTools::All => 0,
        };
        Self {
            policy: policy.as_str().to_string(),
            listed,
            uncalled,
            not_read_only,
            destructive,
        }
    }

    /// One line for the console: how many tools went uncalled and why.
    pub fn line(&self) -> Option<String> {
        if self.uncalled == 0 {
            return None;
        }
        let why = match self.policy.as_str() {
            "none" => "--call-tools none".to_string(),
            _ => format!(
                "{} not marked readOnlyHint: true, {} marked destructiveHint: true; --call-tools all calls them",
                self.not_read_only, self.destructive
            ),
        };
        Some(format!(
            "tools: {} of {} left uncalled ({why})",
            self.uncalled, self.listed
        ))
    }
}

/// Counts per outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub passed: usize,
    pub failed: usize,
    pub warned: usize,
    pub info: usize,
    pub skipped: usize,
    pub errors: usize,
}

impl Counts {
    pub fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Pass => self.passed += 1,
            Outcome::Fail => self.failed += 1,
            Outcome::Warn => self.warned += 1,
            Outcome::Info => self.info += 1,
            Outcome::Skip => self.skipped += 1,
            Outcome::Error => self.errors += 1,
        }
    }

    pub fn total(&self) -> usize {
        self.passed + self.failed + self.warned + self.info + self.skipped + self.errors
    }

    /// "N passed, N failed, N warned, N skipped" (+ info and errors when present).
    pub fn line(&self) -> String {
        let mut line = format!(
            "{} passed, {} failed, {} warned, {} skipped",
            self.passed, self.failed, self.warned, self.skipped
        );
        if self.info > 0 {
            line.push_str(&format!(", {} info", self.info));
        }
        if self.errors > 0 {
            line.push_str(&format!(", {} errors", self.errors));
        }
        line
    }
}

/// Totals of a finished run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub overall: Counts,
    pub profiles: BTreeMap<String, Counts>,
    /// Counts per protocol version tested.
    #[serde(default)]
    pub eras: BTreeMap<String, Counts>,
    pub duration_ms: u64,
    /// Failures listed in the `--baseline` file (counted in `failed` too).
    #[serde(default)]
    pub expected_failures: usize,
    /// What the run concluded (the exit code and the result line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Server processes the run started (None in process): reported as
    /// the JSON report's `run.server_starts`.
    #[serde(default, skip_serializing)]
    pub server_starts: Option<usize>,
}

impl Summary {
    pub fn from_results(results: &[ScenarioResult], duration_ms: u64) -> Self {
        let mut s = Summary {
            duration_ms,
            ..Summary::default()
        };
        for r in results {
            s.expected_failures += usize::from(r.expected_failure);
            s.overall.add(r.outcome);
            s.profiles
                .entry(r.profile.clone())
                .or_default()
                .add(r.outcome);
            if !r.era.is_empty() {
                s.eras.entry(r.era.clone()).or_default().add(r.outcome);
            }
        }
        s
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Started(Box<RunInfo>),
    /// A scenario (by id) began to run; its `Finished` follows. Reporters
    /// that only show results ignore it; a progress line names what is running.
    ScenarioStarted(String),
    Finished(Box<ScenarioResult>),
    Done(Summary),
}

#[cfg(test)]
mod tests {
    use super::ToolCalls;

    fn calls(policy: &str, listed: usize, not_read_only: usize, destructive: usize) -> ToolCalls {
        let uncalled = match policy {
            "none" => listed,
            "all" => 0,
            _ => not_read_only + destructive,
        };
        ToolCalls {
            policy: policy.into(),
            listed,
            uncalled,
            not_read_only,
            destructive,
        }
    }

    #[test]
    fn the_console_line_says_how_many_tools_went_uncalled_and_why() {
        assert_eq!(
            calls("read-only", 11, 7, 1).line().as_deref(),
            Some("tools: 8 of 11 left uncalled (7 not marked readOnlyHint: true, 1 marked destructiveHint: true; --call-tools all calls them)")
        );
        assert_eq!(
            calls("none", 3, 0, 0).line().as_deref(),
            Some("tools: 3 of 3 left uncalled (--call-tools none)")
        );
        assert_eq!(calls("all", 3, 0, 0).line(), None);
        assert_eq!(calls("read-only", 2, 0, 0).line(), None);
    }
}
