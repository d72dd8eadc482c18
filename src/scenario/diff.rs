//! What a failed `expect` shows: the part of the answer its pattern talks
//! about, next to the pattern, as key-sorted pretty JSON and a unified diff.
//! The view is bounded: long arrays and strings are elided with counts,
//! except around the first mismatch, so a one-line `$contains` against a
//! list of a hundred tools gives a diff of a dozen lines, not thousands.

use serde_json::{Map, Value};
use similar::TextDiff;

use super::pattern::{Node, Op, Operator, Pattern};

/// Keys the executor adds to an answer (the request it sent, the pages it
/// walked): they are not part of what the server sent.
pub const HARNESS_KEYS: &[&str] = &["request", "pages", "page_count"];

/// Arrays longer than this are elided.
const MAX_ITEMS: usize = 5;
/// Items kept of an elided array away from the mismatch.
const HEAD_ITEMS: usize = 2;
/// Strings longer than this (in characters) are cut…
const MAX_CHARS: usize = 120;
/// …to this many characters, or to `FOCUS_CHARS` at the mismatch itself.
const KEPT_CHARS: usize = 80;
const FOCUS_CHARS: usize = 1000;
/// Objects and arrays nested deeper than this, away from the mismatch, are
/// written on one line when short, or as a count.
const MAX_DEPTH: usize = 3;
const INLINE_CHARS: usize = 60;

/// The unified diff from the pattern to the answer, bounded around `focus`
/// (the path of the first mismatch, e.g. `result.tools[3].name`); None when
/// both sides print the same.
pub fn expect_diff(pattern: &Pattern, answer: &Value, focus: &str) -> Option<String> {
    let answer = without_harness_keys(answer, |k| pattern.field(k).is_some());
    let actual = project(&answer, pattern);
    let expected = expected_view(pattern, Some(&answer));
    unified(&render(&expected, focus), &render(&actual, focus))
}

