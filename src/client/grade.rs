//! Grades one client scenario run: the trace rules the client broke, the
//! messages it was asked to send and did not, and how its process ended,
//! as one result line. Pure: no I/O.

use serde_json::Value;

use crate::run::outcome::{Broken, Finding, Outcome, ScenarioResult};
use crate::scenario::model::Level;
use crate::watch::rules::{Rule, Violation};
use crate::watch::trace::{Conversation, Msg, Side};

use super::scenario::{ClientScenario, Expect};

/// Findings kept per result; further ones are counted in the message.
const MAX_FINDINGS: usize = 50;

/// What happened around the conversation of one run.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    /// `http` or `stdio`.
    pub transport: String,
    /// The era the run asked the driver for, if any (`--protocol-version`).
    pub asked: Option<String>,
    /// How the client process ended (`exit status 0`, `killed after 30 s`…).
    pub client_exit: String,
    /// Whether the client process ended with status 0.
    pub client_ok: bool,
    /// Whether it was stopped because it ran past its time.
    pub timed_out: bool,
    /// The tail of the client's stderr and stdout.
    pub client_output: String,
    /// A problem of the harness's own side (the scenario server would not start…).
    pub setup_error: Option<String>,
    pub duration_ms: u64,
}

/// The result id of a scenario run: `client/<name>/<transport>`.
pub fn result_id(s: &ClientScenario, transport: &str) -> String {
    format!("client/{}/{transport}", s.name)
}

/// The result of one run; `exercised` names the rules whose check judged
/// at least one message of the conversation.
pub fn grade(
    s: &ClientScenario,
    rules: &[Rule],
    violations: &[Violation],
    exercised: &[&str],
    conv: &Conversation,
    facts: &RunFacts,
) -> ScenarioResult {
    let era = conv
        .era()
        .or_else(|| facts.asked.clone())
        .unwrap_or_default();
    let mut r = base_result(s, facts, &era);
    if let Some(why) = &facts.setup_error {
        r.outcome = Outcome::Error;
        r.message = format!("not run: {why}");
        return r;
    }
    if let Some(offered) = no_common_version(conv, &era) {
        r.outcome = Outcome::Skip;
        r.message = format!(
            "the server offered only {offered} and the client speaks {era}: with no compatible version \
             a client may surface an error instead of retrying (MCP 2026-07-28, Versioning)"
        );
        return r;
    }
    if !era.is_empty() && !s.eras.contains(&era) {
        r.outcome = Outcome::Skip;
        r.message = format!(
            "the client spoke {era}; this scenario is about {}",
            s.eras.join(", ")
        );
        return r;
    }
    let mine: Vec<(&Violation, &Rule)> = violations
        .iter()
        .filter(|v| v.side == Side::Client && s.grades(&v.rule))
        .filter_map(|v| rules.iter().find(|r| r.id == v.rule).map(|rule| (v, rule)))
        .collect();
    let missing: Vec<String> = s
        .expect
        .iter()
        .filter_map(|e| unmet(e, &conv.msgs))
        .collect();
    r.findings = mine
        .iter()
        .take(MAX_FINDINGS)
        .map(|(v, rule)| {
            let mut f = crate::watch::report::finding(v, rule, conv);
            f.message = format!("{} ({}): {}", rule.id, rule.level.as_str(), f.message);
            f
        })
        .collect();
    r.requirements = requirements(&mine);
    r.spec = specs(&mine);
    // Levels order strongest first: the worst break is the smallest.
    let worst = mine.iter().map(|(v, _)| v.level).min();
    r.outcome = worst.map_or(Outcome::Pass, Outcome::for_level);
    // No rule broken: no level to show (a scenario not exercised broke none).
    r.level = worst.unwrap_or(Level::Info);
    let (judged, idle) = exercise(s, rules, exercised);
    r.message = message(&mine, conv.msgs.len(), judged, &idle);
    if !missing.is_empty() {
        not_exercised(&mut r, &missing, facts);
    } else if judged == 0 && facts.client_ok && r.outcome == Outcome::Pass {
        // Not one of its rules judged a message: nothing was tested.
        r.outcome = Outcome::Skip;
        r.message = format!(
            "not exercised: none of the client rules it grades judged a message of this conversation ({})",
            listed(&idle)
        );
    } else if !facts.client_ok && r.outcome == Outcome::Pass {
        r.outcome = Outcome::Warn;
        r.level = Level::Should;
        r.message = format!(
            "the rules held, but the client {} (a driver should exit 0 after doing what it was asked)",
            facts.client_exit
        );
    }
    r.broken = Broken::of(r.outcome, r.level, &r.requirements);
    if r.outcome != Outcome::Pass {
        r.transcript = crate::watch::report::transcript(&conv.msgs);
        r.stderr_tail = facts.client_output.clone();
    }
    r
}

