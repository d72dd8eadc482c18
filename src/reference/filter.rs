//! SEP-1300 `filter: {groups, tags}` on `tools/list`: groups match ANY,
//! tags match ALL within the groups' result; an empty array imposes no
//! constraint; an unknown name matches nothing.

use super::bitset::Bitset;
use super::catalog_file::Tool;
use super::error::RpcError;
use super::faults::{Fault, Faults};
use super::live::Snapshot;
use super::params::string_list;
use serde_json::{Map, Value};

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

    fn groups(&self) -> &[String] {
        self.groups.as_deref().unwrap_or(&[])
    }

    fn tags(&self) -> &[String] {
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
    pub fn allowed(&self, snap: &Snapshot, faults: &Faults) -> Option<Bitset> {
        let n = snap.len();
        let idx = snap.filters();
        let empty = Bitset::empty(n);
        let bits = |map: &std::collections::HashMap<Box<str>, Bitset>, name: &String| {
            map.get(name.as_str())
                .cloned()
                .unwrap_or_else(|| empty.clone())
        };
        let mut set: Option<Bitset> = None;
        let tags_present = !self.tags().is_empty();
        let groups_ignored = tags_present && faults.has(Fault::TagsIgnoreGroups);
        if self.groups.as_ref().is_some_and(Vec::is_empty)
            && faults.has(Fault::EmptyGroupsMatchNone)
        {
            set = Some(empty.clone());
        } else if !self.groups().is_empty() && !groups_ignored {
            let all = faults.has(Fault::GroupsAll);
            let mut acc = if all { Bitset::full(n) } else { empty.clone() };
            let names = if faults.has(Fault::FilterGroupsRepeatDropsNext) {
                drop_after_repeats(self.groups())
            } else {
                self.groups().to_vec()
            };
            for g in &names {
                if all {
                    acc.intersect_with(&bits(&idx.groups, g));
                } else {
                    acc.union_with(&bits(&idx.groups, g));
                }
            }
            set = Some(acc);
        }
        if self.tags.as_ref().is_some_and(Vec::is_empty) && faults.has(Fault::EmptyTagsMatchNone) {
            set = Some(empty.clone());
        }
        if tags_present {
            let any = faults.has(Fault::TagsAny);
            let mut acc = if any { empty.clone() } else { Bitset::full(n) };
            let trimmed = faults.has(Fault::TagsTrimmed);
            for t in self.tags() {
                let carried = if trimmed {
                    bits(&idx.tags, &t.trim().to_string())
                } else {
                    bits(&idx.tags, t)
                };
                if any {
                    acc.union_with(&carried);
                } else {
                    acc.intersect_with(&carried);
                }
            }
            match &mut set {
                Some(s) => s.intersect_with(&acc),
                None => set = Some(acc),
            }
        }
        set
    }
}

/// `--fault filter-groups-repeat-drops-next`: a de-duplication that skips
/// one name too many after each repeat.
fn drop_after_repeats(names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut skip = false;
    for n in names {
        if skip {
            skip = false;
        } else if out.contains(n) {
            skip = true;
        } else {
            out.push(n.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::catalog_file::Catalog;
    use serde_json::json;

    fn snap() -> Snapshot {
        let cat = Catalog::from_slice(include_bytes!("../../fixtures/catalogs/mini.json"))
            .expect("mini loads");
        Snapshot::new(cat, 1)
    }

    fn names(s: &Snapshot, f: &Value, faults: &Faults) -> Vec<String> {
        let f = ToolFilter::parse(f.as_object()).expect("valid");
        match f.allowed(s, faults) {
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
        let none = Faults::none();
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
    fn faults_change_semantics() {
        let s = snap();
        let f = |x: Fault| Faults::from_iter([x]);
        assert!(
            names(
                &s,
                &json!({"groups": ["pages", "discovery"]}),
                &f(Fault::GroupsAll)
            ) == ["page_search"]
        );
        assert!(
            names(
                &s,
                &json!({"tags": ["delete", "search"]}),
                &f(Fault::TagsAny)
            )
            .len()
                >= 2
        );
        let ignored = names(
            &s,
            &json!({"groups": ["tasks"], "tags": ["write"]}),
            &f(Fault::TagsIgnoreGroups),
        );
        assert!(ignored.contains(&"page_update".to_string()));
        assert!(names(&s, &json!({"groups": []}), &f(Fault::EmptyGroupsMatchNone)).is_empty());
        // The name after a repeat is dropped; without a repeat nothing changes.
        let repeated = json!({"groups": ["tasks", "tasks", "pages"]});
        let dropped = names(&s, &repeated, &f(Fault::FilterGroupsRepeatDropsNext));
        assert!(!dropped.is_empty() && dropped.iter().all(|n| n.starts_with("task_")));
        assert!(names(&s, &repeated, &Faults::none())
            .iter()
            .any(|n| n.starts_with("page_")));
        let plain = json!({"groups": ["tasks", "pages"]});
        assert_eq!(
            names(&s, &plain, &f(Fault::FilterGroupsRepeatDropsNext)),
            names(&s, &plain, &Faults::none())
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
