//! The JSON-RPC 2.0 message model, kept on `serde_json::Value` so that extension
//! fields (`groups`, `tags`, `filtering`, …) are never dropped and malformed
//! messages can still be represented and reported.

use serde_json::{json, Map, Value};

/// Standard JSON-RPC error codes.
pub mod codes {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// What a decoded JSON value is, as seen by either side of the connection.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Request {
        id: Value,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    Response {
        id: Value,
        result: Value,
    },
    Error {
        id: Value,
        error: Value,
    },
    /// Valid JSON that is not a JSON-RPC 2.0 message; the reason says why.
    Invalid {
        value: Value,
        reason: String,
    },
}

impl Message {
    /// Classifies a JSON value without rejecting anything: the harness has to
    /// report on broken messages, not refuse them.
    pub fn classify(value: Value) -> Message {
        let Value::Object(obj) = &value else {
            return Message::Invalid {
                reason: format!("message is a JSON {}, not an object", type_name(&value)),
                value,
            };
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Message::Invalid {
                reason: "member \"jsonrpc\" is not \"2.0\"".into(),
                value,
            };
        }
        match (obj.get("method"), obj.get("id")) {
            (Some(Value::String(method)), Some(id)) => Message::Request {
                id: id.clone(),
                method: method.clone(),
                params: obj.get("params").cloned(),
            },
            (Some(Value::String(method)), None) => Message::Notification {
                method: method.clone(),
                params: obj.get("params").cloned(),
            },
            (Some(_), _) => Message::Invalid {
                reason: "member \"method\" is not a string".into(),
                value,
            },
            (None, id) => classify_response(&value, obj, id.cloned()),
        }
    }

    /// Whether `value` would classify as a `Response` or an `Error`: the
    /// common case, which a caller can then keep without the copies
    /// `classify` makes.
    pub fn is_response(value: &Value) -> bool {
        value.as_object().is_some_and(|obj| {
            obj.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
                && obj.contains_key("id")
                && !obj.contains_key("method")
                && obj.contains_key("result") != obj.contains_key("error")
        })
    }

    /// The id of a request, response or error.
    pub fn id(&self) -> Option<&Value> {
        match self {
            Message::Request { id, .. }
            | Message::Response { id, .. }
            | Message::Error { id, .. } => Some(id),
            _ => None,
        }
    }
}

fn classify_response(value: &Value, obj: &Map<String, Value>, id: Option<Value>) -> Message {
    let Some(id) = id else {
        return Message::Invalid {
            value: value.clone(),
            reason: "message has neither \"method\" nor \"id\"".into(),
        };
    };
    match (obj.get("result"), obj.get("error")) {
        (Some(result), None) => Message::Response {
            id,
            result: result.clone(),
        },
        (None, Some(error)) => Message::Error {
            id,
            error: error.clone(),
        },
        (Some(_), Some(_)) => Message::Invalid {
            value: value.clone(),
            reason: "response carries both \"result\" and \"error\"".into(),
        },
        (None, None) => Message::Invalid {
            value: value.clone(),
            reason: "response carries neither \"result\" nor \"error\"".into(),
        },
    }
}

/// The JSON type name of a value, as used in error messages.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

pub fn request(id: Value, method: &str, params: Option<Value>) -> Value {
    let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(params) = params {
        msg["params"] = params;
    }
    msg
}

pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut msg = json!({"jsonrpc": "2.0", "method": method});
    if let Some(params) = params {
        msg["params"] = params;
    }
    msg
}

pub fn response(id: Value, result: Value) -> Value {
    // Built by hand: `json!` would copy `result` through `to_value`, a deep
    // copy of every list the server answers with.
    let mut msg = serde_json::Map::with_capacity(3);
    msg.insert("jsonrpc".into(), Value::String("2.0".into()));
    msg.insert("id".into(), id);
    msg.insert("result".into(), result);
    Value::Object(msg)
}

pub fn error_response(id: Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_every_kind() {
        let req = Message::classify(request(json!(1), "tools/list", None));
        assert!(matches!(req, Message::Request { ref method, .. } if method == "tools/list"));
        let note = Message::classify(notification("notifications/initialized", None));
        assert!(matches!(note, Message::Notification { .. }));
        let ok = Message::classify(response(json!("7"), json!({})));
        assert_eq!(ok.id(), Some(&json!("7")));
        let err = Message::classify(error_response(Value::Null, codes::PARSE_ERROR, "x", None));
        assert!(matches!(err, Message::Error { .. }));
    }

    #[test]
    fn is_response_agrees_with_classify() {
        for value in [
            response(json!(1), json!({})),
            error_response(Value::Null, codes::PARSE_ERROR, "x", None),
            json!({"jsonrpc": "2.0", "id": null, "result": null}),
            json!({"jsonrpc": "2.0", "id": 1, "result": 1, "error": {}}),
            json!({"jsonrpc": "2.0", "id": 1}),
            json!({"jsonrpc": "1.0", "id": 1, "result": {}}),
            json!({"jsonrpc": "2.0", "result": {}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "x", "result": {}}),
            request(json!(1), "tools/list", None),
            notification("notifications/initialized", None),
            json!([1]),
        ] {
            let classified = matches!(
                Message::classify(value.clone()),
                Message::Response { .. } | Message::Error { .. }
            );
            assert_eq!(Message::is_response(&value), classified, "{value}");
        }
    }

    #[test]
    fn reports_why_a_message_is_invalid() {
        for (value, needle) in [
            (json!([1]), "array"),
            (json!({"id": 1, "result": 1}), "jsonrpc"),
            (
                json!({"jsonrpc": "2.0", "id": 1, "result": 1, "error": {}}),
                "both",
            ),
            (json!({"jsonrpc": "2.0", "id": 1}), "neither"),
            (json!({"jsonrpc": "2.0", "method": 3}), "not a string"),
        ] {
            match Message::classify(value) {
                Message::Invalid { reason, .. } => assert!(reason.contains(needle), "{reason}"),
                other => panic!("expected invalid, got {other:?}"),
            }
        }
    }
}
