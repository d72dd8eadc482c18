//! Readable differences between what a scenario expected and what came back:
//! pretty-printed, key-sorted JSON and a unified diff.

use serde_json::{Map, Value};
use similar::TextDiff;

/// Pretty JSON with object keys sorted, so diffs do not depend on key order.
pub fn sorted_pretty(value: &Value) -> String {
    serde_json::to_string_pretty(&sort_keys(value)).unwrap_or_else(|_| value.to_string())
}

fn sort_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sort_keys(v)))
                    .collect::<Map<_, _>>(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sort_keys).collect()),
        other => other.clone(),
    }
}

/// The part of `actual` that `pattern` talks about: object patterns without
/// `$exact` only look at their own keys, so other keys would only add noise.
/// When a key the pattern wants is missing, the whole object is kept, since
/// what came instead (`result` for `error`, say) is the interesting part.
pub fn project(actual: &Value, pattern: &Value) -> Value {
    match (actual, pattern) {
        (Value::Object(a), Value::Object(p))
            if !p.keys().any(|k| k.starts_with('$')) && p.keys().all(|k| a.contains_key(k)) =>
        {
            let mut out = Map::new();
            for key in p.keys() {
                if let Some(v) = a.get(key) {
                    out.insert(key.clone(), project(v, &p[key]));
                }
            }
            Value::Object(out)
        }
        (Value::Array(a), Value::Array(p)) if a.len() == p.len() => {
            Value::Array(a.iter().zip(p).map(|(a, p)| project(a, p)).collect())
        }
        _ => actual.clone(),
    }
}

/// A unified diff from `expected` to `actual`, or None when they print the same.
pub fn unified(expected: &Value, actual: &Value) -> Option<String> {
    let left = sorted_pretty(expected) + "\n";
    let right = sorted_pretty(actual) + "\n";
    if left == right {
        return None;
    }
    let diff = TextDiff::from_lines(&left, &right);
    Some(
        diff.unified_diff()
            .context_radius(3)
            .header("expected", "actual")
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn diff_is_key_sorted_and_projected() {
        let pattern = json!({"error": {"code": -32601}});
        let actual = json!({"jsonrpc": "2.0", "id": 1, "error": {"message": "x", "code": -32603}});
        let shown = project(&actual, &pattern);
        assert_eq!(shown, json!({"error": {"code": -32603}}));
        let diff = unified(&pattern, &shown).unwrap_or_default();
        assert!(
            diff.contains("-    \"code\": -32601") && diff.contains("+    \"code\": -32603"),
            "{diff}"
        );
        assert_eq!(
            unified(&json!({"b": 1, "a": 2}), &json!({"a": 2, "b": 1})),
            None
        );
        let missing = project(
            &json!({"id": 1, "result": {}}),
            &json!({"error": {"code": 1}}),
        );
        assert_eq!(missing, json!({"id": 1, "result": {}}));
    }
}
