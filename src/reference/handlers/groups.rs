//! SEP-1300 `groups/list` and `tags/list`.

use super::{paged_list, Ctx};
use crate::reference::catalog::Label;
use crate::reference::error::RpcError;
use crate::reference::faults::Fault;
use crate::reference::params::Params;
use serde_json::{json, Map, Value};

fn entry(label: &Label) -> Value {
    let mut e = Map::new();
    e.insert("name".into(), json!(label.name));
    if !label.title.is_empty() {
        e.insert("title".into(), json!(label.title));
    }
    e.insert("description".into(), json!(label.description));
    Value::Object(e)
}

pub fn groups(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let cursor = p.cursor()?;
    let mut items: Vec<Value> = ctx.snap.catalog.groups.iter().map(entry).collect();
    if ctx.has(Fault::GroupsListDuplicates) {
        if let Some(first) = items.first().cloned() {
            items.push(first);
        }
    }
    paged_list(ctx, "groups", items, cursor)
}

pub fn tags(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let cursor = p.cursor()?;
    let mut items: Vec<Value> = ctx.snap.catalog.tags.iter().map(entry).collect();
    if ctx.has(Fault::TagsListDuplicates) {
        if let Some(first) = items.first().cloned() {
            items.push(first);
        }
    }
    paged_list(ctx, "tags", items, cursor)
}
