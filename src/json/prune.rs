//! A JSON value cut down to what is read of it.

use serde_json::Value;

use super::ReadTree;
use crate::jsonrpc::compact::object_from;

/// `value` cut down to what `read` covers, as JSON (what the expression
/// engine's conversion of a value cut down gives): what a
/// scenario keeps of a long answer when its expressions, all together, read
/// only that much of it. Every expression then sees what it would have seen
/// of the whole answer.
pub fn prune(value: Value, read: &ReadTree) -> Value {
    if read.is_whole() {
        return value;
    }
    match (value, read.item_read()) {
        // The answer's own order, so that what is shown of it reads as sent.
        (Value::Object(map), _) => object_from(map.into_iter().filter_map(|(name, v)| {
            let kept = prune(v, read.member_read(&name)?.as_ref());
            Some((name, kept))
        })),
        (Value::Array(items), Some(item)) => {
            Value::Array(items.into_iter().map(|v| prune(v, item)).collect())
        }
        (Value::Array(_), None) if read.fields().is_empty() => Value::Array(Vec::new()),
        (other, _) => other,
    }
}

/// [`prune`] of a value the caller keeps: only what `read` covers is copied.
pub fn pruned_copy(value: &Value, read: &ReadTree) -> Value {
    if read.is_whole() {
        return value.clone();
    }
    match (value, read.item_read()) {
        (Value::Object(map), _) => object_from(map.iter().filter_map(|(name, v)| {
            Some((
                name.clone(),
                pruned_copy(v, read.member_read(name)?.as_ref()),
            ))
        })),
        (Value::Array(items), Some(item)) => {
            Value::Array(items.iter().map(|v| pruned_copy(v, item)).collect())
        }
        (Value::Array(_), None) if read.fields().is_empty() => Value::Array(Vec::new()),
        (other, _) => other.clone(),
    }
}
