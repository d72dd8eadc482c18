//! CEL helpers of the `core` profile: invariants any server's own catalog
//! can be checked against (JSON Schema validity, base64, arguments and URIs
//! built from what the server declares, which tools a run may call).

use std::collections::BTreeSet;

use base64::Engine;
use serde_json::{json, Map, Value};

/// Why a value is not a usable JSON Schema: its meta-schema's verdict (the
/// `$schema` it names, 2020-12 when it names none) and, when that passes,
/// whether it compiles (a bad `pattern`, a `$ref` that leads nowhere). Empty
/// when it is one.
pub fn schema_problems(schema: &Value) -> Vec<String> {
    if !schema.is_object() && !schema.is_boolean() {
        return vec![format!(
            "a schema is an object or a boolean, found {}",
            crate::jsonrpc::type_name(schema)
        )];
    }
    if let Err(e) = jsonschema::meta::validate(schema) {
        return vec![format!(
            "{}: {}",
            path_or_root(e.instance_path().as_str()),
            e.masked()
        )];
    }
    match jsonschema::validator_for(schema) {
        Ok(_) => Vec::new(),
        Err(e) => vec![format!("does not compile: {}", e.masked())],
    }
}

/// Every way `instance` breaks `schema`, as "path: message"; a schema that
/// does not compile is one problem of its own.
pub fn instance_errors(instance: &Value, schema: &Value) -> Vec<String> {
    match jsonschema::validator_for(schema) {
        Err(e) => vec![format!("the schema does not compile: {}", e.masked())],
        Ok(v) => v
            .iter_errors(instance)
            .map(|e| {
                format!(
                    "{}: {}",
                    path_or_root(e.instance_path().as_str()),
                    e.masked()
                )
            })
            .collect(),
    }
}

fn path_or_root(path: &str) -> &str {
    if path.is_empty() {
        "(root)"
    } else {
        path
    }
}

/// Whether `text` is standard base64 (RFC 4648 section 4, padded), as MCP's
/// `blob` and image `data` fields are.
pub fn base64_valid(text: &Value) -> bool {
    text.as_str()
        .is_some_and(|t| base64::engine::general_purpose::STANDARD.decode(t).is_ok())
}

/// Arguments that satisfy an input schema's required properties: each one
/// gets its `const`, first `enum` value, `default`, first `examples` entry,
/// or the least value of its type within its bounds. Optional properties
/// are left out, so the call is the simplest one the schema admits.
pub fn sample_args(schema: &Value) -> Value {
    let mut out = Map::new();
    let props = schema.get("properties").and_then(Value::as_object);
    for name in required(schema) {
        let prop = props.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
        out.insert(name.to_string(), sample_value(prop, 0));
    }
    Value::Object(out)
}

fn required(schema: &Value) -> impl Iterator<Item = &str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// The simplest value a property schema admits (depth-bounded: a schema
/// that nests itself gets an empty object at the bottom).
fn sample_value(s: &Value, depth: usize) -> Value {
    if let Some(v) = s.get("const") {
        return v.clone();
    }
    for key in ["enum", "examples"] {
        if let Some(v) = s.get(key).and_then(Value::as_array).and_then(|a| a.first()) {
            return v.clone();
        }
    }
    if let Some(v) = s.get("default") {
        return v.clone();
    }
    if let Some(first) = ["anyOf", "oneOf"]
        .iter()
        .find_map(|k| s.get(*k).and_then(Value::as_array).and_then(|a| a.first()))
    {
        return sample_value(first, depth + 1);
    }
    let ty = match s.get("type") {
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        Some(Value::String(t)) => t.as_str(),
        _ if s.get("properties").is_some() => "object",
        _ => "string",
    };
    match ty {
        "null" => Value::Null,
        "boolean" => json!(false),
        "integer" | "number" => number_within(s, ty == "integer"),
        "array" => {
            let n = s
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(3);
            let item = s.get("items").unwrap_or(&Value::Null);
            Value::Array((0..n).map(|_| sample_value(item, depth + 1)).collect())
        }
        "object" if depth < 4 => sample_args(s),
        "object" => json!({}),
        _ => string_within(s),
    }
}

fn number_within(s: &Value, integer: bool) -> Value {
    let low = s.get("minimum").and_then(Value::as_f64).or_else(|| {
        s.get("exclusiveMinimum")
            .and_then(Value::as_f64)
            .map(|m| m + 1.0)
    });
    let high = s.get("maximum").and_then(Value::as_f64);
    let n = match (low, high) {
        (Some(l), _) => l.ceil(),
        (None, Some(h)) if h < 1.0 => h.floor(),
        _ => 1.0,
    };
    if integer || n.fract() == 0.0 {
        json!(n as i64)
    } else {
        json!(n)
    }
}

