//! Helpers on lists and maps: order, counts, frequencies, graph walks,
//! and maps built from others. Items compare by value, as `json_equal`
//! compares them.

use std::collections::{BTreeSet, HashMap};

use cel::ExecutionError;
use serde_json::{Map, Value};

use crate::expr::helper::{helper_table, list_arg, str_arg, Args, Helper, HelperResult};

/// The helpers of this module.
pub const HELPERS: &[Helper] = helper_table! {
    sorted: 1, non_increasing: 1, parse_json: 1, keys: 1, count: 2, sum: 1, reachable: 2,
    repeated: 1, by_frequency: 1, holders: 2, only: 2, with_entry: 3,
};

/// Canonical text of a value, so lists of objects can be compared as sets:
/// two JSON values share it exactly when they are equal. Object keys are
/// sorted and integral numbers written as integers (`1.0` is `1`).
fn canonical(v: &Value) -> String {
    let mut out = Vec::new();
    write_canonical(v, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

fn write_canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                // Writing into a Vec cannot fail.
                let _ = serde_json::to_writer(&mut *out, k);
                out.push(b':');
                write_canonical(v, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
                out.extend_from_slice((f as i64).to_string().as_bytes())
            }
            _ => out.extend_from_slice(n.to_string().as_bytes()),
        },
        other => {
            let _ = serde_json::to_writer(&mut *out, other);
        }
    }
}

/// The items that occur more than once, each once, in the order of their
/// first occurrence (what `xs.filter(x, count(xs, x) > 1).distinct()`
/// gives, in two passes where that counts the whole list for every item).
fn repeated(a: &Args) -> HelperResult {
    let items = list_arg("repeated", &a[0])?;
    let keys: Vec<String> = items.iter().map(canonical).collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for k in &keys {
        *counts.entry(k.as_str()).or_default() += 1;
    }
    let mut out = Vec::new();
    for (item, key) in items.iter().zip(&keys) {
        if let Some(n) = counts.get_mut(key.as_str()).filter(|n| **n > 1) {
            // Counted down to zero: each repeat is given once.
            *n = 0;
            out.push(item.clone());
        }
    }
    Ok(Value::Array(out))
}

/// The distinct items, the most frequent first, ties in the order of first
/// occurrence (what `xs.distinct().sortBy(x, -count(xs, x))` gives, in one
/// pass where that counts the whole list for every distinct item: a tag
/// vocabulary over ten thousand tools took seconds).
fn by_frequency(a: &Args) -> HelperResult {
    let items = list_arg("by_frequency", &a[0])?;
    let mut order: Vec<(&Value, usize)> = Vec::new();
    let mut position: HashMap<String, usize> = HashMap::new();
    for item in items {
        let slot = *position.entry(canonical(item)).or_insert_with(|| {
            order.push((item, 0));
            order.len() - 1
        });
        order[slot].1 += 1;
    }
    // A stable sort keeps first occurrences in order among equal counts.
    order.sort_by_key(|entry| std::cmp::Reverse(entry.1));
    Ok(Value::Array(
        order.into_iter().map(|(v, _)| v.clone()).collect(),
    ))
}

/// `holders(labels, names)`: for each label, the names of the items that
/// carry it, in the items' order, each item once. `labels[i]` is the list
/// of item i's labels (its tags, its groups), `names[i]` its name; labels
/// that are not strings name nothing a filter can ask for and are left
/// out. The filter scenarios check one filter per tag or group: the tools
/// it admits are `holders[x]`, where filtering every tool again for each
/// tag scanned the listing once per tag (half a second over ten thousand
/// tools and 30 tags).
fn holders(a: &Args) -> HelperResult {
    let labels = list_arg("holders", &a[0])?;
    let names = list_arg("holders", &a[1])?;
    if labels.len() != names.len() {
        return Err(ExecutionError::function_error(
            "holders",
            format!(
                "expects one name per item: {} label lists, {} names",
                labels.len(),
                names.len()
            ),
        ));
    }
    let mut held: Map<String, Value> = Map::new();
    for (i, (item_labels, name)) in labels.iter().zip(names).enumerate() {
        let item_labels = item_labels.as_array().ok_or_else(|| {
            ExecutionError::function_error(
                "holders",
                format!(
                    "expects a list of labels for each item; item {i} has {}",
                    crate::jsonrpc::type_name(item_labels)
                ),
            )
        })?;
        for (j, label) in item_labels.iter().enumerate() {
            // A label repeated in one item's list still names the item once.
            let Some(label) = label.as_str().filter(|_| !item_labels[..j].contains(label)) else {
                continue;
            };
            if let Value::Array(list) = held
                .entry(label)
                .or_insert_with(|| Value::Array(Vec::new()))
            {
                list.push(name.clone());
            }
        }
    }
    Ok(Value::Object(held))
}

