//! The faults as one [`Layer`] around the correct server: each method hands
//! its work to the module of the faults that act there, which asks
//! [`Faults::has`] only where a fault can act.

use super::{base, category, client_input, envelope, filter, grouping, paging, primitives};
use super::{http, progressive, search, stdio, tools, Fault, Faults};
use crate::bitset::Bitset;
use crate::catalog_file::{Task, Tool};
use crate::cursor::CursorError;
use crate::error::RpcError;
use crate::filter::{ListRequest, Reading, ToolFilter};
use crate::index::{Feature, Scored, SearchIndex};
use crate::live::Snapshot;
use crate::served_era::Era;
use crate::server::{Ctx, Layer, Wire};
use crate::session::SessionState;
use axum::response::Response;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::ops::{Deref, DerefMut};

/// The faults of one server, as a layer.
#[derive(Debug, Clone)]
pub struct FaultLayer {
    faults: Faults,
}

impl FaultLayer {
    pub fn new(faults: Faults) -> Self {
        FaultLayer { faults }
    }

    fn at<'c, 'a>(&'c self, ctx: &'c Ctx<'a>) -> At<'c, 'a> {
        At {
            ctx,
            faults: &self.faults,
        }
    }

    fn at_mut<'c, 'a>(&'c self, ctx: &'c mut Ctx<'a>) -> AtMut<'c, 'a> {
        AtMut {
            ctx,
            faults: &self.faults,
        }
    }
}

/// A request as the fault code sees it: the request, and the faults.
pub struct At<'c, 'a> {
    ctx: &'c Ctx<'a>,
    faults: &'c Faults,
}

impl At<'_, '_> {
    pub fn has(&self, fault: Fault) -> bool {
        self.faults.has(fault)
    }

    pub fn faults(&self) -> &Faults {
        self.faults
    }
}

impl<'a> Deref for At<'_, 'a> {
    type Target = Ctx<'a>;

    fn deref(&self) -> &Ctx<'a> {
        self.ctx
    }
}

/// [`At`] for the faults that change the request's state.
pub struct AtMut<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    faults: &'c Faults,
}

impl<'a> AtMut<'_, 'a> {
    pub fn has(&self, fault: Fault) -> bool {
        self.faults.has(fault)
    }

    pub fn faults(&self) -> &Faults {
        self.faults
    }

    /// The same request, read only.
    pub fn at(&self) -> At<'_, 'a> {
        At {
            ctx: self.ctx,
            faults: self.faults,
        }
    }
}

impl<'a> Deref for AtMut<'_, 'a> {
    type Target = Ctx<'a>;

    fn deref(&self) -> &Ctx<'a> {
        self.ctx
    }
}

impl DerefMut for AtMut<'_, '_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.ctx
    }
}

impl Reading for FaultLayer {
    fn read<'f>(&self, filter: &'f ToolFilter) -> Cow<'f, ToolFilter> {
        filter::rewrite_filter(&self.faults, filter)
    }

    fn groups_match(
        &self,
        docs: usize,
        groups: &[String],
        bits: &dyn Fn(&String) -> Bitset,
        any: Bitset,
    ) -> Bitset {
        filter::rewrite_groups_match(&self.faults, docs, groups, bits, any)
    }

    fn tags_match(
        &self,
        docs: usize,
        tags: &[String],
        bits: &dyn Fn(&String) -> Bitset,
        all: Bitset,
    ) -> Bitset {
        filter::rewrite_tags_match(&self.faults, docs, tags, bits, all)
    }

    fn empty_list_matches_none(&self, filter: &ToolFilter) -> bool {
        filter::empty_list_matches_none(&self.faults, filter)
    }
}

impl Wire for FaultLayer {
    fn stdout_before(&self, messages: &[Value]) -> Option<&'static [u8]> {
        stdio::stdout_before(&self.faults, messages)
    }

    fn post_response(&self, response: Response) -> Response {
        http::post_response(&self.faults, response)
    }

    fn session_id_out(&self, key: &str) -> String {
        http::session_id_out(&self.faults, key)
    }

    fn session_id_in<'k>(&self, header: &'k str) -> Cow<'k, str> {
        http::session_id_in(&self.faults, header)
    }
}

