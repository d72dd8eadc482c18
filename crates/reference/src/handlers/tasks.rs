//! `tasks/list` and `tasks/get` of MCP 2025-11-25 (capability `tasks.list`):
//! the catalog's tasks, each carrying the grouping extension's membership,
//! which the extension's current text names for tasks too. Only sessions
//! that negotiated 2025-11-25 have them: 2025-06-18 had no tasks, and
//! 2026-07-28 moved tasks to an extension without `tasks/list`.

use super::{grouping, paged_list, Ctx};
use crate::catalog_file::Task;
use crate::error::RpcError;
use crate::params::Params;
use crate::served_era::V2025_11_25;
use serde_json::{json, Value};

/// Whether a session that negotiated `version` has tasks.
pub fn offered(version: &str) -> bool {
    version == V2025_11_25
}

/// The `tasks` capability of a session that has tasks.
pub fn capability() -> Value {
    json!({"list": {}})
}

fn entry(ctx: &Ctx<'_>, t: &Task) -> Value {
    let mut e = json!(t);
    if let Value::Object(map) = &mut e {
        map.remove("groups");
        // `ttl` is required, null for unlimited retention
        map.entry("ttl").or_insert(Value::Null);
    }
    grouping::attach(&mut e, t.groups.iter().map(String::as_str));
    ctx.layer().task_entry(ctx, t, &mut e);
    e
}

fn gate(ctx: &Ctx<'_>) -> Result<(), RpcError> {
    match ctx.session.protocol {
        Some(version) if offered(version) => Ok(()),
        _ => Err(RpcError::method_not_found(ctx.method)),
    }
}

pub fn list(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    gate(ctx)?;
    let cursor = p.cursor()?;
    let items = ctx
        .snap
        .catalog
        .tasks
        .iter()
        .map(|t| entry(ctx, t))
        .collect();
    paged_list(ctx, "tasks", items, cursor)
}

pub fn get(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    gate(ctx)?;
    let id = p.req_str("taskId")?;
    let task = ctx
        .snap
        .catalog
        .tasks
        .iter()
        .find(|t| t.task_id == id)
        .ok_or_else(|| RpcError::invalid_params(format!("Unknown task: {id}")))?;
    Ok(entry(ctx, task))
}
