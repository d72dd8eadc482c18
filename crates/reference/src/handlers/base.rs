//! Lifecycle: `initialize`, `ping`, `server/discover`,
//! `subscriptions/listen`, and the capabilities and instructions every
//! handshake advertises.

use super::Ctx;
use crate::error::RpcError;
use crate::params::Params;
use crate::served_era::{self as era, Era, META_SUBSCRIPTION};
use crate::server::Server;
use crate::session::Subscription;
use mcp_conform_protocol::jsonrpc::notification;
use serde_json::{json, Value};

/// Documents the query format (SEP-1821 requires it), filtering, search and
/// the progressive-disclosure workflow.
pub const INSTRUCTIONS: &str = "\
mcp-conform reference server: a catalog of workspace tools (spaces, pages, tasks, comments, …).

Tool search (tools/list `query`): plain text only — one or more words, matched against each tool's \
name, title, short description, tags and category (case-insensitive, simple plural/verb-ending folding), \
ranked by relevance with an exact tool name first. It is never a regex, wildcard, SQL or JSON query. \
Examples: {\"query\": \"page\"}, {\"query\": \"create page\"}, {\"query\": \"tools for assigning tasks\"}, \
{\"query\": \"task_create\"}. An empty query lists every tool. Results are paginated (50 per page): \
pass the same query with `cursor`.

Filtering (tools/list `filter`): {\"groups\": [...]} returns tools in ANY of the groups, \
{\"tags\": [...]} tools carrying ALL of the tags (within the groups, when both are given); \
it is combined with `query` by AND. Names come from groups/list and tags/list.

Search: tools/search, prompts/search and resources/search take a required `query` \
(same plain-text rules) and return at most 10 ranked items a page; resource search also looks \
inside resource text. Pass the same query with `cursor` for the next page.

Tool descriptions (progressive disclosure): tools/list shows short descriptions only. Before calling \
a tool, read resource:///tool_descriptions?tools=NAME (several: ?tools=page_create,task_create) to \
get its full description, input schema and examples. Fetching authorizes those tools for this session; \
calling a tool first fails with TOOL_DESCRIPTION_REQUIRED (error code -32010). In the stateless \
2026-07-28 protocol there is no session, so the fetch is recommended but not enforced.

Category search: the tool_search tool (query, category, tags, limit), list_categories and \
get_tools_by_category browse the catalog by category.";

/// Every capability at once, plus the control hook when enabled.
pub fn capabilities(server: &Server) -> Value {
    let mut caps = json!({
        "tools": {"listChanged": true, "filtering": true, "search": true},
        "prompts": {"listChanged": true, "search": true},
        "resources": {"listChanged": true, "search": true},
        "filtering": {"groups": {"listChanged": true}, "tags": {"listChanged": true}},
        "logging": {},
        "completions": {},
    });
    caps["extensions"] = super::grouping::extensions();
    if server.settings().control {
        caps["experimental"]["mcp-conform/control"] = json!({});
    }
    if let Some(rate) = server.settings().rate {
        caps["experimental"][crate::rate::CAPABILITY] = rate.advertised();
    }
    server.layer().capabilities(&mut caps);
    caps
}

pub fn initialize(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let requested = p.opt_str("protocolVersion")?;
    if ctx.server.settings().modern_only {
        let mut refusal = era::unsupported_by(requested.unwrap_or_default(), era::STATELESS);
        refusal.message = format!(
            "This server speaks only {}, which has no initialize: use server/discover",
            era::STATELESS.join(", ")
        );
        return Err(refusal);
    }
    p.opt_object("capabilities")?;
    p.opt_object("clientInfo")?;
    let version = era::negotiate(requested);
    ctx.session.protocol = Some(version);
    let mut caps = capabilities(ctx.server);
    if super::tasks::offered(version) {
        caps["tasks"] = super::tasks::capability();
    }
    Ok(json!({
        "protocolVersion": version,
        "capabilities": caps,
        "serverInfo": era::server_info(),
        "instructions": INSTRUCTIONS,
    }))
}

/// `ping` belongs to the stateful eras: the 2026-07-28 schema has no such
/// request, so a stateless `ping` is an unknown method there.
pub fn ping(ctx: &mut Ctx<'_>, _p: &Params<'_>) -> Result<Value, RpcError> {
    match ctx.era {
        Era::Stateful => Ok(json!({})),
        Era::Stateless => Err(RpcError::method_not_found("ping")),
    }
}

pub fn discover(ctx: &mut Ctx<'_>, _p: &Params<'_>) -> Result<Value, RpcError> {
    Ok(json!({
        "supportedVersions": if ctx.server.settings().modern_only {
            era::STATELESS.to_vec()
        } else {
            era::supported()
        },
        "capabilities": capabilities(ctx.server),
        "instructions": INSTRUCTIONS,
        "resultType": "complete",
        "ttlMs": ctx.server.list_ttl_ms(),
        "cacheScope": "public",
        "_meta": {era::META_SERVER_INFO: era::server_info()},
    }))
}

/// Opens a notification stream. Its response only comes when the server
/// ends the stream, so the handler emits the acknowledgement and no result.
pub fn listen(ctx: &mut Ctx<'_>, id: &Value, p: &Params<'_>) -> Result<(), RpcError> {
    let wanted = p.opt_object("notifications")?;
    let flag = |key: &str| -> Result<bool, RpcError> {
        match wanted.and_then(|w| w.get(key)) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(RpcError::bad_type(
                &format!("notifications.{key}"),
                "a boolean",
                other,
            )),
        }
    };
    let sub = Subscription {
        id: id.clone(),
        tools: flag("toolsListChanged")?,
        prompts: flag("promptsListChanged")?,
        resources: flag("resourcesListChanged")?,
        groups: flag("groupsListChanged")?,
        tags: flag("tagsListChanged")?,
        unfiltered: false,
    };
    let ack = json!({
        "notifications": sub.agreed(),
        "_meta": {META_SUBSCRIPTION: id.clone()},
    });
    ctx.after.push(notification(
        "notifications/subscriptions/acknowledged",
        Some(ack),
    ));
    ctx.session.subscriptions.retain(|s| &s.id != id);
    ctx.session.subscriptions.push(sub);
    Ok(())
}
