//! Streamable HTTP: every message is a POST; the answer comes back as JSON
//! or as an SSE stream (whose notifications are captured like stdio's).
//! Stateful eras keep the `Mcp-Session-Id` the server issued and send
//! `MCP-Protocol-Version`; the stateless era sends `MCP-Protocol-Version`,
//! `Mcp-Method` and `Mcp-Name` on every POST. Each POST's answer is read in
//! its own task and queued, so long-lived streams never block the session.

use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, ACCEPT_ENCODING, CONTENT_TYPE};
use serde_json::Value;
use tokio::sync::mpsc;

use super::header_fault::HeaderFault;
use super::http_read::{self, error_chain, ReadError, Seen, SseReader};
use super::param_headers::{encode_value, ToolHeaders};
use super::stdio::excerpt;
use super::{Incoming, TransportError};

pub use super::{SESSION_HEADER, VERSION_HEADER};

/// How to reach a Streamable HTTP server.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSpec {
    pub url: String,
    /// Extra headers (`--header K:V`), e.g. authorization.
    pub headers: Vec<(String, String)>,
    /// Covers connect, response headers, and each wait for stream data.
    pub timeout: Duration,
    /// The cap on one body, one SSE event, and one response stream in all.
    pub max_body: usize,
    /// The `x-mcp-header` annotations learnt from the server's tool lists,
    /// shared by every connection made from this spec.
    pub tool_headers: ToolHeaders,
    /// A proxy the user named (`--proxy`); none otherwise. Proxies from the
    /// environment (`HTTP_PROXY`, `ALL_PROXY`) are never used: they would
    /// receive the user's headers although the user named another host.
    pub proxy: Option<String>,
}

