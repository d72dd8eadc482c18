//! The 2026-07-28 request metadata headers a client derives from the body:
//! `Mcp-Name` and the `Mcp-Param-{Name}` headers a tool's `inputSchema`
//! asks for with `x-mcp-header`, each value in the Base64 sentinel form
//! when it cannot travel as a plain header value ("clients MUST mirror the
//! designated parameter values into HTTP headers", MCP 2026-07-28, Basic,
//! Transports, Streamable HTTP, Custom Headers from Tool Parameters).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use base64::Engine as _;
use serde_json::Value;

const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";

/// A header value as the text requires it: as is when it is plain ASCII
/// (visible characters and inner spaces), else `=?base64?…?=` of its UTF-8
/// (non-ASCII, control characters, leading or trailing whitespace, or a
/// value that already looks like the sentinel).
pub fn encode_value(text: &str) -> String {
    let printable = text.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let padded = text.starts_with(' ') || text.ends_with(' ');
    let looks_encoded = text.starts_with(SENTINEL_PREFIX) && text.ends_with(SENTINEL_SUFFIX);
    let plain = printable && !padded && !looks_encoded;
    if plain {
        text.to_string()
    } else {
        let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        format!("{SENTINEL_PREFIX}{encoded}{SENTINEL_SUFFIX}")
    }
}

