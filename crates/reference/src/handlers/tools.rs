//! `tools/list` (with SEP-1821 `query`, SEP-1300 `filter`, pagination) and
//! `tools/call`.

use super::minimal_schema;
use super::{category, grouping, progressive, window, with_next, Ctx, LIST_PAGE};
use crate::args;
use crate::catalog_file::{Tool, HEADER_KEYWORD};
use crate::error::RpcError;
use crate::filter::ToolFilter;
use crate::params::Params;
use serde_json::{json, Map, Value};

/// A tool as `tools/list` (and every search) shows it.
pub fn list_entry(tool: &Tool, full: bool) -> Value {
    // Room for every key below, so the map never regrows.
    let mut e = Map::with_capacity(10);
    e.insert("name".into(), json!(&*tool.name));
    if !tool.title.is_empty() {
        e.insert("title".into(), json!(&*tool.title));
    }
    e.insert("description".into(), json!(&*tool.description));
    if full {
        let shown = tool.schema_and_examples();
        e.insert("inputSchema".into(), shown.input_schema);
        e.insert("examples".into(), shown.examples);
    } else {
        e.insert("inputSchema".into(), minimal_schema());
    }
    e.insert("groups".into(), tool.groups_json());
    e.insert("tags".into(), tool.tags_json());
    if !tool.annotations.is_null() {
        e.insert("annotations".into(), tool.annotations.value());
    }
    let mut e = Value::Object(e);
    // The grouping extension's membership names the same groups as
    // SEP-1300's `groups` field.
    grouping::attach(&mut e, tool.groups.iter().map(|g| &**g));
    e
}

/// A tool as this request's `tools/list` shows it.
pub fn entry(ctx: &Ctx<'_>, tool: &Tool) -> Value {
    let mut e = list_entry(tool, ctx.policy().requests.full_schemas_in_list.on());
    if ctx.era == crate::served_era::Era::Stateless {
        show_header_parameters(&mut e, tool);
    }
    ctx.layer().tool_entry(ctx, tool, &mut e);
    e
}

/// In 2026-07-28 a tool whose schema marks parameters with `x-mcp-header`
/// shows them in its listed schema too, even the minimal one: a client
/// mirrors only what the listing tells it (MCP 2026-07-28, Streamable HTTP,
/// Custom Headers from Tool Parameters). Only those properties are shown,
/// so the listing stays minimal otherwise.
fn show_header_parameters(entry: &mut Value, tool: &Tool) {
    if !tool.may_mark_header_parameters() {
        return;
    }
    let schema = tool.input_schema();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let marked: Map<String, Value> = props
        .iter()
        .filter(|(_, p)| p.get(HEADER_KEYWORD).is_some())
        .map(|(k, p)| (k.clone(), p.clone()))
        .collect();
    if marked.is_empty() {
        return;
    }
    if let Some(Value::Object(listed)) = entry.get_mut("inputSchema") {
        let shown = listed
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(shown) = shown {
            for (k, p) in marked {
                shown.entry(k).or_insert(p);
            }
        }
    }
}

pub use crate::filter::{scope_of, ListRequest};

pub fn list(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let raw_query = p.query()?;
    let filter = ToolFilter::parse(p.opt_object("filter")?)?;
    let cursor_arg = p.cursor()?;
    ctx.layer().refuse_query(ctx, raw_query)?;
    // A blank query is no query: it lists every tool.
    let query = raw_query.filter(|q| !q.trim().is_empty());
    let scope = scope_of(query, &filter);
    let mut req = ListRequest {
        query,
        filter,
        scope,
        next_scope: scope,
    };
    ctx.layer().list_request(ctx, cursor_arg, &mut req);
    let ListRequest {
        query,
        filter,
        scope,
        next_scope,
    } = req;
    let offset = ctx.resume(cursor_arg, scope)?;
    let allowed = filter.allowed(&ctx.snap, ctx.layer().filter());
    let (docs, total) = match ctx.layer().regex_page(ctx, query, allowed.as_ref(), offset) {
        Some(page) => page?,
        None => page(ctx, query, allowed.as_ref(), offset),
    };
    let mut tools: Vec<Value> = docs.iter().map(|&d| entry(ctx, ctx.snap.tool(d))).collect();
    ctx.layer().tools_page(ctx, cursor_arg, &mut tools);
    let next = ctx.next_cursor(next_scope, offset, tools.len(), total);
    ctx.layer()
        .tools_listed(ctx, query, &filter, cursor_arg, next.is_none(), &mut tools);
    // Not `json!`: it would deep-copy the page through `to_value`.
    let mut result = Map::with_capacity(2);
    result.insert("tools".into(), Value::Array(tools));
    Ok(with_next(Value::Object(result), next))
}

