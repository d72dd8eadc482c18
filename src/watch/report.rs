//! What a watched conversation found, as the run report every format
//! renders: one result line per rule (its profile is the side it binds, so
//! each side gets its own section), one finding per violation, and the
//! transcript.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::report::data::{ReportData, FORMAT};
use crate::run::events::{RunInfo, Summary};
use crate::run::outcome::{Finding, Outcome, ScenarioResult};
use crate::run::RunPolicy;
use crate::session::transcript::{Direction, Entry, MAX_MESSAGE_BYTES};

use super::rules::{Checker, Rule, Violation};
use super::sessions::Sessions;
use super::trace::{Conversation, Msg, Side};

/// Findings kept per rule; further ones are counted in the message.
const MAX_FINDINGS: usize = 50;
/// Messages kept in the transcript; further ones are counted.
const MAX_TRANSCRIPT: usize = 2000;

/// Facts about the watched connection.
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// The server command, or the upstream URL.
    pub target: String,
    /// `stdio (watch)`, `streamable-http (watch)` or `replay`.
    pub transport: String,
    pub duration_ms: u64,
    pub started_at: String,
}

/// The report of a watched conversation. Over HTTP with more than one MCP
/// session, each finding names its session and each session gets a result
/// of its own holding its transcript.
pub fn build(checker: &Checker, target: &Target) -> ReportData {
    let (rules, conv) = (&checker.rules, &checker.conv);
    let sessions = (checker.session_count() > 1).then_some(&checker.sessions);
    let era = conv.era().unwrap_or_default();
    let mut violations: Vec<&Violation> = checker.violations.iter().collect();
    // grouped by session, in order within each
    violations.sort_by_key(|v| (v.session, v.pos));
    let mut results: Vec<ScenarioResult> = rules
        .iter()
        .map(|r| rule_result(r, &violations, checker, sessions, &era))
        .collect();
    results.push(conversation_result(conv, &era, transcript(&conv.msgs)));
    if let Some(sessions) = sessions {
        results.extend(session_results(sessions, &violations));
    }
    let policy = RunPolicy::default();
    let mut summary = Summary::from_results(&results, target.duration_ms);
    summary.verdict = Some(policy.verdict(&results));
    ReportData {
        format: FORMAT.to_string(),
        run: RunInfo {
            target: target.target.clone(),
            transport: target.transport.clone(),
            era: era.clone(),
            eras: if era.is_empty() {
                Vec::new()
            } else {
                vec![era]
            },
            probes: BTreeMap::new(),
            server: conv.server_info.clone(),
            harness_version: env!("CARGO_PKG_VERSION").to_string(),
            started_at: target.started_at.clone(),
            scenarios: rules.len(),
            fixture_match: false,
            seed: 0,
            tool_calls: None,
            server_starts: None,
            jobs_narrowed: None,
        },
        summary,
        scenarios: results,
        strict: false,
    }
}

