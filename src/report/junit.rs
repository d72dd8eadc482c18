//! JUnit XML (`--report-junit`): one testsuite per profile, one testcase per
//! scenario. fail/error → failure/error with the message and diff; warn → a
//! passing testcase with a system-out note (a failure under --strict); skip →
//! skipped with the reason.

use std::collections::BTreeMap;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::data::ReportData;
use crate::run::outcome::{Outcome, ScenarioResult};

/// The console's account of a scenario, plain and whole: one renderer of
/// the evidence for both.
fn details(r: &ScenarioResult) -> String {
    super::console::plain_details(r)
}

fn case(r: &ScenarioResult, strict: bool, several_eras: bool) -> TestCase {
    let failure = |kind: NonSuccessKind| {
        let mut status = TestCaseStatus::non_success(kind);
        status.set_message(r.message.clone());
        status.set_type(format!("{} {}", r.shown().level, r.outcome));
        status.set_description(details(r));
        status
    };
    let status = match r.outcome {
        Outcome::Error => failure(NonSuccessKind::Error),
        o if o.fails(strict) => failure(NonSuccessKind::Failure),
        Outcome::Skip => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(r.message.clone());
            s
        }
        _ => TestCaseStatus::success(),
    };
    let name = if several_eras {
        format!("{} [{}]", r.id, r.era)
    } else {
        r.id.clone()
    };
    let mut case = TestCase::new(name, status);
    case.set_classname(format!("mcp-conform.{}", r.profile));
    case.set_time(Duration::from_millis(r.duration_ms));
    let shown = r.shown();
    case.add_property(("level", shown.level.as_str()));
    if !r.era.is_empty() {
        case.add_property(("protocolVersion", r.era.as_str()));
    }
    if !shown.requirements.is_empty() {
        case.add_property(("requirements", shown.requirements.join(",").as_str()));
    }
    if matches!(r.outcome, Outcome::Warn | Outcome::Info) && !r.outcome.fails(strict) {
        case.set_system_out(format!("{}: {}\n{}", r.outcome, r.message, details(r)));
    }
    case
}

/// The report as JUnit XML.
pub fn render(data: &ReportData) -> String {
    let mut report = Report::new("mcp-conform");
    report.set_time(Duration::from_millis(data.summary.duration_ms));
    let mut suites: BTreeMap<&str, TestSuite> = BTreeMap::new();
    for r in &data.scenarios {
        let suite = suites.entry(r.profile.as_str()).or_insert_with(|| {
            let mut s = TestSuite::new(r.profile.clone());
            s.add_property(("target", data.run.target.as_str()));
            s.add_property(("protocolVersion", data.eras_text().as_str()));
            s
        });
        suite.add_test_case(case(r, data.strict, data.run.eras.len() > 1));
    }
    for (_, mut suite) in suites {
        let ms: u64 = data
            .scenarios
            .iter()
            .filter(|r| r.profile == suite.name.as_str())
            .map(|r| r.duration_ms)
            .sum();
        suite.set_time(Duration::from_millis(ms));
        report.add_test_suite(suite);
    }
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- cannot render JUnit: {e} -->"))
}
