//! Reports and CI gating end to end: JSON (schema-valid), JUnit (parsed; its
//! XSD check is `junit_xsd`, which needs xmllint), Markdown and console snapshots,
//! baselines, shards and merge, matrix.

use crate::common;

use std::path::Path;

use crate::common::{assert_valid_report, output_dir, redact, run_cli};

const FAULTS: [&str; 6] = [
    "--",
    "PLACEHOLDER",
    "serve-reference",
    "--fault",
    "wrong-id",
    "--fault",
];

/// A fixed run: the base profile against the reference server with two faults.
fn fixed_run(dir: &Path, extra: &[&str]) -> std::process::Output {
    let dir = dir.display().to_string();
    // One era keeps the fixed run's reports small and stable.
    let mut args = vec![
        "-j",
        "1",
        "-p",
        "base",
        "--protocol-version",
        "2026-07-28",
        "--report-dir",
        &dir,
    ];
    args.extend_from_slice(extra);
    let mut server = FAULTS.to_vec();
    server[1] = common::bin();
    server.push("unknown-method-internal-error");
    args.extend(server);
    run_cli(&args)
}

fn every_format_is_written_and_valid() {
    let dir = output_dir("reports-fixed");
    let out = fixed_run(&dir, &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = assert_valid_report(&dir.join("report.json"));
    assert_eq!(report["format"], "mcp-conform/report@1");
    // --report-dir writes all five formats.
    for name in ["junit.xml", "report.md", "report.html", "report.sarif"] {
        assert!(dir.join(name).is_file(), "--report-dir wrote no {name}");
    }
    let sarif: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("report.sarif")).unwrap_or_default(),
    )
    .unwrap_or_else(|e| panic!("report.sarif: {e}"));
    assert_eq!(sarif["version"], "2.1.0");
    let failed: Vec<&str> = report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["outcome"] == "fail")
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(failed, ["base/id-digit-string", "base/unknown-method"]);
    let failing = &report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["id"] == "base/id-digit-string")
        .cloned()
        .unwrap_or_default();
    assert!(
        failing["findings"][0]["diff"]
            .as_str()
            .is_some_and(|d| d.contains("+  \"id\": 7")),
        "{failing}"
    );
    assert!(
        !failing["transcript"].as_array().is_some_and(Vec::is_empty),
        "transcript kept"
    );

    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap_or_default();
    let base = mcp_conform::builtin::scenarios()
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .filter(|s| s.profile == "base")
        .count();
    // Each scenario the JSON report skips is a skipped testcase in JUnit.
    let skipped = report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["outcome"] == "skip")
        .count();
    assert!(
        skipped >= 1,
        "the fixed run skips the scenarios of other eras"
    );
    check_junit_structure(&junit, base, 2, skipped);
    // Its validity against junit.xsd is checked by junit_xsd.rs (it needs xmllint).
    insta::assert_snapshot!("junit_fixed_run", redact(&junit));
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap_or_default();
    insta::assert_snapshot!("markdown_fixed_run", redact(&md));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap_or_default();
    assert!(
        html.contains("id=\"report-data\"")
            && !html.contains("http://")
            && !html.contains("https://cdn"),
        "self-contained"
    );
}

/// Counts testcases, failures and skips with an XML parser.
fn check_junit_structure(xml: &str, cases: usize, failures: usize, skipped: usize) {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let (mut n_cases, mut n_fail, mut n_skip, mut suites) = (0, 0, 0, 0);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) => match e.name().as_ref() {
                b"testsuite" => suites += 1,
                b"testcase" => n_cases += 1,
                b"failure" => n_fail += 1,
                b"skipped" => n_skip += 1,
                _ => {}
            },
            Ok(Event::Eof) => break,
            Err(e) => panic!("JUnit XML does not parse: {e}"),
            _ => {}
        }
    }
    assert_eq!(
        (suites, n_cases, n_fail, n_skip),
        (1, cases, failures, skipped),
        "suites, testcases, failures, skipped"
    );
}

fn console_output_of_the_fixed_run() {
    let dir = output_dir("reports-console");
    let out = fixed_run(&dir, &[]);
    insta::assert_snapshot!(
        "console_fixed_run",
        common::stable_console(&redact(&String::from_utf8_lossy(&out.stdout)))
    );
}

