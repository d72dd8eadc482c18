//! Streamable HTTP: every message is a POST; the answer comes back as JSON
//! or as an SSE stream (whose notifications are captured like stdio's).
//! Stateful eras keep the `Mcp-Session-Id` the server issued and send
//! `MCP-Protocol-Version`; the stateless era sends `MCP-Protocol-Version`,
//! `Mcp-Method` and `Mcp-Name` on every POST. Each POST's answer is read in
//! its own task and queued, so long-lived streams never block the session.

use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use serde_json::Value;
use tokio::sync::mpsc;

use super::param_headers::{encode_value, ToolHeaders};
use super::stdio::{excerpt, human_size};
use super::{Incoming, TransportError};

pub const SESSION_HEADER: &str = "mcp-session-id";
pub const VERSION_HEADER: &str = "mcp-protocol-version";

/// How to reach a Streamable HTTP server.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSpec {
    pub url: String,
    /// Extra headers (`--header K:V`), e.g. authorization.
    pub headers: Vec<(String, String)>,
    /// Covers connect, response headers, and each wait for stream data.
    pub timeout: Duration,
    pub max_body: usize,
    /// The `x-mcp-header` annotations learnt from the server's tool lists,
    /// shared by every connection made from this spec.
    pub tool_headers: ToolHeaders,
}

impl HttpSpec {
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            headers: Vec::new(),
            timeout: Duration::from_secs(5),
            max_body: crate::jsonrpc::DEFAULT_MAX_LINE,
            tool_headers: ToolHeaders::default(),
        }
    }
}

/// One client session against an HTTP server.
pub struct HttpConnection {
    spec: HttpSpec,
    client: reqwest::Client,
    session_id: Option<String>,
    /// Set once the handshake is done (stateful) or from the start (stateless).
    protocol_version: Option<String>,
    stateless: bool,
    tx: mpsc::UnboundedSender<Incoming>,
    rx: mpsc::UnboundedReceiver<Incoming>,
    /// Readers of POST answers; aborted when the connection is dropped.
    readers: tokio::task::JoinSet<()>,
    /// The status of the last POST, for transport scenarios.
    pub last_status: Option<u16>,
    /// POSTs sent so far; the number of the last one names its exchange
    /// in [`Incoming::Unanswered`].
    exchanges: u64,
}

/// Headers the stateless era puts on a POST, derived from the message:
/// `Mcp-Method`, `Mcp-Name` and a `tools/call`'s `Mcp-Param-{Name}`
/// headers, values in the Base64 sentinel form where the text requires it.
fn stateless_headers(msg: &Value, tools: &ToolHeaders) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(method) = msg.get("method").and_then(Value::as_str) {
        out.push(("mcp-method".to_string(), method.to_string()));
        let name = match method {
            "tools/call" | "prompts/get" => msg.pointer("/params/name"),
            "resources/read" => msg.pointer("/params/uri"),
            _ => None,
        };
        if let Some(n) = name.and_then(Value::as_str) {
            out.push(("mcp-name".to_string(), encode_value(n)));
            if method == "tools/call" {
                out.extend(tools.for_call(n, msg.pointer("/params/arguments")));
            }
        }
    }
    out
}

impl HttpConnection {
    pub fn new(spec: &HttpSpec, stateless: bool, version: &str) -> Result<Self, TransportError> {
        let client = reqwest::Client::builder()
            .connect_timeout(spec.timeout)
            .build()
            .map_err(|e| TransportError::Spawn {
                command: spec.url.clone(),
                reason: e.to_string(),
            })?;
        let (tx, rx) = mpsc::unbounded_channel();
        Ok(Self {
            spec: spec.clone(),
            client,
            session_id: None,
            protocol_version: stateless.then(|| version.to_string()),
            stateless,
            tx,
            rx,
            readers: tokio::task::JoinSet::new(),
            last_status: None,
            exchanges: 0,
        })
    }

