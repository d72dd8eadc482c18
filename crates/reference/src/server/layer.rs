//! The places where a layer may bend what the server does, and what the
//! correct server does there: every method's default is the behaviour the
//! texts require, so [`Plain`] is the correct server.
//!
//! Dispatch runs a request's handler inside the envelope methods (ids,
//! errors, what goes before the answer) and hands the answer to
//! [`Layer::answer`]; handlers offer the rest where an answer is still
//! being built (an entry, a page, a cursor). The faults are one `Layer`
//! (`faults::FaultLayer`); nothing here knows which.

use super::{Ctx, Wire};
use crate::bitset::Bitset;
use crate::catalog_file::{Task, Tool};
use crate::cursor::CursorError;
use crate::error::RpcError;
use crate::filter::{self, ListRequest, ToolFilter};
use crate::index::{Feature, Scored, SearchIndex};
use crate::live::Snapshot;
use crate::served_era::Era;
use crate::session::SessionState;
use serde_json::{Map, Value};

/// The correct server: no method is bent.
#[derive(Debug, Clone, Copy, Default)]
pub struct Plain;

impl Layer for Plain {}

impl Wire for Plain {}

/// What a layer may rewrite. See the module comment.
#[allow(unused_variables)]
pub trait Layer: Wire + Send + Sync {
    // The JSON-RPC envelope (dispatch).

    /// The id a response carries; `None` drops the request unanswered.
    fn reply_id(&self, id: &Value) -> Option<Value> {
        Some(id.clone())
    }
    /// Whether an invalid message goes unanswered.
    fn drop_invalid_request(&self, value: &Value) -> bool {
        false
    }
    /// Whether a request with this id is taken for a notification.
    fn drop_id_zero(&self, id: &Value) -> bool {
        false
    }
    /// The error for a request over the rate limit.
    fn rate_limited(&self, e: RpcError) -> RpcError {
        e
    }
    /// Whether server/discover answers a version it does not speak.
    fn discover_serves_any_version(&self, params: Option<&Value>) -> bool {
        false
    }
    /// Whether an older revision's request is served as 2026-07-28.
    fn old_revision_served(&self, params: Option<&Value>) -> bool {
        false
    }
    /// A 2026-07-28 request on a connection: each stands alone.
    fn stateless_connection(
        &self,
        session: &mut SessionState,
        method: &str,
    ) -> Result<(), RpcError> {
        Ok(())
    }
    /// The error for a method the server does not know.
    fn unknown_method(&self, method: &str, e: RpcError) -> RpcError {
        e
    }
    /// A handler's error, before it becomes a response.
    fn error(&self, e: RpcError) -> RpcError {
        e
    }
    /// An error response as sent.
    fn error_response(&self, response: &mut Value) {}
    /// A 2026-07-28 result once the era's fields are on it.
    fn stateless_result(&self, method: &str, params: Option<&Value>, result: &mut Value) {}
    /// Messages sent before a request's answer.
    fn before_answer(
        &self,
        era: Era,
        method: &str,
        params: Option<&Value>,
        id: &Value,
    ) -> Vec<Value> {
        Vec::new()
    }
    /// The progress notifications of a request that asked for them.
    fn progress(&self, notes: &mut [Value]) {}
    /// Progress notifications of a request that did not ask for them.
    fn unrequested_progress(&self, method: &str, params: Option<&Value>) -> Vec<Value> {
        Vec::new()
    }
    /// The answer to a cancellation of a request never seen: none.
    fn unknown_cancel(&self, request_id: &Value) -> Vec<Value> {
        Vec::new()
    }
    /// The answer to a notification the server does not handle: none.
    fn unknown_notification(&self, method: &str) -> Vec<Value> {
        Vec::new()
    }

    // Around a handler (dispatch).

