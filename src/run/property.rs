//! The case loop of a property scenario (`generate:`): draw each case from
//! the run's seed, run the block's steps and checks with the case bound,
//! stop at the first case that fails, shrink it (each attempt a real
//! request sequence, bounded) and report the original and minimal inputs
//! with the seed and the command line that replays them.

use serde_json::Value;

use super::executor::{Execution, Stop};
use super::outcome::Outcome;
pub use super::outcome::PropertyFailure;
use crate::scenario::generate::shrink::Shrinker;
use crate::scenario::generate::{case_json, Case, Generate};

/// The seed of the run's generated cases (`--seed`, `--replay`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PropertyRun {
    /// Default 0: a run is repeatable unless `--seed random` asks otherwise.
    pub seed: u64,
    /// `--replay SEED:CASE`: only this case of each property scenario.
    pub case: Option<usize>,
}

impl PropertyRun {
    /// Parses `SEED` or `SEED:CASE` (what a failure prints after `--replay`).
    pub fn parse_replay(text: &str) -> Result<Self, String> {
        let (seed, case) = match text.split_once(':') {
            Some((s, c)) => (s, Some(c)),
            None => (text, None),
        };
        let seed = seed
            .trim()
            .parse::<u64>()
            .map_err(|e| format!("--replay {text:?}: the seed is not a number ({e})"))?;
        let case = case
            .map(|c| c.trim().parse::<usize>())
            .transpose()
            .map_err(|e| format!("--replay {text:?}: the case is not a number ({e})"))?;
        Ok(Self { seed, case })
    }
}

enum CaseVerdict {
    Pass,
    /// A check failed: which one (step label and the check), to tell a
    /// shrink candidate that fails the same way from one that breaks another.
    Fail(String),
    /// The scenario cannot go on (error, skip): no shrinking.
    Stopped,
}

/// Runs the cases of `g`; `Err(Stop)` when a case failed at MUST level or
/// the scenario cannot go on.
pub(super) async fn run_cases(exec: &mut Execution<'_>, g: &Generate) -> Result<(), Stop> {
    let generated = sources(exec, g).and_then(|s| examples(exec, g).map(|e| (s, e)));
    let (sources, examples) = match generated {
        Ok(lists) => lists,
        Err(message) => {
            // A setup capture that failed (its finding already recorded,
            // a warning under SHOULD) leaves the lists it fed undefined:
            // that finding is the verdict, not a harness error.
            if !exec.failed_or_warned_since(0) {
                exec.error = Some(message);
            }
            return Err(Stop);
        }
    };
    let run = exec.cfg.property;
    let indices: Vec<usize> = match run.case {
        Some(c) => vec![c],
        None => (0..g.cases).collect(),
    };
    let last = indices.len().saturating_sub(1);
    for (position, index) in indices.into_iter().enumerate() {
        // A case that starts a server may start the next case's with it.
        exec.spare_wanted = position < last;
        let case = g.draw(run.seed, &exec.s.id, index, &sources, &examples);
        let mark = exec.findings.len();
        let signature = match try_case(exec, g, &case).await {
            CaseVerdict::Pass => {
                dedupe_notes(exec, mark);
                continue;
            }
            CaseVerdict::Stopped => return Err(Stop),
            CaseVerdict::Fail(signature) => signature,
        };
        // Shrinking stops at no known case: nothing is started ahead.
        exec.spare_wanted = false;
        exec.close_spare().await;
        let mut kept = exec.findings.split_off(mark);
        let gens = g.with_sources(&sources);
        let mut shrinker = Shrinker::new(case.clone(), g.max_shrinks);
        while let Some(candidate) = shrinker.next(&gens) {
            let verdict = try_case(exec, g, &candidate).await;
            let found = exec.findings.split_off(mark);
            if exec.error.is_some() || exec.skipped.is_some() {
                // A candidate the scenario cannot evaluate says nothing about the property.
                exec.error = None;
                exec.skipped = None;
                continue;
            }
            if matches!(&verdict, CaseVerdict::Fail(s) if *s == signature) {
                shrinker.accept(candidate, &gens);
                kept = found;
            }
        }
        // Leave the minimal case bound, as the reported findings saw it.
        bind_case(exec, shrinker.current());
        let failure = PropertyFailure {
            seed: run.seed,
            case: index,
            cases: g.cases,
            original: case_json(&case),
            minimal: case_json(shrinker.current()),
            shrink_attempts: shrinker.attempts(),
            replay: replay_command(exec, run.seed, index),
        };
        let stops = kept.iter().any(|f| f.outcome == Outcome::Fail);
        for mut f in kept {
            if matches!(f.outcome, Outcome::Fail | Outcome::Warn) {
                f.property = Some(Box::new(failure.clone()));
            }
            exec.findings.push(f);
        }
        return if stops { Err(Stop) } else { Ok(()) };
    }
    Ok(())
}

