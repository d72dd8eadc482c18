//! Load generator for the reference server over Streamable HTTP
//! (`serve-reference --http`), run in its own process against the server
//! binary. Two measurements, printed as Markdown:
//!
//! 1. Throughput and latency: `--sessions` stateful sessions (default 32),
//!    each sending `tools/list` with a `query` back to back for
//!    `--seconds` (default 10), over its own keep-alive connection.
//! 2. Many sessions: `--idle-sessions` (default 1000) sessions open at once,
//!    each with an open GET stream and its own progressive-disclosure
//!    authorization (a different tool each); the server's resident memory
//!    is read from /proc, then every session is checked to call only its
//!    own tool.
//!
//! `cargo bench --bench http_load -- [--sessions N] [--seconds S] [--ping] [--rate N]
//! [--idle-sessions N] [--only load|sessions] [--url URL]`; with `--url`
//! the load phase targets an already running server (and memory is not
//! read). scripts/bench-http.sh runs it; reports/bench-reference-http.md
//! records a run.

use futures::StreamExt;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-conform");
const VERSION: &str = "2025-11-25";
const QUERIES: &[&str] = &[
    "create page",
    "assign task",
    "comment",
    "export",
    "invite user",
    "approval",
    "memory",
    "task_create",
    "search pages",
    "workspace members",
];

struct Options {
    url: Option<String>,
    sessions: usize,
    seconds: u64,
    idle_sessions: usize,
    only: Option<String>,
    client_threads: usize,
    /// Send `ping` instead of `tools/list`: the transport's own cost.
    ping: bool,
    /// Total requests per second to offer (spread over the sessions); 0 =
    /// as fast as answers come back.
    rate: u64,
}

fn options() -> Options {
    let mut o = Options {
        url: None,
        sessions: 32,
        seconds: 10,
        idle_sessions: 1000,
        only: None,
        client_threads: 2,
        ping: false,
        rate: 0,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        let number = || value.parse::<u64>().unwrap_or_else(|_| usage(&args[i]));
        match args[i].as_str() {
            "--url" => o.url = Some(value.clone()),
            "--sessions" => o.sessions = number() as usize,
            "--seconds" => o.seconds = number(),
            "--idle-sessions" => o.idle_sessions = number() as usize,
            "--client-threads" => o.client_threads = number().max(1) as usize,
            "--only" => o.only = Some(value.clone()),
            "--rate" => o.rate = number(),
            "--ping" => {
                o.ping = true;
                i += 1;
                continue;
            }
            // cargo bench passes --bench; ignore flags we do not know.
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    o
}

fn usage(flag: &str) -> ! {
    eprintln!("http_load: {flag} needs a number");
    std::process::exit(2)
}

/// A server started for the benchmark; killed on drop.
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
            .expect("spawn the server");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("the server printed its address")
                .expect("stderr");
            if let Some(url) = line.strip_prefix("listening on ") {
                break url.to_string();
            }
        };
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || for _ in lines {});
        Served { child, url }
    }

    fn rss_kib(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
    next: u64,
}

impl Session {
    async fn open(url: &str) -> Result<Session, String> {
        // One client per session: its own connection pool, like a separate client.
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .build()
            .map_err(|e| e.to_string())?;
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {},
            "clientInfo": {"name": "http_load", "version": "1"}}});
        let r = http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init.to_string())
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let id = r
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .ok_or("no Mcp-Session-Id")?
            .to_string();
        r.bytes().await.map_err(|e| e.to_string())?;
        let mut s = Session {
            http,
            url: url.to_string(),
            id,
            next: 1,
        };
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = s.post(&note.to_string()).await?;
        if r.0 != 202 {
            return Err(format!("notifications/initialized got {}", r.0));
        }
        Ok(s)
    }

    async fn post(&mut self, body: &str) -> Result<(u16, bytes::Bytes), String> {
        let r = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", VERSION)
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = r.status().as_u16();
        let bytes = r.bytes().await.map_err(|e| e.to_string())?;
        Ok((status, bytes))
    }

    async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        let (status, bytes) = self.post(&msg.to_string()).await?;
        if status != 200 {
            return Err(format!("{method}: HTTP {status}"));
        }
        // An answer with notifications is an SSE stream; the response is its
        // last event.
        let text = String::from_utf8_lossy(&bytes);
        let json = text
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap_or(&text);
        serde_json::from_str(json).map_err(|e| format!("{method}: {e}"))
    }

    async fn get_stream(&self) -> Result<reqwest::Response, String> {
        let r = self
            .http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", VERSION)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if r.status() != 200 {
            return Err(format!("GET: HTTP {}", r.status()));
        }
        Ok(r)
    }
}

