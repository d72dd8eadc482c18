//! The whole catalog against MCP servers nobody here wrote, installed from
//! package registries by scripts/install-peers.sh: the npm package
//! `@modelcontextprotocol/server-everything` (stdio and Streamable HTTP) and
//! a server built with the PyPI package `mcp` (fixtures/peers/).
//!
//! They implement none of the draft extensions, so every extension scenario
//! must skip with a reason (or pass, where it checks an absence such as
//! -32601 for an undeclared method), and the base and transport verdicts must
//! match the expected failures under fixtures/peers/, each of which names the
//! SDK behaviour and the rule it breaks. A new failure, or an expected one
//! that starts passing, fails the test.
//!
//! A peer that is not installed is reported as ignored with the reason,
//! unless the `peers` prerequisite is required (MCP_CONFORM_REQUIRE_PEERS=1;
//! CI requires it), then it fails.
//! With MCP_CONFORM_PEER_REPORTS=DIR the reports are also written to DIR
//! (scripts/regenerate-peer-reports.sh uses it for reports/peers/).

use std::path::PathBuf;

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common;
use crate::prereq::{self, Prereq};

/// Profiles whose rules the peers are expected to follow.
const BASE_PROFILES: &[&str] = &["base", "core", "transport-http"];

#[derive(Clone)]
enum Transport {
    Stdio,
    Http,
}

#[derive(Clone)]
struct Peer {
    name: &'static str,
    transport: Transport,
    /// The launch command; `{addr}` is replaced by the HTTP listen address.
    command: Vec<String>,
    /// Environment for the command; `{port}` is replaced by the HTTP port.
    env: Vec<(&'static str, &'static str)>,
    /// A file that exists once the peer is installed.
    installed: PathBuf,
}

fn everything(transport: Transport) -> Peer {
    let entry = common::root().join(
        "target/peers/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    let (name, mode, env) = match transport {
        Transport::Stdio => ("server-everything-stdio", "stdio", vec![]),
        Transport::Http => (
            "server-everything-http",
            "streamableHttp",
            vec![("PORT", "{port}")],
        ),
    };
    Peer {
        name,
        transport,
        command: vec!["node".into(), entry.display().to_string(), mode.into()],
        env,
        installed: entry,
    }
}

fn python_mcp(transport: Transport) -> Peer {
    let python = common::root().join("target/peers/python/bin/python");
    let script = common::root().join("fixtures/peers/python_mcp_server.py");
    let mut command = vec![python.display().to_string(), script.display().to_string()];
    let name = match transport {
        Transport::Stdio => "python-mcp-stdio",
        Transport::Http => {
            command.extend(["--http".to_string(), "{addr}".to_string()]);
            "python-mcp-http"
        }
    };
    Peer {
        name,
        transport,
        command,
        env: vec![],
        installed: common::root().join("target/peers/python/lib"),
    }
}

fn python_has_mcp(peer: &Peer) -> bool {
    std::process::Command::new(&peer.command[0])
        .args(["-c", "import mcp.server.mcpserver"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether the peer can run here, and if not why.
fn available(peer: &Peer) -> Result<(), String> {
    let ok = peer.installed.exists() && (!peer.name.starts_with("python") || python_has_mcp(peer));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{}: not installed (run scripts/install-peers.sh; it needs node/npm or python3)",
            peer.name
        ))
    }
}

/// Options before `--` and the command after it, with the HTTP address filled in.
fn invocation(peer: &Peer) -> (Vec<String>, Vec<String>) {
    let port = common::free_port();
    let addr = format!("127.0.0.1:{port}");
    // Interpreters start slowly on a loaded 2-core machine.
    let mut options: Vec<String> = vec!["--timeout-ms".into(), "10000".into()];
    for (k, v) in &peer.env {
        options.push("--env".into());
        options.push(format!("{k}={}", v.replace("{port}", &port.to_string())));
    }
    if let Transport::Http = peer.transport {
        options.push("--url".into());
        options.push(format!("http://{addr}/mcp"));
    }
    let command = peer
        .command
        .iter()
        .map(|a| a.replace("{addr}", &addr))
        .collect();
    (options, command)
}

fn outcomes(report: &Value) -> Vec<(String, String, String, String)> {
    report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let field = |k: &str| s[k].as_str().unwrap_or_default().to_string();
            (
                field("id"),
                field("profile"),
                field("outcome"),
                field("message"),
            )
        })
        .collect()
}

