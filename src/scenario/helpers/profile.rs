//! The helpers of the scenarios' profiles: what a listing, an answer or a
//! catalog of MCP says (error carriers, group memberships, URIs and names
//! of listed items, which tools a run may call), each declared with what
//! it reads. The engine gets them from `super::engine`.

use std::collections::BTreeSet;

use cel::ExecutionError;
use serde_json::{Map, Value};

use super::core;
use crate::expr::{helper_table, list_arg, str_arg, strings, Args, Helper, HelperResult};
use crate::json::ReadTree;
use crate::protocol::META_GROUPS;

/// The helpers of this module.
pub const HELPERS: &[Helper] = helper_table! {
    marker: 2, carrier: 2, tool_result: 1, sample: 3,
    groups_of: 1 reads groups_of_read,
    memberships: 4 reads memberships_read,
    schema_problems: 1, instance_errors: 2, base64_valid: 1, sample_args: 1, prompt_args: 1,
    expand_template: 1, template_vars: 1, is_pd_uri: 1, may_call: 2,
    pd_uris: 1 reads pd_uris_read,
    uri_safe_picks: 2 reads uri_safe_picks_read,
    untouched_picks: 3 reads untouched_picks_read,
    tool_names: 1 reads tool_names_read,
};

/// `sample(list, n, seed)`: the whole list when it has at most `n` items,
/// else `n` of them drawn with `seed` (the run's `--seed`, bound as `seed`),
/// in the list's order. The same list, size and seed give the same sample
/// on every run and platform, so a finding on a sample can be replayed.
fn sample(a: &Args) -> HelperResult {
    let items = list_arg("sample", &a[0])?;
    let n = a[1].as_u64().ok_or_else(|| {
        ExecutionError::function_error("sample", "expects a non-negative integer size")
    })?;
    let seed = a[2].as_u64().or_else(|| a[2].as_i64().map(|i| i as u64));
    let seed =
        seed.ok_or_else(|| ExecutionError::function_error("sample", "expects an integer seed"))?;
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    Ok(Value::Array(
        sample_indices(items.len(), n, seed)
            .into_iter()
            .map(|i| items[i].clone())
            .collect(),
    ))
}

/// `n` distinct indices of `0..len` (all of them when `n >= len`), in
/// increasing order: Floyd's algorithm, one draw per chosen index.
pub fn sample_indices(len: usize, n: usize, seed: u64) -> Vec<usize> {
    if n >= len {
        return (0..len).collect();
    }
    let mut rng = crate::rng::Rng::for_case(seed, "sample", len);
    let mut chosen = BTreeSet::new();
    for j in len - n..len {
        let t = rng.below(j + 1);
        if !chosen.insert(t) {
            chosen.insert(j);
        }
    }
    chosen.into_iter().collect()
}

/// Where a string marker such as `TOOL_DESCRIPTION_REQUIRED` shows up in a
/// response, in the order docs/interpretations.md#string-error-carriers lists the accepted carriers.
pub fn find_carrier(response: &Value, code: &str) -> Option<&'static str> {
    let error = response.get("error");
    if let Some(error) = error {
        if error.pointer("/data/code").and_then(Value::as_str) == Some(code) {
            return Some("error.data.code");
        }
        if error.get("code").and_then(Value::as_str) == Some(code) {
            return Some("error.code (string)");
        }
        if error
            .get("message")
            .and_then(Value::as_str)
            .is_some_and(|m| m.contains(code))
        {
            return Some("error.message");
        }
        if error
            .get("data")
            .is_some_and(|d| d.to_string().contains(code))
        {
            return Some("error.data");
        }
    }
    let result = response.get("result")?;
    if result.get("isError") != Some(&Value::Bool(true)) {
        return None;
    }
    if let Some(sc) = result.get("structuredContent") {
        if sc.to_string().contains(code) {
            return Some("result.structuredContent (isError)");
        }
    }
    let texts = result.get("content").and_then(Value::as_array)?;
    texts
        .iter()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .any(|t| t.contains(code))
        .then_some("result.content text (isError)")
}

fn marker(a: &Args) -> HelperResult {
    let code = str_arg("marker", &a[1])?;
    Ok(Value::Bool(find_carrier(&a[0], code).is_some()))
}