impl Layer for FaultLayer {
    fn reply_id(&self, id: &Value) -> Option<Value> {
        envelope::reply_id(&self.faults, id)
    }
    fn drop_invalid_request(&self, value: &Value) -> bool {
        envelope::drop_invalid_request(&self.faults, value)
    }
    fn drop_id_zero(&self, id: &Value) -> bool {
        envelope::drop_id_zero(&self.faults, id)
    }
    fn rate_limited(&self, e: RpcError) -> RpcError {
        envelope::rewrite_rate_limited(&self.faults, e)
    }
    fn discover_serves_any_version(&self, params: Option<&Value>) -> bool {
        envelope::discover_serves_any_version(&self.faults, params)
    }
    fn old_revision_served(&self, params: Option<&Value>) -> bool {
        envelope::old_revision_served(&self.faults, params)
    }
    fn stateless_connection(
        &self,
        session: &mut SessionState,
        method: &str,
    ) -> Result<(), RpcError> {
        envelope::stateless_connection(&self.faults, session, method)
    }
    fn unknown_method(&self, method: &str, e: RpcError) -> RpcError {
        envelope::rewrite_unknown_method(&self.faults, method, e)
    }
    fn error(&self, e: RpcError) -> RpcError {
        envelope::rewrite_error(&self.faults, e)
    }
    fn error_response(&self, response: &mut Value) {
        envelope::rewrite_error_response(&self.faults, response)
    }
    fn stateless_result(&self, method: &str, params: Option<&Value>, result: &mut Value) {
        envelope::rewrite_stateless_result(&self.faults, method, params, result)
    }
    fn before_answer(
        &self,
        era: Era,
        method: &str,
        params: Option<&Value>,
        id: &Value,
    ) -> Vec<Value> {
        envelope::before_answer(&self.faults, era, method, params, id)
    }
    fn progress(&self, notes: &mut [Value]) {
        envelope::rewrite_progress(&self.faults, notes)
    }
    fn unrequested_progress(&self, method: &str, params: Option<&Value>) -> Vec<Value> {
        envelope::unrequested_progress(&self.faults, method, params)
    }
    fn unknown_cancel(&self, request_id: &Value) -> Vec<Value> {
        envelope::answer_unknown_cancel(&self.faults, request_id)
    }
    fn unknown_notification(&self, method: &str) -> Vec<Value> {
        envelope::answer_unknown_notification(&self.faults, method)
    }

    fn answer(
        &self,
        ctx: &mut Ctx<'_>,
        params: Option<&Value>,
        answer: &mut Result<Value, RpcError>,
    ) {
        super::rewrite_answer(&mut self.at_mut(ctx), params, answer)
    }
    fn listen(&self, ctx: &mut Ctx<'_>) {
        base::rewrite_listen(&mut self.at_mut(ctx))
    }
    fn early_ping(&self, ctx: &Ctx<'_>) -> Result<(), RpcError> {
        base::refuse_early_ping(&self.at(ctx))
    }
    fn capabilities(&self, caps: &mut Value) {
        base::rewrite_capabilities(&self.faults, caps)
    }

    fn cursor<'c>(&self, ctx: &Ctx<'_>, cursor: &'c str) -> &'c str {
        paging::rewrite_cursor(&self.at(ctx), cursor)
    }
    fn resume(
        &self,
        ctx: &Ctx<'_>,
        resumed: Result<usize, CursorError>,
    ) -> Result<usize, CursorError> {
        paging::rewrite_resume(&self.at(ctx), resumed)
    }
    fn next_offset(&self, ctx: &Ctx<'_>, offset: usize, end: usize) -> usize {
        paging::rewrite_next_offset(&self.at(ctx), offset, end)
    }

