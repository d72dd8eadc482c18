//! The JSON pattern language of `expect`: objects match as subsets, arrays in
//! order and length, scalars by value, and `$`-operators say otherwise.

use regex::Regex;
use serde_json::{Map, Value};

use super::source::escape_pointer;

/// Operators that test the value they sit on.
const OPERATORS: &[&str] = &[
    "$type",
    "$absent",
    "$present",
    "$regex",
    "$contains",
    "$unordered",
    "$each",
    "$len",
    "$min_len",
    "$max_len",
    "$gte",
    "$lte",
    "$one_of",
    "$not",
    "$eq",
];
/// Keys that modify how the surrounding object or alternative is read.
const MODIFIERS: &[&str] = &["$exact", "$label", "$verdict", "$note"];
const TYPE_NAMES: &[&str] = &[
    "null", "boolean", "number", "integer", "string", "array", "object",
];

/// A problem in a pattern itself, found when the scenario is loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternError {
    /// JSON Pointer inside the pattern.
    pub pointer: String,
    pub message: String,
}

/// Checks a pattern's operators and operands, collecting every problem.
pub fn check(pattern: &Value) -> Vec<PatternError> {
    let mut errors = Vec::new();
    check_at(pattern, "", false, &mut errors);
    errors
}

fn check_at(pattern: &Value, pointer: &str, in_alternative: bool, errors: &mut Vec<PatternError>) {
    match pattern {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_at(item, &format!("{pointer}/{i}"), false, errors);
            }
        }
        Value::Object(map) => {
            for (key, operand) in map {
                let at = format!("{pointer}/{}", escape_pointer(key));
                if key.starts_with('$') {
                    if let Err(message) = check_operator(key, operand, in_alternative) {
                        errors.push(PatternError {
                            pointer: at.clone(),
                            message,
                        });
                    }
                    check_operand_patterns(key, operand, &at, errors);
                } else {
                    check_at(operand, &at, false, errors);
                }
            }
        }
        _ => {}
    }
}

fn check_operand_patterns(key: &str, operand: &Value, at: &str, errors: &mut Vec<PatternError>) {
    match (key, operand) {
        ("$one_of", Value::Array(alts)) => {
            for (i, alt) in alts.iter().enumerate() {
                check_at(alt, &format!("{at}/{i}"), true, errors);
            }
        }
        ("$unordered", Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                check_at(item, &format!("{at}/{i}"), false, errors);
            }
        }
        ("$contains" | "$each" | "$not", p) => check_at(p, at, false, errors),
        _ => {}
    }
}

fn check_operator(key: &str, operand: &Value, in_alternative: bool) -> Result<(), String> {
    let expect = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(format!("{key} takes {what}, found {}", describe(operand)))
        }
    };
    // An operand written as `${…}` is checked after interpolation, at run time.
    let deferred = operand.as_str().is_some_and(|t| t.contains("${"));
    match key {
        "$len" | "$min_len" | "$max_len" | "$gte" | "$lte" | "$unordered" | "$regex" | "$type"
        | "$one_of"
            if deferred =>
        {
            Ok(())
        }
        "$type" => match operand {
            Value::String(t) => check_type_name(t),
            Value::Array(ts) if !ts.is_empty() => ts.iter().try_for_each(|t| match t {
                Value::String(t) => check_type_name(t),
                other => Err(format!(
                    "$type list entries must be type names, found {}",
                    describe(other)
                )),
            }),
            _ => expect(false, "a type name or a non-empty list of type names"),
        },
        "$absent" | "$present" | "$exact" => expect(operand == &Value::Bool(true), "true"),
        "$regex" => match operand {
            Value::String(re) => Regex::new(re).map(|_| ()).map_err(|e| {
                let text = e.to_string();
                let reason = text
                    .lines()
                    .last()
                    .unwrap_or(&text)
                    .trim_start_matches("error: ")
                    .to_string();
                format!("$regex {re:?} does not compile: {reason}")
            }),
            _ => expect(false, "a regular expression string"),
        },
        "$len" | "$min_len" | "$max_len" => {
            expect(operand.as_u64().is_some(), "a non-negative integer")
        }
        "$gte" | "$lte" => expect(operand.is_number(), "a number"),
        "$one_of" => expect(
            operand.as_array().is_some_and(|a| !a.is_empty()),
            "a non-empty list of patterns",
        ),
        "$unordered" => expect(operand.is_array(), "a list of patterns"),
        "$contains" | "$each" | "$not" | "$eq" => Ok(()),
        "$label" | "$note" if in_alternative => expect(operand.is_string(), "a string"),
        "$verdict" if in_alternative => match operand.as_str() {
            Some("pass" | "warn" | "info") => Ok(()),
            _ => expect(false, "one of \"pass\", \"warn\", \"info\""),
        },
        "$label" | "$note" | "$verdict" => Err(format!(
            "{key} is only allowed directly inside a $one_of alternative"
        )),
        _ => Err(unknown_operator(key)),
    }
}

