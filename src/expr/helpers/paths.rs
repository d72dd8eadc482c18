//! Guards on nested keys: a chain of `has(…)` or a type test in one call,
//! each declared with what it reads (the end of its path, not the value).

use cel::ExecutionError;
use serde_json::Value;

use crate::expr::helper::{helper_table, Args, Helper, HelperResult};
use crate::json::ReadTree;

/// The helpers of this module.
pub const HELPERS: &[Helper] = helper_table! {
    has_path: 2 reads path_read,
    is_true: 2 reads path_read,
    field_is: 3 reads field_is_read,
};

/// The value at a dotted path of map keys (`'capabilities.tools.search'`),
/// if every step is a map that has the next key.
fn at_path<'v>(name: &str, args: &'v Args) -> Result<Option<&'v Value>, ExecutionError> {
    let [x, path] = args else {
        return Err(ExecutionError::function_error(
            name,
            "takes a value and a dotted path of keys, e.g. 'capabilities.tools.search'",
        ));
    };
    let Value::String(path) = &**path else {
        return Err(ExecutionError::function_error(
            name,
            "takes a value and a dotted path of keys, e.g. 'capabilities.tools.search'",
        ));
    };
    Ok(path
        .split('.')
        .try_fold(&**x, |here, key| here.as_object()?.get(key)))
}

/// `has_path(server, 'capabilities.filtering.groups')`: the chain of
/// `has(...)` guards for a nested key in one call; false, never an error,
/// when a step is missing or is not a map.
fn has_path(a: &Args) -> HelperResult {
    Ok(Value::Bool(at_path("has_path", a)?.is_some()))
}

/// `is_true(server, 'capabilities.tools.search')`: the nested value is the
/// boolean `true` (a capability flag); false when it is absent, false, or
/// not a boolean.
fn is_true(a: &Args) -> HelperResult {
    Ok(Value::Bool(
        at_path("is_true", a)? == Some(&Value::Bool(true)),
    ))
}

/// `has_path(x, 'a.b')` and `is_true(x, 'a.b')` observe the value at the
/// end of the path: its presence, or whether it is `true`. A path that is
/// not a literal reads the whole value.
fn path_read(literals: &[Option<&str>]) -> Vec<ReadTree> {
    let value = match literals.get(1).copied().flatten() {
        Some(path) => path
            .rsplit('.')
            .fold(ReadTree::default(), |leaf, key| ReadTree::field(key, leaf)),
        None => ReadTree::whole(),
    };
    vec![value, ReadTree::whole()]
}

/// `field_is(x, 'key', 'string')`: `x` is a map whose `key` holds a value of
/// that JSON type (`string`, `list`, `map`, `bool`, `number`, `null`); the
/// type guard `type(x) == map && has(x.key) && type(x.key) == string` in one
/// call, false (never an error) whatever `x` is.
fn field_is(a: &Args) -> HelperResult {
    let [x, key, kind] = a else {
        return Err(ExecutionError::function_error(
            "field_is",
            "takes a value, a key name and a type name",
        ));
    };
    let (Value::String(key), Value::String(kind)) = (&**key, &**kind) else {
        return Err(ExecutionError::function_error(
            "field_is",
            "takes a value, a key name and a type name",
        ));
    };
    let value = x.as_object().and_then(|map| map.get(key));
    let holds = match (kind.as_str(), value) {
        (_, None) => false,
        ("string", Some(Value::String(_)))
        | ("list", Some(Value::Array(_)))
        | ("map", Some(Value::Object(_)))
        | ("bool", Some(Value::Bool(_)))
        | ("null", Some(Value::Null))
        | ("number", Some(Value::Number(_))) => true,
        ("string" | "list" | "map" | "bool" | "null" | "number", Some(_)) => false,
        (other, _) => {
            return Err(ExecutionError::function_error(
                "field_is",
                format!("unknown type name {other:?} (string, list, map, bool, number, null)"),
            ))
        }
    };
    Ok(Value::Bool(holds))
}

/// `field_is(x, 'key', 'string')` observes the type of `x.key`.
fn field_is_read(literals: &[Option<&str>]) -> Vec<ReadTree> {
    let value = match literals.get(1).copied().flatten() {
        Some(key) => ReadTree::field(key, ReadTree::default()),
        None => ReadTree::whole(),
    };
    vec![value, ReadTree::whole(), ReadTree::whole()]
}
