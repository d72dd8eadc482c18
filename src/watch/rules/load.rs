//! Rule files: YAML with a `rules:` list, each rule checked as it is read;
//! every error points at `file:line:col`.

use serde_json::Value;

use super::{checks, strongest_keyword, Rule};
use crate::requirements::Requirement;
use crate::scenario::model::{Level, SpecRef};
use crate::scenario::source::{known_keys, load_list, PlacedError, Problem, SourceDoc};
use crate::watch::trace::Side;

/// The built-in rule files, embedded so an installed binary needs no source tree.
const FILES: &[(&str, &str)] = &[
    (
        "rules/trace/jsonrpc.yaml",
        include_str!("../../../rules/trace/jsonrpc.yaml"),
    ),
    (
        "rules/trace/lifecycle.yaml",
        include_str!("../../../rules/trace/lifecycle.yaml"),
    ),
    (
        "rules/trace/mcp-2026.yaml",
        include_str!("../../../rules/trace/mcp-2026.yaml"),
    ),
    (
        "rules/trace/discovery.yaml",
        include_str!("../../../rules/trace/discovery.yaml"),
    ),
    (
        "rules/trace/http.yaml",
        include_str!("../../../rules/trace/http.yaml"),
    ),
];

/// A rule file that cannot be used: where, and why.
pub type RuleError = PlacedError;

/// Every built-in rule, in file order; each cites a requirement of the
/// built-in registry (scenarios/requirements.yaml).
pub fn builtin() -> Result<Vec<Rule>, RuleError> {
    let mut rules = Vec::new();
    for (file, text) in FILES {
        rules.extend(load_str(file, text)?);
    }
    let registry = crate::requirements::all()
        .map_err(|e| RuleError::at("scenarios/requirements.yaml", e.to_string()))?;
    known_requirements(&rules, &registry)?;
    let mut seen = std::collections::HashSet::new();
    for r in &rules {
        if !seen.insert(r.id.clone()) {
            return Err(RuleError::at(
                &r.origin,
                format!("rule id {:?} is declared twice", r.id),
            ));
        }
    }
    Ok(rules)
}

/// Every rule cites a requirement the registry lists, so `explain` and the
/// reports find its level, quote and source under the same id.
pub fn known_requirements(rules: &[Rule], registry: &[Requirement]) -> Result<(), RuleError> {
    for r in rules {
        if !registry.iter().any(|q| q.id == r.requirement) {
            return Err(RuleError::at(
                &r.requirement_at,
                format!(
                    "rule {} cites requirement {}, which scenarios/requirements.yaml does not list",
                    r.id, r.requirement
                ),
            ));
        }
    }
    Ok(())
}

/// The rules of one file.
pub fn load_str(file: &str, text: &str) -> Result<Vec<Rule>, RuleError> {
    load_list(file, text, "rules", |doc, at, v| rule(doc, file, at, v))
}

const KEYS: &[&str] = &[
    "id",
    "title",
    "side",
    "level",
    "requirement",
    "basis",
    "spec",
    "check",
    "with",
    "eras",
    "transport",
];