fn string_within(s: &Value) -> Value {
    let format = s.get("format").and_then(Value::as_str).unwrap_or("");
    let text = match format {
        "uri" | "url" => "https://example.com/".to_string(),
        "email" => "user@example.com".to_string(),
        "date" => "2025-01-01".to_string(),
        "date-time" => "2025-01-01T00:00:00Z".to_string(),
        _ => {
            let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(1) as usize;
            "a".repeat(min.clamp(1, 64))
        }
    };
    Value::String(text)
}

/// A `prompts/get` arguments object with a value for every required
/// argument of a listed prompt (MCP prompt arguments are strings).
pub fn prompt_args(prompt: &Value) -> Value {
    let mut out = Map::new();
    for arg in prompt
        .get("arguments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let needed = arg.get("required").and_then(Value::as_bool) == Some(true);
        if let (true, Some(name)) = (needed, arg.get("name").and_then(Value::as_str)) {
            out.insert(name.to_string(), json!("example"));
        }
    }
    Value::Object(out)
}

/// A URI from an RFC 6570 template with every variable set to `value`
/// (levels 1 to 3: `{x}`, `{+x}`, `{#x}`, `{.x}`, `{/x}`, `{;x}`, `{?x,y}`,
/// `{&x}`; a `:n` prefix or `*` explode modifier is read and dropped).
pub fn expand_template(template: &str, value: &str) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        out.push_str(&expand_expression(&rest[start + 1..start + end], value));
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    out
}

/// The variable names of an RFC 6570 template, in order.
pub fn template_vars(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        let expr =
            rest[start + 1..start + end].trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for v in expr.split(',') {
            let name = v.split(':').next().unwrap_or(v).trim_end_matches('*');
            if !name.is_empty() {
                out.push(name.to_string());
            }
        }
        rest = &rest[start + end + 1..];
    }
    out
}

fn expand_expression(expr: &str, value: &str) -> String {
    let (op, vars) = match expr.chars().next() {
        Some(c @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => (Some(c), &expr[1..]),
        _ => (None, expr),
    };
    let names: Vec<&str> = vars
        .split(',')
        .map(|v| v.split(':').next().unwrap_or(v).trim_end_matches('*'))
        .collect();
    let (first, sep, named) = match op {
        None | Some('+') => ("", ",", false),
        Some('#') => ("#", ",", false),
        Some('.') => (".", ".", false),
        Some('/') => ("/", "/", false),
        Some(';') => (";", ";", true),
        Some('?') => ("?", "&", true),
        _ => ("&", "&", true),
    };
    let parts: Vec<String> = names
        .iter()
        .map(|n| {
            if named {
                format!("{n}={value}")
            } else {
                value.to_string()
            }
        })
        .collect();
    format!("{first}{}", parts.join(sep))
}

/// Whether a run whose `--call-tools` is `policy` may call `tool`: `all`
/// calls every tool, `none` none, `read-only` (the default) only those
/// whose annotations say `readOnlyHint: true` and not `destructiveHint:
/// true`. Hints are the server's word, and a hint left out is read the
/// way the specification's defaults read it: not read-only.
pub fn may_call(tool: &Value, policy: &str) -> bool {
    let hint = |k: &str| tool.pointer(&format!("/annotations/{k}")) == Some(&Value::Bool(true));
    match policy {
        "all" => true,
        "read-only" => hint("readOnlyHint") && !hint("destructiveHint"),
        _ => false,
    }
}

/// The progressive-disclosure signal (docs/interpretations.md#capability-detection):
/// a resource URI whose path, before any query or fragment, ends in
/// `tool_descriptions`.
pub fn is_pd_uri(uri: &str) -> bool {
    uri_base(uri).ends_with("tool_descriptions")
}

/// A URI without its query and fragment.
fn uri_base(uri: &str) -> &str {
    uri.split(['?', '#']).next().unwrap_or(uri)
}

/// The items of a list answer: `listed` itself when it is a list, else the
/// answer's `result.<field>` list (`[]` for an error or a malformed answer).
pub fn listed_items<'a>(listed: &'a Value, field: &str) -> &'a [Value] {
    listed
        .as_array()
        .or_else(|| listed.get("result")?.get(field)?.as_array())
        .map_or(&[], Vec::as_slice)
}

