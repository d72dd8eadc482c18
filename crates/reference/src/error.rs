//! Protocol-level errors returned by handlers, and the codes the reference
//! server chose for the conditions the drafts leave open.

use mcp_conform_protocol::jsonrpc::{codes, type_name};
use serde_json::{json, Value};

/// `TOOL_DESCRIPTION_REQUIRED`: from the implementation-defined range
/// -32000..-32019, as the design asks; the string code travels in `data.code`.
pub const TOOL_DESCRIPTION_REQUIRED: i64 = -32010;
/// Rate limiting, also implementation-defined.
pub const RATE_LIMITED: i64 = -32000;
/// A request in a stateful era before `initialize`: an invalid request in
/// the session's current state. (-32002 is avoided: MCP uses it for
/// "resource not found".)
pub const NOT_INITIALIZED: i64 = mcp_conform_protocol::jsonrpc::codes::INVALID_REQUEST;
/// The 2026-07-28 `UnsupportedProtocolVersionError`.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// The 2026-07-28 `MissingRequiredClientCapabilityError`.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// MCP's "Resource not found" before 2026-07-28.
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// What kind of failure an error reports; faults rewrite some kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A parameter had the wrong JSON type.
    BadType,
    /// `tools/call` named no tool of the catalog.
    UnknownTool,
    /// A URI named no resource.
    ResourceNotFound,
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
    pub kind: Kind,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
            kind: Kind::Other,
        }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        RpcError::new(codes::INVALID_PARAMS, message)
    }

    /// A parameter of the wrong JSON type; the message names the field and
    /// the type expected.
    pub fn bad_type(field: &str, expected: &str, got: &Value) -> Self {
        RpcError {
            kind: Kind::BadType,
            ..RpcError::invalid_params(format!(
                "Invalid params: '{field}' must be {expected}, got {}",
                type_name(got)
            ))
        }
    }

    pub fn missing(field: &str, expected: &str) -> Self {
        RpcError::invalid_params(format!(
            "Invalid params: '{field}' is required ({expected})"
        ))
    }

    pub fn method_not_found(method: &str) -> Self {
        RpcError::new(
            codes::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// The string at `key` of the error's data ("" when absent).
    pub fn data_str(&self, key: &str) -> &str {
        self.data
            .as_ref()
            .and_then(|d| d.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    pub fn internal(message: impl Into<String>) -> Self {
        RpcError::new(codes::INTERNAL_ERROR, message)
    }

    pub fn unknown_tool(name: &str) -> Self {
        RpcError {
            kind: Kind::UnknownTool,
            ..RpcError::invalid_params(format!("Unknown tool: {name}"))
                .with_data(json!({"name": name}))
        }
    }

    pub fn to_response(&self, id: Value) -> Value {
        mcp_conform_protocol::jsonrpc::error_response(
            id,
            self.code,
            &self.message,
            self.data.clone(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_type_names_field_and_types() {
        let e = RpcError::bad_type("query", "a string", &json!(123));
        assert_eq!(e.code, -32602);
        assert_eq!(e.kind, Kind::BadType);
        assert_eq!(
            e.message,
            "Invalid params: 'query' must be a string, got number"
        );
    }
}
