//! Which kind of JSON-RPC answer an `expect` pattern asks for (a result or
//! an error), so that a mismatch of kind reads as one: "expected an error,
//! but the server answered a result" says in one line what "at error:
//! expected an object, but the key is absent" leaves the reader to work
//! out, and a `$one_of` whose every outcome is an error says it once
//! instead of once per outcome.
//!
//! The message names the answer's kind, not its content: the same finding
//! in several eras is one row of a report only when its message is the
//! same, and a result's content often differs by era (2026-07-28 adds
//! `resultType` and `_meta`). The finding's diff shows the content.

use serde_json::Value;

use super::Pattern;

/// The two kinds of answer to a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Result,
    Error,
}

impl Kind {
    fn named(self) -> &'static str {
        match self {
            Kind::Result => "a result",
            Kind::Error => "an error",
        }
    }
}

/// A message for an answer of the other kind than `pattern` asks for
/// (every outcome of a `$one_of` alike), or None when the kinds agree or
/// the pattern does not say.
pub fn kind_mismatch(pattern: &Pattern, answer: &Value) -> Option<String> {
    let asked = Asked::of(pattern.to_value())?;
    // An answer naming neither (or both) is not one of the two kinds.
    let answered = kind_of(answer)?;
    if asked.kind == answered {
        return None;
    }
    let outcomes = match asked.labels.as_slice() {
        [] => String::new(),
        labels => format!(" ({})", labels.join(", or ")),
    };
    let what = match answered {
        Kind::Result if answer["result"]["isError"] == Value::Bool(true) => {
            "a result with isError: true".to_string()
        }
        Kind::Result => Kind::Result.named().to_string(),
        Kind::Error => match answer["error"].get("code") {
            Some(code) => format!("an error with code {code}"),
            None => Kind::Error.named().to_string(),
        },
    };
    Some(format!(
        "expected {}{outcomes}, but the server answered {what}",
        asked.kind.named()
    ))
}

/// What a pattern asks for: a kind, and the labels of its outcomes when it
/// is a `$one_of`.
struct Asked {
    kind: Kind,
    labels: Vec<String>,
}

impl Asked {
    fn of(pattern: &Value) -> Option<Asked> {
        let Value::Object(o) = pattern else {
            return None;
        };
        if let Some(Value::Array(alternatives)) = o.get("$one_of") {
            let kinds: Vec<Kind> = alternatives.iter().map(kind_of).collect::<Option<_>>()?;
            let kind = *kinds.first()?;
            if kinds.iter().any(|k| *k != kind) {
                return None;
            }
            let labels = alternatives
                .iter()
                .filter_map(|a| a.get("$label").and_then(Value::as_str))
                .map(String::from)
                .collect();
            return Some(Asked { kind, labels });
        }
        Some(Asked {
            kind: kind_of(pattern)?,
            labels: Vec::new(),
        })
    }
}

/// The kind an object pattern asks for, or an answer is: the one of
/// `result` and `error` it names (naming both, or neither, says nothing).
fn kind_of(pattern: &Value) -> Option<Kind> {
    let o = pattern.as_object()?;
    match (o.contains_key("result"), o.contains_key("error")) {
        (true, false) => Some(Kind::Result),
        (false, true) => Some(Kind::Error),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::source::Place;
    use serde_json::json;

    fn pattern(v: Value) -> Pattern {
        super::super::compile(&v, &|_| Place::default()).unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn a_result_where_every_outcome_is_an_error_is_said_once_with_the_labels() {
        let p = pattern(json!({"$one_of": [
            {"$label": "-32602", "error": {"code": -32602}},
            {"$label": "another error code", "$verdict": "info", "error": {"code": {"$type": "integer"}}}
        ]}));
        let answer = json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "Unknown tool"}], "isError": true}});
        assert_eq!(
            kind_mismatch(&p, &answer).as_deref(),
            Some("expected an error (-32602, or another error code), but the server answered a result with isError: true")
        );
    }

    #[test]
    fn an_error_where_a_result_is_expected_names_its_code() {
        let p = pattern(json!({"result": {"tools": {"$type": "array"}}}));
        let answer = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}});
        assert_eq!(
            kind_mismatch(&p, &answer).as_deref(),
            Some("expected a result, but the server answered an error with code -32601")
        );
    }

    #[test]
    fn agreeing_kinds_mixed_outcomes_and_other_patterns_say_nothing() {
        let error = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600}});
        let result = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert_eq!(
            kind_mismatch(&pattern(json!({"error": {"code": -32602}})), &error),
            None
        );
        let mixed = pattern(json!({"$one_of": [{"error": {}}, {"result": {}}]}));
        assert_eq!(kind_mismatch(&mixed, &result), None);
        assert_eq!(kind_mismatch(&pattern(json!({"id": 1})), &result), None);
        assert_eq!(
            kind_mismatch(&pattern(json!({"error": {}})), &json!({"id": 1})),
            None
        );
    }

    #[test]
    fn the_message_is_the_same_whatever_the_content_of_the_answer() {
        let p = pattern(json!({"error": {}}));
        let stateful = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        let stateless =
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "_meta": {}}});
        assert_eq!(kind_mismatch(&p, &stateful), kind_mismatch(&p, &stateless));
        assert_eq!(
            kind_mismatch(&p, &stateful).as_deref(),
            Some("expected an error, but the server answered a result")
        );
    }
}
