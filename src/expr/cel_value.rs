//! JSON answers as the CEL interpreter's values: whole, or only the part an
//! expression reads (see `expr::reads`); and the interpreter's values back
//! as JSON.

use std::collections::HashMap;

use cel::common::types::{
    CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelString, CelUInt, Kind,
};
use cel::common::value::Val;
use cel::objects::Value as CelValue;
use serde_json::Value;

use super::cel_lazy::{json_at_to_val, json_of};
use super::cel_shared::Shared;
use super::json_at::{json_item, json_member, JsonAt};
use crate::json::{prune, pruned_copy, ReadTree};

/// The part of the JSON at `at` that `read` covers: an object read field by
/// field keeps only those fields (the ones it has), one read by a key known
/// only when evaluating (`m[k]`) keeps every member, each cut down by what
/// is read of it (`ReadTree::member_read`), a list whose items are
/// read keeps every item, each cut down the same way, and a list of which
/// nothing is read (only its presence or type) becomes empty. Anything else
/// is converted whole. What the expression can observe (a field's presence,
/// a value's type, a list's length, the error for a missing field) is the
/// same as with the whole value. Only what is converted whole keeps its JSON.
pub fn json_to_val_read(at: &JsonAt, read: &ReadTree) -> Box<dyn Val> {
    if read.is_whole() {
        return json_at_to_val(at);
    }
    match (*at.get(), read.item_read()) {
        (Value::Object(map), _) => Shared::boxed(CelMap::from(
            map.keys()
                .filter_map(|name| {
                    let sub = read.member_read(name)?;
                    let member = json_to_val_read(&json_member(at, name), sub.as_ref());
                    Some((CelMapKey::from(name.clone()), member))
                })
                .collect::<HashMap<_, _>>(),
        )),
        (Value::Array(items), Some(item)) => Shared::boxed(CelList::from(
            (0..items.len())
                .map(|i| json_to_val_read(&json_item(at, i), item))
                .collect::<Vec<_>>(),
        )),
        (Value::Array(_), None) if read.fields().is_empty() => {
            Shared::boxed(CelList::from(Vec::new()))
        }
        _ => json_at_to_val(at),
    }
}

/// A CEL value as JSON: numbers as themselves, maps with string keys as
/// objects. Other values (bytes, timestamps, maps with other keys…) go
/// through the interpreter's own conversion, which writes them as text.
pub fn val_to_json(value: &dyn Val) -> Result<Value, String> {
    if let Some(json) = json_of(value) {
        return Ok(json.clone());
    }
    let direct = match value.get_type().kind() {
        Kind::NullType => Some(Value::Null),
        Kind::Boolean => value
            .downcast_ref::<CelBool>()
            .map(|b| Value::Bool(*b.inner())),
        Kind::Int => value
            .downcast_ref::<CelInt>()
            .map(|i| Value::from(*i.inner())),
        Kind::UInt => value
            .downcast_ref::<CelUInt>()
            .map(|u| Value::from(*u.inner())),
        Kind::Double => value
            .downcast_ref::<CelDouble>()
            .map(|d| Value::from(*d.inner())),
        Kind::String => value
            .downcast_ref::<CelString>()
            .map(|s| Value::String(s.inner().to_string())),
        Kind::List => value.downcast_ref::<CelList>().map(array_of).transpose()?,
        Kind::Map => value
            .downcast_ref::<CelMap>()
            .map(object_of)
            .transpose()?
            .flatten(),
        _ => None,
    };
    match direct {
        Some(json) => Ok(json),
        None => {
            let converted = CelValue::try_from(value).map_err(|e| e.to_string())?;
            converted.json().map_err(|e| e.to_string())
        }
    }
}

/// [`val_to_json`] of a value of which only `read` is kept: the JSON
/// `prune(val_to_json(value), read)` gives, with only that much copied or
/// made. A capture of `all.result.tools.filter(...)` on a catalog of
/// 10,000 tools copied every tool whole, when the scenario read a name and
/// a schema of each.
pub fn val_to_json_read(value: &dyn Val, read: &ReadTree) -> Result<Value, String> {
    if read.is_whole() {
        return val_to_json(value);
    }
    if let Some(json) = json_of(value) {
        return Ok(pruned_copy(json, read));
    }
    let list = (value.get_type().kind() == Kind::List)
        .then(|| value.downcast_ref::<CelList>())
        .flatten();
    match (list, read.item_read()) {
        (Some(list), Some(item)) => list
            .inner()
            .iter()
            .map(|v| val_to_json_read(v.as_ref(), item))
            .collect::<Result<_, _>>()
            .map(Value::Array),
        (Some(_), None) if read.fields().is_empty() => Ok(Value::Array(Vec::new())),
        _ => val_to_json(value).map(|json| prune(json, read)),
    }
}

