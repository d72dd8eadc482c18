//! Faults of `tools/list` (the SEP-1821 query, the SEP-1300 filter, paging
//! and what each entry shows) and of `tools/call`.

use super::{grouping, Fault};
use super::{At, AtMut};
use crate::bitset::Bitset;
use crate::catalog_file::Tool;
use crate::cursor;
use crate::error::{Kind, RpcError};
use crate::filter::ToolFilter;
use crate::handlers::tools::{entry, error_result, scope_of, ListRequest};
use crate::handlers::{window, LIST_PAGE};
use crate::served_era::Era;
use crate::text;
use serde_json::{json, Value};

declare! {
    IgnoreQuery = "ignore-query"
        breaks ["SEP1821-", "X-01"]:
        "tools/list ignores `query` and returns every tool";
    QueryAsRegex = "query-as-regex"
        breaks ["SEP1821-Q-04"]:
        "tools/list compiles `query` as a regex over names and descriptions (`.*` returns everything; a bad regex gives -32603)";
    CursorDropsQuery = "cursor-drops-query"
        breaks ["SEP1821-PAG", "SEP1300-FLT-04", "SEARCH-PAG", "X-02", "X-03"]:
        "the next-page cursor forgets the query and filter: page 2+ come from the unfiltered list";
    PdFullSchemasInList = "pd-full-schemas-in-list"
        breaks ["PD-LIST-01", "X-04"]:
        "tools/list entries carry the full input schema and examples";
    ListNoInputSchema = "list-no-input-schema"
        breaks ["BASE-SCHEMA-01"]:
        "tools/list entries omit inputSchema (only tool_descriptions has it)";
    QueryAstralInternalError = "query-astral-internal-error"
        breaks ["SEP1821-Q-04"]:
        "a tools/list query holding a character beyond the Basic Multilingual Plane (an emoji, a rare ideograph) gets -32603";
    QueryDropsFilter = "query-drops-filter"
        breaks ["X-01"]:
        "tools/list ignores `filter` when a `query` is present";
    FilterRevealsHidden = "filter-reveals-hidden"
        breaks ["SEP1300-FLT-01", "SEP1300-FLT-02"]:
        "filter.groups / filter.tags also admit tools hidden from the caller";
    FilterEntriesStripped = "filter-entries-stripped"
        breaks ["SEP1300-FLT-05"]:
        "tools/list entries under a filter drop their annotations";
    QueryRevealsHidden = "query-reveals-hidden"
        breaks ["SEP1821-SEC-01", "SEP1821-Q-02"]:
        "a tools/list query also matches tools hidden from the caller";
    QueryNulInternalError = "query-nul-internal-error"
        breaks ["SEP1821-Q-04"]:
        "a query containing a NUL character (raw or %00) gets -32603";
    ToolsListOrderVaries = "tools-list-order-varies"
        breaks ["MCP26-ORDER-01"]:
        "every second tools/list walk serves its first page in reverse order";
    ToolsListPerConnection = "tools-list-per-connection"
        breaks ["MCP26-LIST-01", "X-06"]:
        "2026-07-28 tools/list leaves out the tools whose name hashes odd with a salt drawn per process (per connection on stdio)";
    ToolNameSpace = "tool-name-space"
        breaks ["CORE-TOOL-01"]:
        "tools/list shows the first tool's name with spaces instead of underscores";
    InputSchemaInvalid = "input-schema-invalid"
        breaks ["CORE-TOOL-02"]:
        "tools/list gives the first tool an inputSchema whose `type` is \"objekt\", which JSON Schema does not know";
    OutputSchemaUnmet = "output-schema-unmet"
        breaks ["CORE-TOOL-05"]:
        "tools/list declares for every read-only tool an outputSchema requiring a `summary` its structured results never carry";
    UnknownToolResult = "unknown-tool-result"
        breaks ["CORE-TOOL-06"]:
        "tools/call of an unknown tool answers a result with isError: true instead of a JSON-RPC error";
    // The reference's tools/list shows placeholder input schemas (its
    // progressive disclosure): with full ones, tools have required
    // arguments a call can leave out.
    ToolInvalidArgsOk = "tool-invalid-args-ok"
        breaks ["CORE-TOOL-07", "CORE-TOOL-09"]
        serve with ["--fault", "pd-full-schemas-in-list"]:
        "tools/call with arguments its inputSchema refuses (a required one missing) answers a success: the arguments are not validated";
    StructuredNoText = "structured-no-text"
        breaks ["CORE-TOOL-08"]:
        "tools/call results carry structuredContent, but their text content is a sentence instead of the serialized JSON";
    ReservedCodeUndefined = "reserved-code-undefined"
        breaks ["MCP26-ERR-01"]:
        "2026-07-28: tools/call of an unknown tool is refused with -32050, a code of the range the specification reserves that it does not define";
    HttpXMcpHeaderInvalid = "http-x-mcp-header-invalid"
        breaks ["HTTP-HDR-06"]:
        "2026-07-28: the first tool of tools/list marks a `number` parameter with x-mcp-header \"Bad Header\" (not a token, on a type the constraints forbid)";
}

