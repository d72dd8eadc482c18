//! The requirement registry (scenarios/requirements.yaml), the scenario
//! catalog and the trace rules of `watch` and `client` (rules/trace/*.yaml)
//! agree: every requirement is covered by a scenario or a trace rule, every
//! scenario and rule names only known requirements, and `explain` prints them.

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
    let ruled = rule_coverage(&known, &mut problems);
    for req in &registry {
        let found = covering.get(req.id.as_str()).cloned().unwrap_or_default();
        let rules = ruled.get(req.id.as_str()).cloned().unwrap_or_default();
        if found.is_empty() && rules.is_empty() {
            problems.push(format!(
                "requirement {} has no scenario and no trace rule",
                req.id
            ));
        }
        let listed: BTreeSet<String> = req.rules.iter().cloned().collect();
        if listed != rules {
            problems.push(format!(
                "requirements.yaml lists rules {listed:?} for {} but the trace rules citing it are {rules:?} (run scripts/sync-requirements.py)",
                req.id
            ));
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

/// Trace rule ids by the requirement they cite; a rule citing an unknown
/// requirement is a problem.
fn rule_coverage<'a>(
    known: &BTreeSet<&'a str>,
    problems: &mut Vec<String>,
) -> BTreeMap<&'a str, BTreeSet<String>> {
    let rules = mcp_conform::watch::rules::builtin().unwrap_or_else(|e| panic!("{e}"));
    let mut ruled: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for rule in &rules {
        match known.get(rule.requirement.as_str()) {
            Some(id) => {
                ruled.entry(id).or_default().insert(rule.id.clone());
            }
            None => problems.push(format!(
                "trace rule {} ({}) names unknown requirement {}",
                rule.id, rule.origin, rule.requirement
            )),
        }
    }
    ruled
}

/// A requirement checked by trace rules agrees with them: its side is the
/// sides of its rules, its level the strongest of theirs, its basis theirs.
fn requirements_of_trace_rules_agree_with_their_rules() {
    use mcp_conform::requirements::RuleSide;
    use mcp_conform::watch::trace::Side;
    let registry = mcp_conform::requirements::all().unwrap_or_else(|e| panic!("{e}"));
    let rules = mcp_conform::watch::rules::builtin().unwrap_or_else(|e| panic!("{e}"));
    let mut problems = Vec::new();
    let mut checked = 0;
    for req in registry.iter().filter(|r| !r.rules.is_empty()) {
        let own: Vec<_> = rules.iter().filter(|r| r.requirement == req.id).collect();
        let client = own.iter().any(|r| r.side == Side::Client);
        let server = own.iter().any(|r| r.side == Side::Server);
        // a requirement a scenario checks binds the server whatever its rules
        let side = match (client, server) {
            (true, true) => RuleSide::Both,
            (true, false) if req.scenarios.is_empty() => RuleSide::Client,
            _ => RuleSide::Server,
        };
        if req.side != side {
            problems.push(format!(
                "{} is on side {:?}, its rules on {side:?}",
                req.id, req.side
            ));
        }
        let strongest = own.iter().map(|r| r.level).min();
        if req.scenarios.is_empty() && strongest != req.grade() {
            problems.push(format!(
                "{} is {} but its strongest rule is {strongest:?}",
                req.id, req.level
            ));
        }
        for r in &own {
            if req.grade().is_some_and(|level| r.level < level) {
                problems.push(format!(
                    "rule {} is graded above {} ({})",
                    r.id, req.id, req.level
                ));
            }
            let basis = req.basis.map(|b| b.as_str().to_string());
            if r.basis.is_some() && r.basis != basis {
                problems.push(format!(
                    "rule {} rests on {:?}, {} on {basis:?}",
                    r.id, r.basis, req.id
                ));
            }
        }
        checked += 1;
    }
    assert!(checked >= 45, "only {checked} requirements of trace rules");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn every_profile_of_the_registry_has_scenarios_of_that_profile() {
    let registry = mcp_conform::requirements::all().unwrap_or_else(|e| panic!("{e}"));
    let scenarios = mcp_conform::builtin::scenarios().unwrap_or_else(|e| panic!("{e}"));
    // a requirement only trace rules check has no scenario of any profile
    for req in registry.iter().filter(|r| !r.scenarios.is_empty()) {
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
    let rules = mcp_conform::watch::rules::builtin().unwrap_or_else(|e| panic!("{e}"));
    for r in &registry {
        let level = level_of(&r.id);
        let reached = scenarios
            .iter()
            .filter(|s| s.requirements.contains(&r.id))
            .any(|s| s.level <= level)
            || rules
                .iter()
                .filter(|rule| rule.requirement == r.id)
                .any(|rule| rule.level <= level);
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
    use mcp_conform::requirements::RuleSide;
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
        // a client's rule may rest on a server's MUST its text gives the
        // client no keyword for, up to SHOULD (docs/interpretations.md)
        if r.basis.is_some() && r.level != "MUST" && r.side != RuleSide::Client {
            problems.push(format!(
                "{} names a basis but is graded {} (a basis only lifts a level)",
                r.id, r.level
            ));
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
    // a requirement the trace rules check names them
    let out = common::run_cli(&["explain", "MCP-LIFE-01"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("trace rules (watch, client):\n  client/initialize-first\n"),
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
        requirements_of_trace_rules_agree_with_their_rules,
        every_profile_of_the_registry_has_scenarios_of_that_profile,
        levels_of_requirements_and_scenarios_agree_and_project_rules_stay_at_should,
        levels_never_exceed_their_text,
        explain_prints_the_requirement_its_quote_and_scenarios
    ]
}
