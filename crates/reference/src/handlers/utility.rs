//! Server utilities of the core protocol: `logging/setLevel` and
//! `completion/complete`.

use super::Ctx;
use crate::error::RpcError;
use crate::params::Params;
use crate::served_era::Era;
use mcp_conform_protocol::jsonrpc::notification;
use serde_json::{json, Value};

/// The syslog severities of MCP logging, least severe first.
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Completion answers hold at most this many values.
const MAX_COMPLETIONS: usize = 100;

/// `logging/setLevel`: stateful eras only (2026-07-28 names the level in
/// each request's `_meta`). The change is confirmed by a log message at the
/// level just set, which is at or above it.
pub fn set_level(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    if ctx.era == Era::Stateless {
        return Err(RpcError::method_not_found("logging/setLevel"));
    }
    let level = p.req_str("level")?;
    if !LOG_LEVELS.contains(&level) && !ctx.policy().requests.unknown_level_accepted.on() {
        return Err(RpcError::invalid_params(format!(
            "Unknown log level '{level}': expected one of {}",
            LOG_LEVELS.join(", ")
        )));
    }
    ctx.after.push(notification(
        "notifications/message",
        Some(json!({"level": level, "logger": "mcp-conform-reference", "data": format!("log level set to {level}")})),
    ));
    Ok(json!({}))
}

/// `completion/complete`: a prompt's arguments and the tool-descriptions
/// template's variable both name tools, so both complete to the catalog's
/// tool names that begin with the value typed so far.
pub fn complete(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let reference = p
        .opt_object("ref")?
        .ok_or_else(|| RpcError::invalid_params("Missing required parameter 'ref'"))?;
    let argument = p
        .opt_object("argument")?
        .ok_or_else(|| RpcError::invalid_params("Missing required parameter 'argument'"))?;
    let known = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let name = reference.get("name").and_then(Value::as_str).unwrap_or("");
            ctx.snap.catalog.prompts.iter().any(|x| x.name == name)
        }
        Some("ref/resource") => {
            let uri = reference.get("uri").and_then(Value::as_str).unwrap_or("");
            uri == crate::live::TOOL_DESCRIPTIONS_TEMPLATE
        }
        _ => false,
    };
    if !known && ctx.policy().requests.unknown_ref_answered.on() {
        return Ok(json!({"completion": {"values": [], "total": 0, "hasMore": false}}));
    }
    if !known {
        return Err(RpcError::invalid_params(
            "ref names no prompt or resource template of this server",
        ));
    }
    let typed = argument.get("value").and_then(Value::as_str).unwrap_or("");
    let matches: Vec<&str> = ctx
        .snap
        .tools()
        .map(|t| &*t.name)
        .filter(|n| n.starts_with(typed))
        .collect();
    let total = matches.len();
    let shown = ctx
        .layer()
        .completion_count(ctx, total.min(MAX_COMPLETIONS), MAX_COMPLETIONS);
    // Cycled: a fault may ask for more values than there are matches.
    let values: Vec<&str> = matches.iter().cycle().take(shown).copied().collect();
    Ok(json!({"completion": {
        "values": values,
        "total": total,
        "hasMore": total > values.len(),
    }}))
}
