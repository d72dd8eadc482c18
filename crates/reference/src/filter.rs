//! SEP-1300 `filter: {groups, tags}` on `tools/list`: groups match ANY,
//! tags match ALL within the groups' result; an empty array imposes no
//! constraint; an unknown name matches nothing.

use super::bitset::Bitset;
use super::catalog_file::Tool;
use super::cursor;
use super::error::RpcError;
use super::live::Snapshot;
use super::params::string_list;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// How a server reads and matches a filter; every default is the
/// SEP-1300 reading, so [`Plain`] is the correct one.
pub trait Reading {
    /// The filter as read.
    fn read<'f>(&self, filter: &'f ToolFilter) -> Cow<'f, ToolFilter> {
        Cow::Borrowed(filter)
    }
    /// The documents filter.groups admits (`any`: those in at least one).
    fn groups_match(
        &self,
        docs: usize,
        groups: &[String],
        bits: &dyn Fn(&String) -> Bitset,
        any: Bitset,
    ) -> Bitset {
        let _ = (docs, groups, bits);
        any
    }
    /// The documents filter.tags admits (`all`: those carrying every one).
    fn tags_match(
        &self,
        docs: usize,
        tags: &[String],
        bits: &dyn Fn(&String) -> Bitset,
        all: Bitset,
    ) -> Bitset {
        let _ = (docs, tags, bits);
        all
    }
    /// Whether an empty list matches nothing (it imposes no constraint).
    fn empty_list_matches_none(&self, filter: &ToolFilter) -> bool {
        let _ = filter;
        false
    }
}

/// The SEP-1300 reading.
#[derive(Debug, Clone, Copy, Default)]
pub struct Plain;

impl Reading for Plain {}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    /// `None` when the key was absent; `Some([])` when it was an empty array.
    pub groups: Option<Vec<String>>,
    pub tags: Option<Vec<String>>,
}

impl ToolFilter {
    /// Reads `params.filter`; unknown keys inside it are ignored.
    pub fn parse(filter: Option<&Map<String, Value>>) -> Result<Self, RpcError> {
        let Some(filter) = filter else {
            return Ok(ToolFilter::default());
        };
        Ok(ToolFilter {
            groups: string_list("filter.groups", filter.get("groups"))?,
            tags: string_list("filter.tags", filter.get("tags"))?,
        })
    }

    pub fn groups(&self) -> &[String] {
        self.groups.as_deref().unwrap_or(&[])
    }

    pub fn tags(&self) -> &[String] {
        self.tags.as_deref().unwrap_or(&[])
    }

    pub fn is_empty(&self) -> bool {
        self.groups().is_empty() && self.tags().is_empty()
    }

    /// A canonical text for cursor scoping: order and repeats of names do
    /// not change a filter's meaning, so they do not change its scope.
    pub fn canonical(&self) -> (String, String) {
        let canon = |names: &[String]| {
            let mut v: Vec<&str> = names.iter().map(String::as_str).collect();
            v.sort_unstable();
            v.dedup();
            v.join("\u{1f}")
        };
        (canon(self.groups()), canon(self.tags()))
    }

    /// Whether one tool passes the filter (groups ANY, tags ALL).
    pub fn admits(&self, tool: &Tool) -> bool {
        (self.groups().is_empty() || self.groups().iter().any(|g| tool.has_group(g)))
            && self.tags().iter().all(|t| tool.has_tag(t))
    }

    /// The documents the filter admits, or `None` for "no constraint".
    pub fn allowed(&self, snap: &Snapshot, reading: &dyn Reading) -> Option<Bitset> {
        let n = snap.len();
        let idx = snap.filters();
        let empty = Bitset::empty(n);
        let bits = |map: &std::collections::HashMap<Box<str>, Bitset>, name: &String| {
            map.get(name.as_str())
                .cloned()
                .unwrap_or_else(|| empty.clone())
        };
        let read = reading.read(self);
        let mut set: Option<Bitset> = None;
        if !read.groups().is_empty() {
            let mut any = empty.clone();
            for g in read.groups() {
                any.union_with(&bits(&idx.groups, g));
            }
            let group_bits = |g: &String| bits(&idx.groups, g);
            set = Some(reading.groups_match(n, read.groups(), &group_bits, any));
        }
        if reading.empty_list_matches_none(self) {
            set = Some(empty.clone());
        }
        if !read.tags().is_empty() {
            let mut all = Bitset::full(n);
            for t in read.tags() {
                all.intersect_with(&bits(&idx.tags, t));
            }
            let tag_bits = |t: &String| bits(&idx.tags, t);
            let acc = reading.tags_match(n, read.tags(), &tag_bits, all);
            match &mut set {
                Some(s) => s.intersect_with(&acc),
                None => set = Some(acc),
            }
        }
        set
    }
}

/// What one `tools/list` page is cut from: the query and filter, the
/// cursor scope a given cursor must carry, and the one the next cursor gets.
pub struct ListRequest<'a> {
    pub query: Option<&'a str>,
    pub filter: ToolFilter,
    pub scope: [u8; 8],
    pub next_scope: [u8; 8],
}

/// A cursor is bound to its query and filter, so a later page comes from
/// the same list.
pub fn scope_of(query: Option<&str>, filter: &ToolFilter) -> [u8; 8] {
    let (groups, tags) = filter.canonical();
    cursor::scope(&[query.unwrap_or(""), &groups, &tags])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::catalog_file::Catalog;
    use serde_json::json;

    pub(crate) fn snap() -> Snapshot {
        let cat = Catalog::from_slice(include_bytes!("../../../fixtures/catalogs/mini.json"))
            .expect("mini loads");
        Snapshot::new(cat, 1)
    }

    /// The names of the tools `f` admits read by `reading`.
    pub(crate) fn names(s: &Snapshot, f: &Value, reading: &dyn Reading) -> Vec<String> {
        let f = ToolFilter::parse(f.as_object()).expect("valid");
        match f.allowed(s, reading) {
            None => s.tools().map(|t| t.name.to_string()).collect(),
            Some(b) => b
                .iter()
                .map(|d| s.tool(d as u32).name.to_string())
                .collect(),
        }
    }

    #[test]
    fn groups_any_tags_all() {
        let s = snap();
        let none = Plain;
        let both = names(&s, &json!({"groups": ["pages", "tasks"]}), &none);
        assert_eq!(both.len(), 11);
        let stable_read = names(&s, &json!({"tags": ["read", "stable"]}), &none);
        assert!(
            stable_read.iter().all(|n| n != "page_search"),
            "{stable_read:?}"
        );
        let within = names(&s, &json!({"groups": ["tasks"], "tags": ["write"]}), &none);
        assert_eq!(within, ["task_create", "task_update", "task_assign"]);
        assert!(names(&s, &json!({"groups": ["nope"]}), &none).is_empty());
        assert_eq!(
            names(&s, &json!({"groups": [], "tags": []}), &none).len(),
            14
        );
    }

    #[test]
    fn rejects_wrong_types() {
        for bad in [
            json!({"groups": "a"}),
            json!({"groups": [1]}),
            json!({"tags": {}}),
        ] {
            assert!(ToolFilter::parse(bad.as_object()).is_err(), "{bad}");
        }
        let f =
            ToolFilter::parse(json!({"tags": ["b", "a", "a"], "x": 1}).as_object()).expect("ok");
        assert_eq!(f.canonical().1, "a\u{1f}b");
    }
}