/// The versions the server offered in an UnsupportedProtocolVersion
/// (-32022), when the client never came to speak one of them.
fn no_common_version(conv: &Conversation, era: &str) -> Option<String> {
    let offered: Vec<String> = conv
        .msgs
        .iter()
        .filter(|m| m.from == Side::Server)
        .filter(|m| {
            m.error()
                .and_then(|e| e.get("code"))
                .and_then(Value::as_i64)
                == Some(-32022)
        })
        .filter_map(|m| m.error()?.pointer("/data/supported")?.as_array().cloned())
        .next()?
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    (!offered.is_empty() && !offered.iter().any(|v| v == era)).then(|| offered.join(", "))
}

fn base_result(s: &ClientScenario, facts: &RunFacts, era: &str) -> ScenarioResult {
    ScenarioResult {
        id: result_id(s, &facts.transport),
        title: s.title.clone(),
        profile: "client".to_string(),
        level: Level::Must,
        requirements: Vec::new(),
        bases: Vec::new(),
        spec: Vec::new(),
        origin: s.origin.clone(),
        era: era.to_string(),
        outcome: Outcome::Pass,
        expected_failure: false,
        broken: None,
        shared_finding: None,
        message: String::new(),
        findings: Vec::new(),
        alternatives: Vec::new(),
        started_ms: None,
        duration_ms: facts.duration_ms,
        transcript: Vec::new(),
        transcript_dropped: 0,
        stderr_tail: String::new(),
        server_exits: Vec::new(),
    }
}

/// The driver did not do what the scenario asked: its rules were not
/// exercised, so the run proves nothing either way. An error, not a
/// failure at any level: no text requires a client to do what a test asks.
/// Where the client also broke a rule, the broken rule decides the outcome
/// (it is often why the rest did not happen: a server refused the message).
fn not_exercised(r: &mut ScenarioResult, missing: &[String], facts: &RunFacts) {
    let why = if facts.client_ok {
        String::new()
    } else {
        format!(" (the client {})", facts.client_exit)
    };
    let unmet = format!("not exercised: {}{why}", missing.join("; "));
    if r.outcome == Outcome::Pass {
        r.outcome = Outcome::Error;
        r.message = unmet;
    } else {
        r.message = format!("{}; and {unmet}", r.message);
    }
    for m in missing {
        r.findings.push(Finding::new(
            Outcome::Error,
            None,
            format!("not exercised: {m}"),
        ));
    }
}

/// How many of the client rules the scenario grades judged a message, and
/// the ids of those that judged none.
fn exercise<'r>(
    s: &ClientScenario,
    rules: &'r [Rule],
    exercised: &[&str],
) -> (usize, Vec<&'r str>) {
    let graded = rules
        .iter()
        .filter(|r| r.side == Side::Client && s.grades(&r.id));
    let (judged, idle): (Vec<&Rule>, Vec<&Rule>) =
        graded.partition(|r| exercised.contains(&r.id.as_str()));
    (judged.len(), idle.iter().map(|r| r.id.as_str()).collect())
}

/// Rule ids for a message line: the first few, and how many more.
fn listed(ids: &[&str]) -> String {
    const SHOWN: usize = 4;
    let mut text = ids
        .iter()
        .take(SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        text.push_str(&format!(" and {} more", ids.len() - SHOWN));
    }
    text
}

fn message(mine: &[(&Violation, &Rule)], total: usize, judged: usize, idle: &[&str]) -> String {
    match mine.first() {
        None if idle.is_empty() => {
            format!("every client rule it grades held over {total} messages")
        }
        None => format!(
            "{judged} of its {} client rules judged a message and held over {total} messages; not exercised here: {}",
            judged + idle.len(),
            listed(idle)
        ),
        Some((first, _)) => {
            let more = mine.len() - 1;
            let tail = if more > 0 {
                format!(" (+{more} more)")
            } else {
                String::new()
            };
            format!(
                "{} ({}) at #{}: {}{tail}",
                first.rule,
                first.level.as_str(),
                first.pos,
                first.message
            )
        }
    }
}

fn requirements(mine: &[(&Violation, &Rule)]) -> Vec<String> {
    let mut ids: Vec<String> = mine.iter().map(|(_, r)| r.requirement.clone()).collect();
    ids.sort();
    ids.dedup();
    ids
}

fn specs(mine: &[(&Violation, &Rule)]) -> Vec<crate::scenario::model::SpecRef> {
    let mut seen = std::collections::HashSet::new();
    mine.iter()
        .filter(|(_, r)| seen.insert(r.id.clone()))
        .map(|(_, r)| r.spec.clone())
        .collect()
}

