//! Trace rules: invariants over a conversation, declared as data
//! (`rules/trace/*.yaml`, embedded in the binary) that pick one of the
//! built-in check kinds with its parameters. Pure: no I/O.

mod capability;
mod checks;
mod flows;
mod http;
mod http_request;
pub mod load;
mod origin;
mod param_headers;
mod params;
mod selection;
mod session_end;
mod subject;
#[cfg(test)]
mod tests;

use serde::Serialize;
use serde_json::Value;

use crate::scenario::model::{Level, SpecRef};

use super::sessions::Sessions;
use super::trace::{Conversation, Msg, Side};

pub use checks::Check;
pub use load::{builtin, load_str, RuleError};
use subject::unexercised_reason;

/// One rule as declared.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub id: String,
    pub title: String,
    /// Whose rule it is: only this side's messages can break it.
    pub side: Side,
    pub level: Level,
    /// The requirement id cited (e.g. MCP-MSG-ID-UNIQUE).
    pub requirement: String,
    /// What a level above the quote's keyword rests on, if anything.
    pub basis: Option<String>,
    pub spec: SpecRef,
    pub check: Check,
    /// Protocol versions it applies in (empty: every era).
    pub eras: Vec<String>,
    /// `stdio` or `http` when it holds over one transport only.
    pub transport: Option<String>,
    /// `file:line:col` of the rule.
    pub origin: String,
    /// `file:line:col` of its `requirement:` value.
    pub requirement_at: String,
}

/// A rule broken by one message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    pub rule: String,
    pub side: Side,
    pub level: Level,
    /// The message that broke it.
    pub pos: usize,
    /// Earlier messages it relates to (the first use of an id, the request…).
    pub related: Vec<usize>,
    pub message: String,
    /// The session it happened in (an index of [`Checker::sessions`]; 0 over stdio).
    #[serde(skip)]
    pub session: usize,
}

/// What a check found: a message, and the positions it relates to.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub message: String,
    pub related: Vec<usize>,
}

impl Hit {
    pub fn new(message: impl Into<String>, related: Vec<usize>) -> Self {
        Self {
            message: message.into(),
            related,
        }
    }
}

/// What a check may read: the conversation before the message, and the transport.
pub struct Ctx<'a> {
    pub conv: &'a Conversation,
    pub http: bool,
}

impl Rule {
    /// Whether the rule holds where the conversation is.
    fn applies(&self, ctx: &Ctx<'_>, msg: &Msg) -> bool {
        if msg.from != self.side {
            return false;
        }
        match self.transport.as_deref() {
            Some("http") if !ctx.http => return false,
            Some("stdio") if ctx.http => return false,
            _ => {}
        }
        if self.eras.is_empty() {
            return true;
        }
        let era = era_for(ctx.conv, msg);
        era.is_some_and(|e| self.eras.contains(&e))
    }

    pub fn check(&self, ctx: &Ctx<'_>, msg: &Msg) -> Vec<Violation> {
        self.judge(ctx, msg).2
    }

    /// Whether the rule's filter held for `msg`, whether its check examined
    /// it, and what it broke.
    pub fn judge(&self, ctx: &Ctx<'_>, msg: &Msg) -> (bool, bool, Vec<Violation>) {
        if !self.applies(ctx, msg) {
            return (false, false, Vec::new());
        }
        let examined = self.check.examines(ctx, msg);
        let found = self
            .check
            .run(ctx, msg)
            .into_iter()
            .map(|h| Violation {
                rule: self.id.clone(),
                side: self.side,
                level: self.level,
                pos: msg.pos,
                related: h.related,
                message: h.message,
                session: 0,
            })
            .collect::<Vec<_>>();
        (true, examined, found)
    }
}

