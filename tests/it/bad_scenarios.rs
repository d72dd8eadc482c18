//! Broken scenario and baseline files (fixtures/bad-scenarios/): each gives
//! its exact `file:line:col` error (insta snapshot), the CLI exits with 2,
//! and no scenario is run half-way.

use crate::common;

use std::path::Path;

fn errors_of(name: &str) -> String {
    let path = Path::new("fixtures/bad-scenarios").join(name);
    let text = std::fs::read_to_string(common::root().join(&path))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    match mcp_conform::scenario::load::load_str(&path.display().to_string(), &text) {
        Ok(_) => panic!("{name} loaded without an error"),
        Err(e) => e.to_string(),
    }
}

fn each_broken_file_gives_its_exact_error() {
    let dir = common::root().join("fixtures/bad-scenarios");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".yaml") && n != "bad-baseline.yaml")
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    let mut all = String::new();
    let re = regex::Regex::new(r"^fixtures/bad-scenarios/[a-z-]+\.yaml:\d+:\d+: ")
        .unwrap_or_else(|e| panic!("{e}"));
    for name in &names {
        let e = errors_of(name);
        for line in e.lines() {
            assert!(re.is_match(line), "{name}: not file:line:col: {line}");
        }
        all.push_str(&e);
        all.push('\n');
    }
    insta::assert_snapshot!("bad_scenario_errors", all);
}

fn the_cli_exits_2_and_runs_nothing() {
    let out = common::run_cli(&[
        "--scenarios",
        "fixtures/bad-scenarios",
        "--",
        "/nonexistent-never-started",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("problem(s) in scenario files; nothing was run"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("cannot start"),
        "the server must not be started: {stderr}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).trim().is_empty(),
        "no scenario ran"
    );
}

fn a_broken_baseline_exits_2_with_its_position() {
    let out = common::run_cli(&[
        "--baseline",
        "fixtures/bad-scenarios/bad-baseline.yaml",
        "-p",
        "base",
        "--",
        common::bin(),
        "serve-reference",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    insta::assert_snapshot!("bad_baseline_error", stderr.trim());
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        each_broken_file_gives_its_exact_error,
        the_cli_exits_2_and_runs_nothing,
        a_broken_baseline_exits_2_with_its_position
    ]
}
