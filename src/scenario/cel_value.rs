//! JSON answers as the CEL interpreter's values: whole, or only the part an
//! expression reads (see `expr_reads`); and as the older value enum that
//! helper functions return.

use std::collections::HashMap;
use std::sync::Arc;

use cel::common::types::{
    CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, CelUInt,
};
use cel::common::value::Val;
use cel::objects::Value as CelValue;
use serde_json::Value;

use super::expr_reads::ReadTree;

/// JSON to a CEL value. Integers become `int` (not `uint`) when they fit, so
/// `type(x) == int` and comparisons with negative literals work on any JSON
/// integer; larger ones `uint`, the rest `double`. (`json_to_cel` maps
/// numbers the same way.)
pub fn json_to_val(value: &Value) -> Box<dyn Val> {
    match value {
        Value::Null => Box::new(CelNull),
        Value::Bool(b) => Box::new(CelBool::from(*b)),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Box::new(CelInt::from(i)),
            (None, Some(u)) => Box::new(CelUInt::from(u)),
            _ => Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN))),
        },
        Value::String(s) => Box::new(CelString::from(s.clone())),
        Value::Array(items) => Box::new(CelList::from(
            items.iter().map(json_to_val).collect::<Vec<_>>(),
        )),
        Value::Object(map) => Box::new(CelMap::from(
            map.iter()
                .map(|(k, v)| (CelMapKey::from(k.clone()), json_to_val(v)))
                .collect::<HashMap<_, _>>(),
        )),
    }
}

/// The part of `value` that `read` covers: an object read field by field
/// keeps only those fields (the ones it has), a list whose items are read
/// keeps every item, each cut down the same way, and a list of which nothing
/// is read (only its presence or type) becomes empty. Anything else is
/// converted whole. What the expression can observe (a field's presence, a
/// value's type, a list's length, the error for a missing field) is the same
/// as with the whole value.
pub fn json_to_val_read(value: &Value, read: &ReadTree) -> Box<dyn Val> {
    if read.is_whole() {
        return json_to_val(value);
    }
    match (value, read.item_read()) {
        (Value::Object(map), None) => Box::new(CelMap::from(
            read.fields()
                .iter()
                .filter_map(|(name, sub)| {
                    let v = map.get(name)?;
                    Some((CelMapKey::from(name.clone()), json_to_val_read(v, sub)))
                })
                .collect::<HashMap<_, _>>(),
        )),
        (Value::Array(items), Some(item)) => Box::new(CelList::from(
            items
                .iter()
                .map(|v| json_to_val_read(v, item))
                .collect::<Vec<_>>(),
        )),
        (Value::Array(_), None) if read.fields().is_empty() => Box::new(CelList::from(Vec::new())),
        _ => json_to_val(value),
    }
}

/// JSON to the interpreter's older value enum, which helper functions
/// return; numbers as in [`json_to_val`].
pub fn json_to_cel(value: &Value) -> CelValue {
    match value {
        Value::Null => CelValue::Null,
        Value::Bool(b) => CelValue::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => CelValue::Int(i),
            (None, Some(u)) => CelValue::UInt(u),
            _ => CelValue::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => CelValue::String(Arc::new(s.clone())),
        Value::Array(items) => CelValue::List(Arc::new(items.iter().map(json_to_cel).collect())),
        Value::Object(map) => {
            let entries: HashMap<cel::objects::Key, CelValue> = map
                .iter()
                .map(|(k, v)| {
                    (
                        cel::objects::Key::String(Arc::new(k.clone())),
                        json_to_cel(v),
                    )
                })
                .collect();
            CelValue::Map(cel::objects::Map {
                map: Arc::new(entries),
            })
        }
    }
}
