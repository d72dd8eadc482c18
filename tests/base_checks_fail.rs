//! Proof that the base checks can fail: each defect of the tiny fixture
//! server (`--break NAME`) is reported as a failure of the right requirement,
//! and no scenario errors out because of it.

mod common;

use std::collections::BTreeSet;

use mcp_conform::run::{run_scenario, Outcome};

fn failing_requirements(breaks: &[&str], version: Option<&str>) -> BTreeSet<String> {
    let cfg = common::config(common::tiny_server(breaks), version);
    let scenarios = mcp_conform::builtin::scenarios().unwrap_or_else(|e| panic!("{e}"));
    let rt = common::runtime();
    let mut failing = BTreeSet::new();
    for s in scenarios.iter().filter(|s| s.profile == "base") {
        let r = rt.block_on(run_scenario(s, &cfg));
        assert_ne!(
            r.outcome,
            Outcome::Error,
            "{breaks:?} made {} error out: {}",
            s.id,
            r.message
        );
        if r.outcome == Outcome::Fail {
            failing.extend(r.requirements.iter().cloned());
        }
    }
    failing
}

#[test]
fn each_base_defect_fails_its_requirement() {
    if !common::has_python() {
        eprintln!("skipped: python3 is not installed (the tiny fixture server needs it)");
        return;
    }
    let cases: &[(&str, &[&str])] = &[
        ("bad-params-internal-error", &["BASE-ERR-02"]),
        ("unknown-method-ok", &["BASE-ERR-01"]),
        ("wrong-id", &["BASE-ID-01"]),
        ("noise-on-stdout", &["BASE-STDIO-01"]),
        ("no-parse-error", &["BASE-ERR-03"]),
        ("exit-on-parse-error", &["BASE-ERR-03"]),
        ("integer-string-code", &["BASE-ERR-04"]),
        ("cursor-loop", &["BASE-PAGE-01"]),
    ];
    for (defect, expected) in cases {
        let failing = failing_requirements(&[defect], None);
        for req in *expected {
            assert!(
                failing.contains(*req),
                "--break {defect}: expected {req} to fail, failing: {failing:?}"
            );
        }
    }
    let failing = failing_requirements(&["no-server-info"], Some("2025-11-25"));
    assert!(
        failing.contains("BASE-INIT-01"),
        "no-server-info: {failing:?}"
    );
}

#[test]
fn a_correct_server_fails_nothing() {
    if !common::has_python() {
        eprintln!("skipped: python3 is not installed (the tiny fixture server needs it)");
        return;
    }
    assert_eq!(failing_requirements(&[], None), BTreeSet::new());
    assert_eq!(
        failing_requirements(&[], Some("2025-06-18")),
        BTreeSet::new()
    );
}
