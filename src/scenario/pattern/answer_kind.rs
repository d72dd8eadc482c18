//! Which kind of JSON-RPC answer an `expect` pattern asks for (a result or
//! an error), so that a mismatch of kind reads as one: "expected an error,
//! but the server answered a result: …" says in one line what "at error:
//! expected an object, but the key is absent" leaves the reader to work
//! out, and a `$one_of` whose every outcome is an error says it once
//! instead of once per outcome.

use serde_json::Value;

use super::Pattern;

/// How much of the server's answer the one-line message quotes.
const QUOTED_CHARS: usize = 160;

/// The two kinds of answer to a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Result,
    Error,
}

impl Kind {
    fn key(self) -> &'static str {
        match self {
            Kind::Result => "result",
            Kind::Error => "error",
        }
    }
}

/// A message for an answer of the other kind than `pattern` asks for
/// (every outcome of a `$one_of` alike), or None when the kinds agree or
/// the pattern does not say.
pub fn kind_mismatch(pattern: &Pattern, answer: &Value) -> Option<String> {
    let asked = Asked::of(pattern.to_value())?;
    let answered = answered(answer)?;
    if asked.kind == answered {
        return None;
    }
    let outcomes = match asked.labels.as_slice() {
        [] => String::new(),
        labels => format!(" ({})", labels.join(", or ")),
    };
    let what = match answered {
        Kind::Result => format!("a result: {}", quoted(&answer["result"])),
        Kind::Error => format!("an error: {}", error_summary(&answer["error"])),
    };
    Some(format!(
        "expected {}{outcomes}, but the server answered {what}",
        article(asked.kind)
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

/// The kind an object pattern asks for: the one of `result` and `error`
/// it names (a pattern naming both, or neither, does not say).
fn kind_of(pattern: &Value) -> Option<Kind> {
    let o = pattern.as_object()?;
    match (o.contains_key("result"), o.contains_key("error")) {
        (true, false) => Some(Kind::Result),
        (false, true) => Some(Kind::Error),
        _ => None,
    }
}

/// The kind of a JSON-RPC answer; None for something that is neither.
fn answered(answer: &Value) -> Option<Kind> {
    kind_of(answer)
}

fn article(kind: Kind) -> String {
    match kind {
        Kind::Result => "a result".into(),
        Kind::Error => format!("an {}", kind.key()),
    }
}

/// `-32601 (Method not found)`, from an error object.
fn error_summary(error: &Value) -> String {
    let code = error
        .get("code")
        .map_or_else(|| "no code".to_string(), Value::to_string);
    match error.get("message").and_then(Value::as_str) {
        Some(message) => format!("{code} ({})", clip(message)),
        None => code,
    }
}

fn quoted(value: &Value) -> String {
    clip(&value.to_string())
}

/// The text cut to QUOTED_CHARS characters, with an ellipsis if cut.
fn clip(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
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
            Some(
                r#"expected an error (-32602, or another error code), but the server answered a result: {"content":[{"type":"text","text":"Unknown tool"}],"isError":true}"#
            )
        );
    }

    #[test]
    fn an_error_where_a_result_is_expected_names_its_code_and_message() {
        let p = pattern(json!({"result": {"tools": {"$type": "array"}}}));
        let answer = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}});
        assert_eq!(
            kind_mismatch(&p, &answer).as_deref(),
            Some("expected a result, but the server answered an error: -32601 (Method not found)")
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
    fn a_long_answer_is_cut_on_a_character_boundary() {
        let p = pattern(json!({"error": {}}));
        let answer = json!({"result": {"text": "é".repeat(400)}});
        let message = kind_mismatch(&p, &answer).unwrap_or_default();
        assert!(message.ends_with('…'), "{message}");
        assert!(message.chars().count() < 260, "{message}");
    }
}