fn check_type_name(name: &str) -> Result<(), String> {
    if TYPE_NAMES.contains(&name) {
        Ok(())
    } else {
        Err(format!(
            "unknown type name \"{name}\" (expected one of {})",
            TYPE_NAMES.join(", ")
        ))
    }
}

fn unknown_operator(key: &str) -> String {
    let known: Vec<&str> = OPERATORS.iter().chain(MODIFIERS).copied().collect();
    let suggestion = known
        .iter()
        .min_by_key(|k| strsim::levenshtein(k, key))
        .filter(|k| strsim::levenshtein(k, key) <= 3)
        .map(|k| format!("; did you mean {k}?"))
        .unwrap_or_default();
    format!(
        "unknown operator {key}{suggestion} (known: {})",
        known.join(", ")
    )
}

fn describe(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 40 {
        format!("{}…", &text[..text.floor_char_boundary(40)])
    } else {
        text
    }
}

/// What a successful match chose along the way.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Matched {
    /// `$label`s of the `$one_of` alternatives that matched, with their paths.
    pub labels: Vec<(String, String)>,
    /// Non-pass verdicts of matched alternatives: (verdict, note).
    pub verdicts: Vec<(String, String)>,
}

/// The first place where a value departs from its pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// A readable path, e.g. `result.tools[3].name`.
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at {}: {}", self.path, self.message)
        }
    }
}

/// Matches `value` (None = absent) against `pattern`.
pub fn matches(pattern: &Value, value: Option<&Value>) -> Result<Matched, Mismatch> {
    let mut matched = Matched::default();
    match_at(pattern, value, "", &mut matched)?;
    Ok(matched)
}

/// Every place (at most `limit`) where `value` departs from `pattern`, the
/// first one being the mismatch [`matches`] reports. Plain objects and arrays,
/// and `$each` alone, go on past their first bad key or item, so a report can
/// list the other paths too; an operator that fails counts once.
pub fn mismatches(pattern: &Value, value: Option<&Value>, limit: usize) -> Vec<Mismatch> {
    let mut found = Vec::new();
    collect_mismatches(pattern, value, "", limit, &mut found);
    found
}

fn collect_mismatches(
    pattern: &Value,
    value: Option<&Value>,
    path: &str,
    limit: usize,
    found: &mut Vec<Mismatch>,
) {
    if found.len() >= limit {
        return;
    }
    match (pattern, value) {
        (Value::Object(map), Some(Value::Object(obj)))
            if !map.keys().any(|k| k.starts_with('$')) =>
        {
            for (key, sub) in map {
                collect_mismatches(sub, obj.get(key), &child_key(path, key), limit, found);
            }
        }
        (Value::Array(items), Some(Value::Array(arr))) if items.len() == arr.len() => {
            for (i, (p, v)) in items.iter().zip(arr).enumerate() {
                collect_mismatches(p, Some(v), &format!("{path}[{i}]"), limit, found);
            }
        }
        (Value::Object(map), Some(Value::Array(arr)))
            if map.len() == 1 && map.contains_key("$each") =>
        {
            let each = &map["$each"];
            for (i, v) in arr.iter().enumerate() {
                collect_mismatches(each, Some(v), &format!("{path}[{i}]"), limit, found);
            }
        }
        _ => {
            if let Err(e) = match_at(pattern, value, path, &mut Matched::default()) {
                found.push(e);
            }
        }
    }
}

