//! Rules judged when the watch ends, once per HTTP session.

use super::*;

#[test]
fn a_session_left_without_delete_is_judged_when_the_watch_ends_only() {
    let rule = builtin()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .find(|r| r.id == "client/http-session-delete")
        .unwrap_or_else(|| panic!("no client/http-session-delete"));
    let left = session_with_id(vec![post(
        req(2, "tools/list", json!({})),
        &[("mcp-session-id", "abc")],
        2,
    )]);
    let feed = |steps: &[Step]| {
        let mut checker = Checker::new(vec![rule.clone()], true);
        for (i, (side, v, meta)) in steps.iter().enumerate() {
            let text = if v.is_null() {
                String::new()
            } else {
                v.to_string()
            };
            checker.feed(Msg::new(i + 1, *side, 0, text, meta.clone()));
        }
        checker
    };
    // While the watch runs, and in a client run (finish without close),
    // nothing is judged, and the reason says so.
    let mut open = feed(&left);
    assert!(open.violations.is_empty());
    open.finish();
    assert!(open.violations.is_empty());
    assert!(open
        .not_exercised(&rule)
        .is_some_and(|w| w.contains("when `mcp-conform watch` ends")));
    // At the end of the watch: INFO, at the session's last client message.
    open.close();
    open.close();
    assert_eq!(open.violations.len(), 1, "{:?}", open.violations);
    let v = &open.violations[0];
    assert_eq!((v.pos, v.level), (3, crate::scenario::model::Level::Info));
    assert_eq!(v.related, vec![2]);
    // A DELETE with the id holds it, whatever the answer (405 here).
    let mut ended = left.clone();
    ended.push(bodiless("DELETE", &[("mcp-session-id", "abc")], 3));
    let mut refused = answer(Value::Null, 405, 3);
    if let Some(m) = refused.2.as_mut() {
        m.method = "DELETE".into();
    }
    ended.push(refused);
    let mut deleted = feed(&ended);
    deleted.close();
    assert!(deleted.violations.is_empty(), "{:?}", deleted.violations);
    assert_eq!(deleted.not_exercised(&rule), None);
    // Over stdio the rule is not exercised, with the reason.
    let mut stdio = Checker::new(vec![rule.clone()], false);
    for (i, (side, v, _)) in with_init(vec![]).iter().enumerate() {
        stdio.feed(Msg::new(i + 1, *side, 0, v.to_string(), None));
    }
    stdio.close();
    assert!(stdio
        .not_exercised(&rule)
        .is_some_and(|w| w.contains("over stdio; the rule holds over HTTP only")));
}

#[test]
fn each_http_session_is_judged_apart_at_the_end_of_the_watch() {
    let rule = builtin()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .find(|r| r.id == "client/http-session-delete")
        .unwrap_or_else(|| panic!("no client/http-session-delete"));
    let with_id = |id: &str, exchange: u64| {
        let mut s = session_with_id(vec![]);
        for step in &mut s {
            if let Some(m) = step.2.as_mut() {
                m.exchange = exchange;
                for h in &mut m.headers {
                    h.1 = id.to_string();
                }
            }
        }
        s
    };
    let mut steps = with_id("one", 1);
    steps.extend(with_id("two", 2));
    steps.push(bodiless("DELETE", &[("mcp-session-id", "one")], 3));
    let mut checker = Checker::new(vec![rule], true);
    for (i, (side, v, meta)) in steps.iter().enumerate() {
        let text = if v.is_null() {
            String::new()
        } else {
            v.to_string()
        };
        checker.feed(Msg::new(i + 1, *side, 0, text, meta.clone()));
    }
    checker.close();
    assert_eq!(checker.session_count(), 2);
    assert_eq!(checker.violations.len(), 1, "{:?}", checker.violations);
    assert_eq!(checker.violations[0].session, 1);
    assert!(checker.violations[0].message.contains("\"two\""));
}
