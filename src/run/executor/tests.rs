//! The executor against the reference server running in the same process:
//! small scenarios written inline, each run to its verdict in milliseconds.

use std::time::Duration;

use serde_json::json;

use super::{run_scenario, RunConfig};
use crate::reference::{Config, Fault};
use crate::run::outcome::{Outcome, ScenarioResult};
use crate::run::target::Target;
use crate::scenario::load::load_str;
use crate::session::Era;

const FILE: &str = "unit.yaml";

/// A scenario of `steps` (and `extra` top-level keys), at level MUST.
fn scenario(extra: &str, steps: &str) -> crate::scenario::model::Scenario {
    let text = format!(
        "id: base/unit-test\ntitle: a unit test\nprofile: base\nlevel: MUST\n{extra}steps:\n{steps}"
    );
    load_str(FILE, &text).unwrap_or_else(|e| panic!("the test scenario loads: {e}\n{text}"))
}

/// Runs `steps` against a fresh in-process reference server with `faults`.
async fn run(faults: &[Fault], steps: &str) -> ScenarioResult {
    run_with(faults, "", steps).await
}

/// Runs `steps` on a server without faults and asserts the scenario passes.
async fn assert_passes(steps: &str) {
    let r = run(&[], steps).await;
    assert_eq!(r.outcome, Outcome::Pass, "{}: {:?}", r.message, r.findings);
}

/// [`run`] with `extra` top-level keys in the scenario.
async fn run_with(faults: &[Fault], extra: &str, steps: &str) -> ScenarioResult {
    let config = Config {
        faults: faults.iter().copied().collect(),
        ..Config::default()
    };
    run_scenario(&scenario(extra, steps), &isolated(config)).await
}

/// A run on a fresh in-process reference server of `config`, in 2025-11-25.
fn isolated(config: Config) -> RunConfig {
    RunConfig::isolated(
        Target::InProcess(config),
        Era::new("2025-11-25"),
        json!({"capabilities": {"tools": {}}}),
        Duration::from_secs(5),
        true,
    )
}

#[tokio::test]
async fn a_matching_expect_passes() {
    let r = run(
        &[],
        r#"
  - id: list
    request: tools/list
    expect:
      result: { tools: { $type: array } }
"#,
    )
    .await;
    assert_eq!(r.outcome, Outcome::Pass, "{}: {:?}", r.message, r.findings);
    assert!(r.findings.is_empty());
    assert!(!r.transcript.is_empty(), "the exchange is kept");
}

#[tokio::test]
async fn a_failing_expect_points_at_its_leaf() {
    let r = run(
        &[Fault::UnknownMethodInternalError],
        r#"
  - request: ping
    expect:
      result: {}
  - id: unknown
    request: no/such/method
    expect:
      error: { code: -32601 }
"#,
    )
    .await;
    assert_eq!(r.outcome, Outcome::Fail);
    let [f] = r.findings.as_slice() else {
        panic!("one finding: {:?}", r.findings);
    };
    assert_eq!(f.step.as_deref(), Some("step 'unknown'"));
    assert_eq!(f.step_id.as_deref(), Some("steps[1].expect.error.code"));
    assert_eq!(f.location.as_deref(), Some("unit.yaml:13:22"));
    assert_eq!(f.path.as_deref(), Some("error.code"));
    assert!(
        f.message.contains("expected -32601, found -32603"),
        "{}",
        f.message
    );
}

#[tokio::test]
async fn a_false_assertion_fails_with_its_message_filled_in() {
    let r = run(
        &[],
        r#"
  - id: list
    request: tools/list
    assert:
      - expr: "size(list.result.tools) > 1000"
        message: "only ${size(list.result.tools)} tools on the first page"
"#,
    )
    .await;
    assert_eq!(r.outcome, Outcome::Fail);
    let [f] = r.findings.as_slice() else {
        panic!("one finding: {:?}", r.findings);
    };
    assert_eq!(f.message, "only 50 tools on the first page");
    assert_eq!(f.step_id.as_deref(), Some("steps[0].assert[0]"));
    assert_eq!(
        f.expected,
        Some(json!("size(list.result.tools) > 1000")),
        "the finding quotes the assertion"
    );
}