    fn headers(&self, msg: Option<&Value>) -> Result<HeaderMap, TransportError> {
        let mut h = HeaderMap::new();
        h.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let mut add = |k: &str, v: &str| -> Result<(), TransportError> {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|e| TransportError::Closed(format!("bad header name {k}: {e}")))?;
            let value = HeaderValue::from_str(v)
                .map_err(|e| TransportError::Closed(format!("bad header value for {k}: {e}")))?;
            h.insert(name, value);
            Ok(())
        };
        if let Some(id) = &self.session_id {
            add(SESSION_HEADER, id)?;
        }
        if let Some(v) = &self.protocol_version {
            add(VERSION_HEADER, v)?;
        }
        if self.stateless {
            let derived = msg.map(|m| stateless_headers(m, &self.spec.tool_headers));
            for (k, v) in derived.unwrap_or_default() {
                add(&k, &v)?;
            }
        }
        for (k, v) in &self.spec.headers {
            add(k, v)?;
        }
        Ok(h)
    }

    /// POSTs one message (bytes as given; they need not be valid JSON).
    pub async fn send(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        let text = String::from_utf8_lossy(bytes).trim_end().to_string();
        let parsed: Option<Value> = serde_json::from_str(&text).ok();
        let is_initialize = parsed
            .as_ref()
            .and_then(|m| m.get("method"))
            .and_then(Value::as_str)
            == Some("initialize");
        let headers = self.headers(parsed.as_ref())?;
        let request = self.client.post(&self.spec.url).headers(headers).body(text);
        let response = tokio::time::timeout(self.spec.timeout, request.send())
            .await
            .map_err(|_| {
                TransportError::Closed(format!(
                    "no HTTP response headers from {} within {} ms",
                    self.spec.url,
                    self.spec.timeout.as_millis()
                ))
            })?
            .map_err(|e| TransportError::Closed(format!("POST {} failed: {e}", self.spec.url)))?;
        self.last_status = Some(response.status().as_u16());
        if is_initialize {
            if let Some(id) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
            {
                self.session_id = Some(id.to_string());
            }
        }
        let is_notification = parsed
            .as_ref()
            .is_some_and(|m| m.get("id").is_none() && m.get("method").is_some());
        self.exchanges += 1;
        self.readers.spawn(read_response(
            response,
            Exchange {
                number: self.exchanges,
                tx: self.tx.clone(),
                is_notification,
            },
            self.spec.max_body,
        ));
        Ok(())
    }

    /// The number of the last POST (see [`Incoming::Unanswered`]).
    pub fn last_exchange(&self) -> u64 {
        self.exchanges
    }

    /// Opens the session's GET stream (stateful eras), where a server sends
    /// what other sessions caused (e.g. list_changed). A server without one
    /// answers 405, which the spec allows; nothing is reported then.
    /// The returned receiver fires once the server has answered the GET (or
    /// refused it), so a caller can wait until notifications can arrive.
    pub fn open_get_stream(&mut self) -> Option<tokio::sync::oneshot::Receiver<()>> {
        if self.stateless || self.session_id.is_none() {
            return None;
        }
        let Ok(mut headers) = self.headers(None) else {
            return None;
        };
        let (opened, when_open) = tokio::sync::oneshot::channel();
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        headers.remove(CONTENT_TYPE);
        let request = self.client.get(&self.spec.url).headers(headers);
        let tx = self.tx.clone();
        let timeout = self.spec.timeout;
        self.readers.spawn(async move {
            let answer = tokio::time::timeout(timeout, request.send()).await;
            let _ = opened.send(());
            let Ok(Ok(response)) = answer else {
                return;
            };
            let is_stream = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/event-stream"));
            if response.status().is_success() && is_stream {
                read_sse(response, &tx).await;
            }
        });
        Some(when_open)
    }

    /// One HTTP exchange as a scenario wrote it (`http:` step): the session's
    /// usual headers, overridden or removed by `request.headers`; nothing of
    /// the answer reaches the session's message queue.
    pub async fn exchange(&self, request: &RawRequest) -> Result<RawAnswer, TransportError> {
        let parsed: Option<Value> = serde_json::from_str(&request.body).ok();
        let mut headers = self.headers(parsed.as_ref())?;
        if request.method == reqwest::Method::GET {
            headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            headers.remove(CONTENT_TYPE);
        }
        for (name, value) in &request.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| TransportError::Closed(format!("bad header name {name}: {e}")))?;
            match value {
                None => {
                    headers.remove(&name);
                }
                Some(v) => {
                    let v = HeaderValue::from_str(v).map_err(|e| {
                        TransportError::Closed(format!("bad header value for {name}: {e}"))
                    })?;
                    headers.insert(name, v);
                }
            }
        }
        let mut builder = self
            .client
            .request(request.method.clone(), &self.spec.url)
            .headers(headers);
        if request.method != reqwest::Method::GET && request.method != reqwest::Method::DELETE
            || !request.body.is_empty()
        {
            builder = builder.body(request.body.clone());
        }
        let response = tokio::time::timeout(self.spec.timeout, builder.send())
            .await
            .map_err(|_| {
                TransportError::Closed(format!(
                    "no HTTP response headers from {} within {} ms",
                    self.spec.url,
                    self.spec.timeout.as_millis()
                ))
            })?
            .map_err(|e| {
                TransportError::Closed(format!("{} {} failed: {e}", request.method, self.spec.url))
            })?;
        Ok(read_raw_answer(response, request, self.spec.timeout, self.spec.max_body).await)
    }

    /// Learns the `x-mcp-header` annotations of the tools in a list result.
    pub fn learn_tools(&self, tools: &[Value]) {
        self.spec.tool_headers.learn(tools);
    }

    /// Marks the handshake done: later POSTs carry `MCP-Protocol-Version`.
    pub fn set_protocol_version(&mut self, version: &str) {
        self.protocol_version = Some(version.to_string());
    }

    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    pub async fn recv(&mut self) -> Option<Incoming> {
        self.rx.recv().await
    }

    /// Ends the session with DELETE (stateful eras with a session id).
    pub async fn shutdown(&mut self) -> String {
        let Some(id) = self.session_id.clone() else {
            return "session closed".into();
        };
        let Ok(headers) = self.headers(None) else {
            return "session not deleted (bad headers)".into();
        };
        let _ = id;
        self.readers.abort_all();
        match tokio::time::timeout(
            self.spec.timeout,
            self.client.delete(&self.spec.url).headers(headers).send(),
        )
        .await
        {
            Ok(Ok(r)) => format!("session deleted (HTTP {})", r.status().as_u16()),
            Ok(Err(e)) => format!("DELETE failed: {e}"),
            Err(_) => "DELETE timed out".into(),
        }
    }
}

