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
    /// Records the annotations of every tool in a list result's `tools`.
    pub fn learn(&self, tools: &[Value]) {
        let Ok(mut known) = self.0.write() else {
            return;
        };
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let found = tool.get("inputSchema").map(annotations).unwrap_or_default();
            if found.is_empty() {
                known.remove(name);
            } else {
                known.insert(name.to_string(), found);
            }
        }
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
        headers.learn(&[json!({
            "name": "execute_sql",
            "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "opts": {"type": "object", "properties": {
                    "shard": {"type": "integer", "x-mcp-header": "Shard"}}},
                "list": {"type": "array", "items": {"x-mcp-header": "Nope"}},
                "query": {"type": "string"}}}
        })]);
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
        headers.learn(&[json!({"name": "execute_sql", "inputSchema": {"type": "object"}})]);
        assert!(headers
            .for_call("execute_sql", Some(&json!({"region": "x"})))
            .is_empty());
    }
}