#[tokio::test]
async fn a_capture_feeds_a_later_step() {
    assert_passes(
        r#"
  - id: list
    request: tools/list
    capture:
      name: "list.result.tools[0].name"
  - id: described
    request: tools/list
    params: { query: "${name}" }
    assert:
      - expr: "described.request.params.query == name"
      - expr: "described.result.tools.exists(t, t.name == name)"
        message: "a query for ${name} does not find it"
"#,
    )
    .await;
}

#[tokio::test]
async fn skip_unless_makes_the_scenario_not_applicable() {
    let r = run(
        &[],
        r#"
  - id: list
    request: tools/list
    skip_unless:
      expr: "size(list.result.tools) > 1000"
      reason: "needs 1000 tools, the first page has ${size(list.result.tools)}"
  - request: no/such/method
    expect:
      result: {}
"#,
    )
    .await;
    assert_eq!(r.outcome, Outcome::Skip);
    assert_eq!(r.message, "needs 1000 tools, the first page has 50");
    assert!(r.findings.is_empty(), "later steps do not run");
}

#[tokio::test]
async fn a_paginated_walk_joins_every_page() {
    assert_passes(
        r#"
  - id: all
    request: tools/list
    paginate: tools
    assert:
      - expr: "all.page_count == 3 && size(all.pages) == 3"
        message: "${all.page_count} pages"
      - expr: "size(all.result.tools) == 106 && unique(all.result.tools.map(t, t.name))"
        message: "${size(all.result.tools)} tools"
      - expr: "!has(all.result.nextCursor)"
"#,
    )
    .await;
}

#[tokio::test]
async fn a_walk_that_does_not_end_is_a_finding_on_its_step() {
    let r = run(
        &[Fault::GroupingCursorIgnored],
        r#"
  - id: groups
    request: groups/list
    paginate: groups
"#,
    )
    .await;
    assert_eq!(r.outcome, Outcome::Fail);
    let [f] = r.findings.as_slice() else {
        panic!("one finding: {:?}", r.findings);
    };
    assert!(
        f.message
            .starts_with("pagination of groups/list does not terminate: cursor")
            && f.message.ends_with("came back after 2 pages"),
        "{}",
        f.message
    );
    assert_eq!(f.step_id.as_deref(), Some("steps[0]"));
    assert_eq!(
        f.actual.as_ref().and_then(|a| a.get("page_count")),
        Some(&json!(2))
    );
}

#[tokio::test]
async fn a_fault_makes_the_check_that_targets_it_fail() {
    let steps = r#"
  - id: found
    request: tools/list
    params: { query: "qqxyzzyqq" }
    assert:
      - expr: "size(found.result.tools) == 0"
        message: "a query that matches nothing returns ${size(found.result.tools)} tools"
"#;
    let clean = run(&[], steps).await;
    assert_eq!(clean.outcome, Outcome::Pass, "{:?}", clean.findings);
    let broken = run(&[Fault::IgnoreQuery], steps).await;
    assert_eq!(broken.outcome, Outcome::Fail);
    assert_eq!(
        broken.message,
        "step 'found': a query that matches nothing returns 50 tools"
    );
}

#[tokio::test]
async fn a_scenario_level_assert_and_a_should_level_warn() {
    let r = run_with(
        &[],
        "assert:\n  - expr: \"size(list.result.tools) == 0\"\n    level: SHOULD\n    message: \"the list is not empty\"\n",
        r#"
  - id: list
    request: tools/list
"#,
    )
    .await;
    assert_eq!(r.outcome, Outcome::Warn, "{:?}", r.findings);
    assert_eq!(r.findings[0].step_id.as_deref(), Some("assert[0]"));
}