/// `pd-full-schemas-in-list`: entries carry the full input schema and the
/// examples that only `tool_descriptions` should show.
pub fn full_schemas_in_list(ctx: &At<'_, '_>) -> bool {
    ctx.has(Fault::PdFullSchemasInList)
}

/// The faults on one entry as it is served: no `inputSchema`, a dangling
/// or string membership, and the core profile's broken first tool and
/// unmet output schemas.
pub fn rewrite_entry(ctx: &At<'_, '_>, tool: &Tool, e: &mut Value) {
    if ctx.has(Fault::ListNoInputSchema) {
        if let Value::Object(m) = e {
            m.remove("inputSchema");
        }
    }
    grouping::rewrite_tool_entry(ctx, &tool.name, e);
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

/// Queries a broken tokenizer refuses with -32603: one holding a NUL
/// (`query-nul-internal-error`) or a character beyond the Basic
/// Multilingual Plane (`query-astral-internal-error`).
pub fn refuse_query(ctx: &At<'_, '_>, query: Option<&str>) -> Result<(), RpcError> {
    if query.is_some_and(|q| q.contains('\0') || q.contains("%00"))
        && ctx.has(Fault::QueryNulInternalError)
    {
        return Err(RpcError::internal(
            "Internal error: nul byte found in provided data",
        ));
    }
    if query.is_some_and(|q| q.chars().any(|c| u32::from(c) > 0xFFFF))
        && ctx.has(Fault::QueryAstralInternalError)
    {
        // A UTF-16 tokenizer that does not pair surrogates.
        return Err(RpcError::internal(
            "Internal error: unpaired surrogate in query",
        ));
    }
    Ok(())
}

/// The request as a faulty server reads it: the query ignored
/// (`ignore-query`), the filter dropped beside a query
/// (`query-drops-filter`), or cursors issued without either, a later page
/// then coming from the unfiltered list (`cursor-drops-query`).
pub fn rewrite_request(ctx: &At<'_, '_>, cursor: Option<&str>, req: &mut ListRequest<'_>) {
    if req.query.is_some() && ctx.has(Fault::IgnoreQuery) {
        req.query = None;
    }
    if req.query.is_some() && ctx.has(Fault::QueryDropsFilter) {
        req.filter = ToolFilter::default();
    }
    req.scope = scope_of(req.query, &req.filter);
    req.next_scope = req.scope;
    // With neither query nor filter, both scopes are the dropped one.
    let narrowed = req.query.is_some() || !req.filter.is_empty();
    if narrowed && ctx.has(Fault::CursorDropsQuery) {
        let dropped = cursor::scope(&["", "", ""]);
        if cursor.is_some() {
            req.query = None;
            req.filter = ToolFilter::default();
            req.scope = dropped;
        }
        req.next_scope = dropped;
    }
}

/// `query-as-regex`: the page a server that hands the query to a regex
/// engine finds (`None` without the fault or a query).
pub fn regex_page(
    ctx: &At<'_, '_>,
    query: Option<&str>,
    allowed: Option<&Bitset>,
    offset: usize,
) -> Option<Result<(Vec<u32>, usize), RpcError>> {
    let q = query?;
    if !ctx.has(Fault::QueryAsRegex) {
        return None;
    }
    let re = match regex::RegexBuilder::new(q).size_limit(1 << 20).build() {
        Ok(re) => re,
        Err(e) => return Some(Err(RpcError::internal(format!("Internal error: {e}")))),
    };
    let all: Vec<u32> = ctx
        .snap
        .tools()
        .enumerate()
        .filter(|(d, _)| allowed.is_none_or(|a| a.contains(*d)))
        .filter(|(_, t)| re.is_match(&t.name) || re.is_match(&t.description))
        .map(|(d, _)| d as u32)
        .collect();
    let w = window(offset, LIST_PAGE, all.len());
    Some(Ok((all[w.offset..w.end].to_vec(), all.len())))
}

/// The faults on a page before its cursor is cut: a 2026-07-28 list that
/// depends on the connection or on the walk (a per-process salt leaves
/// some tools out, every second walk serves its first page reversed), and
/// membership that comes and goes.
pub fn rewrite_page(ctx: &At<'_, '_>, cursor: Option<&str>, tools: &mut Vec<Value>) {
    if ctx.era == Era::Stateless {
        if cursor.is_none() && ctx.has(Fault::ToolsListOrderVaries) {
            ctx.server.start_walk();
            if ctx.server.even_walk() {
                tools.reverse();
            }
        }
        if cursor.is_none() && ctx.has(Fault::HttpXMcpHeaderInvalid) {
            // tools/list shows placeholder schemas, which may have no
            // `properties` of their own.
            if let Some(Value::Object(schema)) =
                tools.first_mut().and_then(|t| t.get_mut("inputSchema"))
            {
                let props = schema.entry("properties").or_insert_with(|| json!({}));
                props["mcp_conform_bad"] = json!({"type": "number", "x-mcp-header": "Bad Header"});
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
    grouping::rewrite_tools_page(ctx, cursor, tools);
}

/// The faults on a page once its cursor is cut: annotations stripped under
/// a filter (`filter-entries-stripped`), hidden tools leaked on the last
/// page (`query-reveals-hidden`, `filter-reveals-hidden`), and the view
/// that `pd-auth-filter-scoped` keeps.
pub fn rewrite_listed(
    ctx: &mut AtMut<'_, '_>,
    query: Option<&str>,
    filter: &ToolFilter,
    cursor: Option<&str>,
    last_page: bool,
    tools: &mut Vec<Value>,
) {
    if !filter.is_empty() && ctx.has(Fault::FilterEntriesStripped) {
        for e in tools.iter_mut() {
            if let Value::Object(m) = e {
                m.remove("annotations");
            }
        }
    }
    if last_page
        && ((query.is_some() && ctx.has(Fault::QueryRevealsHidden))
            || (!filter.is_empty() && ctx.has(Fault::FilterRevealsHidden)))
    {
        tools.extend(hidden_entries(&ctx.at(), query, filter));
    }
    // An unfiltered list clears a view only this fault keeps.
    let view_changes = !filter.is_empty() || ctx.session.view.is_some();
    if view_changes && ctx.has(Fault::PdAuthFilterScoped) {
        if filter.is_empty() {
            ctx.session.view = None;
        } else {
            let names = tools.iter().filter_map(|t| t["name"].as_str());
            let names: std::collections::HashSet<String> = names.map(str::to_string).collect();
            match (&mut ctx.session.view, cursor) {
                (Some(view), Some(_)) => view.extend(names),
                (view, _) => *view = Some(names),
            }
        }
    }
}

/// The entries of hidden (audience-restricted) tools that match `query`
/// (any of its words in the name, description or tags) and `filter`: what
/// the `*-reveals-hidden` faults leak by checking the whole catalog.
pub fn hidden_entries(ctx: &At<'_, '_>, query: Option<&str>, filter: &ToolFilter) -> Vec<Value> {
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

/// `unknown-tool-result`: a call of an unknown tool is answered with a
/// result marked `isError` instead of a JSON-RPC error, or in 2026-07-28
/// with a reserved code nobody defined (`reserved-code-undefined`);
/// `structured-no-text` on a result.
pub fn rewrite_call(ctx: &At<'_, '_>, answer: &mut Result<Value, RpcError>) {
    let e = match answer {
        Ok(result) => return text_without_json(ctx, result),
        Err(e) => e,
    };
    if e.kind != Kind::UnknownTool {
        return;
    }
    if ctx.era == Era::Stateless && ctx.has(Fault::ReservedCodeUndefined) {
        e.code = -32050;
        return;
    }
    if !ctx.has(Fault::UnknownToolResult) {
        return;
    }
    let name = e.data_str("name");
    *answer = Ok(error_result(&format!("Unknown tool: {name}")));
}

/// `tool-invalid-args-ok`: arguments the tool's inputSchema refuses are
/// not validated, and the call succeeds.
pub fn accept_invalid_arguments(ctx: &At<'_, '_>) -> bool {
    ctx.has(Fault::ToolInvalidArgsOk)
}

/// `structured-no-text`: a result with structured content whose text is a
/// sentence instead of the serialized JSON.
fn text_without_json(ctx: &At<'_, '_>, result: &mut Value) {
    if result.get("structuredContent").is_none() || !ctx.has(Fault::StructuredNoText) {
        return;
    }
    result["content"] = json!([{"type": "text", "text": "Done: see the structured content."}]);
}