fn carrier(a: &Args) -> HelperResult {
    let code = str_arg("carrier", &a[1])?;
    Ok(Value::String(
        find_carrier(&a[0], code).unwrap_or("").to_string(),
    ))
}

/// The structured payload of a `tools/call` answer: `structuredContent`, or the
/// first text content parsed as JSON, or null.
fn tool_result(a: &Args) -> HelperResult {
    let result = a[0].get("result").unwrap_or(&a[0]);
    if let Some(sc) = result.get("structuredContent") {
        return Ok(sc.clone());
    }
    let parsed = result
        .get("content")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find_map(|c| c.get("text").and_then(Value::as_str)))
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
        .unwrap_or(Value::Null);
    Ok(parsed)
}

/// The groups an entry says it belongs to: SEP-1300's `groups` field, or,
/// when the entry has none, the grouping extension's
/// `_meta["io.modelcontextprotocol/groups"]`; `[]` when it states neither.
/// Filter checks compare against this, so a server that states membership
/// only the extension's way is held to what it states.
fn groups_of(a: &Args) -> HelperResult {
    let strings = |v: &Value| -> Option<Vec<Value>> {
        v.as_array()
            .map(|l| l.iter().filter(|x| x.is_string()).cloned().collect())
    };
    let stated = a[0]
        .get("groups")
        .and_then(strings)
        .or_else(|| {
            a[0].get("_meta")
                .and_then(|m| m.get(META_GROUPS))
                .and_then(strings)
        })
        .unwrap_or_default();
    Ok(Value::Array(stated))
}

/// `groups_of(t)` reads `t.groups`, else the grouping extension's `_meta`
/// key: only those are converted, not each whole tool (its input schema)
/// at every call.
fn groups_of_read(_: &[Option<&str>]) -> Vec<ReadTree> {
    let meta = ReadTree::field(META_GROUPS, ReadTree::whole());
    let mut read = ReadTree::field("groups", ReadTree::whole());
    read.merge(ReadTree::field("_meta", meta));
    vec![read]
}

