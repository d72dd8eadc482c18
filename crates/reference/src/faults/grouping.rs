//! Faults of the grouping extension (`io.modelcontextprotocol/grouping`):
//! its capability, `_meta` membership as entries are served, and the
//! nesting and paging of `groups/list`.

use super::At;
use super::{Fault, Faults};
use crate::catalog_file::Task;
use crate::handlers::grouping::{names_of, set_names, strip, EXTENSION, META_GROUPS};
use serde_json::{json, Value};

declare! {
    GroupsListDuplicates = "groups-list-duplicates"
        breaks ["SEP1300-GRP-01", "GRP-LIST-01"]:
        "groups/list repeats its first group at the end";
    GroupingCapabilityMissing = "grouping-capability-missing"
        breaks ["GRP-DEG-01"]:
        "`_meta` group membership is served but capabilities.extensions[\"io.modelcontextprotocol/grouping\"] is not declared";
    GroupingListChangedString = "grouping-list-changed-string"
        breaks ["GRP-CAP-01"]:
        "capabilities.extensions[\"io.modelcontextprotocol/grouping\"].listChanged is the string \"true\"";
    GroupingDanglingName = "grouping-dangling-name"
        breaks ["GRP-MEM-02", "GRP-X-01"]:
        "the first tool's `_meta` membership also names `retired_group`, which groups/list does not list";
    GroupingSelfMember = "grouping-self-member"
        breaks ["GRP-NEST-01"]:
        "the first group of groups/list names itself in its `_meta` membership (against this project's nested-groups rule: the extension's current text no longer forbids it)";
    GroupingCycle = "grouping-cycle"
        breaks ["GRP-NEST-02"]:
        "nested groups run in a cycle: the first group nested two deep (g -> p -> q) is also made q's parent (against this project's nested-groups rule: the extension's current text no longer forbids it)";
    GroupingNoPromptMembership = "grouping-no-prompt-membership"
        breaks ["GRP-MEM-01"]:
        "prompts/list entries carry no `_meta` group membership";
    GroupingCursorIgnored = "grouping-cursor-ignored"
        breaks ["GRP-LIST-02"]:
        "groups/list ignores `cursor` and answers the first page again (against this project's rule for a server that pages groups/list)";
    GroupingMembershipString = "grouping-membership-string"
        breaks ["GRP-MEM-01"]:
        "`_meta` membership is one comma-separated string instead of an array of group names";
    GroupingTaskMembershipTopLevel = "grouping-task-membership-top-level"
        breaks ["GRP-MEM-01"]:
        "tasks/list entries state their groups in a top-level `groups` field instead of `_meta[\"io.modelcontextprotocol/groups\"]`";
    GroupingMembershipUnstable = "grouping-membership-unstable"
        breaks ["GRP-MEM-04"]:
        "every second walk of tools/list drops the `_meta` membership of its pages after the first (a membership cache emptied when a walk starts)";
}

/// The group the `grouping-dangling-name` fault names and never lists.
pub const DANGLING_GROUP: &str = "retired_group";

/// The extension's capability: left out (`grouping-capability-missing`),
/// `listChanged` as a string (`grouping-list-changed-string`) or declared
/// false (`grouping-list-changed-undeclared`).
pub fn rewrite_capabilities(faults: &Faults, caps: &mut Value) {
    if faults.has(Fault::GroupingCapabilityMissing) {
        if let Value::Object(c) = caps {
            c.remove("extensions");
        }
        return;
    }
    let list_changed = if faults.has(Fault::GroupingListChangedString) {
        json!("true")
    } else if faults.has(Fault::GroupingListChangedUndeclared) {
        json!(false)
    } else {
        return;
    };
    if let Some(lc) = caps.pointer_mut(&format!(
        "/extensions/{}/listChanged",
        EXTENSION.replace('/', "~1")
    )) {
        *lc = list_changed;
    }
}

