//! The reference server over Streamable HTTP: the built binary on a
//! loopback port, driven with reqwest like any client would.

use futures::StreamExt;
use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-conform");
const V0618: &str = "2025-06-18";
const V1125: &str = "2025-11-25";
const V0728: &str = "2026-07-28";
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const WAIT: Duration = Duration::from_secs(10);

/// A running `serve-reference --http 127.0.0.1:0`, killed on drop.
struct Served {
    child: Child,
    url: String,
}

impl Served {
    fn start(args: &[&str]) -> Served {
        let mut child = Command::new(BIN)
            .args(["serve-reference", "--http", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn server");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix("listening on ") {
                    let _ = tx.send(url.to_string());
                } else {
                    eprintln!("server: {line}");
                }
            }
        });
        let url = rx.recv_timeout(WAIT).expect("server printed its address");
        Served { child, url }
    }

    fn base(&self) -> String {
        self.url.trim_end_matches("/mcp").to_string()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What came back from one POST.
struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    /// JSON body, or every SSE event's message in order.
    messages: Vec<Value>,
    sse: bool,
}

impl Reply {
    fn body(&self) -> &Value {
        self.messages.last().expect("a message")
    }

    fn session(&self) -> Option<String> {
        self.headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(String::from)
    }
}

/// One client: a stateful session once `initialize` answered, or stateless
/// 2026-07-28 requests (with `_meta` and the three headers).
struct Client {
    http: reqwest::Client,
    url: String,
    session: Option<String>,
    version: String,
    next_id: i64,
}

impl Client {
    fn new(url: &str, version: &str) -> Client {
        Client {
            http: reqwest::Client::new(),
            url: url.to_string(),
            session: None,
            version: version.to_string(),
            next_id: 1,
        }
    }

    fn stateless(&self) -> bool {
        self.version == V0728
    }

    async fn open(url: &str, version: &str) -> Client {
        let mut c = Client::new(url, version);
        if !c.stateless() {
            let r = c
                .post_raw(
                    &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                        "protocolVersion": version, "capabilities": {},
                        "clientInfo": {"name": "test", "version": "1"}}}),
                    &[],
                )
                .await;
            assert_eq!(r.status, StatusCode::OK);
            c.session = Some(r.session().expect("Mcp-Session-Id on initialize"));
            let r = c
                .post_raw(
                    &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                    &[],
                )
                .await;
            assert_eq!(r.status, StatusCode::ACCEPTED);
        }
        c
    }

    /// The headers this client sends with `msg`.
    fn headers_for(&self, msg: &Value) -> Vec<(String, String)> {
        let mut h = vec![
            ("content-type".into(), "application/json".into()),
            (
                "accept".into(),
                "application/json, text/event-stream".into(),
            ),
        ];
        if let Some(s) = &self.session {
            h.push(("mcp-session-id".into(), s.clone()));
            h.push(("mcp-protocol-version".into(), self.version.clone()));
        }
        if self.stateless() {
            h.push(("mcp-protocol-version".into(), self.version.clone()));
            if let Some(m) = msg["method"].as_str() {
                h.push(("mcp-method".into(), m.into()));
                let name = match m {
                    "tools/call" | "prompts/get" => msg["params"]["name"].as_str(),
                    "resources/read" => msg["params"]["uri"].as_str(),
                    _ => None,
                };
                if let Some(n) = name {
                    h.push(("mcp-name".into(), n.into()));
                }
            }
        }
        h
    }

    /// POSTs `msg` with this client's headers, `extra` replacing same-named ones.
    async fn post_raw(&self, msg: &Value, extra: &[(&str, &str)]) -> Reply {
        let body = serde_json::to_vec(msg).expect("encode");
        self.post_bytes(body, msg, extra).await
    }

    async fn post_bytes(&self, body: Vec<u8>, msg: &Value, extra: &[(&str, &str)]) -> Reply {
        let mut headers: Vec<(String, String)> = self
            .headers_for(msg)
            .into_iter()
            .filter(|(k, _)| !extra.iter().any(|(e, _)| e.eq_ignore_ascii_case(k)))
            .collect();
        headers.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let mut req = self.http.post(&self.url).body(body);
        for (k, v) in headers.iter().filter(|(_, v)| !v.is_empty()) {
            req = req.header(k.as_str(), v.as_str());
        }
        let resp = tokio::time::timeout(WAIT, req.send())
            .await
            .expect("answer within the timeout")
            .expect("POST");
        read_reply(resp).await
    }

    fn message(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut params = params;
        if self.stateless() {
            params["_meta"] = json!({
                META_VERSION: V0728,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            });
        }
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    async fn request(&mut self, method: &str, params: Value) -> Reply {
        let msg = self.message(method, params);
        self.post_raw(&msg, &[]).await
    }

    /// The result of a request that must succeed.
    async fn ok(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params).await;
        assert_eq!(r.status, StatusCode::OK, "{method}: {:?}", r.messages);
        let body = r.body().clone();
        assert!(body.get("result").is_some(), "{method}: {body}");
        body["result"].clone()
    }

    async fn get_stream(&self) -> reqwest::Response {
        let mut req = self
            .http
            .get(&self.url)
            .header("accept", "text/event-stream");
        if let Some(s) = &self.session {
            req = req
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", &self.version);
        }
        req.send().await.expect("GET")
    }

    async fn delete(&self) -> StatusCode {
        let mut req = self.http.delete(&self.url);
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        req.send().await.expect("DELETE").status()
    }
}