impl Rule {
    /// The rule's checks on the whole conversation of a client that ended
    /// on its own: each hit counts where the rule holds for the message it
    /// is about.
    /// Returns how many of its messages the checks examined, and the violations.
    pub fn check_end(&self, conv: &Conversation, http: bool) -> (usize, Vec<Violation>) {
        let ctx = Ctx { conv, http };
        let holds = |pos: &usize| {
            conv.msgs
                .iter()
                .find(|m| m.pos == *pos)
                .is_some_and(|m| self.applies(&ctx, m))
        };
        let (examined, hits) = self.check.at_end(conv);
        let examined = examined.iter().filter(|p| holds(p)).count();
        let found = hits
            .into_iter()
            .filter(|(pos, _)| holds(pos))
            .map(|(pos, h)| Violation {
                rule: self.id.clone(),
                side: self.side,
                level: self.level,
                pos,
                related: h.related,
                message: h.message,
                session: 0,
            })
            .collect();
        (examined, found)
    }
}

/// How much of a conversation one rule judged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Uses {
    /// Messages its side, era and transport filter held for.
    pub applied: usize,
    /// Of those, the messages its check examined (see `subject.rs`).
    pub examined: usize,
    /// Messages that broke the rule though its subject test passed them
    /// by: a subject test too narrow. Counted as examined; tests hold it at 0.
    pub unforeseen: usize,
}

/// The era a message belongs to: the conversation's, or the modern one
/// when the message itself names it.
fn era_for(conv: &Conversation, msg: &Msg) -> Option<String> {
    // The answer to initialize is in the version it agrees to, whatever
    // the client proposed (a client may offer 2026-07-28 in initialize and
    // be answered with 2025-11-25).
    if let Some(agreed) = initialize_answer_version(conv, msg) {
        return Some(agreed);
    }
    if msg
        .meta_version()
        .is_some_and(|v| v >= super::trace::MODERN)
    {
        return Some(super::trace::MODERN.to_string());
    }
    conv.era()
}

/// The version an answer to a pending initialize agrees to.
fn initialize_answer_version(conv: &Conversation, msg: &Msg) -> Option<String> {
    let id = msg.id().filter(|_| msg.is_response())?;
    let pending = conv.pending(msg.from.other(), id)?;
    if pending.method != "initialize" {
        return None;
    }
    msg.result()?
        .get("protocolVersion")?
        .as_str()
        .map(str::to_string)
}

/// Checks a conversation as it grows: feed it every message in order.
#[derive(Debug)]
pub struct Checker {
    pub rules: Vec<Rule>,
    /// Every message, whatever its session: the transcript.
    pub conv: Conversation,
    /// Over HTTP, each MCP session's own conversation, which its rules read.
    pub sessions: Sessions,
    pub http: bool,
    pub violations: Vec<Violation>,
    /// What each rule judged, in the order of `rules`.
    pub uses: Vec<Uses>,
    /// Whether the checks judged when the watch ends ran ([`Checker::close`]).
    pub closed: bool,
    /// Whether the whole-conversation checks ran ([`Checker::finish`]).
    pub finished: bool,
}

impl Checker {
    pub fn new(rules: Vec<Rule>, http: bool) -> Self {
        Self {
            uses: vec![Uses::default(); rules.len()],
            closed: false,
            finished: false,
            rules,
            conv: Conversation::default(),
            sessions: Sessions::default(),
            http,
            violations: Vec::new(),
        }
    }

    /// Checks `msg` against every rule, in its session, then adds it to the
    /// conversation. Returns the violations it caused.
    pub fn feed(&mut self, msg: Msg) -> &[Violation] {
        let before = self.violations.len();
        let session = if self.http {
            self.sessions.route(&msg)
        } else {
            0
        };
        let conv = match self.sessions.list.get(session) {
            Some(s) if self.http => &s.conv,
            _ => &self.conv,
        };
        let ctx = Ctx {
            conv,
            http: self.http,
        };
        for (rule, uses) in self.rules.iter().zip(self.uses.iter_mut()) {
            let (applied, examined, found) = rule.judge(&ctx, &msg);
            let unforeseen = !examined && !found.is_empty();
            uses.applied += usize::from(applied);
            uses.examined += usize::from(examined || unforeseen);
            uses.unforeseen += usize::from(unforeseen);
            self.violations
                .extend(found.into_iter().map(|v| Violation { session, ..v }));
        }
        if let Some(s) = self.sessions.list.get_mut(session).filter(|_| self.http) {
            s.conv.observe(msg.clone());
        }
        self.conv.observe(msg);
        &self.violations[before..]
    }

