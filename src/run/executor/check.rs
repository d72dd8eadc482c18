//! The checks of a step's answer: its `expect` pattern, its `assert`
//! expressions, its `capture`s and its `skip_unless`. Each problem becomes a
//! finding at the level of the step (or assertion), pointing at its place in
//! the scenario file.

use serde_json::Value;

use super::{Execution, Stop};
use crate::json::ReadTree;
use crate::run::outcome::{Finding, Outcome};
use crate::scenario::diff;
use crate::scenario::model::{Assertion, Level, Step};
use crate::scenario::pattern::{kind_mismatch, AltVerdict, Pattern};

/// Other mismatch paths a finding lists besides the first.
const MAX_OTHER_PATHS: usize = 10;

impl Execution<'_> {
    /// `skip_unless`: a server that turns out not to offer the feature
    /// makes the scenario not applicable (skip), unless something already failed.
    pub(super) fn check_applicable(&mut self, step: &Step, label: &str) -> Result<(), Stop> {
        let Some(req) = &step.skip_unless else {
            return Ok(());
        };
        match req.expr.eval_bool(&self.bindings) {
            Ok(true) => Ok(()),
            Ok(false) => {
                // The reason may name what the server offered (`${size(picks)}`).
                let reason = self.interpolated_text(label, &req.reason)?;
                self.skipped = Some(reason);
                Err(Stop)
            }
            Err(e) => {
                let msg = format!("skip_unless {:?}: {e}", req.expr.source);
                self.step_finding(step, label, msg, &req.expr.place)
            }
        }
    }

    /// Binds each `capture` in order (a later one may read an earlier one);
    /// one that cannot be evaluated is a finding and stays unbound, or,
    /// when it reads a setup step answered with an error (see
    /// `Execution::setup_refusal`), makes the scenario not exercised.
    pub(super) fn capture(&mut self, step: &Step, label: &str) -> Result<(), Stop> {
        let scenario = self.s;
        let whole = ReadTree::whole();
        for (name, e) in &step.captures {
            // Only what the scenario's expressions read of the capture is
            // made of a new value (see `Compiled::eval_kept`).
            let kept = scenario.reads.get(name).unwrap_or(&whole);
            match e.program.eval_kept(&self.bindings, kept) {
                Ok(v) => self.bindings.insert(name.clone(), v),
                Err(err) => {
                    let refused = self
                        .refused
                        .iter()
                        .find(|(id, _)| e.program.reads_variable(id));
                    if let Some((_, why)) = refused {
                        // Skip, unless something already failed (`verdict`).
                        self.skipped = Some(format!(
                            "not exercised: {why}; capture '{name}' needs its result"
                        ));
                        return Err(Stop);
                    }
                    let msg = format!(
                        "capture '{name}' = {:?} could not be evaluated: {err}",
                        e.source
                    );
                    self.step_finding(step, label, msg, &e.place)?;
                }
            }
        }
        Ok(())
    }

    /// The step's `expect` (resolved against the bindings first) and its
    /// `assert`s, on one answer (of one `for_each` item, if any).
    pub(super) fn check(
        &mut self,
        step: &Step,
        label: &str,
        answer: &Value,
        item: Option<&Value>,
    ) -> Result<(), Stop> {
        if let Some(pattern) = &step.expect {
            let pattern = pattern.resolve(&self.bindings).map_err(|e| {
                self.error = Some(format!("{label}: {e}"));
                Stop
            })?;
            let level = self.level_for(Some(step), None);
            self.check_expect(step, label, &pattern, answer, item, level)?;
        }
        for a in &step.asserts {
            self.check_assert(Some(step), Some(label), a, item, Some(answer))?;
        }
        Ok(())
    }

    /// Matches the answer against the pattern: a mismatch is a finding with
    /// its diff and paths; a match records the alternatives the server chose
    /// and the notes of `warn`/`info` alternatives.
    fn check_expect(
        &mut self,
        step: &Step,
        label: &str,
        pattern: &Pattern,
        answer: &Value,
        item: Option<&Value>,
        level: Level,
    ) -> Result<(), Stop> {
        match pattern.matches(Some(answer)) {
            Ok(matched) => {
                for (_, l) in matched.labels {
                    if !self.labels.contains(&l) {
                        self.labels.push(l);
                    }
                }
                for (verdict, note) in matched.verdicts {
                    let v = if verdict == AltVerdict::Warn {
                        Level::Should
                    } else {
                        Level::Info
                    };
                    let mut f = Finding::new(
                        Outcome::for_level(level.weaker(v)),
                        Some(label.to_string()),
                        note,
                    )
                    .at(self.s, &step.expect_place)
                    .with_answer(answer);
                    f.item = item.cloned();
                    self.record(f)?;
                }
                Ok(())
            }
            Err(mismatch) => {
                // A result where an error was asked for (or the reverse)
                // says so, rather than where inside the error it failed.
                let why = kind_mismatch(pattern, answer).unwrap_or_else(|| mismatch.to_string());
                let mut f = Finding::new(
                    Outcome::for_level(level),
                    Some(label.to_string()),
                    format!("answer does not match expect: {why}"),
                )
                .at(self.s, &mismatch.place)
                .with_answer(answer);
                f.item = item.cloned();
                f.diff = diff::expect_diff(pattern, answer, &mismatch.path);
                f.expected = Some(pattern.to_value().clone());
                f.other_paths = pattern
                    .mismatches(Some(answer), MAX_OTHER_PATHS + 1)
                    .into_iter()
                    .map(|m| m.path)
                    .filter(|p| *p != mismatch.path)
                    .take(MAX_OTHER_PATHS)
                    .collect();
                f.path = Some(mismatch.path);
                self.record(f)
            }
        }
    }

    /// One assertion: false (or not evaluable) is a finding whose message
    /// is the assertion's, filled in.
    pub(in crate::run) fn check_assert(
        &mut self,
        step: Option<&Step>,
        label: Option<&str>,
        a: &Assertion,
        item: Option<&Value>,
        answer: Option<&Value>,
    ) -> Result<(), Stop> {
        let outcome = Outcome::for_level(self.level_for(step, Some(a)));
        let problem = match a.expr.eval_bool(&self.bindings) {
            Ok(true) => return Ok(()),
            Ok(false) => match &a.message {
                Some(m) => match m.render_text(&self.bindings) {
                    Ok(text) => text,
                    Err(e) => format!("{} [the message could not be filled in: {e}]", m.source()),
                },
                None => "assertion is false".to_string(),
            },
            Err(e) => format!(
                "{}: the assertion could not be evaluated ({e})",
                a.message
                    .as_ref()
                    .map_or("assertion failed", |m| m.source())
            ),
        };
        let mut f =
            Finding::new(outcome, label.map(str::to_string), problem).at(self.s, &a.expr.place);
        if let Some(answer) = answer {
            f = f.with_answer(answer);
        }
        f.expected = Some(Value::String(a.expr.source.clone()));
        f.item = item.cloned();
        self.record(f)
    }
}
