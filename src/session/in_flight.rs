//! Several requests in flight at once on one session: each goes out
//! without waiting for the answers before it, and each answer is kept
//! until its own request is awaited (a `for_each` step's `concurrency`).
//! JSON-RPC ties an answer to its request by id alone, so the order the
//! server answers in does not matter.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::answers::id_key;
use super::{Session, SessionError};
use crate::jsonrpc;
use crate::transport::Incoming;

/// A request sent and not awaited yet (`Session::start_request`).
#[derive(Debug)]
pub struct InFlight {
    id: Value,
    method: String,
    /// The HTTP exchange (POST) it went out in.
    exchange: Option<u64>,
    sent: Instant,
    /// The wire violations seen before it went out: what its POST's body
    /// said, if it brought no answer, is noted after them.
    violations_before: usize,
}

impl InFlight {
    /// When it was sent: a budget counts from here.
    pub fn sent(&self) -> Instant {
        self.sent
    }
}

/// What came back for the requests in flight and was not awaited yet.
#[derive(Debug, Default)]
pub(super) struct Landed {
    /// By the id's JSON text: None until its answer comes, then the
    /// answer and when it came.
    answers: HashMap<String, Option<(Value, Instant)>>,
    /// HTTP: exchanges whose POST was answered with no message (status).
    unanswered: HashMap<u64, String>,
}

impl Session {
    /// Sends a request and returns at once: its answer is read and kept by
    /// whichever wait comes first (`finish_request`). `meta: true` adds the
    /// stateless era's `_meta`. None: sending it took longer than `within`
    /// (an HTTP server that answers in plain JSON holds the POST until it
    /// answers), and it was cancelled as `request_within` cancels one.
    pub async fn start_request(
        &mut self,
        method: &str,
        params: Option<Value>,
        meta: bool,
        within: Duration,
    ) -> Result<Option<InFlight>, SessionError> {
        let id = self.fresh_id();
        let params = self.with_era_meta(params, meta);
        let mut exchange = self.conn.next_exchange();
        let sent = Instant::now();
        let violations_before = self.violations.len();
        let message = jsonrpc::request(id.clone(), method, params);
        // initialize's answer names the session in its POST's headers.
        let detached = method != "initialize";
        let sending = async {
            exchange = self.send_message(&message, detached).await?;
            Ok::<_, SessionError>(())
        };
        match tokio::time::timeout(within, sending).await {
            Err(_) => {
                self.cancel(id, exchange, within).await;
                Ok(None)
            }
            Ok(Err(e)) => Err(e),
            Ok(Ok(())) => {
                self.landed.answers.insert(id_key(&id), None);
                Ok(Some(InFlight {
                    id,
                    method: method.to_string(),
                    exchange,
                    sent,
                    violations_before,
                }))
            }
        }
    }

    /// The answer to `request` and when it came, if it comes by `deadline`
    /// (None: it did not, and it is still in flight: `abandon_request`
    /// gives it up). Answers to the other requests in flight that come
    /// meanwhile are kept for their own wait.
    pub async fn finish_request(
        &mut self,
        request: &InFlight,
        deadline: Instant,
    ) -> Result<Option<(Value, Instant)>, SessionError> {
        let key = id_key(&request.id);
        loop {
            if let Some((answer, at)) = self.landed.answers.get_mut(&key).and_then(Option::take) {
                self.landed.answers.remove(&key);
                return Ok(Some((self.on_answer(&request.method, answer), at)));
            }
            if let Some(status) = request
                .exchange
                .and_then(|e| self.landed.unanswered.remove(&e))
            {
                self.landed.answers.remove(&key);
                return Err(SessionError::Unanswered {
                    method: request.method.clone(),
                    status,
                    hint: self.body_hint(request.violations_before),
                });
            }
            let remaining = deadline.saturating_duration_since(Instant::now());
            let Ok(item) = tokio::time::timeout(remaining, self.next_incoming()).await else {
                return Ok(None);
            };
            match item {
                Some(Incoming::Message(v)) => {
                    if let Some(answer) = self.dispatch(v).await? {
                        self.land(answer);
                    }
                }
                Some(Incoming::Unanswered { exchange, status }) => {
                    self.landed.unanswered.insert(exchange, status);
                }
                Some(Incoming::Garbage { .. } | Incoming::Line(_)) => {}
                Some(Incoming::Closed) | None => {
                    let during = format!("the harness waited for the answer to {}", request.method);
                    return Err(self.closed_error(&during).await);
                }
            }
        }
    }

    /// Keeps an answer to a request in flight; anything else is a stray,
    /// noted as such.
    fn land(&mut self, answer: Value) {
        let key = answer.get("id").map(id_key);
        if let Some(slot) = key.and_then(|k| self.landed.answers.get_mut(&k)) {
            if slot.is_none() {
                let id = answer.get("id").cloned();
                *slot = Some((answer, Instant::now()));
                if let Some(id) = id {
                    // One more with this id is a second answer.
                    self.note_answered(&id);
                }
                return;
            }
        }
        let reason = self.stray(None, &answer).unwrap_or_else(|| {
            format!(
                "answer {} ignored: no request in flight has its id",
                answer["id"]
            )
        });
        self.transcript.note(&self.name, reason);
    }

    /// Gives up a request in flight: its late answer is ignored. With
    /// `cancel`, it is also cancelled as the era and transport allow (see
    /// `request_within`), having waited that long.
    pub async fn abandon_request(&mut self, request: InFlight, cancel: Option<Duration>) {
        self.landed.answers.remove(&id_key(&request.id));
        match cancel {
            Some(waited) => self.cancel(request.id, request.exchange, waited).await,
            None => self.abandoned_ids.push(request.id),
        }
    }
}
