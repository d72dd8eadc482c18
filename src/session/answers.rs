//! Waiting for one answer: the sentinel that shows a message was dropped,
//! late and second answers set aside, and what a timeout message says the
//! server did instead of answering.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Session, SessionError, WireViolation};
use crate::jsonrpc;
use crate::transport::stdio::ExitState;
use crate::transport::Incoming;

/// The longest a sentinel's answer may precede the answer it follows before
/// the message is taken as dropped (see `Session::arm_sentinel`), and how
/// long the sentinel's own answer is awaited once the message's came.
pub const SENTINEL_GRACE: Duration = Duration::from_millis(500);

/// The shortest grace after a sentinel's answer.
pub const SENTINEL_GRACE_MIN: Duration = Duration::from_millis(100);

/// How many of the sentinel's round trips the grace after its answer lasts.
const SENTINEL_GRACE_ROUND_TRIPS: u32 = 10;

/// How long after the sentinel's answer the message's answer may still
/// come: ten times what the sentinel took to be answered, within
/// [`SENTINEL_GRACE_MIN`] and [`SENTINEL_GRACE`]. A server that handles
/// messages side by side writes the earlier answer about as soon as the
/// sentinel's, at the pace it shows while loaded: a fixed half second
/// held a warm server idle that long for every message an SDK drops
/// (docs/interpretations.md#sentinels).
pub fn sentinel_grace(round_trip: Duration) -> Duration {
    let paced = round_trip
        .saturating_mul(SENTINEL_GRACE_ROUND_TRIPS)
        .min(SENTINEL_GRACE);
    // Whole tenths of a second, so that the failure message reads the same
    // from run to run on a machine whose load holds steady (at most five).
    let tenths = paced.as_millis().div_ceil(100) as u64;
    Duration::from_millis(tenths * 100).max(SENTINEL_GRACE_MIN)
}

impl Session {
    pub(super) async fn closed_error(&mut self, during: &str) -> SessionError {
        let exit = match self.conn.exit_state().await {
            ExitState::Running => "closed its output but is still running".to_string(),
            other => other.to_string(),
        };
        SessionError::Closed {
            during: during.to_string(),
            exit,
        }
    }

    /// The next wait for an answer (`request_with`, `send_raw`) sends the
    /// era's liveness request right behind the message, over stdio, where a
    /// server reads its input in order. A server that answers the sentinel
    /// and, within a grace after it (`sentinel_grace`), not the message, has dropped the
    /// message without a word: the wait ends there (`SessionError::Dropped`)
    /// instead of at the timeout. For messages servers commonly drop (an
    /// unparsable line, an id they cannot represent); the rule is written in
    /// docs/interpretations.md.
    pub fn arm_sentinel(&mut self) {
        self.sentinel_armed = self.conn.is_stream();
    }

    /// Sends the armed sentinel, if any; returns its id.
    async fn send_sentinel(&mut self) -> Result<Option<Value>, SessionError> {
        if !std::mem::take(&mut self.sentinel_armed) {
            return Ok(None);
        }
        let id = self.fresh_id();
        let method = self.era.liveness_method();
        let params = self.with_era_meta(None, true);
        self.send_value(&jsonrpc::request(id.clone(), method, params))
            .await?;
        Ok(Some(id))
    }

