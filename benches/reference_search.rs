//! Reference-server performance: start-up, `tools/list?query` and
//! `tools/search` latency on 10k- and 100k-tool catalogs (in process,
//! response serialised as stdio would), the same over real pipes, and the
//! resident memory of a server holding 100k tools.
//!
//! `cargo bench --bench reference_search` (or scripts/bench-reference.sh).
//! Options: `--sizes 10000,100000`, `--rounds N`, `--catalog FILE` (start-up).

use mcp_conform::reference::catalog_gen;
use mcp_conform::reference::{load_catalog, Config, Server};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::percentile;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-conform");

struct Opts {
    sizes: Vec<usize>,
    rounds: usize,
    catalog: Option<PathBuf>,
}

fn opts() -> Opts {
    let mut o = Opts {
        sizes: vec![10_000, 100_000],
        rounds: 5,
        catalog: None,
    };
    let args: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i < args.len() {
        let next = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--sizes" => o.sizes = next.split(',').filter_map(|s| s.parse().ok()).collect(),
            "--rounds" => o.rounds = next.parse().unwrap_or(o.rounds),
            "--catalog" => o.catalog = Some(PathBuf::from(next)),
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    o
}

/// Realistic queries: verbs, entities, phrases, exact names, misses, and
/// one pathological single letter that matches most descriptions.
fn queries(server: &Server) -> Vec<String> {
    let mut q: Vec<String> = [
        "create page",
        "list tasks",
        "delete file permanently",
        "export summary as a file",
        "archive",
        "search",
        "tools for managing project milestones",
        "assign task to user",
        "share a document",
        "restore archived space",
        "webhook",
        "memory note",
        "bulk",
        "preview",
        "count comments",
        "lock template",
        "sync external source",
        "validate",
        "stable",
        "destructive",
        "read-only",
        "nonexistentword",
        "zzz qqq",
        "' OR 1=1--",
        ".*",
        "${jndi:x}",
        "a",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let snap = server.snapshot();
    let step = (snap.len() / 20).max(1);
    q.extend(snap.tools().step_by(step).map(|t| t.name.to_string()));
    q
}

fn report(label: &str, mut samples: Vec<Duration>) {
    samples.sort();
    println!(
        "| {label} | {} | {:.3} | {:.3} | {:.3} |",
        samples.len(),
        ms(percentile(&samples, 0.50)),
        ms(percentile(&samples, 0.99)),
        ms(*samples.last().unwrap_or(&Duration::ZERO)),
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn stateless(method: &str, params: Value) -> Value {
    let mut p = params;
    p["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": p})
}

/// A generated catalog file of `n` tools in the temp directory.
fn catalog_file(n: usize) -> PathBuf {
    let path = std::env::temp_dir().join(format!("mcp-conform-bench-{n}.json"));
    if !path.exists() {
        let ok = Command::new(BIN)
            .args(["serve-reference", "--catalog-gen", &n.to_string(), "--out"])
            .arg(&path)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(ok, "catalog generation failed");
    }
    path
}

fn in_process(n: usize, rounds: usize) {
    let path = catalog_file(n);
    // Loaded exactly as the binary loads it (parse, intern, trim).
    let t = Instant::now();
    let catalog = load_catalog(Some(&path)).expect("catalog loads");
    let server = Server::new(catalog, Config::default());
    let load = t.elapsed();
    let mut session = server.new_session();
    let t = Instant::now();
    let first = server.handle(
        &mut session,
        stateless("tools/list", json!({"query": "create page"})),
    );
    let warm = t.elapsed();
    assert!(first[0].get("result").is_some());
    println!("\n{n} tools: catalog file loaded + server built in {:.1} ms; first query (builds the index) {:.1} ms", ms(load), ms(warm));
    println!(
        "\n| {n} tools, in process | requests | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|"
    );
    let qs = queries(&server);
    for (label, method, make) in [
        (
            "tools/list + query",
            "tools/list",
            (|q: &str| json!({"query": q})) as fn(&str) -> Value,
        ),
        (
            "tools/list + query + filter",
            "tools/list",
            |q: &str| json!({"query": q, "filter": {"tags": ["stable"]}}),
        ),
        (
            "tools/search",
            "tools/search",
            |q: &str| json!({"query": q}),
        ),
    ] {
        let mut samples = Vec::new();
        for _ in 0..rounds {
            for q in &qs {
                let msg = stateless(method, make(q));
                let t = Instant::now();
                let out = server.handle(&mut session, msg);
                let bytes: usize = out
                    .iter()
                    .map(|m| serde_json::to_vec(m).map(|v| v.len()).unwrap_or(0))
                    .sum();
                samples.push(t.elapsed());
                std::hint::black_box(bytes);
            }
        }
        report(label, samples);
    }
    let mut samples = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let out = server.handle(&mut session, stateless("tools/list", json!({})));
        std::hint::black_box(serde_json::to_vec(&out[0]).map(|v| v.len()).unwrap_or(0));
        samples.push(t.elapsed());
    }
    report("tools/list, first page, no query", samples);
}

struct Child {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Child {
    fn spawn(catalog: Option<&Path>) -> Child {
        let mut cmd = Command::new(BIN);
        cmd.arg("serve-reference");
        if let Some(c) = catalog {
            cmd.arg("--catalog").arg(c);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Child {
            child,
            stdin,
            stdout,
        }
    }

    fn round_trip(&mut self, msg: &Value) -> Value {
        let mut line = msg.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).expect("write");
        self.stdin.flush().expect("flush");
        let mut out = String::new();
        self.stdout.read_line(&mut out).expect("read");
        serde_json::from_str(&out).expect("json")
    }

    fn status(&self, key: &str) -> String {
        let text = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        text.lines()
            .find(|l| l.starts_with(key))
            .map(|l| l[key.len()..].trim().to_string())
            .unwrap_or_else(|| "n/a".into())
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn startup(catalog: Option<&Path>, label: &str) {
    let mut samples = Vec::new();
    for _ in 0..30 {
        let t = Instant::now();
        let mut c = Child::spawn(catalog);
        let r = c.round_trip(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}}));
        samples.push(t.elapsed());
        assert!(r.get("result").is_some());
    }
    println!(
        "\n| start-up to first answer | runs | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|"
    );
    report(label, samples);
}

fn over_pipes(n: usize, rounds: usize) {
    let path = catalog_file(n);
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let t = Instant::now();
    let mut c = Child::spawn(Some(&path));
    c.round_trip(&stateless("server/discover", json!({})));
    let loaded = t.elapsed();
    let t = Instant::now();
    c.round_trip(&stateless("tools/list", json!({"query": "create page"})));
    let indexed = t.elapsed();
    println!(
        "\n{n} tools over stdio: catalog file {:.1} MB, start-up to first answer {:.0} ms, first query (index build) {:.0} ms",
        size as f64 / 1e6,
        ms(loaded),
        ms(indexed)
    );
    let server = Server::new(catalog_gen::generate(50, 1), Config::default());
    let mut qs = queries(&server);
    qs.truncate(27);
    println!("\n| {n} tools, over stdio pipes | requests | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|");
    for (label, method) in [
        ("tools/list + query", "tools/list"),
        ("tools/search", "tools/search"),
    ] {
        let mut samples = Vec::new();
        for _ in 0..rounds {
            for q in &qs {
                let t = Instant::now();
                let r = c.round_trip(&stateless(method, json!({"query": q})));
                samples.push(t.elapsed());
                assert!(r.get("result").is_some(), "{r}");
            }
        }
        report(label, samples);
    }
    println!(
        "\nmemory of the {n}-tool server after indexing: VmRSS {}, VmHWM (peak) {}",
        c.status("VmRSS:"),
        c.status("VmHWM:")
    );
}

fn main() {
    let o = opts();
    println!("# reference server benchmark ({} rounds)", o.rounds);
    startup(None, "embedded catalog");
    if let Some(c) = &o.catalog {
        startup(Some(c), &format!("--catalog {}", c.display()));
    }
    for &n in &o.sizes {
        in_process(n, o.rounds);
        over_pipes(n, o.rounds);
    }
}