fn rule(doc: &SourceDoc, file: &str, at: &str, v: &Value) -> Result<Rule, Problem> {
    let map = known_keys(v, at, KEYS, "a rule")?;
    let text = |key: &str| -> Result<String, Problem> {
        map.get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| (format!("{at}/{key}"), format!("`{key}` must be a string")))
    };
    let side = match text("side")?.as_str() {
        "client" => Side::Client,
        "server" => Side::Server,
        other => {
            return Err((
                format!("{at}/side"),
                format!("side must be client or server, not {other:?}"),
            ))
        }
    };
    let level: Level = serde_json::from_value(Value::from(text("level")?)).map_err(|_| {
        (
            format!("{at}/level"),
            "level must be MUST, SHOULD, MAY or INFO".to_string(),
        )
    })?;
    let spec: SpecRef = serde_json::from_value(map.get("spec").cloned().unwrap_or(Value::Null))
        .map_err(|e| (format!("{at}/spec"), format!("bad spec: {e}")))?;
    let quote = spec.quote.clone().unwrap_or_default();
    if quote.is_empty() {
        return Err((format!("{at}/spec"), "spec.quote is required".into()));
    }
    let basis = map.get("basis").and_then(Value::as_str).map(str::to_string);
    check_level(level, &quote, basis.as_deref()).map_err(|m| (format!("{at}/level"), m))?;
    let with = map.get("with").cloned().unwrap_or(Value::Null);
    let check = checks::parse(&text("check")?, &with).map_err(|m| {
        let ptr = if map.contains_key("with") {
            format!("{at}/with")
        } else {
            format!("{at}/check")
        };
        (ptr, m)
    })?;
    let eras = match map.get("eras") {
        None => Vec::new(),
        Some(e) => serde_json::from_value(e.clone()).map_err(|_| {
            (
                format!("{at}/eras"),
                "eras must be a list of versions".into(),
            )
        })?,
    };
    let mut spec = spec;
    crate::sources::resolve(&mut spec);
    let pos = doc.position(at);
    let req_pos = doc.position(&format!("{at}/requirement"));
    Ok(Rule {
        id: text("id")?,
        title: text("title")?,
        side,
        level,
        requirement: text("requirement")?,
        basis,
        spec,
        check,
        eras,
        transport: map
            .get("transport")
            .and_then(Value::as_str)
            .map(str::to_string),
        origin: format!("{file}:{}:{}", pos.line, pos.col),
        requirement_at: format!("{file}:{}:{}", req_pos.line, req_pos.col),
    })
}

/// A level above the quote's strongest keyword needs a named basis.
fn check_level(level: Level, quote: &str, basis: Option<&str>) -> Result<(), String> {
    let ceiling = strongest_keyword(quote).unwrap_or(Level::Info);
    if level < ceiling && basis.is_none() {
        return Err(format!(
            "level {} is above the quote's strongest keyword ({}); lower it or name its basis",
            level.as_str(),
            ceiling.as_str()
        ));
    }
    if let Some(b) = basis {
        if !matches!(b, "schema" | "definition") {
            return Err(format!("basis must be schema or definition, not {b:?}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_rules_load_and_there_are_enough_of_both_sides() {
        let rules = builtin().unwrap_or_else(|e| panic!("{e}"));
        let clients = rules.iter().filter(|r| r.side == Side::Client).count();
        let servers = rules.len() - clients;
        assert!(rules.len() >= 25, "{} rules", rules.len());
        assert!(
            clients >= 10 && servers >= 10,
            "{clients} client, {servers} server"
        );
    }

    #[test]
    fn a_bad_rule_points_at_its_line_and_column() {
        let text = "rules:\n  - id: x\n    title: t\n    side: client\n    level: MUST\n    requirement: R\n    spec: {doc: jsonrpc-2.0, quote: \"x MUST y\"}\n    check: no-such-kind\n";
        let e = load_str("r.yaml", text).unwrap_err();
        assert_eq!((e.line, e.col), (8, 12), "{e}");
        assert!(e.message.contains("unknown check kind"), "{e}");
    }

    #[test]
    fn a_rule_citing_a_requirement_the_registry_lacks_is_refused_at_its_line() {
        let registry = crate::requirements::all().unwrap_or_else(|e| panic!("{e}"));
        let text = "rules:\n  - id: x\n    title: t\n    side: client\n    level: MUST\n    requirement: NO-SUCH-01\n    spec: {doc: jsonrpc-2.0, quote: \"x MUST y\"}\n    check: jsonrpc-version\n";
        let rules = load_str("r.yaml", text).unwrap_or_else(|e| panic!("{e}"));
        let e = known_requirements(&rules, &registry).unwrap_err();
        assert_eq!((e.file.as_str(), e.line, e.col), ("r.yaml", 6, 18), "{e}");
        assert!(e.message.contains("NO-SUCH-01"), "{e}");
        // every built-in rule's requirement is listed: builtin() checks it
        let builtin = builtin().unwrap_or_else(|e| panic!("{e}"));
        assert!(known_requirements(&builtin, &registry).is_ok());
    }

    #[test]
    fn a_level_above_the_quote_needs_a_basis() {
        let text = "rules:\n  - id: x\n    title: t\n    side: client\n    level: MUST\n    requirement: R\n    spec: {doc: jsonrpc-2.0, quote: \"x SHOULD y\"}\n    check: jsonrpc-version\n";
        let e = load_str("r.yaml", text).unwrap_err();
        assert_eq!(e.line, 5, "{e}");
        assert!(e.message.contains("above the quote"), "{e}");
    }
}
