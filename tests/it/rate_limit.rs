//! search/rate-limit-recovers against the reference server: it passes with
//! `--rate-limit` (both eras), skips with a reason when no limit is
//! advertised, and fails on each rate-limit fault.

use crate::common;

use std::sync::Arc;

use mcp_conform::run::scheduler::run_all;
use mcp_conform::run::{Outcome, ScenarioResult, Target};
use mcp_conform::transport::StdioSpec;

const SCENARIO: &str = "search/rate-limit-recovers";

fn reference(args: &[&str]) -> Target {
    let mut all = vec!["serve-reference".to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    Target::Stdio(StdioSpec::new(common::bin(), all))
}

fn run(args: &[&str], version: Option<&str>) -> ScenarioResult {
    let scenarios: Vec<_> = mcp_conform::builtin::scenarios()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .filter(|s| s.id == SCENARIO)
        .collect();
    assert_eq!(scenarios.len(), 1, "{SCENARIO} is a built-in scenario");
    let cfg = common::config(reference(args), version);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut results = common::runtime().block_on(run_all(scenarios, Arc::clone(&cfg), 1, tx));
    results
        .pop()
        .unwrap_or_else(|| panic!("no result for {SCENARIO}"))
}

fn passes_when_the_advertised_limit_is_kept() {
    for version in [None, Some("2025-11-25")] {
        let r = run(&["--rate-limit", "5/s"], version);
        assert_eq!(r.outcome, Outcome::Pass, "{version:?}: {}", r.message);
        assert!(
            r.alternatives
                .iter()
                .any(|a| a == "refused with a rate-limit error"),
            "{:?}",
            r.alternatives
        );
    }
}

fn skips_with_a_reason_without_a_limit() {
    let r = run(&[], None);
    assert_eq!(r.outcome, Outcome::Skip);
    assert!(
        r.message.contains("advertises no rate limit"),
        "{}",
        r.message
    );
}

fn warns_when_the_limit_never_recovers() {
    let r = run(
        &["--rate-limit", "5/s", "--fault", "rate-limit-no-recovery"],
        None,
    );
    // SEARCH-RATE-01 is this project's rule (docs/interpretations.md), so a SHOULD.
    assert_eq!(r.outcome, Outcome::Warn, "{}", r.message);
    assert!(r.message.contains("after"), "{}", r.message);
}

fn warns_when_the_refusal_does_not_say_why() {
    let r = run(
        &[
            "--rate-limit",
            "5/s",
            "--fault",
            "rate-limit-internal-error",
        ],
        None,
    );
    assert_eq!(r.outcome, Outcome::Warn, "{}", r.message);
    assert!(r.message.contains("flood"), "{}", r.message);
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        passes_when_the_advertised_limit_is_kept,
        skips_with_a_reason_without_a_limit,
        warns_when_the_limit_never_recovers,
        warns_when_the_refusal_does_not_say_why
    ]
}