/// A cheap check that a body is the success response to request `id`:
/// the server writes `{"jsonrpc":"2.0","id":N,"result":...`. Every 64th
/// body is parsed in full as well.
fn is_success(bytes: &[u8], id: u64, full: bool) -> bool {
    let prefix = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{");
    if !bytes.starts_with(prefix.as_bytes()) {
        return false;
    }
    !full
        || serde_json::from_slice::<Value>(bytes)
            .is_ok_and(|v| v["result"]["tools"].is_array() && v.get("error").is_none())
}

#[derive(Default)]
struct Tally {
    micros: Vec<u32>,
    errors: u64,
    first_error: Option<String>,
    bytes: u64,
}

/// A bare HTTP/1.1 keep-alive connection for the measured requests: on a
/// 2-core machine every microsecond the load generator spends is taken from
/// the server, so the hot loop writes requests and parses answers by hand
/// (reqwest costs several times more CPU per request).
struct RawConn {
    stream: tokio::net::TcpStream,
    head: String,
    buf: Vec<u8>,
}

impl RawConn {
    async fn connect(url: &str, session: &str) -> Result<RawConn, String> {
        let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let path = if path.is_empty() { "/" } else { path };
        let stream = tokio::net::TcpStream::connect(authority)
            .await
            .map_err(|e| e.to_string())?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let head = format!(
            "POST {path} HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\nmcp-session-id: {session}\r\n\
             mcp-protocol-version: {VERSION}\r\ncontent-length: "
        );
        Ok(RawConn {
            stream,
            head,
            buf: Vec::with_capacity(64 * 1024),
        })
    }

    /// POSTs `body`; the status and the body of the answer, which must have
    /// a Content-Length (the server sends one for every JSON answer).
    async fn post(&mut self, body: &str) -> Result<(u16, &[u8]), String> {
        use tokio::io::AsyncWriteExt;
        let request = format!("{}{}\r\n\r\n{body}", self.head, body.len());
        self.stream
            .write_all(request.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        self.buf.clear();
        let (status, start, len) = loop {
            if let Some(end) = find(&self.buf, b"\r\n\r\n") {
                let head = std::str::from_utf8(&self.buf[..end]).map_err(|e| e.to_string())?;
                let status = head
                    .get(9..12)
                    .and_then(|s| s.parse::<u16>().ok())
                    .ok_or("bad status line")?;
                let len = head
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())?
                    })
                    .ok_or("answer without content-length")?;
                break (status, end + 4, len);
            }
            self.fill().await?;
        };
        while self.buf.len() < start + len {
            self.fill().await?;
        }
        Ok((status, &self.buf[start..start + len]))
    }

    async fn fill(&mut self) -> Result<(), String> {
        use tokio::io::AsyncReadExt;
        let mut chunk = [0u8; 16 * 1024];
        let n = self
            .stream
            .read(&mut chunk)
            .await
            .map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("connection closed".into());
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Sends requests until `until`: back to back, or (with `interval`) on a
/// fixed schedule, each latency counted from its scheduled time so a slow
/// answer also counts against the requests it delayed (no coordinated
/// omission).
async fn hammer(
    mut s: Session,
    worker: usize,
    until: Instant,
    ping: bool,
    interval: Option<Duration>,
) -> Tally {
    let mut t = Tally::default();
    let mut n = worker;
    // Workers start staggered, so the schedule is even rather than bursts
    // of one request per session at a time.
    let mut scheduled = Instant::now()
        + interval.map_or(Duration::ZERO, |every| {
            every.mul_f64((worker % 32) as f64 / 32.0)
        });
    let mut conn = match RawConn::connect(&s.url, &s.id).await {
        Ok(c) => c,
        Err(e) => {
            t.errors += 1;
            t.first_error = Some(e);
            return t;
        }
    };
    while Instant::now() < until {
        let q = QUERIES[n % QUERIES.len()];
        n += 1;
        s.next += 1;
        let id = s.next;
        let body = if ping {
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}")
        } else {
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\",\"params\":{{\"query\":\"{q}\"}}}}"
            )
        };
        let started = match interval {
            Some(every) => {
                scheduled += every;
                tokio::time::sleep_until(scheduled.into()).await;
                scheduled
            }
            None => Instant::now(),
        };
        let outcome = conn.post(&body).await;
        let took = started.elapsed();
        match outcome {
            Ok((200, bytes)) if is_success(bytes, id, !ping && n.is_multiple_of(64)) => {
                t.bytes += bytes.len() as u64;
                t.micros.push(took.as_micros().min(u32::MAX as u128) as u32);
            }
            Ok((status, bytes)) => {
                t.errors += 1;
                t.first_error.get_or_insert_with(|| {
                    format!(
                        "HTTP {status}: {}",
                        String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
                    )
                });
            }
            Err(e) => {
                t.errors += 1;
                t.first_error.get_or_insert(e);
                // The connection is in an unknown state: start a new one.
                match RawConn::connect(&s.url, &s.id).await {
                    Ok(c) => conn = c,
                    Err(_) => break,
                }
            }
        }
    }
    t
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64 / 1000.0
}

