//! The grouping extension (`io.modelcontextprotocol/grouping`, draft of the
//! Primitive Grouping Interest Group): its capability, and membership as the
//! reserved `_meta` key `io.modelcontextprotocol/groups` on tools, prompts,
//! resources, resource templates and groups.
//!
//! It lives beside SEP-1300 (seed 003), which names the same method
//! `groups/list`. Both drafts' answers share one result: each group carries
//! SEP-1300's `name`, `title`, `description` and the extension's `_meta`
//! membership (nested groups), and pages follow the extension's cursor
//! pattern. A tool shows its groups twice, once per draft: SEP-1300's
//! `groups` field and the extension's `_meta` key, naming the same groups.
//! Each draft keeps its own capability (`filtering.groups` and
//! `extensions["io.modelcontextprotocol/grouping"]`), and both share
//! `notifications/groups/list_changed`.

use serde_json::{json, Map, Value};

/// The extension's identifier in `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/grouping";
/// The reserved `_meta` key of membership.
pub use mcp_conform_protocol::revisions::META_GROUPS;
/// Groups per `groups/list` page: smaller than the other lists' 50, so the
/// reference catalog's 17 groups span two pages and a client has to follow
/// the cursor to resolve every membership name.
pub const GROUPS_PAGE: usize = 10;

/// `capabilities.extensions`: group changes are announced.
pub fn extensions() -> Value {
    json!({ EXTENSION: {"listChanged": true} })
}

/// Adds `_meta["io.modelcontextprotocol/groups"]` to a list entry; no key
/// when the item belongs to no group (the draft: absence means ungrouped).
pub fn attach<'a>(entry: &mut Value, groups: impl IntoIterator<Item = &'a str>) {
    let names: Vec<Value> = groups.into_iter().map(|g| json!(g)).collect();
    if names.is_empty() {
        return;
    }
    if let Value::Object(map) = entry {
        let meta = map
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(META_GROUPS.into(), Value::Array(names));
        }
    }
}

/// The membership names of an entry (empty when it has none).
pub fn names_of(entry: &Value) -> Vec<String> {
    entry
        .get("_meta")
        .and_then(|m| m.get(META_GROUPS))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Replaces an entry's membership (none when `names` is empty).
pub fn set_names(entry: &mut Value, names: &[String]) {
    strip(entry);
    attach(entry, names.iter().map(String::as_str));
}

/// Removes an entry's membership (and `_meta` when nothing else is left).
pub fn strip(entry: &mut Value) {
    if let Value::Object(map) = entry {
        if let Some(Value::Object(meta)) = map.get_mut("_meta") {
            meta.remove(META_GROUPS);
            if meta.is_empty() {
                map.remove("_meta");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn membership_is_a_meta_key_and_absent_when_empty() {
        let mut e = json!({"name": "t"});
        attach(&mut e, std::iter::empty());
        assert_eq!(e, json!({"name": "t"}));
        attach(&mut e, ["a", "b"]);
        assert_eq!(e["_meta"][META_GROUPS], json!(["a", "b"]));
        assert_eq!(names_of(&e), ["a", "b"]);
        strip(&mut e);
        assert_eq!(e, json!({"name": "t"}));
    }
}
