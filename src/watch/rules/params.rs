//! Reading a check's `with:` parameters, each missing or mistyped one
//! explained by its key. Every check kind's parser uses these.

use serde_json::Value;

pub fn string(with: &Value, key: &str) -> Result<String, String> {
    with.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("`with.{key}` must be a string"))
}

pub fn strings(with: &Value, key: &str) -> Result<Vec<String>, String> {
    let list = with
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("`with.{key}` must be a list of strings"))?;
    list.iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| format!("`with.{key}` must be a list of strings"))
}

pub fn integers(with: &Value, key: &str) -> Result<Vec<i64>, String> {
    let list = with
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("`with.{key}` must be a list of integers"))?;
    list.iter()
        .map(Value::as_i64)
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| format!("`with.{key}` must be a list of integers"))
}