async fn read_reply(resp: reqwest::Response) -> Reply {
    let status = resp.status();
    let headers = resp.headers().clone();
    let sse = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/event-stream"));
    let messages = if sse {
        let mut events = Events::new(resp);
        let mut out = Vec::new();
        while let Some(m) = events.next(WAIT).await {
            out.push(m);
        }
        out
    } else {
        let bytes = resp.bytes().await.expect("body");
        if bytes.is_empty() {
            Vec::new()
        } else {
            vec![serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                panic!(
                    "body is not JSON ({e}): {}",
                    String::from_utf8_lossy(&bytes)
                )
            })]
        }
    };
    Reply {
        status,
        headers,
        messages,
        sse,
    }
}

/// The JSON messages of an SSE response, one at a time.
struct Events {
    inner: std::pin::Pin<
        Box<dyn futures::Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> + Send>,
    >,
}

impl Events {
    fn new(resp: reqwest::Response) -> Events {
        Events {
            inner: Box::pin(sse_stream::SseByteStream::new(resp.bytes_stream())),
        }
    }

    /// The next message, or `None` when the stream ends or `within` passes.
    async fn next(&mut self, within: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let event = tokio::time::timeout_at(deadline, self.inner.next())
                .await
                .ok()??
                .ok()?;
            if let Some(data) = event.data.filter(|d| !d.trim().is_empty()) {
                return Some(serde_json::from_str(&data).expect("event data is JSON"));
            }
        }
    }

    /// The next message with this method, skipping others.
    async fn next_method(&mut self, method: &str, within: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let m = self.next(left).await?;
            if m["method"] == method {
                return Some(m);
            }
        }
    }
}

fn error_code(v: &Value) -> Option<i64> {
    v.pointer("/error/code").and_then(Value::as_i64)
}

fn new_tool(name: &str) -> Value {
    json!({"name": name, "description": "Added by a test.", "inputSchema": {"type": "object"}})
}

