//! reports/reference.{json,md,html} are the committed reports of the built-in
//! reference server; they must describe the current scenario catalog.
//! Regenerate with scripts/regenerate-reports.sh.

use crate::common;

use std::collections::BTreeMap;

fn committed_reference_reports_match_the_catalog() {
    let path = common::root().join("reports/reference.json");
    let report = common::assert_valid_report(&path);
    let in_report: BTreeMap<String, (String, String, String)> = report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            (
                s["id"].as_str().unwrap_or("").to_string(),
                (
                    s["title"].as_str().unwrap_or("").to_string(),
                    s["level"].as_str().unwrap_or("").to_string(),
                    s["requirements"].to_string(),
                ),
            )
        })
        .collect();
    let catalog: BTreeMap<String, (String, String, String)> = mcp_conform::builtin::scenarios()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|s| {
            (
                s.id.clone(),
                (
                    s.title.clone(),
                    s.level.as_str().to_string(),
                    serde_json::to_string(&s.requirements).unwrap_or_default(),
                ),
            )
        })
        .collect();
    let stale: Vec<String> = catalog
        .iter()
        .filter(|(id, v)| in_report.get(*id) != Some(v))
        .map(|(id, _)| id.clone())
        .chain(
            in_report
                .keys()
                .filter(|id| !catalog.contains_key(*id))
                .cloned(),
        )
        .collect();
    assert!(
        stale.is_empty(),
        "reports/reference.json is out of date for {stale:?}: run scripts/regenerate-reports.sh"
    );
    let failed = report["summary"]["overall"]["failed"].as_u64().unwrap_or(1)
        + report["summary"]["overall"]["warned"].as_u64().unwrap_or(1);
    assert_eq!(
        failed, 0,
        "the committed reference report shows failures or warnings"
    );
    for other in ["reports/reference.md", "reports/reference.html"] {
        assert!(common::root().join(other).is_file(), "{other} is missing");
    }
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![committed_reference_reports_match_the_catalog]
}
