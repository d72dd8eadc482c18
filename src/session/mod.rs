//! An MCP client session over any transport: the era's handshake, requests
//! with timeouts, notification capture, and answers to the server's own
//! requests so a server is never left waiting on the harness.

pub mod client_fault;
pub mod era;
pub mod paginate;
pub mod pruned_decode;
pub mod transcript;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::jsonrpc::{self, codes, Message};
use std::sync::Arc;

use crate::transport::stdio::ExitState;
use crate::transport::{
    HttpConnection, Incoming, RawAnswer, RawRequest, StdioConnection, TransportError,
};
pub use era::Era;
pub use paginate::{PageWalk, PaginationError, Unfinished, Walked};
pub use transcript::{Direction, Transcript};

/// Why a session operation did not produce an answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SessionError {
    #[error("no answer to {method} within {ms} ms{hint}")]
    Timeout {
        method: String,
        ms: u64,
        hint: String,
    },
    #[error("no answer to {unanswered}: {sentinel}, sent right after it, was answered, and nothing more came within {grace_ms} ms")]
    Dropped {
        /// "the ping with id 9007199254740993", or "the raw message".
        unanswered: String,
        /// "the ping with id 11".
        sentinel: String,
        grace_ms: u64,
    },
    #[error("no answer to {method}: the server answered its HTTP POST with {status} and no JSON-RPC response{hint}")]
    Unanswered {
        method: String,
        status: String,
        hint: String,
    },
    #[error("the server {exit} while {during}")]
    Closed { during: String, exit: String },
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("handshake failed: {0}")]
    Handshake(String),
    /// `server/discover` answered with an error only a 2026-07-28 server
    /// gives: the server is modern, and a client must not fall back to
    /// `initialize` (MCP 2026-07-28, Transports, stdio, Backward Compatibility).
    #[error("handshake failed: {request} was refused with {name} ({code}); the server offers {}: {error}", offered(.supported))]
    ModernRefusal {
        /// `server/discover`, or `initialize` refused by a server that
        /// speaks only 2026-07-28.
        request: &'static str,
        code: i64,
        name: &'static str,
        supported: Vec<String>,
        error: String,
    },
    #[error("an http step needs a Streamable HTTP target (--url)")]
    NotHttp,
}

/// A server process shared by every HTTP session of a run (`--url U -- CMD`).
pub type SharedProcess = Arc<tokio::sync::Mutex<StdioConnection>>;

/// The connection a session runs over.
pub enum Connection {
    Stdio(Box<StdioConnection>),
    Http(Box<HttpConnection>, Option<SharedProcess>),
    /// The reference server in the same process (`Target::InProcess`).
    Pipe(Box<crate::transport::PipeConnection>),
}

impl Connection {
    async fn send(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        match self {
            Connection::Stdio(c) => c.send(bytes).await,
            Connection::Http(c, _) => c.send(bytes).await,
            Connection::Pipe(c) => c.send(bytes).await,
        }
    }

    async fn recv(&mut self) -> Option<Incoming> {
        match self {
            Connection::Stdio(c) => c.recv().await,
            Connection::Http(c, _) => c.recv().await,
            Connection::Pipe(c) => c.recv().await,
        }
    }

    pub fn stderr_tail(&self) -> String {
        match self {
            Connection::Stdio(c) => c.stderr_tail(),
            Connection::Http(_, Some(p)) => {
                p.try_lock().map(|c| c.stderr_tail()).unwrap_or_default()
            }
            Connection::Http(_, None) => String::new(),
            Connection::Pipe(_) => String::new(),
        }
    }

    /// Bytes the server process has written to stderr (0 without a process).
    fn stderr_total(&self) -> u64 {
        match self {
            Connection::Stdio(c) => c.stderr_total(),
            Connection::Http(_, Some(p)) => p.try_lock().map(|c| c.stderr_total()).unwrap_or(0),
            Connection::Http(_, None) | Connection::Pipe(_) => 0,
        }
    }