fn rule_result(
    rule: &Rule,
    violations: &[&Violation],
    checker: &Checker,
    sessions: Option<&Sessions>,
    era: &str,
) -> ScenarioResult {
    let conv = &checker.conv;
    let mine: Vec<&Violation> = violations
        .iter()
        .filter(|v| v.rule == rule.id)
        .copied()
        .collect();
    // A rule that judged no message is not shown as held: it was not run.
    let unexercised = checker.not_exercised(rule).filter(|_| mine.is_empty());
    let outcome = match (&unexercised, mine.is_empty()) {
        (Some(_), _) => Outcome::Skip,
        (None, true) => Outcome::Pass,
        (None, false) => Outcome::for_level(rule.level),
    };
    let message = match mine.first() {
        None => match unexercised {
            Some(why) => format!("not exercised: {why}"),
            None => format!(
                "held over the {} messages it judged ({} in all)",
                checker.uses_of(rule).examined,
                conv.msgs.len()
            ),
        },
        Some(first) => {
            let more = mine.len() - 1;
            let tail = if more > 0 {
                format!(" (+{more} more)")
            } else {
                String::new()
            };
            let place = match sessions {
                Some(s) => format!(" in {}", s.label(first.session)),
                None => String::new(),
            };
            format!("#{}{place}: {}{tail}", first.pos, first.message)
        }
    };
    let findings = mine
        .iter()
        .take(MAX_FINDINGS)
        .map(|v| {
            let mut f = finding(v, rule, conv);
            if let Some(s) = sessions {
                f.step = Some(format!(
                    "#{} ({} message, {})",
                    v.pos,
                    v.side,
                    s.label(v.session)
                ));
            }
            f
        })
        .collect();
    let kept = around(&conv.msgs, &mine);
    // The rest of the conversation, for a rule that shows part of it.
    let not_kept = match kept.len() {
        0 => 0,
        n => conv.msgs.len().saturating_sub(n),
    };
    ScenarioResult {
        id: rule.id.clone(),
        title: rule.title.clone(),
        profile: rule.side.as_str().to_string(),
        level: rule.level,
        requirements: vec![rule.requirement.clone()],
        bases: rule
            .basis
            .iter()
            .map(|b| format!("{}: {b}", rule.requirement))
            .collect(),
        spec: vec![rule.spec.clone()],
        origin: rule.origin.clone(),
        era: era.to_string(),
        outcome,
        expected_failure: false,
        broken: crate::run::outcome::Broken::of(
            outcome,
            rule.level,
            std::slice::from_ref(&rule.requirement),
        ),
        shared_finding: None,
        message,
        findings,
        alternatives: Vec::new(),
        started_ms: None,
        duration_ms: 0,
        transcript: kept,
        transcript_dropped: not_kept,
        stderr_tail: String::new(),
        server_exits: Vec::new(),
    }
}

/// Messages kept either side of each message a rule's finding points at.
const CONTEXT: usize = 2;

/// What a broken rule's transcript shows: each finding's message and the
/// earlier ones it relates to, with `CONTEXT` messages either side, however
/// far into the conversation. The whole conversation (up to
/// `MAX_TRANSCRIPT` messages) is the `watch/transcript` line's; copied into
/// every broken rule, a long one made reports of several megabytes per rule.
fn around(msgs: &[Msg], mine: &[&Violation]) -> Vec<Entry> {
    let mut keep = std::collections::BTreeSet::new();
    for v in mine.iter().take(MAX_FINDINGS) {
        for pos in std::iter::once(v.pos).chain(v.related.iter().copied()) {
            // Positions count from 1; the messages from 0.
            let first = pos.saturating_sub(1 + CONTEXT);
            keep.extend(first..(pos + CONTEXT).min(msgs.len()));
        }
    }
    keep.into_iter()
        .filter_map(|i| msgs.get(i))
        .map(entry)
        .collect()
}

pub(crate) fn finding(v: &Violation, rule: &Rule, conv: &Conversation) -> Finding {
    let mut f = Finding::new(
        Outcome::for_level(v.level),
        Some(format!("#{} ({} message)", v.pos, v.side)),
        v.message.clone(),
    );
    f.step_id = Some(format!("#{}", v.pos));
    f.location = Some(rule.origin.clone());
    f.actual = conv.msgs.get(v.pos - 1).map(shown);
    if conv
        .msgs
        .get(v.pos - 1)
        .is_some_and(|m| m.from == Side::Client)
    {
        f.sent_by = Some("client".to_string());
    }
    if !v.related.is_empty() {
        let related: Vec<Value> = v
            .related
            .iter()
            .filter_map(|p| conv.msgs.get(p - 1))
            .map(|m| json!({ "pos": m.pos, "from": m.from, "message": shown(m) }))
            .collect();
        f.request = Some(Value::Array(related));
    }
    f
}

fn shown(m: &Msg) -> Value {
    match &m.value {
        Some(v) if m.raw.len() <= MAX_MESSAGE_BYTES => v.clone(),
        _ => Value::String(crate::report::console::one_line(&m.raw, MAX_MESSAGE_BYTES)),
    }
}

/// The transcript as a run's: the client's messages as sent, the server's
/// as received; each entry's session names its position and side.
pub(crate) fn transcript(msgs: &[Msg]) -> Vec<Entry> {
    msgs.iter().take(MAX_TRANSCRIPT).map(entry).collect()
}

