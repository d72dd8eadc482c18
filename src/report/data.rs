//! Everything a file report shows, collected from the event stream (or read
//! back from a JSON report, for `merge`). File formats render from this.

use serde::{Deserialize, Serialize};

use crate::run::events::{Event, RunInfo, Summary};
use crate::run::outcome::ScenarioResult;
use crate::run::policy::Verdict;

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
        self.scenarios
            .iter()
            .filter(|r| r.outcome.fails(self.strict))
    }

    /// The run's verdict: an icon and the result line the exit code encodes
    /// (decided by the run's policy; recomputed for reports written before
    /// verdicts were recorded).
    pub fn verdict(&self) -> (&'static str, String) {
        let verdict = self.summary.verdict.clone().unwrap_or_else(|| {
            let policy = crate::run::RunPolicy {
                strict: self.strict,
                ..crate::run::RunPolicy::default()
            };
            policy.verdict(&self.scenarios)
        });
        let icon = match &verdict {
            Verdict::Ok => "✅",
            Verdict::Baseline { .. } => "⚠️",
            Verdict::NotRun { .. } => "⛔",
            Verdict::Failed { .. } | Verdict::Stale { .. } => "❌",
        };
        (icon, verdict.line())
    }

    /// What applied to the server, the profiles it does not offer, and why.
    pub fn overview(&self) -> super::overview::Overview {
        let briefs: Vec<super::overview::Brief> = self
            .scenarios
            .iter()
            .map(super::overview::Brief::of)
            .collect();
        super::overview::Overview::of(&briefs, &self.run.eras)
    }

    /// The protocol versions tested, for a heading.
    pub fn eras_text(&self) -> String {
        if self.run.eras.is_empty() {
            self.run.era.clone()
        } else {
            self.run.eras.join(", ")
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
            Event::Done(s) => {
                if let Some(info) = self.info.as_mut() {
                    info.server_starts = s.server_starts;
                }
                self.summary = Some(s.clone());
            }
            Event::ScenarioStarted(_) => {}
        }
    }

    /// The collected run, with scenarios sorted by `order` (ids in catalog order).
    pub fn finish(self, order: &[String], strict: bool) -> Option<ReportData> {
        let mut scenarios = self.results;
        let eras = self
            .info
            .as_ref()
            .map(|i| i.eras.clone())
            .unwrap_or_default();
        scenarios.sort_by_key(|r| {
            (
                order
                    .iter()
                    .position(|id| *id == r.id)
                    .unwrap_or(usize::MAX),
                eras.iter().position(|e| *e == r.era),
            )
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
