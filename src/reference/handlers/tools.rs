//! `tools/list` (with SEP-1821 `query`, SEP-1300 `filter`, pagination) and
//! `tools/call`.

use super::{category, grouping, progressive, window, with_next, Ctx, LIST_PAGE};
use crate::reference::args;
use crate::reference::catalog_file::Tool;
use crate::reference::cursor;
use crate::reference::error::RpcError;
use crate::reference::faults::Fault;
use crate::reference::filter::ToolFilter;
use crate::reference::params::Params;
use crate::reference::text;
use serde_json::{json, Map, Value};

/// The input schema every `tools/list` entry shows: progressive disclosure
/// keeps the real one for `tool_descriptions`.
pub fn minimal_schema() -> Value {
    // Cloned from one instance: building it hashes both keys for every entry
    // of every list page.
    static MINIMAL: std::sync::LazyLock<Value> =
        std::sync::LazyLock::new(|| json!({"type": "object", "additionalProperties": true}));
    MINIMAL.clone()
}

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
        let mut d = tool.details();
        let mut take = |key: &str| d.get_mut(key).map(Value::take).unwrap_or(Value::Null);
        e.insert("inputSchema".into(), take("inputSchema"));
        e.insert("examples".into(), take("examples"));
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

pub fn entry(ctx: &Ctx<'_>, tool: &Tool) -> Value {
    let mut e = list_entry(tool, ctx.has(Fault::PdFullSchemasInList));
    if ctx.era == crate::reference::served_era::Era::Stateless {
        show_header_parameters(&mut e, tool);
    }
    if ctx.has(Fault::ListNoInputSchema) {
        if let Value::Object(m) = &mut e {
            m.remove("inputSchema");
        }
    }
    if ctx.has(Fault::GroupingDanglingName)
        && ctx.snap.tools().next().is_some_and(|t| t.name == tool.name)
    {
        let mut names = grouping::names_of(&e);
        names.push(grouping::DANGLING_GROUP.into());
        grouping::set_names(&mut e, &names);
    }
    grouping::serve(ctx, &mut e);
    core_faults(ctx, tool, &mut e);
    e
}

/// The faults of the core profile's tool checks, on one tools/list entry.
fn core_faults(ctx: &Ctx<'_>, tool: &Tool, e: &mut Value) {
    let first = || ctx.snap.tools().next().is_some_and(|t| t.name == tool.name);
    if ctx.has(Fault::ToolNameSpace) && first() {
        e["name"] = json!(tool.name.replace('_', " "));
    }
    if ctx.has(Fault::InputSchemaInvalid) && first() {
        e["inputSchema"] = json!({"type": "objekt"});
    }
    let read_only = || tool.annotations.value().get("readOnlyHint") == Some(&Value::Bool(true));
    if ctx.has(Fault::OutputSchemaUnmet) && read_only() {
        e["outputSchema"] = json!({"type": "object", "required": ["summary"]});
    }
}

