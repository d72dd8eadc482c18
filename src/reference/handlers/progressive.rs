//! Progressive disclosure (seed 004) and resources: `resources/list`,
//! `resources/templates/list`, `resources/read` (the `tool_descriptions`
//! resource and the catalog's own), and the per-session authorization that
//! `tools/call` checks.

use super::{grouping, paged_list, Ctx};
use crate::reference::catalog_file::{Resource, Tool};
use crate::reference::error::{RpcError, TOOL_DESCRIPTION_REQUIRED};
use crate::reference::faults::Fault;
use crate::reference::live::{
    TOOL_DESCRIPTIONS_NAME, TOOL_DESCRIPTIONS_TEMPLATE, TOOL_DESCRIPTIONS_URI,
};
use crate::reference::params::{Params, MAX_LIST_ENTRIES};
use crate::reference::served_era::Era;
use serde_json::{json, Map, Value};

/// The description of the `tool_descriptions` resource: the workflow a
/// model must follow (section 4.2 of the draft).
pub const WORKFLOW: &str = "\
WORKFLOW: Step 1: Pick a tool from tools/list by what it does; the short descriptions there are \
enough to choose, but they carry no parameter details. Step 2: Fetch the full description of the \
tools you picked from this resource, naming them in the 'tools' query parameter (comma-separated, \
exactly as shown in tools/list): resource:///tool_descriptions?tools=page_create or \
resource:///tool_descriptions?tools=page_create,task_create. The answer is a JSON object with one \
entry per tool: full description, complete inputSchema, examples, usage and error guidance. \
Step 3: Call the tool with the parameters you learned. Fetching a tool's description authorizes \
that tool for the rest of this session. Calling a tool whose description was not fetched fails \
with TOOL_DESCRIPTION_REQUIRED, whose resource_uri says what to read. Always specify ?tools=: \
reading this resource without it fails with MISSING_TOOL_SELECTION.";

/// What `pd-terse-resource` lists the resource as.
const TERSE_NAME: &str = "Schemas";
const TERSE_DESCRIPTION: &str = "Full schemas on demand.";

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
    if ctx.has(Fault::PdTerseResource) {
        td["name"] = json!(TERSE_NAME);
        td["description"] = json!(TERSE_DESCRIPTION);
    }
    let groups = &ctx.snap.catalog.tool_descriptions_groups;
    grouping::attach(&mut td, groups.iter().map(String::as_str));
    let mut entries: Vec<Value> = std::iter::once(td)
        .chain(ctx.snap.catalog.resources.iter().map(resource_entry))
        .collect();
    for e in &mut entries {
        grouping::serve(ctx, e);
    }
    entries
}

pub fn list(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let cursor = p.cursor()?;
    let mut entries = resource_entries(ctx);
    if ctx.has(Fault::ResourcesListNoName) {
        for e in &mut entries {
            if let Value::Object(m) = e {
                if let Some(name) = m.remove("name") {
                    m.entry("title").or_insert(name);
                }
            }
        }
    }
    paged_list(ctx, "resources", entries, cursor)
}

pub fn templates(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let cursor = p.cursor()?;
    let terse = ctx.has(Fault::PdTerseResource);
    let mut template = json!({
        "uriTemplate": TOOL_DESCRIPTIONS_TEMPLATE,
        "name": if terse { TERSE_NAME } else { TOOL_DESCRIPTIONS_NAME },
        "description": if terse { TERSE_DESCRIPTION } else { WORKFLOW },
        "mimeType": "application/json",
    });
    let groups = &ctx.snap.catalog.tool_descriptions_groups;
    grouping::attach(&mut template, groups.iter().map(String::as_str));
    grouping::serve(ctx, &mut template);
    if ctx.has(Fault::TemplateNoUriTemplate) {
        if let Value::Object(t) = &mut template {
            if let Some(u) = t.remove("uriTemplate") {
                t.insert("uri".into(), u);
            }
        }
    }
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
        if ctx.has(Fault::ResourceMissingEmpty) {
            return Ok(json!({"contents": []}));
        }
        return Err(not_found(ctx, uri));
    };
    let mut contents =
        json!({"uri": resource.uri, "mimeType": resource.mime_type, "text": resource.text});
    read_faults(ctx, &mut contents);
    Ok(json!({"contents": [contents]}))
}

fn not_found(ctx: &Ctx<'_>, uri: &str) -> RpcError {
    if ctx.era == Era::Stateful && ctx.has(Fault::ResourceNotFoundInternal) {
        return RpcError::internal(format!("Internal error: no such file {uri}"));
    }
    RpcError::resource_not_found(uri, ctx.era)
}

