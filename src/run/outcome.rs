//! What running a scenario produced: the outcome, why, and the evidence.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::scenario::model::{Level, Place, Scenario, SharedFinding, SpecRef};
use crate::session::transcript::Entry;

/// The verdict of one scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Pass,
    Fail,
    Warn,
    Info,
    Skip,
    /// The scenario could not be evaluated (handshake failed, bad expression…).
    Error,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Warn => "warn",
            Outcome::Info => "info",
            Outcome::Skip => "skip",
            Outcome::Error => "error",
        }
    }

    /// What a problem at `level` turns into.
    pub fn for_level(level: Level) -> Outcome {
        match level {
            Level::Must => Outcome::Fail,
            Level::Should => Outcome::Warn,
            Level::May | Level::Info => Outcome::Info,
        }
    }

    /// How bad an outcome is, for picking the worst of several findings.
    pub fn severity(self) -> u8 {
        match self {
            Outcome::Skip => 0,
            Outcome::Pass => 1,
            Outcome::Info => 2,
            Outcome::Warn => 3,
            Outcome::Fail => 4,
            Outcome::Error => 5,
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a finding of a generated case (`generate:`, run by `property`)
/// carries: enough to see the input and to replay it exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PropertyFailure {
    pub seed: u64,
    /// The index of the first failing case (0-based).
    pub case: usize,
    /// Cases the scenario draws per run.
    pub cases: usize,
    /// The failing case as drawn.
    pub original: Value,
    /// The simplest case found that still fails the same check.
    pub minimal: Value,
    /// Shrink attempts made (each one real request sequence).
    pub shrink_attempts: usize,
    /// The command line that replays the failing case.
    pub replay: String,
}

/// One problem (or recorded observation) found while running a scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub outcome: Outcome,
    /// Which step, e.g. "step 'filtered'" (None for scenario-level checks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// The stable id of the step, assertion or pattern leaf that found it
    /// (`steps[2]`, `steps[2].assert[0]`, `steps[1].expect.result.tools`);
    /// baselines name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// Where that is written: `file:line:col` (a built-in scenario by its
    /// repository path, `scenarios/<profile>/<file>.yaml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// The for_each item the step was running with, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<Value>,
    pub message: String,
    /// The pattern or expression that was expected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    /// The step's answer as bound in CEL, without the request (which the
    /// harness sent; see `request`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<Value>,
    /// Who sent `actual` when it is not the server: `client` for a
    /// finding on a client's message (watch, client runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_by: Option<String>,
    /// What the harness sent for the step (method and params).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Value>,
    /// Unified diff from the pattern to the answer, bounded around the first
    /// mismatch (long arrays and strings elided); reporters may cap its lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Path of the first mismatch inside the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Paths of the other mismatches found (a bounded list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_paths: Vec<String>,
    /// A generated case's failure: seed, case, original and minimal input,
    /// the replay command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<Box<PropertyFailure>>,
}

impl Finding {
    pub fn new(outcome: Outcome, step: Option<String>, message: impl Into<String>) -> Self {
        Self {
            outcome,
            step,
            step_id: None,
            location: None,
            item: None,
            message: message.into(),
            expected: None,
            actual: None,
            sent_by: None,
            request: None,
            diff: None,
            path: None,
            other_paths: Vec::new(),
            property: None,
        }
    }

    /// Names the place in the scenario file that found it.
    pub fn at(mut self, s: &Scenario, place: &Place) -> Self {
        self.step_id = Some(place.id.clone()).filter(|id| !id.is_empty());
        self.location = Some(s.location(place));
        self
    }

    /// The headline as a compiler prints it: `path:line:col: outcome: headline`.
    pub fn pointed(&self) -> String {
        match &self.location {
            Some(at) => format!("{at}: {}: {}", self.outcome, self.headline()),
            None => format!("{}: {}", self.outcome, self.headline()),
        }
    }

