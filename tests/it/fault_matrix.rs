//! The fault matrix: the whole built-in catalog against the clean reference
//! server (every applicable scenario passes, zero warnings) and against each
//! `--fault` of it (each fault is caught — fail, or warn for a SHOULD — by at
//! least one scenario whose requirement matches the fault, and no fault makes
//! any scenario error out). Writes the matrix to reports/fault-matrix.md.
//!
//! A fault acts only where the reference server's code asks whether it is
//! on (`Faults::has`, or a policy decision it bends). Each scenario's conversation with the clean server
//! is first traced in the same process, noting every fault its server
//! asked about: a scenario whose clean conversation never asked about a
//! fault has the same conversation, so the same result, against the server
//! with that fault on, and keeps its clean result. Under each fault only the
//! scenarios that met it run again, against real server processes as
//! before; all of them when the faulty server's probe finds other facts or
//! another handshake answer than the clean one's (scenarios start from
//! those). `MCP_CONFORM_FULL_FAULT_MATRIX=1`
//! runs every scenario under every fault instead, and writes each
//! (fault, scenario) outcome to target/tmp/fault-outcomes-full.json beside
//! the traced run's fault-outcomes-traced.json, so the two can be compared.

use crate::common;

use libtest_mimic::Trial;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mcp_conform::reference::{Config, Fault, FaultTrace, Faults};
use mcp_conform::run::pool::SessionPool;
use mcp_conform::run::scheduler::run_all;
use mcp_conform::run::{Outcome, RunConfig, ScenarioResult, Target};
use mcp_conform::scenario::model::{Level, Scenario};
use std::time::Duration;

const STATEFUL: &str = "2025-11-25";

/// Which requirements (id prefixes) each fault breaks, as the reference
/// server declares them beside the fault's code.
fn fault_requirements() -> BTreeMap<&'static str, &'static [&'static str]> {
    Fault::all()
        .iter()
        .map(|f| (f.name(), f.breaks()))
        .collect()
}

/// The options a fault needs to act (`Fault::options`). Such a fault runs
/// only the scenarios of its own requirements: the others were not written
/// for a server started that way (rate-limited, say).
fn fault_options(fault: &str) -> &'static [&'static str] {
    Fault::all()
        .iter()
        .find(|f| f.name() == fault)
        .map_or(&[], |f| f.options())
}