/// Each generator's list, evaluated once over the setup steps' answers.
fn sources(exec: &Execution<'_>, g: &Generate) -> Result<Vec<Vec<Value>>, String> {
    g.vars
        .iter()
        .map(|(name, gen)| match gen.source() {
            None => Ok(Vec::new()),
            Some(e) => e.eval_list(&exec.bindings).map_err(|err| {
                format!(
                    "generate: the list of '{name}' ({:?}) could not be evaluated: {err}",
                    e.source
                )
            }),
        })
        .collect()
}

/// The values of each `examples:` entry, evaluated once over the setup
/// steps' answers.
fn examples(exec: &Execution<'_>, g: &Generate) -> Result<Vec<Case>, String> {
    g.examples
        .iter()
        .enumerate()
        .map(|(k, example)| {
            example
                .iter()
                .map(|(name, e)| match e.eval(&exec.bindings) {
                    Ok(v) => Ok((name.clone(), v)),
                    Err(err) => Err(format!(
                        "generate: example {k}'s '{name}' ({:?}) could not be evaluated: {err}",
                        e.source
                    )),
                })
                .collect()
        })
        .collect()
}

fn bind_case(exec: &mut Execution<'_>, case: &Case) {
    for (name, value) in case {
        exec.bindings.insert(name.clone(), value.clone());
    }
}

async fn try_case(exec: &mut Execution<'_>, g: &Generate, case: &Case) -> CaseVerdict {
    bind_case(exec, case);
    let mark = exec.findings.len();
    let mut stopped = false;
    for (index, step) in g.steps.iter().enumerate() {
        if exec.run_step(index, step).await.is_err() {
            stopped = true;
            break;
        }
    }
    if !stopped {
        for a in &g.asserts {
            if exec.check_assert(None, None, a, None, None).is_err() {
                break;
            }
        }
    }
    if exec.error.is_some() || exec.skipped.is_some() {
        return CaseVerdict::Stopped;
    }
    match exec.findings[mark..]
        .iter()
        .find(|f| matches!(f.outcome, Outcome::Fail | Outcome::Warn))
    {
        // An assert is named by its expression; an expect by where the
        // answer departs (its pattern holds the case's values).
        Some(f) => CaseVerdict::Fail(format!(
            "{} {}",
            f.step.as_deref().unwrap_or("assert"),
            match &f.expected {
                Some(Value::String(source)) => source.clone(),
                _ => f.path.clone().unwrap_or_else(|| f.message.clone()),
            }
        )),
        None => CaseVerdict::Pass,
    }
}

/// A passing case's notes (info findings) are kept once, not once per case.
fn dedupe_notes(exec: &mut Execution<'_>, mark: usize) {
    let fresh = exec.findings.split_off(mark);
    for f in fresh {
        if !exec.findings.iter().any(|old| old.message == f.message) {
            exec.findings.push(f);
        }
    }
}

/// The command line that runs this scenario's failing case again.
fn replay_command(exec: &Execution<'_>, seed: u64, case: usize) -> String {
    let target = exec.cfg.target.as_argument();
    format!(
        "mcp-conform -k {} --protocol-version {} --replay {seed}:{case} {target}",
        exec.s.id, exec.cfg.era.version
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_takes_a_seed_and_an_optional_case() {
        assert_eq!(
            PropertyRun::parse_replay("42"),
            Ok(PropertyRun {
                seed: 42,
                case: None
            })
        );
        assert_eq!(
            PropertyRun::parse_replay("7:13"),
            Ok(PropertyRun {
                seed: 7,
                case: Some(13)
            })
        );
        assert!(PropertyRun::parse_replay("x").is_err());
        assert!(PropertyRun::parse_replay("1:y").is_err());
    }
}