/// A header value as the server compares it: the UTF-8 inside a sentinel
/// (`=?base64?…?=`), or the value itself; None when a sentinel holds
/// something that is not Base64 of UTF-8.
pub fn decode_value(header: &str) -> Option<String> {
    let Some(inner) = header
        .strip_prefix(SENTINEL_PREFIX)
        .and_then(|rest| rest.strip_suffix(SENTINEL_SUFFIX))
    else {
        return Some(header.to_string());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(inner)
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// The `Mcp-Param-{Name}` headers (name part, plain value text) a call with
/// `arguments` carries under a tool whose input schema is `schema`.
pub fn annotated_values(schema: &Value, arguments: Option<&Value>) -> Vec<(String, String)> {
    annotations(schema)
        .iter()
        .filter_map(|a| a.value_in(arguments).map(|text| (a.name.clone(), text)))
        .collect()
}

/// The header text of a parameter value: strings as they are, integers in
/// decimal, booleans as `true`/`false`; null and anything else is omitted.
fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// One `x-mcp-header` annotation: the header's name part and the chain of
/// `properties` keys leading to the annotated property.
#[derive(Debug, Clone, PartialEq)]
struct Annotation {
    name: String,
    path: Vec<String>,
}

impl Annotation {
    /// The header text of the value at this annotation's path, if any.
    fn value_in(&self, arguments: Option<&Value>) -> Option<String> {
        let value = self
            .path
            .iter()
            .try_fold(arguments?, |at, key| at.get(key))?;
        value_text(value)
    }
}

/// The annotations statically reachable from a schema's root through
/// `properties` keys only (the only place the text allows them).
fn annotations(schema: &Value) -> Vec<Annotation> {
    let mut out = Vec::new();
    collect(schema, &mut Vec::new(), &mut out, 0);
    out
}

fn collect(schema: &Value, path: &mut Vec<String>, out: &mut Vec<Annotation>, depth: usize) {
    // A schema nested deeper than this is not one a tool's caller fills in.
    if depth > 16 {
        return;
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, sub) in props {
        path.push(key.clone());
        if let Some(name) = sub.get("x-mcp-header").and_then(Value::as_str) {
            out.push(Annotation {
                name: name.to_string(),
                path: path.clone(),
            });
        }
        collect(sub, path, out, depth + 1);
        path.pop();
    }
}

/// Keywords a chain to an `x-mcp-header` annotation must not pass through:
/// everything but `properties` makes the annotation, and the tool
/// definition, invalid.
const NOT_STATIC: &[&str] = &[
    "items",
    "prefixItems",
    "contains",
    "additionalProperties",
    "patternProperties",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$defs",
    "definitions",
    "dependentSchemas",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// Why a tool's `x-mcp-header` annotations break the constraints of MCP
/// 2026-07-28 (Server, Tools, x-mcp-header; Transports, Streamable HTTP,
/// Schema Extension), one reason each; empty when they are valid or absent.
/// A client over Streamable HTTP "MUST reject tool definitions where any
/// x-mcp-header value violates these constraints".
pub fn annotation_errors(schema: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    misplaced(schema, "", false, &mut errors, 0);
    let mut seen: Vec<String> = Vec::new();
    for a in annotations(schema) {
        let at = a.path.join(".");
        if a.name.is_empty() {
            errors.push(format!("x-mcp-header of {at} is empty"));
        } else if !a.name.bytes().all(is_tchar) {
            errors.push(format!(
                "x-mcp-header {:?} of {at} is not an HTTP field-name token",
                a.name
            ));
        }
        let lower = a.name.to_ascii_lowercase();
        if seen.contains(&lower) {
            errors.push(format!(
                "x-mcp-header {:?} of {at} is not case-insensitively unique",
                a.name
            ));
        }
        seen.push(lower);
        let property = a
            .path
            .iter()
            .try_fold(schema, |at, key| at.get("properties")?.get(key));
        let kind = property.and_then(|p| p.get("type")).and_then(Value::as_str);
        if !matches!(kind, Some("string" | "integer" | "boolean")) {
            errors.push(format!(
                "x-mcp-header {:?} is on {at}, whose type is {} (only string, integer and boolean are allowed)",
                a.name,
                kind.unwrap_or("not a primitive type")
            ));
        }
    }
    errors
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Annotations reached through anything but a chain of `properties` keys
/// (`off_chain` once the walk has left such a chain).
fn misplaced(schema: &Value, at: &str, off_chain: bool, out: &mut Vec<String>, depth: usize) {
    if depth > 32 {
        return;
    }
    match schema {
        Value::Object(map) => {
            if off_chain && map.contains_key("x-mcp-header") {
                out.push(format!(
                    "x-mcp-header at {at} is not statically reachable through properties"
                ));
            }
            for (key, sub) in map {
                if key == "properties" {
                    if let Value::Object(props) = sub {
                        for (name, p) in props {
                            let here = format!("{at}/properties/{name}");
                            misplaced(p, &here, off_chain, out, depth + 1);
                        }
                    }
                } else if key != "x-mcp-header" {
                    let leaves = off_chain || NOT_STATIC.contains(&key.as_str()) || sub.is_array();
                    misplaced(sub, &format!("{at}/{key}"), leaves, out, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                misplaced(item, &format!("{at}/{i}"), true, out, depth + 1);
            }
        }
        _ => {}
    }
}

/// What the client knows of each tool's `x-mcp-header` annotations, learnt
/// from `tools/list` answers and shared by every connection to one server.
#[derive(Debug, Clone, Default)]
pub struct ToolHeaders(Arc<RwLock<HashMap<String, Vec<Annotation>>>>);

/// A cache of what the server said, not part of how it is reached.
impl PartialEq for ToolHeaders {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl ToolHeaders {
    /// Records the annotations of every tool in a list result's `tools`;
    /// returns the tools whose annotations are invalid, each with why (a
    /// client must exclude them; their annotations are not learnt).
    pub fn learn(&self, tools: &[Value]) -> Vec<(String, String)> {
        let mut rejected = Vec::new();
        let Ok(mut known) = self.0.write() else {
            return rejected;
        };
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let schema = tool.get("inputSchema").unwrap_or(&Value::Null);
            let errors = annotation_errors(schema);
            if !errors.is_empty() {
                known.remove(name);
                rejected.push((name.to_string(), errors.join("; ")));
                continue;
            }
            let found = annotations(schema);
            if found.is_empty() {
                known.remove(name);
            } else {
                known.insert(name.to_string(), found);
            }
        }
        rejected
    }

    /// The `Mcp-Param-{Name}` headers of a `tools/call` of `tool` with
    /// `arguments`: one per annotated value present (null omits it).
    pub fn for_call(&self, tool: &str, arguments: Option<&Value>) -> Vec<(String, String)> {
        let Ok(known) = self.0.read() else {
            return Vec::new();
        };
        let Some(list) = known.get(tool) else {
            return Vec::new();
        };
        list.iter()
            .filter_map(|a| {
                let text = a.value_in(arguments)?;
                Some((format!("mcp-param-{}", a.name), encode_value(&text)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn invalid_annotations_reject_the_tool_and_valid_ones_are_learnt() {
        let tool = |props: Value| json!({"name": "t", "inputSchema": {"type": "object", "properties": props}});
        let bad = [
            (
                json!({"a": {"type": "string", "x-mcp-header": ""}}),
                "is empty",
            ),
            (
                json!({"a": {"type": "string", "x-mcp-header": "Re gion"}}),
                "token",
            ),
            (
                json!({"a": {"type": "string", "x-mcp-header": "R\nx"}}),
                "token",
            ),
            (
                json!({"a": {"type": "number", "x-mcp-header": "A"}}),
                "type is number",
            ),
            (
                json!({"a": {"type": "object", "x-mcp-header": "A"}}),
                "type is object",
            ),
            (
                json!({"a": {"type": "string", "x-mcp-header": "Id"}, "b": {"type": "string", "x-mcp-header": "ID"}}),
                "case-insensitively unique",
            ),
            (
                json!({"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}),
                "not statically reachable",
            ),
            (
                json!({"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}}),
                "not statically reachable",
            ),
        ];
        for (props, why) in bad {
            let headers = ToolHeaders::default();
            let rejected = headers.learn(&[tool(props.clone())]);
            assert_eq!(rejected.len(), 1, "{props}");
            assert!(rejected[0].1.contains(why), "{props}: {}", rejected[0].1);
            assert!(headers.for_call("t", Some(&json!({"a": "x"}))).is_empty());
        }
        let headers = ToolHeaders::default();
        let good = tool(json!({"a": {"type": "string", "x-mcp-header": "Region"},
            "o": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}}));
        assert!(headers.learn(&[good]).is_empty());
        assert_eq!(headers.for_call("t", Some(&json!({"a": "x"}))).len(), 1);
    }

    #[test]
    fn values_are_encoded_as_the_text_shows() {
        // The encoding examples of the Value Encoding table.
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(
            encode_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            encode_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(encode_value("a b"), "a b");
        for v in ["us-west1", "Hello, 世界", " padded ", "=?base64?literal?="] {
            assert_eq!(decode_value(&encode_value(v)).as_deref(), Some(v));
        }
        assert_eq!(decode_value("=?base64?***?="), None);
    }

    #[test]
    fn annotated_parameters_are_mirrored_from_their_exact_path() {
        let headers = ToolHeaders::default();
        let rejected = headers.learn(&[json!({
            "name": "execute_sql",
            "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "opts": {"type": "object", "properties": {
                    "shard": {"type": "integer", "x-mcp-header": "Shard"}}},
                "query": {"type": "string"}}}
        })]);
        assert!(rejected.is_empty(), "{rejected:?}");
        let mut got = headers.for_call(
            "execute_sql",
            Some(&json!({"region": "us-west1", "opts": {"shard": 7}, "query": "x"})),
        );
        got.sort();
        assert_eq!(
            got,
            vec![
                ("mcp-param-Region".to_string(), "us-west1".to_string()),
                ("mcp-param-Shard".to_string(), "7".to_string()),
            ]
        );
        // Absent or null values omit the header; unknown tools have none.
        let none = headers.for_call("execute_sql", Some(&json!({"region": null})));
        assert!(none.is_empty());
        assert!(headers.for_call("other", Some(&json!({}))).is_empty());
        // A later listing without annotations forgets them.
        let _ = headers.learn(&[json!({"name": "execute_sql", "inputSchema": {"type": "object"}})]);
        assert!(headers
            .for_call("execute_sql", Some(&json!({"region": "x"})))
            .is_empty());
    }
}