/// The names of listed entries (`tools`, `prompts`…): each map's `name`,
/// whatever its type, so that a check on names sees a malformed one.
pub fn listed_names(items: &[Value]) -> Vec<Value> {
    items
        .iter()
        .filter_map(|t| t.get("name").cloned())
        .collect()
}

/// The distinct `tool_descriptions` URIs (without query or fragment) among
/// listed resources, in list order; entries that are not resources with a
/// string `uri` are passed over.
pub fn pd_uris(resources: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let uris = resources
        .iter()
        .filter_map(|r| r.get("uri").and_then(Value::as_str));
    for uri in uris.filter(|u| is_pd_uri(u)) {
        let base = uri_base(uri).to_string();
        if !out.contains(&base) {
            out.push(base);
        }
    }
    out
}

/// The tools a check uses by name inside a URI query: of the first `n`
/// listed names (read-only tools first, so a check prefers tools that
/// change nothing), those that go into a query unescaped.
pub fn uri_safe_picks(tools: &[Value], n: usize) -> Vec<String> {
    let first = tools.iter().filter(is_named).filter(is_read_only);
    let rest = tools.iter().filter(is_named).filter(|t| !is_read_only(t));
    first
        .chain(rest)
        .take(n.min(tools.len()))
        .filter_map(tool_name)
        .filter(|name| is_uri_safe(name))
        .map(str::to_string)
        .collect()
}

/// [`uri_safe_picks`] where `touched` is empty; otherwise at most `n` of
/// the read-only tools whose names go into a URI query unescaped and are
/// not in `touched`, in the listing's order.
pub fn untouched_picks(tools: &[Value], n: usize, touched: &BTreeSet<&str>) -> Vec<String> {
    if touched.is_empty() {
        return uri_safe_picks(tools, n);
    }
    tools
        .iter()
        .filter(is_read_only)
        .filter_map(tool_name)
        .filter(|name| is_uri_safe(name) && !touched.contains(name))
        .take(n)
        .map(str::to_string)
        .collect()
}

fn is_named(t: &&Value) -> bool {
    t.get("name").is_some_and(Value::is_string)
}

fn is_read_only(t: &&Value) -> bool {
    t.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true))
}

fn tool_name(t: &Value) -> Option<&str> {
    t.get("name").and_then(Value::as_str)
}