    /// Whether the server process has ended (without waiting).
    fn has_exited(&mut self) -> bool {
        match self {
            Connection::Stdio(c) => c.try_exit().is_some(),
            Connection::Http(_, Some(p)) => p.try_lock().is_ok_and(|mut c| c.try_exit().is_some()),
            Connection::Http(_, None) | Connection::Pipe(_) => false,
        }
    }

    async fn exit_state(&mut self) -> ExitState {
        match self {
            Connection::Stdio(c) => c.exit_state().await,
            Connection::Http(_, Some(p)) => p.lock().await.exit_state().await,
            Connection::Http(_, None) => ExitState::Disconnected,
            Connection::Pipe(c) => c.exit_state(),
        }
    }

    fn pending_bytes(&self) -> usize {
        match self {
            Connection::Stdio(c) => c.pending_bytes(),
            _ => 0,
        }
    }

    /// HTTP: the number of the last POST (see `Incoming::Unanswered`).
    fn last_exchange(&self) -> Option<u64> {
        match self {
            Connection::Http(c, _) => Some(c.last_exchange()),
            _ => None,
        }
    }

    /// A stream read in order (stdio framing): a sentinel can follow a
    /// message, and a freshly started server is given time to start.
    fn is_stream(&self) -> bool {
        match self {
            Connection::Stdio(_) => true,
            Connection::Http(..) => false,
            Connection::Pipe(_) => true,
        }
    }

    /// HTTP: remembers the `x-mcp-header` annotations of the tools in a
    /// result (`tools/list`, and any result listing tool definitions), so
    /// later `tools/call`s mirror them into `Mcp-Param-{Name}` headers.
    /// Returns the tools whose annotations are invalid, with why.
    fn learn_tools(&self, answer: &Value) -> Vec<(String, String)> {
        if let Connection::Http(c, _) = self {
            if let Some(tools) = answer.pointer("/result/tools").and_then(Value::as_array) {
                return c.learn_tools(tools);
            }
        }
        Vec::new()
    }

    /// Tells the transport the handshake settled on `version`.
    /// Moves an open connection to another era's framing (HTTP headers).
    fn switch_era(&mut self, era: &Era) {
        if let Connection::Http(c, _) = self {
            if era.is_stateless() {
                c.become_stateless(&era.version);
            } else {
                c.set_protocol_version(&era.version);
            }
        }
    }

    fn handshake_done(&mut self, version: &str) {
        if let Connection::Http(c, _) = self {
            c.set_protocol_version(version);
        }
    }

    /// HTTP: listen on the session's GET stream for what other sessions
    /// cause, once the server has answered the GET (bounded by `wait`): a
    /// change made right after the handshake must not beat the stream.
    async fn open_get_stream(&mut self, wait: Duration) {
        if let Connection::Http(c, _) = self {
            if let Some(open) = c.open_get_stream() {
                let _ = tokio::time::timeout(wait, open).await;
            }
        }
    }

    pub async fn shutdown(&mut self, grace: Duration) -> String {
        match self {
            Connection::Stdio(c) => c.shutdown(grace).await,
            Connection::Http(c, _) => c.shutdown().await,
            Connection::Pipe(c) => c.shutdown(),
        }
    }

    /// Stdio: stop the server without waiting for it (see
    /// `StdioConnection::shutdown_in_background`).
    async fn shutdown_in_background(&mut self, grace: Duration) -> String {
        match self {
            Connection::Stdio(c) => c.shutdown_in_background(grace),
            Connection::Http(c, _) => c.shutdown().await,
            Connection::Pipe(c) => c.shutdown(),
        }
    }
}

/// Something the server did that breaks the wire rules, seen in passing.
#[derive(Debug, Clone, PartialEq)]
pub struct WireViolation {
    pub reason: String,
    pub excerpt: String,
}

