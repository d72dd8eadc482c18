//! The JUnit XML report validates against schemas/junit.xsd, checked
//! with xmllint on the same fixed run as tests/it/reports.rs (the base
//! profile against the reference server with two faults). Ignored, with the
//! reason, where xmllint is missing (unless the `xmllint` prerequisite is
//! required).

use libtest_mimic::Trial;

use crate::common;
use crate::prereq::{self, Prereq};

pub fn trials() -> Vec<Trial> {
    vec![prereq::trial(
        "junit_xsd::the_junit_report_is_valid_against_its_xsd",
        Prereq::Xmllint,
        prereq::xmllint,
        the_junit_report_is_valid_against_its_xsd,
    )]
}

fn the_junit_report_is_valid_against_its_xsd() {
    let dir = common::output_dir("junit-xsd");
    let junit = dir.join("junit.xml");
    let j = junit.display().to_string();
    let out = common::run_cli(&[
        "-j",
        "1",
        "-p",
        "base",
        "--protocol-version",
        "2026-07-28",
        "--report-junit",
        &j,
        "--",
        common::bin(),
        "serve-reference",
        "--fault",
        "wrong-id",
        "--fault",
        "unknown-method-internal-error",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let xsd = common::root().join("schemas/junit.xsd");
    let check = std::process::Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(&xsd)
        .arg(&junit)
        .output()
        .unwrap_or_else(|e| panic!("xmllint: {e}"));
    assert!(
        check.status.success(),
        "JUnit XML is not valid against junit.xsd:\n{}",
        String::from_utf8_lossy(&check.stderr)
    );
}
