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

use super::Ctx;
use crate::reference::faults::Fault;
use crate::reference::server::Server;
use serde_json::{json, Map, Value};

/// The extension's identifier in `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/grouping";
/// The reserved `_meta` key of membership.
pub use crate::protocol::META_GROUPS;
/// Groups per `groups/list` page: smaller than the other lists' 50, so the
/// reference catalog's 17 groups span two pages and a client has to follow
/// the cursor to resolve every membership name.
pub const GROUPS_PAGE: usize = 10;
/// The group the `grouping-dangling-name` fault names and never lists.
pub const DANGLING_GROUP: &str = "retired_group";

/// `capabilities.extensions`, or `None` under `grouping-capability-missing`.
pub fn extensions(server: &Server) -> Option<Value> {
    let faults = server.faults();
    if faults.has(Fault::GroupingCapabilityMissing) {
        return None;
    }
    let list_changed = if faults.has(Fault::GroupingListChangedString) {
        json!("true")
    } else {
        json!(!faults.has(Fault::GroupingListChangedUndeclared))
    };
    Some(json!({ EXTENSION: {"listChanged": list_changed} }))
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

/// The membership faults that act on every kind of entry as it is served:
/// `grouping-membership-string` writes the names as one string.
pub fn serve(ctx: &Ctx<'_>, entry: &mut Value) {
    if !ctx.has(Fault::GroupingMembershipString) {
        return;
    }
    let names = names_of(entry);
    if names.is_empty() {
        return;
    }
    if let Some(Value::Object(meta)) = entry.get_mut("_meta") {
        meta.insert(META_GROUPS.into(), json!(names.join(",")));
    }
}

/// The faults that act on `groups/list` entries, in catalog order:
/// a self-member group, and a cycle closed over a two-deep nesting.
pub fn group_faults(ctx: &Ctx<'_>, groups: &mut [Value]) {
    if ctx.has(Fault::GroupingSelfMember) {
        if let Some(first) = groups.first_mut() {
            let mut names = names_of(first);
            let own = first["name"].as_str().unwrap_or_default().to_string();
            names.push(own);
            set_names(first, &names);
        }
    }
    if ctx.has(Fault::GroupingCycle) {
        close_cycle(groups);
    }
}

/// `grouping-cycle`: the first group `g` nested two deep (`g -> p -> q`)
/// is made `q`'s parent too, so `g -> p -> q -> g`; without such a chain,
/// the first two groups become each other's parents.
fn close_cycle(groups: &mut [Value]) {
    let position = |name: &str, groups: &[Value]| groups.iter().position(|g| g["name"] == name);
    let chain = groups.iter().find_map(|g| {
        let g_name = g["name"].as_str()?.to_string();
        names_of(g).into_iter().find_map(|p| {
            let pi = position(&p, groups)?;
            let q = names_of(&groups[pi]).into_iter().next()?;
            Some((g_name.clone(), q))
        })
    });
    let (member, parent) = match chain {
        Some((g, q)) => (q, g),
        None if groups.len() >= 2 => {
            let a = groups[0]["name"].as_str().unwrap_or_default().to_string();
            let b = groups[1]["name"].as_str().unwrap_or_default().to_string();
            let mut names = names_of(&groups[0]);
            names.push(b.clone());
            set_names(&mut groups[0], &names);
            (b, a)
        }
        None => return,
    };
    if let Some(i) = position(&member, groups) {
        let mut names = names_of(&groups[i]);
        names.push(parent);
        set_names(&mut groups[i], &names);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(name: &str, parents: &[&str]) -> Value {
        let mut g = json!({"name": name, "description": "d"});
        attach(&mut g, parents.iter().copied());
        g
    }

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

    #[test]
    fn cycle_fault_closes_a_two_deep_chain() {
        let mut gs = vec![
            group("a", &[]),
            group("c", &["b"]),
            group("b", &["a"]),
            group("d", &[]),
        ];
        close_cycle(&mut gs);
        // c -> b -> a, so a now belongs to c.
        assert_eq!(names_of(&gs[0]), ["c"]);
        let mut flat = vec![group("x", &[]), group("y", &[])];
        close_cycle(&mut flat);
        assert_eq!(names_of(&flat[0]), ["y"]);
        assert_eq!(names_of(&flat[1]), ["x"]);
    }
}