/// Notifications kept per session; a flood beyond this is counted, not stored.
const MAX_NOTIFICATIONS: usize = 1_000;
/// Memory the kept notifications of one session may take (estimated as
/// [`transcript::approx_heap_bytes`]); each is held twice, in the log and
/// until consumed in `notifications`, and the log is copied into the CEL
/// bindings, so a few large ones must not add up to much.
pub const MAX_NOTIFICATION_BYTES: usize = 1024 * 1024;
/// Wire violations kept per session; the first ones tell the story.
const MAX_VIOLATIONS: usize = 100;
/// How long a sentinel's answer may precede the answer it follows before the
/// message is taken as dropped (see `Session::arm_sentinel`).
pub const SENTINEL_GRACE: Duration = Duration::from_millis(500);

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

pub struct Session {
    pub name: String,
    conn: Connection,
    pub era: Era,
    next_id: i64,
    timeout: Duration,
    /// Notifications not yet consumed by `wait_notification`.
    pub notifications: Vec<Value>,
    /// Every notification received, in order.
    pub notification_log: Vec<Value>,
    /// stdout lines that were not JSON-RPC messages.
    pub violations: Vec<WireViolation>,
    /// The violations seen before the session was first handed to a
    /// scenario (see `adopt`); None until then.
    startup_violations: Option<Vec<WireViolation>>,
    pub transcript: Transcript,
    /// The handshake answer (initialize or server/discover result).
    pub server: Value,
    abandoned_ids: Vec<Value>,
    /// The abandoned requests the client cancelled: "The sender of the
    /// cancellation notification SHOULD ignore any response to the request
    /// that arrives afterward" (MCP 2025-06-18, Utilities, Cancellation), so
    /// their late answers are ignored wherever they land.
    cancelled_ids: Vec<Value>,
    /// How long the first answer on a connection opened without the
    /// handshake may take: the server process may have only just started,
    /// and its start-up is not the request's delay (`--startup-timeout-ms`).
    startup_allowance: Option<Duration>,
    answered_ids: std::collections::HashSet<String>,
    /// Ids answered for the scenarios this warm session served before the
    /// current one: a message with one of them is a second answer.
    earlier_answered: std::collections::HashSet<String>,
    sent_ids: std::collections::HashSet<String>,
    /// Every request id sent over the server's session, kept across the
    /// scenarios a warm session serves, so the counter never repeats one.
    ids_ever_sent: std::collections::HashSet<String>,
    server_requests_answered: usize,
    /// Send a sentinel behind the next message awaited (`arm_sentinel`).
    sentinel_armed: bool,
    /// Notifications not kept because of MAX_NOTIFICATIONS or MAX_NOTIFICATION_BYTES.
    pub notifications_dropped: usize,
    /// Estimated memory of `notification_log`.
    notification_bytes: usize,
    /// What the walk under way keeps of each page: a long line is decoded
    /// cut down to it (see `pruned_decode`).
    page_read: Option<pruned_decode::PageRead>,
    closed: bool,
    /// The client defect this session carries (`--client-fault`), if any.
    fault: Option<(client_fault::ClientFault, client_fault::FaultState)>,
}

impl Session {
    pub fn new(
        name: &str,
        conn: Connection,
        era: Era,
        timeout: Duration,
        transcript: Transcript,
    ) -> Self {
        Self {
            name: name.to_string(),
            conn,
            era,
            next_id: 1,
            timeout,
            notifications: Vec::new(),
            notification_log: Vec::new(),
            violations: Vec::new(),
            startup_violations: None,
            transcript,
            server: Value::Null,
            abandoned_ids: Vec::new(),
            cancelled_ids: Vec::new(),
            startup_allowance: None,
            answered_ids: std::collections::HashSet::new(),
            earlier_answered: std::collections::HashSet::new(),
            sent_ids: std::collections::HashSet::new(),
            ids_ever_sent: std::collections::HashSet::new(),
            server_requests_answered: 0,
            sentinel_armed: false,
            notifications_dropped: 0,
            notification_bytes: 0,
            page_read: None,
            closed: false,
            fault: client_fault::process_fault().map(|f| (f, Default::default())),
        }
    }

    pub fn stderr_tail(&self) -> String {
        self.conn.stderr_tail()
    }

    /// Bytes the server has written to stderr so far.
    pub fn stderr_total(&self) -> u64 {
        self.conn.stderr_total()
    }

