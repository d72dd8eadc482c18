//! `sentinel: true`: a server that drops a message without a word is told
//! apart from a slow one by the liveness request sent right behind it, so
//! the step fails when the sentinel is answered, not at the request timeout;
//! and a correct server's answers, the sentinel's included, are all read.

use serde_json::Value;

use crate::common;

const SCENARIOS: [&str; 2] = ["base/parse-error", "base/id-large-integer"];

/// Runs the two sentinel scenarios in one era against the reference server
/// with `faults`, with a request timeout far above what the verdicts take.
fn run(name: &str, faults: &[&str]) -> (Option<i32>, Vec<Value>) {
    // A directory per run: `output_dir` empties the one it names, and the
    // two trials run at once.
    let report = common::output_dir(&format!("sentinel-{name}")).join("report.json");
    let report_arg = report.display().to_string();
    let mut args = vec![
        "-q",
        "--protocol-version",
        "2025-11-25",
        "--timeout-ms",
        "60000",
        "--full-transcripts",
        "--report-json",
        &report_arg,
    ];
    for id in SCENARIOS {
        args.extend(["-k", id]);
    }
    args.extend(["--", common::bin(), "serve-reference"]);
    for f in faults {
        args.extend(["--fault", f]);
    }
    let out = common::run_cli(&args);
    let json = common::assert_valid_report(&report);
    let scenarios = json["scenarios"].as_array().cloned().unwrap_or_default();
    assert_eq!(scenarios.len(), SCENARIOS.len(), "{json}");
    (out.status.code(), scenarios)
}

fn a_dropped_message_fails_when_the_sentinel_is_answered_not_at_the_timeout() {
    let (code, scenarios) = run("dropped", &["parse-error-silent", "id-large-dropped"]);
    assert_eq!(code, Some(1));
    for s in &scenarios {
        // an id beyond 2^53 is SHOULD (RFC 8259 section 6): its loss warns
        let expected = if s["id"] == "base/id-large-integer" {
            "warn"
        } else {
            "fail"
        };
        assert_eq!(s["outcome"], expected, "{s}");
        let message = s["message"].as_str().unwrap_or_default();
        // The grace: ten of the sentinel's round trips, 100 ms to 500 ms.
        let graces = (1..=5).map(|tenths| format!("nothing more came within {tenths}00 ms"));
        let said = ", sent right after it, was answered, and ";
        assert!(
            message.contains(said) && graces.into_iter().any(|g| message.contains(&g)),
            "{}: {message}",
            s["id"]
        );
        // Concluded from the sentinel: the 60 s request timeout never ran out.
        let took = s["duration_ms"].as_u64().unwrap_or(u64::MAX);
        assert!(took < 60_000, "{}: {took} ms", s["id"]);
    }
}

fn a_correct_server_answers_the_message_then_its_sentinel_and_nothing_is_left_over() {
    let (code, scenarios) = run("clean", &[]);
    assert_eq!(code, Some(0));
    for s in &scenarios {
        assert_eq!(s["outcome"], "pass", "{s}");
        let transcript = s["transcript"].as_array().cloned().unwrap_or_default();
        let pings_sent = transcript
            .iter()
            .filter(|e| e["direction"] == "sent" && e["message"]["method"] == "ping")
            .count();
        assert!(pings_sent >= 1, "{}: no sentinel sent", s["id"]);
        let text = Value::Array(transcript).to_string();
        assert!(
            !text.contains("ignored"),
            "{}: an answer was left over: {text}",
            s["id"]
        );
    }
}

/// This module's tests, as trials named `module::function`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    trials![
        a_dropped_message_fails_when_the_sentinel_is_answered_not_at_the_timeout,
        a_correct_server_answers_the_message_then_its_sentinel_and_nothing_is_left_over
    ]
}