fn entry(m: &Msg) -> Entry {
    Entry {
        at_ms: m.at_ms,
        session: format!("#{} {}", m.pos, m.from),
        direction: match m.from {
            Side::Client => Direction::Sent,
            Side::Server => Direction::Received,
        },
        message: if m.raw.is_empty() {
            Value::String(bodiless(m))
        } else {
            shown(m)
        },
        text: None,
    }
}

/// A transcript entry for an HTTP message without a body: the client's
/// request by its method and path, the server's answer by its status and
/// the request it answers.
fn bodiless(m: &Msg) -> String {
    let Some(http) = m.http.as_ref() else {
        return "an empty line".to_string();
    };
    let target = match &http.path {
        Some(path) => format!("{} {path}", http.method),
        None => http.method.clone(),
    };
    match (m.from, http.status) {
        (Side::Client, _) => format!("{target} (no body)"),
        (Side::Server, Some(status)) if http.method != "POST" => {
            format!("HTTP {status} answering {target}, no body")
        }
        (Side::Server, status) => format!("HTTP {}, no body", status.unwrap_or_default()),
    }
}

/// One info line per MCP session: its messages, its era, the rules its
/// messages broke, and its own transcript.
fn session_results(sessions: &Sessions, violations: &[&Violation]) -> Vec<ScenarioResult> {
    sessions
        .list
        .iter()
        .enumerate()
        .map(|(i, session)| {
            let conv = &session.conv;
            let era = conv.era().unwrap_or_default();
            let mut broke: Vec<&str> = violations
                .iter()
                .filter(|v| v.session == i)
                .map(|v| v.rule.as_str())
                .collect();
            broke.sort_unstable();
            broke.dedup();
            let mut r = conversation_result(conv, &era, transcript(&conv.msgs));
            r.id = format!("watch/session-{}", i + 1);
            r.title = format!("The conversation of {}", sessions.label(i));
            if !broke.is_empty() {
                r.message = format!("{}; broken here: {}", r.message, broke.join(", "));
            }
            r
        })
        .collect()
}

/// One info line holding the whole conversation: what was seen, both sides.
fn conversation_result(conv: &Conversation, era: &str, transcript: Vec<Entry>) -> ScenarioResult {
    let from = |s: Side| conv.msgs.iter().filter(|m| m.from == s).count();
    ScenarioResult {
        id: "watch/transcript".to_string(),
        title: "The conversation watched".to_string(),
        profile: "conversation".to_string(),
        level: crate::scenario::model::Level::Info,
        requirements: Vec::new(),
        bases: Vec::new(),
        spec: Vec::new(),
        origin: String::new(),
        era: era.to_string(),
        outcome: Outcome::Info,
        expected_failure: false,
        broken: None,
        shared_finding: None,
        message: format!(
            "{} messages: {} from the client, {} from the server",
            conv.msgs.len(),
            from(Side::Client),
            from(Side::Server)
        ),
        findings: Vec::new(),
        alternatives: Vec::new(),
        started_ms: None,
        duration_ms: 0,
        transcript,
        transcript_dropped: conv.msgs.len().saturating_sub(MAX_TRANSCRIPT),
        stderr_tail: String::new(),
        server_exits: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::trace::HttpMeta;

    fn bodiless_msg(from: Side, method: &str, status: Option<u16>) -> Msg {
        let http = HttpMeta {
            method: method.into(),
            path: Some("/mcp".into()),
            status,
            headers: Vec::new(),
            exchange: 1,
        };
        Msg::new(1, from, 0, String::new(), Some(http))
    }

    #[test]
    fn a_bodiless_get_or_delete_shows_its_method_path_and_answer() {
        let shown = |m: Msg| transcript(&[m])[0].message.clone();
        assert_eq!(
            shown(bodiless_msg(Side::Client, "GET", None)),
            "GET /mcp (no body)"
        );
        assert_eq!(
            shown(bodiless_msg(Side::Client, "DELETE", None)),
            "DELETE /mcp (no body)"
        );
        assert_eq!(
            shown(bodiless_msg(Side::Server, "GET", Some(405))),
            "HTTP 405 answering GET /mcp, no body"
        );
        assert_eq!(
            shown(bodiless_msg(Side::Server, "POST", Some(202))),
            "HTTP 202, no body"
        );
    }
}