fn fail<T>(path: &str, message: impl Into<String>) -> Result<T, Mismatch> {
    Err(Mismatch {
        path: path.to_string(),
        message: message.into(),
    })
}

fn child_key(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn match_at(
    pattern: &Value,
    value: Option<&Value>,
    path: &str,
    m: &mut Matched,
) -> Result<(), Mismatch> {
    match pattern {
        Value::Object(map) if map.keys().any(|k| k.starts_with('$')) => {
            match_operators(map, value, path, m)
        }
        Value::Object(map) => match_object(map, false, value, path, m),
        Value::Array(items) => match_array(items, value, path, m),
        scalar => match value {
            Some(v) if scalar_eq(scalar, v) => Ok(()),
            Some(v) => fail(
                path,
                format!("expected {}, found {}", describe(scalar), describe(v)),
            ),
            None => fail(
                path,
                format!("expected {}, but the key is absent", describe(scalar)),
            ),
        },
    }
}

fn scalar_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => number_eq(x, y),
        _ => a == b,
    }
}

/// Numbers are equal by value: `7 == 7.0`, but an integer beyond 2^53 is
/// never equal to the double nearest to it (9007199254740993 ≠ 9007199254740992.0),
/// which is exactly the defect a large-id check must see.
fn number_eq(x: &serde_json::Number, y: &serde_json::Number) -> bool {
    let int = |n: &serde_json::Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (int(x), int(y)) {
        (Some(a), Some(b)) => a == b,
        (Some(i), None) => y.as_f64().is_some_and(|f| float_is_int(f, i)),
        (None, Some(i)) => x.as_f64().is_some_and(|f| float_is_int(f, i)),
        (None, None) => x.as_f64() == y.as_f64(),
    }
}

fn float_is_int(f: f64, i: i128) -> bool {
    // 2^100 bounds every i64/u64 and keeps the cast exact.
    f.is_finite() && f.fract() == 0.0 && f.abs() < 2f64.powi(100) && f as i128 == i
}

/// Deep equality with numbers compared by value.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => scalar_eq(a, b),
    }
}

fn match_object(
    map: &Map<String, Value>,
    exact: bool,
    value: Option<&Value>,
    path: &str,
    m: &mut Matched,
) -> Result<(), Mismatch> {
    let Some(Value::Object(obj)) = value else {
        return match value {
            Some(v) => fail(path, format!("expected an object, found {}", describe(v))),
            None => fail(path, "expected an object, but the key is absent"),
        };
    };
    for (key, sub) in map.iter().filter(|(k, _)| !k.starts_with('$')) {
        match_at(sub, obj.get(key), &child_key(path, key), m)?;
    }
    if exact {
        if let Some(extra) = obj.keys().find(|k| !map.contains_key(*k)) {
            return fail(
                &child_key(path, extra),
                "unexpected key ($exact: true allows only the listed keys)",
            );
        }
    }
    Ok(())
}

fn match_array(
    items: &[Value],
    value: Option<&Value>,
    path: &str,
    m: &mut Matched,
) -> Result<(), Mismatch> {
    let Some(Value::Array(arr)) = value else {
        return fail(
            path,
            format!(
                "expected an array, found {}",
                value.map_or("nothing".into(), describe)
            ),
        );
    };
    if arr.len() != items.len() {
        return fail(
            path,
            format!("expected {} items, found {}", items.len(), arr.len()),
        );
    }
    for (i, (p, v)) in items.iter().zip(arr).enumerate() {
        match_at(p, Some(v), &format!("{path}[{i}]"), m)?;
    }
    Ok(())
}

