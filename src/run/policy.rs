//! How a run's results are judged, decided inside the library so that every
//! reporter and the exit code read the same final events: which outcomes
//! fail the run (`--strict`), which failures a baseline expects, which
//! transcripts are kept, and the one verdict line that states the exit code.

use serde::{Deserialize, Serialize};

use super::baseline::Baseline;
use super::outcome::{Outcome, ScenarioResult};

/// The judge's settings for one run.
#[derive(Debug, Clone, Default)]
pub struct RunPolicy {
    pub baseline: Baseline,
    /// Warnings fail the run too.
    pub strict: bool,
    /// Keep the wire transcript of passing and skipped scenarios.
    pub full_transcripts: bool,
}

impl RunPolicy {
    /// Whether `outcome` fails the run, before any baseline.
    pub fn fails(&self, outcome: Outcome) -> bool {
        outcome.fails(self.strict)
    }

    /// Makes a result final: marks an expected failure and drops the
    /// transcript nobody will read. A kept one's messages stay as the text
    /// they came as until a report shows them (`Entry::message`).
    pub fn apply(&self, r: &mut ScenarioResult) {
        r.expected_failure = self.fails(r.outcome) && self.baseline.expects(r);
        if !self.full_transcripts && matches!(r.outcome, Outcome::Pass | Outcome::Skip) {
            r.transcript_dropped += r.transcript.len();
            r.transcript.clear();
        }
    }

    /// The verdict over every final result (all eras).
    pub fn verdict(&self, results: &[ScenarioResult]) -> Verdict {
        let stale: Vec<String> = self
            .baseline
            .stale(results, self.strict)
            .iter()
            .map(|e| format!("{e} ({})", e.position))
            .collect();
        let failing: Vec<&ScenarioResult> =
            results.iter().filter(|r| self.fails(r.outcome)).collect();
        let unexpected = failing.iter().filter(|r| !r.expected_failure).count();
        let expected = failing.len() - unexpected;
        if unexpected > 0 {
            Verdict::Failed {
                unexpected,
                expected,
                stale,
            }
        } else if !stale.is_empty() {
            Verdict::Stale { stale, expected }
        } else if expected > 0 {
            Verdict::Baseline { expected }
        } else {
            Verdict::Ok
        }
    }
}

impl Outcome {
    /// Whether this outcome fails a run (`strict`: warnings too).
    pub fn fails(self, strict: bool) -> bool {
        matches!(self, Outcome::Fail | Outcome::Error) || (strict && self == Outcome::Warn)
    }
}

/// What a run concluded; its exit code and its one result line agree by
/// construction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Verdict {
    /// Nothing failed.
    Ok,
    /// Every failure is listed in the baseline.
    Baseline { expected: usize },
    /// Failures outside the baseline.
    Failed {
        unexpected: usize,
        expected: usize,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        stale: Vec<String>,
    },
    /// No new failure, but baseline entries for scenarios that now pass.
    Stale { stale: Vec<String>, expected: usize },
    /// The server could not be started or reached: nothing was tested.
    NotRun { reason: String },
}

impl Verdict {
    /// The process exit code (README "Exit codes").
    pub fn exit_code(&self) -> u8 {
        match self {
            Verdict::Ok | Verdict::Baseline { .. } => 0,
            Verdict::Failed { .. } | Verdict::Stale { .. } => 1,
            Verdict::NotRun { .. } => 3,
        }
    }

    /// Whether the run gates green.
    pub fn passes(&self) -> bool {
        self.exit_code() == 0
    }

    /// The result line: the outcome the exit code encodes, in words.
    pub fn line(&self) -> String {
        match self {
            Verdict::Ok => "ok".to_string(),
            Verdict::Baseline { expected } => {
                format!("baseline: no new failures, {expected} expected")
            }
            Verdict::Failed {
                unexpected,
                expected,
                stale,
            } => {
                let mut line = format!("FAILED: {unexpected} unexpected failure(s)");
                if *expected > 0 {
                    line.push_str(&format!(", {expected} expected"));
                }
                if !stale.is_empty() {
                    line.push_str(&format!(", {} stale baseline entr(ies)", stale.len()));
                }
                line
            }
            Verdict::Stale { stale, .. } => format!(
                "STALE baseline: no new failures, but {} entr(ies) no longer fail",
                stale.len()
            ),
            Verdict::NotRun { reason } => format!("NOT RUN: {reason}"),
        }
    }

    /// Baseline entries that should be removed.
    pub fn stale(&self) -> &[String] {
        match self {
            Verdict::Failed { stale, .. } | Verdict::Stale { stale, .. } => stale,
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::baseline;

    fn result(id: &str, outcome: Outcome) -> ScenarioResult {
        ScenarioResult::for_test(id, outcome)
    }

    fn judged(policy: &RunPolicy, mut results: Vec<ScenarioResult>) -> Verdict {
        results.iter_mut().for_each(|r| policy.apply(r));
        policy.verdict(&results)
    }

    #[test]
    fn a_warning_fails_only_under_strict() {
        let loose = RunPolicy::default();
        let strict = RunPolicy {
            strict: true,
            ..RunPolicy::default()
        };
        let run = || {
            vec![
                result("base/a", Outcome::Pass),
                result("base/b", Outcome::Warn),
            ]
        };
        assert_eq!(judged(&loose, run()), Verdict::Ok);
        let v = judged(&strict, run());
        assert_eq!(v.exit_code(), 1);
        assert!(v.line().starts_with("FAILED: 1 unexpected"), "{}", v.line());
    }

    #[test]
    fn baseline_expected_and_stale_entries() {
        let policy = RunPolicy {
            baseline: baseline::parse("b.yaml", "server:\n  - base/a\n  - base/b\n")
                .unwrap_or_else(|e| panic!("{e}")),
            ..RunPolicy::default()
        };
        let v = judged(
            &policy,
            vec![
                result("base/a", Outcome::Fail),
                result("base/b", Outcome::Fail),
            ],
        );
        assert_eq!(v, Verdict::Baseline { expected: 2 });
        assert_eq!(v.exit_code(), 0);
        let v = judged(
            &policy,
            vec![
                result("base/a", Outcome::Fail),
                result("base/b", Outcome::Pass),
            ],
        );
        assert_eq!(v.exit_code(), 1);
        assert!(v.line().starts_with("STALE baseline"), "{}", v.line());
        assert_eq!(v.stale().len(), 1);
    }

    #[test]
    fn not_run_is_exit_three() {
        let v = Verdict::NotRun {
            reason: "the server exited with status 1".into(),
        };
        assert_eq!(v.exit_code(), 3);
        assert_eq!(v.line(), "NOT RUN: the server exited with status 1");
    }
}
