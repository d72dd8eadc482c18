//! The tiny fixture server (fixtures/servers/tiny_server.py, a Python
//! script): proof that the base checks can fail (each defect, `--break
//! NAME`, is reported as a failure of the right requirement, and no scenario
//! errors out because of it), and the command line against it (a server that
//! never answers, the console output of a failing run). Ignored, with the
//! reason, where python3 is missing (unless the `python` prerequisite is
//! required).

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use libtest_mimic::Trial;
use mcp_conform::run::pool::SessionPool;
use mcp_conform::run::scheduler::run_all;
use mcp_conform::run::Outcome;

use crate::common;
use crate::common::{cli as mcp_conform, redact_console as redact, text};
use crate::prereq::{self, Prereq};

pub fn trials() -> Vec<Trial> {
    let tests: [(&str, fn()); 5] = [
        (
            "each_base_defect_fails_its_requirement",
            each_base_defect_fails_its_requirement,
        ),
        (
            "a_correct_server_fails_nothing",
            a_correct_server_fails_nothing,
        ),
        (
            "a_parse_error_with_another_code_warns",
            a_parse_error_with_another_code_warns,
        ),
        (
            "a_server_that_never_answers_gets_a_verdict_within_the_timeout_and_leaves_no_process",
            a_server_that_never_answers_gets_a_verdict_within_the_timeout_and_leaves_no_process,
        ),
        (
            "console_output_of_a_failing_run",
            console_output_of_a_failing_run,
        ),
    ];
    tests
        .into_iter()
        .map(|(name, body)| {
            prereq::trial(
                format!("tiny_server::{name}"),
                Prereq::Python,
                prereq::python,
                body,
            )
        })
        .collect()
}

/// The requirements the base scenarios fail against the tiny server with
/// `breaks`, run as a default CLI run would: shared scenarios on warm
/// servers (a Python start each otherwise, most of this trial's time).
fn failing_requirements(breaks: &[&str], version: Option<&str>) -> BTreeSet<String> {
    let (failed, warned) = caught_requirements(breaks, version);
    failed.union(&warned).cloned().collect()
}

/// The requirements the base scenarios fail, and those they only warn on,
/// against the tiny server with `breaks`.
fn caught_requirements(
    breaks: &[&str],
    version: Option<&str>,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut cfg = (*common::config(common::tiny_server(breaks), version)).clone();
    cfg.pool = Some(std::sync::Arc::new(SessionPool::new(
        Duration::from_millis(100),
    )));
    let scenarios = mcp_conform::builtin::scenarios().unwrap_or_else(|e| panic!("{e}"));
    let base: Vec<_> = scenarios
        .into_iter()
        .filter(|s| s.profile == "base")
        .collect();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let results = common::runtime().block_on(run_all(base, std::sync::Arc::new(cfg), 2, tx));
    let (mut failed, mut warned) = (BTreeSet::new(), BTreeSet::new());
    for r in results {
        assert_ne!(
            r.outcome,
            Outcome::Error,
            "{breaks:?} made {} error out: {}",
            r.id,
            r.message
        );
        // caught: a failure, or a warning where the rule is a SHOULD
        // (BASE-ERR-02: JSON-RPC's code table has no keyword)
        match r.outcome {
            Outcome::Fail => failed.extend(r.requirements.iter().cloned()),
            Outcome::Warn => warned.extend(r.requirements.iter().cloned()),
            _ => {}
        }
    }
    (failed, warned)
}

fn each_base_defect_fails_its_requirement() {
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
    // initialize belongs to the stateful eras (auto picks 2026-07-28).
    for defect in ["no-server-info", "made-up-version"] {
        let failing = failing_requirements(&[defect], Some("2025-11-25"));
        assert!(failing.contains("BASE-INIT-01"), "{defect}: {failing:?}");
    }
}

/// An unparsable line answered with another code than -32700 is answered:
/// the MUST ("the Server MUST reply") holds, and the code, from a table
/// with no keyword, only warns (figma-developer-mcp 0.13.2 over HTTP
/// answers -32603, and failed BASE-ERR-03 for it).
fn a_parse_error_with_another_code_warns() {
    let (failed, warned) = caught_requirements(&["parse-error-internal"], None);
    assert!(!failed.contains("BASE-ERR-03"), "failed: {failed:?}");
    assert!(warned.contains("BASE-ERR-03"), "warned: {warned:?}");
}

fn a_correct_server_fails_nothing() {
    assert_eq!(failing_requirements(&[], None), BTreeSet::new());
    assert_eq!(
        failing_requirements(&[], Some("2025-06-18")),
        BTreeSet::new()
    );
    // Refusing the request behind a notification is no reply to the
    // notification (Context7 4.1.1 does this in 2026-07-28, and failed
    // "MUST NOT reply to a Notification" for it).
    assert_eq!(
        failing_requirements(&["refuse-after-notification"], None),
        BTreeSet::new()
    );
    // A server that speaks only an older revision answers initialize with
    // it, as version negotiation asks (server-github 0.6.2 answers
    // 2024-11-05, and failed BASE-INIT-01 for it).
    assert_eq!(
        failing_requirements(&["speaks-2024-11-05"], None),
        BTreeSet::new()
    );
}

fn a_server_that_never_answers_gets_a_verdict_within_the_timeout_and_leaves_no_process() {
    let marker = format!("hang-marker-{}", std::process::id());
    let script = common::root()
        .join("fixtures/servers/tiny_server.py")
        .display()
        .to_string();
    let started = Instant::now();
    let out = mcp_conform(&[
        "--timeout-ms",
        "500",
        "--startup-timeout-ms",
        "500",
        "--protocol-version",
        "2025-11-25",
        "--",
        common::python3(),
        common::FIXTURE_PYTHON_FLAGS,
        &script,
        "--break",
        "hang",
        &marker,
    ]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no answer to initialize within 500 ms"),
        "{}",
        text(&out.stderr)
    );
    // The quality bar (timeout + 1 s) is measured on a quiet machine by
    // scripts/hostile.sh; here other tests share the two cores, so the bound is looser.
    assert!(took < Duration::from_millis(500 + 4000), "took {took:?}");
    let left = Command::new("pgrep")
        .args(["-f", &marker])
        .output()
        .map(|o| text(&o.stdout))
        .unwrap_or_default();
    assert!(left.trim().is_empty(), "processes left behind: {left}");
}

fn console_output_of_a_failing_run() {
    let out = mcp_conform(&[
        "-j",
        "1",
        "-p",
        "base",
        "--protocol-version",
        "2026-07-28",
        "--",
        // PATH's name, not the resolved interpreter: the snapshot shows the command.
        "python3",
        "fixtures/servers/tiny_server.py",
        "--break",
        "wrong-id",
        "--break",
        "unknown-method-ok",
    ]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!(
        "console_failing_run",
        common::stable_console(&redact(&text(&out.stdout)))
    );
}
