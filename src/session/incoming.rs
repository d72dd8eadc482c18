//! What the server sends unasked: notifications (kept within a budget),
//! its own requests (answered, or recorded where the era forbids them),
//! and lines that are not JSON-RPC messages.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{transcript, Direction, Session, SessionError, WireViolation};
use crate::jsonrpc::{self, codes, Message};
use crate::transport::Incoming;

/// Notifications kept per session; a flood beyond this is counted, not stored.
pub(super) const MAX_NOTIFICATIONS: usize = 1_000;
/// Memory the kept notifications of one session may take (estimated as
/// [`transcript::approx_heap_bytes`]); each is held twice, in the log and
/// until consumed in `notifications`, and the log is copied into the CEL
/// bindings, so a few large ones must not add up to much.
pub const MAX_NOTIFICATION_BYTES: usize = 1024 * 1024;

/// Wire violations kept per session; the first ones tell the story.
const MAX_VIOLATIONS: usize = 100;

/// How a wire violation names a JSON-RPC request a 2026-07-28 server sent
/// (scenarios look for it in `stdout_violations`).
pub const SERVER_REQUEST_2026: &str =
    "a JSON-RPC request from the server, which 2026-07-28 servers MUST NOT send";

/// Lines longer than this, during a walk, are decoded cut down
/// (`pruned_decode`); a shorter one costs little either way.
const PRUNED_LINE_BYTES: usize = 1024;

/// Server-to-client requests answered while waiting for one answer; a server
/// that sends more (and may not read its stdin meanwhile) is not answered further.
const MAX_SERVER_REQUESTS: usize = 100;