    /// Attaches a step's answer: what the server sent as `actual`, the
    /// request the harness attached to it as `request`.
    pub fn with_answer(mut self, answer: &Value) -> Self {
        if answer.is_null() {
            return self;
        }
        let mut actual = answer.clone();
        if let Some(map) = actual.as_object_mut() {
            self.request = map.remove("request");
        }
        self.actual = Some(actual);
        self
    }

    /// The one-line form: "step 'x' (g = "pages"): message".
    pub fn headline(&self) -> String {
        let mut out = String::new();
        if let Some(step) = &self.step {
            out.push_str(step);
            if let Some(item) = &self.item {
                out.push_str(&format!(" [item {item}]"));
            }
            out.push_str(": ");
        }
        out.push_str(&self.message);
        out
    }
}

/// Everything about one scenario's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    pub id: String,
    pub title: String,
    pub profile: String,
    pub level: Level,
    pub requirements: Vec<String>,
    /// What a requirement's level rests on where it is not its quote's
    /// keyword ("SEP1300-FLT-01: definition"; docs/interpretations.md#levels-on-a-basis).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bases: Vec<String>,
    pub spec: Vec<SpecRef>,
    pub origin: String,
    /// The protocol version the scenario ran in.
    #[serde(default)]
    pub era: String,
    pub outcome: Outcome,
    /// A failure listed in the `--baseline` file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expected_failure: bool,
    /// What a failure, warning or info broke: the level of the check that
    /// decided the verdict and the requirements at that level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broken: Option<Broken>,
    /// Servers on a common SDK share this failure or warning: where that is
    /// explained (shown with a failure or warning only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_finding: Option<SharedFinding>,
    /// One line: the reason for a skip, the first finding of a failure, or what was recorded.
    pub message: String,
    pub findings: Vec<Finding>,
    /// Labels of the accepted alternatives (`$one_of` … `$label`) the server chose.
    pub alternatives: Vec<String>,
    /// When the scenario started, in milliseconds from the start of the
    /// run (its probes come first): with `duration_ms`, where a run's time
    /// went. None where there is no such schedule (`client`, `watch`) and
    /// in a report from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_ms: Option<u64>,
    pub duration_ms: u64,
    pub transcript: Vec<Entry>,
    pub transcript_dropped: usize,
    pub stderr_tail: String,
    /// How each server process of the scenario ended.
    pub server_exits: Vec<String>,
}

impl ScenarioResult {
    /// A result for a scenario that did not run.
    pub fn skipped(s: &Scenario, reason: String) -> Self {
        Self::blank(s, Outcome::Skip, reason)
    }

    pub fn blank(s: &Scenario, outcome: Outcome, message: String) -> Self {
        Self {
            id: s.id.clone(),
            title: s.title.clone(),
            profile: s.profile.clone(),
            level: s.level,
            requirements: s.requirements.clone(),
            bases: crate::requirements::bases_of(&s.requirements),
            spec: s.spec.clone(),
            origin: s.origin.clone(),
            era: String::new(),
            outcome,
            expected_failure: false,
            broken: Broken::of(outcome, s.level, &s.requirements),
            shared_finding: s.shared_finding.clone(),
            message,
            findings: Vec::new(),
            alternatives: Vec::new(),
            started_ms: None,
            duration_ms: 0,
            transcript: Vec::new(),
            transcript_dropped: 0,
            stderr_tail: String::new(),
            server_exits: Vec::new(),
        }
    }
}

impl ScenarioResult {
    /// The level and requirements a report shows beside the result: for a
    /// failure, warning or info, what it broke (a warning never beside a
    /// MUST, a failure never beside a SHOULD); otherwise the scenario's.
    /// Computed from the result's own fields (a report read back from an
    /// older version has no `broken`).
    pub fn shown(&self) -> Broken {
        Broken::of(self.outcome, self.level, &self.requirements).unwrap_or_else(|| Broken {
            level: self.level,
            requirements: self.requirements.clone(),
        })
    }