    /// Whether the server process has ended on its own (without waiting).
    pub fn has_exited(&mut self) -> bool {
        self.conn.has_exited()
    }

    /// Speaks `era` from the next message on, on the same connection (a
    /// client retrying with a version the server named as supported).
    pub fn switch_era(&mut self, era: Era) {
        self.conn.switch_era(&era);
        self.era = era;
    }

    /// Performs the era's handshake and remembers the server's answer.
    pub async fn handshake(&mut self) -> Result<Value, SessionError> {
        self.handshake_within(None).await
    }

    /// The handshake, its answer awaited for `wait` instead of the request
    /// timeout: a stdio server that was just started is given time to start
    /// (a Python or Node server on a busy machine takes seconds), which is
    /// not the answer time a conformance rule is about.
    pub async fn handshake_within(
        &mut self,
        wait: Option<Duration>,
    ) -> Result<Value, SessionError> {
        let wait = wait.filter(|_| self.conn.is_stream());
        let answer = if self.era.is_stateless() {
            let r = self.request("server/discover", None, None, wait).await?;
            if let Some(refusal) = modern_refusal("server/discover", &r) {
                return Err(refusal);
            }
            let result = handshake_result(&r)?;
            normalise_discover(&result)
        } else {
            let params = json!({
                "protocolVersion": self.era.version,
                "capabilities": era::client_capabilities(&self.era),
                "clientInfo": era::client_info(),
            });
            let r = self.request("initialize", Some(params), None, wait).await?;
            // A server that speaks only 2026-07-28 refuses initialize with
            // UnsupportedProtocolVersion naming the versions to retry with.
            let unsupported = r.pointer("/error/code").and_then(Value::as_i64) == Some(-32022);
            if let Some(refusal) = modern_refusal("initialize", &r).filter(|_| unsupported) {
                return Err(refusal);
            }
            let result = handshake_result(&r)?;
            let agreed = result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or(&self.era.version)
                .to_string();
            self.conn.handshake_done(&agreed);
            self.notify("notifications/initialized", None).await?;
            self.conn
                .open_get_stream(self.timeout.min(Duration::from_secs(1)))
                .await;
            result
        };
        self.server = answer.clone();
        Ok(answer)
    }

