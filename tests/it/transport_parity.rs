//! Same verdicts both ways: the whole catalog against the reference server
//! over stdio and over Streamable HTTP, clean and under a few faults, in a
//! stateful era and the stateless one. Every transport-neutral scenario (no
//! `transports:` key) must reach the same outcome, with the same
//! alternatives chosen, on both transports. One exception: a scenario with a
//! second `session:` may see a different (accepted) alternative, because a
//! second session is a second server process on stdio but the same process
//! on HTTP (a cursor carried across is foreign to one, not to the other).

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_conform::run::pool::SessionPool;
use mcp_conform::run::scheduler::run_all;
use mcp_conform::run::{Outcome, ScenarioResult};
use mcp_conform::scenario::model::Scenario;
use std::time::Duration;

const STATEFUL: &str = "2025-11-25";
const STATELESS: &str = "2026-07-28";

/// Over stdio as a default CLI run goes: shared scenarios on warm servers.
fn over_stdio(scenarios: &[Scenario], faults: &[&str], version: &str) -> Vec<ScenarioResult> {
    let mut cfg = (*common::config(common::reference_server(faults), Some(version))).clone();
    cfg.pool = Some(Arc::new(SessionPool::new(Duration::from_millis(100))));
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    common::runtime().block_on(run_all(scenarios.to_vec(), Arc::new(cfg), 4, tx))
}

fn opens_a_second_session(s: &Scenario) -> bool {
    s.steps.iter().any(|step| step.session.is_some())
}

fn verdicts(results: &[ScenarioResult], neutral: &[Scenario]) -> BTreeMap<String, String> {
    results
        .iter()
        .map(|r| {
            let multi = neutral
                .iter()
                .any(|s| s.id == r.id && opens_a_second_session(s));
            let verdict = if multi {
                r.outcome.to_string()
            } else {
                format!("{} {:?}", r.outcome, r.alternatives)
            };
            (r.id.clone(), verdict)
        })
        .collect()
}

fn compare(faults: &[&str], version: &str, neutral: &[Scenario]) -> Vec<String> {
    let stdio = verdicts(&over_stdio(neutral, faults, version), neutral);
    let http_results = common::run_over_http(neutral, faults, Some(version), 4);
    let http = verdicts(&http_results, neutral);
    let mut differences = Vec::new();
    for (id, on_stdio) in &stdio {
        let on_http = http.get(id).cloned().unwrap_or_else(|| "missing".into());
        if *on_stdio != on_http {
            let why = http_results
                .iter()
                .find(|r| &r.id == id)
                .map(|r| r.message.clone())
                .unwrap_or_default();
            differences.push(format!(
                "{version} faults {faults:?}: {id}: stdio {on_stdio}, http {on_http} ({why})"
            ));
        }
    }
    if faults.is_empty() {
        for r in &http_results {
            if !matches!(r.outcome, Outcome::Pass | Outcome::Skip | Outcome::Info) {
                differences.push(format!(
                    "{version}: the clean server over HTTP: {} {}: {}",
                    r.id, r.outcome, r.message
                ));
            }
        }
    }
    differences
}

fn stdio_and_http_give_the_same_verdicts() {
    let scenarios = mcp_conform::builtin::scenarios().unwrap_or_else(|e| panic!("{e}"));
    let neutral: Vec<Scenario> = scenarios
        .into_iter()
        .filter(|s| s.transports.is_empty())
        .collect();
    assert!(neutral.len() >= 150, "{} neutral scenarios", neutral.len());
    let runs: &[(&[&str], &str)] = &[
        (&[], STATEFUL),
        (&[], STATELESS),
        (&["ignore-query"], STATELESS),
        (&["groups-all"], STATELESS),
        (&["pd-no-auth"], STATEFUL),
        (&["search-unranked"], STATEFUL),
    ];
    // The runs are independent (each starts its own servers) and mostly wait
    // on them: three at a time; the differences keep the runs' order.
    let differences: Vec<String> = runs
        .chunks(3)
        .flat_map(|batch| {
            std::thread::scope(|scope| {
                let handles: Vec<_> = batch
                    .iter()
                    .map(|(faults, version)| {
                        scope.spawn(|| {
                            // Verdicts are what this test compares; the read
                            // analysis is checked where each scenario meets
                            // each test server (scenarios.rs); evaluating
                            // every expression twice here took this test
                            // from 12 to 18 s of CPU.
                            common::skip_read_checks_here();
                            compare(faults, version, &neutral)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|h| h.join().unwrap_or_else(|_| vec!["a run panicked".into()]))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![stdio_and_http_give_the_same_verdicts]
}
