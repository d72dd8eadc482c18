//! Faults of category search: the `tool_search`, `list_categories` and
//! `get_tools_by_category` tools (and their REST endpoints).

use super::At;
use super::{Fault, Faults};
use crate::catalog_file::Tool;
use crate::error::RpcError;
use crate::handlers::category::Scored;
use crate::live::Snapshot;
use serde_json::{json, Map, Value};

declare! {
    CategoryUnsorted = "category-unsorted"
        breaks ["CAT-02"]:
        "tool_search results come in catalog order, not by score";
    CategoryNonAsciiUnsorted = "category-non-ascii-unsorted"
        breaks ["CAT-02"]:
        "tool_search results for a query holding a non-ASCII character come in catalog order, not by score";
    CategoryLimitIgnored = "category-limit-ignored"
        breaks ["CAT-03"]:
        "tool_search ignores `limit` and returns up to 50 results";
    CategoryCountsHidden = "category-counts-hidden"
        breaks ["CAT-06"]:
        "list_categories counts tools hidden from the caller";
    CategoryBadArgsInternalError = "category-bad-args-internal-error"
        breaks ["CAT-NEG-01"]:
        "tool_search argument errors (bad limit, query, tags, unknown category) escape as -32603";
    CategoryMatchesTags = "category-matches-tags"
        breaks ["CAT-04"]:
        "tool_search's category filter also admits tools carrying a tag of that name";
    CategoryFilterIgnoredWithQuery = "category-filter-ignored-with-query"
        breaks ["CAT-04"]:
        "tool_search ignores `category` when a `query` is present";
    CategoryTagsAll = "category-tags-all"
        breaks ["CAT-05"]:
        "tool_search's tags filter requires ALL named tags instead of ANY";
    CategoryTotalIsPage = "category-total-is-page"
        breaks ["CAT-01"]:
        "tool_search's totalMatches counts the returned page, not every match";
    CategoryShape = "category-shape"
        breaks ["CAT-01", "CAT-06"]:
        "tool_search items lack matchedOn and list_categories gives toolCount as a string";
    CategoryDuplicateMatches = "category-duplicate-matches"
        breaks ["CAT-01"]:
        "tool_search lists a tool once per field it matched on";
    CategoryCaseFolded = "category-case-folded"
        breaks ["CAT-NEG-01", "CAT-04"]:
        "tool_search compares `category` case-insensitively (`PAGES` selects the category `pages` instead of being unknown)";
    CategoryLimitIgnoredWithCategory = "category-limit-ignored-with-category"
        breaks ["CAT-03"]:
        "tool_search ignores `limit` when `category` is given without `query` (the category listing path skips the cut)";
    CategoryTagsIgnoredWithoutLimit = "category-tags-ignored-without-limit"
        breaks ["CAT-05"]:
        "tool_search ignores `tags` when no `limit` is given";
}

/// What `category-limit-ignored` returns instead of honouring `limit`.
const FAULTY_LIMIT: usize = 50;

/// `category-case-folded`: `category` is replaced by the id it names when
/// case is ignored, before the arguments are checked (an input lower-cased
/// on the way in).
pub fn rewrite_arguments(ctx: &At<'_, '_>, tool: &str, args: &mut Map<String, Value>) {
    if tool != "tool_search" || !ctx.has(Fault::CategoryCaseFolded) {
        return;
    }
    let Some(Value::String(c)) = args.get("category") else {
        return;
    };
    if let Some(k) = ctx
        .snap
        .catalog
        .categories
        .iter()
        .find(|k| k.id.eq_ignore_ascii_case(c))
    {
        args.insert("category".into(), Value::String(k.id.to_string()));
    }
}

/// `category-bad-args-internal-error`: tool_search's failures escape as
/// protocol errors instead of results marked `isError`.
pub fn escape(ctx: &At<'_, '_>, tool: &str, cause: &str) -> Result<(), RpcError> {
    if tool == "tool_search" && ctx.has(Fault::CategoryBadArgsInternalError) {
        return Err(RpcError::internal(format!("Internal error: {cause}")));
    }
    Ok(())
}

