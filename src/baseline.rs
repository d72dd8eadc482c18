//! Expected-failure baselines, in the official MCP conformance suite's format:
//!
//! ```yaml
//! server:
//!   - sep-1300/filter-groups-any          # the whole scenario is expected to fail
//!   - base/parse-error:BASE-ERR-03        # only failures of this requirement (or step id)
//! ```
//!
//! Listed and failing → expected (exit 0); failing and not listed → exit 1;
//! listed and passing → a stale entry (exit 1, "remove it").

use std::collections::BTreeSet;

use serde_json::Value;

use crate::run::outcome::{Outcome, ScenarioResult};
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
                    || r.findings.iter().any(|f| {
                        f.step
                            .as_deref()
                            .is_some_and(|s| s.contains(&format!("'{check}'")))
                    })
            }
        }
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
    use crate::scenario::model::Level;

    fn result(id: &str, outcome: Outcome, reqs: &[&str]) -> ScenarioResult {
        let mut r = ScenarioResult::blank(
            &crate::scenario::load::load_str(
                "x.yaml",
                &format!(
                    "id: {id}\ntitle: t\nprofile: base\nlevel: MUST\nsteps:\n  - request: ping\n"
                ),
            )
            .unwrap_or_else(|e| panic!("{e}")),
            outcome,
            String::new(),
        );
        r.requirements = reqs.iter().map(|s| s.to_string()).collect();
        r.level = Level::Must;
        r
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
