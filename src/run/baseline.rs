//! Expected-failure baselines, in the official MCP conformance suite's format:
//!
//! ```yaml
//! server:
//!   - sep-1300/filter-groups-any          # the whole scenario is expected to fail
//!   - base/parse-error:BASE-ERR-03        # only failures of this requirement
//!   - sep-1300/filter-groups-any:steps[2] # only failures found by this step (or its checks)
//! ```
//!
//! A check names a requirement id or a finding's step id (`steps[2]`,
//! `steps[2].assert[0]`, `assert[0]`; a step id covers every check inside
//! the step). Entries written for earlier versions named a step by its
//! `id:` (`…:filtered`); they still match, and the run notes the step id to
//! write instead.
//!
//! Listed and failing → expected (exit 0); failing and not listed → exit 1;
//! listed and passing → a stale entry (exit 1, "remove it").

use std::collections::BTreeSet;

use serde_json::Value;

use super::outcome::{Outcome, ScenarioResult};
use crate::scenario::source::{parse_yaml, Position};

/// One `scenario-id` or `scenario-id:check` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub scenario: String,
    pub check: Option<String>,
    pub position: Position,
}

impl std::fmt::Display for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.check {
            Some(c) => write!(f, "{}:{c}", self.scenario),
            None => f.write_str(&self.scenario),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Baseline {
    pub entries: Vec<Entry>,
}

/// A baseline file that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{position}: {message}")]
pub struct BaselineError {
    pub file: String,
    pub position: Position,
    pub message: String,
}

/// Parses a baseline. `client:` lists are accepted and ignored (they belong
/// to client conformance, which mcp-conform does not test).
pub fn parse(file: &str, text: &str) -> Result<Baseline, BaselineError> {
    let err = |position: Position, message: String| BaselineError {
        file: file.to_string(),
        position,
        message,
    };
    if text.trim().is_empty() {
        return Ok(Baseline::default());
    }
    let doc = parse_yaml(text).map_err(|e| err(e.position, e.message))?;
    let Value::Object(map) = &doc.value else {
        return Err(err(
            doc.position(""),
            "a baseline is a mapping with a `server:` list".into(),
        ));
    };
    let mut entries = Vec::new();
    for (key, value) in map {
        let pointer = format!("/{key}");
        match key.as_str() {
            "client" => continue,
            "server" => {}
            other => {
                return Err(err(
                    doc.key_position(&pointer),
                    format!("unknown key '{other}' (expected `server:`)"),
                ))
            }
        }
        let Value::Array(items) = value else {
            return Err(err(
                doc.position(&pointer),
                "`server:` must be a list of scenario ids".into(),
            ));
        };
        for (i, item) in items.iter().enumerate() {
            let position = doc.position(&format!("{pointer}/{i}"));
            let Some(text) = item.as_str() else {
                return Err(err(position, format!("entries are strings like `scenario-id` or `scenario-id:check`, found {item}")));
            };
            let (scenario, check) = match text.split_once(':') {
                Some((s, c)) => (s.trim().to_string(), Some(c.trim().to_string())),
                None => (text.trim().to_string(), None),
            };
            entries.push(Entry {
                scenario,
                check,
                position,
            });
        }
    }
    Ok(Baseline { entries })
}

/// Whether `check` names the finding's step id or one that contains it
/// (`steps[2]` covers `steps[2].assert[0]` and `steps[2].expect.result`).
fn names_step(check: &str, f: &crate::run::outcome::Finding) -> bool {
    f.step_id.as_deref().is_some_and(|id| {
        id == check
            || id
                .strip_prefix(check)
                .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
    })
}

/// The step part of a step id: `steps[2].assert[0]` → `steps[2]`.
fn step_of(id: &str) -> &str {
    let end = id.find(']').map_or(id.len(), |i| i + 1);
    &id[..end]
}

/// Whether a result fails the run (before any baseline).
pub fn is_failing(r: &ScenarioResult, strict: bool) -> bool {
    r.outcome.fails(strict)
}

impl Baseline {
    fn entry_matches(entry: &Entry, r: &ScenarioResult) -> bool {
        if entry.scenario != r.id {
            return false;
        }
        match &entry.check {
            None => true,
            Some(check) => {
                r.requirements.iter().any(|q| q == check)
                    || r.findings.iter().any(|f| names_step(check, f))
                    || Self::label_match(check, r).is_some()
            }
        }
    }

