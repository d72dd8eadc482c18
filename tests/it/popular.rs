//! The whole catalog against popular MCP servers as their users install
//! them from npm and PyPI (scripts/install-peers.sh, versions pinned under
//! fixtures/peers/), each over stdio in its default configuration:
//! server-filesystem (on a scratch directory), server-memory,
//! server-sequential-thinking, mcp-server-time, mcp-server-fetch,
//! mcp-server-git (on a scratch repository) and a small fastmcp server.
//!
//! They guard against false failures. Every verdict, per scenario and era,
//! is committed under reports/peers/popular/; a verdict that changes fails
//! the trial with the difference. Every remaining failure must be a MUST
//! whose quoted text says MUST (or whose basis is written down), and every
//! warning a SHOULD. The scratch directory and repository must be unchanged
//! after the run: a conformance run never changes a user's data.
//!
//! With MCP_CONFORM_PEER_REPORTS=DIR the verdicts are written to
//! DIR/popular/ instead of compared (scripts/regenerate-peer-reports.sh).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common;
use crate::prereq::{self, Prereq};

/// What a popular server needs before it starts: nothing, a directory, or a
/// git repository (both scratch, and both checked unchanged afterwards).
#[derive(Clone, Copy)]
enum Data {
    None,
    Directory,
    Repository,
}

#[derive(Clone)]
struct Popular {
    name: &'static str,
    /// The launch command; `{data}` is replaced by the scratch directory.
    command: Vec<String>,
    env: Vec<(&'static str, String)>,
    data: Data,
    installed: PathBuf,
    /// `--call-budget-ms` for the run. A server whose tools only compute
    /// gets a budget no loaded machine reaches, so that its verdicts do
    /// not turn into "not exercised" under load; a server whose tools go
    /// out to the network keeps the default, as its users would.
    call_budget_ms: Option<u64>,
}

fn node_server(name: &'static str, package: &str, data: Data) -> Popular {
    let entry = common::root().join(format!(
        "target/peers/node/node_modules/@modelcontextprotocol/{package}/dist/index.js"
    ));
    let mut command = vec!["node".to_string(), entry.display().to_string()];
    if let Data::Directory = data {
        command.push("{data}".into());
    }
    Popular {
        name,
        command,
        env: Vec::new(),
        data,
        installed: entry,
        call_budget_ms: Some(LOCAL_CALL_BUDGET_MS),
    }
}

/// The call budget of servers whose tools work locally (see `call_budget_ms`).
const LOCAL_CALL_BUDGET_MS: u64 = 10_000;

fn python_server(name: &'static str, args: &[&str], data: Data) -> Popular {
    let python = common::root().join("target/peers/pyservers/bin/python");
    let mut command = vec![python.display().to_string()];
    command.extend(args.iter().map(|a| a.to_string()));
    Popular {
        name,
        command,
        env: Vec::new(),
        data,
        installed: python,
        call_budget_ms: Some(LOCAL_CALL_BUDGET_MS),
    }
}

fn servers() -> Vec<Popular> {
    let mut memory = node_server("server-memory", "server-memory", Data::Directory);
    // server-memory keeps its graph in a file beside its code unless told:
    // point it into the scratch directory (checked unchanged afterwards).
    memory.command.pop();
    memory
        .env
        .push(("MEMORY_FILE_PATH", "{data}/memory.jsonl".to_string()));
    let fastmcp = common::root().join("fixtures/peers/fastmcp_server.py");
    let mut fetch = python_server("mcp-server-fetch", &["-m", "mcp_server_fetch"], Data::None);
    fetch.call_budget_ms = None;
    vec![
        node_server("server-filesystem", "server-filesystem", Data::Directory),
        memory,
        node_server(
            "server-sequential-thinking",
            "server-sequential-thinking",
            Data::None,
        ),
        python_server("mcp-server-time", &["-m", "mcp_server_time"], Data::None),
        fetch,
        python_server(
            "mcp-server-git",
            &["-m", "mcp_server_git", "--repository", "{data}"],
            Data::Repository,
        ),
        python_server(
            "fastmcp-server",
            &[fastmcp.display().to_string().as_str()],
            Data::None,
        ),
    ]
}

fn available(server: &Popular) -> Result<(), String> {
    if server.installed.exists() {
        Ok(())
    } else {
        Err(format!(
            "{}: not installed (run scripts/install-peers.sh; it needs node/npm and python3)",
            server.name
        ))
    }
}

/// Every file under `dir` (the .git directory's included) with its bytes,
/// so that a change anywhere shows.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                files.insert(path.strip_prefix(dir).unwrap_or(&path).to_path_buf(), bytes);
            }
        }
    }
    files
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=mcp-conform",
            "-c",
            "user.email=test@mcp-conform.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("git {args:?}: {e}"));
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The scratch data a server works on: a directory with two files, or a
/// git repository with one commit.
fn prepare(server: &Popular) -> PathBuf {
    let dir = common::scratch_dir(&format!("popular-{}-data", server.name));
    match server.data {
        Data::None => {}
        Data::Directory => {
            std::fs::write(dir.join("notes.txt"), "a file the run must leave alone\n")
                .unwrap_or_else(|e| panic!("{e}"));
            std::fs::create_dir_all(dir.join("sub")).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(dir.join("sub/data.json"), "{\"keep\": true}\n")
                .unwrap_or_else(|e| panic!("{e}"));
        }
        Data::Repository => {
            git(&dir, &["init", "-q", "-b", "main"]);
            std::fs::write(dir.join("README.md"), "# scratch repository\n")
                .unwrap_or_else(|e| panic!("{e}"));
            git(&dir, &["add", "README.md"]);
            git(&dir, &["commit", "-q", "-m", "first"]);
        }
    }
    dir
}