    /// Waits for the response to `id` (or to anything, when `id` is None).
    pub(super) async fn await_response(
        &mut self,
        id: Option<&Value>,
        method: &str,
        timeout: Duration,
    ) -> Result<Value, SessionError> {
        let mut deadline = Instant::now() + timeout;
        let violations_before = self.violations.len();
        // The message awaited is the last one sent (HTTP: its POST).
        let exchange = self.conn.last_exchange();
        self.server_requests_answered = 0;
        let sentinel = self.send_sentinel().await?;
        let sentinel_sent = Instant::now();
        let mut grace = None;
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let next = tokio::time::timeout(remaining, self.next_incoming()).await;
            let Ok(item) = next else {
                return Err(if let Some(grace) = grace {
                    self.dropped(id, method, sentinel.as_ref(), grace)
                } else {
                    self.timed_out(method, timeout, violations_before, sentinel)
                        .await
                });
            };
            match item {
                Some(Incoming::Message(v)) => {
                    let Some(answer) = self.dispatch(v).await? else {
                        continue;
                    };
                    if let Some(s) = sentinel.as_ref().filter(|s| same_id(answer.get("id"), s)) {
                        self.note_answered(s);
                        let after = sentinel_grace(sentinel_sent.elapsed());
                        grace = Some(after);
                        deadline = deadline.min(Instant::now() + after);
                        continue;
                    }
                    if let Some(reason) = self.stray(id, &answer) {
                        self.transcript.note(&self.name, reason);
                        continue;
                    }
                    // The request awaited got its answer, whatever id the
                    // answer carries: a wrong id recorded as answered would
                    // make the next scenario's wrong-id answer a second one.
                    if let Some(answered) = id.or(answer.get("id")) {
                        self.note_answered(answered);
                    }
                    if let (Some(s), None) = (sentinel, grace) {
                        self.settle_sentinel(s, deadline).await;
                    }
                    return Ok(answer);
                }
                Some(Incoming::Unanswered {
                    exchange: e,
                    status,
                }) if Some(e) == exchange => {
                    return Err(SessionError::Unanswered {
                        method: method.to_string(),
                        status,
                        hint: self.body_hint(violations_before),
                    });
                }
                Some(
                    Incoming::Garbage { .. } | Incoming::Unanswered { .. } | Incoming::Line(_),
                ) => {}
                Some(Incoming::Closed) | None => {
                    return Err(self
                        .closed_error(&format!("the harness waited for the answer to {method}"))
                        .await)
                }
            }
        }
    }

    /// The sentinel was answered and, within its `grace`, the message not:
    /// the server dropped it.
    fn dropped(
        &self,
        id: Option<&Value>,
        method: &str,
        sentinel: Option<&Value>,
        grace: Duration,
    ) -> SessionError {
        let liveness = self.era.liveness_method();
        SessionError::Dropped {
            unanswered: match id {
                Some(id) => format!("the {method} with id {id}"),
                None => method.to_string(),
            },
            sentinel: match sentinel {
                Some(s) => format!("the {liveness} with id {s}"),
                None => format!("the {liveness}"),
            },
            grace_ms: grace.as_millis() as u64,
        }
    }

    /// No answer within `timeout`; the unanswered sentinel is abandoned
    /// with the message.
    async fn timed_out(
        &mut self,
        method: &str,
        timeout: Duration,
        violations_before: usize,
        sentinel: Option<Value>,
    ) -> SessionError {
        if let Some(s) = sentinel {
            self.abandoned_ids.push(s);
        }
        let hint = self.timeout_hint(violations_before).await;
        SessionError::Timeout {
            method: method.to_string(),
            ms: timeout.as_millis() as u64,
            hint,
        }
    }

    /// Reads the sentinel's answer, which follows the one just returned on a
    /// server that reads in order, so the session stays clean for the next
    /// scenario; not answered within `SENTINEL_GRACE`, it is abandoned.
    async fn settle_sentinel(&mut self, sentinel: Value, deadline: Instant) {
        let until = deadline.min(Instant::now() + SENTINEL_GRACE);
        if !self.read_answer_to(&sentinel, None, until).await {
            self.abandoned_ids.push(sentinel);
        }
    }

    /// Reads until the answer to `id` comes (true), setting aside and
    /// noting anything else the server wrote before it; false when `until`
    /// passes or the stream ends first. `waiting_for` is the id the
    /// scenario still waits for, if any, for telling a stray answer's kind.
    pub(super) async fn read_answer_to(
        &mut self,
        id: &Value,
        waiting_for: Option<&Value>,
        until: Instant,
    ) -> bool {
        loop {
            let remaining = until.saturating_duration_since(Instant::now());
            match tokio::time::timeout(remaining, self.next_incoming()).await {
                Ok(Some(Incoming::Message(v))) => match self.dispatch(v).await {
                    Ok(Some(answer)) if same_id(answer.get("id"), id) => {
                        self.note_answered(id);
                        return true;
                    }
                    Ok(Some(answer)) => {
                        let reason = self.stray(waiting_for, &answer).unwrap_or_else(|| {
                            format!("answer {} ignored: nothing waited for it", answer["id"])
                        });
                        self.transcript.note(&self.name, reason);
                    }
                    Ok(None) => {}
                    Err(_) => return false,
                },
                Ok(Some(
                    Incoming::Garbage { .. } | Incoming::Unanswered { .. } | Incoming::Line(_),
                )) => {}
                Ok(Some(Incoming::Closed) | None) | Err(_) => return false,
            }
        }
    }

    /// Why an answer is not the one being waited for: a late answer to a
    /// timed-out or unawaited request, or a second answer to the same id.
    ///
    /// An id the session sent for an earlier scenario of a warm server is
    /// never the current scenario's answer: taken as one, a late or second
    /// answer from before became a wrong-id answer here, or, worse, the
    /// answer to the request being waited for, and which of these happened
    /// depended on how fast the server wrote.
    pub(super) fn stray(&mut self, waiting_for: Option<&Value>, answer: &Value) -> Option<String> {
        let got = answer.get("id")?;
        // Id null answers what had no readable id (a parse error, an
        // invalid Request): no request had it, so it is neither late nor
        // second, however many such answers came before.
        if waiting_for.is_some_and(|w| same_id(Some(got), w)) || got.is_null() {
            return None;
        }
        if self.abandoned_ids.iter().any(|a| same_id(Some(got), a)) {
            return Some(format!("late answer to earlier request {got} ignored"));
        }
        let key = id_key(got);
        let own_wrong_id = waiting_for.is_some_and(|w| same_digits(w, got));
        let second_to_earlier = self.earlier_answered.contains(&key) && !own_wrong_id;
        if second_to_earlier || (self.sent_ids.contains(&key) && self.answered_ids.contains(&key)) {
            self.violation(WireViolation {
                reason: format!("a second answer to request id {got}"),
                excerpt: crate::transport::stdio::excerpt(answer.to_string().as_bytes()),
            });
            return Some(format!("second answer to request {got} ignored"));
        }
        if self.ids_ever_sent.contains(&key) && !self.sent_ids.contains(&key) && !own_wrong_id {
            // Its first answer: one more with this id is a second one.
            self.earlier_answered.insert(key);
            return Some(format!(
                "late answer to request {got} of an earlier scenario ignored"
            ));
        }
        None
    }

    /// Records that `id` got its (first) answer.
    pub(super) fn note_answered(&mut self, id: &Value) {
        if !id.is_null() {
            self.answered_ids.insert(id_key(id));
        }
    }

    /// The wire violations seen since `before` of them were.
    fn violations_since(&self, before: usize) -> &[WireViolation] {
        &self.violations[before.min(self.violations.len())..]
    }

    /// What an unanswered POST's body said: the excerpt the transport
    /// noted as its last wire violation.
    /// Without an excerpt (a body not read, a stream cut at a cap), the
    /// reason is the clue.
    pub(super) fn body_hint(&self, violations_before: usize) -> String {
        match self.violations_since(violations_before).last() {
            // The reason names the content type the harness saw.
            Some(v) if !v.excerpt.is_empty() && !v.reason.is_empty() => {
                format!("; {}: {:?}", v.reason, v.excerpt)
            }
            Some(v) if !v.excerpt.is_empty() => format!("; the body: {:?}", v.excerpt),
            Some(v) if !v.reason.is_empty() => format!("; {}", v.reason),
            _ => String::new(),
        }
    }

    /// What the server did instead of answering, for a timeout message.
    async fn timeout_hint(&mut self, violations_before: usize) -> String {
        let mut hints = Vec::new();
        let new = self.violations_since(violations_before);
        if let Some(last) = new.last() {
            // What the server wrote is the clue (an HTTP error page, a log line…).
            let wrote = if last.excerpt.is_empty() {
                String::new()
            } else {
                format!(": {:?}", last.excerpt)
            };
            hints.push(format!(
                "meanwhile the server wrote {} line(s) that are not JSON-RPC messages, the last: {}{wrote}",
                new.len(),
                last.reason
            ));
        }
        let pending = self.conn.pending_bytes();
        if pending > 0 {
            hints.push(format!(
                "the server wrote {pending} bytes without ending the line"
            ));
        }
        let exit = self.conn.exit_state().await;
        if !matches!(exit, ExitState::Running | ExitState::Disconnected) {
            hints.push(format!(
                "the server {exit}, but its stdout is still open (a child process holds it?)"
            ));
        }
        if hints.is_empty() {
            String::new()
        } else {
            format!(" ({})", hints.join("; "))
        }
    }
}

