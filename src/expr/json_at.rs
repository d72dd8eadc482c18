//! Places in JSON documents: a value inside a document, holding the
//! document, so that a part of a binding is handed on without a copy.

use std::sync::Arc;

use serde_json::Value;
use yoke::Yoke;

/// A place in a JSON document, holding the document.
pub type JsonAt = Yoke<&'static Value, Arc<Value>>;

/// The whole of `document`, as a place in it.
pub fn json_root(document: Arc<Value>) -> JsonAt {
    Yoke::attach_to_cart(document, |v| v)
}

/// The element `index` of the array at `at` (the caller has checked it is
/// there).
pub fn json_item(at: &JsonAt, index: usize) -> JsonAt {
    at.map_project_cloned(move |v, _| &v[index])
}

/// The member `key` of the object at `at` (the caller has checked it is
/// there).
pub fn json_member(at: &JsonAt, key: &str) -> JsonAt {
    at.map_project_cloned(move |v, _| &v[key])
}

/// The member at position `index` of the object at `at` (the caller has
/// found it there): no hash of its key, as `json_member` takes.
pub fn json_member_at(at: &JsonAt, index: usize) -> JsonAt {
    at.map_project_cloned(move |v, _| {
        static NULL: Value = Value::Null;
        v.as_object()
            .and_then(|m| m.values().nth(index))
            .unwrap_or(&NULL)
    })
}