fn array_of(list: &CelList<'_>) -> Result<Value, String> {
    list.inner()
        .iter()
        .map(|item| val_to_json(item.as_ref()))
        .collect::<Result<_, _>>()
        .map(Value::Array)
}

/// A map whose keys are all strings as a JSON object; None for other keys.
fn object_of(map: &CelMap<'_>) -> Result<Option<Value>, String> {
    let mut object = serde_json::Map::with_capacity(map.inner().len());
    for (key, item) in map.inner() {
        let CelMapKey::String(key) = key else {
            return Ok(None);
        };
        object.insert(key.inner().to_string(), val_to_json(item.as_ref())?);
    }
    Ok(Some(Value::Object(object)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::cel_lazy::json_to_val;
    use serde_json::json;

    /// What is kept of an answer is shown as evidence: it keeps the order
    /// the server wrote, not the order of the names read.
    #[test]
    fn a_cut_answer_keeps_the_order_it_came_in() {
        let answer = json!({"jsonrpc": "2.0", "id": 7, "result": {"tools": [], "nextCursor": "c"}, "extra": 1});
        let read = ReadTree::whole_fields(&["result", "jsonrpc", "id"]);
        let keys = |v: &Value| v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>());
        let expected = Some(vec!["jsonrpc".to_string(), "id".into(), "result".into()]);
        assert_eq!(keys(&pruned_copy(&answer, &read)), expected);
        assert_eq!(keys(&prune(answer, &read)), expected);
    }

    /// A `for_each` step's id is read as one answer and as the list of
    /// them (`ReadTree::with_items_read`): on an answer, an object, the
    /// items' read is a read of any member, and each member is cut by it.
    /// It was kept whole, which held every filtered walk of a 10,000-tool
    /// catalog in full.
    #[test]
    fn an_object_read_both_as_an_answer_and_as_a_list_is_cut_by_its_fields() {
        let name = ReadTree::whole_fields(&["name"]);
        let answer_read = ReadTree::default().with_field(
            "result",
            ReadTree::default().with_field("tools", ReadTree::default().with_each_item(name)),
        );
        let read = answer_read.clone().with_each_item(answer_read);
        let answer = json!({"jsonrpc": "2.0", "result": {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}});
        let cut = json!({"jsonrpc": "2.0", "result": {"tools": [{"name": "a"}]}});
        assert_eq!(pruned_copy(&answer, &read), cut);
        assert_eq!(prune(answer, &read), cut);
    }

    /// A capture made anew (a filtered list of the answer's maps, a list of
    /// built maps) is made only as far as it is read: the JSON pruning the
    /// whole result gives.
    #[test]
    fn a_new_value_kept_as_read_is_the_pruned_whole() {
        let tools = json!([
            {"name": "a", "inputSchema": {"type": "object"}, "tags": ["x"]},
            {"name": "b", "description": "d", "annotations": {"readOnlyHint": true}}
        ]);
        let lazy_items: Vec<Box<dyn Val>> = (0..2).map(|i| json_to_val(tools[i].clone())).collect();
        let built = CelList::from(vec![
            json_to_val(json!({"name": "c", "groups": ["g"], "n": 1})),
            Box::new(CelList::from(vec![json_to_val(
                json!({"name": "d", "z": 2}),
            )])) as Box<dyn Val>,
        ]);
        let reads = [
            ReadTree::whole(),
            ReadTree::default().with_each_item(ReadTree::whole_fields(&["name"])),
            ReadTree::default().with_each_item(ReadTree::whole_fields(&["name", "tags", "groups"])),
            ReadTree::default(),
            ReadTree::whole_fields(&["name"]),
        ];
        for read in &reads {
            for value in [
                &CelList::from(
                    lazy_items
                        .iter()
                        .map(|v| v.clone_as_boxed())
                        .collect::<Vec<_>>(),
                ) as &dyn Val,
                &built,
            ] {
                let whole = val_to_json(value).expect("json");
                assert_eq!(
                    val_to_json_read(value, read),
                    Ok(prune(whole, read)),
                    "{read:?}"
                );
            }
        }
    }

    /// `filtering[k]`, `k` a variable: every member may be read.
    #[test]
    fn an_object_read_by_a_computed_key_keeps_every_member() {
        let read = ReadTree::default().with_each_item(ReadTree::whole_fields(&["listChanged"]));
        let filtering = json!({"groups": {"listChanged": true, "x": 1}, "tags": {}});
        let cut = json!({"groups": {"listChanged": true}, "tags": {}});
        assert_eq!(pruned_copy(&filtering, &read), cut);
        assert_eq!(prune(filtering, &read), cut);
    }
}