fn match_operators(
    map: &Map<String, Value>,
    value: Option<&Value>,
    path: &str,
    m: &mut Matched,
) -> Result<(), Mismatch> {
    if map.contains_key("$absent") {
        return match value {
            None => Ok(()),
            Some(v) => fail(
                path,
                format!("expected the key to be absent, found {}", describe(v)),
            ),
        };
    }
    if let Some(alts) = map.get("$one_of").and_then(Value::as_array) {
        match_one_of(alts, value, path, m)?;
    }
    if let Some(inner) = map.get("$not") {
        if matches(inner, value).is_ok() {
            return fail(path, format!("expected not to match {}", describe(inner)));
        }
    }
    let has_plain_keys = map.keys().any(|k| !k.starts_with('$'));
    let Some(v) = value else {
        let needs_value = map
            .keys()
            .any(|k| k != "$not" && k != "$one_of" && OPERATORS.contains(&k.as_str()));
        if needs_value || has_plain_keys {
            return fail(path, "expected a value, but the key is absent");
        }
        return Ok(());
    };
    for (op, operand) in map.iter().filter(|(k, _)| k.starts_with('$')) {
        apply_operator(op, operand, v, path, m)?;
    }
    if has_plain_keys || map.contains_key("$exact") {
        match_object(map, map.contains_key("$exact"), Some(v), path, m)?;
    }
    Ok(())
}

fn match_one_of(
    alts: &[Value],
    value: Option<&Value>,
    path: &str,
    m: &mut Matched,
) -> Result<(), Mismatch> {
    let mut reasons = Vec::new();
    for (i, alt) in alts.iter().enumerate() {
        let mut inner = Matched::default();
        match match_at(alt, value, path, &mut inner) {
            Ok(()) => {
                m.labels.extend(inner.labels);
                m.verdicts.extend(inner.verdicts);
                let label = alt.get("$label").and_then(Value::as_str);
                if let Some(label) = label {
                    m.labels.push((path.to_string(), label.to_string()));
                }
                if let Some(verdict) = alt
                    .get("$verdict")
                    .and_then(Value::as_str)
                    .filter(|v| *v != "pass")
                {
                    let note = alt
                        .get("$note")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .unwrap_or_else(|| {
                            format!("accepted alternative '{}'", label.unwrap_or("unnamed"))
                        });
                    m.verdicts.push((verdict.to_string(), note));
                }
                return Ok(());
            }
            Err(e) => {
                let name = alt
                    .get("$label")
                    .and_then(Value::as_str)
                    .map_or(format!("#{}", i + 1), str::to_string);
                reasons.push(format!("{name}: {e}"));
            }
        }
    }
    fail(
        path,
        format!(
            "matched none of the accepted outcomes ({})",
            reasons.join("; ")
        ),
    )
}

fn apply_operator(
    op: &str,
    operand: &Value,
    v: &Value,
    path: &str,
    m: &mut Matched,
) -> Result<(), Mismatch> {
    match op {
        "$type" => check_type(operand, v, path),
        "$regex" => {
            let re = operand.as_str().and_then(|r| Regex::new(r).ok());
            match (re, v.as_str()) {
                (Some(re), Some(s)) if re.is_match(s) => Ok(()),
                (_, Some(s)) => fail(
                    path,
                    format!(
                        "{} does not match /{}/",
                        describe(&Value::String(s.into())),
                        operand.as_str().unwrap_or("")
                    ),
                ),
                _ => fail(
                    path,
                    format!("$regex needs a string, found {}", describe(v)),
                ),
            }
        }
        "$contains" => match_contains(operand, v, path),
        "$each" => match_each(operand, v, path, m),
        "$unordered" => match_unordered(operand.as_array().map_or(&[][..], Vec::as_slice), v, path),
        "$len" | "$min_len" | "$max_len" => check_len(op, operand.as_u64().unwrap_or(0), v, path),
        "$gte" | "$lte" => check_bound(op, operand, v, path),
        "$eq" => {
            if json_eq(operand, v) {
                Ok(())
            } else {
                fail(
                    path,
                    format!(
                        "expected exactly {}, found {}",
                        describe(operand),
                        describe(v)
                    ),
                )
            }
        }
        _ => Ok(()),
    }
}