    /// The sessions seen over HTTP (none over stdio).
    pub fn session_count(&self) -> usize {
        self.sessions.list.len()
    }

    /// Runs the checks judged when `mcp-conform watch` ends (the host
    /// closed, a signal, the end of a replay), each HTTP session's on its
    /// own. Once: a second call does nothing.
    pub fn close(&mut self) {
        if !self.closed {
            self.judge_ended(Check::judges_at_close);
            self.closed = true;
        }
    }

    /// Runs the checks that judge a whole conversation, each HTTP session's
    /// on its own. Only for one that is complete: a client scenario whose
    /// client ended on its own. (A client run does not [`Checker::close`]:
    /// its conversation ends when the scenario does, not when the client
    /// leaves a session it no longer needs.)
    pub fn finish(&mut self) {
        self.judge_ended(Check::judges_whole);
        self.finished = true;
    }

    /// Runs the end-of-conversation checks of the rules whose check `pick`
    /// accepts, on each HTTP session (or the one conversation over stdio).
    fn judge_ended(&mut self, pick: fn(&Check) -> bool) {
        let per_session: Vec<(usize, &Conversation)> =
            if self.http && !self.sessions.list.is_empty() {
                self.sessions
                    .list
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (i, &s.conv))
                    .collect()
            } else {
                vec![(0, &self.conv)]
            };
        let mut found = Vec::new();
        for (session, conv) in per_session {
            for (rule, uses) in self.rules.iter().zip(self.uses.iter_mut()) {
                if !pick(&rule.check) {
                    continue;
                }
                let (examined, hits) = rule.check_end(conv, self.http);
                uses.examined += examined;
                found.extend(hits.into_iter().map(|v| Violation { session, ..v }));
            }
        }
        self.violations.extend(found);
    }

    /// The ids of the rules whose check examined at least one message.
    pub fn exercised(&self) -> Vec<&str> {
        self.rules
            .iter()
            .zip(&self.uses)
            .filter(|(_, u)| u.examined > 0)
            .map(|(r, _)| r.id.as_str())
            .collect()
    }

    /// What `rule` judged so far.
    pub fn uses_of(&self, rule: &Rule) -> Uses {
        self.rules
            .iter()
            .position(|r| r.id == rule.id)
            .and_then(|i| self.uses.get(i).copied())
            .unwrap_or_default()
    }

    /// Why a rule judged nothing here, in one line; None when it judged
    /// at least one message.
    pub fn not_exercised(&self, rule: &Rule) -> Option<String> {
        let uses = self.uses_of(rule);
        if uses.examined > 0 {
            return None;
        }
        Some(unexercised_reason(self, rule, uses))
    }
}

/// The strongest RFC 2119 keyword of a quote, whoever it binds.
pub fn strongest_keyword(quote: &str) -> Option<Level> {
    quote
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(crate::requirements::keyword_level)
        .min()
}

/// A short text of a message for a finding: its method or kind and id.
pub fn describe(msg: &Msg) -> String {
    let Some(v) = msg.value.as_ref() else {
        return "a line that is not JSON".to_string();
    };
    let id = v.get("id").map(Value::to_string);
    match (msg.method(), id) {
        (Some(m), Some(id)) => format!("request {m} (id {id})"),
        (Some(m), None) => format!("notification {m}"),
        (None, Some(id)) if v.get("error").is_some() => format!("error response (id {id})"),
        (None, Some(id)) => format!("response (id {id})"),
        (None, None) => "a message without method or id".to_string(),
    }
}