fn is_uri_safe(name: &str) -> bool {
    name.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progressive_disclosure_is_detected_by_the_uri_path_alone() {
        for yes in [
            "tool_descriptions",
            "mcp://x/tool_descriptions?tools=a",
            "x/tool_descriptions#f?q",
        ] {
            assert!(is_pd_uri(yes), "{yes}");
        }
        for no in [
            "tool_descriptions/x",
            "x?tool_descriptions",
            "tool_description",
            "x#tool_descriptions",
        ] {
            assert!(!is_pd_uri(no), "{no}");
        }
        let listed = [
            json!({"uri": "a/tool_descriptions?tools=x"}),
            json!({"uri": "a/tool_descriptions"}),
            json!({"uri": 3}),
            json!({"uri": "b/readme"}),
        ];
        assert_eq!(pd_uris(&listed), ["a/tool_descriptions"]);
        let answer = json!({"result": {"resources": listed}});
        assert_eq!(
            pd_uris(listed_items(&answer, "resources")),
            ["a/tool_descriptions"]
        );
        assert!(listed_items(&json!({"error": {"code": -32601}}), "resources").is_empty());
    }

    #[test]
    fn picks_put_read_only_tools_first_and_keep_uri_safe_names() {
        let tools = [
            json!({"name": "write"}),
            json!({"name": "has space", "annotations": {"readOnlyHint": true}}),
            json!({"name": "read", "annotations": {"readOnlyHint": true}}),
            json!({"title": "no name"}),
            json!({"name": "last"}),
        ];
        assert_eq!(uri_safe_picks(&tools, 12), ["read", "write", "last"]);
        assert_eq!(uri_safe_picks(&tools, 2), ["read"]);
        assert_eq!(listed_names(&tools).len(), 4);
    }

    #[test]
    fn untouched_picks_leave_out_touched_tools_and_take_only_read_only_ones_then() {
        let ro = |name: &str| json!({"name": name, "annotations": {"readOnlyHint": true}});
        let tools = [
            ro("a"),
            json!({"name": "write"}),
            ro("b"),
            ro("c d"),
            ro("e"),
        ];
        let none = BTreeSet::new();
        assert_eq!(
            untouched_picks(&tools, 12, &none),
            uri_safe_picks(&tools, 12)
        );
        let touched: BTreeSet<&str> = ["a", "zzz"].into_iter().collect();
        assert_eq!(untouched_picks(&tools, 12, &touched), ["b", "e"]);
        assert_eq!(untouched_picks(&tools, 1, &touched), ["b"]);
        let all: BTreeSet<&str> = ["a", "b", "e"].into_iter().collect();
        assert!(untouched_picks(&tools, 12, &all).is_empty());
    }

    #[test]
    fn schemas_are_checked_against_their_meta_schema() {
        assert!(schema_problems(&json!({"type": "object"})).is_empty());
        assert!(schema_problems(&json!(true)).is_empty());
        assert!(!schema_problems(&json!({"type": "objet"})).is_empty());
        assert!(!schema_problems(&json!({"type": "string", "pattern": "("})).is_empty());
        assert!(!schema_problems(&json!("object")).is_empty());
    }

    #[test]
    fn instances_are_checked_against_a_schema() {
        let s =
            json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}});
        assert!(instance_errors(&json!({"n": 3}), &s).is_empty());
        let e = instance_errors(&json!({"n": "x"}), &s);
        assert!(e[0].starts_with("/n:"), "{e:?}");
        assert!(!instance_errors(&json!({}), &json!({"type": 5})).is_empty());
    }

    #[test]
    fn base64_is_standard_and_padded() {
        assert!(base64_valid(&json!("aGVsbG8=")));
        assert!(base64_valid(&json!("")));
        assert!(!base64_valid(&json!("aGVsbG8")));
        assert!(!base64_valid(&json!("not base64!")));
        assert!(!base64_valid(&json!(3)));
    }

    #[test]
    fn sample_arguments_satisfy_the_schema() {
        let s = json!({
            "type": "object",
            "required": ["a", "b", "c", "d", "e", "f", "g"],
            "properties": {
                "a": {"type": "string", "minLength": 3},
                "b": {"type": "integer", "minimum": 5, "maximum": 9},
                "c": {"enum": ["x", "y"]},
                "d": {"type": "array", "minItems": 1, "items": {"type": "number"}},
                "e": {"type": "object", "required": ["z"], "properties": {"z": {"type": "boolean"}}},
                "f": {"type": ["null", "string"], "format": "uri"},
                "g": {"type": "number", "exclusiveMinimum": 0},
                "optional": {"type": "string"}
            }
        });
        let args = sample_args(&s);
        assert!(instance_errors(&args, &s).is_empty(), "{args}");
        assert!(args.get("optional").is_none());
        assert_eq!(sample_args(&json!({"type": "object"})), json!({}));
    }

    #[test]
    fn prompt_arguments_are_the_required_ones() {
        let p = json!({"name": "p", "arguments": [
            {"name": "a", "required": true}, {"name": "b"}, {"name": "c", "required": false}]});
        assert_eq!(prompt_args(&p), json!({"a": "example"}));
        assert_eq!(prompt_args(&json!({"name": "q"})), json!({}));
    }

    #[test]
    fn templates_expand_every_operator() {
        let cases = [
            ("file:///{path}", "file:///v"),
            ("x://{+p}{#f}", "x://v#v"),
            ("x://h{/a,b}{.e}", "x://h/v/v.v"),
            ("x://h{;a}{?q,r}{&s}", "x://h;a=v?q=v&r=v&s=v"),
            ("x://{a:3}/{b*}/{", "x://v/v/{"),
        ];
        for (t, want) in cases {
            assert_eq!(expand_template(t, "v"), want, "{t}");
        }
        assert_eq!(template_vars("x://{+p}{?q,r*}/{s:3}"), ["p", "q", "r", "s"]);
    }

    #[test]
    fn only_read_only_tools_are_called_by_default() {
        let ro = json!({"name": "r", "annotations": {"readOnlyHint": true}});
        let both =
            json!({"name": "d", "annotations": {"readOnlyHint": true, "destructiveHint": true}});
        let plain = json!({"name": "p"});
        assert!(may_call(&ro, "read-only"));
        assert!(!may_call(&both, "read-only"));
        assert!(!may_call(&plain, "read-only"));
        assert!(may_call(&plain, "all"));
        assert!(!may_call(&ro, "none"));
    }
}
