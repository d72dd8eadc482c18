//! Everything a file report shows, collected from the event stream (or read
//! back from a JSON report, for `merge`). File formats render from this.

use serde::{Deserialize, Serialize};

use crate::run::events::{Event, RunInfo, Summary};
use crate::run::outcome::{Outcome, ScenarioResult};

/// The version tag of the JSON report format.
pub const FORMAT: &str = "mcp-conform/report@1";

/// A finished run, as every file format sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportData {
    pub format: String,
    pub run: RunInfo,
    pub summary: Summary,
    /// Scenarios in catalog order.
    pub scenarios: Vec<ScenarioResult>,
    /// `--strict`: warnings count as failures.
    #[serde(default)]
    pub strict: bool,
}

impl ReportData {
    /// Scenarios whose outcome fails the run.
    pub fn failing(&self) -> impl Iterator<Item = &ScenarioResult> {
        self.scenarios.iter().filter(|r| {
            matches!(r.outcome, Outcome::Fail | Outcome::Error)
                || (self.strict && r.outcome == Outcome::Warn)
        })
    }

    /// The run's verdict: an icon and words. Failures a baseline expected
    /// are named apart, so a report agrees with the exit code without
    /// calling a failing server conformant.
    pub fn verdict(&self) -> (&'static str, String) {
        let failing = self.failing().count();
        let expected = self.failing().filter(|r| r.expected_failure).count();
        match (failing, expected) {
            (0, _) => ("✅", "conforms".into()),
            (f, e) if f == e => (
                "⚠️",
                format!("no new failures; {e} expected failure(s) listed in the baseline"),
            ),
            _ => ("❌", "does not conform".into()),
        }
    }
}

/// Builds a [`ReportData`] from events.
#[derive(Debug, Default)]
pub struct Collector {
    info: Option<RunInfo>,
    results: Vec<ScenarioResult>,
    summary: Option<Summary>,
}

impl Collector {
    pub fn handle(&mut self, event: &Event) {
        match event {
            Event::Started(info) => self.info = Some((**info).clone()),
            Event::Finished(r) => self.results.push((**r).clone()),
            Event::Done(s) => self.summary = Some(s.clone()),
            Event::ScenarioStarted(_) => {}
        }
    }

    /// The collected run, with scenarios sorted by `order` (ids in catalog order).
    pub fn finish(self, order: &[String], strict: bool) -> Option<ReportData> {
        let mut scenarios = self.results;
        scenarios.sort_by_key(|r| {
            order
                .iter()
                .position(|id| *id == r.id)
                .unwrap_or(usize::MAX)
        });
        Some(ReportData {
            format: FORMAT.to_string(),
            run: self.info?,
            summary: self.summary?,
            scenarios,
            strict,
        })
    }
}