impl HttpSpec {
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            headers: Vec::new(),
            timeout: Duration::from_secs(5),
            max_body: crate::jsonrpc::DEFAULT_MAX_LINE,
            tool_headers: ToolHeaders::default(),
            proxy: None,
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
    tx: mpsc::Sender<Incoming>,
    rx: mpsc::Receiver<Incoming>,
    /// Readers of POST answers; aborted when the connection is dropped.
    readers: tokio::task::JoinSet<()>,
    /// The readers of POST answers still being read, by exchange number
    /// (`close_exchange`): several requests may be in flight at once.
    open_readers: Vec<(u64, tokio::task::AbortHandle)>,
    /// The status of the last POST, for transport scenarios.
    pub last_status: Option<u16>,
    /// POSTs sent so far; the number of the last one names its exchange
    /// in [`Incoming::Unanswered`].
    exchanges: u64,
    /// Whether the `http-get-stream` client fault has sent its GET.
    fault_get_sent: bool,
    /// The header defect this connection carries (`--client-fault http-…`).
    header_fault: Option<HeaderFault>,
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
        let client =
            client(spec.timeout, spec.proxy.as_deref()).map_err(|e| TransportError::Spawn {
                command: spec.url.clone(),
                reason: error_chain(&e),
            })?;
        let (tx, rx) = mpsc::channel(QUEUE);
        Ok(Self {
            spec: spec.clone(),
            client,
            session_id: None,
            protocol_version: stateless.then(|| version.to_string()),
            stateless,
            tx,
            rx,
            readers: tokio::task::JoinSet::new(),
            open_readers: Vec::new(),
            last_status: None,
            exchanges: 0,
            fault_get_sent: false,
            header_fault: None,
        })
    }

    /// Bends one header of every request from now on (a client fault).
    pub fn set_header_fault(&mut self, fault: Option<HeaderFault>) {
        self.header_fault = fault;
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
        if let Some(fault) = self.header_fault {
            fault.apply(&mut h);
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
        let sent_at = Instant::now();
        let response = answer_of(request, &self.spec, "POST").await?;
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
        if self.stateless && !self.fault_get_sent {
            self.faulty_get().await;
        }
        let exchange = self.next_exchange(is_notification, sent_at);
        let reader = read_response(response, exchange, self.spec.max_body);
        self.read_in_background(reader);
        Ok(())
    }

    /// POSTs one request without waiting for its answer's headers: the POST
    /// and the reading of its answer run in a task of their own, so that
    /// several requests can be under way at once (`Session::start_request`;
    /// `send` waits for each POST's headers, which a server that answers in
    /// plain JSON sends only with its answer). A POST that fails is reported
    /// as its exchange left unanswered. Returns the exchange's number.
    /// Not for `initialize`, whose answer's headers name the session.
    pub fn send_detached(&mut self, bytes: &[u8]) -> Result<u64, TransportError> {
        let text = String::from_utf8_lossy(bytes).trim_end().to_string();
        let parsed: Option<Value> = serde_json::from_str(&text).ok();
        let headers = self.headers(parsed.as_ref())?;
        let request = self.client.post(&self.spec.url).headers(headers).body(text);
        let exchange = self.next_exchange(false, Instant::now());
        let number = exchange.number;
        let spec = self.spec.clone();
        self.read_in_background(async move {
            match answer_of(request, &spec, "POST").await {
                Ok(response) => read_response(response, exchange, spec.max_body).await,
                Err(e) => {
                    exchange.deliver(garbage(e.to_string())).await;
                    exchange.unanswered_because(e.to_string()).await;
                }
            }
        });
        Ok(number)
    }

    /// Whether `send_detached` may carry the next message: not before the
    /// `http-get-stream` client fault has sent its GET, which goes with the
    /// first POST.
    pub fn can_detach(&self) -> bool {
        !(self.stateless
            && !self.fault_get_sent
            && self.header_fault == Some(HeaderFault::GetStream))
    }

    /// The next POST's exchange.
    fn next_exchange(&mut self, is_notification: bool, sent_at: Instant) -> Exchange {
        self.exchanges += 1;
        Exchange {
            number: self.exchanges,
            tx: self.tx.clone(),
            is_notification,
            sent_at,
        }
    }

    /// Reads the answer of the last POST in a task of its own, which
    /// `close_exchange` can stop.
    fn read_in_background(
        &mut self,
        reader: impl std::future::Future<Output = ()> + Send + 'static,
    ) {
        self.open_readers
            .retain(|(_, reader)| !reader.is_finished());
        let reader = self.readers.spawn(reader);
        self.open_readers.push((self.exchanges, reader));
    }

    /// The `http-get-stream` client fault: a 2026-07-28 connection sends
    /// one GET to the endpoint, as a 2025 client opens its stream; the
    /// answer (405 from a server that has none) is dropped.
    async fn faulty_get(&mut self) {
        if self.header_fault != Some(HeaderFault::GetStream) {
            return;
        }
        self.fault_get_sent = true;
        let Ok(mut headers) = self.headers(None) else {
            return;
        };
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        headers.remove(CONTENT_TYPE);
        let request = self.client.get(&self.spec.url).headers(headers);
        let _ = tokio::time::timeout(self.spec.timeout, request.send()).await;
    }

    /// Closes the response stream of POST number `exchange`, which cancels
    /// its request in 2026-07-28 ("Closing the SSE response stream is the
    /// cancellation signal"): its reader is stopped, dropping the response.
    pub fn close_exchange(&mut self, exchange: u64) {
        self.open_readers.retain(|(number, reader)| {
            if *number == exchange {
                reader.abort();
            }
            *number != exchange
        });
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
        let max_body = self.spec.max_body;
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
                let seen = Seen::of(&response, Instant::now());
                if let Some(reason) = http_read::refused(&response, max_body) {
                    let _ = tx
                        .send(garbage(format!("GET stream: {reason} ({seen})")))
                        .await;
                    return;
                }
                let _ = read_sse(response, &tx, max_body, seen).await;
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
        let response = answer_of(builder, &self.spec, request.method.as_str()).await?;
        Ok(read_raw_answer(response, request, self.spec.timeout, self.spec.max_body).await)
    }

    /// Learns the `x-mcp-header` annotations of the tools in a list result.
    /// Learns the tools' `x-mcp-header` annotations; returns the tools
    /// whose annotations are invalid, with why.
    pub fn learn_tools(&self, tools: &[Value]) -> Vec<(String, String)> {
        self.spec.tool_headers.learn(tools)
    }

    /// Marks the handshake done: later POSTs carry `MCP-Protocol-Version`.
    pub fn set_protocol_version(&mut self, version: &str) {
        self.protocol_version = Some(version.to_string());
    }

    /// Speaks a stateless version from now on (a client retrying after
    /// UnsupportedProtocolVersion): no session id, the derived headers.
    pub fn become_stateless(&mut self, version: &str) {
        self.stateless = true;
        self.session_id = None;
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
            Ok(Err(e)) => format!("DELETE failed: {}", error_chain(&e)),
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
    // A compressed body is not read: it would be binary, or a bomb.
    let body = match http_read::refused(&response, max_body) {
        Some(_) => Vec::new(),
        None => read_body_for(response, max_body, budget).await,
    };
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
    tx: mpsc::Sender<Incoming>,
    is_notification: bool,
    sent_at: Instant,
}

impl Exchange {
    async fn deliver(&self, item: Incoming) {
        let _ = self.tx.send(item).await;
    }

    /// No response can come on this POST any more: a wait for it ends.
    async fn unanswered(&self, status: reqwest::StatusCode) {
        self.unanswered_because(status.to_string()).await;
    }

    /// The same, where the POST got no status at all (`why`).
    async fn unanswered_because(&self, why: String) {
        if !self.is_notification {
            self.deliver(Incoming::Unanswered {
                exchange: self.number,
                status: why,
            })
            .await;
        }
    }
}

fn is_response(v: &Value) -> bool {
    v.get("id").is_some() && (v.get("result").is_some() || v.get("error").is_some())
}

/// Items the readers may queue before they wait for the session to take
/// them: a server that floods a stream is read no faster than the session
/// handles what it sent, so the queue never holds more than this many.
const QUEUE: usize = 64;

/// The client of every session: it follows no redirect (one to another host
/// would carry the user's headers there, and reqwest strips only
/// `authorization`), goes through no proxy but the one the user named, and
/// asks for no compression (without Accept-Encoding, any coding is
/// acceptable) and decodes none, so a compressed body is reported, never
/// inflated.
fn client(timeout: Duration, proxy: Option<&str>) -> reqwest::Result<reqwest::Client> {
    let mut identity = HeaderMap::new();
    identity.insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
    let builder = reqwest::Client::builder()
        .connect_timeout(timeout)
        .default_headers(identity)
        .redirect(reqwest::redirect::Policy::none())
        .no_gzip()
        .no_brotli()
        .no_deflate()
        .no_zstd();
    with_proxy(builder, proxy)?.build()
}

/// No proxy from the environment; the one the user named, if any.
pub fn with_proxy(
    builder: reqwest::ClientBuilder,
    proxy: Option<&str>,
) -> reqwest::Result<reqwest::ClientBuilder> {
    Ok(match proxy {
        Some(url) => builder.proxy(reqwest::Proxy::all(url)?),
        None => builder.no_proxy(),
    })
}

/// Sends a request and waits (within the timeout) for its answer's
/// headers. A failure names its whole cause chain; a redirect is an error.
async fn answer_of(
    request: reqwest::RequestBuilder,
    spec: &HttpSpec,
    method: &str,
) -> Result<reqwest::Response, TransportError> {
    let url = &spec.url;
    let started = Instant::now();
    let response = tokio::time::timeout(spec.timeout, request.send())
        .await
        .map_err(|_| {
            TransportError::Closed(format!(
                "no HTTP response headers from {url} within {} ms",
                spec.timeout.as_millis()
            ))
        })?
        .map_err(|e| {
            TransportError::Closed(format!(
                "{method} {url} failed after {:.2} s: {}",
                started.elapsed().as_secs_f64(),
                error_chain(&e)
            ))
        })?;
    if let Some((status, location)) = http_read::redirect(&response) {
        return Err(TransportError::Redirect {
            method: method.to_string(),
            url: url.clone(),
            status,
            location,
        });
    }
    Ok(response)
}

fn garbage(reason: String) -> Incoming {
    Incoming::Garbage {
        reason,
        excerpt: String::new(),
    }
}

/// Reads one POST's answer into the queue: JSON body, SSE events, or a note
/// on an unexpected status. A plain body that held no JSON-RPC response,
/// and a body or stream the harness stopped reading, end with
/// [`Incoming::Unanswered`], so a wait for the answer ends then.
async fn read_response(response: reqwest::Response, exchange: Exchange, max_body: usize) {
    let status = response.status();
    let seen = Seen::of(&response, exchange.sent_at);
    if status.as_u16() == 202 || (exchange.is_notification && status.is_success()) {
        return;
    }
    if let Some(reason) = http_read::refused(&response, max_body) {
        exchange
            .deliver(garbage(format!("{reason} ({seen})")))
            .await;
        exchange.unanswered(status).await;
        return;
    }
    if seen.content_type.starts_with("text/event-stream") {
        let ended = read_sse(response, &exchange.tx, max_body, seen).await;
        if matches!(ended, Err(ReadError::EventCap(_) | ReadError::StreamCap(_))) {
            exchange.unanswered(status).await;
        }
        return;
    }
    let mut seen = seen;
    let answered = match read_body(response, max_body, &mut seen).await {
        Ok(body) => deliver_body(&exchange, &body, &seen).await,
        Err(reason) => {
            exchange.deliver(garbage(reason)).await;
            false
        }
    };
    if !answered {
        exchange.unanswered(status).await;
    }
}
/// Queues the messages of a plain body; true if one was a response.
async fn deliver_body(exchange: &Exchange, body: &[u8], seen: &Seen) -> bool {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Array(items)) => {
            let answered = items.iter().any(is_response);
            for item in items {
                exchange.deliver(Incoming::Message(item)).await;
            }
            answered
        }
        Ok(v) if v.is_object() => {
            let answered = is_response(&v);
            exchange.deliver(Incoming::Message(v)).await;
            answered
        }
        _ => {
            // The status is said by the unanswered POST that follows.
            let content_type = if seen.content_type.is_empty() {
                "no content type"
            } else {
                &seen.content_type
            };
            let what = if body.is_empty() {
                "an empty body"
            } else {
                "a body that is not a JSON-RPC message"
            };
            exchange
                .deliver(Incoming::Garbage {
                    reason: format!("{what} ({content_type})"),
                    excerpt: excerpt(body),
                })
                .await;
            false
        }
    }
}

