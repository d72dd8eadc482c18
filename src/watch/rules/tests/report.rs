//! What the report of a watched conversation shows for a broken rule.

use super::*;

/// `n` pings from the client, each answered, with ids from `first`.
fn pings(first: i64, n: i64) -> Vec<Step> {
    (first..first + n)
        .flat_map(|id| [m(C, req(id, "ping", json!({}))), m(S, ok(id, json!({})))])
        .collect()
}

#[test]
fn a_broken_rule_shows_the_messages_around_its_finding_and_the_transcript_line_all() {
    // init is #1..#3 and the first ping #4, so the first request 50 is
    // #24 and the second, sent while the first is unanswered, #45.
    let mut rest = pings(10, 10);
    rest.push(m(C, req(50, "tools/list", json!({}))));
    rest.extend(pings(20, 10));
    rest.push(m(C, req(50, "tools/list", json!({}))));
    rest.extend(pings(30, 10));
    let steps = with_init(rest);
    let checker = fed(&steps, false, true);
    let report = crate::watch::report::build(&checker, &Default::default());
    let of = |id: &str| result_of(&report, id);
    let broken = of("client/unique-request-ids");
    assert!(broken.message.starts_with("#45"), "{}", broken.message);
    let shown: Vec<&str> = broken
        .transcript
        .iter()
        .map(|e| e.session.as_str())
        .collect();
    let expected: Vec<String> = (22..=26)
        .chain(43..=47)
        .map(|p: usize| format!("#{p} {}", steps[p - 1].0))
        .collect();
    assert_eq!(shown, expected);
    assert_eq!(broken.transcript_dropped, steps.len() - expected.len());
    // The whole conversation is the transcript line's, and a rule that
    // held shows none of it.
    assert_eq!(of("watch/transcript").transcript.len(), steps.len());
    let held = of("client/jsonrpc-version");
    assert!(held.transcript.is_empty() && held.transcript_dropped == 0);
}

#[test]
fn a_finding_past_the_transcript_line_s_cap_still_shows_its_messages() {
    // 2,200 messages of pings, then a request whose id repeats one still
    // unanswered (#2204 and #2205).
    let mut rest = pings(10, 1100);
    rest.push(m(C, req(5000, "tools/list", json!({}))));
    rest.push(m(C, req(5000, "tools/list", json!({}))));
    let steps = with_init(rest);
    let report = crate::watch::report::build(&fed(&steps, false, true), &Default::default());
    let of = |id: &str| result_of(&report, id);
    let shown: Vec<&str> = of("client/unique-request-ids")
        .transcript
        .iter()
        .map(|e| e.session.as_str())
        .collect();
    assert_eq!(
        shown,
        [
            "#2202 client",
            "#2203 server",
            "#2204 client",
            "#2205 client"
        ]
    );
    assert!(of("watch/transcript").transcript.len() < steps.len());
}