impl Session {
    /// Waits for a notification with `method`, returning the first one that
    /// arrived since the session started and has not been consumed yet.
    pub async fn wait_notification(
        &mut self,
        method: &str,
        timeout: Option<Duration>,
    ) -> Result<Value, SessionError> {
        let timeout = timeout.unwrap_or(self.timeout);
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(pos) = self
                .notifications
                .iter()
                .position(|n| n["method"] == method)
            {
                let n = self.notifications.remove(pos);
                return Ok(n);
            }
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(SessionError::Timeout {
                    method: format!("a {method} notification"),
                    ms: timeout.as_millis() as u64,
                    hint: String::new(),
                });
            }
            match tokio::time::timeout(remaining, self.next_incoming()).await {
                Ok(Some(Incoming::Message(v))) => {
                    if let Some(answer) = self.dispatch(v).await? {
                        self.transcript.note(
                            &self.name,
                            format!("unsolicited response ignored: {answer}"),
                        );
                    }
                }
                Ok(Some(Incoming::Closed)) | Ok(None) => {
                    return Err(self.closed_error(&format!("waiting for {method}")).await)
                }
                Ok(Some(
                    Incoming::Garbage { .. } | Incoming::Unanswered { .. } | Incoming::Line(_),
                )) => {}
                Err(_) => {}
            }
        }
    }

    pub(super) async fn next_incoming(&mut self) -> Option<Incoming> {
        if self.closed {
            return None;
        }
        let item = match self.conn.recv().await {
            Some(Incoming::Line(line)) => Some(self.decode(&line)),
            Some(Incoming::Message(v)) => {
                self.record_received(&v);
                Some(Incoming::Message(v))
            }
            other => other,
        };
        match &item {
            Some(Incoming::Garbage { reason, excerpt }) => {
                self.transcript.note(
                    &self.name,
                    format!("not a JSON-RPC message line: {reason}: {excerpt}"),
                );
                self.violation(WireViolation {
                    reason: reason.clone(),
                    excerpt: excerpt.clone(),
                });
            }
            Some(Incoming::Closed) | None => self.closed = true,
            // (A line is decoded above.)
            Some(Incoming::Message(_) | Incoming::Unanswered { .. } | Incoming::Line(_)) => {}
        }
        item
    }

    /// Records a wire violation, keeping only the first ones.
    pub(super) fn violation(&mut self, v: WireViolation) {
        if self.violations.len() < MAX_VIOLATIONS {
            self.violations.push(v);
        }
    }

    /// A line the server wrote, as a message or garbage. A long line during
    /// a walk is decoded cut down to what the walk keeps. The transcript
    /// keeps a message's text, decoded only if the report keeps it.
    fn decode(&mut self, line: &[u8]) -> Incoming {
        let decoded = match &self.page_read {
            Some(read) if line.len() > PRUNED_LINE_BYTES => read
                .decode(line)
                .map(Incoming::Message)
                .unwrap_or_else(|_| crate::transport::stdio::decode_incoming(line)),
            _ => crate::transport::stdio::decode_incoming(line),
        };
        if matches!(decoded, Incoming::Message(_)) && !self.transcript.is_full() {
            // A message decoded, so its line is UTF-8.
            let text = std::str::from_utf8(line).unwrap_or_default();
            self.transcript
                .record_text(&self.name, Direction::Received, text);
        }
        decoded
    }

    fn record_received(&self, v: &Value) {
        if !self.transcript.is_full() {
            self.transcript.record(&self.name, Direction::Received, v);
        }
    }

    /// Handles one message: notifications are stored, the server's requests
    /// are answered; a response (or an invalid message) is returned.
    pub(super) async fn dispatch(&mut self, v: Value) -> Result<Option<Value>, SessionError> {
        if v.get("id").is_none()
            && v.get("method").is_some_and(Value::is_string)
            && v["jsonrpc"] == "2.0"
        {
            // The common case of a flood, handled without copying the message again.
            self.keep_notification(v);
            return Ok(None);
        }
        if Message::is_response(&v) {
            return Ok(Some(v));
        }
        match Message::classify(v.clone()) {
            Message::Notification { .. } => {
                self.keep_notification(v);
                Ok(None)
            }
            Message::Request { .. } if self.server_requests_answered >= MAX_SERVER_REQUESTS => {
                if self.server_requests_answered == MAX_SERVER_REQUESTS {
                    self.server_requests_answered += 1;
                    self.violation(WireViolation {
                        reason: format!("the server sent more than {MAX_SERVER_REQUESTS} requests while the harness waited for one answer; the rest were not answered"),
                        excerpt: String::new(),
                    });
                }
                Ok(None)
            }
            Message::Request { method, .. } if self.era.is_stateless() => {
                // "The server MUST NOT write JSON-RPC requests to stdout"
                // (stdio) and "MUST NOT send independent JSON-RPC requests"
                // on a stream (Streamable HTTP); the client "MUST NOT send
                // JSON-RPC responses" (both, MCP 2026-07-28): not answered.
                self.violation(WireViolation {
                    reason: format!("{SERVER_REQUEST_2026} ({method}); not answered"),
                    excerpt: crate::transport::stdio::excerpt(v.to_string().as_bytes()),
                });
                Ok(None)
            }
            Message::Request { id, method, .. } => {
                self.server_requests_answered += 1;
                let answer = match method.as_str() {
                    "ping" => jsonrpc::response(id, json!({})),
                    "roots/list" => jsonrpc::response(id, json!({"roots": []})),
                    _ => jsonrpc::error_response(
                        id,
                        codes::METHOD_NOT_FOUND,
                        &format!("mcp-conform does not offer {method}"),
                        None,
                    ),
                };
                self.send_value(&answer).await?;
                Ok(None)
            }
            Message::Response { .. } | Message::Error { .. } => Ok(Some(v)),
            // In 2026-07-28 an error response's id is optional: left out
            // when the request's id could not be read (its schema's
            // JSONRPCErrorResponse).
            Message::Invalid { .. } if self.era.is_stateless() && idless_error(&v) => Ok(Some(v)),
            Message::Invalid { reason, .. } => {
                self.violation(WireViolation {
                    reason: format!("not a JSON-RPC 2.0 message: {reason}"),
                    excerpt: crate::transport::stdio::excerpt(v.to_string().as_bytes()),
                });
                Ok(Some(v))
            }
        }
    }

    /// Stores a notification, or only counts it once the count or byte
    /// budget is spent (the first one dropped is noted in the transcript).
    pub(super) fn keep_notification(&mut self, v: Value) {
        if self.notifications_dropped == 0 && self.notification_log.len() < MAX_NOTIFICATIONS {
            let bytes = transcript::approx_heap_bytes(&v);
            if self.notification_bytes + bytes <= MAX_NOTIFICATION_BYTES {
                self.notification_bytes += bytes;
                self.notification_log.push(v.clone());
                self.notifications.push(v);
                return;
            }
        }
        if self.notifications_dropped == 0 {
            self.transcript.note(
                &self.name,
                format!(
                    "notification limit reached ({} kept, {} KiB): later notifications are counted, not kept",
                    self.notification_log.len(),
                    self.notification_bytes / 1024
                ),
            );
        }
        self.notifications_dropped += 1;
    }
}

/// An error response without an id: `{"jsonrpc": "2.0", "error": {…}}`.
fn idless_error(v: &Value) -> bool {
    v["jsonrpc"] == "2.0"
        && v.get("error").is_some_and(Value::is_object)
        && v.get("id").is_none()
        && v.get("method").is_none()
        && v.get("result").is_none()
}