/// The key an id is matched by: its JSON text, except that a number
/// written with a zero fraction (4711.0) is the integer it equals, as a
/// client that reads JSON numbers as numbers sees it (JavaScript's `===`,
/// Python's `==`). The echo itself is judged by the scenarios that check
/// ids (`base/id-number`); a session that could not tell such an answer
/// was its request's waited out every request and dropped its server.
/// A float beyond 2^53 stays apart: it cannot tell apart the integers
/// that round to it (`id-large-lossy`).
pub(super) fn id_key(id: &Value) -> String {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    match id
        .as_f64()
        .filter(|f| id.is_f64() && f.fract() == 0.0 && f.abs() <= EXACT)
    {
        Some(whole) => format!("{}", whole as i64),
        None => id.to_string(),
    }
}

/// Whether an answer's id is `id`'s (see [`id_key`]).
pub(super) fn same_id(answer_id: Option<&Value>, id: &Value) -> bool {
    answer_id.is_some_and(|a| a == id || id_key(a) == id_key(id))
}

/// Whether two ids read the same once a string's quotes are dropped: a
/// scenario's string id "7" answered as the number 7 is that scenario's
/// answer (with a wrong id), not a second answer to an earlier request 7.
fn same_digits(a: &Value, b: &Value) -> bool {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    text(a) == text(b)
}