    fn tool_entry(&self, ctx: &Ctx<'_>, tool: &Tool, e: &mut Value) {
        tools::rewrite_entry(&self.at(ctx), tool, e)
    }
    fn refuse_query(&self, ctx: &Ctx<'_>, query: Option<&str>) -> Result<(), RpcError> {
        tools::refuse_query(&self.at(ctx), query)
    }
    fn list_request(&self, ctx: &Ctx<'_>, cursor: Option<&str>, req: &mut ListRequest<'_>) {
        tools::rewrite_request(&self.at(ctx), cursor, req)
    }
    fn regex_page(
        &self,
        ctx: &Ctx<'_>,
        query: Option<&str>,
        allowed: Option<&Bitset>,
        offset: usize,
    ) -> Option<Result<(Vec<u32>, usize), RpcError>> {
        tools::regex_page(&self.at(ctx), query, allowed, offset)
    }
    fn tools_page(&self, ctx: &Ctx<'_>, cursor: Option<&str>, items: &mut Vec<Value>) {
        tools::rewrite_page(&self.at(ctx), cursor, items)
    }
    fn tools_listed(
        &self,
        ctx: &mut Ctx<'_>,
        query: Option<&str>,
        filter: &ToolFilter,
        cursor: Option<&str>,
        last_page: bool,
        items: &mut Vec<Value>,
    ) {
        let mut at = self.at_mut(ctx);
        tools::rewrite_listed(&mut at, query, filter, cursor, last_page, items)
    }
    fn filter(&self) -> &dyn Reading {
        self
    }
    fn call_arguments(&self, ctx: &Ctx<'_>, tool: &str, args: &mut Map<String, Value>) {
        category::rewrite_arguments(&self.at(ctx), tool, args)
    }
    fn call_escape(&self, ctx: &Ctx<'_>, tool: &str, cause: &str) -> Result<(), RpcError> {
        category::escape(&self.at(ctx), tool, cause)
    }

    fn tags_list(&self, ctx: &Ctx<'_>, items: &mut Vec<Value>) {
        filter::rewrite_tags(&self.at(ctx), items)
    }
    fn groups_cursor<'c>(&self, ctx: &Ctx<'_>, cursor: Option<&'c str>) -> Option<&'c str> {
        grouping::rewrite_groups_cursor(&self.at(ctx), cursor)
    }
    fn groups(&self, ctx: &Ctx<'_>, groups: &mut Vec<Value>) {
        grouping::rewrite_groups(&self.at(ctx), groups)
    }
    fn prompt_entry(&self, ctx: &Ctx<'_>, e: &mut Value) {
        grouping::rewrite_prompt_entry(&self.at(ctx), e)
    }
    fn task_entry(&self, ctx: &Ctx<'_>, task: &Task, e: &mut Value) {
        grouping::rewrite_task_entry(&self.at(ctx), task, e)
    }
    fn resource_entry(&self, ctx: &Ctx<'_>, e: &mut Value) {
        grouping::serve(&self.at(ctx), e)
    }

    fn completion_count(&self, ctx: &Ctx<'_>, shown: usize, max: usize) -> usize {
        primitives::rewrite_completion_count(&self.at(ctx), shown, max)
    }
    fn missing_capability(&self, ctx: &Ctx<'_>, error: &mut RpcError) {
        client_input::rewrite_missing_capability(&self.at(ctx), error)
    }