/// `grouping-membership-string`: membership is written as one string, on
/// every kind of entry as it is served.
pub fn serve(ctx: &At<'_, '_>, entry: &mut Value) {
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

/// `grouping-dangling-name`: the first tool also names a group that
/// groups/list never lists.
pub fn rewrite_tool_entry(ctx: &At<'_, '_>, tool_name: &str, entry: &mut Value) {
    if ctx.has(Fault::GroupingDanglingName)
        && ctx
            .snap
            .tools()
            .next()
            .is_some_and(|t| &*t.name == tool_name)
    {
        let mut names = names_of(entry);
        names.push(DANGLING_GROUP.into());
        set_names(entry, &names);
    }
    serve(ctx, entry);
}

/// `grouping-no-prompt-membership`: prompts carry no membership.
pub fn rewrite_prompt_entry(ctx: &At<'_, '_>, entry: &mut Value) {
    if ctx.has(Fault::GroupingNoPromptMembership) {
        strip(entry);
    } else {
        serve(ctx, entry);
    }
}

/// `grouping-task-membership-top-level`: a task states its groups in a
/// top-level `groups` field instead of `_meta`.
pub fn rewrite_task_entry(ctx: &At<'_, '_>, task: &Task, entry: &mut Value) {
    if !ctx.has(Fault::GroupingTaskMembershipTopLevel) {
        serve(ctx, entry);
        return;
    }
    strip(entry);
    if !task.groups.is_empty() {
        entry["groups"] = json!(task.groups);
    }
}

/// `grouping-cursor-ignored`: groups/list answers the first page again.
pub fn rewrite_groups_cursor<'a>(ctx: &At<'_, '_>, cursor: Option<&'a str>) -> Option<&'a str> {
    if ctx.has(Fault::GroupingCursorIgnored) {
        return None;
    }
    cursor
}

/// The faults on `groups/list` entries, in catalog order and before
/// paging: a self-member group, a cycle closed over a two-deep nesting,
/// membership as a string, and the first group repeated at the end.
pub fn rewrite_groups(ctx: &At<'_, '_>, groups: &mut Vec<Value>) {
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
    for group in groups.iter_mut() {
        serve(ctx, group);
    }
    if ctx.has(Fault::GroupsListDuplicates) {
        if let Some(first) = groups.first().cloned() {
            groups.push(first);
        }
    }
}

/// `grouping-membership-unstable`: every second walk of tools/list drops the
/// membership of its pages after the first.
pub fn rewrite_tools_page(ctx: &At<'_, '_>, cursor: Option<&str>, tools: &mut [Value]) {
    if ctx.has(Fault::GroupingMembershipUnstable) {
        match cursor {
            None => ctx.server.start_walk(),
            Some(_) if ctx.server.even_walk() => tools.iter_mut().for_each(strip),
            Some(_) => {}
        }
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
    use crate::handlers::grouping::attach;

    fn group(name: &str, parents: &[&str]) -> Value {
        let mut g = json!({"name": name, "description": "d"});
        attach(&mut g, parents.iter().copied());
        g
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

    #[test]
    fn capability_faults_rewrite_only_the_extension() {
        let clean = json!({"tools": {}, "extensions": {EXTENSION: {"listChanged": true}}, "experimental": {}});
        let with = |f: Fault| {
            let mut caps = clean.clone();
            rewrite_capabilities(&Faults::from_iter([f]), &mut caps);
            caps
        };
        let mut same = clean.clone();
        rewrite_capabilities(&Faults::none(), &mut same);
        assert_eq!(same, clean);
        let missing = with(Fault::GroupingCapabilityMissing);
        assert_eq!(missing, json!({"tools": {}, "experimental": {}}));
        assert_eq!(
            missing
                .as_object()
                .map(|m| m.keys().cloned().collect::<Vec<_>>()),
            Some(vec!["tools".to_string(), "experimental".to_string()])
        );
        assert_eq!(
            with(Fault::GroupingListChangedString)["extensions"][EXTENSION]["listChanged"],
            "true"
        );
        assert_eq!(
            with(Fault::GroupingListChangedUndeclared)["extensions"][EXTENSION]["listChanged"],
            false
        );
    }
}