async fn initialize_issues_a_session_that_later_requests_need() {
    let s = Served::start(&[]);
    let mut c = Client::new(&s.url, V1125);
    let init = c
        .request(
            "initialize",
            json!({"protocolVersion": V1125, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    assert_eq!(init.status, StatusCode::OK);
    assert!(!init.sse);
    let id = init.session().expect("Mcp-Session-Id");
    assert_eq!(id.len(), 32);
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(init.body()["result"]["protocolVersion"], V1125);

    // Without the header: 400 and a JSON-RPC error that says why.
    let r = c.request("tools/list", json!({})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(error_code(r.body()), Some(-32600));
    assert_eq!(r.body()["id"], 2);
    let msg = r.body()["error"]["message"].as_str().unwrap_or("");
    assert!(msg.contains("Mcp-Session-Id"), "{msg}");

    c.session = Some(id);
    let r = c
        .post_raw(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            &[],
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert!(r.messages.is_empty());
    let tools = c.ok("tools/list", json!({"query": "page"})).await;
    assert!(tools["tools"].as_array().is_some_and(|t| !t.is_empty()));

    // A second initialize opens a different session.
    let other = Client::open(&s.url, V1125).await;
    assert_ne!(other.session, c.session);

    // A failed initialize opens none.
    let bad = Client::new(&s.url, V1125)
        .post_raw(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 7}}),
            &[],
        )
        .await;
    assert_eq!(error_code(bad.body()), Some(-32602));
    assert!(bad.session().is_none());
}

async fn delete_ends_the_session_and_unknown_ids_are_404() {
    let s = Served::start(&[]);
    let mut c = Client::open(&s.url, V0618).await;
    c.ok("ping", json!({})).await;
    assert_eq!(c.delete().await, StatusCode::NO_CONTENT);
    let r = c.request("ping", json!({})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(error_code(r.body()), Some(-32001));
    assert_eq!(c.delete().await, StatusCode::NOT_FOUND);
    assert_eq!(c.get_stream().await.status(), StatusCode::NOT_FOUND);

    c.session = Some("0123456789abcdef0123456789abcdef".into());
    assert_eq!(
        c.request("ping", json!({})).await.status,
        StatusCode::NOT_FOUND
    );
    c.session = None;
    assert_eq!(c.delete().await, StatusCode::BAD_REQUEST);
}

async fn idle_sessions_expire() {
    let s = Served::start(&["--session-ttl", "1"]);
    let mut idle = Client::open(&s.url, V1125).await;
    let mut streaming = Client::open(&s.url, V1125).await;
    let stream = streaming.get_stream().await;
    assert_eq!(stream.status(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        idle.request("ping", json!({})).await.status,
        StatusCode::NOT_FOUND
    );
    // An open GET stream keeps its session alive...
    streaming.ok("ping", json!({})).await;
    // ...and once the client drops it, the session idles out like any other.
    drop(stream);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        streaming.request("ping", json!({})).await.status,
        StatusCode::NOT_FOUND
    );
}

async fn foreign_origins_are_forbidden() {
    let s = Served::start(&["--allowed-origin", "https://app.example"]);
    let c = Client::new(&s.url, V0728);
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": V0728,
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    for (origin, status) in [
        ("https://evil.example", StatusCode::FORBIDDEN),
        ("http://localhost.evil.example:3000", StatusCode::FORBIDDEN),
        ("null", StatusCode::FORBIDDEN),
        ("http://localhost:5173", StatusCode::OK),
        ("http://127.0.0.1", StatusCode::OK),
        ("http://[::1]:8080", StatusCode::OK),
        ("https://app.example", StatusCode::OK),
    ] {
        let r = c.post_raw(&msg, &[("origin", origin)]).await;
        assert_eq!(r.status, status, "{origin}");
    }
    let r = c
        .post_raw(&msg, &[("origin", "https://evil.example")])
        .await;
    assert_eq!(error_code(r.body()), Some(-32600));
    let rest = reqwest::Client::new()
        .post(format!("{}/mcp-standard/list_categories", s.base()))
        .header("origin", "https://evil.example")
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .expect("REST");
    assert_eq!(rest.status(), StatusCode::FORBIDDEN);
    let get = reqwest::Client::new()
        .get(&s.url)
        .header("origin", "https://evil.example")
        .send()
        .await
        .expect("GET");
    assert_eq!(get.status(), StatusCode::FORBIDDEN);

    // An allowed browser origin gets CORS headers and its preflight answered.
    let r = c.post_raw(&msg, &[("origin", "https://app.example")]).await;
    let allow = |h: &HeaderMap, k: &str| {
        h.get(k)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(
        allow(&r.headers, "access-control-allow-origin"),
        "https://app.example"
    );
    assert!(allow(&r.headers, "access-control-expose-headers").contains("Mcp-Session-Id"));
    let pre = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, &s.url)
        .header("origin", "https://app.example")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type, mcp-session-id",
        )
        .send()
        .await
        .expect("preflight");
    assert_eq!(pre.status(), StatusCode::NO_CONTENT);
    assert!(allow(pre.headers(), "access-control-allow-headers").contains("mcp-session-id"));
    assert!(allow(pre.headers(), "access-control-allow-methods").contains("DELETE"));
}

async fn notifications_and_responses_get_202() {
    let s = Served::start(&[]);
    let c = Client::open(&s.url, V1125).await;
    for msg in [
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}),
        json!({"jsonrpc": "2.0", "id": 5, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 6, "error": {"code": -1, "message": "no"}}),
    ] {
        let r = c.post_raw(&msg, &[]).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{msg}");
        assert!(r.messages.is_empty());
    }
    let stateless = Client::new(&s.url, V0728);
    let r = stateless
        .post_raw(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
            &[],
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
}

async fn malformed_oversized_and_unacceptable_posts() {
    let s = Served::start(&["--max-line", "2000"]);
    let c = Client::open(&s.url, V1125).await;
    let any = json!({});
    let r = c.post_bytes(b"{\"jsonrpc\": ".to_vec(), &any, &[]).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(error_code(r.body()), Some(-32700));
    assert_eq!(r.body()["id"], Value::Null);

    let r = c
        .post_raw(&json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]), &[])
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(error_code(r.body()), Some(-32600));

    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"query": "x".repeat(5000)}});
    let r = c.post_raw(&big, &[]).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(error_code(r.body()), Some(-32700));

    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let r = c.post_raw(&ping, &[("content-type", "text/plain")]).await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let r = c.post_raw(&ping, &[("accept", "text/html")]).await;
    assert_eq!(r.status, StatusCode::NOT_ACCEPTABLE);
    // A method error is still an answer: 200.
    let r = c
        .post_raw(&json!({"jsonrpc": "2.0", "id": 3, "method": "nope"}), &[])
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(error_code(r.body()), Some(-32601));
}