fn type_matches(name: &str, v: &Value) -> bool {
    match name {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "number" => v.is_number(),
        "integer" => v.as_i64().is_some() || v.as_u64().is_some(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => false,
    }
}

fn check_type(operand: &Value, v: &Value, path: &str) -> Result<(), Mismatch> {
    let names: Vec<&str> = match operand {
        Value::String(s) => vec![s.as_str()],
        Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    if names.iter().any(|n| type_matches(n, v)) {
        Ok(())
    } else {
        fail(
            path,
            format!(
                "expected type {}, found {}",
                names.join(" or "),
                crate::jsonrpc::type_name(v)
            ),
        )
    }
}

fn match_contains(operand: &Value, v: &Value, path: &str) -> Result<(), Mismatch> {
    match v {
        Value::String(s) => match operand.as_str() {
            Some(needle) if s.contains(needle) => Ok(()),
            Some(needle) => fail(path, format!("expected the text to contain {needle:?}")),
            None => fail(path, "$contains on a string needs a string operand"),
        },
        Value::Array(items) => {
            if items
                .iter()
                .any(|item| matches(operand, Some(item)).is_ok())
            {
                Ok(())
            } else {
                fail(
                    path,
                    format!(
                        "no item of the {}-item array matches {}",
                        items.len(),
                        describe(operand)
                    ),
                )
            }
        }
        Value::Object(obj) => match operand.as_str() {
            Some(key) if obj.contains_key(key) => Ok(()),
            _ => fail(
                path,
                format!("expected the object to contain key {}", describe(operand)),
            ),
        },
        other => fail(
            path,
            format!(
                "$contains needs a string, array or object, found {}",
                describe(other)
            ),
        ),
    }
}

fn match_each(operand: &Value, v: &Value, path: &str, m: &mut Matched) -> Result<(), Mismatch> {
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                match_at(operand, Some(item), &format!("{path}[{i}]"), m)?;
            }
            Ok(())
        }
        Value::Object(obj) => {
            for (k, item) in obj {
                match_at(operand, Some(item), &child_key(path, k), m)?;
            }
            Ok(())
        }
        other => fail(
            path,
            format!("$each needs an array or object, found {}", describe(other)),
        ),
    }
}

/// Every pattern must match a distinct item, and no item may be left over.
fn match_unordered(patterns: &[Value], v: &Value, path: &str) -> Result<(), Mismatch> {
    let Value::Array(items) = v else {
        return fail(
            path,
            format!("$unordered needs an array, found {}", describe(v)),
        );
    };
    if items.len() != patterns.len() {
        return fail(
            path,
            format!(
                "expected {} items in any order, found {}",
                patterns.len(),
                items.len()
            ),
        );
    }
    let fits: Vec<Vec<bool>> = patterns
        .iter()
        .map(|p| {
            items
                .iter()
                .map(|item| matches(p, Some(item)).is_ok())
                .collect()
        })
        .collect();
    let mut owner: Vec<Option<usize>> = vec![None; items.len()];
    for (p, pattern) in patterns.iter().enumerate() {
        let mut seen = vec![false; items.len()];
        if !augment(p, &fits, &mut owner, &mut seen) {
            return fail(
                path,
                format!(
                    "no distinct item matches {} (patterns matched in any order)",
                    describe(pattern)
                ),
            );
        }
    }
    Ok(())
}

/// Kuhn's augmenting path: finds an item for pattern `p`, moving earlier choices if needed.
fn augment(p: usize, fits: &[Vec<bool>], owner: &mut [Option<usize>], seen: &mut [bool]) -> bool {
    for item in 0..owner.len() {
        if fits[p][item] && !seen[item] {
            seen[item] = true;
            if owner[item].is_none_or(|q| augment(q, fits, owner, seen)) {
                owner[item] = Some(p);
                return true;
            }
        }
    }
    false
}

