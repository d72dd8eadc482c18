//! Progressive disclosure (seed 004) and resources: `resources/list`,
//! `resources/templates/list`, `resources/read` (the `tool_descriptions`
//! resource and the catalog's own), and the per-session authorization that
//! `tools/call` checks.

use super::{grouping, paged_list, Ctx};
use crate::catalog_file::{Resource, Tool};
use crate::error::{RpcError, TOOL_DESCRIPTION_REQUIRED};
use crate::live::{TOOL_DESCRIPTIONS_NAME, TOOL_DESCRIPTIONS_TEMPLATE, TOOL_DESCRIPTIONS_URI};
use crate::params::{Params, MAX_LIST_ENTRIES};
use crate::served_era::Era;
use serde_json::{json, Map, Value};

pub use crate::live::WORKFLOW;

const MISSING_SELECTION: &str = "You must specify one or more tool names in the 'tools' parameter.";

fn resource_entry(r: &Resource) -> Value {
    let mut e = Map::new();
    e.insert("uri".into(), json!(r.uri));
    e.insert("name".into(), json!(r.name));
    if !r.title.is_empty() {
        e.insert("title".into(), json!(r.title));
    }
    e.insert("description".into(), json!(r.description));
    e.insert("mimeType".into(), json!(r.mime_type));
    let mut e = Value::Object(e);
    grouping::attach(&mut e, r.groups.iter().map(String::as_str));
    e
}

pub fn tool_descriptions_entry() -> Value {
    json!({
        "uri": TOOL_DESCRIPTIONS_URI,
        "name": TOOL_DESCRIPTIONS_NAME,
        "description": WORKFLOW,
        "mimeType": "application/json",
    })
}

/// Every `resources/list` entry: the tool-descriptions resource first, then
/// the catalog's resources; index `i` is search document `i`.
pub fn resource_entries(ctx: &Ctx<'_>) -> Vec<Value> {
    let mut td = tool_descriptions_entry();
    ctx.layer().descriptions_entry(ctx, &mut td);
    let groups = &ctx.snap.catalog.tool_descriptions_groups;
    grouping::attach(&mut td, groups.iter().map(String::as_str));
    let mut entries: Vec<Value> = std::iter::once(td)
        .chain(ctx.snap.catalog.resources.iter().map(resource_entry))
        .collect();
    for e in &mut entries {
        ctx.layer().resource_entry(ctx, e);
    }
    entries
}

pub fn list(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let cursor = p.cursor()?;
    let entries = resource_entries(ctx);
    paged_list(ctx, "resources", entries, cursor)
}

pub fn templates(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let cursor = p.cursor()?;
    let mut template = json!({
        "uriTemplate": TOOL_DESCRIPTIONS_TEMPLATE,
        "name": TOOL_DESCRIPTIONS_NAME,
        "description": WORKFLOW,
        "mimeType": "application/json",
    });
    ctx.layer().descriptions_entry(ctx, &mut template);
    let groups = &ctx.snap.catalog.tool_descriptions_groups;
    grouping::attach(&mut template, groups.iter().map(String::as_str));
    ctx.layer().resource_entry(ctx, &mut template);
    paged_list(ctx, "resourceTemplates", vec![template], cursor)
}

pub fn read(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let uri = p.req_str("uri")?;
    let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
    if path == TOOL_DESCRIPTIONS_URI {
        return read_descriptions(ctx, uri, query);
    }
    let found = ctx.snap.catalog.resources.iter().find(|r| r.uri == uri);
    let Some(resource) = found else {
        return Err(RpcError::resource_not_found(uri, ctx.era));
    };
    let contents =
        json!({"uri": resource.uri, "mimeType": resource.mime_type, "text": resource.text});
    Ok(json!({"contents": [contents]}))
}

