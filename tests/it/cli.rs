//! The command line end to end: exit codes, errors a user reads, listing,
//! and console output (insta snapshots, volatile fields redacted).

use crate::common;
use crate::common::{cli as mcp_conform, redact_console as redact, text};

fn a_malformed_scenario_file_exits_2_with_file_line_col() {
    let out = mcp_conform(&[
        "--no-builtin",
        "--scenarios",
        "fixtures/bad-scenarios/unknown-key.yaml",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("fixtures/bad-scenarios/unknown-key.yaml:7:5: unknown key 'expct' in step 1; did you mean 'expect'?"),
        "{err}"
    );
    assert!(err.contains("nothing was run"), "{err}");
}

fn list_needs_no_server() {
    let out = mcp_conform(&["--list", "-p", "base"]);
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!("list_base", text(&out.stdout));
}

fn glued_short_options_are_options_and_server_flags_stay_the_servers() {
    // `-j4` was once taken as the server command.
    let out = mcp_conform(&["-q", "-j4", "--list", "-p", "base"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("base/handshake"));
    // Without `--`, everything after the command is the command's own.
    let out = mcp_conform(&[
        "-q",
        "-p",
        "base",
        "-k",
        "base/handshake",
        env!("CARGO_BIN_EXE_mcp-conform"),
        "serve-reference",
        "--fault",
        "no-server-info",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
}

/// `--json` (a flag of `--list`) with a value before `--` was once run as
/// the server command `out.json -- ./server`.
fn a_value_after_a_flag_is_a_usage_error_naming_the_intended_option() {
    let out = mcp_conform(&["--json", "out.json", "--", "./server"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert_eq!(
        err.trim(),
        "error: `--json` takes no value, but `out.json` follows it before `--`; did you mean `--report-json FILE`?"
    );
    assert!(text(&out.stdout).is_empty(), "nothing ran");
}

/// One of our options after `--` goes to the server: say so.
fn our_option_after_the_separator_is_warned_about() {
    let out = mcp_conform(&[
        "-q",
        "-p",
        "base",
        "-k",
        "base/handshake",
        "--protocol-version",
        "2026-07-28",
        "--",
        common::bin(),
        "serve-reference",
        "--strict",
    ]);
    let err = text(&out.stderr);
    assert!(
        err.contains("warning: `--strict` comes after `--`, so it was passed to the server"),
        "{err}"
    );
}

/// `-q`: one line per distinct problem (with the eras it occurred in),
/// then at most 5 fixed lines.
fn quiet_prints_one_line_per_distinct_problem() {
    let out = mcp_conform(&[
        "-q",
        "--",
        common::bin(),
        "serve-reference",
        "--fault",
        "wrong-id",
        "--fault",
        "unknown-method-internal-error",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    let problems: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("FAILED") || l.starts_with("warn"))
        .collect();
    assert!(!problems.is_empty(), "{stdout}");
    assert!(
        lines.len() <= problems.len() + 5,
        "{} lines for {} problems:\n{stdout}",
        lines.len(),
        problems.len()
    );
    let ids: Vec<&str> = problems
        .iter()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    let mut distinct = ids.clone();
    distinct.dedup();
    assert_eq!(ids, distinct, "each problem once:\n{stdout}");
    assert!(
        stdout.contains(
            "FAILED [MUST] base/unknown-method BASE-ERR-01 (2025-06-18, 2025-11-25, 2026-07-28): "
        ),
        "{stdout}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("more: the scenario: `mcp-conform show ")),
        "{stdout}"
    );
    assert!(
        lines
            .last()
            .is_some_and(|l| l.starts_with("conformance result: FAILED")),
        "{stdout}"
    );
}

/// `--durations N` prints the N slowest runs after the summary, longest
/// first, each within the run's time; the JSON report has every run's start.
fn durations_lists_the_slowest_runs_within_the_run() {
    let dir = common::scratch_dir("cli-durations");
    let json = dir.join("report.json");
    let out = mcp_conform(&[
        "-q",
        "-p",
        "core",
        "--durations",
        "3",
        "--report-json",
        &json.to_string_lossy(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.starts_with("slowest 3 of "))
        .unwrap_or_else(|| panic!("no durations heading:\n{stdout}"));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}"));
    let whole = report["summary"]["duration_ms"].as_u64().unwrap_or(0);
    let mut shown = Vec::new();
    for line in &lines[head + 1..head + 4] {
        // "    0.30 s  core/x [2025-06-18], 0.12 to 0.42"
        let (took, rest) = line
            .trim()
            .split_once(" s  ")
            .unwrap_or_else(|| panic!("{line}"));
        let (_, span) = rest.split_once(", ").unwrap_or_else(|| panic!("{line}"));
        let (from, to) = span.split_once(" to ").unwrap_or_else(|| panic!("{line}"));
        let secs = |s: &str| s.parse::<f64>().unwrap_or_else(|e| panic!("{line}: {e}"));
        assert!(
            secs(from) <= secs(to) && secs(to) <= whole as f64 / 1000.0 + 0.01,
            "{line}"
        );
        shown.push(secs(took));
    }
    assert!(
        shown.windows(2).all(|w| w[0] >= w[1]),
        "longest first:\n{stdout}"
    );
    let runs = report["scenarios"].as_array().cloned().unwrap_or_default();
    assert!(!runs.is_empty());
    for r in &runs {
        let start = r["started_ms"]
            .as_u64()
            .unwrap_or_else(|| panic!("no started_ms: {r}"));
        let took = r["duration_ms"].as_u64().unwrap_or(0);
        assert!(
            start + took <= whole + 5,
            "{} ends after the run: {start} + {took} > {whole}",
            r["id"]
        );
    }
    let longest = runs
        .iter()
        .filter(|r| r["outcome"] != "skip")
        .filter_map(|r| r["duration_ms"].as_u64())
        .max()
        .unwrap_or(0);
    assert!(
        (shown[0] - longest as f64 / 1000.0).abs() < 0.006,
        "the first line is the longest run ({longest} ms):\n{stdout}"
    );
}

fn a_command_that_cannot_start_exits_3() {
    let out = mcp_conform(&["--", "/nonexistent/mcp-server-binary"]);
    assert_eq!(out.status.code(), Some(3));
    let err = text(&out.stderr);
    assert!(
        err.contains("cannot start `/nonexistent/mcp-server-binary`"),
        "{err}"
    );
    assert!(
        err.contains("hint: the command could not be launched"),
        "{err}"
    );
}

/// After `--` a word is a server command, never a mistyped subcommand: a
/// name on no PATH directory fails to start like a path that names no file
/// (exit 3, not run), and says PATH was searched.
fn a_command_after_the_separator_that_is_on_no_path_exits_3() {
    let out = mcp_conform(&["--", "mcp-conform-no-such-server", "--stdio"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("no program named `mcp-conform-no-such-server` on PATH"),
        "{err}"
    );
    assert!(!err.contains("neither a subcommand"), "{err}");
    assert!(err.contains("conformance result: NOT RUN"), "{err}");
}

/// A server over HTTP that answers 401 is not "not listening": the hint
/// names `--header` with an Authorization credential, and once one is
/// given, says it was refused. Exit 3 either way.
fn a_server_that_wants_a_credential_gets_a_hint_about_header() {
    let script = common::root().join("fixtures/hostile/hostile_http_server.py");
    let script = script.display().to_string();
    let run = |extra: &[&str]| {
        let port = common::free_port().to_string();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let mut args = vec!["-q", "-k", "core/ping", "--url", &url];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[
            "--",
            common::python3(),
            common::FIXTURE_PYTHON_FLAGS,
            &script,
            "unauthorized",
            &port,
        ]);
        let out = mcp_conform(&args);
        assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    let without = run(&[]);
    assert!(
        without.contains("401 Unauthorized")
            && without.contains("--header 'Authorization: Bearer TOKEN'")
            && !without.contains("check that the server listens"),
        "{without}"
    );
    let with = run(&["--header", "Authorization: Bearer expired"]);
    assert!(
        with.contains("refused the Authorization header given with --header"),
        "{with}"
    );
}

/// `skip_unless`: a false condition skips with its interpolated reason, but a
/// check that already failed keeps the scenario failed.
fn skip_unless_skips_with_its_reason_unless_something_failed() {
    let dir = common::output_dir("skip-unless");
    let scenario = |id: &str, failing_first: bool| {
        let first = if failing_first {
            "  - request: conform/no-such-method\n    expect: { result: { $present: true } }\n"
        } else {
            ""
        };
        format!(
            "id: base/{id}\ntitle: skip_unless\nprofile: base\nlevel: MUST\nrequirements: [BASE-ERR-01]\n\
             spec: [{{doc: JSON-RPC 2.0, section: x, quote: x}}]\nsteps:\n{first}\
             \x20 - id: all\n    request: tools/list\n\
             \x20 - skip_unless:\n      expr: \"size(all.result.tools) > 100000\"\n      \
             reason: \"only ${{size(all.result.tools)}} tools\"\n\
             \x20 - request: conform/no-such-method\n    expect: {{ result: {{ $present: true }} }}\n"
        )
    };
    std::fs::write(dir.join("skips.yaml"), scenario("skips", false))
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("fails.yaml"), scenario("fails", true))
        .unwrap_or_else(|e| panic!("{e}"));
    let report = dir.join("report.json");
    let out = mcp_conform(&[
        "-q",
        "--no-builtin",
        "--scenarios",
        &dir.display().to_string(),
        "--report-json",
        &report.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report = common::assert_valid_report(&report);
    let outcome = |id: &str| {
        common::scenario_result(&report, id)
            .map(|s| (s["outcome"].clone(), s["message"].clone()))
            .unwrap_or_else(|| panic!("{id} not in the report"))
    };
    let (o, m) = outcome("base/skips");
    assert_eq!(o, "skip");
    let m = m.as_str().unwrap_or_default().to_string();
    let re = regex::Regex::new(r"^only [0-9]+ tools$").unwrap_or_else(|e| panic!("{e}"));
    assert!(re.is_match(&m), "the reason is interpolated: {m}");
    assert_eq!(outcome("base/fails").0, "fail");
}

/// Replaces what a run over HTTP adds that changes every time: the port.
fn redact_port(s: &str) -> String {
    let re = regex::Regex::new(r"127\.0\.0\.1:[0-9]+").unwrap_or_else(|e| panic!("{e}"));
    re.replace_all(s, "127.0.0.1:[PORT]").into_owned()
}

/// A one-line `$contains` against the reference server's 106 tools: the diff
/// names a couple of tools and counts the rest, instead of printing the list.
fn console_bounded_diff_of_a_big_list() {
    let dir = common::output_dir("big-list");
    let file = dir.join("has-echo.yaml");
    std::fs::write(
        &file,
        "id: custom/has-echo\ntitle: The server offers a tool named echo\nprofile: custom\n\
         level: MUST\nsteps:\n  - request: tools/list\n    paginate: tools\n    \
         expect:\n      result: { tools: { $contains: { name: echo } } }\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let file = file.display().to_string();
    let out = mcp_conform(&[
        "--no-builtin",
        "--scenarios",
        &file,
        "--protocol-version",
        "2026-07-28",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let console = redact(&text(&out.stdout));
    assert!(console.lines().count() < 40, "{console}");
    insta::assert_snapshot!("console_big_list_mismatch", console);
    // --diff-lines caps each diff, and says how much is left out.
    let out = mcp_conform(&[
        "--no-builtin",
        "--scenarios",
        &file,
        "--protocol-version",
        "2026-07-28",
        "--diff-lines",
        "5",
    ]);
    let capped = text(&out.stdout);
    assert!(
        capped.contains("  … 15 more diff lines (all of them with -v or --diff-lines 0) …"),
        "{capped}"
    );
}

/// Over HTTP, the error object the server sent is shown (not only the code
/// the pattern looked at), and the HTTP-only HeaderMismatchError rule is
/// quoted because it applies here; over stdio it is not quoted.
fn console_shows_the_error_answer_over_http_and_quotes_what_applies() {
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let addr = format!("127.0.0.1:{port}");
    let server = [
        "--",
        common::bin(),
        "serve-reference",
        "--fault",
        "bad-params-internal-error",
    ];
    // --strict: BASE-ERR-02 is a SHOULD (JSON-RPC's code table has no
    // keyword), so the -32603 warns; strict makes the warning fail the run
    let mut args = vec![
        "-k",
        "base/bad-params-type",
        "--strict",
        "--protocol-version",
        "2026-07-28",
        "--url",
        &url,
    ];
    args.extend_from_slice(&server);
    args.extend_from_slice(&["--http", &addr]);
    let out = mcp_conform(&args);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let console = redact_port(&redact(&text(&out.stdout)));
    assert!(
        console.contains(r#"server sent: {"jsonrpc":"2.0","id":[ID],"error":{"code":-32603,"message":"Internal error: Invalid params: 'name' must be a string, got number"}}"#),
        "{console}"
    );
    assert!(console.contains("HeaderMismatchError"), "{console}");
    insta::assert_snapshot!("console_http_error_answer", console);

    let mut args = vec![
        "-k",
        "base/bad-params-type",
        "--strict",
        "--protocol-version",
        "2026-07-28",
    ];
    args.extend_from_slice(&server);
    let out = mcp_conform(&args);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let console = text(&out.stdout);
    assert!(
        console.contains("spec: JSON-RPC 2.0 Specification [spec], 5.1 Error object"),
        "{console}"
    );
    assert!(
        !console.contains("HeaderMismatchError"),
        "an HTTP-only rule is not quoted over stdio: {console}"
    );
}

/// A SHOULD-level problem: a warning with the words it rests on, and the
/// answer the server gave instead of an error, bounded.
fn console_warning_with_its_quote() {
    let out = mcp_conform(&[
        "-k",
        "base/invalid-cursor",
        "--protocol-version",
        "2026-07-28",
        "--",
        common::bin(),
        "serve-reference",
        "--fault",
        "invalid-cursor-ok",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let console = redact(&text(&out.stdout));
    // Cursors are sealed with a per-process key.
    let re = regex::Regex::new(r#""nextCursor": "[^"]*""#).unwrap_or_else(|e| panic!("{e}"));
    let console = re.replace_all(&console, r#""nextCursor": "[CURSOR]""#);
    insta::assert_snapshot!("console_warning_with_quote", console);
}

fn explain_is_case_insensitive_and_names_whose_rule_and_where_to_read_it() {
    let out = mcp_conform(&["explain", "sep1300-neg-01"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    insta::assert_snapshot!("explain_project_requirement", text(&out.stdout));
    let out = mcp_conform(&["explain", "SEP-1300/Filter-Each-Group"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    insta::assert_snapshot!("explain_scenario", text(&out.stdout));
}

fn explain_and_show_suggest_the_closest_id_on_a_miss() {
    let out = mcp_conform(&["explain", "SEP1300-FLT-1"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!("explain_miss", text(&out.stderr));
    let out = mcp_conform(&["show", "filter-each-grup"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("did you mean \"sep-1300/filter-each-group\"?"),
        "{}",
        text(&out.stderr)
    );
    let out = mcp_conform(&["show", "SEP1300-FLT-01"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is a requirement, not a scenario"));
}

fn show_prints_a_built_in_scenario_with_its_requirement_level_and_sources() {
    let out = mcp_conform(&["show", "sep-1300/empty-groups-no-constraint"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    insta::assert_snapshot!("show_scenario", shown);
    // the YAML after the header is the shipped file, byte for byte
    let file = std::fs::read_to_string(
        common::root().join("scenarios/sep-1300/empty-groups-no-constraint.yaml"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(shown.ends_with(&file), "{shown}");
}

fn drafts_only_reports_project_rules_as_info() {
    let out = mcp_conform(&["--list", "--drafts-only", "-k", "sep-1300/empty-"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed = text(&out.stdout);
    let line = listed
        .lines()
        .find(|l| l.starts_with("sep-1300/empty-groups-no-constraint "))
        .unwrap_or_default();
    assert!(line.contains(" INFO "), "{listed}");
    let out = mcp_conform(&["--list", "-k", "sep-1300/empty-groups"]);
    assert!(
        text(&out.stdout).contains("SHOULD"),
        "{}",
        text(&out.stdout)
    );
    // a draft's own rule keeps its level
    let out = mcp_conform(&[
        "--list",
        "--drafts-only",
        "-k",
        "sep-1300/filter-each-group",
    ]);
    assert!(text(&out.stdout).contains("MUST"), "{}", text(&out.stdout));
}

/// A finding points at the line that found it, like a compiler: the console
/// and JUnit print `path:line:col:`, the JSON report carries `step_id` and
/// `location`, and a baseline entry naming the step id expects the failure.
fn a_failing_check_points_at_its_line_and_a_baseline_names_its_step_id() {
    let dir = common::output_dir("places");
    let (json, junit) = (dir.join("report.json"), dir.join("junit.xml"));
    let run = |extra: &[&str]| {
        let mut args = vec![
            "-j",
            "1",
            "-k",
            "base/unknown-method",
            "--protocol-version",
            "2026-07-28",
            "--report-json",
            json.to_str().unwrap_or_default(),
            "--report-junit",
            junit.to_str().unwrap_or_default(),
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[
            "--",
            common::bin(),
            "serve-reference",
            "--fault",
            "unknown-method-internal-error",
        ]);
        mcp_conform(&args)
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    insta::assert_snapshot!(
        "console_failure_points_at_its_line",
        common::stable_console(&redact(&text(&out.stdout)))
    );
    let report = common::assert_valid_report(&json);
    let finding = &report["scenarios"][0]["findings"][0];
    let step_id = finding["step_id"].as_str().unwrap_or_default().to_string();
    let location = finding["location"].as_str().unwrap_or_default().to_string();
    assert!(step_id.starts_with("steps[0].expect"), "{finding}");
    assert!(
        location.starts_with("scenarios/base/unknown-method.yaml:"),
        "{finding}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap_or_default();
    assert!(xml.contains(&format!("{location}: fail: step 1:")), "{xml}");

    let baseline = dir.join("baseline.yaml");
    for (entry, code) in [("steps[0]", 0), (step_id.as_str(), 0), ("steps[1]", 1)] {
        std::fs::write(
            &baseline,
            format!("server:\n  - \"base/unknown-method:{entry}\"\n"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let out = run(&["-q", "--baseline", baseline.to_str().unwrap_or_default()]);
        assert_eq!(
            out.status.code(),
            Some(code),
            "entry {entry}: {}",
            text(&out.stdout)
        );
    }
}

/// This module's tests, as trials named `module::function`.
/// `--mcp-schema FILE`: the handshake answer is validated against the
/// user's schema as well as the shipped one (a schema the reference server's
/// answer breaks fails base/schema-handshake, naming the file); a file that
/// is no schema is a usage error naming the option.
fn an_mcp_schema_file_is_validated_against() {
    let dir = common::output_dir("mcp-schema");
    let demanding = dir.join("demanding.json");
    let required = serde_json::json!({"required": ["notInAnyAnswer"]});
    let schema =
        serde_json::json!({"$defs": {"InitializeResult": required, "DiscoverResult": required}});
    std::fs::write(&demanding, schema.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let run = |extra: &[&str]| {
        let mut args = vec!["-k", "base/schema-handshake"];
        args.extend_from_slice(extra);
        mcp_conform(&args)
    };
    let plain = run(&[]);
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain.stdout));
    let shown = demanding.display().to_string();
    let out = run(&["--mcp-schema", &shown]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let console = text(&out.stdout);
    assert!(console.contains("base/schema-handshake"), "{console}");
    assert!(
        console.contains(&format!("schema {shown}: (root): "))
            && console.contains("notInAnyAnswer"),
        "{console}"
    );
    let not_a_schema = dir.join("plain.json");
    std::fs::write(&not_a_schema, "{\"type\": \"object\"}").unwrap_or_else(|e| panic!("{e}"));
    let shown = not_a_schema.display().to_string();
    let out = run(&["--mcp-schema", &shown]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(&format!(
            "error: --mcp-schema {shown}: the schema has neither $defs nor definitions"
        )),
        "{}",
        text(&out.stderr)
    );
}

pub fn trials() -> Vec<libtest_mimic::Trial> {
    let mut list = trials![
        a_malformed_scenario_file_exits_2_with_file_line_col,
        list_needs_no_server,
        glued_short_options_are_options_and_server_flags_stay_the_servers,
        a_value_after_a_flag_is_a_usage_error_naming_the_intended_option,
        our_option_after_the_separator_is_warned_about,
        quiet_prints_one_line_per_distinct_problem,
        durations_lists_the_slowest_runs_within_the_run,
        a_command_that_cannot_start_exits_3,
        a_command_after_the_separator_that_is_on_no_path_exits_3,
        skip_unless_skips_with_its_reason_unless_something_failed,
        console_bounded_diff_of_a_big_list,
        console_shows_the_error_answer_over_http_and_quotes_what_applies,
        console_warning_with_its_quote,
        explain_is_case_insensitive_and_names_whose_rule_and_where_to_read_it,
        explain_and_show_suggest_the_closest_id_on_a_miss,
        show_prints_a_built_in_scenario_with_its_requirement_level_and_sources,
        drafts_only_reports_project_rules_as_info,
        a_failing_check_points_at_its_line_and_a_baseline_names_its_step_id,
        an_mcp_schema_file_is_validated_against
    ];
    list.push(crate::prereq::trial(
        "cli::a_server_that_wants_a_credential_gets_a_hint_about_header",
        crate::prereq::Prereq::Python,
        crate::prereq::python,
        a_server_that_wants_a_credential_gets_a_hint_about_header,
    ));
    list
}