/// `category-tags-ignored-without-limit`: `tags` count only beside a
/// `limit`.
pub fn rewrite_tags(faults: &Faults, args: &Map<String, Value>, tags: &mut Vec<String>) {
    if faults.has(Fault::CategoryTagsIgnoredWithoutLimit) && !args.contains_key("limit") {
        tags.clear();
    }
}

/// The limit of a server that ignores `limit` (`category-limit-ignored`),
/// or does so when `category` comes without `query`
/// (`category-limit-ignored-with-category`); `None`: the one asked for.
pub fn ignored_limit(
    faults: &Faults,
    args: &Map<String, Value>,
    category: Option<&str>,
) -> Option<usize> {
    let no_query = !args.contains_key("query");
    (faults.has(Fault::CategoryLimitIgnored)
        || (faults.has(Fault::CategoryLimitIgnoredWithCategory) && no_query && category.is_some()))
    .then_some(FAULTY_LIMIT)
}

/// `category-filter-ignored-with-query`: `category` is dropped beside a
/// query.
pub fn rewrite_category<'a>(
    faults: &Faults,
    category: Option<&'a str>,
    query: Option<&str>,
) -> Option<&'a str> {
    category.filter(|_| query.is_none() || !faults.has(Fault::CategoryFilterIgnoredWithQuery))
}

/// `category-matches-tags`: a tool carrying a tag named like the category
/// is taken to be in it.
pub fn category_matches_tag(faults: &Faults, tool: &Tool, category: &str) -> bool {
    faults.has(Fault::CategoryMatchesTags) && tool.has_tag(category)
}

/// `category-tags-all`: the tags filter requires every named tag.
pub fn rewrite_tags_match(faults: &Faults, tool: &Tool, tags: &[String], any: bool) -> bool {
    if faults.has(Fault::CategoryTagsAll) {
        return tags.iter().all(|t| tool.has_tag(t));
    }
    any
}

/// Results left in catalog order: always (`category-unsorted`) or for a
/// query holding a non-ASCII character (`category-non-ascii-unsorted`, a
/// fallback path that skips the ranking).
pub fn skips_ranking(faults: &Faults, query: Option<&str>) -> bool {
    faults.has(Fault::CategoryUnsorted)
        || (faults.has(Fault::CategoryNonAsciiUnsorted) && query.is_some_and(|q| !q.is_ascii()))
}

/// `category-duplicate-matches`: a tool is listed once per field it
/// matched on.
pub fn rewrite_matches<'a>(
    faults: &Faults,
    matches: Vec<(&'a Tool, Scored)>,
) -> Vec<(&'a Tool, Scored)> {
    let repeat = |s: &Scored| {
        if faults.has(Fault::CategoryDuplicateMatches) {
            s.matched_on.len().max(1)
        } else {
            1
        }
    };
    matches
        .into_iter()
        .flat_map(|(t, s)| std::iter::repeat_n((t, s.clone()), repeat(&s)))
        .collect()
}

/// `category-shape`: tool_search items lack `matchedOn`.
pub fn rewrite_items(faults: &Faults, items: &mut [Value]) {
    for item in items {
        if faults.has(Fault::CategoryShape) {
            if let Value::Object(m) = item {
                m.remove("matchedOn");
            }
        }
    }
}

/// `category-total-is-page`: `totalMatches` counts the returned page.
pub fn rewrite_total(faults: &Faults, total: usize, page: usize) -> usize {
    if faults.has(Fault::CategoryTotalIsPage) {
        return page;
    }
    total
}

/// `category-counts-hidden`: list_categories counts the tools hidden from
/// the caller too.
pub fn counted_tools<'a>(
    faults: &Faults,
    snap: &'a Snapshot,
    visible: Vec<&'a Tool>,
) -> Vec<&'a Tool> {
    if faults.has(Fault::CategoryCountsHidden) {
        return snap.catalog.tools.iter().collect();
    }
    visible
}

/// `category-shape`: list_categories gives `toolCount` as a string.
pub fn rewrite_categories(faults: &Faults, answer: &mut Value) {
    if !faults.has(Fault::CategoryShape) {
        return;
    }
    let Some(Value::Array(categories)) = answer.get_mut("categories") else {
        return;
    };
    for c in categories {
        if let Some(n) = c.get_mut("toolCount") {
            *n = json!(n.to_string());
        }
    }
}
