//! Request handlers, one module per profile, and what they share: the
//! request context and cursor-based paging.

pub mod base;
pub mod category;
pub mod client_input;
pub mod control;
pub mod grouping;
pub mod groups;
pub mod progressive;
pub mod prompts;
pub mod search;
pub mod tasks;
pub mod tools;
pub mod utility;

pub use crate::server::{cursor_error, unscoped, Ctx};

use crate::error::RpcError;
use serde_json::{json, Value};

/// Page size of every `*/list` method.
pub const LIST_PAGE: usize = 50;

/// The input schema every `tools/list` entry shows: progressive disclosure
/// keeps the real one for `tool_descriptions`.
pub fn minimal_schema() -> Value {
    // Cloned from one instance: building it hashes both keys for every entry
    // of every list page.
    static MINIMAL: std::sync::LazyLock<Value> =
        std::sync::LazyLock::new(|| json!({"type": "object", "additionalProperties": true}));
    MINIMAL.clone()
}

/// One page of a plain (unranked) list of `total` items.
pub struct Window {
    pub offset: usize,
    pub end: usize,
}

pub fn window(offset: usize, page: usize, total: usize) -> Window {
    let offset = offset.min(total);
    Window {
        offset,
        end: offset.saturating_add(page).min(total),
    }
}

/// Sets `nextCursor` on a result when there is a next page.
pub fn with_next(mut result: Value, next: Option<String>) -> Value {
    if let (Some(next), Value::Object(map)) = (next, &mut result) {
        map.insert("nextCursor".into(), Value::String(next));
    }
    result
}

/// A paginated list of pre-built items, [`LIST_PAGE`] a page.
pub fn paged_list(
    ctx: &Ctx<'_>,
    key: &str,
    items: Vec<Value>,
    cursor: Option<&str>,
) -> Result<Value, RpcError> {
    paged_list_of(ctx, key, items, cursor, LIST_PAGE)
}

/// A paginated list of pre-built items, `page` a page.
pub fn paged_list_of(
    ctx: &Ctx<'_>,
    key: &str,
    items: Vec<Value>,
    cursor: Option<&str>,
    page: usize,
) -> Result<Value, RpcError> {
    let scope = unscoped();
    let offset = ctx.resume(cursor, scope)?;
    let w = window(offset, page, items.len());
    let total = items.len();
    let page: Vec<Value> = items
        .into_iter()
        .skip(w.offset)
        .take(w.end - w.offset)
        .collect();
    let next = ctx.next_cursor(scope, w.offset, page.len(), total);
    let mut result = serde_json::Map::new();
    result.insert(key.into(), Value::Array(page));
    Ok(with_next(Value::Object(result), next))
}
