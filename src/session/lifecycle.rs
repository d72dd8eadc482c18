//! Closing a session, and handing a warm one on to the next scenario.

use std::time::{Duration, Instant};

use super::connection::Connection;
use super::{Session, Transcript};
use crate::transport::stdio::ExitState;

impl Session {
    /// Ends the session and stops its server, waiting up to `grace` at each
    /// step of the escalation; says how the server ended.
    pub async fn close_within(&mut self, grace: Duration) -> String {
        self.note_dropped();
        self.conn.shutdown(grace).await
    }

    /// Ends the session (the default 500 ms grace); says how the server ended.
    pub async fn close(&mut self) -> String {
        self.close_within(Duration::from_millis(500)).await
    }

    /// Ends the session without waiting for a stdio server to exit.
    pub async fn close_in_background(&mut self, grace: Duration) -> String {
        self.note_dropped();
        self.conn.shutdown_in_background(grace).await
    }

    /// How a stdio server ended, waiting briefly for it; None while it runs
    /// (and over HTTP).
    pub async fn server_exit(&mut self) -> Option<String> {
        match &mut self.conn {
            Connection::Stdio(c) => {
                let how = c.exit_state().await;
                (how != ExitState::Running).then(|| how.to_string())
            }
            _ => None,
        }
    }

    /// Whether the session can serve another scenario as it is: still open,
    /// nothing unanswered but what it cancelled or the server dropped
    /// (whose late answer is ignored), nothing unconsumed. A wire violation does not end its use:
    /// the stream is newline-framed, so a line of noise, a second answer or
    /// a malformed message leaves the next line readable, and the violation
    /// is the finding of the scenario whose rule it breaks (a server that
    /// prints a banner was otherwise restarted for every scenario).
    pub fn reusable(&self) -> bool {
        !self.closed
            && self
                .abandoned_ids
                .iter()
                .all(|id| self.cancelled_ids.contains(id) || self.dropped_ids.contains(id))
            && self.notifications_dropped == 0
    }

    /// Whether the last `tools/list` the session sent was filtered (or
    /// searched with a query): a server may keep that listing as session
    /// state (which tools a description read authorizes, under
    /// pd-auth-filter-scoped), and only an unfiltered listing the server
    /// sees resets it.
    pub fn left_filtered_listing(&self) -> bool {
        self.filtered_listing
    }

    /// The tool names this session's `resources/read` URIs named so far
    /// (their query values), over every scenario it served: on a warm
    /// server, what earlier scenarios may have authorized (`touched_tools`
    /// in CEL).
    pub fn touched_tools(&self) -> &std::collections::BTreeSet<String> {
        &self.touched_tools
    }

    /// Whether a notification went out since the session was last handed
    /// on (the handshake's own included): what a server wrote back to it,
    /// had it answered, may still be on its way.
    pub fn notified(&self) -> bool {
        self.notified
    }

    /// Whether the server still answers after a scenario wrote it bytes it
    /// need not survive: a liveness request, and everything the server
    /// wrote before its answer read and set aside (an answer the garbage
    /// provoked late belongs to the scenario that sent it, not to the next
    /// one). False when the answer does not come within `timeout`, the
    /// stream ends, or the session is not fit to be handed on anyway.
    pub async fn checkup(&mut self, timeout: Duration) -> bool {
        if !self.reusable() {
            return false;
        }
        let id = self.fresh_id();
        let method = self.era.liveness_method();
        let params = self.with_era_meta(None, true);
        let ping = crate::jsonrpc::request(id.clone(), method, params);
        if self.send_value(&ping).await.is_err() {
            return false;
        }
        let answered = self
            .read_answer_to(&id, Some(&id), Instant::now() + timeout)
            .await;
        let note = if answered {
            format!("checked before it serves another scenario: the server answered {method}")
        } else {
            format!(
                "not handed on: no answer to {method} within {} ms after the scenario",
                timeout.as_millis()
            )
        };
        self.transcript.note(&self.name, note);
        answered
    }

    /// Hands a warm session to the next scenario: its own name, transcript
    /// and empty logs (the handshake answer stays).
    pub fn adopt(&mut self, name: &str, transcript: Transcript) {
        self.name = name.to_string();
        self.notified = false;
        self.transcript = transcript;
        self.notifications.clear();
        self.notification_log.clear();
        self.notification_bytes = 0;
        // What the server wrote before any scenario had it (a start-up
        // banner on stdout) is part of every scenario's view of it, as it
        // is of a fresh server's; what it wrote since belongs to the
        // scenario that had it then.
        let startup = self
            .startup_violations
            .get_or_insert_with(|| std::mem::take(&mut self.violations))
            .clone();
        self.violations = startup;
        self.server_requests_answered = 0;
        // Ids keep counting: "the ID MUST NOT have been previously used by
        // the requestor within the same session" (MCP 2025-06-18, Basic,
        // Requests), and the server's session is the same one. The ids
        // answered so far are kept apart: one of them coming again is a
        // second answer (a server may send it after the scenario that
        // asked has ended), unless it reads like the id the scenario is
        // waiting for (its string "7" answered as the number 7 is its own
        // wrong id).
        self.sent_ids.clear();
        let answered = std::mem::take(&mut self.answered_ids);
        self.earlier_answered.extend(answered);
    }

    fn note_dropped(&mut self) {
        if self.notifications_dropped > 0 {
            self.transcript.note_always(
                &self.name,
                format!(
                    "{} notifications dropped (kept the first {})",
                    self.notifications_dropped,
                    self.notification_log.len()
                ),
            );
        }
    }
}