    /// The step id of a finding whose step an old-style check names by its
    /// label (`filtered` for "step 'filtered'"), when no step id matches.
    fn label_match<'r>(check: &str, r: &'r ScenarioResult) -> Option<&'r str> {
        if r.findings.iter().any(|f| names_step(check, f)) {
            return None;
        }
        let quoted = format!("'{check}'");
        r.findings
            .iter()
            .filter(|f| f.step.as_deref().is_some_and(|s| s.contains(&quoted)))
            .find_map(|f| f.step_id.as_deref())
            .map(step_of)
    }

    /// Notes for entries that matched a failure by its step label only: the
    /// step id to write instead (labels change when a step is renamed).
    pub fn label_notes(&self, results: &[ScenarioResult]) -> Vec<String> {
        let mut notes = Vec::new();
        for e in &self.entries {
            let Some(check) = &e.check else { continue };
            let found = results
                .iter()
                .filter(|r| r.id == e.scenario)
                .find_map(|r| Self::label_match(check, r));
            if let Some(id) = found {
                let note = format!(
                    "baseline entry {e} ({}) matches a step by its label; write {}:{id} (step ids are stable)",
                    e.position, e.scenario
                );
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
        }
        notes
    }

    /// Whether a failing result is covered by an entry.
    pub fn expects(&self, r: &ScenarioResult) -> bool {
        self.entries.iter().any(|e| Self::entry_matches(e, r))
    }

    /// Entries for scenarios that ran and did not fail (in any era): they
    /// should be removed.
    pub fn stale(&self, results: &[ScenarioResult], strict: bool) -> Vec<Entry> {
        self.entries
            .iter()
            .filter(|e| {
                let mut runs = results
                    .iter()
                    .filter(|r| r.id == e.scenario && r.outcome != Outcome::Skip)
                    .peekable();
                runs.peek().is_some()
                    && !runs.any(|r| is_failing(r, strict) && Self::entry_matches(e, r))
            })
            .cloned()
            .collect()
    }
}

/// A baseline listing every failing scenario, in the official format.
pub fn write(results: &[ScenarioResult], strict: bool) -> String {
    let ids: BTreeSet<&str> = results
        .iter()
        .filter(|r| is_failing(r, strict))
        .map(|r| r.id.as_str())
        .collect();
    let mut out = String::from("# Expected failures (mcp-conform --write-baseline); remove entries as they are fixed.\nserver:\n");
    if ids.is_empty() {
        out =
            String::from("# Expected failures (mcp-conform --write-baseline): none.\nserver: []\n");
    }
    for id in ids {
        out.push_str(&format!("  - {id}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str, outcome: Outcome, reqs: &[&str]) -> ScenarioResult {
        let mut r = ScenarioResult::for_test(id, outcome);
        r.requirements = reqs.iter().map(|s| s.to_string()).collect();
        r
    }

    fn failing_at(id: &str, label: &str, step_id: &str) -> ScenarioResult {
        let mut r = result(id, Outcome::Fail, &[]);
        let mut f = crate::run::outcome::Finding::new(Outcome::Fail, Some(label.into()), "x");
        f.step_id = Some(step_id.into());
        r.findings.push(f);
        r
    }

    #[test]
    fn checks_match_step_ids_and_the_checks_inside_a_step() {
        let b = parse(
            "b.yaml",
            "server:\n  - base/a:steps[1]\n  - base/b:steps[1].assert[0]\n  - base/c:steps[1]\n",
        )
        .unwrap_or_default();
        let a = failing_at("base/a", "step 'r'", "steps[1].expect.result.tools");
        let b_hit = failing_at("base/b", "step 2", "steps[1].assert[0]");
        let c_miss = failing_at("base/c", "step 11", "steps[10]");
        assert!(b.expects(&a));
        assert!(b.expects(&b_hit));
        assert!(!b.expects(&c_miss), "steps[1] must not cover steps[10]");
        assert!(b.label_notes(&[a, b_hit, c_miss]).is_empty());
    }

    #[test]
    fn old_entries_naming_a_step_by_its_label_still_match_with_a_note() {
        let b = parse("b.yaml", "server:\n  - base/a:filtered\n").unwrap_or_default();
        let r = failing_at("base/a", "step 'filtered'", "steps[2].assert[0]");
        assert!(b.expects(&r));
        assert!(b.stale(std::slice::from_ref(&r), false).is_empty());
        assert_eq!(
            b.label_notes(&[r]),
            ["baseline entry base/a:filtered (2:5) matches a step by its label; write base/a:steps[2] (step ids are stable)"]
        );
    }

    #[test]
    fn parses_the_official_format() {
        let b = parse(
            "b.yaml",
            "server:\n  - base/a\n  - base/b:BASE-ERR-03\nclient:\n  - x\n",
        )
        .unwrap_or_default();
        assert_eq!(b.entries.len(), 2);
        assert_eq!(b.entries[1].to_string(), "base/b:BASE-ERR-03");
        let e = parse("b.yaml", "server:\n  - 3\n").expect_err("bad entry");
        assert_eq!(
            e.to_string(),
            "b.yaml:2:5: entries are strings like `scenario-id` or `scenario-id:check`, found 3"
        );
        assert!(parse("b.yaml", "servers: []\n").is_err());
    }

    #[test]
    fn expected_unexpected_and_stale() {
        let b = parse(
            "b.yaml",
            "server:\n  - base/a\n  - base/b:BASE-ERR-03\n  - base/c\n  - base/gone\n",
        )
        .unwrap_or_default();
        let results = vec![
            result("base/a", Outcome::Fail, &[]),
            result("base/b", Outcome::Fail, &["BASE-ERR-04"]),
            result("base/c", Outcome::Pass, &[]),
        ];
        assert!(b.expects(&results[0]));
        assert!(!b.expects(&results[1]), "check names another requirement");
        let stale: Vec<String> = b
            .stale(&results, false)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(stale, ["base/b:BASE-ERR-03", "base/c"]);
        assert_eq!(write(&results, false), "# Expected failures (mcp-conform --write-baseline); remove entries as they are fixed.\nserver:\n  - base/a\n  - base/b\n");
    }
}
