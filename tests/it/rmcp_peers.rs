//! The harness against MCP servers built with the official Rust SDK (rmcp):
//! `rmcp_peer plain` (fixtures/servers/rmcp_peer.rs: tools only) and `rmcp_peer ext` (rmcp_ext.rs: plus the
//! discovery extensions through rmcp's custom requests), over stdio and over
//! Streamable HTTP, with the whole built-in catalog.
//!
//! Every failure these servers have is listed, with the SDK behaviour behind
//! it and the rule it breaks, in fixtures/peers/rmcp-*.baseline.yaml; the run
//! must exit 0 against that baseline (a new failure or an entry that no
//! longer fails both exit 1), and no scenario may end in `error`, which
//! would mean the harness could not judge the server at all.

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

/// The rmcp peer's executable, built once for the four tests (each cargo
/// call takes its lock and reads the whole build plan, even as a no-op).
fn rmcp_peer() -> PathBuf {
    static EXE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    EXE.get_or_init(|| example("rmcp_peer")).clone()
}

/// Builds one example server with the cargo running these tests and returns
/// its executable. `cargo test` builds examples already (then this is a
/// no-op), `cargo test --test it rmcp_peers::` does not.
pub fn example(name: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "--example",
            name,
            "--message-format=json",
        ])
        .current_dir(common::root())
        .output()
        .unwrap_or_else(|e| panic!("cargo build --example {name}: {e}"));
    assert!(
        output.status.success(),
        "cargo build --example {name} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo named no executable for example {name}"))
}

enum Via {
    Stdio,
    /// With the protocol version to ask for (`None`: auto).
    Http(Option<&'static str>),
}

/// Runs the whole catalog against `server` with its baseline and returns the
/// JSON report after checking the exit code.
fn run(server: &str, via: Via) -> Value {
    let exe = rmcp_peer().display().to_string();
    let flavor = server.trim_start_matches("rmcp-").to_string();
    let label = match via {
        Via::Stdio => "stdio",
        Via::Http(_) => "http",
    };
    let dir = common::output_dir(&format!("rmcp_peers/{server}-{label}"));
    let mut options: Vec<String> = Vec::new();
    let mut command = vec![exe, flavor];
    if let Via::Http(version) = via {
        if let Some(version) = version {
            options.extend(["--protocol-version".into(), version.into()]);
        }
        let addr = format!("127.0.0.1:{}", common::free_port());
        options.extend(["--url".into(), format!("http://{addr}/mcp")]);
        command.extend(["--http".into(), addr]);
    }
    common::run_peer(server, &dir, &options, &command)
}

fn baseline_path(server: &str) -> PathBuf {
    common::root()
        .join("fixtures/peers")
        .join(format!("{server}.baseline.yaml"))
}

fn outcome<'a>(report: &'a Value, id: &str) -> &'a str {
    report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["id"] == id)
        .and_then(|s| s["outcome"].as_str())
        .unwrap_or_else(|| panic!("scenario {id} is not in the report"))
}

fn rmcp_plain_over_stdio() {
    let report = run("rmcp-plain", Via::Stdio);
    // No extension is declared: their profiles skip, never fail.
    assert_eq!(outcome(&report, "sep-1300/groups-list"), "skip");
    assert_eq!(
        outcome(&report, "search/missing-query-empty-params"),
        "skip"
    );
}

fn rmcp_plain_over_http() {
    let report = run("rmcp-plain", Via::Http(None));
    assert_eq!(outcome(&report, "sep-1300/groups-list"), "skip");
}

fn rmcp_ext_over_stdio() {
    let report = run("rmcp-ext", Via::Stdio);
    // The capabilities added to the serialized answer are seen: the search
    // profile runs, and its custom-request methods pass.
    assert_eq!(
        outcome(&report, "search/missing-query-empty-params"),
        "pass"
    );
}

fn rmcp_ext_over_http() {
    // 2025-11-25: rmcp answers a stateless (2026-07-28) server/discover over
    // HTTP from the handler's typed DiscoverResult, on no transport the
    // fixture can wrap, so there the extension capabilities are not declared
    // and their profiles would skip (see `Declaring` in rmcp_ext.rs). A
    // session of 2025-11-25 carries them.
    let report = run("rmcp-ext", Via::Http(Some("2025-11-25")));
    assert_eq!(
        outcome(&report, "search/missing-query-empty-params"),
        "pass"
    );
}

fn every_baseline_exists() {
    for server in ["rmcp-plain", "rmcp-ext"] {
        assert!(baseline_path(server).is_file(), "{server} has no baseline");
    }
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        rmcp_plain_over_stdio,
        rmcp_plain_over_http,
        rmcp_ext_over_stdio,
        rmcp_ext_over_http,
        every_baseline_exists
    ]
}
