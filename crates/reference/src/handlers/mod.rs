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

use super::cursor::{self, CursorError, Position};
use super::error::RpcError;
use super::faults::{self, Fault, Faults};
use super::live::Snapshot;
use super::served_era::Era;
use super::server::Server;
use super::session::SessionState;
use serde_json::Value;
use std::sync::Arc;

/// Page size of every `*/list` method.
pub const LIST_PAGE: usize = 50;

/// What one request sees.
pub struct Ctx<'a> {
    pub server: &'a Server,
    pub snap: Arc<Snapshot>,
    pub session: &'a mut SessionState,
    pub era: Era,
    pub method: &'a str,
    /// Messages to send after the response (notifications).
    pub after: Vec<Value>,
}

impl Ctx<'_> {
    pub fn faults(&self) -> &Faults {
        self.server.faults()
    }

    pub fn has(&self, fault: Fault) -> bool {
        self.server.faults().has(fault)
    }

    /// The offset a cursor stands for, checked against this method, scope
    /// and catalog generation; 0 without a cursor.
    pub fn resume(&self, cursor: Option<&str>, scope: [u8; 8]) -> Result<usize, RpcError> {
        let Some(cursor) = cursor else {
            return Ok(0);
        };
        let cursor = faults::paging::rewrite_cursor(self, cursor);
        let resumed = self
            .server
            .cursors
            .resume(cursor, self.method, scope, self.snap.generation);
        faults::paging::rewrite_resume(self, resumed).map_err(cursor_error)
    }

    /// The cursor for the page after `[offset, offset + shown)`, if any.
    pub fn next_cursor(
        &self,
        scope: [u8; 8],
        offset: usize,
        shown: usize,
        total: usize,
    ) -> Option<String> {
        let end = offset + shown;
        if shown == 0 || end >= total {
            return None;
        }
        let next = faults::paging::rewrite_next_offset(self, offset, end);
        Some(self.server.cursors.encode(&Position {
            method: self.method.to_string(),
            scope,
            generation: self.snap.generation,
            offset: next,
        }))
    }
}

pub fn cursor_error(e: CursorError) -> RpcError {
    RpcError::invalid_params(e.to_string())
}

/// The scope of a list with no query or filter.
pub fn unscoped() -> [u8; 8] {
    cursor::scope(&[])
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
