//! The REST endpoints of seed 001: `POST /mcp-standard/search_tools`
//! (`{query?, category?, tags?, limit?}`), `POST /mcp-standard/list_categories`
//! and `POST /mcp-standard/get_tools_by_category` (`{category}`). Each answers
//! with exactly the `structuredContent` of the tool of the same purpose
//! (`tool_search`, `list_categories`, `get_tools_by_category`), computed by
//! the same code and checked against the same input schema.
//!
//! REST calls belong to no MCP session, so progressive disclosure does not
//! apply: no `tool_descriptions` read is needed first, and a call authorizes
//! nothing. Bad input gets 400 `{"error": "..."}`.

use super::body::{self, BodyError};
use super::{error_object, json_response, Shared};
use crate::args;
use crate::handlers::category;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Map, Value};

/// The REST name of each category tool.
fn tool_for(endpoint: &str) -> Option<&'static str> {
    match endpoint {
        "search_tools" => Some("tool_search"),
        "list_categories" => Some("list_categories"),
        "get_tools_by_category" => Some("get_tools_by_category"),
        _ => None,
    }
}

pub fn error(status: StatusCode, message: &str) -> Response {
    json_response(status, &error_object(message))
}

pub async fn call(
    State(app): State<Shared>,
    Path(endpoint): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let Some(tool_name) = tool_for(&endpoint) else {
        return error(
            StatusCode::NOT_FOUND,
            &format!(
                "no endpoint '{endpoint}'; there are search_tools, list_categories and get_tools_by_category"
            ),
        );
    };
    if !body::is_json(&headers) {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        );
    }
    let bytes = match body::read(&headers, body, app.max_body).await {
        Ok(b) => b,
        Err(BodyError::TooLarge { limit }) => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("request body exceeds {limit} bytes"),
            )
        }
        Err(BodyError::Broken(e)) => {
            return error(StatusCode::BAD_REQUEST, &format!("cannot read body: {e}"))
        }
    };
    let args = match parse_args(&bytes) {
        Ok(a) => a,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e),
    };
    let snap = app.server.snapshot();
    let Some(doc) = snap.doc(tool_name) else {
        return error(
            StatusCode::NOT_FOUND,
            &format!(
                "this catalog has no '{tool_name}' tool, so /mcp-standard/{endpoint} is not served"
            ),
        );
    };
    if let Err(why) = args::validate(&snap.tool(doc).input_schema(), &args) {
        return error(StatusCode::BAD_REQUEST, &why);
    }
    match category::run_on(&snap, app.server.layer(), tool_name, &args) {
        Some(Ok(value)) => json_response(StatusCode::OK, &value),
        Some(Err(message)) => error(StatusCode::BAD_REQUEST, &message),
        None => error(StatusCode::NOT_FOUND, "not a category tool"),
    }
}

/// The body as tool arguments: a JSON object; an empty body means `{}`.
fn parse_args(bytes: &[u8]) -> Result<Map<String, Value>, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "the body must be a JSON object, got {}",
            mcp_conform_protocol::jsonrpc::type_name(&other)
        )),
        Err(e) => Err(format!("the body is not JSON: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_become_arguments() {
        assert_eq!(parse_args(b""), Ok(Map::new()));
        assert_eq!(parse_args(b" {\"limit\": 2} ").map(|m| m.len()), Ok(1));
        assert!(parse_args(b"[1]").is_err_and(|e| e.contains("array")));
        assert!(parse_args(b"{oops").is_err_and(|e| e.contains("not JSON")));
        assert_eq!(tool_for("search_tools"), Some("tool_search"));
        assert_eq!(tool_for("tool_search"), None);
    }
}
