//! `groups/list` (SEP-1300 and the grouping extension at once: see
//! `grouping.rs`) and SEP-1300 `tags/list`.

use super::grouping::{self, GROUPS_PAGE};
use super::{paged_list, paged_list_of, Ctx};
use crate::catalog_file::Label;
use crate::error::RpcError;
use crate::params::Params;
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

/// A group as `groups/list` shows it: SEP-1300's fields plus the
/// extension's nested membership.
fn group_entry(group: &Label) -> Value {
    let mut e = entry(group);
    grouping::attach(&mut e, group.groups.iter().map(String::as_str));
    e
}

pub fn groups(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let cursor = ctx.layer().groups_cursor(ctx, p.cursor()?);
    let mut items: Vec<Value> = ctx.snap.catalog.groups.iter().map(group_entry).collect();
    ctx.layer().groups(ctx, &mut items);
    paged_list_of(ctx, "groups", items, cursor, GROUPS_PAGE)
}

pub fn tags(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let cursor = p.cursor()?;
    let mut items: Vec<Value> = ctx.snap.catalog.tags.iter().map(entry).collect();
    ctx.layer().tags_list(ctx, &mut items);
    paged_list(ctx, "tags", items, cursor)
}