/// A setup capture that fails (a warning, the scenario being SHOULD)
/// leaves the generator's list undefined: the capture's warning is the
/// verdict, not a harness error (it was `error`: "the list of 'v' could
/// not be evaluated").
#[tokio::test]
async fn a_generator_list_a_failed_capture_left_undefined_keeps_that_captures_verdict() {
    let text = "id: base/unit-test\ntitle: t\nprofile: base\nlevel: SHOULD\nsteps:\n  - id: r\n    request: ping\n    capture:\n      xs: \"r.result.items\"\ngenerate:\n  cases: 2\n  vars:\n    v: { pick: \"xs\" }\n  steps:\n    - request: ping\n";
    let s = load_str(FILE, text).unwrap_or_else(|e| panic!("the test scenario loads: {e}"));
    let r = run_scenario(&s, &isolated(Config::default())).await;
    assert_eq!(r.outcome, Outcome::Warn, "{}: {:?}", r.message, r.findings);
    assert!(
        r.findings[0].message.contains("capture 'xs'"),
        "{:?}",
        r.findings
    );
}

/// A setup step (it checks nothing of its answer) whose request was
/// refused leaves the scenario not exercised when a capture needs the
/// result, as the probe's refused listing does in a default run: under
/// `stateless-needs-discover` over HTTP with `--isolate`, five property
/// scenarios failed at "No such key: result" and skipped by default.
#[tokio::test]
async fn a_refused_setup_step_whose_result_a_capture_needs_is_not_exercised() {
    let r = run(
        &[],
        r#"
  - id: all
    request: no/such/list
    paginate: items
    capture:
      names: "all.result.items.map(i, i.name)"
  - request: ping
    expect:
      result: {}
"#,
    )
    .await;
    assert_eq!(r.outcome, Outcome::Skip, "{}: {:?}", r.message, r.findings);
    assert!(
        r.message
            .contains("step 'all': no/such/list was refused (-32601")
            && r.message.contains("capture 'names' needs its result"),
        "{}",
        r.message
    );
}

/// A later step's capture that reads the refused setup step's answer
/// decides the same way (search/property-search lists in one step and
/// reads the listing in the next); one that reads nothing refused stays a
/// finding.
#[tokio::test]
async fn a_later_capture_of_a_refused_setup_step_is_not_exercised_either() {
    let r = run(
        &[],
        r#"
  - id: lt
    request: no/such/list
  - capture:
      names: "lt.result.items.map(i, i.name)"
"#,
    )
    .await;
    assert_eq!(r.outcome, Outcome::Skip, "{}: {:?}", r.message, r.findings);
    assert!(
        r.message.contains("step 'lt': no/such/list was refused"),
        "{}",
        r.message
    );
    let r = run(
        &[],
        r#"
  - id: lt
    request: no/such/list
  - id: p
    request: ping
  - capture:
      names: "p.result.items"
"#,
    )
    .await;
    assert_eq!(r.outcome, Outcome::Fail, "{}: {:?}", r.message, r.findings);
}

/// A step that checks its answer keeps every finding: its refused request
/// is the failure its `expect` or `assert` is about.
#[tokio::test]
async fn a_refused_step_that_checks_its_answer_still_fails() {
    for check in [
        "expect:\n      result: { items: { $type: array } }",
        "assert:\n      - expr: \"has(all.result)\"",
    ] {
        let steps = format!(
            "\n  - id: all\n    request: no/such/list\n    capture:\n      names: \"all.result.items\"\n    {check}\n"
        );
        let r = run(&[], &steps).await;
        assert_eq!(
            r.outcome,
            Outcome::Fail,
            "{check}: {}: {:?}",
            r.message,
            r.findings
        );
    }
}

/// A property case's step is not setup: a refused generated request whose
/// capture finds no result stays a finding of that case.
#[tokio::test]
async fn a_refused_request_of_a_property_case_stays_a_finding() {
    let text = "id: base/unit-test\ntitle: t\nprofile: base\nlevel: MUST\nsteps:\n  - request: ping\ngenerate:\n  cases: 2\n  vars:\n    v: { pick: \"[1, 2]\" }\n  steps:\n    - id: c\n      request: no/such/method\n      capture:\n        got: \"c.result.v\"\n";
    let s = load_str(FILE, text).unwrap_or_else(|e| panic!("the test scenario loads: {e}"));
    let r = run_scenario(&s, &isolated(Config::default())).await;
    assert_eq!(r.outcome, Outcome::Fail, "{}: {:?}", r.message, r.findings);
}

