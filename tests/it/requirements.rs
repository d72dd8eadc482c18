//! The requirement registry (scenarios/requirements.yaml) and the scenario
//! catalog agree: every requirement is covered, every scenario names only
//! known requirements and quotes its source, and `explain` prints both.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

fn every_requirement_has_a_scenario_and_every_scenario_a_known_requirement() {
    let registry = mcp_conform::requirements::all().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        registry.len() >= 73,
        "the registry lists {} requirements",
        registry.len()
    );
    let scenarios = mcp_conform::builtin::scenarios().unwrap_or_else(|e| panic!("{e}"));
    assert!(scenarios.len() >= 120, "only {} scenarios", scenarios.len());
    let known: BTreeSet<&str> = registry.iter().map(|r| r.id.as_str()).collect();
    let mut covering: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut problems = Vec::new();
    for s in &scenarios {
        if s.requirements.is_empty() {
            problems.push(format!("{} names no requirement", s.id));
        }
        for r in &s.requirements {
            if known.contains(r.as_str()) {
                covering.entry(r.as_str()).or_default().insert(s.id.clone());
            } else {
                problems.push(format!("{} names unknown requirement {r}", s.id));
            }
        }
        if !s
            .spec
            .iter()
            .any(|spec| spec.quote.as_ref().is_some_and(|q| !q.trim().is_empty()))
        {
            problems.push(format!("{} quotes no source", s.id));
        }
    }
    for req in &registry {
        let found = covering.get(req.id.as_str()).cloned().unwrap_or_default();
        if found.is_empty() {
            problems.push(format!("requirement {} has no scenario", req.id));
        }
        let listed: BTreeSet<String> = req.scenarios.iter().cloned().collect();
        if listed != found {
            problems.push(format!(
                "requirements.yaml lists {:?} for {} but the scenarios covering it are {:?} (run scripts/sync-requirements.py)",
                listed, req.id, found
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn every_profile_of_the_registry_has_scenarios_of_that_profile() {
    let registry = mcp_conform::requirements::all().unwrap_or_else(|e| panic!("{e}"));
    let scenarios = mcp_conform::builtin::scenarios().unwrap_or_else(|e| panic!("{e}"));
    for req in &registry {
        let own_profile = scenarios
            .iter()
            .filter(|s| s.requirements.contains(&req.id))
            .any(|s| s.profile == req.profile);
        assert!(
            own_profile,
            "{} ({}) is covered only by scenarios of other profiles",
            req.id, req.profile
        );
    }
}

/// A scenario never grades above the strongest of its requirements, each
/// requirement's level is reached by one of its scenarios, and a rule of this
/// project is never graded above SHOULD (docs/interpretations.md#grading).
fn levels_of_requirements_and_scenarios_agree_and_project_rules_stay_at_should() {
    use mcp_conform::requirements::Provenance;
    use mcp_conform::scenario::model::Level;
    let registry = mcp_conform::requirements::all().unwrap_or_else(|e| panic!("{e}"));
    let scenarios = mcp_conform::builtin::scenarios().unwrap_or_else(|e| panic!("{e}"));
    let level_of = |id: &str| {
        registry
            .iter()
            .find(|r| r.id == id)
            .and_then(|r| r.grade())
            .unwrap_or_else(|| panic!("{id}: unknown requirement or level"))
    };
    let mut problems = Vec::new();
    for s in &scenarios {
        // Level orders MUST < SHOULD < MAY < INFO: the strongest is the minimum
        let strongest = s.requirements.iter().map(|r| level_of(r)).min();
        if let Some(strongest) = strongest {
            if s.level < strongest {
                problems.push(format!(
                    "{} is graded {} but its strongest requirement is {strongest}",
                    s.id, s.level
                ));
            }
        }
    }
    for r in &registry {
        let level = level_of(&r.id);
        let reached = scenarios
            .iter()
            .filter(|s| s.requirements.contains(&r.id))
            .any(|s| s.level <= level);
        if !reached {
            problems.push(format!(
                "{} is {level} but no scenario of it is graded that high",
                r.id
            ));
        }
        if r.source == Provenance::Project && level < Level::Should {
            problems.push(format!(
                "{} is this project's rule but graded {level} (at most SHOULD)",
                r.id
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A requirement is graded at most the strongest RFC 2119 keyword its quote
/// puts on servers, unless it names its basis, and then
/// docs/interpretations.md#levels-on-a-basis gives the reason
/// (docs/interpretations.md#grading).
fn levels_never_exceed_their_text() {
    let registry = mcp_conform::requirements::all().unwrap_or_else(|e| panic!("{e}"));
    let mut problems = Vec::new();
    for r in &registry {
        if r.level_exceeds_text() {
            problems.push(format!(
                "{} is graded {} but its quote has no keyword that strong for servers, and it names no basis: {:?}",
                r.id, r.level, r.quote
            ));
        }
        if r.basis.is_some() && r.basis_reason().is_none() {
            problems.push(format!(
                "{} names basis {:?} but docs/interpretations.md#levels-on-a-basis gives no reason for it",
                r.id, r.basis
            ));
        }
        if r.basis.is_some() && r.level != "MUST" {
            problems.push(format!("{} names a basis but is graded {} (a basis only lifts a level)", r.id, r.level));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // the rule can fail: a MUST quoting only a client's MUST, or no keyword
    let mut client_rule = registry[0].clone();
    client_rule.level = "MUST".into();
    client_rule.basis = None;
    client_rule.quote = Some("Pagination is handled through the cursor, but the client **MUST** provide the original query parameter paired with the cursor.".into());
    assert!(client_rule.level_exceeds_text());
    client_rule.quote = Some("-32602 Invalid params: Invalid method parameter(s).".into());
    assert!(client_rule.level_exceeds_text());
}

fn explain_prints_the_requirement_its_quote_and_scenarios() {
    let out = common::run_cli(&["explain", "SEP1300-FLT-01"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("SEP1300-FLT-01 [MUST, basis: definition] (sep-1300)"),
        "{text}"
    );
    assert!(text.contains("quote: \"groups (string array): Only return tools belonging to ANY of these named groups.\""), "{text}");
    assert!(text.contains("  sep-1300/filter-each-group"), "{text}");
    assert!(text.contains("rule of: draft"), "{text}");
    assert!(
        text.contains("basis: definition (docs/interpretations.md#levels-on-a-basis): \"Only return tools belonging to ANY of these named groups\" defines the filter"),
        "{text}"
    );
    assert!(
        text.contains("source: SEP-1300: Tool Filtering with Groups and Tags (closed) <https://github.com/modelcontextprotocol/modelcontextprotocol/issues/1300>"),
        "{text}"
    );
    let out = common::run_cli(&["explain", "NO-SUCH-ID"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("no requirement or scenario named \"NO-SUCH-ID\""));
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        every_requirement_has_a_scenario_and_every_scenario_a_known_requirement,
        every_profile_of_the_registry_has_scenarios_of_that_profile,
        levels_of_requirements_and_scenarios_agree_and_project_rules_stay_at_should,
        levels_never_exceed_their_text,
        explain_prints_the_requirement_its_quote_and_scenarios
    ]
}