/// "era scenario outcome" per line, sorted: the verdicts a change must not move.
fn verdicts(report: &Value) -> String {
    let mut lines: Vec<String> = report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            format!(
                "{} {} {}",
                s["era"].as_str().unwrap_or("-"),
                s["id"].as_str().unwrap_or_default(),
                s["outcome"].as_str().unwrap_or_default()
            )
        })
        .collect();
    lines.sort();
    lines.join("\n") + "\n"
}

/// A failure must rest on a MUST its text supports; a warning on a SHOULD.
fn graded_by_their_text(report: &Value) -> Vec<String> {
    let registry = mcp_conform::requirements::all().unwrap_or_else(|e| panic!("{e}"));
    let mut problems = Vec::new();
    for s in report["scenarios"].as_array().into_iter().flatten() {
        let outcome = s["outcome"].as_str().unwrap_or_default();
        let wanted = match outcome {
            "fail" => "MUST",
            "warn" => "SHOULD",
            _ => continue,
        };
        let id = s["id"].as_str().unwrap_or_default();
        let reqs: Vec<_> = s["requirements"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| registry.iter().find(|x| Some(x.id.as_str()) == r.as_str()))
            .collect();
        let supported = reqs
            .iter()
            .any(|r| r.level == wanted && !r.level_exceeds_text())
            || (outcome == "warn" && reqs.iter().any(|r| r.level == "MUST"));
        if !supported {
            problems.push(format!(
                "{id} ({}): {outcome} but no requirement of it is a {wanted} its text supports",
                s["era"]
            ));
        }
    }
    problems
}

fn check(server: Popular) {
    let data = prepare(&server);
    let before = snapshot(&data);
    let data_arg = data.display().to_string();
    let dir = common::output_dir(&format!("popular-{}", server.name));
    let mut options: Vec<String> = vec!["--timeout-ms".into(), "10000".into()];
    if let Some(budget) = server.call_budget_ms {
        options.push("--call-budget-ms".into());
        options.push(budget.to_string());
    }
    for (k, v) in &server.env {
        options.push("--env".into());
        options.push(format!("{k}={}", v.replace("{data}", &data_arg)));
    }
    let command: Vec<String> = server
        .command
        .iter()
        .map(|a| a.replace("{data}", &data_arg))
        .collect();
    let report = common::run_peer(server.name, &dir, &options, &command);
    let got = verdicts(&report);
    let problems = graded_by_their_text(&report);
    assert!(
        problems.is_empty(),
        "{}:\n{}",
        server.name,
        problems.join("\n")
    );
    assert_eq!(
        snapshot(&data),
        before,
        "{}: the run changed the server's data under {}",
        server.name,
        data.display()
    );
    let file = format!("{}.verdicts", server.name);
    if let Some(out) = std::env::var_os("MCP_CONFORM_PEER_REPORTS") {
        let out = PathBuf::from(out).join("popular");
        std::fs::create_dir_all(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
        std::fs::write(out.join(&file), &got).unwrap_or_else(|e| panic!("{e}"));
        return;
    }
    let committed = common::root().join("reports/peers/popular").join(&file);
    let committed_text = std::fs::read_to_string(&committed).unwrap_or_default();
    // An era the probe did not find this run (a Python server that starts
    // slowly on a loaded machine misses the probe's bounded server/discover
    // wait, and the run takes only its stateful eras) is compared no
    // further: said here, not failed. Verdicts in the eras both runs have
    // must agree.
    let eras_now: std::collections::BTreeSet<&str> =
        got.lines().filter_map(|l| l.split(' ').next()).collect();
    let expected: String = committed_text
        .lines()
        .filter(|l| l.split(' ').next().is_some_and(|e| eras_now.contains(e)))
        .map(|l| format!("{l}\n"))
        .collect();
    if expected.len() < committed_text.len() {
        eprintln!(
            "{}: this run did not negotiate every era of {}; compared the eras it did",
            server.name,
            committed.display()
        );
    }
    if got != expected {
        let diff = similar::TextDiff::from_lines(&expected, &got)
            .unified_diff()
            .header("committed", "this run")
            .to_string();
        panic!(
            "{}: verdicts differ from {} (scripts/regenerate-peer-reports.sh rewrites it once a change is judged right):\n{diff}",
            server.name,
            committed.display()
        );
    }
}

/// One trial per popular server.
pub fn trials() -> Vec<Trial> {
    servers()
        .into_iter()
        .map(|server| {
            let probe = server.clone();
            prereq::trial(
                format!("popular::{}", server.name.replace('-', "_")),
                Prereq::Peers,
                move || available(&probe),
                move || check(server),
            )
        })
        .collect()
}
