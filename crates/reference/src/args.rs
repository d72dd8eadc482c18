//! Checks `tools/call` arguments against a tool's input schema: required
//! keys, JSON types, enums, numeric bounds, string lengths, array item types
//! and `additionalProperties: false`. Deliberately small: enough for a model
//! to learn which argument was wrong, not a JSON Schema implementation.

use mcp_conform_protocol::jsonrpc::type_name;
use serde_json::{Map, Value};

pub fn validate(schema: &Value, args: &Map<String, Value>) -> Result<(), String> {
    let props = schema.get("properties").and_then(Value::as_object);
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for key in required.iter().filter_map(Value::as_str) {
            if args.get(key).is_none_or(Value::is_null) {
                return Err(format!("missing required argument '{key}'"));
            }
        }
    }
    for (key, value) in args {
        match props.and_then(|p| p.get(key)) {
            Some(prop) => check(key, prop, value)?,
            None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                return Err(format!("unknown argument '{key}'"));
            }
            None => {}
        }
    }
    Ok(())
}

fn check(path: &str, schema: &Value, value: &Value) -> Result<(), String> {
    if let Some(types) = schema.get("type") {
        let ok = match types {
            Value::String(t) => has_type(t, value),
            Value::Array(ts) => ts
                .iter()
                .filter_map(Value::as_str)
                .any(|t| has_type(t, value)),
            _ => true,
        };
        if !ok {
            return Err(format!(
                "argument '{path}' must be of type {}, got {}",
                types_text(types),
                type_name(value)
            ));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            let list: Vec<String> = options.iter().map(Value::to_string).collect();
            return Err(format!(
                "argument '{path}' must be one of {}",
                list.join(", ")
            ));
        }
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
            if n < min {
                return Err(format!("argument '{path}' must be >= {min}, got {value}"));
            }
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
            if n > max {
                return Err(format!("argument '{path}' must be <= {max}, got {value}"));
            }
        }
    }
    if let Some(s) = value.as_str() {
        let len = s.chars().count() as u64;
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64) {
            if len < min {
                return Err(format!(
                    "argument '{path}' must be at least {min} characters"
                ));
            }
        }
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64) {
            if len > max {
                return Err(format!(
                    "argument '{path}' must be at most {max} characters"
                ));
            }
        }
    }
    if let (Some(items), Some(values)) = (schema.get("items"), value.as_array()) {
        for (i, v) in values.iter().enumerate() {
            check(&format!("{path}[{i}]"), items, v)?;
        }
    }
    if let (Some(obj), true) = (value.as_object(), schema.get("properties").is_some()) {
        validate(schema, obj).map_err(|e| format!("in '{path}': {e}"))?;
    }
    Ok(())
}

fn has_type(t: &str, v: &Value) -> bool {
    match t {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn types_text(types: &Value) -> String {
    match types {
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        other => other.as_str().unwrap_or("?").to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 1},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "status": {"type": "string", "enum": ["todo", "done"]},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["title"],
            "additionalProperties": false
        })
    }

    fn check_args(args: Value) -> Result<(), String> {
        validate(&schema(), args.as_object().expect("object"))
    }

    #[test]
    fn accepts_valid_arguments() {
        assert_eq!(
            check_args(json!({"title": "x", "limit": 5, "tags": ["a"]})),
            Ok(())
        );
    }

    #[test]
    fn names_the_bad_argument() {
        for (args, needle) in [
            (json!({}), "missing required argument 'title'"),
            (
                json!({"title": 3}),
                "'title' must be of type string, got number",
            ),
            (json!({"title": "x", "limit": 0}), "'limit' must be >= 1"),
            (
                json!({"title": "x", "limit": "5"}),
                "'limit' must be of type integer",
            ),
            (
                json!({"title": "x", "status": "open"}),
                "'status' must be one of",
            ),
            (
                json!({"title": "x", "tags": [1]}),
                "'tags[0]' must be of type string",
            ),
            (
                json!({"title": "x", "extra": 1}),
                "unknown argument 'extra'",
            ),
            (json!({"title": ""}), "at least 1 characters"),
        ] {
            let err = check_args(args.clone()).expect_err("invalid");
            assert!(err.contains(needle), "{args}: {err}");
        }
    }
}
