//! Which messages each rule examines: a rule that judged nothing says why
//! and is not held, and a rule is broken only by a message it examines.

use super::*;

#[test]
fn every_breaking_message_is_one_its_rule_examines() {
    for r in builtin().unwrap_or_else(|e| panic!("{e}")) {
        let (steps, raw) = breaking(&r.id);
        let http = steps.iter().any(|s| s.2.is_some());
        let mut checker = Checker::new(vec![r.clone()], http);
        for (i, (side, v, meta)) in steps.iter().enumerate() {
            let text = if v.is_null() {
                String::new()
            } else {
                v.to_string()
            };
            checker.feed(Msg::new(i + 1, *side, 0, text, meta.clone()));
        }
        if let Some((side, text)) = raw {
            checker.feed(Msg::new(steps.len() + 1, side, 0, text.into(), None));
        }
        checker.close();
        checker.finish();
        let uses = checker.uses[0];
        assert_eq!(
            uses.unforeseen, 0,
            "{}: its subject test missed a hit",
            r.id
        );
        assert!(uses.examined > 0, "{}: {uses:?}", r.id);
        assert_eq!(checker.not_exercised(&r), None, "{}", r.id);
    }
}

#[test]
fn a_rule_that_judged_no_message_says_why_and_is_not_held() {
    let stdio = fed(
        &with_init(vec![m(C, req(2, "tools/list", json!({})))]),
        false,
        true,
    );
    let why = |id: &str| reason(&stdio, id).unwrap_or_default();
    assert!(
        why("client/http-accept").contains("HTTP only"),
        "{}",
        why("client/http-accept")
    );
    assert!(
        why("server/result-type")
            .contains("speaks version 2025-11-25; the rule holds in 2026-07-28 only"),
        "{}",
        why("server/result-type")
    );
    assert!(
        why("client/cancel-notifies")
            .contains("no client message here is a tools/call request left unanswered"),
        "{}",
        why("client/cancel-notifies")
    );
    assert!(
        why("client/pd-read-before-retry").contains("TOOL_DESCRIPTION_REQUIRED"),
        "{}",
        why("client/pd-read-before-retry")
    );
    assert_eq!(
        reason(&stdio, "client/sep1821-query-needs-capability"),
        None
    );
    assert!(why("client/cancel-in-flight").contains("notifications/cancelled"));
    assert_eq!(reason(&stdio, "client/jsonrpc-version"), None);
    assert_eq!(reason(&stdio, "client/initialize-first"), None);
    // A watched conversation is never known to be whole.
    let watched = fed(&with_init(abandoned_call(false)), false, false);
    assert!(reason(&watched, "client/cancel-notifies")
        .is_some_and(|w| w.contains("a watched one is never known to be whole")));
    let finished = fed(&with_init(abandoned_call(true)), false, true);
    assert_eq!(reason(&finished, "client/cancel-notifies"), None);
}

#[test]
fn the_report_shows_a_rule_that_judged_nothing_as_not_exercised() {
    use crate::run::outcome::Outcome;
    let checker = fed(
        &with_init(vec![m(C, req(2, "tools/list", json!({})))]),
        false,
        true,
    );
    let report = crate::watch::report::build(&checker, &Default::default());
    let of = |id: &str| result_of(&report, id);
    let http = of("client/http-accept");
    assert_eq!(http.outcome, Outcome::Skip, "{}", http.message);
    assert!(
        http.message.starts_with("not exercised: over stdio"),
        "{}",
        http.message
    );
    let version = of("client/jsonrpc-version");
    assert_eq!(version.outcome, Outcome::Pass);
    assert!(
        version
            .message
            .starts_with("held over the 3 messages it judged"),
        "{}",
        version.message
    );
    assert!(report.summary.verdict.as_ref().is_some_and(|v| v.passes()));
}

#[test]
fn a_server_answering_initialize_with_a_float_id_blames_only_the_server() {
    let steps = vec![
        m(
            C,
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        ),
        m(
            S,
            json!({"jsonrpc": "2.0", "id": 0.0, "result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}}),
        ),
        m(C, note("notifications/initialized", json!({}))),
        m(C, req(1, "tools/list", json!({}))),
    ];
    let checker = fed(&steps, false, true);
    let broke: Vec<&str> = checker.violations.iter().map(|v| v.rule.as_str()).collect();
    assert!(
        broke.contains(&"server/response-matches-request"),
        "{broke:?}"
    );
    assert!(
        !broke.contains(&"client/no-requests-before-init-answer"),
        "{broke:?}"
    );
    // Without any answer the early request still breaks the client rule.
    let early = fed(&[steps[0].clone(), steps[3].clone()], false, true);
    assert!(early
        .violations
        .iter()
        .any(|v| v.rule == "client/no-requests-before-init-answer"));
}