    /// The next id of the counter that this session has not sent yet (a
    /// scenario's raw message may have chosen one).
    fn fresh_id(&mut self) -> Value {
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
    fn with_era_meta(&self, params: Option<Value>, meta: bool) -> Option<Value> {
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
                self.abandoned_ids.push(id);
                Err(dropped)
            }
            Ok(mut answer) => {
                let rejected = self.conn.learn_tools(&answer);
                if self.era.is_stateless() && !rejected.is_empty() {
                    self.exclude_tools(&mut answer, &rejected);
                }
                Ok(answer)
            }
            other => other,
        }
    }

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
        let asked = self.request_with(method, params, Some(id.clone()), Some(budget), meta);
        match tokio::time::timeout(budget, asked).await {
            Ok(Err(SessionError::Timeout { .. })) | Err(_) => {
                self.cancel(id, budget).await;
                Ok(None)
            }
            Ok(answered) => answered.map(Some),
        }
    }

    /// Cancels request `id`, unanswered after `waited` (see `request_within`).
    async fn cancel(&mut self, id: Value, waited: Duration) {
        if !self.abandoned_ids.contains(&id) {
            self.abandoned_ids.push(id.clone());
        }
        self.cancelled_ids.push(id.clone());
        let http = matches!(self.conn, Connection::Http(..));
        if let Connection::Http(c, _) = &mut self.conn {
            c.close_last_exchange();
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

    async fn send_value(&mut self, msg: &Value) -> Result<(), SessionError> {
        if msg.get("method").is_some() {
            if let Some(id) = msg.get("id") {
                // A raw message may choose an id used before: its answer
                // is then a first answer again.
                self.answered_ids.remove(&id.to_string());
                self.sent_ids.insert(id.to_string());
                self.ids_ever_sent.insert(id.to_string());
            }
        }
        let Some((fault, state)) = self.fault.as_mut() else {
            self.transcript.record(&self.name, Direction::Sent, msg);
            let bytes = jsonrpc::encode_line(msg);
            return self.conn.send(&bytes).await.map_err(SessionError::from);
        };
        for m in fault.rewrite(msg.clone(), state) {
            self.transcript.record(&self.name, Direction::Sent, &m);
            self.conn.send(&jsonrpc::encode_line(&m)).await?;
        }
        Ok(())
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
        self.conn.send(&bytes).await?;
        if !expect_answer {
            return Ok(Value::Null);
        }
        let timeout = self.with_startup(timeout.unwrap_or(self.timeout));
        self.await_response(None, "the raw message", timeout).await
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

    async fn next_incoming(&mut self) -> Option<Incoming> {
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

    async fn closed_error(&mut self, during: &str) -> SessionError {
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
    /// and, within `SENTINEL_GRACE` more, not the message, has dropped the
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
    async fn await_response(
        &mut self,
        id: Option<&Value>,
        method: &str,
        timeout: Duration,
    ) -> Result<Value, SessionError> {
        let started = Instant::now();
        let mut deadline = started + timeout;
        let violations_before = self.violations.len();
        // The message awaited is the last one sent (HTTP: its POST).
        let exchange = self.conn.last_exchange();
        self.server_requests_answered = 0;
        let sentinel = self.send_sentinel().await?;
        let mut sentinel_answered = false;
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let next = tokio::time::timeout(remaining, self.next_incoming()).await;
            let item = match next {
                Err(_) if sentinel_answered => {
                    let liveness = self.era.liveness_method();
                    return Err(SessionError::Dropped {
                        unanswered: match id {
                            Some(id) => format!("the {method} with id {id}"),
                            None => method.to_string(),
                        },
                        sentinel: match &sentinel {
                            Some(s) => format!("the {liveness} with id {s}"),
                            None => format!("the {liveness}"),
                        },
                        grace_ms: SENTINEL_GRACE.as_millis() as u64,
                    });
                }
                Err(_) => {
                    if let Some(s) = sentinel {
                        self.abandoned_ids.push(s);
                    }
                    let hint = self.timeout_hint(violations_before).await;
                    return Err(SessionError::Timeout {
                        method: method.to_string(),
                        ms: timeout.as_millis() as u64,
                        hint,
                    });
                }
                Ok(item) => item,
            };
            match item {
                Some(Incoming::Message(v)) => {
                    if let Some(answer) = self.dispatch(v).await? {
                        if sentinel.is_some() && answer.get("id") == sentinel.as_ref() {
                            sentinel_answered = true;
                            deadline = deadline.min(Instant::now() + SENTINEL_GRACE);
                            continue;
                        }
                        if let Some(reason) = self.stray(id, &answer) {
                            self.transcript.note(&self.name, reason);
                            continue;
                        }
                        if let Some(got) = answer.get("id") {
                            self.answered_ids.insert(got.to_string());
                        }
                        if let (Some(s), false) = (sentinel, sentinel_answered) {
                            self.settle_sentinel(s, deadline).await;
                        }
                        return Ok(answer);
                    }
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

    /// Reads the sentinel's answer, which follows the one just returned on a
    /// server that reads in order, so the session stays clean for the next
    /// scenario; not answered within `SENTINEL_GRACE`, it is abandoned.
    async fn settle_sentinel(&mut self, sentinel: Value, deadline: Instant) {
        let until = deadline.min(Instant::now() + SENTINEL_GRACE);
        loop {
            let remaining = until.saturating_duration_since(Instant::now());
            match tokio::time::timeout(remaining, self.next_incoming()).await {
                Ok(Some(Incoming::Message(v))) => match self.dispatch(v).await {
                    Ok(Some(answer)) if answer.get("id") == Some(&sentinel) => return,
                    Ok(Some(answer)) => {
                        let reason = self.stray(None, &answer).unwrap_or_else(|| {
                            format!("answer {} ignored: nothing waited for it", answer["id"])
                        });
                        self.transcript.note(&self.name, reason);
                    }
                    Ok(None) => {}
                    Err(_) => break,
                },
                Ok(Some(
                    Incoming::Garbage { .. } | Incoming::Unanswered { .. } | Incoming::Line(_),
                )) => {}
                Ok(Some(Incoming::Closed) | None) | Err(_) => break,
            }
        }
        self.abandoned_ids.push(sentinel);
    }

    /// Why an answer is not the one being waited for: a late answer to a
    /// timed-out or unawaited request, or a second answer to the same id.
    fn stray(&mut self, waiting_for: Option<&Value>, answer: &Value) -> Option<String> {
        let got = answer.get("id")?;
        if waiting_for == Some(got) {
            return None;
        }
        if self.abandoned_ids.contains(got) {
            return Some(format!("late answer to earlier request {got} ignored"));
        }
        let second_to_earlier = self.earlier_answered.contains(&got.to_string())
            && !waiting_for.is_some_and(|w| same_digits(w, got));
        if second_to_earlier
            || (self.sent_ids.contains(&got.to_string())
                && self.answered_ids.contains(&got.to_string()))
        {
            self.violation(WireViolation {
                reason: format!("a second answer to request id {got}"),
                excerpt: crate::transport::stdio::excerpt(answer.to_string().as_bytes()),
            });
            return Some(format!("second answer to request {got} ignored"));
        }
        None
    }

    /// Records a wire violation, keeping only the first ones.
    fn violation(&mut self, v: WireViolation) {
        if self.violations.len() < MAX_VIOLATIONS {
            self.violations.push(v);
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
    fn body_hint(&self, violations_before: usize) -> String {
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
    async fn dispatch(&mut self, v: Value) -> Result<Option<Value>, SessionError> {
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
    fn keep_notification(&mut self, v: Value) {
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
    /// nothing unanswered but what it cancelled (whose late answer is
    /// ignored), nothing unconsumed. A wire violation does not end its use:
    /// the stream is newline-framed, so a line of noise, a second answer or
    /// a malformed message leaves the next line readable, and the violation
    /// is the finding of the scenario whose rule it breaks (a server that
    /// prints a banner was otherwise restarted for every scenario).
    pub fn reusable(&self) -> bool {
        !self.closed
            && self
                .abandoned_ids
                .iter()
                .all(|id| self.cancelled_ids.contains(id))
            && self.notifications_dropped == 0
    }

    /// Hands a warm session to the next scenario: its own name, transcript
    /// and empty logs (the handshake answer stays).
    pub fn adopt(&mut self, name: &str, transcript: Transcript) {
        self.name = name.to_string();
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

/// The 2026-07-28 errors that identify a modern server ("a recognized modern
/// JSON-RPC error", MCP 2026-07-28, Basic, Versioning, Backward
/// Compatibility), by code.
const MODERN_ERRORS: &[(i64, &str)] = &[
    (-32020, "HeaderMismatch"),
    (-32021, "MissingRequiredClientCapability"),
    (-32022, "UnsupportedProtocolVersion"),
];

/// A `server/discover` error answer that only a modern server gives.
fn modern_refusal(request: &'static str, response: &Value) -> Option<SessionError> {
    let error = response.get("error")?;
    let code = error.get("code").and_then(Value::as_i64)?;
    let (_, name) = MODERN_ERRORS.iter().find(|(c, _)| *c == code)?;
    let supported = error
        .pointer("/data/supported")
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    Some(SessionError::ModernRefusal {
        request,
        code,
        name,
        supported,
        error: error.to_string(),
    })
}

/// The versions a refusal offered, for its message.
fn offered(supported: &[String]) -> String {
    if supported.is_empty() {
        "no version list".to_string()
    } else {
        format!("the versions {}", supported.join(", "))
    }
}

fn handshake_result(response: &Value) -> Result<Value, SessionError> {
    match (response.get("result"), response.get("error")) {
        (Some(result), _) if result.is_object() => Ok(result.clone()),
        (_, Some(error)) => Err(SessionError::Handshake(format!(
            "the server answered with an error: {error}"
        ))),
        _ => Err(SessionError::Handshake(format!(
            "the answer has no result object: {response}"
        ))),
    }
}

/// Presents a `server/discover` answer with an initialize result's
/// `serverInfo` (lifted from `_meta`), so `requires` expressions work in
/// every era. Nothing the server did not send is added: a check of the
/// answer (`base/handshake`) reads what the server said.
fn normalise_discover(result: &Value) -> Value {
    let mut out = result.clone();
    if let Some(map) = out.as_object_mut() {
        if let Some(info) = result.pointer("/_meta/io.modelcontextprotocol~1serverInfo") {
            map.entry("serverInfo").or_insert_with(|| info.clone());
        }
    }
    out
}

/// An error response without an id: `{"jsonrpc": "2.0", "error": {…}}`.
fn idless_error(v: &Value) -> bool {
    v["jsonrpc"] == "2.0"
        && v.get("error").is_some_and(Value::is_object)
        && v.get("id").is_none()
        && v.get("method").is_none()
        && v.get("result").is_none()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{HttpSpec, StdioSpec};

    fn note(size: usize) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "x".repeat(size)}})
    }

    async fn session() -> Session {
        let conn = StdioConnection::spawn(&StdioSpec::new("cat", Vec::new())).expect("cat runs");
        Session::new(
            "main",
            Connection::Stdio(Box::new(conn)),
            Era::new("2025-11-25"),
            Duration::from_secs(1),
            Transcript::new(),
        )
    }

    /// An HTTP server on loopback that answers every POST with `status` and
    /// a plain-text `body`, the way many servers refuse an unparsable body.
    async fn refusing_http_server(status: &'static str, body: &'static str) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut request = vec![0u8; 4096];
                let _ = socket.read(&mut request).await;
                let answer = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            }
        });
        format!("http://{addr}/mcp")
    }

    #[tokio::test]
    async fn a_post_refused_without_a_json_rpc_answer_ends_the_wait_at_once() {
        let url = refusing_http_server("415 Unsupported Media Type", "cannot parse the body").await;
        let conn = HttpConnection::new(&HttpSpec::new(url), false, "2025-11-25").expect("a client");
        let mut s = Session::new(
            "main",
            Connection::Http(Box::new(conn), None),
            Era::new("2025-11-25"),
            Duration::from_secs(5),
            Transcript::new(),
        );
        let started = Instant::now();
        let answer = s.send_raw("{\"jsonrpc\": ", true, None).await;
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the wait went on after the POST's whole answer: {:?}",
            started.elapsed()
        );
        let message = answer.expect_err("no answer").to_string();
        assert!(
            message.contains("415 Unsupported Media Type and no JSON-RPC response")
                && message.contains("cannot parse the body"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn a_late_second_answer_to_an_earlier_scenario_is_seen_as_one() {
        let mut s = session().await;
        s.answered_ids.insert(json!(3).to_string());
        s.answered_ids.insert(json!(7).to_string());
        s.adopt("next", Transcript::new());
        let late = json!({"jsonrpc": "2.0", "id": 3, "result": {}});
        assert!(s.stray(Some(&json!(9)), &late).is_some());
        assert_eq!(s.violations.len(), 1, "a second answer is a violation");
        // The scenario's own string id "7" answered as the number 7 is its
        // answer, to be judged by its expect.
        let own = json!({"jsonrpc": "2.0", "id": 7, "result": {}});
        assert!(s.stray(Some(&json!("7")), &own).is_none());
        s.close().await;
    }

    #[tokio::test]
    async fn a_warm_session_never_sends_a_request_id_twice() {
        let mut s = session().await;
        assert_eq!(s.fresh_id(), json!(1));
        s.send_request("tools/list", None, Some(json!(2)), false)
            .await
            .expect("cat reads");
        s.adopt("next", Transcript::new());
        let later: Vec<Value> = (0..3).map(|_| s.fresh_id()).collect();
        assert_eq!(later, vec![json!(3), json!(4), json!(5)]);
        s.close().await;
    }

    #[tokio::test]
    async fn large_notifications_are_bounded_by_bytes() {
        let mut s = session().await;
        for _ in 0..500 {
            s.keep_notification(note(16 * 1024));
        }
        let kept: usize = s
            .notification_log
            .iter()
            .map(transcript::approx_heap_bytes)
            .sum();
        assert!(kept <= MAX_NOTIFICATION_BYTES, "{kept}");
        assert!(
            s.notification_log.len() < 70,
            "{}",
            s.notification_log.len()
        );
        assert_eq!(s.notification_log.len() + s.notifications_dropped, 500);
        // Once dropping started, later small ones are dropped too: the log stays a prefix.
        s.keep_notification(note(1));
        assert_eq!(s.notification_log.len() + s.notifications_dropped, 501);
        s.close().await;
        let (entries, _) = s.transcript.entries();
        let texts: Vec<String> = entries.iter().map(|e| e.message.to_string()).collect();
        assert!(
            texts
                .iter()
                .any(|t| t.contains("notification limit reached")),
            "{texts:?}"
        );
        assert!(
            texts.iter().any(|t| t.contains("notifications dropped")),
            "{texts:?}"
        );
    }

    #[tokio::test]
    async fn a_timeout_quotes_what_the_server_wrote_instead_of_an_answer() {
        let mut s = session().await;
        // `cat` echoes the line back: not a JSON-RPC message.
        let err = s
            .send_raw("HTTP error page", true, Some(Duration::from_millis(300)))
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("no answer to the raw message within 300 ms")
                && err.contains(": \"HTTP error page\""),
            "{err}"
        );
        s.close().await;
    }

    async fn session_2026() -> Session {
        let conn = StdioConnection::spawn(&StdioSpec::new("cat", Vec::new())).expect("cat runs");
        Session::new(
            "main",
            Connection::Stdio(Box::new(conn)),
            Era::new(era::V2026_07_28),
            Duration::from_secs(1),
            Transcript::new(),
        )
    }

    #[tokio::test]
    async fn a_2026_server_request_is_recorded_not_answered() {
        let mut s = session_2026().await;
        let ping = json!({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"});
        assert_eq!(s.dispatch(ping).await, Ok(None));
        assert_eq!(s.violations.len(), 1);
        assert!(s.violations[0].reason.starts_with(SERVER_REQUEST_2026));
        let (entries, _) = s.transcript.entries();
        assert!(
            entries.iter().all(|e| e.direction != Direction::Sent),
            "the harness answered the server's request"
        );
        // An error without an id is a valid 2026-07-28 answer, not a violation.
        let idless = json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "x"}});
        assert_eq!(s.dispatch(idless.clone()).await, Ok(Some(idless)));
        assert_eq!(s.violations.len(), 1);
        s.close().await;
    }

    #[test]
    fn a_modern_discover_error_is_a_refusal_naming_the_offer() {
        let r = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "no",
            "data": {"supported": ["2030-01-01"], "requested": "2026-07-28"}}});
        let Some(SessionError::ModernRefusal {
            code, supported, ..
        }) = modern_refusal("server/discover", &r)
        else {
            panic!("not a refusal");
        };
        assert_eq!((code, supported), (-32022, vec!["2030-01-01".to_string()]));
        let text = modern_refusal("server/discover", &r)
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            text.contains("UnsupportedProtocolVersion (-32022)") && text.contains("2030-01-01"),
            "{text}"
        );
        let legacy = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}});
        assert!(modern_refusal("server/discover", &legacy).is_none());
    }

    #[test]
    fn discover_answers_are_not_given_a_protocol_version() {
        let r = json!({"supportedVersions": ["2026-07-28"],
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}});
        let n = normalise_discover(&r);
        assert!(n.get("protocolVersion").is_none());
        assert_eq!(n["serverInfo"]["name"], "s");
    }

    #[tokio::test]
    async fn small_notifications_are_bounded_by_count() {
        let mut s = session().await;
        for _ in 0..MAX_NOTIFICATIONS + 10 {
            s.keep_notification(note(10));
        }
        assert_eq!(s.notification_log.len(), MAX_NOTIFICATIONS);
        assert_eq!(s.notifications_dropped, 10);
        s.close().await;
    }
}
