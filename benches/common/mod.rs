//! What several benchmarks share: the echo server a bench binary becomes
//! when re-executed with `ECHO_SERVER=1`, and percentiles of sorted samples.
//! (Each bench is a crate of its own; this module is included by those that
//! use it, so not every item is used by every one of them.)
#![allow(dead_code)]

use std::io::{BufRead, Write};
use std::time::Duration;

/// The variable that makes a bench binary serve as the echo server.
pub const ECHO_SERVER: &str = "ECHO_SERVER";

/// When `ECHO_SERVER` is set: answers every line on stdin with an empty
/// result carrying the line's id (so the server's own time is near zero),
/// until stdin ends; returns whether it served.
pub fn serve_echo_if_asked() -> bool {
    if std::env::var_os(ECHO_SERVER).is_none() {
        return false;
    }
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let id = serde_json::from_str::<serde_json::Value>(&line)
            .ok()
            .and_then(|v| v.get("id").cloned())
            .unwrap_or(serde_json::Value::Null);
        let _ = writeln!(out, "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}");
        let _ = out.flush();
    }
    true
}

/// The `p` quantile (0 to 1) of `sorted`, nearest rank; zero when empty.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}