fn check_len(op: &str, n: u64, v: &Value, path: &str) -> Result<(), Mismatch> {
    let len = match v {
        Value::Array(a) => a.len(),
        Value::String(s) => s.chars().count(),
        Value::Object(o) => o.len(),
        other => {
            return fail(
                path,
                format!(
                    "{op} needs an array, string or object, found {}",
                    describe(other)
                ),
            )
        }
    } as u64;
    let ok = match op {
        "$len" => len == n,
        "$min_len" => len >= n,
        _ => len <= n,
    };
    let relation = match op {
        "$len" => "exactly",
        "$min_len" => "at least",
        _ => "at most",
    };
    if ok {
        Ok(())
    } else {
        fail(path, format!("expected length {relation} {n}, found {len}"))
    }
}

fn check_bound(op: &str, operand: &Value, v: &Value, path: &str) -> Result<(), Mismatch> {
    let (Some(bound), Some(x)) = (operand.as_f64(), v.as_f64()) else {
        return fail(path, format!("{op} needs a number, found {}", describe(v)));
    };
    let ok = if op == "$gte" { x >= bound } else { x <= bound };
    if ok {
        Ok(())
    } else {
        let relation = if op == "$gte" { ">=" } else { "<=" };
        fail(
            path,
            format!("expected a number {relation} {bound}, found {x}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(p: Value, v: Value) -> Matched {
        matches(&p, Some(&v)).unwrap_or_else(|e| panic!("should match: {e}"))
    }
    fn bad(p: Value, v: Value) -> Mismatch {
        matches(&p, Some(&v)).expect_err("should not match")
    }

    #[test]
    fn objects_are_subsets_unless_exact() {
        ok(json!({"a": 1}), json!({"a": 1, "b": 2}));
        let m = bad(json!({"a": 1, "$exact": true}), json!({"a": 1, "b": 2}));
        assert_eq!(m.path, "b");
        assert_eq!(
            bad(json!({"a": {"b": 2}}), json!({"a": {"b": 3}})).path,
            "a.b"
        );
    }

    #[test]
    fn arrays_match_in_order_and_length() {
        ok(json!([1, {"x": 2}]), json!([1, {"x": 2, "y": 0}]));
        assert!(bad(json!([1, 2]), json!([2, 1])).path == "[0]");
        assert!(bad(json!([1]), json!([1, 2]))
            .message
            .contains("expected 1 items"));
    }

    #[test]
    fn type_presence_and_absence() {
        ok(
            json!({"code": {"$type": "integer"}}),
            json!({"code": -32601}),
        );
        bad(
            json!({"code": {"$type": "integer"}}),
            json!({"code": "-32601"}),
        );
        ok(json!({"x": {"$absent": true}}), json!({}));
        bad(json!({"x": {"$absent": true}}), json!({"x": null}));
        ok(json!({"x": {"$present": true}}), json!({"x": null}));
        bad(json!({"x": {"$present": true}}), json!({}));
        ok(json!({"$type": ["string", "null"]}), json!(null));
    }

    #[test]
    fn collection_operators() {
        ok(
            json!({"$contains": {"name": "a"}}),
            json!([{"name": "b"}, {"name": "a"}]),
        );
        ok(json!({"$contains": "ell"}), json!("hello"));
        ok(json!({"$each": {"$type": "string"}}), json!(["a", "b"]));
        bad(json!({"$each": {"$type": "string"}}), json!(["a", 1]));
        ok(json!({"$unordered": [2, 1]}), json!([1, 2]));
        bad(json!({"$unordered": [1, 1]}), json!([1, 2]));
        ok(
            json!({"$unordered": [{"$type": "number"}, 1]}),
            json!([1, 5]),
        );
        ok(
            json!({"$len": 2, "$max_len": 3, "$min_len": 1}),
            json!([1, 2]),
        );
        bad(json!({"$max_len": 10}), json!((0..11).collect::<Vec<_>>()));
        ok(json!({"$gte": 1, "$lte": 3}), json!(2));
        ok(json!({"$regex": "^tool_"}), json!("tool_search"));
        ok(json!({"$not": {"$type": "string"}}), json!(3));
        ok(json!({"$eq": {"$type": "x"}}), json!({"$type": "x"}));
    }

    #[test]
    fn one_of_records_label_and_verdict() {
        let p = json!({"$one_of": [
            {"$label": "rejected", "error": {"code": -32602}},
            {"$label": "ignored", "$verdict": "warn", "$note": "query was ignored", "result": {}}
        ]});
        let m = ok(p.clone(), json!({"error": {"code": -32602}}));
        assert_eq!(m.labels, vec![(String::new(), "rejected".to_string())]);
        assert!(m.verdicts.is_empty());
        let m = ok(p.clone(), json!({"result": {"tools": []}}));
        assert_eq!(
            m.verdicts,
            vec![("warn".into(), "query was ignored".into())]
        );
        let e = bad(p, json!({"error": {"code": -32603}}));
        assert!(
            e.message.contains("rejected:") && e.message.contains("ignored:"),
            "{e}"
        );
    }

    #[test]
    fn checker_reports_bad_operators_with_pointers() {
        let errors =
            check(&json!({"result": {"tools": {"$lenn": 3, "$regex": "("}}, "x": {"$label": "a"}}));
        let pointers: Vec<_> = errors.iter().map(|e| e.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            ["/result/tools/$lenn", "/result/tools/$regex", "/x/$label"]
        );
        assert!(
            errors[0].message.contains("did you mean $len"),
            "{}",
            errors[0].message
        );
        assert!(check(&json!({"$one_of": [{"$label": "x", "$verdict": "warn"}]})).is_empty());
        assert!(!check(&json!({"$type": "int"})).is_empty());
    }

    #[test]
    fn integers_beyond_two_to_the_53_are_not_equal_to_their_nearest_double() {
        let big: Value = serde_json::from_str("9007199254740993").unwrap_or_default();
        let rounded: Value = serde_json::from_str("9007199254740992.0").unwrap_or_default();
        assert!(!json_eq(&big, &rounded));
        assert!(!json_eq(&rounded, &big));
        let exact: Value = serde_json::from_str("9007199254740992").unwrap_or_default();
        assert!(json_eq(&exact, &rounded));
        assert!(json_eq(&serde_json::json!(7), &serde_json::json!(7.0)));
        assert!(!json_eq(&serde_json::json!(7), &serde_json::json!(7.5)));
        assert!(json_eq(
            &serde_json::json!(u64::MAX),
            &serde_json::json!(u64::MAX)
        ));
        assert!(!json_eq(
            &serde_json::json!(-1),
            &serde_json::json!(u64::MAX)
        ));
    }

    #[test]
    fn every_mismatch_is_listed_first_one_first() {
        let pattern = json!({"id": 1, "result": {"tools": {"$each": {"name": {"$type": "string"}}}, "x": [1, 2]}});
        let value =
            json!({"id": 2, "result": {"tools": [{"name": "a"}, {"name": 3}, {}], "x": [1, 5]}});
        let paths: Vec<String> = mismatches(&pattern, Some(&value), 10)
            .into_iter()
            .map(|m| m.path)
            .collect();
        assert_eq!(
            paths,
            [
                "id",
                "result.tools[1].name",
                "result.tools[2].name",
                "result.x[1]"
            ]
        );
        let first = matches(&pattern, Some(&value)).err().map(|m| m.path);
        assert_eq!(first.as_deref(), Some("id"));
        assert_eq!(mismatches(&pattern, Some(&value), 2).len(), 2);
        assert!(mismatches(&json!({"a": 1}), Some(&json!({"a": 1})), 10).is_empty());
    }
}