/// An HTTP request written by a scenario.
#[derive(Debug, Clone)]
pub struct RawRequest {
    pub method: reqwest::Method,
    pub body: String,
    /// Header overrides: `None` removes the session's default for that name.
    pub headers: Vec<(String, Option<String>)>,
    /// Read a GET's event stream for this long (0: only its status and headers).
    pub read_ms: u64,
}

/// What came back: status, headers (lower-cased names), the body.
#[derive(Debug, Clone, PartialEq)]
pub struct RawAnswer {
    pub status: u16,
    pub headers: serde_json::Map<String, Value>,
    pub content_type: String,
    /// The body as text (cut at 64 KiB).
    pub text: String,
    /// JSON-RPC messages in the body: the JSON body, or each SSE event's data.
    pub messages: Vec<Value>,
}

impl RawAnswer {
    /// The answer as scenarios see it: `status`, `headers`, `content_type`,
    /// `text`, `messages`, and `body` (the first message, or null).
    pub fn to_value(&self) -> Value {
        serde_json::json!({
            "status": self.status,
            "headers": self.headers,
            "content_type": self.content_type,
            "text": self.text,
            "messages": self.messages,
            "body": self.messages.first().cloned().unwrap_or(Value::Null),
        })
    }
}

const RAW_TEXT_LIMIT: usize = 64 * 1024;