    /// The shared-finding note, for a result that failed or warned.
    pub fn shared_note(&self) -> Option<String> {
        let shared = self.shared_finding.as_ref()?;
        matches!(self.outcome, Outcome::Fail | Outcome::Warn)
            .then(|| format!("shared: {} (see {})", shared.note, shared.see))
    }
}

/// The level a verdict was graded at and the requirements it broke.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Broken {
    pub level: Level,
    pub requirements: Vec<String>,
}

impl Broken {
    /// What a result with `outcome` in a scenario at `scenario_level` broke.
    /// A verdict is graded at the level of the check that found it, so the
    /// outcome names that level; of the scenario's requirements, those at
    /// that level are the ones broken (all of them when none is, as when a
    /// check grades one part of a requirement lower than the rest).
    pub fn of(outcome: Outcome, scenario_level: Level, requirements: &[String]) -> Option<Broken> {
        let level = match outcome {
            Outcome::Fail => Level::Must,
            Outcome::Warn => Level::Should,
            Outcome::Info if matches!(scenario_level, Level::May | Level::Info) => scenario_level,
            Outcome::Info => Level::Info,
            Outcome::Pass | Outcome::Skip | Outcome::Error => return None,
        };
        let informative = |l: Level| matches!(l, Level::May | Level::Info);
        let at_level: Vec<String> = requirements
            .iter()
            .filter(|id| {
                crate::requirements::level_of(id)
                    .is_some_and(|l| l == level || (informative(l) && informative(level)))
            })
            .cloned()
            .collect();
        Some(Broken {
            level,
            requirements: if at_level.is_empty() {
                requirements.to_vec()
            } else {
                at_level
            },
        })
    }
}

#[cfg(test)]
impl ScenarioResult {
    /// The result `outcome` of a one-step MUST scenario `id` (in profile
    /// base), for the tests of what reads results.
    pub(crate) fn for_test(id: &str, outcome: Outcome) -> Self {
        let text =
            format!("id: {id}\ntitle: t\nprofile: base\nlevel: MUST\nsteps:\n  - request: ping\n");
        let s = crate::scenario::load::load_str("x.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
        Self::blank(&s, outcome, String::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_warning_names_the_should_it_broke_not_the_scenario_level() {
        let reqs = ids(&["BASE-ID-01", "BASE-ID-02"]);
        let warn = Broken::of(Outcome::Warn, Level::Must, &reqs);
        assert_eq!(
            warn,
            Some(Broken {
                level: Level::Should,
                requirements: ids(&["BASE-ID-02"])
            })
        );
        let fail = Broken::of(Outcome::Fail, Level::Must, &reqs);
        assert_eq!(
            fail.map(|b| (b.level, b.requirements)),
            Some((Level::Must, ids(&["BASE-ID-01"])))
        );
        assert_eq!(Broken::of(Outcome::Pass, Level::Must, &reqs), None);
    }

    #[test]
    fn without_a_requirement_at_that_level_all_are_named_at_the_level_broken() {
        // base/handshake: one MUST requirement, one of its checks a SHOULD.
        let reqs = ids(&["BASE-INIT-01"]);
        let warn = Broken::of(Outcome::Warn, Level::Must, &reqs);
        assert_eq!(
            warn.map(|b| (b.level, b.requirements)),
            Some((Level::Should, reqs))
        );
        let info = Broken::of(Outcome::Info, Level::May, &[]);
        assert_eq!(info.map(|b| b.level), Some(Level::May));
    }

    #[test]
    fn a_result_read_back_without_broken_still_shows_the_level_broken() {
        let mut r = ScenarioResult::for_test("base/x", Outcome::Warn);
        assert_eq!(r.broken.as_ref().map(|b| b.level), Some(Level::Should));
        r.broken = None;
        assert_eq!(r.shown().level, Level::Should);
        let pass = ScenarioResult::for_test("base/y", Outcome::Pass);
        assert_eq!(pass.shown().level, Level::Must);
    }
}
