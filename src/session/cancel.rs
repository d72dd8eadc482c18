//! Cancellation of a request that outlasted its budget, as the era and
//! transport allow.

use std::time::Duration;

use serde_json::{json, Value};

use super::connection::Connection;
use super::{Session, SessionError};

impl Session {
    /// Sends a request and waits at most `budget` for its answer. Past it
    /// the request is cancelled as the era and transport allow (MCP
    /// 2026-07-28, Basic, Cancellation, Transport-Specific Cancellation;
    /// earlier eras: Utilities, Cancellation) and None is returned: over
    /// stdio a `notifications/cancelled` naming it; over Streamable HTTP its
    /// response stream is closed, and before 2026-07-28, which defines no
    /// such signal, the notification is sent too.
    pub async fn request_within(
        &mut self,
        method: &str,
        params: Option<Value>,
        meta: bool,
        budget: Duration,
    ) -> Result<Option<Value>, SessionError> {
        let id = self.fresh_id();
        // The POST this request goes out in, numbered before it is sent: a
        // server that answers in plain JSON holds the POST open until it
        // answers, so past the budget it may have no number yet.
        let exchange = self.conn.next_exchange();
        let asked = self.request_with(method, params, Some(id.clone()), Some(budget), meta);
        match tokio::time::timeout(budget, asked).await {
            Ok(Err(SessionError::Timeout { .. })) | Err(_) => {
                self.cancel(id, exchange, budget).await;
                Ok(None)
            }
            Ok(answered) => answered.map(Some),
        }
    }

    /// Cancels request `id`, sent in HTTP exchange `exchange` and
    /// unanswered after `waited` (see `request_within`).
    pub(super) async fn cancel(&mut self, id: Value, exchange: Option<u64>, waited: Duration) {
        if !self.abandoned_ids.contains(&id) {
            self.abandoned_ids.push(id.clone());
        }
        self.cancelled_ids.push(id.clone());
        let http = matches!(self.conn, Connection::Http(..));
        if let (Connection::Http(c, _), Some(exchange)) = (&mut self.conn, exchange) {
            c.close_exchange(exchange);
        }
        if !http || !self.era.is_stateless() {
            let reason = format!("no answer within {} ms", waited.as_millis());
            let params = json!({ "requestId": id, "reason": reason });
            let _ = self.notify("notifications/cancelled", Some(params)).await;
        }
        self.transcript.note(
            &self.name,
            format!("request {id} cancelled after {} ms", waited.as_millis()),
        );
    }
}