/// Why `e` is not met by the client's messages, if it is not.
fn unmet(e: &Expect, msgs: &[Msg]) -> Option<String> {
    let seen = msgs
        .iter()
        .filter(|m| m.from == Side::Client && m.method() == Some(e.method.as_str()))
        .filter(|m| {
            let params = m.params().cloned().unwrap_or(Value::Null);
            e.params.as_ref().is_none_or(|p| contains(&params, p))
                && e.has.iter().all(|k| params.get(k).is_some())
        })
        .count();
    (seen < e.count).then(|| {
        let times = if e.count > 1 {
            format!(" ({seen} of {} such messages)", e.count)
        } else {
            String::new()
        };
        format!("expected that {}{times}", e.says)
    })
}

/// Whether `actual` holds everything `wanted` says (objects by subset).
fn contains(actual: &Value, wanted: &Value) -> bool {
    match (actual, wanted) {
        (Value::Object(a), Value::Object(w)) => w
            .iter()
            .all(|(k, wv)| a.get(k).is_some_and(|av| contains(av, wv))),
        (Value::Number(a), Value::Number(w)) => a.as_f64() == w.as_f64(),
        _ => actual == wanted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msg(pos: usize, v: Value) -> Msg {
        Msg::new(pos, Side::Client, 0, v.to_string(), None)
    }

    fn expect(method: &str, params: Option<Value>, has: &[&str], count: usize) -> Expect {
        Expect {
            method: method.into(),
            params,
            has: has.iter().map(|s| s.to_string()).collect(),
            count,
            says: "it happened".into(),
        }
    }

    #[test]
    fn an_expectation_matches_params_by_subset_and_keys() {
        let msgs = vec![
            msg(
                1,
                json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"query":"a"}}),
            ),
            msg(
                2,
                json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"query":"a","cursor":"c"}}),
            ),
        ];
        let q = Some(json!({"query": "a"}));
        assert_eq!(
            unmet(&expect("tools/list", q.clone(), &["cursor"], 1), &msgs),
            None
        );
        assert_eq!(unmet(&expect("tools/list", q, &[], 2), &msgs), None);
        let missing = unmet(&expect("tools/list", None, &["cursor"], 2), &msgs);
        assert_eq!(
            missing.as_deref(),
            Some("expected that it happened (1 of 2 such messages)")
        );
        let wrong = unmet(&expect("tools/call", None, &[], 1), &msgs);
        assert!(wrong.is_some());
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(contains(&json!({"a": 5.0}), &json!({"a": 5})));
        assert!(!contains(&json!({"a": 6}), &json!({"a": 5})));
    }
}

#[cfg(test)]
mod exercise_tests {
    use super::*;
    use crate::watch::rules::{builtin, Checker};
    use serde_json::json;

    /// A stdio conversation: the handshake and one tools/list.
    fn checker() -> Checker {
        let msgs = [
            (
                Side::Client,
                json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
            ),
            (
                Side::Server,
                json!({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}),
            ),
            (
                Side::Client,
                json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            ),
            (
                Side::Client,
                json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
            ),
        ];
        let mut c = Checker::new(builtin().unwrap_or_else(|e| panic!("{e}")), false);
        for (i, (side, v)) in msgs.into_iter().enumerate() {
            c.feed(Msg::new(i + 1, side, 0, v.to_string(), None));
        }
        c.finish();
        c
    }

    fn graded(rules: &str) -> ScenarioResult {
        let text = format!("scenarios:\n  - name: x\n    title: t\n    rules: {rules}\n");
        let s = super::super::scenario::load_str("x.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
        let c = checker();
        let facts = RunFacts {
            transport: "stdio".into(),
            client_ok: true,
            ..RunFacts::default()
        };
        grade(
            &s[0],
            &c.rules,
            &c.violations,
            &c.exercised(),
            &c.conv,
            &facts,
        )
    }

    #[test]
    fn a_scenario_none_of_whose_rules_judged_a_message_is_not_a_pass() {
        let r = graded("[\"client/http-*\", \"client/search-cursor-query\"]");
        assert_eq!(r.outcome, Outcome::Skip, "{}", r.message);
        assert!(r.message.starts_with("not exercised:"), "{}", r.message);
        assert!(r.message.contains("client/http-accept"), "{}", r.message);
        // One rule that judged a message is enough to grade; the rest are named.
        let r = graded("[\"client/http-*\", \"client/jsonrpc-version\"]");
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.message);
        assert!(
            r.message
                .starts_with("1 of its 11 client rules judged a message and held over 4")
                && r.message.contains("not exercised here: client/http-accept"),
            "{}",
            r.message
        );
    }
}