fn baselines_gate_on_regressions_and_stale_entries() {
    let dir = output_dir("reports-baseline");
    let baseline = dir.join("baseline.yaml");
    let b = baseline.display().to_string();
    let out = fixed_run(&dir, &["--write-baseline", &b]);
    assert_eq!(out.status.code(), Some(1));
    let written = std::fs::read_to_string(&baseline).unwrap_or_default();
    assert!(
        written.contains("  - base/id-digit-string\n") && written.starts_with('#'),
        "{written}"
    );

    let out = fixed_run(&dir, &["--baseline", &b]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "every failure is listed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("expected: listed in the baseline"));
    let report = assert_valid_report(&dir.join("report.json"));
    assert_eq!(report["summary"]["expected_failures"], 2);
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap_or_default();
    assert!(
        md.contains("⚠️ baseline: no new failures, 2 expected"),
        "the Markdown verdict agrees with the exit code: {}",
        md.lines().next().unwrap_or_default()
    );

    std::fs::write(&baseline, "server:\n  - base/id-digit-string\n").unwrap_or_default();
    let out = fixed_run(&dir, &["--baseline", &b]);
    assert_eq!(out.status.code(), Some(1), "unlisted failures fail the run");

    std::fs::write(&baseline, format!("{written}  - base/handshake\n")).unwrap_or_default();
    let out = fixed_run(&dir, &["--baseline", &b]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a passing listed scenario is stale"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "stale baseline entry base/handshake (5:5): the scenario no longer fails; remove it"
        ),
        "{stdout}"
    );

    std::fs::write(&baseline, "server: base/handshake\n").unwrap_or_default();
    let out = fixed_run(&dir, &["--baseline", &b]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("baseline.yaml:1:9: `server:` must be a list of scenario ids"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn shards_merge_into_the_whole_run() {
    let dir = output_dir("reports-shards");
    let whole = dir.join("whole.json").display().to_string();
    let reference = [common::bin(), "serve-reference"];
    let mut args = vec!["-q", "-p", "base", "--report-json", &whole, "--"];
    args.extend(reference);
    run_cli(&args);
    let mut shards = Vec::new();
    for k in ["1/3", "2/3", "3/3"] {
        let path = dir
            .join(format!("shard-{}.json", &k[..1]))
            .display()
            .to_string();
        let mut args = vec![
            "-q",
            "-p",
            "base",
            "--shard",
            k,
            "--report-json",
            &path,
            "--",
        ];
        args.extend(reference);
        let out = run_cli(&args);
        assert_eq!(out.status.code(), Some(0));
        assert_valid_report(Path::new(&path));
        shards.push(path);
    }
    let merged = dir.join("merged.json").display().to_string();
    let mut args = vec!["merge"];
    args.extend(shards.iter().map(String::as_str));
    args.extend(["-o", &merged]);
    let out = run_cli(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = assert_valid_report(Path::new(&merged));
    let whole = assert_valid_report(Path::new(&whole));
    let ids = |r: &serde_json::Value| -> Vec<String> {
        let mut v: Vec<String> = r["scenarios"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["id"].as_str().map(str::to_string))
            .collect();
        v.sort();
        v
    };
    assert_eq!(ids(&merged), ids(&whole));
    assert_eq!(merged["summary"]["overall"], whole["summary"]["overall"]);
    let out = run_cli(&["merge", &shards[0], &shards[0], "-o", "/dev/null"]);
    assert_eq!(out.status.code(), Some(2), "a scenario twice is refused");
}

fn matrix_compares_servers() {
    let dir = output_dir("reports-matrix");
    let out_dir = dir.display().to_string();
    let out = run_cli(&[
        "matrix",
        "fixtures/matrix/servers.yaml",
        "--out-dir",
        &out_dir,
        "-p",
        "base",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(dir.join("matrix.md")).unwrap_or_default();
    assert!(md.contains("| requirement | level | reference | reference --fault groups-all | reference --fault pd-no-auth |"), "{md}");
    assert!(
        md.contains("| BASE-ID-01 | MUST | ✅ pass | ✅ pass | ✅ pass |"),
        "{md}"
    );
    assert!(dir.join("matrix.html").is_file());
    let drafts = std::fs::read_to_string(dir.join("drafts.html")).unwrap_or_default();
    assert!(
        drafts.contains("<th>reference --fault pd-no-auth</th>")
            && drafts.contains("<td id=\"BASE-ID-01\">BASE-ID-01</td>"),
        "{drafts}"
    );
    for name in ["reference", "reference---fault-groups-all"] {
        assert_valid_report(&dir.join(format!("{name}.json")));
    }
}

/// A matrix whose servers cannot be started compared nothing: it is still
/// written (each column says why), but the run exits 3, not 0; a file that
/// names no server is refused (2).
fn matrix_of_servers_that_never_start_exits_3() {
    let dir = output_dir("reports-matrix-unreachable");
    let file = dir.join("servers.yaml");
    let _ = std::fs::write(
        &file,
        "servers:\n  - name: gone\n    command: [/nonexistent/mcp-server]\n",
    );
    let out_dir = dir.join("out");
    let (f, o) = (file.display().to_string(), out_dir.display().to_string());
    let out = run_cli(&["matrix", &f, "--out-dir", &o, "-p", "base"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("no server of"), "{stderr}");
    let md = std::fs::read_to_string(out_dir.join("matrix.md")).unwrap_or_default();
    assert!(md.contains("gone"), "{md}");
    let _ = std::fs::write(&file, "servers: []\n");
    let out = run_cli(&["matrix", &f, "--out-dir", &o]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("lists no server"), "{stderr}");
}

/// This module's tests, as trials named `module::function`.
/// `--report-sarif` validated against the SARIF 2.1.0 schema, and the same
/// problems as workflow annotations under `--format github -q`.
fn sarif_and_annotations_of_the_fixed_run() {
    let dir = output_dir("reports-sarif");
    let sarif = dir.join("report.sarif");
    let s = sarif.display().to_string();
    let out = fixed_run(&dir, &["-q", "--format", "github", "--report-sarif", &s]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let annotations: Vec<&str> = stdout.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(annotations.len(), 2, "{stdout}");
    assert!(
        annotations[0].starts_with(
            "::error file=scenarios/base/id-digit-string.yaml,line=15,col=19,title=base/id-digit-string [MUST] BASE-ID-01::"
        ),
        "{stdout}"
    );
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap_or_default())
            .unwrap_or_else(|e| panic!("SARIF is not JSON: {e}"));
    assert_eq!(log["version"], "2.1.0");
    let results = log["runs"][0]["results"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let rules: Vec<&str> = results
        .iter()
        .filter_map(|r| r["ruleId"].as_str())
        .collect();
    assert_eq!(rules, ["BASE-ID-01", "BASE-ERR-01"]);
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        15
    );
}

fn sarif_log_is_valid_against_the_sarif_schema() {
    let dir = output_dir("reports-sarif-schema");
    let sarif = dir.join("report.sarif");
    let s = sarif.display().to_string();
    fixed_run(&dir, &["-q", "--report-sarif", &s]);
    let schema_path = crate::prereq::sarif_schema().unwrap_or_else(|e| panic!("{e}"));
    // The schema's language-tag pattern ends in a stray `]`, a literal in
    // ECMA 262 regular expressions, which the Rust engine rejects: escaped
    // here, it reads as ECMA 262 reads it.
    let text = std::fs::read_to_string(schema_path)
        .unwrap_or_default()
        .replace("{2}]?$", "{2}\\\\]?$");
    let schema: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("SARIF schema: {e}"));
    let validator =
        jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("SARIF schema: {e}"));
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap_or_default())
            .unwrap_or_else(|e| panic!("SARIF is not JSON: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(&log)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The validator does reject a log that breaks the schema.
    let mut broken = log.clone();
    broken["runs"][0]["results"][0]["level"] = serde_json::json!("fatal");
    assert!(
        !validator.is_valid(&broken),
        "a bad level must not validate"
    );
}

pub fn trials() -> Vec<libtest_mimic::Trial> {
    let mut list = trials![
        every_format_is_written_and_valid,
        sarif_and_annotations_of_the_fixed_run,
        console_output_of_the_fixed_run,
        baselines_gate_on_regressions_and_stale_entries,
        shards_merge_into_the_whole_run,
        matrix_compares_servers,
        matrix_of_servers_that_never_start_exits_3
    ];
    list.push(crate::prereq::trial(
        "reports::sarif_log_is_valid_against_the_sarif_schema",
        crate::prereq::Prereq::Schemas,
        || crate::prereq::sarif_schema().map(|_| ()),
        sarif_log_is_valid_against_the_sarif_schema,
    ));
    list
}
