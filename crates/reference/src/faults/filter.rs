//! Faults of SEP-1300 filtering: how `filter.groups` and `filter.tags` are
//! read and matched, and `tags/list`.

use super::At;
use super::{Fault, Faults};
use crate::bitset::Bitset;
use crate::filter::ToolFilter;
use serde_json::Value;
use std::borrow::Cow;

declare! {
    GroupsAll = "groups-all"
        breaks ["SEP1300-FLT", "X-01"]:
        "filter.groups requires ALL named groups instead of ANY";
    TagsAny = "tags-any"
        breaks ["SEP1300-FLT", "X-01"]:
        "filter.tags matches ANY named tag instead of ALL";
    TagsIgnoreGroups = "tags-ignore-groups"
        breaks ["SEP1300-FLT-03", "X-01"]:
        "when filter.tags is present, filter.groups is ignored";
    EmptyGroupsMatchNone = "empty-groups-match-none"
        breaks ["SEP1300-NEG-01"]:
        "filter.groups: [] matches no tool instead of imposing no constraint";
    TagsListDuplicates = "tags-list-duplicates"
        breaks ["SEP1300-TAG-01"]:
        "tags/list repeats its first tag at the end";
    FilterGroupsRepeatDropsNext = "filter-groups-repeat-drops-next"
        breaks ["SEP1300-FLT-01"]:
        "a name repeated in filter.groups also drops the name after it (a faulty de-duplication)";
    TagsTrimmed = "tags-trimmed"
        breaks ["SEP1300-FLT-02"]:
        "filter.tags trims whitespace around each named tag (`tags: [\" stable\"]` selects the tools tagged `stable` instead of none)";
    EmptyTagsMatchNone = "empty-tags-match-none"
        breaks ["SEP1300-NEG-01"]:
        "filter.tags: [] matches no tool instead of imposing no constraint";
}

/// The filter as a faulty server reads it: groups ignored beside tags
/// (`tags-ignore-groups`), a repeated group dropping the name after it
/// (`filter-groups-repeat-drops-next`), tags trimmed (`tags-trimmed`).
pub fn rewrite_filter<'f>(faults: &Faults, filter: &'f ToolFilter) -> Cow<'f, ToolFilter> {
    let mut read = Cow::Borrowed(filter);
    let tags_present = !filter.tags().is_empty();
    if tags_present && faults.has(Fault::TagsIgnoreGroups) {
        read.to_mut().groups = None;
    }
    if !read.groups().is_empty() && faults.has(Fault::FilterGroupsRepeatDropsNext) {
        let kept = drop_after_repeats(read.groups());
        read.to_mut().groups = Some(kept);
    }
    if tags_present && faults.has(Fault::TagsTrimmed) {
        let trimmed = read.tags().iter().map(|t| t.trim().to_string()).collect();
        read.to_mut().tags = Some(trimmed);
    }
    read
}

/// `groups-all`: filter.groups requires every named group instead of any
/// (`any`: the documents in at least one).
pub fn rewrite_groups_match(
    faults: &Faults,
    docs: usize,
    groups: &[String],
    bits: impl Fn(&String) -> Bitset,
    any: Bitset,
) -> Bitset {
    if !faults.has(Fault::GroupsAll) {
        return any;
    }
    let mut all = Bitset::full(docs);
    for g in groups {
        all.intersect_with(&bits(g));
    }
    all
}

/// `tags-any`: filter.tags matches any named tag instead of all (`all`: the
/// documents carrying every one).
pub fn rewrite_tags_match(
    faults: &Faults,
    docs: usize,
    tags: &[String],
    bits: impl Fn(&String) -> Bitset,
    all: Bitset,
) -> Bitset {
    if !faults.has(Fault::TagsAny) {
        return all;
    }
    let mut any = Bitset::empty(docs);
    for t in tags {
        any.union_with(&bits(t));
    }
    any
}

/// An empty `groups` or `tags` array matches no tool instead of imposing no
/// constraint (`empty-groups-match-none`, `empty-tags-match-none`).
pub fn empty_list_matches_none(faults: &Faults, filter: &ToolFilter) -> bool {
    let groups = filter.groups.as_ref().is_some_and(Vec::is_empty)
        && faults.has(Fault::EmptyGroupsMatchNone);
    let tags =
        filter.tags.as_ref().is_some_and(Vec::is_empty) && faults.has(Fault::EmptyTagsMatchNone);
    groups || tags
}

/// `filter-groups-repeat-drops-next`: a de-duplication that skips one name
/// too many after each repeat.
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

/// `tags-list-duplicates`: tags/list repeats its first tag at the end.
pub fn rewrite_tags(ctx: &At<'_, '_>, items: &mut Vec<Value>) {
    if ctx.has(Fault::TagsListDuplicates) {
        if let Some(first) = items.first().cloned() {
            items.push(first);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::FaultLayer;
    use crate::filter::tests::{names, snap};
    use serde_json::json;

    #[test]
    fn faults_change_semantics() {
        let s = snap();
        let f = |x: Fault| FaultLayer::new(Faults::from_iter([x]));
        let none = FaultLayer::new(Faults::none());
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
        assert!(names(&s, &repeated, &none)
            .iter()
            .any(|n| n.starts_with("page_")));
        let plain = json!({"groups": ["tasks", "pages"]});
        assert_eq!(
            names(&s, &plain, &f(Fault::FilterGroupsRepeatDropsNext)),
            names(&s, &plain, &none)
        );
    }
}