/// `memberships(items, kind, id_key, meta_key)`: what each listed item
/// states under `_meta[meta_key]`, as `{kind, id, member, groups, raw}`:
/// `id` is the item's `id_key` field, `member` whether `_meta` is an object
/// holding the key, `raw` its value (else null), `groups` that value as a
/// list (a single value is wrapped). The grouping scenarios compare these
/// records across kinds; written as a CEL map per item, the same record
/// took 200 ms over ten thousand tools.
fn memberships(a: &Args) -> HelperResult {
    let items = list_arg("memberships", &a[0])?;
    let kind = str_arg("memberships", &a[1])?;
    let id_key = str_arg("memberships", &a[2])?;
    let meta_key = str_arg("memberships", &a[3])?;
    let record = |(i, item): (usize, &Value)| -> HelperResult {
        let fail = |why: String| ExecutionError::function_error("memberships", why);
        let fields = item
            .as_object()
            .ok_or_else(|| fail(format!("{kind} {i} is not an object")))?;
        let id = fields
            .get(id_key)
            .ok_or_else(|| fail(format!("{kind} {i} has no `{id_key}`")))?;
        let raw = fields
            .get("_meta")
            .and_then(Value::as_object)
            .and_then(|meta| meta.get(meta_key));
        let groups = match raw {
            None => Vec::new(),
            Some(Value::Array(list)) => list.clone(),
            Some(one) => vec![one.clone()],
        };
        let mut out = Map::new();
        out.insert("kind".into(), Value::String(kind.to_string()));
        out.insert("id".into(), id.clone());
        out.insert("member".into(), Value::Bool(raw.is_some()));
        out.insert("groups".into(), Value::Array(groups));
        out.insert("raw".into(), raw.cloned().unwrap_or(Value::Null));
        Ok(Value::Object(out))
    };
    items
        .iter()
        .enumerate()
        .map(record)
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

/// `memberships(items, kind, 'name', key)` reads each item's id field and
/// its `_meta` (by a key that may be computed).
fn memberships_read(literals: &[Option<&str>]) -> Vec<ReadTree> {
    let item = match literals.get(2).copied().flatten() {
        Some(id_key) => {
            ReadTree::field("_meta", ReadTree::whole()).with_field(id_key, ReadTree::whole())
        }
        None => ReadTree::whole(),
    };
    vec![
        ReadTree::items(item),
        ReadTree::whole(),
        ReadTree::whole(),
        ReadTree::whole(),
    ]
}

/// Why a value is not a valid JSON Schema (`schema_problems(t.inputSchema)`).
fn schema_problems(a: &Args) -> HelperResult {
    Ok(strings(core::schema_problems(&a[0])))
}

/// How a value breaks a schema (`instance_errors(r.structuredContent, t.outputSchema)`).
fn instance_errors(a: &Args) -> HelperResult {
    Ok(strings(core::instance_errors(&a[0], &a[1])))
}

fn base64_valid(a: &Args) -> HelperResult {
    Ok(Value::Bool(core::base64_valid(&a[0])))
}

fn sample_args(a: &Args) -> HelperResult {
    Ok(core::sample_args(&a[0]))
}

fn prompt_args(a: &Args) -> HelperResult {
    Ok(core::prompt_args(&a[0]))
}

fn expand_template(a: &Args) -> HelperResult {
    let template = str_arg("expand_template", &a[0])?;
    Ok(Value::String(core::expand_template(template, "example")))
}

fn template_vars(a: &Args) -> HelperResult {
    let template = str_arg("template_vars", &a[0])?;
    Ok(strings(core::template_vars(template)))
}

fn is_pd_uri(a: &Args) -> HelperResult {
    Ok(Value::Bool(core::is_pd_uri(str_arg("is_pd_uri", &a[0])?)))
}

fn may_call(a: &Args) -> HelperResult {
    let policy = str_arg("may_call", &a[1])?;
    Ok(Value::Bool(core::may_call(&a[0], policy)))
}

fn pd_uris(a: &Args) -> HelperResult {
    Ok(strings(core::pd_uris(core::listed_items(
        &a[0],
        "resources",
    ))))
}

/// `pd_uris`, `uri_safe_picks` and `tool_names` take a list or its list
/// answer, and read a few fields of each item.
fn pd_uris_read(_: &[Option<&str>]) -> Vec<ReadTree> {
    let item = ReadTree::field("uri", ReadTree::whole());
    vec![ReadTree::listed("resources", item)]
}

fn uri_safe_picks(a: &Args) -> HelperResult {
    let n = a[1].as_u64().ok_or_else(|| {
        ExecutionError::function_error("uri_safe_picks", "expects a tools/list answer and a count")
    })?;
    let tools = core::listed_items(&a[0], "tools");
    Ok(strings(core::uri_safe_picks(
        tools,
        usize::try_from(n).unwrap_or(usize::MAX),
    )))
}

/// `untouched_picks(tools, n, touched)`: `uri_safe_picks(tools, n)` on a
/// server no scenario named a tool on (`touched` empty); on one that
/// served earlier scenarios, the read-only tools among them that
/// `touched` leaves out. Read-only only there: past them a fresh server's
/// picks would be tools the run would not otherwise call.
fn untouched_picks(a: &Args) -> HelperResult {
    let n = a[1].as_u64().ok_or_else(|| {
        ExecutionError::function_error(
            "untouched_picks",
            "expects a tools/list answer, a count and a list of names",
        )
    })?;
    let touched: BTreeSet<&str> = list_arg("untouched_picks", &a[2])?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let tools = core::listed_items(&a[0], "tools");
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    Ok(strings(core::untouched_picks(tools, n, &touched)))
}

fn untouched_picks_read(args: &[Option<&str>]) -> Vec<ReadTree> {
    let mut read = uri_safe_picks_read(args);
    read.push(ReadTree::whole());
    read
}

fn uri_safe_picks_read(_: &[Option<&str>]) -> Vec<ReadTree> {
    let hint = ReadTree::field("readOnlyHint", ReadTree::whole());
    let item = ReadTree::field("name", ReadTree::whole()).with_field("annotations", hint);
    vec![ReadTree::listed("tools", item), ReadTree::whole()]
}

fn tool_names(a: &Args) -> HelperResult {
    Ok(Value::Array(core::listed_names(core::listed_items(
        &a[0], "tools",
    ))))
}

fn tool_names_read(_: &[Option<&str>]) -> Vec<ReadTree> {
    let item = ReadTree::field("name", ReadTree::whole());
    vec![ReadTree::listed("tools", item)]
}