fn check_peer(peer: Peer) {
    let dir = match std::env::var_os("MCP_CONFORM_PEER_REPORTS") {
        Some(d) => {
            let d = PathBuf::from(d);
            std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
            d
        }
        None => common::output_dir(&format!("peers-{}", peer.name)),
    };
    let (options, command) = invocation(&peer);
    let report = common::run_peer(peer.name, &dir, &options, &command);
    let results = outcomes(&report);
    assert!(
        results.len() >= 120,
        "{}: {} scenarios",
        peer.name,
        results.len()
    );
    let mut problems = Vec::new();
    let mut extension_skips = 0;
    for (id, profile, outcome, message) in &results {
        if outcome == "skip" && message.trim().is_empty() {
            problems.push(format!("{id}: skipped without a reason"));
        }
        if !BASE_PROFILES.contains(&profile.as_str()) {
            match outcome.as_str() {
                "skip" => extension_skips += 1,
                "pass" => {}
                other => problems.push(format!(
                    "{id}: {other} on a server without the {profile} extension: {message}"
                )),
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{}:\n{}",
        peer.name,
        problems.join("\n")
    );
    assert!(
        extension_skips >= 100,
        "{}: only {extension_skips} extension scenarios skipped",
        peer.name
    );
}

/// One trial per peer; the four run at once where the test threads allow.
pub fn trials() -> Vec<Trial> {
    [
        ("server_everything_over_stdio", everything(Transport::Stdio)),
        ("server_everything_over_http", everything(Transport::Http)),
        ("python_mcp_server_over_stdio", python_mcp(Transport::Stdio)),
        ("python_mcp_server_over_http", python_mcp(Transport::Http)),
    ]
    .into_iter()
    .map(|(name, peer)| {
        let probe = peer.clone();
        prereq::trial(
            format!("peers::{name}"),
            Prereq::Peers,
            move || available(&probe),
            move || check_peer(peer),
        )
    })
    .chain(quality_trials())
    .chain(std::iter::once({
        let peer = everything(Transport::Stdio);
        let probe = peer.clone();
        prereq::trial(
            "peers::a_tool_that_outlasted_the_call_budget_is_not_called_again",
            Prereq::Peers,
            move || available(&probe),
            move || slow_tool_called_once(peer),
        )
    }))
    .collect()
}

/// server-everything's long-running tool outlasts a short call budget in
/// the first scenario that calls it; the next one does not wait it out
/// again, and says so. Both are "not exercised" (info) either way.
fn slow_tool_called_once(peer: Peer) {
    let (options, command) = invocation(&peer);
    let dir = common::scratch_dir("slow-tool");
    let json = dir.join("report.json");
    let json_arg = json.display().to_string();
    let mut args: Vec<&str> = vec!["-q", "-j", "1", "--call-budget-ms", "300"];
    args.extend([
        "--protocol-version",
        "2025-11-25",
        "--report-json",
        &json_arg,
    ]);
    args.extend(["-k", "core/tools-call", "-k", "core/tool-structured-text"]);
    args.extend(options.iter().map(String::as_str));
    args.push("--");
    args.extend(command.iter().map(String::as_str));
    let out = common::cli(&args);
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "no report ({e}): {}{}",
            common::text(&out.stdout),
            common::text(&out.stderr)
        )
    });
    let slow = "tool trigger-long-running-operation not exercised";
    let waited = text
        .matches(&format!("{slow}: did not answer within 0.3 s"))
        .count();
    let skipped = text
        .matches(&format!(
            "{slow}: it did not answer within 0.3 s (--call-budget-ms) in core/"
        ))
        .count();
    assert!(
        waited >= 1 && skipped >= 1,
        "waited {waited}, not called again {skipped}: {text}"
    );
}

/// `mcp-conform quality` on peers with no search surface: nothing to
/// measure, exit 0.
fn quality_trials() -> Vec<Trial> {
    [
        (
            "quality_nothing_to_measure_on_server_everything",
            everything(Transport::Stdio),
        ),
        (
            "quality_nothing_to_measure_on_python_mcp_server",
            python_mcp(Transport::Stdio),
        ),
    ]
    .into_iter()
    .map(|(name, peer)| {
        let probe = peer.clone();
        prereq::trial(
            format!("peers::{name}"),
            Prereq::Peers,
            move || available(&probe),
            move || quality_nothing_to_measure(peer),
        )
    })
    .collect()
}

fn quality_nothing_to_measure(peer: Peer) {
    let (options, command) = invocation(&peer);
    let mut args: Vec<&str> = vec!["quality"];
    args.extend(options.iter().map(String::as_str));
    args.push("--");
    args.extend(command.iter().map(String::as_str));
    let out = common::cli(&args);
    let stdout = common::text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}: {stdout}{}",
        peer.name,
        common::text(&out.stderr)
    );
    assert!(
        stdout.contains("nothing to measure"),
        "{}: {stdout}",
        peer.name
    );
    assert!(
        stdout.contains("tools/search: capabilities.tools.search is not true"),
        "{stdout}"
    );
}
