//! The control hook `conform/mutate` (only with `--control`): changes the
//! catalog at run time so list_changed flows can be tested. Other servers
//! can copy it: one request, `{action, tool?|name?|group?|tag?}` → `{ok: true}`,
//! then the matching `notifications/*/list_changed`.
//!
//! Adding a tool that names a group or tag the catalog does not declare
//! declares it (and announces the group/tag list change); removing a group
//! or tag also removes it from every tool, and a group from every prompt,
//! resource and group that belongs to it (each list whose membership
//! changed is announced, as the grouping extension asks). An added group
//! may belong to groups: `group: {name, title?, description?, groups?}`.

use super::Ctx;
use crate::catalog_file::{Catalog, Label, Tool};
use crate::error::RpcError;
use crate::params::Params;
use crate::session::Change;
use serde_json::{json, Value};

pub fn mutate(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let action = p.req_str("action")?;
    // The request's snapshot may already be stale when another session
    // mutated meanwhile: edit the newest catalog, under the lock.
    let _serial = ctx.server.lock_mutations();
    let mut catalog = ctx.server.snapshot().catalog.clone();
    let mut change = Change {
        origin: ctx.session.id,
        ..Change::default()
    };
    match action {
        "add_tool" => add_tool(&mut catalog, p, &mut change)?,
        "remove_tool" => {
            let name = p.req_str("name")?;
            let before = catalog.tools.len();
            catalog.tools.retain(|t| &*t.name != name);
            if catalog.tools.len() == before {
                return Err(RpcError::unknown_tool(name));
            }
            change.tools = true;
        }
        "add_group" => {
            let label = label(p, "group")?;
            add_label(&mut catalog.groups, label, "group")?;
            change.groups = true;
        }
        "add_tag" => {
            let label = label(p, "tag")?;
            add_label(&mut catalog.tags, label, "tag")?;
            change.tags = true;
        }
        "remove_group" => {
            let name = p.req_str("name")?;
            remove_label(&mut catalog.groups, name, "group")?;
            change.groups = true;
            change.tools = strip(&mut catalog.tools, name, Which::Group);
            strip_membership(&mut catalog, name, &mut change);
        }
        "remove_tag" => {
            let name = p.req_str("name")?;
            remove_label(&mut catalog.tags, name, "tag")?;
            change.tags = true;
            change.tools = strip(&mut catalog.tools, name, Which::Tag);
        }
        other => {
            return Err(RpcError::invalid_params(format!(
                "Invalid params: unknown action '{other}' (add_tool, remove_tool, add_group, remove_group, add_tag, remove_tag)"
            )))
        }
    }
    catalog
        .validate()
        .map_err(|e| RpcError::invalid_params(format!("Invalid params: {e}")))?;
    ctx.server.replace_catalog(catalog, change);
    ctx.after.extend(ctx.session.notifications_for(&change));
    Ok(json!({"ok": true}))
}

fn add_tool(catalog: &mut Catalog, p: &Params<'_>, change: &mut Change) -> Result<(), RpcError> {
    let raw = p
        .get("tool")
        .ok_or_else(|| RpcError::missing("tool", "a catalog tool object"))?;
    let tool: Tool = serde_json::from_value(raw.clone()).map_err(|e| {
        RpcError::invalid_params(format!("Invalid params: 'tool' is not a catalog tool: {e}"))
    })?;
    if catalog.tools.iter().any(|t| t.name == tool.name) {
        return Err(RpcError::invalid_params(format!(
            "Invalid params: a tool named '{}' already exists",
            tool.name
        )));
    }
    for g in &tool.groups {
        if !catalog.groups.iter().any(|x| *x.name == **g) {
            catalog.groups.push(declared(g));
            change.groups = true;
        }
    }
    for t in &tool.tags {
        if !catalog.tags.iter().any(|x| *x.name == **t) {
            catalog.tags.push(declared(t));
            change.tags = true;
        }
    }
    change.tools = tool.is_visible() || change.tools;
    catalog.tools.push(tool);
    Ok(())
}

fn declared(name: &str) -> Label {
    Label {
        name: name.to_string(),
        title: String::new(),
        description: format!("Declared when a tool named it ({name})."),
        groups: Vec::new(),
    }
}

fn label(p: &Params<'_>, key: &str) -> Result<Label, RpcError> {
    let raw = p
        .get(key)
        .ok_or_else(|| RpcError::missing(key, "an object with name, title?, description?"))?;
    serde_json::from_value(raw.clone())
        .map_err(|e| RpcError::invalid_params(format!("Invalid params: '{key}': {e}")))
}

fn add_label(list: &mut Vec<Label>, label: Label, kind: &str) -> Result<(), RpcError> {
    if list.iter().any(|l| l.name == label.name) {
        return Err(RpcError::invalid_params(format!(
            "Invalid params: {kind} '{}' already exists",
            label.name
        )));
    }
    list.push(label);
    Ok(())
}

fn remove_label(list: &mut Vec<Label>, name: &str, kind: &str) -> Result<(), RpcError> {
    let before = list.len();
    list.retain(|l| l.name != name);
    if list.len() == before {
        return Err(RpcError::invalid_params(format!(
            "Invalid params: unknown {kind} '{name}'"
        )));
    }
    Ok(())
}

/// Takes a removed group out of the membership of prompts, resources,
/// groups and the `tool_descriptions` resource.
fn strip_membership(catalog: &mut Catalog, name: &str, change: &mut Change) {
    let drop = |list: &mut Vec<String>| {
        let before = list.len();
        list.retain(|g| g != name);
        list.len() != before
    };
    for p in &mut catalog.prompts {
        change.prompts |= drop(&mut p.groups);
    }
    for r in &mut catalog.resources {
        change.resources |= drop(&mut r.groups);
    }
    change.resources |= drop(&mut catalog.tool_descriptions_groups);
    // MCP 2025-11-25 has no list_changed notification for tasks
    for t in &mut catalog.tasks {
        drop(&mut t.groups);
    }
    for g in &mut catalog.groups {
        drop(&mut g.groups);
    }
}

/// Which label list of a tool to edit.
#[derive(Clone, Copy)]
enum Which {
    Group,
    Tag,
}

/// Removes `name` from one label list of every tool; true when a visible
/// tool changed.
fn strip(tools: &mut [Tool], name: &str, which: Which) -> bool {
    let mut changed = false;
    for tool in tools.iter_mut() {
        let current = match which {
            Which::Group => &tool.groups,
            Which::Tag => &tool.tags,
        };
        if !current.iter().any(|n| &**n == name) {
            continue;
        }
        let kept: Vec<_> = current.iter().filter(|n| &***n != name).cloned().collect();
        match which {
            Which::Group => tool.set_groups(kept),
            Which::Tag => tool.set_tags(kept),
        }
        changed |= tool.is_visible();
    }
    changed
}
