//! The fault matrix: the whole built-in catalog against the clean reference
//! server (every applicable scenario passes, zero warnings) and against each
//! `--fault` of it (each fault is caught — fail, or warn for a SHOULD — by at
//! least one scenario whose requirement matches the fault, and no fault makes
//! any scenario error out). Writes the matrix to reports/fault-matrix.md.
//!
//! A fault acts only where the reference server's code asks whether it is
//! on (`Faults::has`). Each scenario's conversation with the clean server
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

use mcp_conform::reference::{Config, FaultTrace, Faults};
use mcp_conform::run::pool::SessionPool;
use mcp_conform::run::scheduler::run_all;
use mcp_conform::run::{Outcome, RunConfig, ScenarioResult, Target};
use mcp_conform::scenario::model::{Level, Scenario};
use std::time::Duration;

const STATEFUL: &str = "2025-11-25";

/// Which requirements (id prefixes) a fault breaks.
fn fault_requirements() -> BTreeMap<&'static str, &'static [&'static str]> {
    BTreeMap::from([
        ("ignore-query", &["SEP1821-", "X-01"][..]),
        ("query-as-regex", &["SEP1821-Q-04"][..]),
        ("groups-all", &["SEP1300-FLT", "X-01"][..]),
        ("tags-any", &["SEP1300-FLT", "X-01"][..]),
        ("tags-ignore-groups", &["SEP1300-FLT-03", "X-01"][..]),
        ("empty-groups-match-none", &["SEP1300-NEG-01"][..]),
        (
            "cursor-drops-query",
            &[
                "SEP1821-PAG",
                "SEP1300-FLT-04",
                "SEARCH-PAG",
                "X-02",
                "X-03",
            ][..],
        ),
        (
            "cursor-duplicates",
            &[
                "BASE-PAGE-01",
                "SEP1821-PAG",
                "SEP1300-FLT-04",
                "SEARCH-PAG",
            ][..],
        ),
        ("search-page-overflow", &["SEARCH-RES-02"][..]),
        ("search-unranked", &["SEARCH-RES-03", "SEARCH-RANK"][..]),
        ("search-missing-query-ok", &["SEARCH-REQ-01"][..]),
        ("search-not-identical", &["SEARCH-RES-04", "X-04"][..]),
        (
            "unknown-method-internal-error",
            &["BASE-ERR-01", "SEARCH-CAP-02", "SEP1300-GRP-02"][..],
        ),
        (
            "bad-params-internal-error",
            &[
                "BASE-ERR-02",
                "SEP1821-NEG-01",
                "SEARCH-REQ-02",
                "SEP1300-NEG-03",
                "CAT-NEG-01",
            ][..],
        ),
        ("parse-error-exit", &["BASE-ERR-03"][..]),
        ("parse-error-silent", &["BASE-ERR-03"][..]),
        ("wrong-id", &["BASE-ID-01"][..]),
        ("tags-list-duplicates", &["SEP1300-TAG-01"][..]),
        ("pd-no-auth", &["PD-AUTH-01"][..]),
        ("pd-shared-auth", &["PD-AUTH-04", "X-05"][..]),
        ("pd-authorize-any", &["PD-AUTH-05"][..]),
        ("pd-missing-selection-ok", &["PD-READ-04"][..]),
        ("pd-extra-tools", &["PD-READ-02"][..]),
        ("pd-case-insensitive", &["PD-READ-03"][..]),
        ("pd-selection-capped", &["PD-READ-02"][..]),
        ("pd-full-schemas-in-list", &["PD-LIST-01", "X-04"][..]),
        ("category-unsorted", &["CAT-02"][..]),
        ("category-non-ascii-unsorted", &["CAT-02"][..]),
        ("category-limit-ignored", &["CAT-03"][..]),
        ("category-counts-hidden", &["CAT-06"][..]),
        (
            "list-changed-missing",
            &[
                "SEP1821-LC-01",
                "SEP1300-LC-01",
                "X-05",
                "GRP-LC-01",
                "GRP-LC-03",
            ][..],
        ),
        ("error-code-string", &["BASE-ERR-04", "BASE-SCHEMA-01"][..]),
        (
            "no-server-info",
            &["BASE-INIT-01", "BASE-SCHEMA-01", "MCP26-INFO-01"][..],
        ),
        ("id-as-float", &["BASE-ID-01"][..]),
        ("id-large-lossy", &["BASE-ID-01"][..]),
        ("id-large-dropped", &["BASE-ID-01"][..]),
        ("invalid-cursor-ok", &["BASE-PAGE-02"][..]),
        ("cursor-trimmed", &["BASE-PAGE-02"][..]),
        ("list-no-input-schema", &["BASE-SCHEMA-01"][..]),
        ("resources-list-no-name", &["BASE-SCHEMA-01"][..]),
        ("stdout-noise", &["BASE-STDIO-01"][..]),
        ("category-bad-args-internal-error", &["CAT-NEG-01"][..]),
        ("category-matches-tags", &["CAT-04"][..]),
        ("category-filter-ignored-with-query", &["CAT-04"][..]),
        ("category-tags-all", &["CAT-05"][..]),
        ("category-total-is-page", &["CAT-01"][..]),
        ("category-shape", &["CAT-01", "CAT-06"][..]),
        ("category-duplicate-matches", &["CAT-01"][..]),
        ("query-drops-filter", &["X-01"][..]),
        ("filter-groups-repeat-drops-next", &["SEP1300-FLT-01"][..]),
        ("query-astral-internal-error", &["SEP1821-Q-04"][..]),
        ("pd-auth-filter-scoped", &["X-04"][..]),
        ("session-varying-results", &["X-06"][..]),
        ("pd-auth-replaced", &["PD-AUTH-02", "PD-AUTH-03"][..]),
        ("pd-first-name-only", &["PD-AUTH-02"][..]),
        ("pd-resource-uri-bare", &["PD-AUTH-02"][..]),
        ("pd-placeholder-schema", &["PD-READ-01"][..]),
        ("pd-terse-resource", &["PD-RES-01"][..]),
        ("search-capability-missing", &["SEARCH-CAP-01"][..]),
        ("search-exposes-hidden", &["SEARCH-SEC-01"][..]),
        (
            "search-mixed-features",
            &["SEARCH-SEC-01", "SEARCH-RES-01"][..],
        ),
        ("search-cursor-drops-query", &["SEARCH-PAG-01"][..]),
        ("search-non-ascii-off-by-one", &["SEARCH-PAG-01"][..]),
        (
            "search-cursor-without-query-ok",
            &["SEARCH-REQ-01", "SEARCH-PAG-01"][..],
        ),
        (
            "filtering-capability-missing",
            &["SEP1300-CAP-01", "SEP1300-GRP-02"][..],
        ),
        ("filtering-list-changed-string", &["SEP1300-CAP-01"][..]),
        ("empty-tags-match-none", &["SEP1300-NEG-01"][..]),
        (
            "filter-reveals-hidden",
            &["SEP1300-FLT-01", "SEP1300-FLT-02"][..],
        ),
        ("filter-entries-stripped", &["SEP1300-FLT-05"][..]),
        (
            "groups-list-duplicates",
            &["SEP1300-GRP-01", "GRP-LIST-01"][..],
        ),
        ("query-capability-missing", &["SEP1821-CAP-01"][..]),
        (
            "query-reveals-hidden",
            &["SEP1821-SEC-01", "SEP1821-Q-02"][..],
        ),
        ("no-instructions", &["SEP1821-DOC-01"][..]),
        ("query-nul-internal-error", &["SEP1821-Q-04"][..]),
        ("http-origin-unchecked", &["HTTP-ORIGIN-01"][..]),
        ("http-notification-200", &["HTTP-NOTIF-01"][..]),
        ("http-version-header-ignored", &["HTTP-VER-01"][..]),
        ("http-session-optional", &["HTTP-SESS-02"][..]),
        ("http-delete-keeps-session", &["HTTP-SESS-03"][..]),
        (
            "http-unknown-session-400",
            &["HTTP-SESS-03", "HTTP-SESS-04"][..],
        ),
        ("http-session-id-spaces", &["HTTP-SESS-01"][..]),
        ("http-get-json", &["HTTP-GET-01"][..]),
        ("http-header-mismatch-500", &["HTTP-HDR-01"][..]),
        ("http-content-type-text", &["HTTP-CT-01"][..]),
        ("http-param-header-unchecked", &["HTTP-HDR-02"][..]),
        ("http-name-not-decoded", &["HTTP-HDR-03"][..]),
        ("http-unknown-method-200", &["HTTP-METHOD-01"][..]),
        ("http-version-mismatch-ok", &["HTTP-VER-02"][..]),
        ("http-session-id-honoured", &["HTTP-STATELESS-01"][..]),
        ("http-delete-400", &["HTTP-STATELESS-01"][..]),
        ("meta-unchecked", &["MCP26-META-01"][..]),
        ("discover-any-version", &["MCP26-VER-01"][..]),
        ("result-type-lists-only", &["MCP26-RT-01"][..]),
        ("read-no-cache-hints", &["MCP26-CACHE-01"][..]),
        ("cache-scope-varies", &["MCP26-CACHE-01"][..]),
        ("resource-missing-empty", &["MCP26-RES-01"][..]),
        ("listen-ack-no-subscription-id", &["MCP26-SUB-01"][..]),
        ("listen-sends-unrequested", &["MCP26-SUB-02"][..]),
        ("tools-list-order-varies", &["MCP26-ORDER-01"][..]),
        ("tools-list-per-connection", &["MCP26-LIST-01", "X-06"][..]),
        ("server-ping-2026", &["MCP26-REQ-01"][..]),
        ("pd-describes-hidden", &["PD-READ-05", "PD-AUTH-05"][..]),
        ("rate-limit-no-recovery", &["SEARCH-RATE-01"][..]),
        ("rate-limit-internal-error", &["SEARCH-RATE-01"][..]),
        ("grouping-capability-missing", &["GRP-DEG-01"][..]),
        ("grouping-list-changed-string", &["GRP-CAP-01"][..]),
        ("grouping-dangling-name", &["GRP-MEM-02", "GRP-X-01"][..]),
        ("grouping-self-member", &["GRP-NEST-01"][..]),
        ("grouping-cycle", &["GRP-NEST-02"][..]),
        ("grouping-no-prompt-membership", &["GRP-MEM-01"][..]),
        ("grouping-cursor-ignored", &["GRP-LIST-02"][..]),
        ("grouping-list-changed-undeclared", &["GRP-LC-02"][..]),
        ("grouping-membership-string", &["GRP-MEM-01"][..]),
        ("grouping-membership-unstable", &["GRP-MEM-04"][..]),
        ("read-wrong-uri", &["CORE-RES-03"][..]),
        ("read-bad-blob", &["CORE-RES-02"][..]),
        ("read-no-text", &["CORE-RES-01", "BASE-SCHEMA-01"][..]),
        ("resource-not-found-internal", &["CORE-RES-04"][..]),
        (
            "template-no-uri-template",
            &["CORE-RES-05", "BASE-SCHEMA-01"][..],
        ),
        ("prompt-bad-role", &["CORE-PROMPT-01"][..]),
        ("prompt-missing-arg-ok", &["CORE-PROMPT-03"][..]),
        ("tool-name-space", &["CORE-TOOL-01"][..]),
        ("input-schema-invalid", &["CORE-TOOL-02"][..]),
        ("output-schema-unmet", &["CORE-TOOL-05"][..]),
        ("unknown-tool-result", &["CORE-TOOL-06"][..]),
        ("ping-not-empty", &["CORE-UTIL-01"][..]),
        ("cancel-answered", &["CORE-UTIL-02", "MCP26-NOTIF-01"][..]),
        ("progress-not-increasing", &["CORE-UTIL-03"][..]),
        ("set-level-echo", &["CORE-LOG-01"][..]),
        ("set-level-unknown-ok", &["CORE-LOG-02"][..]),
        ("log-below-level", &["CORE-LOG-03"][..]),
        ("completion-overflow", &["CORE-COMPL-01"][..]),
        ("completion-unknown-ref-ok", &["CORE-COMPL-02"][..]),
        (
            "notification-answered",
            &["BASE-NOTIF-01", "MCP26-NOTIF-01"][..],
        ),
        ("invalid-request-silent", &["BASE-ERR-05"][..]),
        ("invalid-request-no-id-silent", &["BASE-ERR-05"][..]),
        ("id-zero-dropped", &["BASE-ID-01"][..]),
        ("id-non-ascii-mangled", &["BASE-ID-03"][..]),
        ("ping-needs-initialized", &["CORE-UTIL-04"][..]),
        (
            "tool-invalid-args-ok",
            &["CORE-TOOL-07", "CORE-TOOL-09"][..],
        ),
        ("structured-no-text", &["CORE-TOOL-08"][..]),
        (
            "progress-unrequested",
            &["CORE-UTIL-03", "CORE-UTIL-05"][..],
        ),
        ("stateless-needs-discover", &["MCP26-STATELESS-01"][..]),
        ("log-without-log-level", &["MCP26-LOG-01"][..]),
        (
            "input-requests-undeclared",
            &["MCP26-CAP-01", "MCP26-CAP-02"][..],
        ),
        ("required-capability-no-data", &["MCP26-CAP-01"][..]),
        ("grouping-task-membership-top-level", &["GRP-MEM-01"][..]),
        // Caught only by generated inputs: near misses of the server's own
        // names, combinations of optional arguments, versions at the edges.
        ("tags-trimmed", &["SEP1300-FLT-02"][..]),
        ("pd-names-suffix", &["PD-READ-03"][..]),
        ("category-case-folded", &["CAT-NEG-01", "CAT-04"][..]),
        ("category-limit-ignored-with-category", &["CAT-03"][..]),
        ("category-tags-ignored-without-limit", &["CAT-05"][..]),
        ("version-echo", &["BASE-VER-01"][..]),
        ("old-revision-served", &["MCP26-VER-01"][..]),
        ("reserved-code-undefined", &["MCP26-ERR-01"][..]),
        ("resource-not-found-legacy-code", &["MCP26-ERR-02"][..]),
        ("result-type-unknown", &["MCP26-RT-02"][..]),
        ("input-required-on-completion", &["MCP26-MRTR-01"][..]),
        ("input-required-hollow", &["MCP26-MRTR-02"][..]),
        ("completions-undeclared", &["MCP26-DECL-01"][..]),
        (
            "lists-per-connection",
            &["MCP26-LIST-02", "MCP26-LIST-03"][..],
        ),
        ("server-cancels", &["MCP26-CANCEL-01"][..]),
        ("http-capability-200", &["HTTP-CAP-01"][..]),
        ("http-version-header-optional", &["HTTP-VER-03"][..]),
        ("http-name-unchecked", &["HTTP-HDR-01"][..]),
        ("http-param-raw-accepted", &["HTTP-HDR-04"][..]),
        ("http-param-header-expected", &["HTTP-HDR-05"][..]),
        ("http-x-mcp-header-invalid", &["HTTP-HDR-06"][..]),
    ])
}

/// Faults that act only on a server started with more options. Such a
/// fault runs only the scenarios of its own requirements: the others were
/// not written for a rate-limited server.
fn fault_options(fault: &str) -> &'static [&'static str] {
    match fault {
        "rate-limit-no-recovery" | "rate-limit-internal-error" => &["--rate-limit", "5/s"],
        // The reference's tools/list shows placeholder input schemas (its
        // progressive disclosure): with full ones, tools have required
        // arguments a call can leave out.
        "tool-invalid-args-ok" => &["--fault", "pd-full-schemas-in-list"],
        _ => &[],
    }
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
