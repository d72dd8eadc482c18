//! Faults of the search draft: `tools/search`, `prompts/search` and
//! `resources/search`.

use super::At;
use super::Fault;
use crate::filter::ToolFilter;
use crate::handlers::search::Feature;
use crate::handlers::tools;
use crate::index::SearchIndex;
use serde_json::Value;

declare! {
    SearchPageOverflow = "search-page-overflow"
        breaks ["SEARCH-RES-02"]:
        "*/search returns up to 25 items per page instead of 10";
    SearchUnranked = "search-unranked"
        breaks ["SEARCH-RES-03", "SEARCH-RANK"]:
        "*/search returns matches in catalog order (an exact name is not ranked first)";
    SearchMissingQueryOk = "search-missing-query-ok"
        breaks ["SEARCH-REQ-01"]:
        "*/search without `query` returns every item instead of -32602";
    SearchNotIdentical = "search-not-identical"
        breaks ["SEARCH-RES-04", "X-04"]:
        "tools/search items drop `groups`, so they differ from their tools/list entries";
    SessionVaryingResults = "session-varying-results"
        breaks ["X-06"]:
        "tools/search breaks score ties with a per-process random salt";
    SearchExposesHidden = "search-exposes-hidden"
        breaks ["SEARCH-SEC-01"]:
        "tools/search also matches tools hidden from the caller";
    SearchMixedFeatures = "search-mixed-features"
        breaks ["SEARCH-SEC-01", "SEARCH-RES-01"]:
        "prompts/search and resources/search fill their pages with matching tools from a shared index";
    SearchNonAsciiOffByOne = "search-non-ascii-off-by-one"
        breaks ["SEARCH-PAG-01"]:
        "*/search pages after the first of a query holding a non-ASCII character start one item early, repeating the previous page's last item";
    SearchCursorDropsQuery = "search-cursor-drops-query"
        breaks ["SEARCH-PAG-01"]:
        "*/search cursors are not bound to their query: later pages come from the whole unranked list";
    SearchCursorWithoutQueryOk = "search-cursor-without-query-ok"
        breaks ["SEARCH-REQ-01", "SEARCH-PAG-01"]:
        "*/search with a cursor but no query continues from the cursor instead of -32602";
}

/// What `search-page-overflow` returns instead of 10 items.
const OVERFLOW_PAGE: usize = 25;

/// Whether a cursor is not bound to its query: a page after the first comes
/// from the whole unranked list (`search-cursor-drops-query`), even when the
/// query is missing (`search-cursor-without-query-ok`).
pub fn unbound_cursor(ctx: &At<'_, '_>, has_cursor: bool, has_query: bool) -> bool {
    has_cursor
        && if has_query {
            ctx.has(Fault::SearchCursorDropsQuery)
        } else {
            ctx.has(Fault::SearchCursorWithoutQueryOk)
        }
}

/// `search-missing-query-ok`: a search without `query` lists every item.
pub fn missing_query_ok(ctx: &At<'_, '_>) -> bool {
    ctx.has(Fault::SearchMissingQueryOk)
}

/// `search-page-overflow`: pages hold more than the draft allows.
pub fn rewrite_page_size(ctx: &At<'_, '_>, page: usize) -> usize {
    if ctx.has(Fault::SearchPageOverflow) {
        return OVERFLOW_PAGE;
    }
    page
}

/// A page ranked otherwise: in catalog order (`search-unranked`), or with
/// ties broken by a per-process salt (`session-varying-results`).
pub fn rewrite_ranking(
    ctx: &At<'_, '_>,
    index: &SearchIndex,
    q: &str,
    exact: &[u32],
    offset: usize,
    page: usize,
) -> Option<(Vec<u32>, usize)> {
    if ctx.has(Fault::SearchUnranked) {
        let all = index.matches_in_order(q, None);
        let w = crate::handlers::window(offset, page, all.len());
        return Some((all[w.offset..w.end].to_vec(), all.len()));
    }
    if ctx.has(Fault::SessionVaryingResults) {
        static SALT: std::sync::OnceLock<std::collections::hash_map::RandomState> =
            std::sync::OnceLock::new();
        let salt = SALT.get_or_init(Default::default);
        let r = index.search_salted(q, exact, offset, page, salt);
        return Some((r.docs, r.total));
    }
    None
}

/// `search-non-ascii-off-by-one`: a later page of a non-ASCII query starts
/// one item early.
pub fn rewrite_start(ctx: &At<'_, '_>, q: &str, offset: usize) -> usize {
    if offset > 0 && !q.is_ascii() && ctx.has(Fault::SearchNonAsciiOffByOne) {
        return offset - 1;
    }
    offset
}

/// `search-not-identical`: tools/search items drop `groups`.
pub fn rewrite_tool_items(ctx: &At<'_, '_>, items: &mut [Value]) {
    if ctx.has(Fault::SearchNotIdentical) {
        for e in items {
            if let Value::Object(m) = e {
                m.remove("groups");
            }
        }
    }
}

/// Items that should not be there: hidden tools on the last page
/// (`search-exposes-hidden`), or tools filling a prompt or resource page
/// (`search-mixed-features`).
pub fn rewrite_items(
    ctx: &At<'_, '_>,
    feature: Feature,
    query: Option<&str>,
    last_page: bool,
    page: usize,
    items: &mut Vec<Value>,
) {
    match (feature, query) {
        (Feature::Tools, Some(q)) if last_page && ctx.has(Fault::SearchExposesHidden) => {
            items.extend(super::tools::hidden_entries(
                ctx,
                Some(q),
                &ToolFilter::default(),
            ));
        }
        (Feature::Prompts | Feature::Resources, Some(q))
            if items.len() < page && ctx.has(Fault::SearchMixedFeatures) =>
        {
            let snap = &ctx.snap;
            let r = snap
                .tool_index()
                .search(q, None, &[], 0, page - items.len());
            items.extend(r.docs.iter().map(|&d| tools::entry(ctx, snap.tool(d))));
        }
        _ => {}
    }
}
