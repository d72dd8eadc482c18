//! GitHub-native output: workflow annotations (`::error` / `::warning`
//! lines a GitHub Actions runner turns into annotations on the scenario file
//! and line), and a SARIF 2.1.0 log (`--report-sarif`) that code scanning
//! reads, with one rule per requirement.

use serde_json::{json, Value};

use super::data::ReportData;
use super::overview::{self, Problem};
use crate::run::outcome::{Outcome, ScenarioResult};
use crate::scenario::model::source_path;

/// Where a problem points: the location of its first non-passing finding
/// (`path:line:col`), else the scenario's file.
pub fn location(r: &ScenarioResult) -> (String, Option<u32>, Option<u32>) {
    let at = r
        .findings
        .iter()
        .filter(|f| f.outcome != Outcome::Pass)
        .find_map(|f| f.location.clone());
    let Some(at) = at else {
        return (source_path(&r.origin), None, None);
    };
    let mut parts = at.rsplitn(3, ':');
    let (col, line, path) = (parts.next(), parts.next(), parts.next());
    match (
        path,
        line.and_then(|l| l.parse().ok()),
        col.and_then(|c| c.parse().ok()),
    ) {
        (Some(path), Some(line), Some(col)) => (path.to_string(), Some(line), Some(col)),
        _ => (source_path(&r.origin), None, None),
    }
}

/// A workflow command's message, escaped as the runner expects.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value, escaped as the runner expects.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// One problem as a workflow annotation line:
/// `::error file=…,line=…,col=…,title=…::…`.
pub fn annotation(p: &Problem) -> String {
    let r = p.result;
    let command = if r.outcome == Outcome::Warn {
        "warning"
    } else {
        "error"
    };
    let (file, line, col) = location(r);
    let mut props = vec![format!("file={}", escape_property(&file))];
    if let Some(line) = line {
        props.push(format!("line={line}"));
    }
    if let Some(col) = col {
        props.push(format!("col={col}"));
    }
    let shown = r.shown();
    let reqs = if shown.requirements.is_empty() {
        String::new()
    } else {
        format!(" {}", shown.requirements.join(" "))
    };
    props.push(format!(
        "title={}",
        escape_property(&format!("{} [{}]{reqs}", r.id, shown.level))
    ));
    let eras = if p.eras.is_empty() {
        String::new()
    } else {
        format!(" (protocol {})", p.eras.join(", "))
    };
    format!(
        "::{command} {}::{}",
        props.join(","),
        escape_data(&format!(
            "{}{eras}: {}{}",
            r.title,
            r.message,
            shared_suffix(r)
        ))
    )
}

/// The shared-finding note as the end of a one-line message (" — shared: …").
fn shared_suffix(r: &ScenarioResult) -> String {
    r.shared_note()
        .map(|note| format!(" — {note}"))
        .unwrap_or_default()
}

/// The SARIF level of an outcome.
fn sarif_level(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Warn => "warning",
        Outcome::Info => "note",
        _ => "error",
    }
}

/// A rule per requirement a problem checks (a scenario without one is its
/// own rule): id, level, the quoted words, and where to read them.
fn rules(problems: &[Problem]) -> Vec<Value> {
    let mut rules: Vec<Value> = Vec::new();
    for p in problems {
        let r = p.result;
        for id in rule_ids(r) {
            if rules.iter().any(|rule| rule["id"] == id.as_str()) {
                continue;
            }
            let spec = r.spec.first();
            let quote = spec.and_then(|s| s.quote.clone()).unwrap_or_default();
            let mut rule = json!({
                "id": id,
                "name": id,
                "shortDescription": {"text": r.title},
                "fullDescription": {"text": if quote.is_empty() { r.title.clone() } else { quote }},
                "defaultConfiguration": {"level": sarif_level(r.outcome)},
                "properties": {"level": r.shown().level.to_string()},
            });
            if let Some(url) = spec
                .and_then(|s| s.url.clone())
                .filter(|u| u.starts_with("http"))
            {
                rule["helpUri"] = json!(url);
            }
            rules.push(rule);
        }
    }
    rules
}

/// The requirements a problem broke (its scenario's id when it names none).
fn rule_ids(r: &ScenarioResult) -> Vec<String> {
    let shown = r.shown();
    if shown.requirements.is_empty() {
        vec![r.id.clone()]
    } else {
        shown.requirements
    }
}

/// The run as a SARIF 2.1.0 log: one result per distinct problem, pointing
/// at the scenario file and line.
pub fn sarif(data: &ReportData) -> String {
    let problems = overview::problems(&data.scenarios);
    let results: Vec<Value> = problems
        .iter()
        .map(|p| {
            let r = p.result;
            let (file, line, col) = location(r);
            let mut region = json!({});
            if let Some(line) = line {
                region["startLine"] = json!(line);
            }
            if let Some(col) = col {
                region["startColumn"] = json!(col);
            }
            let mut physical = json!({"artifactLocation": {"uri": file}});
            if line.is_some() {
                physical["region"] = region;
            }
            let eras = if p.eras.is_empty() {
                String::new()
            } else {
                format!(" (protocol {})", p.eras.join(", "))
            };
            json!({
                "ruleId": rule_ids(r)[0],
                "level": sarif_level(r.outcome),
                "message": {"text": format!("{}: {}{eras}: {}{}", r.id, r.title, r.message, shared_suffix(r))},
                "locations": [{"physicalLocation": physical}],
                "properties": {"scenario": r.id, "eras": p.eras, "requirements": rule_ids(r), "level": r.shown().level.to_string()},
            })
        })
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "mcp-conform",
                "version": data.run.harness_version,
                "rules": rules(&problems),
            }},
            "results": results,
            "properties": {"target": data.run.target, "eras": data.run.eras},
        }],
    });
    serde_json::to_string_pretty(&log).unwrap_or_else(|_| "{}".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::outcome::Finding;

    fn failing() -> ScenarioResult {
        let mut f = Finding::new(Outcome::Fail, Some("step 1".into()), "bad, 100%");
        f.location = Some("scenarios/base/x.yaml:15:19".into());
        let mut r = ScenarioResult::for_test("base/x", Outcome::Fail);
        r.title = "Title".into();
        r.requirements = vec!["BASE-ERR-01".into()];
        r.era = "2025-06-18".into();
        r.message = "step 1: bad, 100%".into();
        r.findings = vec![f];
        r
    }

    #[test]
    fn an_annotation_points_at_the_file_and_line_and_escapes() {
        let r = failing();
        let p = Problem {
            result: &r,
            eras: vec!["2025-06-18"],
        };
        assert_eq!(
            annotation(&p),
            "::error file=scenarios/base/x.yaml,line=15,col=19,title=base/x [MUST] BASE-ERR-01::Title (protocol 2025-06-18): step 1: bad, 100%25"
        );
    }
}