/// In 2026-07-28 a tool whose schema marks parameters with `x-mcp-header`
/// shows them in its listed schema too, even the minimal one: a client
/// mirrors only what the listing tells it (MCP 2026-07-28, Streamable HTTP,
/// Custom Headers from Tool Parameters). Only those properties are shown,
/// so the listing stays minimal otherwise.
fn show_header_parameters(entry: &mut Value, tool: &Tool) {
    let schema = tool.input_schema();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let marked: Map<String, Value> = props
        .iter()
        .filter(|(_, p)| p.get("x-mcp-header").is_some())
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

/// The faults that make a 2026-07-28 `tools/list` depend on the connection
/// or on the walk: a per-process salt leaves some tools out, and every
/// second walk serves its first page reversed.
fn stateless_list_faults(ctx: &Ctx<'_>, first_page: bool, tools: &mut Vec<Value>) {
    if ctx.era != crate::reference::served_era::Era::Stateless {
        return;
    }
    if first_page && ctx.has(Fault::ToolsListOrderVaries) {
        ctx.server.start_walk();
        if ctx.server.even_walk() {
            tools.reverse();
        }
    }
    if ctx.has(Fault::ToolsListPerConnection) {
        use std::hash::BuildHasher;
        static SALT: std::sync::OnceLock<std::collections::hash_map::RandomState> =
            std::sync::OnceLock::new();
        let salt = SALT.get_or_init(Default::default);
        tools.retain(|t| salt.hash_one(t["name"].as_str().unwrap_or("")) % 2 == 0);
    }
}

pub fn list(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let raw_query = p.query()?;
    let mut filter = ToolFilter::parse(p.opt_object("filter")?)?;
    let cursor_arg = p.cursor()?;
    // Each fault is asked about only where it can act, so a fault trace
    // (`FaultTrace`) names just the conversations it can change.
    if raw_query.is_some_and(|q| q.contains('\0') || q.contains("%00"))
        && ctx.has(Fault::QueryNulInternalError)
    {
        return Err(RpcError::internal(
            "Internal error: nul byte found in provided data",
        ));
    }
    if raw_query.is_some_and(|q| q.chars().any(|c| u32::from(c) > 0xFFFF))
        && ctx.has(Fault::QueryAstralInternalError)
    {
        // A UTF-16 tokenizer that does not pair surrogates.
        return Err(RpcError::internal(
            "Internal error: unpaired surrogate in query",
        ));
    }
    let mut query = raw_query.filter(|q| !q.trim().is_empty());
    if query.is_some() && ctx.has(Fault::IgnoreQuery) {
        query = None;
    }
    if query.is_some() && ctx.has(Fault::QueryDropsFilter) {
        filter = ToolFilter::default();
    }
    let (groups, tags) = filter.canonical();
    let scope = cursor::scope(&[query.unwrap_or(""), &groups, &tags]);
    let dropped = cursor::scope(&["", "", ""]);
    // With neither query nor filter, both scopes are the dropped one.
    let narrowed = query.is_some() || !filter.is_empty();
    let (query, filter, scope, issue_scope) = if narrowed && ctx.has(Fault::CursorDropsQuery) {
        // The defect: cursors are issued without the query, and a page
        // fetched with one is served from the unfiltered list.
        if cursor_arg.is_some() {
            (None, ToolFilter::default(), dropped, dropped)
        } else {
            (query, filter, scope, dropped)
        }
    } else {
        (query, filter, scope, scope)
    };
    let offset = ctx.resume(cursor_arg, scope)?;
    let allowed = filter.allowed(&ctx.snap, ctx.faults());
    let (docs, total) = match query {
        Some(q) if ctx.has(Fault::QueryAsRegex) => regex_matches(ctx, q, allowed.as_ref(), offset)?,
        Some(q) => {
            let exact = ctx.snap.exact_tools(q);
            let r = ctx
                .snap
                .tool_index()
                .search(q, allowed.as_ref(), &exact, offset, LIST_PAGE);
            (r.docs, r.total)
        }
        None => match &allowed {
            Some(set) => {
                let all: Vec<u32> = set.iter().map(|d| d as u32).collect();
                let w = window(offset, LIST_PAGE, all.len());
                (all[w.offset..w.end].to_vec(), all.len())
            }
            None => {
                let w = window(offset, LIST_PAGE, ctx.snap.len());
                ((w.offset as u32..w.end as u32).collect(), ctx.snap.len())
            }
        },
    };
    let mut tools: Vec<Value> = docs.iter().map(|&d| entry(ctx, ctx.snap.tool(d))).collect();
    stateless_list_faults(ctx, cursor_arg.is_none(), &mut tools);
    if ctx.has(Fault::GroupingMembershipUnstable) {
        match cursor_arg {
            None => ctx.server.start_walk(),
            Some(_) if ctx.server.even_walk() => tools.iter_mut().for_each(grouping::strip),
            Some(_) => {}
        }
    }
    let next = ctx.next_cursor(issue_scope, offset, tools.len(), total);
    if !filter.is_empty() && ctx.has(Fault::FilterEntriesStripped) {
        for e in &mut tools {
            if let Value::Object(m) = e {
                m.remove("annotations");
            }
        }
    }
    if next.is_none()
        && ((query.is_some() && ctx.has(Fault::QueryRevealsHidden))
            || (!filter.is_empty() && ctx.has(Fault::FilterRevealsHidden)))
    {
        tools.extend(hidden_entries(ctx, query, &filter));
    }
    // An unfiltered list clears a view only this fault keeps.
    let view_changes = !filter.is_empty() || ctx.session.view.is_some();
    if view_changes && ctx.has(Fault::PdAuthFilterScoped) {
        if filter.is_empty() {
            ctx.session.view = None;
        } else {
            let names = tools.iter().filter_map(|t| t["name"].as_str());
            let names: std::collections::HashSet<String> = names.map(str::to_string).collect();
            match (&mut ctx.session.view, cursor_arg) {
                (Some(view), Some(_)) => view.extend(names),
                (view, _) => *view = Some(names),
            }
        }
    }
    // Not `json!`: it would deep-copy the page through `to_value`.
    let mut result = Map::with_capacity(2);
    result.insert("tools".into(), Value::Array(tools));
    Ok(with_next(Value::Object(result), next))
}

/// The entries of hidden (audience-restricted) tools that match `query`
/// (any of its words in the name, description or tags) and `filter`: what
/// the `*-reveals-hidden` faults leak by checking the whole catalog.
pub fn hidden_entries(ctx: &Ctx<'_>, query: Option<&str>, filter: &ToolFilter) -> Vec<Value> {
    let wanted: Vec<String> = query.map(|q| text::words(q).collect()).unwrap_or_default();
    ctx.snap
        .catalog
        .tools
        .iter()
        .filter(|t| !t.is_visible() && filter.admits(t))
        .filter(|t| {
            query.is_none() || {
                let mut words = text::words(&t.name)
                    .chain(text::words(&t.description))
                    .chain(t.tags.iter().flat_map(|x| text::words(x)));
                words.any(|w| wanted.contains(&w))
            }
        })
        .map(|t| entry(ctx, t))
        .collect()
}

/// The `query-as-regex` fault: what a server that hands the query to a
/// regex engine does.
fn regex_matches(
    ctx: &Ctx<'_>,
    q: &str,
    allowed: Option<&crate::reference::bitset::Bitset>,
    offset: usize,
) -> Result<(Vec<u32>, usize), RpcError> {
    let re = regex::RegexBuilder::new(q)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| RpcError::internal(format!("Internal error: {e}")))?;
    let all: Vec<u32> = ctx
        .snap
        .tools()
        .enumerate()
        .filter(|(d, _)| allowed.is_none_or(|a| a.contains(*d)))
        .filter(|(_, t)| re.is_match(&t.name) || re.is_match(&t.description))
        .map(|(d, _)| d as u32)
        .collect();
    let w = window(offset, LIST_PAGE, all.len());
    Ok((all[w.offset..w.end].to_vec(), all.len()))
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
        if ctx.has(Fault::UnknownToolResult) {
            return Ok(error_result(&format!("Unknown tool: {name}")));
        }
        return Err(RpcError::unknown_tool(name));
    };
    let tool = snap.tool(doc);
    progressive::require_authorized(ctx, name)?;
    // What the tool needs from the client comes before its arguments: a
    // client that lacks it learns so whatever it passed.
    if let Some(answer) = super::client_input::gate(ctx, p, tool)? {
        return Ok(answer);
    }
    // The `category-bad-args-internal-error` fault: tool_search's argument
    // errors escape as protocol errors.
    let escapes = ctx.has(Fault::CategoryBadArgsInternalError) && name == "tool_search";
    if name == "tool_search" && ctx.has(Fault::CategoryCaseFolded) {
        category::fold_category(&snap, &mut arguments);
    }
    let schema = tool.input_schema();
    if let Err(why) = args::validate(&schema, &arguments) {
        if escapes {
            return Err(RpcError::internal(format!("Internal error: {why}")));
        }
        return Ok(error_result(&format!(
            "Invalid arguments for {name}: {why}"
        )));
    }
    let outcome = match category::run(ctx, tool, &arguments) {
        Some(outcome) => outcome,
        None => ctx.server.store().execute(tool, &arguments),
    };
    Ok(match outcome {
        Ok(value) => ok_result(value),
        Err(message) if escapes => {
            return Err(RpcError::internal(format!("Internal error: {message}")))
        }
        Err(message) => error_result(&message),
    })
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