    /// A handler's answer (or error), right after it ran.
    fn answer(
        &self,
        ctx: &mut Ctx<'_>,
        params: Option<&Value>,
        answer: &mut Result<Value, RpcError>,
    ) {
    }
    /// A subscriptions/listen request once its stream is open.
    fn listen(&self, ctx: &mut Ctx<'_>) {}
    /// A ping before notifications/initialized: answered.
    fn early_ping(&self, ctx: &Ctx<'_>) -> Result<(), RpcError> {
        Ok(())
    }
    /// The capabilities a handshake declares.
    fn capabilities(&self, caps: &mut Value) {}

    // Paging (every list).

    /// A cursor as it is read.
    fn cursor<'c>(&self, ctx: &Ctx<'_>, cursor: &'c str) -> &'c str {
        cursor
    }
    /// Where a cursor resumes.
    fn resume(
        &self,
        ctx: &Ctx<'_>,
        resumed: Result<usize, CursorError>,
    ) -> Result<usize, CursorError> {
        resumed
    }
    /// Where the next page starts, after `[offset, end)`.
    fn next_offset(&self, ctx: &Ctx<'_>, offset: usize, end: usize) -> usize {
        end
    }

    // tools/list and tools/call.

    /// One tools/list entry as served.
    fn tool_entry(&self, ctx: &Ctx<'_>, tool: &Tool, e: &mut Value) {}
    /// A query the server refuses outright.
    fn refuse_query(&self, ctx: &Ctx<'_>, query: Option<&str>) -> Result<(), RpcError> {
        Ok(())
    }
    /// A tools/list request as the server reads it.
    fn list_request(&self, ctx: &Ctx<'_>, cursor: Option<&str>, req: &mut ListRequest<'_>) {}
    /// A page found another way than the ranked index (`None`: the index).
    fn regex_page(
        &self,
        ctx: &Ctx<'_>,
        query: Option<&str>,
        allowed: Option<&Bitset>,
        offset: usize,
    ) -> Option<Result<(Vec<u32>, usize), RpcError>> {
        None
    }
    /// A tools/list page before its cursor is cut.
    fn tools_page(&self, ctx: &Ctx<'_>, cursor: Option<&str>, tools: &mut Vec<Value>) {}
    /// A tools/list page once its cursor is cut.
    fn tools_listed(
        &self,
        ctx: &mut Ctx<'_>,
        query: Option<&str>,
        filter: &ToolFilter,
        cursor: Option<&str>,
        last_page: bool,
        tools: &mut Vec<Value>,
    ) {
    }
    /// How `filter` is read and matched.
    fn filter(&self) -> &dyn filter::Reading {
        &filter::Plain
    }
    /// A tools/call's arguments as the tool reads them.
    fn call_arguments(&self, ctx: &Ctx<'_>, tool: &str, args: &mut Map<String, Value>) {}
    /// An argument error of a tool call, before it becomes a result.
    fn call_escape(&self, ctx: &Ctx<'_>, tool: &str, cause: &str) -> Result<(), RpcError> {
        Ok(())
    }

    // SEP-1300 lists and the grouping extension.

    /// tags/list items.
    fn tags_list(&self, ctx: &Ctx<'_>, items: &mut Vec<Value>) {}
    /// groups/list's cursor as read.
    fn groups_cursor<'c>(&self, ctx: &Ctx<'_>, cursor: Option<&'c str>) -> Option<&'c str> {
        cursor
    }
    /// groups/list items.
    fn groups(&self, ctx: &Ctx<'_>, groups: &mut Vec<Value>) {}
    /// One prompts/list entry.
    fn prompt_entry(&self, ctx: &Ctx<'_>, e: &mut Value) {}
    /// One tasks/list entry.
    fn task_entry(&self, ctx: &Ctx<'_>, task: &Task, e: &mut Value) {}
    /// One resources/list or templates entry's membership.
    fn resource_entry(&self, ctx: &Ctx<'_>, e: &mut Value) {}

    // Utilities.

    /// How many completion values are shown of `max` allowed.
    fn completion_count(&self, ctx: &Ctx<'_>, shown: usize, max: usize) -> usize {
        shown
    }
    /// The error for a client capability the request did not declare.
    fn missing_capability(&self, ctx: &Ctx<'_>, error: &mut RpcError) {}

    // SEP-1882 progressive disclosure.

    /// The tool_descriptions resource or template entry.
    fn descriptions_entry(&self, ctx: &Ctx<'_>, entry: &mut Value) {}
    /// One full tool description.
    fn description(&self, ctx: &Ctx<'_>, description: &mut Value) {}
    /// The `?tools=` names as read.
    fn selection(&self, ctx: &Ctx<'_>, names: &mut Vec<String>) {}
    /// The names read without `?tools=` (`None`: refused).
    fn selection_when_missing(&self, ctx: &Ctx<'_>) -> Option<Vec<String>> {
        None
    }
    /// The tool a `?tools=` name finds (`found`: its exact match).
    fn lookup<'s>(
        &self,
        ctx: &Ctx<'_>,
        snap: &'s Snapshot,
        name: &str,
        found: Option<u32>,
    ) -> Option<&'s Tool> {
        found.map(|d| snap.tool(d))
    }
    /// The descriptions of one read.
    fn descriptions(
        &self,
        ctx: &Ctx<'_>,
        snap: &Snapshot,
        out: &mut Map<String, Value>,
        describe: &dyn Fn(&Tool) -> Value,
    ) {
    }
    /// The tools a read authorizes.
    fn authorization(&self, ctx: &mut Ctx<'_>, names: &mut Vec<String>) {}
    /// Whether `name` is authorized (`None`: as the session says).
    fn authorized(&self, ctx: &Ctx<'_>, name: &str) -> Option<bool> {
        None
    }
    /// The error for a call of a tool not yet described.
    fn auth_error(&self, ctx: &Ctx<'_>, e: &mut RpcError) {}

    // */search.

    /// Whether a cursor is read without its query.
    fn unbound_cursor(&self, ctx: &Ctx<'_>, has_cursor: bool, has_query: bool) -> bool {
        false
    }
    /// The page size of */search.
    fn search_page_size(&self, ctx: &Ctx<'_>, page: usize) -> usize {
        page
    }
    /// A page ranked another way (`None`: the index's ranking).
    fn ranking(
        &self,
        ctx: &Ctx<'_>,
        index: &SearchIndex,
        q: &str,
        exact: &[u32],
        offset: usize,
        page: usize,
    ) -> Option<(Vec<u32>, usize)> {
        None
    }
    /// Where a ranked page starts.
    fn search_start(&self, ctx: &Ctx<'_>, q: &str, offset: usize) -> usize {
        offset
    }
    /// tools/search items.
    fn search_tool_items(&self, ctx: &Ctx<'_>, items: &mut [Value]) {}
    /// One */search page.
    fn search_items(
        &self,
        ctx: &Ctx<'_>,
        feature: Feature,
        query: Option<&str>,
        last_page: bool,
        page: usize,
        items: &mut Vec<Value>,
    ) {
    }

    // The category tools (tool_search, list_categories).

    /// list_categories' answer.
    fn categories(&self, answer: &mut Value) {}
    /// tool_search's tags as read.
    fn category_tags(&self, args: &Map<String, Value>, tags: &mut Vec<String>) {}
    /// A limit used instead of the one asked for.
    fn ignored_limit(&self, args: &Map<String, Value>, category: Option<&str>) -> Option<usize> {
        None
    }
    /// The category as read beside `query`.
    fn category<'c>(&self, category: Option<&'c str>, query: Option<&str>) -> Option<&'c str> {
        category
    }
    /// Whether a tool outside `category` is admitted anyway.
    fn category_matches_tag(&self, tool: &Tool, category: &str) -> bool {
        false
    }
    /// Whether a tool passes the tags filter (`any`: it carries one).
    fn category_tags_match(&self, tool: &Tool, tags: &[String], any: bool) -> bool {
        any
    }
    /// Whether matches stay in catalog order.
    fn skips_ranking(&self, query: Option<&str>) -> bool {
        false
    }
    /// The matches of tool_search.
    fn category_matches<'t>(&self, matches: Vec<(&'t Tool, Scored)>) -> Vec<(&'t Tool, Scored)> {
        matches
    }
    /// tool_search's items.
    fn category_items(&self, items: &mut [Value]) {}
    /// tool_search's totalMatches.
    fn category_total(&self, total: usize, page: usize) -> usize {
        total
    }
    /// The tools list_categories counts.
    fn counted_tools<'t>(&self, snap: &'t Snapshot, visible: Vec<&'t Tool>) -> Vec<&'t Tool> {
        visible
    }
}