async fn read_raw_answer(
    response: reqwest::Response,
    request: &RawRequest,
    timeout: Duration,
    max_body: usize,
) -> RawAnswer {
    let status = response.status().as_u16();
    let mut headers = serde_json::Map::new();
    for (name, value) in response.headers() {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        headers.insert(name.as_str().to_ascii_lowercase(), Value::String(value));
    }
    let content_type = headers
        .get("content-type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_ascii_lowercase();
    let is_stream = content_type.starts_with("text/event-stream");
    // A GET stream stays open for good: read it only for as long as asked.
    let budget = if request.method == reqwest::Method::GET {
        Duration::from_millis(request.read_ms)
    } else {
        timeout
    };
    let body = read_body_for(response, max_body, budget).await;
    let text = String::from_utf8_lossy(&body);
    let messages = if is_stream {
        sse_data(&text)
    } else {
        match serde_json::from_slice::<Value>(&body) {
            Ok(Value::Array(items)) => items,
            Ok(v) => vec![v],
            Err(_) => Vec::new(),
        }
    };
    let cut = text.floor_char_boundary(RAW_TEXT_LIMIT.min(text.len()));
    RawAnswer {
        status,
        headers,
        content_type,
        text: text[..cut].to_string(),
        messages,
    }
}

/// Reads the body until it ends, `max_body` is reached, or `budget` runs out
/// (what arrived by then is kept).
async fn read_body_for(response: reqwest::Response, max_body: usize, budget: Duration) -> Vec<u8> {
    let mut body = Vec::new();
    if budget.is_zero() {
        return body;
    }
    let mut stream = response.bytes_stream();
    let deadline = tokio::time::Instant::now() + budget;
    while let Ok(Some(Ok(chunk))) = tokio::time::timeout_at(deadline, stream.next()).await {
        let room = max_body.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= max_body {
            break;
        }
    }
    body
}

/// The JSON `data:` of each event in an SSE text (events that are not JSON are left out).
fn sse_data(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for event in text.replace("\r\n", "\n").split("\n\n") {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if data.is_empty() {
            continue;
        }
        if let Ok(v) = serde_json::from_str::<Value>(&data.join("\n")) {
            out.push(v);
        }
    }
    out
}

/// One POST: its number, where its answer goes, and what it carried.
struct Exchange {
    number: u64,
    tx: mpsc::UnboundedSender<Incoming>,
    is_notification: bool,
}

impl Exchange {
    fn deliver(&self, item: Incoming) {
        let _ = self.tx.send(item);
    }
}

fn is_response(v: &Value) -> bool {
    v.get("id").is_some() && (v.get("result").is_some() || v.get("error").is_some())
}

/// Reads one POST's answer into the queue: JSON body, SSE events, or a note
/// on an unexpected status. A plain body that held no JSON-RPC response
/// ends with [`Incoming::Unanswered`], so a wait for the answer ends then.
async fn read_response(response: reqwest::Response, exchange: Exchange, max_body: usize) {
    let status = response.status();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if status.as_u16() == 202 || (exchange.is_notification && status.is_success()) {
        return;
    }
    if content_type.starts_with("text/event-stream") {
        read_sse(response, &exchange.tx).await;
        return;
    }
    let answered = match read_body(response, max_body).await {
        Ok(body) => deliver_body(&exchange, &body, status, &content_type),
        Err(reason) => {
            exchange.deliver(Incoming::Garbage {
                reason,
                excerpt: String::new(),
            });
            false
        }
    };
    if !answered && !exchange.is_notification {
        exchange.deliver(Incoming::Unanswered {
            exchange: exchange.number,
            status: status.to_string(),
        });
    }
}

/// Queues the messages of a plain body; true if one was a response.
fn deliver_body(
    exchange: &Exchange,
    body: &[u8],
    status: reqwest::StatusCode,
    content_type: &str,
) -> bool {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Array(items)) => {
            let answered = items.iter().any(is_response);
            for item in items {
                exchange.deliver(Incoming::Message(item));
            }
            answered
        }
        Ok(v) if v.is_object() => {
            let answered = is_response(&v);
            exchange.deliver(Incoming::Message(v));
            answered
        }
        _ => {
            exchange.deliver(Incoming::Garbage {
                reason: format!(
                    "HTTP {status} with a body that is not a JSON-RPC message ({content_type})"
                ),
                excerpt: excerpt(body),
            });
            false
        }
    }
}

async fn read_body(response: reqwest::Response, max_body: usize) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| format!("reading the HTTP body failed: {e}"))?;
        if body.len() + chunk.len() > max_body {
            return Err(format!("HTTP body exceeded {}", human_size(max_body)));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

async fn read_sse(response: reqwest::Response, tx: &mpsc::UnboundedSender<Incoming>) {
    let mut events = sse_stream::SseByteStream::new(response.bytes_stream());
    while let Some(event) = events.next().await {
        match event {
            Ok(sse) => {
                let Some(data) = sse.data.filter(|d| !d.trim().is_empty()) else {
                    continue;
                };
                let item = match serde_json::from_str::<Value>(&data) {
                    Ok(v) => Incoming::Message(v),
                    Err(e) => Incoming::Garbage {
                        reason: format!("SSE event data is not JSON: {e}"),
                        excerpt: excerpt(data.as_bytes()),
                    },
                };
                if tx.send(item).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = tx.send(Incoming::Garbage {
                    reason: format!("SSE stream broke: {e}"),
                    excerpt: String::new(),
                });
                return;
            }
        }
    }
}