async fn load(o: &Options) {
    let served = match &o.url {
        Some(_) => None,
        None => Some(Served::start(&[])),
    };
    let url = o
        .url
        .clone()
        .or_else(|| served.as_ref().map(|s| s.url.clone()))
        .unwrap_or_default();
    let mut sessions = Vec::new();
    for _ in 0..o.sessions {
        sessions.push(Session::open(&url).await.expect("open a session"));
    }
    // Warm-up: connections, allocator, the search index.
    for s in sessions.iter_mut() {
        for q in QUERIES {
            s.request("tools/list", json!({"query": q}))
                .await
                .expect("warm-up request");
        }
    }
    let rss_before = served.as_ref().map(Served::rss_kib);
    let interval = (o.rate > 0).then(|| Duration::from_secs_f64(o.sessions as f64 / o.rate as f64));
    let started = Instant::now();
    let until = started + Duration::from_secs(o.seconds);
    let tasks: Vec<_> = sessions
        .into_iter()
        .enumerate()
        .map(|(i, s)| tokio::spawn(hammer(s, i, until, o.ping, interval)))
        .collect();
    let mut all = Tally::default();
    for t in tasks {
        let t = t.await.expect("worker");
        all.micros.extend(t.micros);
        all.errors += t.errors;
        all.bytes += t.bytes;
        if all.first_error.is_none() {
            all.first_error = t.first_error;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let rss_after = served.as_ref().map(Served::rss_kib);
    all.micros.sort_unstable();
    let ok = all.micros.len();
    let what = if o.ping { "ping" } else { "tools/list + query" };
    let pace = if o.rate > 0 {
        format!("offered at {} requests/s", o.rate)
    } else {
        "as fast as answered".to_string()
    };
    println!(
        "## {what}, {} sessions, {pace}, {:.1} s\n",
        o.sessions, elapsed
    );
    println!("| metric | value |\n|---|---|");
    println!("| requests answered | {ok} |");
    println!("| errors | {} |", all.errors);
    println!("| throughput | {:.0} requests/s |", ok as f64 / elapsed);
    println!(
        "| mean response body | {:.1} KiB |",
        all.bytes as f64 / ok.max(1) as f64 / 1024.0
    );
    for (name, p) in [("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99.9", 99.9)] {
        println!("| latency {name} | {:.2} ms |", percentile(&all.micros, p));
    }
    println!(
        "| latency max | {:.2} ms |",
        all.micros.last().copied().unwrap_or(0) as f64 / 1000.0
    );
    if let (Some((rss0, _)), Some((rss1, hwm))) = (rss_before, rss_after) {
        println!(
            "| server RSS before / after / peak | {:.1} / {:.1} / {:.1} MiB |",
            rss0 as f64 / 1024.0,
            rss1 as f64 / 1024.0,
            hwm as f64 / 1024.0
        );
    }
    if let Some(e) = &all.first_error {
        println!("\nfirst error: {e}");
    }
    println!();
}

async fn many_sessions(o: &Options) {
    let n = o.idle_sessions;
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let _ = std::fs::create_dir_all(dir);
    let tools = n.max(200) + 10;
    let catalog = dir.join(format!("http-load-{tools}.json"));
    if !catalog.exists() {
        let status = Command::new(BIN)
            .args([
                "serve-reference",
                "--catalog-gen",
                &tools.to_string(),
                "--out",
            ])
            .arg(&catalog)
            .status()
            .expect("generate a catalog");
        assert!(status.success());
    }
    let served = Served::start(&[
        "--control",
        "--catalog",
        &catalog.display().to_string(),
        "--max-sessions",
        &(n + 10).to_string(),
    ]);
    let url = served.url.clone();
    let (rss_start, _) = served.rss_kib();

    // Tool names, in catalog order, from the server itself.
    let mut probe = Session::open(&url).await.expect("probe session");
    let mut names: Vec<String> = Vec::new();
    let mut cursor: Option<Value> = None;
    loop {
        let params = cursor.take().map_or(json!({}), |c| json!({"cursor": c}));
        let page = probe.request("tools/list", params).await.expect("list");
        for t in page["result"]["tools"].as_array().into_iter().flatten() {
            names.extend(t["name"].as_str().map(String::from));
        }
        match page["result"].get("nextCursor") {
            Some(c) => cursor = Some(c.clone()),
            None => break,
        }
    }
    assert!(names.len() > n, "need more tools than sessions");
    let names = Arc::new(names);

    let started = Instant::now();
    let sem = Arc::new(tokio::sync::Semaphore::new(64));
    let mut opening = Vec::new();
    for i in 0..n {
        let (url, names, sem) = (url.clone(), Arc::clone(&names), Arc::clone(&sem));
        opening.push(tokio::spawn(async move {
            let _permit = sem.acquire().await.expect("semaphore");
            let mut s = Session::open(&url).await?;
            let stream = s.get_stream().await?;
            let uri = format!("resource:///tool_descriptions?tools={}", names[i]);
            let read = s.request("resources/read", json!({"uri": uri})).await?;
            if read.get("result").is_none() {
                return Err(format!("read failed: {read}"));
            }
            Ok::<_, String>((s, stream))
        }));
    }
    let mut open = Vec::new();
    for t in opening {
        open.push(t.await.expect("task").expect("session opened"));
    }
    let open_secs = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (rss_open, _) = served.rss_kib();

    // Each session may call its own tool and not its neighbour's.
    let mut leaks = 0;
    let mut denied_own = 0;
    let mut checking = Vec::new();
    for (i, (mut s, stream)) in open.into_iter().enumerate() {
        let names = Arc::clone(&names);
        let sem = Arc::clone(&sem);
        checking.push(tokio::spawn(async move {
            let _permit = sem.acquire().await.expect("semaphore");
            let call = |name: &str| json!({"name": name, "arguments": {}});
            let own = s.request("tools/call", call(&names[i])).await?;
            let other = s.request("tools/call", call(&names[i + 1])).await?;
            let code = |v: &Value| v.pointer("/error/code").and_then(Value::as_i64);
            Ok::<_, String>((
                code(&own) == Some(-32010),
                code(&other) != Some(-32010),
                s,
                stream,
            ))
        }));
    }
    let mut keep = Vec::new();
    for t in checking {
        let (own_denied, leaked, s, stream) = t.await.expect("task").expect("check");
        denied_own += own_denied as usize;
        leaks += leaked as usize;
        keep.push((s, stream));
    }
    let (rss_end, hwm) = served.rss_kib();

    // One catalog change reaches every open GET stream.
    let fanout_started = Instant::now();
    let waiting: Vec<_> = keep
        .into_iter()
        .map(|(s, stream)| {
            tokio::spawn(async move {
                let mut events = sse_stream::SseByteStream::new(stream.bytes_stream());
                let heard = tokio::time::timeout(Duration::from_secs(10), async {
                    while let Some(Ok(e)) = events.next().await {
                        if e.data.is_some_and(|d| d.contains("tools/list_changed")) {
                            return true;
                        }
                    }
                    false
                })
                .await
                .unwrap_or(false);
                drop(s);
                heard
            })
        })
        .collect();
    let added = json!({"name": "zz_added", "description": "Added by the benchmark.",
        "inputSchema": {"type": "object"}});
    probe
        .request(
            "conform/mutate",
            json!({"action": "add_tool", "tool": added}),
        )
        .await
        .expect("mutate");
    let mut heard = 0;
    for w in waiting {
        heard += w.await.expect("listener") as usize;
    }
    let fanout_secs = fanout_started.elapsed().as_secs_f64();

    println!("## {n} sessions open at once (each with a GET stream)\n");
    println!("| metric | value |\n|---|---|");
    println!("| catalog | {} tools (generated) |", names.len());
    println!("| time to open, authorize, stream | {open_secs:.2} s |");
    println!(
        "| server RSS at start | {:.1} MiB |",
        rss_start as f64 / 1024.0
    );
    println!(
        "| server RSS with {n} sessions | {:.1} MiB |",
        rss_open as f64 / 1024.0
    );
    println!(
        "| server RSS after the checks / peak | {:.1} / {:.1} MiB |",
        rss_end as f64 / 1024.0,
        hwm as f64 / 1024.0
    );
    println!("| sessions denied their own tool | {denied_own} |");
    println!("| sessions allowed another session's tool | {leaks} |");
    println!("| GET streams that heard one tools/list_changed | {heard} of {n}, all within {fanout_secs:.2} s |");
    println!();
    if denied_own + leaks > 0 || heard != n {
        eprintln!("http_load: authorization isolation or fan-out FAILED");
        std::process::exit(1);
    }
}

fn main() {
    let o = options();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(o.client_threads)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        if o.only.as_deref() != Some("sessions") {
            load(&o).await;
        }
        if o.only.as_deref() != Some("load") && o.url.is_none() {
            many_sessions(&o).await;
        }
    });
}
