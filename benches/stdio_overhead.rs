//! Harness overhead per request/response pair over stdio, measured against a
//! trivial echo server (this same binary, re-executed with ECHO_SERVER=1):
//! the raw pipe round trip (write a line, read a line) versus a full
//! `Session::request` (framing, JSON, id matching, transcript, channel hop).
//! Run: `cargo bench --bench stdio_overhead` (prints medians and p99s).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_conform::session::{Connection, Era, Session, Transcript};
use mcp_conform::transport::{StdioConnection, StdioSpec};

mod common;
use common::percentile;

const ROUNDS: usize = 20_000;
const WARMUP: usize = 1_000;

fn raw_round_trips(exe: &str) -> Vec<Duration> {
    let mut child = Command::new(exe)
        .env(common::ECHO_SERVER, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
    let mut stdout = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("stdout")));
    let mut times = Vec::with_capacity(ROUNDS);
    let mut line = String::new();
    for i in 0..ROUNDS + WARMUP {
        let msg = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}\n");
        let t = Instant::now();
        stdin
            .write_all(msg.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        stdin.flush().unwrap_or_else(|e| panic!("{e}"));
        line.clear();
        stdout
            .read_line(&mut line)
            .unwrap_or_else(|e| panic!("{e}"));
        if i >= WARMUP {
            times.push(t.elapsed());
        }
    }
    drop(stdin);
    let _ = child.wait();
    times
}

fn harness_round_trips(exe: &str) -> Vec<Duration> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    rt.block_on(async {
        let mut spec = StdioSpec::new(exe, vec![]);
        spec.env.push((common::ECHO_SERVER.into(), "1".into()));
        let conn = StdioConnection::spawn(&spec).unwrap_or_else(|e| panic!("{e}"));
        let mut session = Session::new(
            "bench",
            Connection::Stdio(Box::new(conn)),
            Era::new("2025-11-25"),
            Duration::from_secs(5),
            Transcript::new(),
        );
        let mut times = Vec::with_capacity(ROUNDS);
        for i in 0..ROUNDS + WARMUP {
            let t = Instant::now();
            session
                .request("ping", None, None, None)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            if i >= WARMUP {
                times.push(t.elapsed());
            }
        }
        session.close().await;
        times
    })
}

fn report(name: &str, mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort();
    let (p50, p99) = (percentile(&times, 0.5), percentile(&times, 0.99));
    println!(
        "{name:<28} median {:>8.1} µs   p99 {:>8.1} µs   ({} rounds)",
        p50.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6,
        times.len()
    );
    (p50, p99)
}

fn main() {
    if common::serve_echo_if_asked() {
        return;
    }
    let exe = std::env::current_exe()
        .unwrap_or_else(|e| panic!("{e}"))
        .display()
        .to_string();
    let (raw50, raw99) = report("raw pipe round trip", raw_round_trips(&exe));
    let (h50, h99) = report("harness Session::request", harness_round_trips(&exe));
    println!(
        "harness overhead: median {:.1} µs, p99 {:.1} µs (bar: median < 50 µs)",
        (h50.as_secs_f64() - raw50.as_secs_f64()) * 1e6,
        (h99.as_secs_f64() - raw99.as_secs_f64()) * 1e6
    );
}