/// The documents of one page from `offset` and how many match in all:
/// ranked by the query, else in catalog order, within what the filter
/// allows.
fn page(
    ctx: &Ctx<'_>,
    query: Option<&str>,
    allowed: Option<&crate::bitset::Bitset>,
    offset: usize,
) -> (Vec<u32>, usize) {
    match (query, allowed) {
        (Some(q), _) => {
            let exact = ctx.snap.exact_tools(q);
            let r = ctx
                .snap
                .tool_index()
                .search(q, allowed, &exact, offset, LIST_PAGE);
            (r.docs, r.total)
        }
        (None, Some(set)) => {
            let all: Vec<u32> = set.iter().map(|d| d as u32).collect();
            let w = window(offset, LIST_PAGE, all.len());
            (all[w.offset..w.end].to_vec(), all.len())
        }
        (None, None) => {
            let w = window(offset, LIST_PAGE, ctx.snap.len());
            ((w.offset as u32..w.end as u32).collect(), ctx.snap.len())
        }
    }
}

pub fn call(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let name = p.req_str("name")?;
    let mut arguments = match p.get("arguments") {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => return Err(RpcError::bad_type("arguments", "an object", other)),
    };
    let snap = std::sync::Arc::clone(&ctx.snap);
    let Some(doc) = snap.doc(name) else {
        return Err(RpcError::unknown_tool(name));
    };
    let tool = snap.tool(doc);
    progressive::require_authorized(ctx, name)?;
    // What the tool needs from the client comes before its arguments: a
    // client that lacks it learns so whatever it passed.
    if let Some(answer) = super::client_input::gate(ctx, p, tool)? {
        return Ok(answer);
    }
    ctx.layer().call_arguments(ctx, name, &mut arguments);
    let schema = tool.input_schema();
    if let Err(why) = args::validate(&schema, &arguments) {
        if ctx.policy().requests.invalid_arguments_accepted.on() {
            return Ok(ok_result(json!({})));
        }
        return failed(
            ctx,
            name,
            &format!("Invalid arguments for {name}: {why}"),
            &why,
        );
    }
    let outcome = match category::run(ctx, tool, &arguments) {
        Some(outcome) => outcome,
        None => ctx.server.store().execute(tool, &arguments),
    };
    match outcome {
        Ok(value) => Ok(ok_result(value)),
        Err(message) => failed(ctx, name, &message, &message),
    }
}

/// A call that failed: reported in its result (`isError`), where the model
/// reads it, not as a protocol error.
fn failed(ctx: &Ctx<'_>, name: &str, shown: &str, cause: &str) -> Result<Value, RpcError> {
    ctx.layer().call_escape(ctx, name, cause)?;
    Ok(error_result(shown))
}

/// A successful tool result: the value as structured content and as JSON
/// text, for clients that only read `content`.
pub fn ok_result(value: Value) -> Value {
    let mut result = Map::with_capacity(3);
    result.insert(
        "content".into(),
        json!([{"type": "text", "text": value.to_string()}]),
    );
    // Moved in, not through `json!`, which would deep-copy it.
    result.insert("structuredContent".into(), value);
    result.insert("isError".into(), Value::Bool(false));
    Value::Object(result)
}

pub fn error_result(message: &str) -> Value {
    json!({
        "content": [{"type": "text", "text": message}],
        "isError": true,
    })
}
