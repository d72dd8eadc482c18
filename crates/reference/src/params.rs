//! Typed access to request parameters, with -32602 errors that name the
//! field and the type expected. Unknown keys are ignored, as MCP requires.

use super::error::RpcError;
use serde_json::{Map, Value};

/// Longest `query` accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 4096;
/// Most entries accepted in one filter array or `?tools=` list.
pub const MAX_LIST_ENTRIES: usize = 64;

/// The `params` object of a request (empty when absent or null).
pub struct Params<'a> {
    map: Option<&'a Map<String, Value>>,
}

impl<'a> Params<'a> {
    pub fn new(params: Option<&'a Value>) -> Result<Self, RpcError> {
        match params {
            None | Some(Value::Null) => Ok(Params { map: None }),
            Some(Value::Object(map)) => Ok(Params { map: Some(map) }),
            Some(other) => Err(RpcError::bad_type("params", "an object", other)),
        }
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.and_then(|m| m.get(key)).filter(|v| !v.is_null())
    }

    pub fn opt_str(&self, key: &str) -> Result<Option<&'a str>, RpcError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(RpcError::bad_type(key, "a string", other)),
        }
    }

    pub fn req_str(&self, key: &str) -> Result<&'a str, RpcError> {
        self.opt_str(key)?
            .ok_or_else(|| RpcError::missing(key, "a string"))
    }

    pub fn opt_object(&self, key: &str) -> Result<Option<&'a Map<String, Value>>, RpcError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(other) => Err(RpcError::bad_type(key, "an object", other)),
        }
    }

    /// The optional `query`, length-checked.
    pub fn query(&self) -> Result<Option<&'a str>, RpcError> {
        let q = self.opt_str("query")?;
        if let Some(q) = q {
            check_query_len(q)?;
        }
        Ok(q)
    }

    pub fn cursor(&self) -> Result<Option<&'a str>, RpcError> {
        self.opt_str("cursor")
    }
}

pub fn check_query_len(q: &str) -> Result<(), RpcError> {
    // A byte length under the limit implies a character count under it.
    if q.len() > MAX_QUERY_CHARS && q.chars().count() > MAX_QUERY_CHARS {
        return Err(RpcError::invalid_params(format!(
            "Invalid params: 'query' exceeds {MAX_QUERY_CHARS} characters"
        )));
    }
    Ok(())
}

/// An optional array of strings, at most [`MAX_LIST_ENTRIES`] long.
pub fn string_list(field: &str, value: Option<&Value>) -> Result<Option<Vec<String>>, RpcError> {
    let items = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(items)) => items,
        Some(other) => return Err(RpcError::bad_type(field, "an array of strings", other)),
    };
    if items.len() > MAX_LIST_ENTRIES {
        return Err(RpcError::invalid_params(format!(
            "Invalid params: '{field}' has {} entries; at most {MAX_LIST_ENTRIES} are allowed",
            items.len()
        )));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::String(s) => Ok(s.clone()),
            other => Err(RpcError::bad_type(
                &format!("{field}[{i}]"),
                "a string",
                other,
            )),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_access() {
        let v = json!({"query": "x", "n": 3, "f": {"a": 1}});
        let p = Params::new(Some(&v)).expect("object");
        assert_eq!(p.query().expect("ok"), Some("x"));
        assert!(p.opt_str("n").is_err());
        assert!(p.opt_object("f").expect("ok").is_some());
        assert!(p.req_str("missing").is_err());
        assert!(Params::new(Some(&json!(5))).is_err());
        assert!(Params::new(Some(&Value::Null)).is_ok());
    }

    #[test]
    fn limits() {
        let long = "a".repeat(MAX_QUERY_CHARS + 1);
        assert!(check_query_len(&long).is_err());
        assert!(check_query_len(&"é".repeat(MAX_QUERY_CHARS)).is_ok());
        let many = json!(vec!["x"; 65]);
        assert!(string_list("groups", Some(&many)).is_err());
        let err = string_list("groups", Some(&json!([1]))).expect_err("bad");
        assert!(
            err.message.contains("'groups[0]' must be a string"),
            "{}",
            err.message
        );
        assert_eq!(
            string_list("g", Some(&json!(["a"]))).expect("ok"),
            Some(vec!["a".to_string()])
        );
    }
}