/// Each run validates against its own `--mcp-schema`: two runs in one
/// process, at the same time, with different user schemas (one the answer
/// breaks, one it meets) and none, each get their own verdict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_run_validates_against_its_own_user_schema() {
    use crate::schema::Schemas;
    let demanding = |field: &str| {
        let root = json!({"$defs": {"ListToolsResult": {"required": [field]}}});
        Schemas::with_user(&format!("{field}.json"), root).unwrap_or_else(|e| panic!("{e}"))
    };
    let s = scenario(
        "",
        r#"
  - id: list
    request: tools/list
  - assert:
      - expr: "size(schema_errors(list.result, 'ListToolsResult')) == 0"
        message: "${schema_errors(list.result, 'ListToolsResult')}"
"#,
    );
    let run_under = |schemas: Schemas| {
        let mut cfg = isolated(Config::default());
        cfg.schemas = schemas;
        let s = s.clone();
        tokio::spawn(async move { run_scenario(&s, &cfg).await })
    };
    let runs = [
        run_under(demanding("nonsense")),
        run_under(demanding("tools")),
        run_under(Schemas::default()),
    ];
    let mut results = Vec::new();
    for run in runs {
        results.push(run.await.unwrap_or_else(|e| panic!("{e}")));
    }
    assert_eq!(
        results[0].outcome,
        Outcome::Fail,
        "{:?}",
        results[0].findings
    );
    assert!(
        results[0].message.contains("schema nonsense.json: (root):"),
        "{}",
        results[0].message
    );
    for r in &results[1..] {
        assert_eq!(r.outcome, Outcome::Pass, "{}: {:?}", r.message, r.findings);
    }
}

/// Runs `steps` on a server of its own (isolation: fresh) in a run whose
/// shared store holds a one-tool walk of `tools/list` no server gave, and
/// asserts the scenario passes.
async fn passes_beside_stored_walk(steps: &str) {
    let store = crate::run::walks::WalkCache::default();
    // A step carries the stateless era's `_meta` unless it says `meta: false`.
    let key = crate::run::walks::WalkCache::request_key("tools/list", None, true);
    store.put(
        &key,
        &json!({ "jsonrpc": "2.0", "id": 1, "result": { "tools": [{ "name": "from-store" }] } })
            .into(),
    );
    let mut cfg = isolated(Config::default());
    cfg.walks = Some(std::sync::Arc::new(store));
    let r = run_scenario(&scenario("isolation: fresh\n", steps), &cfg).await;
    assert_eq!(r.outcome, Outcome::Pass, "{}: {:?}", r.message, r.findings);
}

#[tokio::test]
async fn a_fresh_scenario_that_only_listed_so_far_takes_the_stored_walk() {
    passes_beside_stored_walk(
        r#"
  - request: resources/list
    paginate: resources
  - id: all
    request: tools/list
    paginate: tools
    assert:
      - expr: "all.result.tools.map(t, t.name) == ['from-store']"
        message: "the walk came from the server: ${all.result.tools.map(t, t.name)}"
"#,
    )
    .await;
}

#[tokio::test]
async fn a_fresh_scenario_walks_itself_once_it_did_more_than_list() {
    passes_beside_stored_walk(
        r#"
  - notify: notifications/roots/list_changed
  - id: all
    request: tools/list
    paginate: tools
    assert:
      - expr: "!all.result.tools.exists(t, t.name == 'from-store')"
        message: "a walk after a notification came from the store"
"#,
    )
    .await;
}

/// `versions.run` names the eras of the run, with or without probe facts
/// (`--isolate` has none), and a configuration of its own stands for its era.
#[test]
fn versions_run_names_the_eras_of_the_run() {
    let run = vec!["2025-06-18".to_string(), "2025-11-25".to_string()];
    let versions = super::protocol_versions(None, &run);
    assert_eq!(versions["run"], json!(["2025-06-18", "2025-11-25"]));
    assert_eq!(versions["spoken"], json!([]));
    let cfg = RunConfig::isolated(
        Target::InProcess(Config::default()),
        Era::new("2025-06-18"),
        json!({}),
        Duration::from_secs(5),
        false,
    );
    assert_eq!(cfg.run_eras, vec!["2025-06-18".to_string()]);
}