fn sorted(a: &Args) -> HelperResult {
    let mut items = list_arg("sorted", &a[0])?.clone();
    items.sort_by(compare_json);
    Ok(Value::Array(items))
}

fn compare_json(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        _ => canonical(a).cmp(&canonical(b)),
    }
}

fn non_increasing(a: &Args) -> HelperResult {
    let items = list_arg("non_increasing", &a[0])?;
    Ok(Value::Bool(items.windows(2).all(|w| {
        compare_json(&w[0], &w[1]) != std::cmp::Ordering::Less
    })))
}

fn parse_json(a: &Args) -> HelperResult {
    let text = str_arg("parse_json", &a[0])?;
    let v: Value = serde_json::from_str(text).map_err(|e| {
        ExecutionError::function_error("parse_json", format!("text is not JSON: {e}"))
    })?;
    Ok(v)
}

fn keys(a: &Args) -> HelperResult {
    let obj = a[0]
        .as_object()
        .ok_or_else(|| ExecutionError::function_error("keys", "expects a map"))?;
    // A CEL map has no order, so the keys are sorted: the same map always
    // gives the same list.
    let mut names: Vec<&String> = obj.keys().collect();
    names.sort();
    Ok(Value::Array(
        names
            .into_iter()
            .map(|k| Value::String(k.clone()))
            .collect(),
    ))
}

/// The map with only the listed keys: arguments built from a generated
/// combination (`only({'limit': limit, 'query': q}, present)`).
fn only(a: &Args) -> HelperResult {
    let obj = a[0].as_object().ok_or_else(|| {
        ExecutionError::function_error("only", "expects a map and a list of keys")
    })?;
    let wanted = a[1].as_array().ok_or_else(|| {
        ExecutionError::function_error("only", "expects a map and a list of keys")
    })?;
    Ok(Value::Object(
        obj.iter()
            .filter(|(k, _)| wanted.iter().any(|w| w.as_str() == Some(k.as_str())))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    ))
}

/// The map with one entry set (added or replaced): arguments that must hold
/// a value of the scenario's choosing beside the ones `sample_args` made
/// (`with_entry(sample_args(t.inputSchema), param, 'us-west1')`).
fn with_entry(a: &Args) -> HelperResult {
    let expects =
        || ExecutionError::function_error("with_entry", "expects a map, a key and a value");
    let mut obj = a[0].as_object().ok_or_else(expects)?.clone();
    let key = a[1].as_str().ok_or_else(expects)?;
    obj.insert(key.to_string(), a[2].clone().into_owned());
    Ok(Value::Object(obj))
}

fn count(a: &Args) -> HelperResult {
    let needle = canonical(&a[1]);
    let n = list_arg("count", &a[0])?
        .iter()
        .filter(|x| canonical(x) == needle)
        .count();
    Ok(Value::from(n as i64))
}

/// The sum of a list of numbers (an int when every item is an integer).
fn sum(a: &Args) -> HelperResult {
    let items = list_arg("sum", &a[0])?;
    if items.iter().all(|v| v.as_i64().is_some()) {
        return Ok(Value::from(
            items.iter().filter_map(Value::as_i64).sum::<i64>(),
        ));
    }
    let total = items
        .iter()
        .map(|v| {
            v.as_f64()
                .ok_or_else(|| ExecutionError::function_error("sum", "expects a list of numbers"))
        })
        .sum::<Result<f64, _>>()?;
    Ok(Value::from(total))
}

/// The nodes reachable from `start` in one or more steps along `edges`, a
/// list of `[from, to]` pairs, in the order they are first reached; `start`
/// is in it only when it lies on a cycle. CEL has no recursion, so a
/// transitive walk (nested groups, their cycles) needs this helper.
fn reachable(a: &Args) -> HelperResult {
    let mut next: std::collections::HashMap<String, Vec<&Value>> = Default::default();
    for edge in list_arg("reachable", &a[0])? {
        match edge.as_array().map(Vec::as_slice) {
            Some([from, to]) => next.entry(canonical(from)).or_default().push(to),
            _ => {
                return Err(ExecutionError::function_error(
                    "reachable",
                    format!("expects edges as [from, to] pairs, got {edge}"),
                ))
            }
        }
    }
    let mut seen = BTreeSet::new();
    let mut found: Vec<Value> = Vec::new();
    let mut todo = vec![canonical(&a[1])];
    while let Some(node) = todo.pop() {
        for to in next.get(&node).into_iter().flatten() {
            let key = canonical(to);
            if seen.insert(key.clone()) {
                found.push((*to).clone());
                todo.push(key);
            }
        }
    }
    Ok(Value::Array(found))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_text_ignores_key_order_and_integral_floats() {
        assert_eq!(
            canonical(&json!({"b": 1.0, "a": [1, "x\"y", null, {"d": true, "c": 2.5}]})),
            r#"{"a":[1,"x\"y",null,{"c":2.5,"d":true}],"b":1}"#
        );
    }
}