/// The `read-*` faults, on one contents entry of a catalog resource.
fn read_faults(ctx: &Ctx<'_>, contents: &mut Value) {
    let Value::Object(c) = contents else {
        return;
    };
    if ctx.has(Fault::ReadWrongUri) {
        let uri = c.get("uri").and_then(Value::as_str).unwrap_or_default();
        c.insert("uri".into(), json!(format!("{uri}#contents")));
    }
    if ctx.has(Fault::ReadBadBlob) {
        if let Some(text) = c.remove("text") {
            c.insert("blob".into(), text);
        }
    }
    if ctx.has(Fault::ReadNoText) {
        c.remove("text");
    }
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
fn full_description(tool: &Tool, placeholder: bool) -> Value {
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
        "inputSchema": if placeholder {
            super::tools::minimal_schema()
        } else {
            take("inputSchema", json!({"type": "object"}))
        },
        "examples": take("examples", json!([])),
        "usage_guidance": take("usage_guidance", json!({})),
        "error_guidance": take("error_guidance", json!({})),
    })
}

/// How many names `--fault pd-selection-capped` serves.
const SELECTION_CAP: usize = 4;

fn read_descriptions(ctx: &mut Ctx<'_>, uri: &str, query: &str) -> Result<Value, RpcError> {
    let (mut names, given) = selected_tools(query);
    if given > MAX_LIST_ENTRIES {
        return Err(RpcError::invalid_params(format!(
            "Invalid params: ?tools= names {given} tools; at most {MAX_LIST_ENTRIES} are allowed"
        )));
    }
    if ctx.has(Fault::PdSelectionCapped) {
        names.truncate(SELECTION_CAP);
    }
    if names.is_empty() {
        if !ctx.has(Fault::PdMissingSelectionOk) {
            return Err(missing_selection());
        }
        names = ctx.snap.tools().map(|t| t.name.to_string()).collect();
    }
    let snap = std::sync::Arc::clone(&ctx.snap);
    let placeholder = ctx.has(Fault::PdPlaceholderSchema);
    let mut out = Map::new();
    let mut authorized = Vec::new();
    for name in &names {
        let doc = if ctx.has(Fault::PdCaseInsensitive) {
            snap.docs_ignoring_case(name).first().copied()
        } else if ctx.has(Fault::PdNamesSuffix) && snap.doc(name).is_none() {
            // A lookup of namespaced names by their last part.
            snap.tools()
                .find(|t| t.name.ends_with(name.as_str()))
                .and_then(|t| snap.doc(&t.name))
        } else {
            snap.doc(name)
        };
        // `pd-auth-filter-scoped`: names outside the last filtered view are unknown.
        let doc = doc.filter(|_| {
            !ctx.has(Fault::PdAuthFilterScoped)
                || ctx.session.view.as_ref().is_none_or(|v| v.contains(name))
        });
        let tool = doc.map(|d| snap.tool(d)).or_else(|| {
            // `pd-describes-hidden`: the lookup runs over every tool, hidden ones included.
            ctx.has(Fault::PdDescribesHidden)
                .then(|| {
                    snap.catalog
                        .tools
                        .iter()
                        .find(|t| &*t.name == name.as_str())
                })
                .flatten()
        });
        match tool {
            Some(tool) => {
                out.insert(name.clone(), full_description(tool, placeholder));
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
    if ctx.has(Fault::PdExtraTools) {
        if let Some(extra) = snap.tools().find(|t| !out.contains_key(&*t.name)) {
            out.insert(extra.name.to_string(), full_description(extra, placeholder));
        }
    }
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
    if ctx.has(Fault::PdFirstNameOnly) {
        names.truncate(1);
    }
    if ctx.has(Fault::PdAuthReplaced) {
        ctx.session.authorized.clear();
    }
    if ctx.has(Fault::PdAuthorizeAny) {
        ctx.session.authorized_all = true;
    }
    if let Some(shared) = &ctx.server.shared_auth {
        shared.add(&names);
    }
    ctx.session.authorized.extend(names);
}

/// Refuses a call whose description this session has not fetched.
///
/// Only stateful sessions are checked: the 2026-07-28 protocol has no
/// session to hold an authorization, so there the fetch is recommended (the
/// instructions say so) but not enforced.
pub fn require_authorized(ctx: &Ctx<'_>, name: &str) -> Result<(), RpcError> {
    if ctx.era == Era::Stateless || ctx.has(Fault::PdNoAuth) {
        return Ok(());
    }
    let ok = match &ctx.server.shared_auth {
        Some(shared) => shared.contains(name),
        None => ctx.session.authorized_all || ctx.session.authorized.contains(name),
    };
    if ok {
        return Ok(());
    }
    let uri = if ctx.has(Fault::PdResourceUriBare) {
        TOOL_DESCRIPTIONS_URI.to_string()
    } else {
        format!("{TOOL_DESCRIPTIONS_URI}?tools={name}")
    };
    Err(RpcError::new(
        TOOL_DESCRIPTION_REQUIRED,
        format!("Tool '{name}' requires fetching its description before use."),
    )
    .with_data(json!({"code": "TOOL_DESCRIPTION_REQUIRED", "resource_uri": uri})))
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
