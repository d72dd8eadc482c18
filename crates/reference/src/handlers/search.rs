//! The search draft (seed 002): `tools/search`, `prompts/search` and
//! `resources/search`. `query` is required; results are ranked by the same
//! index as `tools/list?query`, at most 10 a page, and every item is
//! identical to its `*/list` entry. A cursor is bound to its query.

use super::{progressive, prompts, tools, window, with_next, Ctx};
use crate::cursor;
use crate::error::RpcError;
use crate::index::SearchIndex;
use crate::live::Snapshot;
use crate::params::{check_query_len, Params};
use crate::text;
use serde_json::{Map, Value};

/// Most items in one search response (the draft's limit).
pub const SEARCH_PAGE: usize = 10;
pub use crate::index::Feature;

pub fn tools(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    search(ctx, p, Feature::Tools)
}

pub fn prompts(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    search(ctx, p, Feature::Prompts)
}

pub fn resources(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    search(ctx, p, Feature::Resources)
}

fn search(ctx: &mut Ctx<'_>, p: &Params<'_>, feature: Feature) -> Result<Value, RpcError> {
    // Only a fault unbinds a cursor from its query (the page then comes
    // from the whole unranked list).
    let unbound =
        ctx.layer()
            .unbound_cursor(ctx, p.cursor()?.is_some(), p.opt_str("query")?.is_some());
    let query = match p.opt_str("query")? {
        Some(q) => {
            check_query_len(q)?;
            Some(q)
        }
        None if ctx.policy().requests.missing_query_ok.on() || unbound => None,
        None => {
            return Err(RpcError::missing(
                "query",
                "a string; a cursor must be sent with its original query",
            ))
        }
    };
    let cursor_arg = p.cursor()?;
    let page = ctx.layer().search_page_size(ctx, SEARCH_PAGE);
    // A missing query (fault only) gets its own scope, distinct from "".
    let scope = match query {
        Some(q) => cursor::scope(&["q", q]),
        None => cursor::scope(&["all"]),
    };
    let offset = match cursor_arg {
        Some(c) if unbound => {
            ctx.server
                .cursors
                .decode(c)
                .map_err(super::cursor_error)?
                .offset
        }
        _ => ctx.resume(cursor_arg, scope)?,
    };
    let snap = std::sync::Arc::clone(&ctx.snap);
    let (index, exact, total_docs) = index_of(ctx, &snap, feature, query);
    let (docs, total) = match query.filter(|_| !unbound) {
        None => {
            let w = window(offset, page, total_docs);
            ((w.offset as u32..w.end as u32).collect(), total_docs)
        }
        Some(q) => match ctx.layer().ranking(ctx, index, q, &exact, offset, page) {
            Some(found) => found,
            None => {
                let start = ctx.layer().search_start(ctx, q, offset);
                let r = index.search(q, None, &exact, start, page);
                (r.docs, r.total)
            }
        },
    };
    let (key, mut items) = items(ctx, feature, &docs);
    let next = ctx.next_cursor(scope, offset, items.len(), total);
    ctx.layer()
        .search_items(ctx, feature, query, next.is_none(), page, &mut items);
    let mut result = Map::new();
    result.insert(key.into(), Value::Array(items));
    Ok(with_next(Value::Object(result), next))
}

/// The index a search of `feature` ranks with, the documents whose name is
/// exactly the query, and how many documents there are.
fn index_of<'s>(
    ctx: &Ctx<'_>,
    snap: &'s Snapshot,
    feature: Feature,
    query: Option<&str>,
) -> (&'s SearchIndex, Vec<u32>, usize) {
    match feature {
        Feature::Tools => (
            snap.tool_index(),
            query.map(|q| snap.exact_tools(q)).unwrap_or_default(),
            snap.len(),
        ),
        Feature::Prompts => {
            let names = snap.catalog.prompts.iter().map(|x| x.name.as_str());
            (
                snap.prompt_index(),
                exact_by_name(names, query),
                snap.catalog.prompts.len(),
            )
        }
        Feature::Resources => {
            let entries = progressive::resource_entries(ctx);
            let names: Vec<String> = entries
                .iter()
                .map(|e| e["name"].as_str().unwrap_or("").to_string())
                .collect();
            let exact = exact_by_name(names.iter().map(String::as_str), query);
            (snap.resource_index(), exact, entries.len())
        }
    }
}

fn items(ctx: &Ctx<'_>, feature: Feature, docs: &[u32]) -> (&'static str, Vec<Value>) {
    match feature {
        Feature::Tools => {
            let mut items: Vec<Value> = docs
                .iter()
                .map(|&d| tools::entry(ctx, ctx.snap.tool(d)))
                .collect();
            ctx.layer().search_tool_items(ctx, &mut items);
            ("tools", items)
        }
        Feature::Prompts => {
            let all = &ctx.snap.catalog.prompts;
            (
                "prompts",
                docs.iter()
                    .filter_map(|&d| all.get(d as usize))
                    .map(|x| prompts::entry(ctx, x))
                    .collect(),
            )
        }
        Feature::Resources => {
            let all = progressive::resource_entries(ctx);
            (
                "resources",
                docs.iter()
                    .filter_map(|&d| all.get(d as usize).cloned())
                    .collect(),
            )
        }
    }
}

/// Documents whose name equals the query, ignoring case, or equals its
/// words joined by `_`.
fn exact_by_name<'a>(names: impl Iterator<Item = &'a str>, query: Option<&str>) -> Vec<u32> {
    let Some(q) = query else {
        return Vec::new();
    };
    let q = q.trim().to_lowercase();
    let joined = text::words(&q).collect::<Vec<_>>().join("_");
    names
        .enumerate()
        .filter(|(_, n)| {
            let n = n.to_lowercase();
            n == q || n == joined
        })
        .map(|(i, _)| i as u32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_names_ignore_case_and_separators() {
        let names = ["plan_sprint", "summarize_page"];
        assert_eq!(exact_by_name(names.into_iter(), Some("Plan Sprint")), [0]);
        assert!(exact_by_name(names.into_iter(), Some("plan")).is_empty());
        assert!(exact_by_name(names.into_iter(), None).is_empty());
    }
}