    fn descriptions_entry(&self, ctx: &Ctx<'_>, entry: &mut Value) {
        progressive::rewrite_descriptions_entry(&self.at(ctx), entry)
    }
    fn description(&self, ctx: &Ctx<'_>, description: &mut Value) {
        progressive::rewrite_description(&self.at(ctx), description)
    }
    fn selection(&self, ctx: &Ctx<'_>, names: &mut Vec<String>) {
        progressive::rewrite_selection(&self.at(ctx), names)
    }
    fn selection_when_missing(&self, ctx: &Ctx<'_>) -> Option<Vec<String>> {
        progressive::selection_when_missing(&self.at(ctx))
    }
    fn lookup<'s>(
        &self,
        ctx: &Ctx<'_>,
        snap: &'s Snapshot,
        name: &str,
        found: Option<u32>,
    ) -> Option<&'s Tool> {
        progressive::rewrite_lookup(&self.at(ctx), snap, name, found)
    }
    fn descriptions(
        &self,
        ctx: &Ctx<'_>,
        snap: &Snapshot,
        out: &mut Map<String, Value>,
        describe: &dyn Fn(&Tool) -> Value,
    ) {
        progressive::rewrite_descriptions(&self.at(ctx), snap, out, describe)
    }
    fn authorization(&self, ctx: &mut Ctx<'_>, names: &mut Vec<String>) {
        progressive::rewrite_authorization(&mut self.at_mut(ctx), names)
    }
    fn authorized(&self, ctx: &Ctx<'_>, name: &str) -> Option<bool> {
        progressive::authorized(&self.at(ctx), name)
    }
    fn auth_error(&self, ctx: &Ctx<'_>, e: &mut RpcError) {
        progressive::rewrite_auth_error(&self.at(ctx), e)
    }

    fn unbound_cursor(&self, ctx: &Ctx<'_>, has_cursor: bool, has_query: bool) -> bool {
        search::unbound_cursor(&self.at(ctx), has_cursor, has_query)
    }
    fn search_page_size(&self, ctx: &Ctx<'_>, page: usize) -> usize {
        search::rewrite_page_size(&self.at(ctx), page)
    }
    fn ranking(
        &self,
        ctx: &Ctx<'_>,
        index: &SearchIndex,
        q: &str,
        exact: &[u32],
        offset: usize,
        page: usize,
    ) -> Option<(Vec<u32>, usize)> {
        search::rewrite_ranking(&self.at(ctx), index, q, exact, offset, page)
    }
    fn search_start(&self, ctx: &Ctx<'_>, q: &str, offset: usize) -> usize {
        search::rewrite_start(&self.at(ctx), q, offset)
    }
    fn search_tool_items(&self, ctx: &Ctx<'_>, items: &mut [Value]) {
        search::rewrite_tool_items(&self.at(ctx), items)
    }
    fn search_items(
        &self,
        ctx: &Ctx<'_>,
        feature: Feature,
        query: Option<&str>,
        last_page: bool,
        page: usize,
        items: &mut Vec<Value>,
    ) {
        search::rewrite_items(&self.at(ctx), feature, query, last_page, page, items)
    }

    fn categories(&self, answer: &mut Value) {
        category::rewrite_categories(&self.faults, answer)
    }
    fn category_tags(&self, args: &Map<String, Value>, tags: &mut Vec<String>) {
        category::rewrite_tags(&self.faults, args, tags)
    }
    fn ignored_limit(&self, args: &Map<String, Value>, category: Option<&str>) -> Option<usize> {
        category::ignored_limit(&self.faults, args, category)
    }
    fn category<'c>(&self, category: Option<&'c str>, query: Option<&str>) -> Option<&'c str> {
        category::rewrite_category(&self.faults, category, query)
    }
    fn category_matches_tag(&self, tool: &Tool, category: &str) -> bool {
        category::category_matches_tag(&self.faults, tool, category)
    }
    fn category_tags_match(&self, tool: &Tool, tags: &[String], any: bool) -> bool {
        category::rewrite_tags_match(&self.faults, tool, tags, any)
    }
    fn skips_ranking(&self, query: Option<&str>) -> bool {
        category::skips_ranking(&self.faults, query)
    }
    fn category_matches<'t>(&self, matches: Vec<(&'t Tool, Scored)>) -> Vec<(&'t Tool, Scored)> {
        category::rewrite_matches(&self.faults, matches)
    }
    fn category_items(&self, items: &mut [Value]) {
        category::rewrite_items(&self.faults, items)
    }
    fn category_total(&self, total: usize, page: usize) -> usize {
        category::rewrite_total(&self.faults, total, page)
    }
    fn counted_tools<'t>(&self, snap: &'t Snapshot, visible: Vec<&'t Tool>) -> Vec<&'t Tool> {
        category::counted_tools(&self.faults, snap, visible)
    }
}