/// The server's own list of faults (`serve-reference --fault help`).
fn server_faults() -> Vec<String> {
    let out = common::run_cli(&["serve-reference", "--fault", "help"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

fn run_catalog(
    scenarios: &[Scenario],
    faults: &[&str],
    version: Option<&str>,
) -> Vec<ScenarioResult> {
    run_with(scenarios, faults, &[], version)
}

fn run_with(
    scenarios: &[Scenario],
    faults: &[&str],
    options: &[&str],
    version: Option<&str>,
) -> Vec<ScenarioResult> {
    run_on(scenarios, pooled_config(faults, options, version))
}

/// The reference server with `faults` and `options`, probed; shared
/// scenarios reuse warm servers, as in a default CLI run.
fn pooled_config(faults: &[&str], options: &[&str], version: Option<&str>) -> RunConfig {
    let mut target = common::reference_server(faults);
    if let Target::Stdio(spec) = &mut target {
        spec.args.extend(options.iter().map(|o| o.to_string()));
    }
    let mut cfg = (*common::config(target, version)).clone();
    cfg.pool = Some(Arc::new(SessionPool::new(Duration::from_millis(100))));
    // As a default run: shared scenarios pass complete walks on, and no
    // fault may hide behind that.
    cfg.walks = Some(Arc::default());
    cfg
}

fn run_on(scenarios: &[Scenario], cfg: RunConfig) -> Vec<ScenarioResult> {
    let rt = common::runtime();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    rt.block_on(run_all(scenarios.to_vec(), Arc::new(cfg), 4, tx))
}

fn catches(r: &ScenarioResult, prefixes: &[&str]) -> bool {
    matches!(r.outcome, Outcome::Fail | Outcome::Warn)
        && r.requirements
            .iter()
            .any(|q| prefixes.iter().any(|p| q.starts_with(p)))
}

pub fn trials() -> Vec<Trial> {
    vec![Trial::test(
        "fault_matrix::every_fault_is_caught_and_the_clean_server_passes",
        || {
            every_fault_is_caught_and_the_clean_server_passes();
            Ok(())
        },
    )]
}

fn every_fault_is_caught_and_the_clean_server_passes() {
    let scenarios = mcp_conform::builtin::scenarios().unwrap_or_else(|e| panic!("{e}"));
    let clean = Clean {
        stateless: CleanEra::of(&scenarios, None),
        stateful: CleanEra::of(&scenarios, Some(STATEFUL)),
    };
    let bad: Vec<String> = clean
        .stateless
        .results
        .iter()
        .chain(&clean.stateful.results)
        .filter(|r| !matches!(r.outcome, Outcome::Pass | Outcome::Skip | Outcome::Info))
        .map(|r| format!("{} {}: {}", r.id, r.outcome, r.message))
        .collect();
    assert!(
        bad.is_empty(),
        "the clean reference server must pass every applicable scenario with no warning:\n{}",
        bad.join("\n")
    );

    let mapping = fault_requirements();
    let faults = server_faults();
    assert!(
        faults.len() >= 21,
        "expected the documented faults, got {faults:?}"
    );
    let unmapped: Vec<&String> = faults
        .iter()
        .filter(|f| !mapping.contains_key(f.as_str()))
        .collect();
    assert!(
        unmapped.is_empty(),
        "faults without a requirement mapping in this test: {unmapped:?}"
    );

    let mut matrix: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut catching: BTreeSet<String> = BTreeSet::new();
    let all_results = each_fault(&faults, &scenarios, &mapping, &clean);
    write_outcomes(&faults, &all_results);
    for (fault, results) in faults.iter().zip(all_results) {
        record(
            fault,
            &results,
            &mapping,
            &mut problems,
            &mut catching,
            &mut matrix,
        );
    }
    let uncaught_must: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| s.level == Level::Must && !catching.contains(&s.id))
        .collect();
    let text = render(&matrix, &uncaught_must, scenarios.len());
    let path = common::root().join("reports/fault-matrix.md");
    let _ = std::fs::create_dir_all(common::root().join("reports"));
    let _ = std::fs::write(&path, &text);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Faults run this many at a time: each run spends much of its time waiting
/// on its own server processes, so one at a time left the cores idle (about
/// 0.8 of one core busy); the results are filed in the faults' order, so the
/// matrix does not depend on which run ends first.
const FAULTS_AT_ONCE: usize = 3;

/// The results of every fault, in the order of `faults`.
fn each_fault(
    faults: &[String],
    scenarios: &[Scenario],
    mapping: &BTreeMap<&str, &[&str]>,
    clean: &Clean,
) -> Vec<Vec<ScenarioResult>> {
    let next = AtomicUsize::new(0);
    let done = Mutex::new(BTreeMap::new());
    std::thread::scope(|scope| {
        for _ in 0..FAULTS_AT_ONCE {
            scope.spawn(|| loop {
                // Verdicts are what this test checks; the read analysis is
                // checked by every other suite (each scenario against each
                // test server, the clean runs above), and evaluating every
                // expression twice here doubled the suite's longest test.
                common::skip_read_checks_here();
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(fault) = faults.get(i) else {
                    break;
                };
                let results = fault_results(fault, scenarios, mapping, clean);
                if let Ok(mut d) = done.lock() {
                    d.insert(i, results);
                }
            });
        }
    });
    let done = done.into_inner().unwrap_or_default();
    assert_eq!(done.len(), faults.len(), "a fault's run panicked");
    done.into_values().collect()
}

/// The catalog (or the part of it the fault concerns) against the reference
/// server with `fault`.
fn fault_results(
    fault: &str,
    scenarios: &[Scenario],
    mapping: &BTreeMap<&str, &[&str]>,
    clean: &Clean,
) -> Vec<ScenarioResult> {
    // Each fault runs in the stateless era (what auto picks), and in a
    // stateful era too when a scenario's clean conversation there met it
    // (features and scenarios only the stateful eras have: ping,
    // logging/setLevel, -32002, tasks/list) or when it breaks a per-session
    // requirement, the initialize handshake or requests without params
    // (the stateless era always sends params).
    if fault.starts_with("http-") {
        // Transport faults show only over HTTP: the transport and base
        // profiles run there, in a stateful era and the stateless one.
        let subset: Vec<Scenario> = scenarios
            .iter()
            .filter(|s| s.profile == "transport-http" || s.profile == "base")
            .cloned()
            .collect();
        let mut results = common::run_over_http(&subset, &[fault], None, 4);
        results.extend(common::run_over_http(&subset, &[fault], Some(STATEFUL), 4));
        return results;
    }
    let options = fault_options(fault);
    let prefixes = mapping.get(fault).copied().unwrap_or_default();
    let own: Vec<Scenario> = if options.is_empty() {
        scenarios.to_vec()
    } else {
        scenarios
            .iter()
            .filter(|s| {
                s.requirements
                    .iter()
                    .any(|q| prefixes.iter().any(|p| q.starts_with(p)))
            })
            .cloned()
            .collect()
    };
    let in_era = |era: &CleanEra| {
        if options.is_empty() {
            rerun_what_met(fault, &own, era)
        } else {
            run_with(&own, &[fault], options, era.version)
        }
    };
    let mut results = in_era(&clean.stateless);
    let per_session = ["PD-AUTH", "X-05", "BASE-INIT", "SEARCH-REQ-01"];
    if prefixes
        .iter()
        .any(|q| per_session.iter().any(|s| q.starts_with(s)))
        || clean.stateful.met.any_met(fault)
    {
        results.extend(in_era(&clean.stateful));
    }
    // Scenarios that need HTTP (a second session on the same server)
    // and check this fault's requirements run over HTTP too.
    let http_only: Vec<Scenario> = scenarios
        .iter()
        .filter(|s| s.transports == ["http"] && s.profile != "transport-http")
        .filter(|s| {
            s.requirements
                .iter()
                .any(|q| prefixes.iter().any(|p| q.starts_with(p)))
        })
        .cloned()
        .collect();
    if !http_only.is_empty() {
        results.extend(common::run_over_http(
            &http_only,
            &[fault],
            Some(STATEFUL),
            4,
        ));
    }
    results
}

/// The clean server in the two eras the faults run in.
struct Clean {
    stateless: CleanEra,
    stateful: CleanEra,
}

/// The clean server's results in one era (`version`; None: what auto
/// picks), and what each scenario's conversation with it asked about.
struct CleanEra {
    version: Option<&'static str>,
    results: Vec<ScenarioResult>,
    met: Met,
}

impl CleanEra {
    fn of(scenarios: &[Scenario], version: Option<&'static str>) -> CleanEra {
        CleanEra {
            version,
            results: run_catalog(scenarios, &[], version),
            met: Met::tracing(scenarios, version),
        }
    }
}

/// What the clean server's probe found, and the faults its code asked
/// about during each scenario (each on a fresh in-process server).
struct Met {
    probed: Probed,
    by_scenario: BTreeMap<String, BTreeSet<String>>,
}

/// What scenarios start from: the probe's facts and handshake answer.
type Probed = (Option<serde_json::Value>, serde_json::Value);

fn probed(cfg: &RunConfig) -> Probed {
    (
        cfg.probe.as_ref().map(|p| p.json().clone()),
        cfg.server.clone(),
    )
}

impl Met {
    fn tracing(scenarios: &[Scenario], version: Option<&str>) -> Met {
        // On a thread of its own: the choice below is the thread's, and a
        // test thread goes on to run other trials.
        std::thread::scope(|scope| {
            scope
                .spawn(|| Met::tracing_here(scenarios, version))
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e))
        })
    }

    fn tracing_here(scenarios: &[Scenario], version: Option<&str>) -> Met {
        // What the server asks about is what this run is for; the clean
        // runs before it checked the read analysis on these scenarios.
        common::skip_read_checks_here();
        let clean = common::config(in_process(&FaultTrace::new()), version);
        let rt = common::runtime();
        let by_scenario = scenarios
            .iter()
            .map(|s| {
                let trace = FaultTrace::new();
                let mut one = (*clean).clone();
                one.target = in_process(&trace);
                let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
                rt.block_on(run_all(vec![s.clone()], Arc::new(one), 1, tx));
                (s.id.clone(), names(&trace))
            })
            .collect();
        Met {
            probed: probed(&clean),
            by_scenario,
        }
    }

    /// Whether any scenario's clean conversation asked about `fault`.
    fn any_met(&self, fault: &str) -> bool {
        self.by_scenario.values().any(|met| met.contains(fault))
    }

    /// Whether `scenario`'s conversation under `fault` may differ from its
    /// clean one, given what the probe of the faulty server found: when
    /// that differs, every scenario starts from something else.
    fn may_change(&self, fault: &str, scenario: &str, faulty: &Probed) -> bool {
        full_matrix()
            || *faulty != self.probed
            || self
                .by_scenario
                .get(scenario)
                .is_none_or(|met| met.contains(fault))
    }
}

fn full_matrix() -> bool {
    std::env::var_os("MCP_CONFORM_FULL_FAULT_MATRIX").is_some_and(|v| v == "1")
}

/// The reference server as `common::reference_server` starts it, in this
/// process, noting the faults its code asks about in `trace`.
fn in_process(trace: &FaultTrace) -> Target {
    Target::InProcess(Config {
        faults: Faults::none().traced(trace.clone()),
        control: true,
        ..Config::default()
    })
}

fn names(trace: &FaultTrace) -> BTreeSet<String> {
    trace
        .consulted()
        .into_iter()
        .map(|f| f.name().to_string())
        .collect()
}

/// `scenarios` under `fault`: those whose clean conversation met it run
/// again, the others keep their clean result; all of them when the faulty
/// server's probe found something else than the clean one's.
fn rerun_what_met(fault: &str, scenarios: &[Scenario], clean: &CleanEra) -> Vec<ScenarioResult> {
    let faulty = pooled_config(&[fault], &[], clean.version);
    let found = probed(&faulty);
    let (again, same): (Vec<Scenario>, Vec<Scenario>) = scenarios
        .iter()
        .cloned()
        .partition(|s| clean.met.may_change(fault, &s.id, &found));
    let mut results = if again.is_empty() {
        Vec::new()
    } else {
        run_on(&again, faulty)
    };
    let kept: BTreeSet<&str> = same.iter().map(|s| s.id.as_str()).collect();
    results.extend(
        clean
            .results
            .iter()
            .filter(|r| kept.contains(r.id.as_str()))
            .cloned(),
    );
    results
}

/// Every (fault, scenario, era) outcome, for comparing a traced matrix
/// with a full one (`MCP_CONFORM_FULL_FAULT_MATRIX=1`).
fn write_outcomes(faults: &[String], results: &[Vec<ScenarioResult>]) {
    let outcomes: BTreeMap<String, String> = faults
        .iter()
        .zip(results)
        .flat_map(|(fault, rs)| {
            rs.iter().map(move |r| {
                (
                    format!("{fault} {} {}", r.id, r.era),
                    format!("{}: {}", r.outcome, r.message),
                )
            })
        })
        .collect();
    let name = if full_matrix() { "full" } else { "traced" };
    let dir = common::root().join("target/tmp");
    let _ = std::fs::create_dir_all(&dir);
    let text = serde_json::to_string_pretty(&outcomes).unwrap_or_default();
    let _ = std::fs::write(dir.join(format!("fault-outcomes-{name}.json")), text);
}

/// Files one fault's results: what caught it, and any scenario it made error out.
fn record(
    fault: &str,
    results: &[ScenarioResult],
    mapping: &BTreeMap<&str, &[&str]>,
    problems: &mut Vec<String>,
    catching: &mut BTreeSet<String>,
    matrix: &mut BTreeMap<String, Vec<String>>,
) {
    for r in results {
        let unfilled = r
            .findings
            .iter()
            .map(|f| f.message.as_str())
            .chain([r.message.as_str()])
            .any(|m| m.contains("could not be filled in"));
        if unfilled {
            problems.push(format!(
                "--fault {fault}: the failure message of {} could not be filled in: {}",
                r.id, r.message
            ));
        }
    }
    for r in results.iter().filter(|r| r.outcome == Outcome::Error) {
        problems.push(format!(
            "--fault {fault} made {} error out: {}",
            r.id, r.message
        ));
    }
    let prefixes = mapping.get(fault).copied().unwrap_or_default();
    let caught: Vec<String> = results
        .iter()
        .filter(|r| catches(r, prefixes))
        .map(|r| format!("{} ({})", r.id, r.outcome))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if caught.is_empty() {
        problems.push(format!(
            "--fault {fault} is caught by no scenario of {prefixes:?}"
        ));
    }
    catching.extend(
        results
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::Warn))
            .map(|r| r.id.clone()),
    );
    matrix.insert(fault.to_string(), caught);
}

fn render(
    matrix: &BTreeMap<String, Vec<String>>,
    uncaught_must: &[&Scenario],
    total: usize,
) -> String {
    let mut md = format!(
        "# Fault matrix\n\nEvery `--fault` of the reference server, and the built-in scenarios (of {total}) \
         whose requirement matches the fault and that caught it (fail, or warn for a SHOULD). \
         Regenerate with `cargo test --test it fault_matrix::`.\n\n| fault | caught by |\n|---|---|\n"
    );
    for (fault, caught) in matrix {
        let _ = writeln!(
            md,
            "| `{fault}` | {} |",
            if caught.is_empty() {
                "**nothing**".into()
            } else {
                caught.join("<br>")
            }
        );
    }
    let _ = writeln!(
        md,
        "\n## MUST scenarios no fault trips ({})\n",
        uncaught_must.len()
    );
    for s in uncaught_must {
        let _ = writeln!(md, "- `{}` ({})", s.id, s.requirements.join(", "));
    }
    md
}