/// A whole body, or why it was not read to its end: over the cap, or
/// broken off (with what was seen by then).
async fn read_body(
    response: reqwest::Response,
    max_body: usize,
    seen: &mut Seen,
) -> Result<Vec<u8>, String> {
    let declared = response.content_length();
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            format!(
                "{} ({seen})",
                http_read::broken_body(&e, body.len(), declared)
            )
        })?;
        seen.bytes += chunk.len();
        if body.len() + chunk.len() > max_body {
            return Err(format!("{} ({seen})", ReadError::BodyCap(max_body)));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Queues the data of each SSE event (a message, or a note on data that is
/// not one) until the stream ends, breaks, or passes a cap; the session
/// going away ends it too. How it ended is queued as a note and returned.
async fn read_sse(
    response: reqwest::Response,
    tx: &mpsc::Sender<Incoming>,
    max_body: usize,
    mut seen: Seen,
) -> Result<(), ReadError> {
    let mut reader = SseReader::new(max_body, max_body);
    let mut stream = response.bytes_stream();
    let mut events = Vec::new();
    while let Some(chunk) = stream.next().await {
        let fed = match chunk {
            Ok(chunk) => reader.feed(&chunk, &mut events),
            Err(e) => Err(ReadError::Broken(format!(
                "the SSE stream broke: {}",
                error_chain(&e)
            ))),
        };
        seen.bytes = reader.total();
        for item in events.drain(..).filter_map(|data| sse_item(&data)) {
            if tx.send(item).await.is_err() {
                return Ok(());
            }
        }
        if let Err(e) = fed {
            let _ = tx.send(garbage(format!("{e} ({seen})"))).await;
            return Err(e);
        }
    }
    Ok(())
}

/// One SSE event's data as the session sees it; none for an event without
/// data (a priming event, a keep-alive).
fn sse_item(data: &[u8]) -> Option<Incoming> {
    if data.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(match serde_json::from_slice::<Value>(data) {
        Ok(v) => Incoming::Message(v),
        Err(e) => Incoming::Garbage {
            reason: format!("SSE event data is not JSON: {e}"),
            excerpt: excerpt(data),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_header_fault_bends_only_its_own_connections_headers() {
        let spec = HttpSpec::new("http://127.0.0.1:9/mcp");
        let plain = HttpConnection::new(&spec, false, "2025-11-25").expect("a client");
        let mut faulty = HttpConnection::new(&spec, false, "2025-11-25").expect("a client");
        faulty.set_header_fault(Some(HeaderFault::NoAccept));
        let accept = |c: &HttpConnection| c.headers(None).expect("headers")[ACCEPT].clone();
        assert_eq!(accept(&plain), "application/json, text/event-stream");
        assert_eq!(accept(&faulty), "application/json");
    }
}