async fn protocol_version_header_is_checked() {
    let s = Served::start(&[]);
    let mut c = Client::open(&s.url, V0618).await;
    let ping = c.message("ping", json!({}));
    let r = c
        .post_raw(&ping, &[("mcp-protocol-version", "1999-01-01")])
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(error_code(r.body()), Some(-32022));
    assert_eq!(r.body()["error"]["data"]["requested"], "1999-01-01");

    // Supported, but not what this session negotiated.
    let r = c.post_raw(&ping, &[("mcp-protocol-version", V1125)]).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let msg = r.body()["error"]["message"].as_str().unwrap_or("");
    assert!(msg.contains(V0618), "{msg}");

    // Absent: accepted (clients of 2025-03-26 never sent it).
    let r = c.post_raw(&ping, &[("mcp-protocol-version", "")]).await;
    assert_eq!(r.status, StatusCode::OK);
    let r = c.post_raw(&ping, &[]).await;
    assert_eq!(r.status, StatusCode::OK);
}

async fn a_mutation_answers_as_a_stream_and_reaches_other_sessions() {
    let s = Served::start(&["--control"]);
    let mut a = Client::open(&s.url, V1125).await;
    let b = Client::open(&s.url, V0618).await;
    let idle = Client::open(&s.url, V1125).await;
    let stream = b.get_stream().await;
    assert_eq!(stream.status(), StatusCode::OK);
    assert!(stream
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream")));
    // The server registers the stream before it sends these headers, so
    // the mutation below cannot overtake it.
    let mut b_events = Events::new(stream);

    let r = a
        .request(
            "conform/mutate",
            json!({"action": "add_tool", "tool": new_tool("http_added")}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.sse, "notifications come with the answer, so it streams");
    let methods: Vec<&str> = r
        .messages
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("(response)"))
        .collect();
    assert_eq!(
        methods,
        ["notifications/tools/list_changed", "(response)"],
        "{:?}",
        r.messages
    );
    assert_eq!(r.body()["result"]["ok"], true);

    let note = b_events
        .next_method("notifications/tools/list_changed", WAIT)
        .await;
    assert!(note.is_some(), "b's GET stream hears about a's change");

    // Answers without notifications are plain JSON again.
    let plain = a.request("ping", json!({})).await;
    assert!(!plain.sse);
    // A session without a GET stream has nowhere to receive them; it still works.
    let mut idle = idle;
    idle.ok("ping", json!({})).await;
}

async fn concurrent_mutations_are_all_applied() {
    let s = Served::start(&["--control"]);
    let mut tasks = Vec::new();
    for i in 0..16 {
        let url = s.url.clone();
        tasks.push(tokio::spawn(async move {
            let mut c = Client::open(&url, V1125).await;
            c.ok(
                "conform/mutate",
                json!({"action": "add_tool", "tool": new_tool(&format!("concurrent_{i}"))}),
            )
            .await
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    let mut c = Client::open(&s.url, V1125).await;
    let mut names = Vec::new();
    let mut cursor: Option<Value> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let page = c.ok("tools/list", params).await;
        for t in page["tools"].as_array().into_iter().flatten() {
            names.push(t["name"].as_str().unwrap_or("").to_string());
        }
        match page.get("nextCursor") {
            Some(next) => cursor = Some(next.clone()),
            None => break,
        }
    }
    for i in 0..16 {
        assert!(
            names.contains(&format!("concurrent_{i}")),
            "concurrent_{i} lost"
        );
    }
}

async fn call_code(c: &mut Client, tool: &str) -> Option<i64> {
    let r = c
        .request("tools/call", json!({"name": tool, "arguments": {}}))
        .await;
    error_code(r.body())
}

async fn authorize(c: &mut Client, tools: &str) {
    c.ok(
        "resources/read",
        json!({"uri": format!("resource:///tool_descriptions?tools={tools}")}),
    )
    .await;
}

async fn progressive_disclosure_authorization_is_per_session() {
    let s = Served::start(&[]);
    let mut a = Client::open(&s.url, V1125).await;
    let mut b = Client::open(&s.url, V1125).await;
    assert_eq!(call_code(&mut a, "page_get").await, Some(-32010));
    authorize(&mut a, "page_get").await;
    assert_eq!(call_code(&mut a, "page_get").await, None);
    assert_eq!(
        call_code(&mut b, "page_get").await,
        Some(-32010),
        "a's fetch must not authorize b"
    );
    authorize(&mut b, "task_get").await;
    assert_eq!(call_code(&mut b, "task_get").await, None);
    assert_eq!(call_code(&mut a, "task_get").await, Some(-32010));
}

async fn the_shared_auth_fault_still_leaks_across_http_sessions() {
    let s = Served::start(&["--fault", "pd-shared-auth"]);
    let mut a = Client::open(&s.url, V1125).await;
    let mut b = Client::open(&s.url, V1125).await;
    authorize(&mut a, "space_get").await;
    assert_eq!(call_code(&mut b, "space_get").await, None);
}

async fn rest(s: &Served, endpoint: &str, body: &str) -> (StatusCode, Value) {
    let r = reqwest::Client::new()
        .post(format!("{}/mcp-standard/{endpoint}", s.base()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("REST");
    let status = r.status();
    let bytes = r.bytes().await.expect("body");
    (status, serde_json::from_slice(&bytes).expect("JSON body"))
}

async fn rest_endpoints_equal_the_category_tools() {
    let s = Served::start(&[]);
    let mut c = Client::open(&s.url, V1125).await;
    authorize(&mut c, "tool_search,list_categories,get_tools_by_category").await;
    for (endpoint, tool, args) in [
        (
            "search_tools",
            "tool_search",
            json!({"query": "create page", "limit": 5}),
        ),
        (
            "search_tools",
            "tool_search",
            json!({"query": "assign", "category": "task", "tags": ["write"]}),
        ),
        ("search_tools", "tool_search", json!({})),
        ("list_categories", "list_categories", json!({})),
        (
            "get_tools_by_category",
            "get_tools_by_category",
            json!({"category": "task"}),
        ),
    ] {
        let result = c
            .ok("tools/call", json!({"name": tool, "arguments": args}))
            .await;
        assert_eq!(result["isError"], false, "{tool}: {result}");
        let (status, body) = rest(&s, endpoint, &args.to_string()).await;
        assert_eq!(status, StatusCode::OK, "{endpoint}: {body}");
        assert_eq!(body, result["structuredContent"], "{endpoint} {args}");
    }
    // No progressive disclosure on REST: a fresh client needs no fetch.
    let (status, _) = rest(&s, "list_categories", "").await;
    assert_eq!(status, StatusCode::OK);

    for (endpoint, body) in [
        ("get_tools_by_category", "{}"),
        ("get_tools_by_category", r#"{"category": "nope"}"#),
        ("search_tools", r#"{"limit": 0}"#),
        ("search_tools", r#"{"query": 5}"#),
        ("search_tools", "[1]"),
        ("search_tools", "{oops"),
    ] {
        let (status, answer) = rest(&s, endpoint, body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{endpoint} {body}");
        assert!(answer["error"].is_string(), "{answer}");
    }
    let (status, _) = rest(&s, "nope", "{}").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

async fn stateless_requests_need_no_session_and_headers_must_match() {
    let s = Served::start(&[]);
    let mut c = Client::new(&s.url, V0728);
    let discover = c.request("server/discover", json!({})).await;
    assert_eq!(discover.status, StatusCode::OK);
    assert!(discover.session().is_none());
    let list = c.request("tools/list", json!({})).await;
    assert_eq!(list.status, StatusCode::OK);
    assert!(list.session().is_none());
    assert_eq!(list.body()["result"]["resultType"], "complete");
    // Another client (another connection) sees the same list.
    let mut other = Client::new(&s.url, V0728);
    let again = other.request("tools/list", json!({})).await;
    assert_eq!(again.body()["result"], list.body()["result"]);

    let call = c.message("tools/call", json!({"name": "page_get", "arguments": {}}));
    let ok = c.post_raw(&call, &[]).await;
    assert_eq!(ok.status, StatusCode::OK, "{:?}", ok.messages);
    for extra in [
        [("mcp-method", "tools/list"), ("mcp-name", "page_get")],
        [("mcp-method", "tools/call"), ("mcp-name", "task_get")],
        [("mcp-method", ""), ("mcp-name", "page_get")],
        [("mcp-method", "tools/call"), ("mcp-name", "")],
        [("mcp-protocol-version", V1125), ("mcp-name", "page_get")],
        [("mcp-protocol-version", ""), ("mcp-name", "page_get")],
    ] {
        let r = c.post_raw(&call, &extra).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{extra:?}");
        assert_eq!(error_code(r.body()), Some(-32020), "{extra:?}");
        assert_eq!(r.body()["id"], call["id"]);
    }
    // An unsupported version in the body is UnsupportedProtocolVersion, 400.
    let mut bad = c.message("tools/list", json!({}));
    bad["params"]["_meta"][META_VERSION] = json!("1999-01-01");
    let r = c.post_raw(&bad, &[]).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(error_code(r.body()), Some(-32022));

    // No GET stream in this era.
    let get = reqwest::Client::new()
        .get(&s.url)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", V0728)
        .send()
        .await
        .expect("GET");
    assert_eq!(get.status(), StatusCode::METHOD_NOT_ALLOWED);
}

async fn listen_streams_hear_every_change() {
    let s = Served::start(&["--control"]);
    let mut listener = Client::new(&s.url, V0728);
    let msg = listener.message(
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let mut req = listener.http.post(&s.url).json(&msg);
    for (k, v) in listener.headers_for(&msg) {
        req = req.header(k, v);
    }
    let resp = req.send().await.expect("listen");
    assert_eq!(resp.status(), StatusCode::OK);
    let mut events = Events::new(resp);
    let ack = events.next(WAIT).await.expect("acknowledged");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"]["toolsListChanged"], true);

    // A stateless mutation and a stateful session's mutation both arrive.
    let mut stateless = Client::new(&s.url, V0728);
    stateless
        .ok(
            "conform/mutate",
            json!({"action": "add_tool", "tool": new_tool("from_stateless")}),
        )
        .await;
    let note = events
        .next_method("notifications/tools/list_changed", WAIT)
        .await
        .expect("list_changed");
    assert_eq!(
        note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        msg["id"]
    );
    let mut session = Client::open(&s.url, V1125).await;
    session
        .ok(
            "conform/mutate",
            json!({"action": "remove_tool", "name": "from_stateless"}),
        )
        .await;
    assert!(events
        .next_method("notifications/tools/list_changed", WAIT)
        .await
        .is_some());
}

async fn sigterm_ends_listen_streams_with_their_result() {
    let mut s = Served::start(&[]);
    let mut listener = Client::new(&s.url, V0728);
    let msg = listener.message(
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let mut req = listener.http.post(&s.url).json(&msg);
    for (k, v) in listener.headers_for(&msg) {
        req = req.header(k, v);
    }
    let mut events = Events::new(req.send().await.expect("listen"));
    assert!(events.next(WAIT).await.is_some(), "acknowledged");
    let session = Client::open(&s.url, V1125).await;
    let get = session.get_stream().await;
    // SAFETY: kill(2) on the child we spawned, by its pid.
    let rc = unsafe { libc::kill(s.child.id() as i32, libc::SIGTERM) };
    assert_eq!(rc, 0);
    let last = events.next(WAIT).await.expect("the listen result");
    assert_eq!(last["id"], msg["id"]);
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(
        last["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        msg["id"]
    );
    assert!(events.next(WAIT).await.is_none(), "then the stream ends");
    drop(get);
    let started = std::time::Instant::now();
    loop {
        if let Ok(Some(status)) = s.child.try_wait() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(started.elapsed() < WAIT, "the server exits after SIGTERM");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn the_session_cap_answers_503() {
    let s = Served::start(&["--max-sessions", "2"]);
    let a = Client::open(&s.url, V1125).await;
    let _b = Client::open(&s.url, V1125).await;
    let r = Client::new(&s.url, V1125)
        .post_raw(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": V1125}}),
            &[],
        )
        .await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(a.delete().await, StatusCode::NO_CONTENT);
    let _c = Client::open(&s.url, V1125).await;
}

fn harness(args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run the harness")
}

fn the_harness_passes_against_a_running_http_server() {
    let s = Served::start(&["--control"]);
    for version in ["auto", V1125, V0618] {
        let out = harness(&[
            "-q",
            "-p",
            "base",
            "--url",
            &s.url,
            "--protocol-version",
            version,
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{version}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn the_harness_launches_the_http_server_itself() {
    let port = crate::common::free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let addr = format!("127.0.0.1:{port}");
    let out = harness(&[
        "-q",
        "-p",
        "base",
        "--url",
        &url,
        "--",
        BIN,
        "serve-reference",
        "--control",
        "--http",
        &addr,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The launched server was stopped: the port is free again.
    std::thread::sleep(Duration::from_millis(300));
    assert!(std::net::TcpListener::bind(&addr).is_ok());
}

/// A Streamable HTTP server the run launched is stopped as a network
/// server is, with SIGTERM, not first given time to exit on a closed stdin
/// that it does not read (which held every such run half a second past
/// its report).
async fn a_launched_server_is_stopped_with_sigterm() {
    let target = crate::common::launch_http_reference(&[], Duration::from_secs(3)).await;
    // A grace far longer than a stop takes: waiting it out shows.
    let grace = Duration::from_secs(30);
    let asked = std::time::Instant::now();
    let how = target.stop_within(grace).await.unwrap_or_default();
    assert!(how.ends_with("after SIGTERM"), "the launched server {how}");
    assert!(
        asked.elapsed() < grace / 2,
        "the stop waited {:?} before its SIGTERM",
        asked.elapsed()
    );
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![the_harness_passes_against_a_running_http_server, the_harness_launches_the_http_server_itself; async initialize_issues_a_session_that_later_requests_need, delete_ends_the_session_and_unknown_ids_are_404, idle_sessions_expire, foreign_origins_are_forbidden, notifications_and_responses_get_202, malformed_oversized_and_unacceptable_posts, protocol_version_header_is_checked, a_mutation_answers_as_a_stream_and_reaches_other_sessions, concurrent_mutations_are_all_applied, progressive_disclosure_authorization_is_per_session, the_shared_auth_fault_still_leaks_across_http_sessions, rest_endpoints_equal_the_category_tools, stateless_requests_need_no_session_and_headers_must_match, listen_streams_hear_every_change, sigterm_ends_listen_streams_with_their_result, the_session_cap_answers_503, a_launched_server_is_stopped_with_sigterm]
}
