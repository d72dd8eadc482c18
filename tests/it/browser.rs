//! The HTML report in a real browser: headless Chromium (driven through
//! chromedriver's WebDriver API) loads the report of a run with failures; the
//! test checks the rendered DOM (counts, filters, a failure's diff visible
//! after a click) and saves a screenshot under target/test-output/.
//! Ignored, with the reason, where Chromium is missing, unless the
//! `browser` prerequisite is required (MCP_CONFORM_REQUIRE_BROWSER=1; CI).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use libtest_mimic::Trial;
use serde_json::{json, Value};

use crate::common;
use crate::prereq::{self, Prereq};

struct Driver {
    child: Child,
    base: String,
    session: String,
    client: reqwest::Client,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}/session/{}{path}", self.base, self.session);
        let mut req = self.client.request(method, &url);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.unwrap_or_else(|e| panic!("{url}: {e}"));
        let v: Value = resp.json().await.unwrap_or_else(|e| panic!("{url}: {e}"));
        assert!(v["value"].get("error").is_none(), "{url}: {v}");
        v["value"].clone()
    }

    async fn find_all(&self, css: &str) -> Vec<String> {
        let v = self
            .call(
                reqwest::Method::POST,
                "/elements",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| {
                e.as_object()
                    .and_then(|o| o.values().next())
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .collect()
    }

    /// Runs `script` in the page (WebDriver's execute/sync) and returns its value.
    async fn script(&self, script: &str) -> Value {
        self.call(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
        .await
    }

    async fn text(&self, element: &str) -> String {
        self.call(
            reqwest::Method::GET,
            &format!("/element/{element}/text"),
            None,
        )
        .await
        .as_str()
        .unwrap_or("")
        .to_string()
    }

    async fn click(&self, element: &str) {
        self.call(
            reqwest::Method::POST,
            &format!("/element/{element}/click"),
            Some(json!({})),
        )
        .await;
    }

    async fn displayed(&self, element: &str) -> bool {
        self.call(
            reqwest::Method::GET,
            &format!("/element/{element}/displayed"),
            None,
        )
        .await
        .as_bool()
        .unwrap_or(false)
    }
}

async fn start_driver(profile_dir: &std::path::Path) -> Driver {
    let port = crate::common::free_port();
    let child = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("chromedriver: {e}"));
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if client.get(format!("{base}/status")).send().await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let caps = json!({"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
        "binary": "/usr/bin/chromium",
        "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 format!("--user-data-dir={}", profile_dir.display()), "--window-size=1280,1600"]
    }}}});
    let v: Value = client
        .post(format!("{base}/session"))
        .json(&caps)
        .send()
        .await
        .unwrap_or_else(|e| panic!("new session: {e}"))
        .json()
        .await
        .unwrap_or_else(|e| panic!("new session: {e}"));
    let session = v["value"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no session: {v}"))
        .to_string();
    Driver {
        child,
        base,
        session,
        client,
    }
}

struct OutcomeCounts {
    /// Rows the page shows: results that applied, one per distinct
    /// (scenario, outcome, message) over the eras.
    rows: usize,
    passed_rows: usize,
    failed_rows: usize,
    failed_runs: usize,
    skipped_runs: usize,
}

fn outcome_counts(report: &Value) -> OutcomeCounts {
    let scenarios = report["scenarios"].as_array().cloned().unwrap_or_default();
    let mut rows: Vec<(String, String, String)> = Vec::new();
    for s in &scenarios {
        let key = (
            s["id"].as_str().unwrap_or("").to_string(),
            s["outcome"].as_str().unwrap_or("").to_string(),
            s["message"].as_str().unwrap_or("").to_string(),
        );
        if key.1 != "skip" && !rows.contains(&key) {
            rows.push(key);
        }
    }
    let runs = |o: &str| {
        scenarios
            .iter()
            .filter(|s| s["outcome"].as_str() == Some(o))
            .count()
    };
    OutcomeCounts {
        rows: rows.len(),
        passed_rows: rows.iter().filter(|r| r.1 == "pass").count(),
        failed_rows: rows.iter().filter(|r| r.1 == "fail").count(),
        failed_runs: runs("fail"),
        skipped_runs: runs("skip"),
    }
}

