//! The built-in catalog compiles while the server starts
//! (`Catalog::loading`): a run awaits it once the server is probed. A
//! catalog that never arrives ends the run as not run, with every server
//! the probe started stopped; one that arrives late runs as if it had been
//! there from the start. Through the CLI, the user's own mistakes (a broken
//! scenario file, a broken baseline) still stop the run before any server
//! starts, selection flags or not.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use libtest_mimic::Trial;
use mcp_conform::run::catalog_run::{run_catalog, Catalog, RunOptions};
use mcp_conform::run::events::Event;
use mcp_conform::run::probe::EraChoice;
use mcp_conform::run::{RunPolicy, Target, Verdict};
use mcp_conform::transport::stdio::StdioSpec;

use crate::common;

/// The reference server behind a shell that stays its parent, so that
/// `marker` on the shell's command line finds whatever a run leaves.
fn marked_reference(marker: &str) -> Target {
    Target::Stdio(StdioSpec::new(
        "sh",
        vec![
            "-c".into(),
            "\"$0\" serve-reference; : \"$1\"".into(),
            common::bin().into(),
            marker.into(),
        ],
    ))
}

/// Processes whose command line carries `marker` after up to `wait`
/// (servers are stopped in the background); any left are killed.
fn left_after(marker: &str, wait: Duration) -> String {
    let pgrep = || {
        Command::new("pgrep")
            .args(["-f", marker])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    };
    let until = Instant::now() + wait;
    let mut left = pgrep();
    while !left.is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
        left = pgrep();
    }
    if !left.is_empty() {
        let _ = Command::new("pkill").args(["-9", "-f", marker]).status();
    }
    left
}

fn options() -> RunOptions {
    RunOptions::new(EraChoice::All, Duration::from_secs(5), 4)
}

fn a_catalog_that_never_arrives_ends_the_run_not_run_with_its_servers_stopped() {
    if !Path::new("/bin/sh").exists() || Command::new("pgrep").arg("-V").output().is_err() {
        panic!("needs sh and pgrep");
    }
    let marker = format!("mcp-conform-catalog-loading-{}", std::process::id());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"));
    let mut events = Vec::new();
    let catalog = Catalog::loading(async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        Err("the built-in scenarios did not load: broken on purpose".to_string())
    });
    let outcome = rt.block_on(run_catalog(
        marked_reference(&marker),
        catalog,
        &options(),
        &RunPolicy::default(),
        |e| events.push(e),
    ));
    let err = outcome.err().map(|e| e.message).unwrap_or_default();
    assert!(err.contains("broken on purpose"), "{err:?}");
    let verdict = events.iter().find_map(|e| match e {
        Event::Done(summary) => summary.verdict.clone(),
        _ => None,
    });
    assert!(
        matches!(&verdict, Some(Verdict::NotRun { reason }) if reason.contains("broken on purpose")),
        "{verdict:?}"
    );
    let left = rt.block_on(async {
        tokio::task::spawn_blocking(move || left_after(&marker, Duration::from_secs(5)))
            .await
            .unwrap_or_default()
    });
    assert!(left.is_empty(), "probe servers left running: {left}");
}

fn a_catalog_that_arrives_late_runs_as_one_given_at_once() {
    let scenarios: Vec<_> = mcp_conform::builtin::scenarios()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .filter(|s| s.id.starts_with("base/"))
        .collect();
    let run = |catalog: Catalog| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("tokio runtime: {e}"));
        let results = rt
            .block_on(run_catalog(
                common::reference_server(&[]),
                catalog,
                &options(),
                &RunPolicy::default(),
                |_| {},
            ))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut verdicts: Vec<String> = results
            .iter()
            .map(|r| format!("{} {} {:?}", r.id, r.era, r.outcome))
            .collect();
        verdicts.sort();
        verdicts
    };
    let given = run(scenarios.clone().into());
    let late = scenarios.clone();
    let arriving = run(Catalog::loading(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        Ok(late)
    }));
    assert!(given.len() >= scenarios.len(), "{given:?}");
    assert_eq!(given, arriving);
}

/// A server that leaves a file behind when it starts.
fn marking_server(marker: &Path) -> Vec<String> {
    vec![
        "--".into(),
        "sh".into(),
        "-c".into(),
        format!("touch '{}'; exec cat", marker.display()),
    ]
}

fn the_users_mistakes_stop_the_run_before_its_server_starts() {
    let dir = std::env::temp_dir().join(format!("mcp-conform-early-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let marker = dir.join("started");
    // Two of the user's files that give one id (a built-in one): which
    // should run is the user's to say.
    let twice = ["a", "b"].map(|sub| {
        let file = dir.join(sub).join("ping.yaml");
        std::fs::create_dir_all(dir.join(sub)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&file, "id: core/ping\ntitle: mine\nprofile: core\nlevel: MUST\nrequirements: []\nsteps:\n  - request: ping\n")
            .unwrap_or_else(|e| panic!("{e}"));
        file.display().to_string()
    });
    let cases: [&[&str]; 5] = [
        &["--scenarios", "fixtures/bad-scenarios"],
        &["--scenarios", "fixtures/bad-scenarios", "-p", "base"],
        &["--baseline", "fixtures/bad-scenarios/bad-baseline.yaml"],
        &["-k", "no-such-scenario-anywhere"],
        &["--scenarios", &twice[0], "--scenarios", &twice[1]],
    ];
    for args in cases {
        let mut argv: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        argv.extend(marking_server(&marker));
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let out = common::run_cli(&argv);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !marker.exists(),
            "{args:?} started the server before refusing: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn a_users_scenario_replaces_a_builtin_one_when_the_catalog_compiles_late() {
    let dir = std::env::temp_dir().join(format!("mcp-conform-replace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let file = dir.join("ping.yaml");
    let body = "id: core/ping\ntitle: replaced\nprofile: core\nlevel: MUST\nrequirements: []\nisolation: shared\neras: [2025-11-25]\nsteps:\n  - request: ping\n    expect: { result: { mcp-conform-never: true } }\n";
    std::fs::write(&file, body).unwrap_or_else(|e| panic!("{e}"));
    let json = dir.join("report.json");
    let f = file.display().to_string();
    let j = json.display().to_string();
    let out = common::run_cli(&["-q", "--scenarios", &f, "--report-json", &j]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("replaces the built-in scenario core/ping"),
        "{stderr}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let ping: Vec<&serde_json::Value> = report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["id"] == "core/ping")
        .collect();
    assert!(!ping.is_empty(), "core/ping did not run");
    for s in &ping {
        assert_eq!(s["title"], "replaced");
    }
    // The replacement expects what no pong has: it fails where it runs.
    assert!(
        ping.iter()
            .any(|s| s["era"] == "2025-11-25" && s["outcome"] == "fail"),
        "{ping:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

pub fn trials() -> Vec<Trial> {
    trials![
        a_catalog_that_never_arrives_ends_the_run_not_run_with_its_servers_stopped,
        a_catalog_that_arrives_late_runs_as_one_given_at_once,
        the_users_mistakes_stop_the_run_before_its_server_starts,
        a_users_scenario_replaces_a_builtin_one_when_the_catalog_compiles_late
    ]
}
