//! Honest gates: a run never passes having tested nothing, the launched
//! server is the one answering, every era the server speaks is tested, a
//! server that cannot start is one short message, usage errors are usage
//! errors, and the last line states what the exit code encodes. Each test
//! drives the real binary.

use crate::common;
use crate::common::{cli as mcp_conform, text};

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

fn last_line(out: &Output) -> String {
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    all.lines()
        .rfind(|l| l.starts_with("conformance result:"))
        .unwrap_or("")
        .to_string()
}

/// Removes what changes from run to run: durations and absolute paths.
fn redact(s: &str) -> String {
    let s = s.replace(&common::root().display().to_string(), "[ROOT]");
    let s = s.replace(common::bin(), "[BIN]");
    let re = regex::Regex::new(r"finished in [0-9.]+s").unwrap_or_else(|e| panic!("{e}"));
    re.replace_all(&s, "finished in [TIME]").into_owned()
}

// 1. Nothing selected is not a pass.

fn an_unknown_profile_is_a_usage_error_naming_the_valid_ones() {
    let out = mcp_conform(&["-p", "nosuchprofile"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!("unknown_profile", text(&out.stderr));
    let out = mcp_conform(&["-p", "SEP-1300"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("did you mean sep-1300?"),
        "{}",
        text(&out.stderr)
    );
}

fn a_filter_that_matches_nothing_is_a_usage_error() {
    let out = mcp_conform(&["-k", "sep-1300/*-any"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!("filter_matches_nothing", text(&out.stderr));
    let out = mcp_conform(&["-p", "base", "--skip", "base/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--skip base/ excludes every selected scenario"));
}

fn filters_take_requirement_ids_and_skip_excludes() {
    let out = mcp_conform(&["--list", "-k", "BASE-ERR-02"]);
    assert_eq!(out.status.code(), Some(0));
    let listed = text(&out.stdout);
    assert!(listed.contains("base/bad-params-type"), "{listed}");
    assert!(listed.ends_with("1 scenarios\n"), "{listed}");
    let all = mcp_conform(&["--list", "--json", "-p", "base"]);
    let skipped = mcp_conform(&["--list", "--json", "-p", "base", "--skip", "base/id-*"]);
    let count = |o: &Output| {
        serde_json::from_slice::<Value>(&o.stdout)
            .unwrap_or_else(|e| panic!("--list --json: {e}"))
            .as_array()
            .map_or(0, Vec::len)
    };
    let ids = mcp_conform(&["--list", "--json", "-k", "base/id-*"]);
    assert!(count(&ids) >= 3);
    assert_eq!(count(&skipped), count(&all) - count(&ids));
}

fn list_json_and_list_profiles_describe_the_catalog() {
    let out = mcp_conform(&["--list", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let items: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"));
    let first = &items[0];
    for key in ["id", "profile", "level", "title", "requirements", "eras"] {
        assert!(first.get(key).is_some(), "no {key} in {first}");
    }
    let out = mcp_conform(&["--list-profiles", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let profiles: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = profiles
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["profile"].as_str())
        .collect();
    assert!(
        names.contains(&"base") && names.contains(&"sep-1300"),
        "{names:?}"
    );
    let total: u64 = profiles
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["scenarios"].as_u64())
        .sum();
    assert_eq!(total as usize, items.as_array().map_or(0, Vec::len));
}

// 2. The launched server is the one answering.

fn a_url_that_already_answers_is_refused_when_a_command_is_given() {
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let addr = format!("127.0.0.1:{port}");
    let mut stale = Command::new(common::bin())
        .args(["serve-reference", "--http", &addr])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(&addr).is_err() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = mcp_conform(&[
        "-q",
        "-p",
        "base",
        "--url",
        &url,
        "--",
        common::bin(),
        "serve-reference",
        "--http",
        &addr,
    ]);
    let _ = stale.kill();
    let _ = stale.wait();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("already answers before the server is started: the port is taken"),
        "{err}"
    );
    assert_eq!(last_line(&out), "conformance result: NOT RUN");
}

fn a_launched_server_that_exits_is_not_waited_for() {
    let url = format!("http://127.0.0.1:{}/mcp", common::free_port());
    let started = Instant::now();
    let out = mcp_conform(&[
        "-q",
        "--url",
        &url,
        "--",
        "sh",
        "-c",
        "echo cannot bind the port >&2; exit 4",
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "waited {:?} for a server that had exited",
        started.elapsed()
    );
    let err = text(&out.stderr);
    assert!(err.contains("exited with status 4 before"), "{err}");
    assert!(err.contains("cannot bind the port"), "{err}");
}

// 3. Every era the server speaks.

fn a_default_run_tests_every_era_and_reports_each() {
    let dir = common::scratch_dir("gates-eras");
    let report = dir.join("r.json");
    let md = dir.join("r.md");
    let report_arg = report.display().to_string();
    let md_arg = md.display().to_string();
    // Without -q: the summary has a line per era.
    let out = mcp_conform(&[
        "-p",
        "base",
        "--report-json",
        &report_arg,
        "--report-markdown",
        &md_arg,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let console = text(&out.stdout);
    for era in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        assert!(console.contains(&format!("protocol {era}")), "{console}");
    }
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"));
    let eras = json["summary"]["eras"].as_object().map_or(0, |m| m.len());
    assert_eq!(eras, 3, "{}", json["summary"]);
    assert_eq!(json["run"]["eras"].as_array().map_or(0, Vec::len), 3);
    assert_eq!(json["summary"]["verdict"]["status"], "ok");
    let markdown = std::fs::read_to_string(&md).unwrap_or_default();
    assert!(markdown.contains("| 2025-06-18 |"), "{markdown}");
    // Pinning one version tests only that one.
    let out = mcp_conform(&["-q", "-p", "base", "--protocol-version", "2025-11-25"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!text(&out.stdout).contains("protocol 2026-07-28"));
}

/// Faults of per-session state: caught only in the stateful eras, so a
/// default run must include them.
const SESSION_BOUND_FAULTS: &[&str] = &[
    "pd-no-auth",
    "pd-shared-auth",
    "pd-authorize-any",
    "pd-auth-replaced",
    "pd-first-name-only",
    "pd-auth-filter-scoped",
];

fn every_session_bound_fault_is_caught_by_a_default_run() {
    for fault in SESSION_BOUND_FAULTS {
        let out = mcp_conform(&[
            "-q",
            "-p",
            "progressive-disclosure",
            "-p",
            "cross-feature",
            "--",
            common::bin(),
            "serve-reference",
            "--fault",
            fault,
        ]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "--fault {fault} passed a default run:\n{}",
            text(&out.stdout)
        );
        assert!(last_line(&out).starts_with("conformance result: FAILED"));
    }
}

fn the_shipped_matrix_example_catches_every_fault_it_lists() {
    let dir = common::scratch_dir("gates-matrix");
    let out_dir = dir.display().to_string();
    let out = mcp_conform(&[
        "matrix",
        "fixtures/matrix/servers.yaml",
        "--out-dir",
        &out_dir,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let spec = std::fs::read_to_string(common::root().join("fixtures/matrix/servers.yaml"))
        .unwrap_or_default();
    let faulted: Vec<&str> = spec
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- name: "))
        .filter(|n| n.contains("--fault"))
        .collect();
    assert!(!faulted.is_empty());
    for name in faulted {
        let slug: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        let report = Path::new(&out_dir).join(format!("{slug}.json"));
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap_or_default())
                .unwrap_or_else(|e| panic!("{}: {e}", report.display()));
        assert!(
            json["summary"]["overall"]["failed"].as_u64().unwrap_or(0) > 0,
            "{name}: no scenario failed in a default run"
        );
    }
}

// 4. A server that cannot start is one message.

fn a_server_that_cannot_start_is_one_block_and_exit_3() {
    let out = mcp_conform(&["--", "false"]);
    assert_eq!(out.status.code(), Some(3));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(all.lines().count() <= 12, "{all}");
    insta::assert_snapshot!("cannot_start", redact(&all));
    // The same words every time: the exit status decides, not which pipe broke first.
    for _ in 0..3 {
        let out = mcp_conform(&["-q", "--", "sh", "-c", "echo boom >&2; exit 1"]);
        assert_eq!(out.status.code(), Some(3));
        let err = text(&out.stderr);
        assert!(
            err.contains("exited with status 1 before answering the handshake"),
            "{err}"
        );
        assert!(err.contains("boom"), "{err}");
    }
}

// 5. Usage errors are usage errors.

fn usage_errors_exit_2_with_the_reason() {
    let cases: &[(&[&str], &str)] = &[
        (&["--url", "notaurl"], "not a URL"),
        (
            &["--url", "ftp://example.test/mcp"],
            "the scheme must be http or https",
        ),
        (&["explian", "X"], "did you mean `mcp-conform explain`?"),
        (
            &["http://127.0.0.1:9/mcp"],
            "is a URL, not a command: test a running Streamable HTTP server with `mcp-conform --url http://127.0.0.1:9/mcp`",
        ),
        (&["wach"], "did you mean `mcp-conform watch`?"),
        (
            &["completions"],
            "is neither a subcommand nor a program on PATH",
        ),
        (&["-j", "0"], "must be at least 1"),
        (&["--timeout-ms", "0"], "must be at least 1"),
        (
            &["-p", "base", "--report-dir", "/proc/nope"],
            "cannot write there",
        ),
        (
            &["-p", "base", "--report-json", "/proc/version/x.json"],
            "cannot write there",
        ),
    ];
    for (args, expected) in cases {
        let started = Instant::now();
        let out = mcp_conform(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(expected),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{args:?} ran first"
        );
    }
}

fn scenario_ids_name_their_profile_and_are_unique() {
    let dir = common::scratch_dir("gates-ids");
    let body = |id: &str| {
        format!("id: {id}\ntitle: t\nprofile: base\nlevel: MUST\nsteps:\n  - request: ping\n")
    };
    std::fs::write(dir.join("a.yaml"), body("no-profile")).unwrap_or_default();
    let a = dir.join("a.yaml").display().to_string();
    let out = mcp_conform(&["--no-builtin", "--scenarios", &a, "--list"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("must start with its profile: 'base/…'"),
        "{}",
        text(&out.stderr)
    );
    let twice = dir.join("twice");
    std::fs::create_dir_all(&twice).unwrap_or_default();
    std::fs::write(twice.join("x.yaml"), body("base/same")).unwrap_or_default();
    std::fs::write(twice.join("y.yaml"), body("base/same")).unwrap_or_default();
    let t = twice.display().to_string();
    let out = mcp_conform(&["--no-builtin", "--scenarios", &t, "--list"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is already used by"));
    let replace = dir.join("handshake.yaml");
    std::fs::write(&replace, body("base/handshake")).unwrap_or_default();
    let r = replace.display().to_string();
    let out = mcp_conform(&["--scenarios", &r, "--list", "-k", "base/handshake"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("replaces the built-in scenario base/handshake"));
}

// 6. One result line that agrees with the exit code.

fn the_last_line_states_what_the_exit_code_encodes() {
    let bin = common::bin();
    // A warning under --strict fails the run, and says so.
    let out = mcp_conform(&[
        "-q",
        "--strict",
        "-k",
        "search/exact-name-first",
        "--",
        bin,
        "serve-reference",
        "--fault",
        "search-unranked",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        last_line(&out).starts_with("conformance result: FAILED"),
        "{}",
        last_line(&out)
    );
    // The same warning without --strict passes.
    let out = mcp_conform(&[
        "-q",
        "-k",
        "search/exact-name-first",
        "--",
        bin,
        "serve-reference",
        "--fault",
        "search-unranked",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(last_line(&out), "conformance result: ok");
    // A baseline listing every failure: exit 0, and it says they are expected.
    let dir = common::scratch_dir("gates-baseline");
    let full = dir.join("full.yaml");
    std::fs::write(&full, "server:\n  - base/unknown-method\n").unwrap_or_default();
    let full_arg = full.display().to_string();
    let faulty = [
        bin,
        "serve-reference",
        "--fault",
        "unknown-method-internal-error",
    ];
    let mut args = vec![
        "-q",
        "-k",
        "base/unknown-method",
        "--baseline",
        &full_arg,
        "--",
    ];
    args.extend(faulty);
    let out = mcp_conform(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(last_line(&out).starts_with("conformance result: baseline: no new failures"));
    // A stale entry: exit 1 and the last line says STALE.
    let stale = dir.join("stale.yaml");
    std::fs::write(&stale, "server:\n  - base/unknown-method\n").unwrap_or_default();
    let stale_arg = stale.display().to_string();
    let out = mcp_conform(&["-q", "-k", "base/unknown-method", "--baseline", &stale_arg]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        last_line(&out).starts_with("conformance result: STALE baseline"),
        "{}",
        last_line(&out)
    );
    // A server that cannot start: exit 3 and NOT RUN, even with -p.
    let out = mcp_conform(&["-p", "base", "--", "false"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(last_line(&out), "conformance result: NOT RUN");
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        an_unknown_profile_is_a_usage_error_naming_the_valid_ones,
        a_filter_that_matches_nothing_is_a_usage_error,
        filters_take_requirement_ids_and_skip_excludes,
        list_json_and_list_profiles_describe_the_catalog,
        a_url_that_already_answers_is_refused_when_a_command_is_given,
        a_launched_server_that_exits_is_not_waited_for,
        a_default_run_tests_every_era_and_reports_each,
        every_session_bound_fault_is_caught_by_a_default_run,
        the_shipped_matrix_example_catches_every_fault_it_lists,
        a_server_that_cannot_start_is_one_block_and_exit_3,
        usage_errors_exit_2_with_the_reason,
        scenario_ids_name_their_profile_and_are_unique,
        the_last_line_states_what_the_exit_code_encodes
    ]
}