/// The tool names in a `?tools=a,b` query (several `tools=` parameters
/// concatenate), percent-decoded, empty names dropped, repeats removed; and
/// how many names were given, repeats included (the limit counts those).
pub fn selected_tools(query: &str) -> (Vec<String>, usize) {
    let mut names: Vec<String> = Vec::new();
    let mut given = 0;
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if percent_decode(key) != "tools" {
            continue;
        }
        for name in percent_decode(value).split(',') {
            let name = name.trim();
            if name.is_empty() {
                continue;
            }
            given += 1;
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    (names, given)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `{name, description (the full one), inputSchema, examples,
/// usage_guidance, error_guidance}`, with empty defaults for what the
/// catalog leaves out.
fn full_description(tool: &Tool) -> Value {
    let mut d = tool.details();
    let mut take = |key: &str, default: Value| match d.get_mut(key).map(Value::take) {
        None | Some(Value::Null) => default,
        Some(v) => v,
    };
    let description = match take("full_description", Value::Null) {
        Value::String(s) if !s.is_empty() => s,
        _ => tool.description.to_string(),
    };
    json!({
        "name": &*tool.name,
        "description": description,
        "inputSchema": take("inputSchema", json!({"type": "object"})),
        "examples": take("examples", json!([])),
        "usage_guidance": take("usage_guidance", json!({})),
        "error_guidance": take("error_guidance", json!({})),
    })
}

/// A tool's full description as this request's read shows it.
fn describe(ctx: &Ctx<'_>, tool: &Tool) -> Value {
    let mut d = full_description(tool);
    ctx.layer().description(ctx, &mut d);
    d
}

fn read_descriptions(ctx: &mut Ctx<'_>, uri: &str, query: &str) -> Result<Value, RpcError> {
    let (mut names, given) = selected_tools(query);
    if given > MAX_LIST_ENTRIES {
        return Err(RpcError::invalid_params(format!(
            "Invalid params: ?tools= names {given} tools; at most {MAX_LIST_ENTRIES} are allowed"
        )));
    }
    ctx.layer().selection(ctx, &mut names);
    if names.is_empty() {
        names = ctx
            .layer()
            .selection_when_missing(ctx)
            .ok_or_else(missing_selection)?;
    }
    let snap = std::sync::Arc::clone(&ctx.snap);
    let mut out = Map::new();
    let mut authorized = Vec::new();
    for name in &names {
        let tool = ctx.layer().lookup(ctx, &snap, name, snap.doc(name));
        match tool {
            Some(tool) => {
                out.insert(name.clone(), describe(ctx, tool));
                authorized.push(tool.name.to_string());
            }
            None => {
                let available: Vec<&str> = snap.tools().map(|t| &*t.name).collect();
                out.insert(
                    name.clone(),
                    json!({"error": format!("Tool '{name}' not found"), "available_tools": available}),
                );
            }
        }
    }
    ctx.layer()
        .descriptions(ctx, &snap, &mut out, &|t| describe(ctx, t));
    authorize(ctx, authorized);
    let text = Value::Object(out).to_string();
    Ok(json!({"contents": [{"uri": uri, "mimeType": "application/json", "text": text}]}))
}

pub fn missing_selection() -> RpcError {
    RpcError::invalid_params(MISSING_SELECTION).with_data(json!({
        "code": "MISSING_TOOL_SELECTION",
        "examples": [
            "resource:///tool_descriptions?tools=tool_name",
            "resource:///tool_descriptions?tools=tool1,tool2",
        ],
    }))
}

fn authorize(ctx: &mut Ctx<'_>, mut names: Vec<String>) {
    if names.is_empty() {
        return;
    }
    ctx.layer().authorization(ctx, &mut names);
    ctx.session.authorized.extend(names);
}

/// Refuses a call whose description this session has not fetched.
///
/// Only stateful sessions are checked: the 2026-07-28 protocol has no
/// session to hold an authorization, so there the fetch is recommended (the
/// instructions say so) but not enforced.
pub fn require_authorized(ctx: &Ctx<'_>, name: &str) -> Result<(), RpcError> {
    if ctx.era == Era::Stateless || ctx.policy().requests.calls_unchecked.on() {
        return Ok(());
    }
    let ok = ctx
        .layer()
        .authorized(ctx, name)
        .unwrap_or_else(|| ctx.session.authorized.contains(name));
    if ok {
        return Ok(());
    }
    let uri = format!("{TOOL_DESCRIPTIONS_URI}?tools={name}");
    let mut e = RpcError::new(
        TOOL_DESCRIPTION_REQUIRED,
        format!("Tool '{name}' requires fetching its description before use."),
    )
    .with_data(json!({"code": "TOOL_DESCRIPTION_REQUIRED", "resource_uri": uri}));
    ctx.layer().auth_error(ctx, &mut e);
    Err(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tool_selection() {
        let names = |q: &str| selected_tools(q).0;
        assert_eq!(names("tools=a,b"), ["a", "b"]);
        assert_eq!(
            selected_tools("tools=a%2Cb&tools=c,a"),
            (vec!["a".into(), "b".into(), "c".into()], 4)
        );
        assert!(names("").is_empty());
        assert!(names("tools=").is_empty());
        assert!(names("foo=bar").is_empty());
        assert_eq!(names("tools=%zz,x"), ["%zz", "x"]);
    }

    #[test]
    fn workflow_mentions_what_the_draft_requires() {
        for needle in [
            "tools/list",
            "?tools=",
            "authorizes",
            "TOOL_DESCRIPTION_REQUIRED",
            "Step 1",
        ] {
            assert!(WORKFLOW.contains(needle), "{needle}");
        }
    }
}