/// `answer` without the keys the executor added, unless `asked(key)` (the
/// pattern names it).
pub fn without_harness_keys(answer: &Value, asked: impl Fn(&str) -> bool) -> Value {
    match answer {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !HARNESS_KEYS.contains(&k.as_str()) || asked(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The part of `actual` that `pattern` talks about: object patterns without
/// `$exact` only look at their own keys, `$contains` and `$each` look at each
/// item through their operand, so other keys would only add noise. When a key
/// the pattern wants is missing, the whole object is kept, since what came
/// instead (`result` for `error`, say) is the interesting part; an `error`
/// the pattern did not ask about is kept for the same reason.
pub fn project(actual: &Value, pattern: &Pattern) -> Value {
    let mut shown = project_at(actual, pattern);
    if let (Some(error), Value::Object(map)) = (actual.get("error"), &mut shown) {
        if !map.contains_key("error") {
            map.insert("error".into(), error.clone());
        }
    }
    shown
}

fn project_at(actual: &Value, pattern: &Pattern) -> Value {
    let p = match &pattern.node {
        Node::Object(p) => p,
        Node::Array(items) => {
            return match actual {
                Value::Array(a) if a.len() == items.len() => {
                    Value::Array(a.iter().zip(items).map(|(a, p)| project_at(a, p)).collect())
                }
                _ => actual.clone(),
            }
        }
        _ => return actual.clone(),
    };
    let inner = match (p.op(Operator::Contains), p.op(Operator::Each)) {
        (Some(Op::Contains(inner)), _) => Some((inner, false)),
        (_, Some(Op::Each(inner))) => Some((inner, true)),
        _ => None,
    };
    if let Some((inner, each)) = inner {
        match actual {
            Value::Array(items) => {
                return Value::Array(items.iter().map(|i| project_at(i, inner)).collect())
            }
            Value::Object(map) if each => {
                return Value::Object(
                    map.iter()
                        .map(|(k, v)| (k.clone(), project_at(v, inner)))
                        .collect(),
                )
            }
            _ => {}
        }
    }
    if let Some(Op::OneOf(alts)) = p.op(Operator::OneOf) {
        return project_one_of(actual, alts);
    }
    let Value::Object(a) = actual else {
        return actual.clone();
    };
    let plain: Vec<(&str, &Pattern)> = p.fields().collect();
    if plain.is_empty() {
        return actual.clone();
    }
    if p.exact {
        return Value::Object(
            a.iter()
                .map(|(k, v)| {
                    let shown = plain
                        .iter()
                        .find(|(f, _)| f == k)
                        .map_or_else(|| v.clone(), |(_, q)| project_at(v, q));
                    (k.clone(), shown)
                })
                .collect(),
        );
    }
    let absent_ok =
        |q: &Pattern| matches!(&q.node, Node::Object(o) if o.op(Operator::Absent).is_some());
    if plain
        .iter()
        .any(|(k, q)| !a.contains_key(*k) && !absent_ok(q))
    {
        return actual.clone();
    }
    Value::Object(
        plain
            .into_iter()
            .filter_map(|(k, q)| a.get(k).map(|v| (k.to_string(), project_at(v, q))))
            .collect(),
    )
}

/// Alternatives that are objects: the keys any of them names (`error` or
/// `result`, say), whole; otherwise the whole answer.
fn project_one_of(actual: &Value, alts: &[Pattern]) -> Value {
    let Value::Object(a) = actual else {
        return actual.clone();
    };
    let mut keys: Vec<&str> = Vec::new();
    for alt in alts {
        let Node::Object(alt) = &alt.node else {
            return actual.clone();
        };
        keys.extend(alt.fields().map(|(k, _)| k));
    }
    let kept: Map<String, Value> = a
        .iter()
        .filter(|(k, _)| keys.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if kept.is_empty() {
        actual.clone()
    } else {
        Value::Object(kept)
    }
}

/// The expected side: the pattern, except that every part of it that the
/// answer matches shows as the answer does, so the diff marks only what
/// departs from the pattern.
pub fn expected_view(pattern: &Pattern, actual: Option<&Value>) -> Value {
    if let Some(a) = actual {
        if pattern.matches(Some(a)).is_ok() {
            return project_at(a, pattern);
        }
    }
    match (&pattern.node, actual) {
        (Node::Object(p), Some(Value::Object(a))) if !p.has_ops() => Value::Object(
            p.fields()
                .map(|(k, q)| (k.to_string(), expected_view(q, a.get(k))))
                .collect(),
        ),
        (Node::Array(p), Some(Value::Array(a))) if p.len() == a.len() => Value::Array(
            p.iter()
                .zip(a)
                .map(|(q, v)| expected_view(q, Some(v)))
                .collect(),
        ),
        _ => pattern.to_value().clone(),
    }
}

/// Pretty JSON with object keys sorted (so diffs do not depend on key order),
/// long arrays and strings elided except on the way to `focus`. Elisions are
/// written outside any JSON string (`… 104 more items …`), so they cannot be
/// taken for something the server sent.
pub fn render(value: &Value, focus: &str) -> String {
    let mut out = String::new();
    write_value(value, "", focus, 0, &mut out);
    out.push('\n');
    out
}

/// Whether `path` is `focus` or leads to it.
fn on_focus(path: &str, focus: &str) -> bool {
    match focus.strip_prefix(path) {
        Some(rest) => path.is_empty() || rest.is_empty() || rest.starts_with(['.', '[']),
        None => false,
    }
}

fn child_key(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n("  ", indent));
}

fn write_value(value: &Value, path: &str, focus: &str, indent: usize, out: &mut String) {
    let nested = matches!(value, Value::Object(m) if !m.is_empty())
        || matches!(value, Value::Array(a) if !a.is_empty());
    let near_mismatch = on_focus(path, focus) || (!focus.is_empty() && on_focus(focus, path));
    if nested && indent > MAX_DEPTH && !near_mismatch {
        return write_summary(value, out);
    }
    match value {
        Value::Object(map) if !map.is_empty() => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push_str("{\n");
            for (i, (k, v)) in entries.iter().enumerate() {
                pad(out, indent + 1);
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push_str(": ");
                write_value(v, &child_key(path, k), focus, indent + 1, out);
                out.push_str(if i + 1 < entries.len() { ",\n" } else { "\n" });
            }
            pad(out, indent);
            out.push('}');
        }
        Value::Array(items) if !items.is_empty() => write_array(items, path, focus, indent, out),
        Value::String(s) => write_string(s, path == focus && !focus.is_empty(), out),
        other => out.push_str(&other.to_string()),
    }
}

/// A deep object or array away from the mismatch: compact JSON when short,
/// else how many keys or items it has.
fn write_summary(value: &Value, out: &mut String) {
    let compact = sorted(value).to_string();
    if compact.chars().count() <= INLINE_CHARS {
        out.push_str(&compact);
        return;
    }
    match value {
        Value::Object(map) => out.push_str(&format!("{{ … {} keys … }}", map.len())),
        Value::Array(items) => out.push_str(&format!("[ … {} items … ]", items.len())),
        other => out.push_str(&other.to_string()),
    }
}

fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sorted(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// An array, elided to a window when long: the items around the mismatch,
/// or the first few.
fn write_array(items: &[Value], path: &str, focus: &str, indent: usize, out: &mut String) {
    let item_path = |i: usize| format!("{path}[{i}]");
    let (start, end) = if items.len() <= MAX_ITEMS {
        (0, items.len())
    } else {
        match (0..items.len()).find(|&i| on_focus(&item_path(i), focus)) {
            Some(i) => (i.saturating_sub(1), (i + 2).min(items.len())),
            None => (0, HEAD_ITEMS),
        }
    };
    out.push_str("[\n");
    if start > 0 {
        pad(out, indent + 1);
        out.push_str(&format!("… {start} items …\n"));
    }
    for (i, item) in items.iter().enumerate().take(end).skip(start) {
        pad(out, indent + 1);
        write_value(item, &item_path(i), focus, indent + 1, out);
        out.push_str(if i + 1 < end { ",\n" } else { "\n" });
    }
    if end < items.len() {
        pad(out, indent + 1);
        out.push_str(&format!("… {} more items …\n", items.len() - end));
    }
    pad(out, indent);
    out.push(']');
}

fn write_string(s: &str, focused: bool, out: &mut String) {
    let count = s.chars().count();
    let keep = if focused { FOCUS_CHARS } else { KEPT_CHARS };
    if count <= MAX_CHARS.max(keep) {
        out.push_str(&Value::String(s.to_string()).to_string());
        return;
    }
    let head: String = s.chars().take(keep).collect();
    out.push_str(&Value::String(head).to_string());
    out.push_str(&format!(" … {} more characters …", count - keep));
}

/// A unified diff from `expected` to `actual` text, or None when they are the same.
pub fn unified(expected: &str, actual: &str) -> Option<String> {
    if expected == actual {
        return None;
    }
    let diff = TextDiff::from_lines(expected, actual);
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
    use crate::scenario::model::Place;
    use crate::scenario::pattern;
    use serde_json::json;

    fn compiled(p: &Value) -> Pattern {
        pattern::compile(p, &|_| Place::default()).unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn tools(n: usize) -> Value {
        Value::Array(
            (0..n)
                .map(|i| {
                    json!({"name": format!("tool_{i}"), "description": "d".repeat(300),
                           "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}})
                })
                .collect(),
        )
    }

    #[test]
    fn diff_is_key_sorted_and_projected() {
        let pattern = json!({"error": {"code": -32601}});
        let actual = json!({"jsonrpc": "2.0", "id": 1, "error": {"message": "x", "code": -32603}});
        let shown = project(&actual, &compiled(&pattern));
        assert_eq!(shown, json!({"error": {"code": -32603}}));
        let diff = expect_diff(&compiled(&pattern), &actual, "error.code").unwrap_or_default();
        assert!(
            diff.contains("-    \"code\": -32601") && diff.contains("+    \"code\": -32603"),
            "{diff}"
        );
        assert_eq!(
            unified(
                &render(&json!({"b": 1, "a": 2}), ""),
                &render(&json!({"a": 2, "b": 1}), "")
            ),
            None
        );
        let missing = project(
            &json!({"id": 1, "result": {}}),
            &compiled(&json!({"error": {"code": 1}})),
        );
        assert_eq!(missing, json!({"id": 1, "result": {}}));
    }

    #[test]
    fn a_contains_check_against_a_long_list_stays_short() {
        let pattern = json!({"result": {"tools": {"$contains": {"name": "echo"}}}});
        let answer = json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": tools(106)},
                            "request": {"method": "tools/list"}});
        let diff = expect_diff(&compiled(&pattern), &answer, "result.tools").unwrap_or_default();
        assert!(diff.lines().count() <= 20, "{diff}");
        assert!(diff.contains("+        \"name\": \"tool_0\""), "{diff}");
        assert!(diff.contains("+      … 104 more items …"), "{diff}");
        assert!(
            !diff.contains("description"),
            "projected on the operand's keys: {diff}"
        );
        assert!(
            !diff.contains("request"),
            "what mcp-conform sent is not on the actual side: {diff}"
        );
    }

    #[test]
    fn a_long_array_is_shown_around_the_mismatch() {
        let names: Vec<Value> = (0..50).map(|i| json!({"name": format!("t{i}")})).collect();
        let mut bad = names.clone();
        bad[30] = json!({"name": 30});
        let pattern = json!({"tools": {"$each": {"name": {"$type": "string"}}}});
        let diff = expect_diff(
            &compiled(&pattern),
            &json!({"tools": bad}),
            "tools[30].name",
        )
        .unwrap_or_default();
        assert!(diff.contains("… 29 items …"), "{diff}");
        assert!(diff.contains("+      \"name\": 30"), "{diff}");
        assert!(
            diff.contains("\"t29\"") && diff.contains("\"t31\""),
            "{diff}"
        );
        assert!(diff.contains("… 18 more items …"), "{diff}");
        assert!(!diff.contains("\"t28\""), "{diff}");
    }

    #[test]
    fn long_strings_are_cut_with_a_count_except_at_the_mismatch() {
        let long = "x".repeat(500);
        let text = render(&json!({"a": long, "b": long}), "b");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            format!("  \"a\": \"{}\" … 420 more characters …,", "x".repeat(80))
        );
        assert_eq!(lines[2], format!("  \"b\": \"{long}\""));
        let short = render(&json!(["a", "b"]), "");
        assert_eq!(short, "[\n  \"a\",\n  \"b\"\n]\n");
        assert_eq!(
            render(&json!({"e": {}, "f": []}), ""),
            "{\n  \"e\": {},\n  \"f\": []\n}\n"
        );
    }

    #[test]
    fn the_expected_side_shows_matching_parts_as_the_answer_does() {
        let pattern = json!({"id": {"$type": "integer"}, "result": {"x": {"$type": "string"}}});
        let answer = json!({"id": 4, "result": {"x": 5}});
        let diff = expect_diff(&compiled(&pattern), &answer, "result.x").unwrap_or_default();
        assert!(
            !diff.contains("-  \"id\""),
            "the matching id is no difference: {diff}"
        );
        assert!(diff.contains("-    \"x\": {"), "{diff}");
        assert!(diff.contains("+    \"x\": 5"), "{diff}");
    }

    #[test]
    fn an_error_the_pattern_did_not_ask_about_is_shown() {
        let pattern = json!({"id": {"$eq": 9007199254740993u64}});
        let answer = json!({"jsonrpc": "2.0", "id": null,
                            "error": {"code": -32700, "message": "Parse error"}});
        let diff = expect_diff(&compiled(&pattern), &answer, "id").unwrap_or_default();
        assert!(diff.contains("+    \"message\": \"Parse error\""), "{diff}");
        assert!(diff.contains("+  \"id\": null"), "{diff}");
    }

    #[test]
    fn deep_parts_away_from_the_mismatch_are_summarised() {
        let answer = json!({"result": {"tools": [{"name": "a", "tags": ["x", "y"],
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "description": "d".repeat(70)}}}}]}});
        let text = render(&answer, "error");
        assert!(text.contains("        \"tags\": [\"x\",\"y\"]\n"), "{text}");
        assert!(
            text.contains("        \"inputSchema\": { … 2 keys … },\n"),
            "{text}"
        );
        let focused = render(&answer, "result.tools[0].inputSchema.properties");
        assert!(focused.contains("\"description\": \"ddd"), "{focused}");
    }

    #[test]
    fn focus_follows_paths_not_prefixes() {
        assert!(on_focus("", "a"));
        assert!(on_focus("a", "a.b"));
        assert!(on_focus("a[1]", "a[1].x"));
        assert!(!on_focus("a[1]", "a[10]"));
        assert!(!on_focus("ab", "abc"));
    }
}
