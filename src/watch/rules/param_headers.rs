//! The `Mcp-Param-{Name}` headers of a 2026-07-28 `tools/call` POST: each
//! parameter the tool's listed `inputSchema` marks with `x-mcp-header` is
//! mirrored into its header, Base64-wrapped when the value is not a plain
//! header value (MCP 2026-07-28, Streamable HTTP, Custom Headers from Tool
//! Parameters). The tool's schema is the one the server listed last in the
//! conversation; a call to a tool never listed is not judged.

use serde_json::{Map, Value};

use super::http_request::{decode_sentinel, SENTINEL_END, SENTINEL_START};
use super::{describe, Ctx, Hit};
use crate::watch::trace::{Msg, Side};

/// One annotated parameter: the chain of `properties` keys to it and the
/// name part of its header.
#[derive(Debug, Clone, PartialEq)]
struct Annotated {
    path: Vec<String>,
    header: String,
}

/// The findings on one client POST, if it is a `tools/call` of a listed tool.
pub fn check(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    if msg.method() != Some("tools/call") {
        return None;
    }
    let http = msg.http.as_ref()?;
    let params = msg.params()?;
    let name = params.get("name")?.as_str()?;
    let (listed_at, tool) = listed_tool(ctx, name)?;
    let schema = tool.get("inputSchema")?;
    let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
    let mut problems = Vec::new();
    for a in annotated(schema) {
        let Some(expected) = header_text(value_at(&arguments, &a.path)) else {
            continue;
        };
        let header = format!("Mcp-Param-{}", a.header);
        match http.header(&header) {
            None => problems.push(format!(
                "no {header} header for the argument {} = {expected:?}",
                a.path.join(".")
            )),
            Some(given) => {
                if let Some(p) = mismatch(given, &expected) {
                    problems.push(format!("{header}: {given:?} {p}"));
                }
            }
        }
    }
    if problems.is_empty() {
        return None;
    }
    Some(Hit::new(
        format!(
            "the POST of {} (tool {name:?}, whose listed inputSchema marks x-mcp-header parameters): {}",
            describe(msg),
            problems.join("; ")
        ),
        vec![listed_at],
    ))
}

/// What is wrong with a header that should carry `expected`, if anything.
fn mismatch(given: &str, expected: &str) -> Option<String> {
    if given.starts_with(SENTINEL_START) && given.ends_with(SENTINEL_END) {
        return match decode_sentinel(given) {
            None => Some("is not valid Base64 of UTF-8 text inside the sentinel".to_string()),
            Some(decoded) if decoded != expected => Some(format!(
                "decodes to {decoded:?}, but the body's value is {expected:?}"
            )),
            Some(_) => None,
        };
    }
    if !plain_safe(expected) {
        return Some(format!(
            "is sent plainly, but the value {expected:?} must be Base64-encoded as =?base64?…?="
        ));
    }
    (given != expected).then(|| format!("differs from the body's value {expected:?}"))
}

/// Whether a value can travel as a plain header value: visible ASCII,
/// space and tab only, no leading or trailing whitespace, and not itself
/// shaped like the sentinel.
fn plain_safe(value: &str) -> bool {
    let chars_ok = value
        .bytes()
        .all(|b| (0x21..=0x7e).contains(&b) || b == b' ' || b == b'\t');
    let trimmed = value.trim_matches([' ', '\t']) == value;
    let looks_encoded = value.starts_with(SENTINEL_START) && value.ends_with(SENTINEL_END);
    chars_ok && trimmed && !looks_encoded
}

/// The string form of an argument for its header: strings as they are,
/// integers in decimal, booleans in lower case. None when there is no
/// value (the header is omitted) or its type cannot be annotated.
fn header_text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

fn value_at<'v>(arguments: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(arguments, |v, key| v.get(key))
}

/// Every `x-mcp-header` annotation reachable from the schema root through
/// `properties` keys alone; annotations elsewhere make the tool invalid,
/// which is the server's rule, not this one.
fn annotated(schema: &Value) -> Vec<Annotated> {
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), &mut out);
    out
}

fn walk(schema: &Value, path: &mut Vec<String>, out: &mut Vec<Annotated>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, prop) in props {
        path.push(key.clone());
        if let Some(header) = prop.get("x-mcp-header").and_then(Value::as_str) {
            out.push(Annotated {
                path: path.clone(),
                header: header.to_string(),
            });
        }
        walk(prop, path, out);
        path.pop();
    }
}

/// The server's last listing of the tool `name`.
fn listed_tool<'c>(ctx: &'c Ctx<'_>, name: &str) -> Option<(usize, &'c Map<String, Value>)> {
    ctx.conv.msgs.iter().rev().find_map(|m| {
        if m.from != Side::Server {
            return None;
        }
        let tools = m.result()?.get("tools")?.as_array()?;
        tools
            .iter()
            .filter_map(Value::as_object)
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
            .map(|t| (m.pos, t))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_texts_encoding_examples_are_judged_as_the_text_says() {
        // MCP 2026-07-28, Streamable HTTP, Value Encoding: the table's rows.
        let rows = [
            ("us-west1", "us-west1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ];
        for (value, header) in rows {
            assert_eq!(mismatch(header, value), None, "{value:?}");
        }
        // The same values sent plainly break the rule, but for the first.
        assert!(mismatch(" padded ", " padded ").is_some());
        assert!(mismatch("=?base64?literal?=", "=?base64?literal?=").is_some());
        assert!(mismatch("us-east1", "us-west1").is_some());
        assert!(mismatch("=?base64?%%%?=", "x").is_some());
    }

    #[test]
    fn annotations_are_found_through_properties_only() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {
                "tenant": {"type": "integer", "x-mcp-header": "Tenant"}}},
            "list": {"type": "array", "items": {"properties": {
                "x": {"type": "string", "x-mcp-header": "X"}}}}
        }});
        let mut found: Vec<String> = annotated(&schema)
            .into_iter()
            .map(|a| format!("{}={}", a.path.join("."), a.header))
            .collect();
        found.sort();
        assert_eq!(found, ["opts.tenant=Tenant", "region=Region"]);
    }

    #[test]
    fn header_text_follows_the_type_conversion() {
        assert_eq!(header_text(Some(&json!(42))).as_deref(), Some("42"));
        assert_eq!(header_text(Some(&json!(-7))).as_deref(), Some("-7"));
        assert_eq!(header_text(Some(&json!(true))).as_deref(), Some("true"));
        assert_eq!(header_text(Some(&json!(1.5))), None);
        assert_eq!(header_text(Some(&Value::Null)), None);
        assert_eq!(header_text(None), None);
    }
}
