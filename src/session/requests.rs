//! What the session sends: requests (awaited or not), notifications, raw
//! text and HTTP exchanges written by a step, each through the client fault
//! the session carries, if any.

use std::time::Duration;

use serde_json::{json, Value};

use super::connection::Connection;
use super::{era, Direction, Session, SessionError};
use crate::jsonrpc;
use crate::transport::{RawAnswer, RawRequest};

impl Session {
    /// The next id of the counter that this session has not sent yet (a
    /// scenario's raw message may have chosen one).
    pub(super) fn fresh_id(&mut self) -> Value {
        loop {
            let id = json!(self.next_id);
            self.next_id += 1;
            if !self.ids_ever_sent.contains(&id.to_string()) {
                return id;
            }
        }
    }

    /// Sends a request and waits for its answer. `meta: true` adds the
    /// stateless era's `_meta`; `id` overrides the harness's counter.
    pub async fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
        id: Option<Value>,
        timeout: Option<Duration>,
    ) -> Result<Value, SessionError> {
        self.request_with(method, params, id, timeout, true).await
    }

    /// Adds the stateless era's `_meta` to request params when asked for.
    pub(super) fn with_era_meta(&self, params: Option<Value>, meta: bool) -> Option<Value> {
        if meta && self.era.is_stateless() {
            era::with_meta(params, &self.era)
        } else {
            params
        }
    }

    /// Sends a request and does not wait: its answer, when it comes, is
    /// recorded in the transcript and otherwise ignored. Returns the id used.
    pub async fn send_request(
        &mut self,
        method: &str,
        params: Option<Value>,
        id: Option<Value>,
        meta: bool,
    ) -> Result<Value, SessionError> {
        let id = id.unwrap_or_else(|| self.fresh_id());
        let params = self.with_era_meta(params, meta);
        self.send_value(&jsonrpc::request(id.clone(), method, params))
            .await?;
        self.abandoned_ids.push(id.clone());
        Ok(id)
    }

    pub async fn request_with(
        &mut self,
        method: &str,
        params: Option<Value>,
        id: Option<Value>,
        timeout: Option<Duration>,
        meta: bool,
    ) -> Result<Value, SessionError> {
        let id = id.unwrap_or_else(|| self.fresh_id());
        let params = self.with_era_meta(params, meta);
        let msg = jsonrpc::request(id.clone(), method, params);
        self.send_value(&msg).await?;
        let timeout = self.with_startup(timeout.unwrap_or(self.timeout));
        match self.await_response(Some(&id), method, timeout).await {
            Err(SessionError::Timeout { hint, .. }) => {
                self.abandoned_ids.push(id);
                Err(SessionError::Timeout {
                    method: method.to_string(),
                    ms: timeout.as_millis() as u64,
                    hint,
                })
            }
            Err(dropped @ SessionError::Dropped { .. }) => {
                self.abandoned_ids.push(id.clone());
                self.dropped_ids.push(id);
                Err(dropped)
            }
            Ok(answer) => Ok(self.on_answer(method, answer)),
            other => other,
        }
    }

    /// What an answer to `method` teaches the session: the version its own
    /// `initialize` settled on, the tools whose headers it must derive or
    /// whose listing it must refuse.
    pub(super) fn on_answer(&mut self, method: &str, mut answer: Value) -> Value {
        if method == "initialize" {
            self.note_own_initialize(&answer);
        }
        let rejected = self.conn.learn_tools(&answer);
        if self.era.is_stateless() && !rejected.is_empty() {
            self.exclude_tools(&mut answer, &rejected);
        }
        answer
    }

    /// A step's own `initialize` (a session opened without the handshake)
    /// was answered: later requests carry the version it settled on, as
    /// a client must ("If using HTTP, the client MUST include the
    /// MCP-Protocol-Version: <protocol-version> HTTP header on all
    /// subsequent requests to the MCP server", MCP 2025-11-25, Basic,
    /// Transports, Protocol Version Header).
    fn note_own_initialize(&mut self, answer: &Value) {
        let agreed = answer
            .pointer("/result/protocolVersion")
            .and_then(Value::as_str);
        if let Some(version) = agreed.filter(|v| !era::Era::new(v).is_stateless()) {
            self.conn.handshake_done(version);
        }
        self.own_initialize = answer.get("result").filter(|r| r.is_object()).cloned();
    }

    /// Takes tools with invalid `x-mcp-header` annotations out of a
    /// listing, as a 2026-07-28 client over Streamable HTTP must ("Rejection
    /// means the client MUST exclude the invalid tool from the result of
    /// tools/list. Clients SHOULD log a warning when rejecting a tool
    /// definition, including the tool name and the reason for rejection"):
    /// the warning goes to the transcript, and the excluded tools with their
    /// reasons to the answer's `rejected_tools`, for scenarios to check.
    fn exclude_tools(&mut self, answer: &mut Value, rejected: &[(String, String)]) {
        let names: Vec<&str> = rejected.iter().map(|(n, _)| n.as_str()).collect();
        if let Some(tools) = answer
            .pointer_mut("/result/tools")
            .and_then(Value::as_array_mut)
        {
            tools.retain(|t| {
                !t.get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| names.contains(&n))
            });
        }
        let listed: Vec<Value> = rejected
            .iter()
            .map(|(name, why)| {
                self.transcript.note(
                    &self.name,
                    format!("warning: tool {name} rejected (excluded from the listing): {why}"),
                );
                json!({ "name": name, "reason": why })
            })
            .collect();
        if let Some(map) = answer.as_object_mut() {
            map.insert("rejected_tools".into(), Value::Array(listed));
        }
    }

    pub async fn notify(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<(), SessionError> {
        let params = if self.era.is_stateless() && params.is_some() {
            era::with_meta(params, &self.era)
        } else {
            params
        };
        self.send_value(&jsonrpc::notification(method, params))
            .await
    }

    /// Records the id of a request about to be sent. A step may choose an
    /// id used before (by its own scenario or an earlier one on a warm
    /// server): its answer is then a first answer again.
    pub(super) fn note_sent(&mut self, msg: &Value) {
        if msg.get("method").and_then(Value::as_str) == Some("notifications/initialized") {
            self.initialized_sent = true;
        }
        if msg.get("method").is_some() && msg.get("id").is_none() {
            self.notified = true;
        }
        self.note_touched_tools(msg);
        if msg.get("method").and_then(Value::as_str) == Some("tools/list") {
            let params = msg.get("params").and_then(Value::as_object);
            self.filtered_listing =
                params.is_some_and(|p| p.keys().any(|k| k != "cursor" && k != "_meta"));
        }
        let Some(id) = msg.get("id").filter(|_| msg.get("method").is_some()) else {
            return;
        };
        let key = super::answers::id_key(id);
        self.answered_ids.remove(&key);
        self.earlier_answered.remove(&key);
        self.sent_ids.insert(key.clone());
        self.ids_ever_sent.insert(key);
    }

    /// Records the tools a `resources/read` names: each comma-separated
    /// value of its URI's query (the `?tools=` of a tool_descriptions
    /// read, which authorizes them under progressive disclosure). Any
    /// other query value is kept as well: a name too many only makes the
    /// scenarios after it pick others. A call authorizes nothing: "When a
    /// tool description is fetched via the resource, the server authorizes
    /// that tool" (progressive disclosure, 5.1 Authorization Model).
    fn note_touched_tools(&mut self, msg: &Value) {
        if msg.get("method").and_then(Value::as_str) != Some("resources/read") {
            return;
        }
        let uri = msg.pointer("/params/uri").and_then(Value::as_str);
        let query = uri.and_then(|u| u.split_once('?')).map(|(_, q)| q);
        let values = query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .filter_map(|pair| pair.split_once('=').map(|(_, v)| v))
            .flat_map(|v| v.split(','));
        self.touched_tools
            .extend(values.filter(|v| !v.is_empty()).map(str::to_string));
    }

    pub(super) async fn send_value(&mut self, msg: &Value) -> Result<(), SessionError> {
        self.send_message(msg, false).await.map(|_| ())
    }

    /// Sends one message; with `detached`, a request over Streamable HTTP
    /// goes out without waiting for its POST's headers (several can then
    /// be under way at once), unless a client fault rewrites it. Returns
    /// the HTTP exchange it went out in, if any.
    pub(super) async fn send_message(
        &mut self,
        msg: &Value,
        detached: bool,
    ) -> Result<Option<u64>, SessionError> {
        self.note_sent(msg);
        let Some((fault, state)) = self.fault.as_mut() else {
            self.transcript.record(&self.name, Direction::Sent, msg);
            let bytes = jsonrpc::encode_line(msg);
            if detached {
                return Ok(self.conn.send_request_detached(&bytes).await?);
            }
            self.conn.send(&bytes).await?;
            return Ok(self.conn.last_exchange());
        };
        // Over a stream, what the fault makes of one message goes out in
        // one write: a duplicate sent by a second write could reach a relay
        // after the server's answer to the first, and "two requests with one
        // id outstanding" would depend on timing. Over HTTP each is a POST.
        let messages = fault.rewrite(msg.clone(), state);
        let stream = self.conn.is_stream();
        let mut bytes = Vec::new();
        for m in messages {
            self.transcript.record(&self.name, Direction::Sent, &m);
            bytes.extend(jsonrpc::encode_line(&m));
            if !stream {
                self.conn.send(&std::mem::take(&mut bytes)).await?;
            }
        }
        if !bytes.is_empty() {
            self.conn.send(&bytes).await?;
        }
        Ok(self.conn.last_exchange())
    }

    /// Writes text as is (a newline is added if missing); with `expect_answer`,
    /// waits for the next response of any id.
    pub async fn send_raw(
        &mut self,
        text: &str,
        expect_answer: bool,
        timeout: Option<Duration>,
    ) -> Result<Value, SessionError> {
        let mut bytes = text.as_bytes().to_vec();
        if !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        self.transcript
            .record_raw(&self.name, Direction::Sent, text);
        self.note_sent_raw(text);
        self.conn.send(&bytes).await?;
        if !expect_answer {
            return Ok(Value::Null);
        }
        let timeout = self.with_startup(timeout.unwrap_or(self.timeout));
        self.await_response(None, "the raw message", timeout).await
    }

    /// Records the requests a raw write carries, one message (or batch) per
    /// line as a server reads them: an answer to one of them that comes
    /// after its scenario ended is then known for a late answer, not taken
    /// for the next scenario's.
    fn note_sent_raw(&mut self, text: &str) {
        for line in text.lines() {
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Array(batch)) => batch.iter().for_each(|m| self.note_sent(m)),
                Ok(msg) => self.note_sent(&msg),
                Err(_) => {}
            }
        }
    }

    /// Gives the first answer awaited on this connection `startup` to come
    /// (when longer than its own timeout): for a connection opened without
    /// the handshake, whose first message is a step's own.
    pub fn allow_startup(&mut self, startup: Duration) {
        self.startup_allowance = Some(startup);
    }

    /// `timeout`, or the start-up allowance if this is the first answer
    /// awaited and the allowance is longer.
    fn with_startup(&mut self, timeout: Duration) -> Duration {
        self.startup_allowance
            .take()
            .map_or(timeout, |startup| timeout.max(startup))
    }

    /// One HTTP exchange as written by an `http:` step, outside the JSON-RPC
    /// flow: its answer is returned, never queued as a message.
    pub async fn http_exchange(&mut self, request: &RawRequest) -> Result<RawAnswer, SessionError> {
        let Connection::Http(conn, _) = &self.conn else {
            return Err(SessionError::NotHttp);
        };
        let overrides: serde_json::Map<String, Value> = request
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().map_or(Value::Null, Value::String)))
            .collect();
        self.transcript.record(
            &self.name,
            Direction::Sent,
            &json!({"http": request.method.as_str(), "headers": overrides, "body": request.body}),
        );
        let answer = conn.exchange(request).await?;
        self.transcript
            .record(&self.name, Direction::Received, &answer.to_value());
        Ok(answer)
    }
}