pub fn trials() -> Vec<Trial> {
    vec![
        prereq::trial(
            "browser::html_report_renders_and_expands_a_failure",
            Prereq::Browser,
            prereq::browser,
            html_report_renders_and_expands_a_failure,
        ),
        prereq::trial(
            "browser::html_report_leads_with_its_failures",
            Prereq::Browser,
            prereq::browser,
            html_report_leads_with_its_failures,
        ),
        prereq::trial(
            "browser::quality_report_draws_its_charts",
            Prereq::Browser,
            prereq::browser,
            quality_report_draws_its_charts,
        ),
    ]
}

/// `mcp-conform quality --report-html`: one inline SVG chart per surface,
/// server and baseline bars for each of the five metrics, the rank
/// distribution, drawn with no script at all.
fn quality_report_draws_its_charts() {
    let dir = common::output_dir("quality-browser");
    let report = dir.join("quality.html");
    let out = common::cli(&[
        "quality",
        "--max-queries",
        "20",
        "--report-html",
        &report.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", common::text(&out.stderr));
    common::runtime().block_on(async {
        let driver = start_driver(&dir.join("chrome-profile")).await;
        driver
            .call(
                reqwest::Method::POST,
                "/url",
                Some(json!({"url": format!("file://{}", report.display())})),
            )
            .await;
        assert!(driver.find_all("script").await.is_empty(), "no script");
        let charts = driver.find_all("svg.quality-chart").await;
        assert_eq!(charts.len(), 5, "one chart per surface of the reference");
        assert!(driver.displayed(&charts[0]).await);
        assert_eq!(
            driver
                .find_all("svg.quality-chart rect.bar.server")
                .await
                .len(),
            25
        );
        assert_eq!(
            driver
                .find_all("svg.quality-chart rect.bar.baseline")
                .await
                .len(),
            25
        );
        assert_eq!(
            driver
                .find_all("svg.quality-chart rect.rank.server")
                .await
                .len(),
            30
        );
        let shot = driver.call(reqwest::Method::GET, "/screenshot", None).await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot.as_str().unwrap_or(""))
            .unwrap_or_default();
        assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
        std::fs::write(dir.join("quality.png"), png).unwrap_or_else(|e| panic!("{e}"));
        driver.call(reqwest::Method::DELETE, "", None).await;
    });
}

fn html_report_renders_and_expands_a_failure() {
    let dir = common::output_dir("html-browser");
    let report = dir.join("report.html");
    let r = report.display().to_string();
    let json_report = dir.join("report.json");
    let j = json_report.display().to_string();
    // Every era: a failure in each of them is one row naming them all. A
    // server that offers no draft: their scenarios fold into the skips.
    let tiny = common::root().join("fixtures/servers/tiny_server.py");
    let tiny = tiny.display().to_string();
    let out = common::run_cli(&[
        "-q",
        "-p",
        "base",
        "-p",
        "sep-1300",
        "--report-html",
        &r,
        "--report-json",
        &j,
        "--",
        common::python3(),
        &tiny,
        "--break",
        "wrong-id",
        "--break",
        "unknown-method-ok",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", common::text(&out.stderr));
    // The page must show what the same run's JSON report holds.
    let expected = outcome_counts(&common::assert_valid_report(&json_report));
    assert!(
        expected.failed_rows > 0 && expected.failed_runs > expected.failed_rows,
        "the faults fail base scenarios in several eras"
    );
    assert!(expected.skipped_runs > 0, "sep-1300 is not offered");
    let rt = common::runtime();
    rt.block_on(async {
        let driver = start_driver(&dir.join("chrome-profile")).await;
        driver
            .call(
                reqwest::Method::POST,
                "/url",
                Some(json!({"url": format!("file://{}", report.display())})),
            )
            .await;
        let failed = driver.find_all("#count-failed").await;
        assert_eq!(
            driver.text(&failed[0]).await,
            format!("{} failed", expected.failed_runs)
        );
        assert_eq!(
            driver.find_all(".scenario").await.len(),
            expected.rows,
            "one row per distinct result that applied"
        );
        let heads = driver.find_all(".scenario.o-fail .head").await;
        assert_eq!(
            heads.len(),
            expected.failed_rows,
            "a failure in three eras is one row"
        );
        let eras = driver.find_all(".scenario.o-fail .eras").await;
        assert_eq!(
            driver.text(&eras[0]).await,
            "protocol 2025-06-18, 2025-11-25, 2026-07-28"
        );
        // Era and profile counts are separate tables; skips fold per reason.
        assert_eq!(driver.find_all("table.eras").await.len(), 1);
        let profile_rows = driver.find_all("table.by-profile tr").await;
        assert_eq!(
            profile_rows.len(),
            3,
            "a header, the base profile and the core profile"
        );
        let not_offered = driver.find_all("ul.not-offered li").await;
        if let Some(first) = not_offered.first() {
            assert!(
                driver.text(first).await.contains(": "),
                "a profile not offered, with its reason"
            );
        }
        let groups = driver.find_all("details.skip-group").await;
        assert!(!groups.is_empty(), "skips are folded per reason");
        let ids = driver.find_all("details.skip-group .skip-ids").await;
        assert!(!driver.displayed(&ids[0]).await, "skipped ids on demand");
        let diffs = driver.find_all(".scenario.o-fail pre.diff").await;
        assert!(
            !driver.displayed(&diffs[0]).await,
            "diffs are collapsed at first"
        );
        driver.click(&heads[0]).await;
        assert!(
            driver.displayed(&diffs[0]).await,
            "the diff shows after a click"
        );
        let added = driver.find_all(".scenario.o-fail.open pre.diff .add").await;
        assert!(!added.is_empty(), "diff lines are coloured");
        let summaries = driver.find_all("details.skip-group > summary").await;
        driver.click(&summaries[0]).await;
        assert!(
            driver.displayed(&ids[0]).await,
            "a click shows the skipped ids"
        );
        let shot = driver.call(reqwest::Method::GET, "/screenshot", None).await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot.as_str().unwrap_or(""))
            .unwrap_or_default();
        assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
        std::fs::write(dir.join("report.png"), png).unwrap_or_else(|e| panic!("{e}"));
        // Filters: hiding passed scenarios leaves the others.
        let pass_box = driver
            .find_all("input[data-filter=outcome][value=pass]")
            .await;
        driver.click(&pass_box[0]).await;
        let left = driver.find_all(".scenario").await.len();
        assert_eq!(
            left,
            expected.rows - expected.passed_rows,
            "only the results that did not pass remain after hiding passes"
        );
        driver.call(reqwest::Method::DELETE, "", None).await;
    });
}

/// What the page computes about its problem cards and result rows, in one
/// script: DOM order of the first failure card against the counts and the
/// results list, its top against a laptop's viewport, the outcome of each
/// row in order, and the level beside each card's outcome.
const LAYOUT: &str = r#"
const cards = [...document.querySelectorAll('#problems .problem')];
const first = document.querySelector('#problems .problem.o-fail');
const before = (a, b) => !!(a && b && (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING));
return {
  cards: cards.map(c => [c.dataset.outcome, c.querySelector('.level').textContent, c.dataset.id]),
  firstTop: first ? first.getBoundingClientRect().top : -1,
  viewport: window.innerHeight,
  beforeCounts: before(first, document.getElementById('counts')),
  beforeResults: before(first, document.getElementById('scenarios')),
  quote: first ? first.querySelectorAll('blockquote').length : 0,
  evidence: first ? first.querySelectorAll('.evidence').length : 0,
  rows: [...document.querySelectorAll('#scenarios .scenario')].map(r => r.dataset.outcome),
  rowLevels: [...document.querySelectorAll('#scenarios .scenario')].map(r => [r.dataset.outcome, r.querySelector('.level').textContent]),
};
"#;

/// The HTML report of a run with failures (the reference server with two
/// faults) leads with what to fix: the first failure's card comes before
/// the counts and the results and is on screen without scrolling in a
/// 1280x800 window; the cards are failures then warnings, each with its
/// quote and evidence; the results list runs failures, warnings, info,
/// passes; no failure is shown beside SHOULD, no warning beside MUST.
fn html_report_leads_with_its_failures() {
    let dir = common::output_dir("html-browser-fix-first");
    let report = dir.join("report.html");
    let r = report.display().to_string();
    let json_report = dir.join("report.json");
    let j = json_report.display().to_string();
    let out = common::run_cli(&[
        "-q",
        "-p",
        "base",
        "--report-html",
        &r,
        "--report-json",
        &j,
        "--",
        common::bin(),
        "serve-reference",
        "--fault",
        "wrong-id",
        "--fault",
        "unknown-method-internal-error",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", common::text(&out.stderr));
    let json = common::assert_valid_report(&json_report);
    let expected = outcome_counts(&json);
    assert!(expected.failed_rows > 0, "the faults fail base scenarios");
    // In catalog order a pass comes before a failure: the page reorders.
    let outcomes: Vec<&str> = json["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["outcome"].as_str())
        .collect();
    let last_fail = outcomes.iter().rposition(|o| *o == "fail");
    assert!(
        matches!((outcomes.iter().position(|o| *o == "pass"), last_fail), (Some(p), Some(f)) if p < f),
        "the test needs a pass before a failure in catalog order: {outcomes:?}"
    );
    common::runtime().block_on(async {
        let driver = start_driver(&dir.join("chrome-profile")).await;
        driver
            .call(
                reqwest::Method::POST,
                "/window/rect",
                Some(json!({"width": 1280, "height": 800})),
            )
            .await;
        driver
            .call(
                reqwest::Method::POST,
                "/url",
                Some(json!({"url": format!("file://{}", report.display())})),
            )
            .await;
        let v = driver.script(LAYOUT).await;
        let cards = v["cards"].as_array().cloned().unwrap_or_default();
        assert!(!cards.is_empty(), "no problem cards: {v}");
        assert_eq!(cards[0][0], "fail", "the first card is a failure: {v}");
        assert!(
            v["beforeCounts"] == true && v["beforeResults"] == true,
            "{v}"
        );
        let (top, viewport) = (
            v["firstTop"].as_f64().unwrap_or(-1.0),
            v["viewport"].as_f64().unwrap_or(0.0),
        );
        assert!(
            top >= 0.0 && top < viewport,
            "the first failure is above the fold: top {top}, viewport {viewport}"
        );
        assert!(
            v["quote"].as_u64() >= Some(1) && v["evidence"] == 1,
            "quote and evidence: {v}"
        );
        let outcomes: Vec<&str> = cards.iter().filter_map(|c| c[0].as_str()).collect();
        let warn_at = outcomes
            .iter()
            .position(|o| *o == "warn")
            .unwrap_or(outcomes.len());
        assert!(
            outcomes[warn_at..].iter().all(|o| *o == "warn"),
            "failures, then warnings: {outcomes:?}"
        );
        let rank = |o: &str| {
            ["fail", "error", "warn", "info", "pass"]
                .iter()
                .position(|x| *x == o)
        };
        let rows: Vec<Option<usize>> = v["rows"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|o| rank(o.as_str().unwrap_or("")))
            .collect();
        assert_eq!(rows.len(), expected.rows, "{v}");
        assert!(
            rows.windows(2).all(|w| w[0] <= w[1]),
            "rows lead with failures: {v}"
        );
        let pairs = cards
            .iter()
            .chain(v["rowLevels"].as_array().into_iter().flatten());
        for pair in pairs {
            let (outcome, level) = (
                pair[0].as_str().unwrap_or(""),
                pair[1].as_str().unwrap_or(""),
            );
            assert!(
                !matches!((outcome, level), ("warn", "MUST") | ("fail", "SHOULD")),
                "{outcome} shown beside {level}: {pair}"
            );
        }
        let shot = driver.call(reqwest::Method::GET, "/screenshot", None).await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot.as_str().unwrap_or(""))
            .unwrap_or_default();
        assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
        std::fs::write(dir.join("report-top.png"), png).unwrap_or_else(|e| panic!("{e}"));
        driver.call(reqwest::Method::DELETE, "", None).await;
    });
}
