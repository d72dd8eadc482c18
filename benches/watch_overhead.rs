//! What `mcp-conform watch` adds to each message, over stdio and over
//! Streamable HTTP: the same request/response round trips timed straight
//! to a server and through the proxy, p50 and p99 of each, and the
//! difference. Over stdio the server is an echo server (this binary,
//! re-executed with ECHO_SERVER=1), so the server's own time is near zero;
//! over HTTP it is the reference server's `ping`.
//! Run: `cargo bench --bench watch_overhead` (figures in reports/bench-watch.md).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::percentile;

const STDIO_ROUNDS: usize = 20_000;
const HTTP_ROUNDS: usize = 3_000;
const WARMUP: usize = 500;

fn stdio_round_trips(mut child: Child) -> Vec<Duration> {
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
    let mut stdout = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("stdout")));
    let mut times = Vec::with_capacity(STDIO_ROUNDS);
    let mut line = String::new();
    for i in 0..STDIO_ROUNDS + WARMUP {
        let msg = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}\n");
        let t = Instant::now();
        stdin
            .write_all(msg.as_bytes())
            .and_then(|_| stdin.flush())
            .unwrap_or_else(|e| panic!("write: {e}"));
        line.clear();
        stdout
            .read_line(&mut line)
            .unwrap_or_else(|e| panic!("read: {e}"));
        if i >= WARMUP {
            times.push(t.elapsed());
        }
    }
    drop(stdin);
    let _ = child.wait();
    times.sort();
    times
}

fn spawn(cmd: &mut Command) -> Child {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"))
}

fn report(name: &str, direct: &[Duration], watched: &[Duration]) {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let (d50, d99) = (us(percentile(direct, 0.5)), us(percentile(direct, 0.99)));
    let (w50, w99) = (us(percentile(watched, 0.5)), us(percentile(watched, 0.99)));
    println!(
        "{name}: round trip direct p50 {d50:.1} µs p99 {d99:.1} µs; through watch p50 {w50:.1} µs p99 {w99:.1} µs; added per round trip p50 {:.1} µs p99 {:.1} µs; per message (two a round trip) p50 {:.1} µs p99 {:.1} µs",
        w50 - d50,
        w99 - d99,
        (w50 - d50) / 2.0,
        (w99 - d99) / 2.0
    );
}

fn stdio(exe: &str, watch: &str) {
    let direct = stdio_round_trips(spawn(Command::new(exe).env(common::ECHO_SERVER, "1")));
    let watched = stdio_round_trips(spawn(
        Command::new(watch)
            .args(["watch", "-q", "--"])
            .arg(exe)
            .env(common::ECHO_SERVER, "1"),
    ));
    report("stdio", &direct, &watched);
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}

fn wait_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

async fn http_round_trips(url: &str) -> Vec<Duration> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let post = |body: String, session: Option<String>| {
        let mut req = client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(body);
        if let Some(s) = session {
            req = req.header("mcp-session-id", s);
        }
        req.send()
    };
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
    let answer = post(init.to_string(), None)
        .await
        .unwrap_or_else(|e| panic!("initialize: {e}"));
    let session = answer
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let _ = answer.bytes().await;
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let _ = post(note.to_string(), session.clone()).await;
    let mut times = Vec::with_capacity(HTTP_ROUNDS);
    for i in 1..=HTTP_ROUNDS + WARMUP {
        let body = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}");
        let t = Instant::now();
        let r = post(body, session.clone())
            .await
            .unwrap_or_else(|e| panic!("ping: {e}"));
        let _ = r.bytes().await.unwrap_or_else(|e| panic!("ping body: {e}"));
        if i > WARMUP {
            times.push(t.elapsed());
        }
    }
    times.sort();
    times
}

fn http(watch: &str) {
    let upstream = free_port();
    let mut server = Command::new(watch)
        .args([
            "serve-reference",
            "--http",
            &format!("127.0.0.1:{upstream}"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let listen = free_port();
    let mut proxy = Command::new(watch)
        .args(["watch", "-q", "--listen", &format!("127.0.0.1:{listen}")])
        .args(["--upstream", &format!("http://127.0.0.1:{upstream}/mcp")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    wait_port(upstream);
    wait_port(listen);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let direct = rt.block_on(http_round_trips(&format!(
        "http://127.0.0.1:{upstream}/mcp"
    )));
    let watched = rt.block_on(http_round_trips(&format!("http://127.0.0.1:{listen}/mcp")));
    report("streamable-http", &direct, &watched);
    let _ = proxy.kill();
    let _ = server.kill();
    let _ = proxy.wait();
    let _ = server.wait();
}

fn main() {
    if common::serve_echo_if_asked() {
        return;
    }
    let exe = std::env::current_exe()
        .unwrap_or_else(|e| panic!("{e}"))
        .display()
        .to_string();
    let watch = env!("CARGO_BIN_EXE_mcp-conform");
    stdio(&exe, watch);
    http(watch);
}
