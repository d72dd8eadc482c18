//! The server's reading of the 2026-07-28 custom headers: which
//! `Mcp-Param-{Name}` headers a `tools/call` body calls for, and what an
//! encoded header value says once decoded.
//!
//! Written from MCP 2026-07-28, Basic, Transports, Streamable HTTP,
//! "Custom Headers from Tool Parameters"
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#custom-headers-from-tool-parameters>),
//! and kept apart from the harness's client-side encoder on purpose: the
//! reference server and the harness each read the text on their own, so a
//! misreading on one side shows up as a disagreement with the other.

use base64::Engine as _;
use serde_json::Value;

/// "The prefix `=?base64?` and suffix `?=` indicate that the value is
/// Base64-encoded. These markers are case-sensitive".
const OPEN: &str = "=?base64?";
const CLOSE: &str = "?=";

/// A received `Mcp-Name` or `Mcp-Param-{Name}` value as the server compares
/// it with the body: "servers MUST decode an encoded `Mcp-Name` or
/// `Mcp-Param-{Name}` value before comparing it". A value without the
/// markers is compared as it came; one with them whose content is not
/// Base64 of UTF-8 text decodes to nothing, which matches no body value.
pub fn decoded(header: &str) -> Option<String> {
    if header.len() < OPEN.len() + CLOSE.len()
        || !header.starts_with(OPEN)
        || !header.ends_with(CLOSE)
    {
        return Some(header.to_owned());
    }
    let payload = &header[OPEN.len()..header.len() - CLOSE.len()];
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(payload)
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// The headers a call must carry, as (name part, value text) pairs: for
/// each property reached from the schema root through `properties` keys
/// alone that carries `x-mcp-header`, the argument at that same path.
/// "If no value is present at that path in the call arguments, the header
/// is omitted", and a null value is one "the Server MUST NOT expect".
pub fn expected(input_schema: &Value, arguments: Option<&Value>) -> Vec<(String, String)> {
    let mut found = Vec::new();
    visit(input_schema, arguments, &mut found, 0);
    found
}

/// Annotated properties deeper than this are not ones a caller fills in;
/// the bound keeps a hostile schema from recursing without end.
const MAX_DEPTH: usize = 32;

fn visit(
    schema: &Value,
    instance: Option<&Value>,
    found: &mut Vec<(String, String)>,
    depth: usize,
) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    if depth >= MAX_DEPTH {
        return;
    }
    for (key, property) in properties {
        let value = instance.and_then(|i| i.get(key));
        if let Some(name) = property.get("x-mcp-header").and_then(Value::as_str) {
            if let Some(text) = value.and_then(header_text) {
                found.push((name.to_owned(), text));
            }
        }
        visit(property, value, found, depth + 1);
    }
}

/// "Type conversion": strings as they are, integers in decimal, booleans
/// as lowercase `true`/`false`. Nothing else is mirrored.
fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Bool(flag) => Some(if *flag { "true" } else { "false" }.to_owned()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The "Encoding examples" table of the section, read back.
    #[test]
    fn the_texts_encoding_examples_decode_to_their_original_values() {
        let examples = [
            ("us-west1", "us-west1"),
            ("=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, 世界"),
            ("=?base64?IHBhZGRlZCA=?=", " padded "),
            ("=?base64?bGluZTEKbGluZTI=?=", "line1\nline2"),
            ("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", "=?base64?literal?="),
        ];
        for (header, original) in examples {
            assert_eq!(decoded(header).as_deref(), Some(original), "{header}");
        }
    }

    #[test]
    fn markers_are_case_sensitive_and_a_bad_payload_matches_nothing() {
        assert_eq!(
            decoded("=?BASE64?dXM=?=").as_deref(),
            Some("=?BASE64?dXM=?=")
        );
        assert_eq!(decoded("=?base64?not base64!?="), None);
        assert_eq!(decoded("=?base64?/w==?="), None, "not UTF-8");
    }

    #[test]
    fn the_texts_tool_example_mirrors_its_region() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "query": {"type": "string"}}});
        let args = json!({"region": "us-west1", "query": "SELECT * FROM users"});
        assert_eq!(
            expected(&schema, Some(&args)),
            vec![("Region".to_owned(), "us-west1".to_owned())]
        );
    }

    #[test]
    fn absent_null_and_non_primitive_values_are_not_expected() {
        let schema = json!({"properties": {
            "a": {"x-mcp-header": "A"},
            "n": {"properties": {"b": {"x-mcp-header": "B"}}},
            "c": {"x-mcp-header": "C"},
            "d": {"x-mcp-header": "D"}}});
        let args = json!({"a": null, "n": {"b": 42}, "d": 1.5});
        assert_eq!(
            expected(&schema, Some(&args)),
            vec![("B".to_owned(), "42".to_owned())]
        );
        assert!(expected(&schema, None).is_empty());
        let flags = json!({"properties": {"f": {"x-mcp-header": "F"}}});
        assert_eq!(
            expected(&flags, Some(&json!({"f": false}))),
            vec![("F".to_owned(), "false".to_owned())]
        );
    }
}
