//! Faults of the core protocol's primitives and utilities: resources,
//! prompts, logging, completion, progress and list-change notifications.

use super::Fault;
use super::{At, AtMut};
use crate::error::{Kind, RpcError};
use crate::live::TOOL_DESCRIPTIONS_URI;
use crate::served_era::Era;
use serde_json::{json, Value};

declare! {
    ListChangedMissing = "list-changed-missing"
        breaks ["SEP1821-LC-01", "SEP1300-LC-01", "X-05", "GRP-LC-01", "GRP-LC-03"]:
        "catalog mutations emit no list_changed notifications";
    ResourcesListNoName = "resources-list-no-name"
        breaks ["BASE-SCHEMA-01"]:
        "resources/list entries carry a title but no name";
    ResourceMissingEmpty = "resource-missing-empty"
        breaks ["MCP26-RES-01"]:
        "resources/read of a resource that does not exist returns an empty contents array instead of -32602";
    ReadWrongUri = "read-wrong-uri"
        breaks ["CORE-RES-03"]:
        "resources/read answers contents naming another URI (the one read with `#contents` appended)";
    ReadBadBlob = "read-bad-blob"
        breaks ["CORE-RES-02"]:
        "resources/read gives a resource's contents as a `blob` holding the raw text, which is not base64";
    ReadNoText = "read-no-text"
        breaks ["CORE-RES-01", "BASE-SCHEMA-01"]:
        "resources/read contents carry neither `text` nor `blob`";
    ResourceNotFoundInternal = "resource-not-found-internal"
        breaks ["CORE-RES-04"]:
        "resources/read of an unknown URI gets -32603 instead of -32002 (before 2026-07-28)";
    TemplateNoUriTemplate = "template-no-uri-template"
        breaks ["CORE-RES-05", "BASE-SCHEMA-01"]:
        "resources/templates/list entries carry `uri` instead of `uriTemplate`";
    PromptBadRole = "prompt-bad-role"
        breaks ["CORE-PROMPT-01"]:
        "prompts/get messages have the role `system`, which MCP does not define";
    PromptMissingArgOk = "prompt-missing-arg-ok"
        breaks ["CORE-PROMPT-03"]:
        "prompts/get without a required argument renders it empty instead of -32602";
    SetLevelEcho = "set-level-echo"
        breaks ["CORE-LOG-01"]:
        "logging/setLevel answers {\"level\": …} instead of an empty result";
    SetLevelUnknownOk = "set-level-unknown-ok"
        breaks ["CORE-LOG-02"]:
        "logging/setLevel accepts a level that does not exist";
    LogBelowLevel = "log-below-level"
        breaks ["CORE-LOG-03"]:
        "logging/setLevel is acknowledged with a debug-level notifications/message whatever level was set";
    CompletionOverflow = "completion-overflow"
        breaks ["CORE-COMPL-01"]:
        "completion/complete answers 101 values (at most 100 are allowed)";
    CompletionUnknownRefOk = "completion-unknown-ref-ok"
        breaks ["CORE-COMPL-02"]:
        "completion/complete for a prompt that does not exist answers an empty completion instead of -32602";
    ResourceNotFoundLegacyCode = "resource-not-found-legacy-code"
        breaks ["MCP26-ERR-02"]:
        "2026-07-28: resources/read of a resource that does not exist is refused with -32002, the code 2026-07-28 retires";
}

/// The answers of the core primitives, rewritten by their faults.
pub fn rewrite_answer(
    ctx: &mut AtMut<'_, '_>,
    params: Option<&Value>,
    answer: &mut Result<Value, RpcError>,
) {
    let param = |key: &str| params.and_then(|p| p.get(key)).and_then(Value::as_str);
    match (ctx.method, answer) {
        ("resources/list", Ok(result)) => rewrite_resources(&ctx.at(), result),
        ("resources/templates/list", Ok(result)) => rewrite_templates(&ctx.at(), result),
        ("resources/read", Ok(result)) => {
            let uri = param("uri").unwrap_or_default();
            let (path, _) = uri.split_once('?').unwrap_or((uri, ""));
            if path != TOOL_DESCRIPTIONS_URI {
                rewrite_read(&ctx.at(), result);
            }
        }
        ("resources/read", answer @ Err(_)) => rewrite_not_found(&ctx.at(), answer),
        ("prompts/get", Ok(result)) => rewrite_prompt(&ctx.at(), result),
        ("logging/setLevel", Ok(result)) => {
            rewrite_log_level(ctx, result, param("level").unwrap_or_default());
        }
        ("conform/mutate", Ok(_)) => rewrite_list_changed(ctx),
        _ => {}
    }
}

/// `resources-list-no-name`: entries carry a title but no name.
fn rewrite_resources(ctx: &At<'_, '_>, result: &mut Value) {
    if !ctx.has(Fault::ResourcesListNoName) {
        return;
    }
    let Some(Value::Array(entries)) = result.get_mut("resources") else {
        return;
    };
    for e in entries {
        if let Value::Object(m) = e {
            if let Some(name) = m.remove("name") {
                m.entry("title").or_insert(name);
            }
        }
    }
}

/// `template-no-uri-template`: template entries carry `uri` instead of
/// `uriTemplate`.
fn rewrite_templates(ctx: &At<'_, '_>, result: &mut Value) {
    if !ctx.has(Fault::TemplateNoUriTemplate) {
        return;
    }
    let Some(Value::Array(entries)) = result.get_mut("resourceTemplates") else {
        return;
    };
    for e in entries {
        if let Value::Object(t) = e {
            if let Some(u) = t.remove("uriTemplate") {
                t.insert("uri".into(), u);
            }
        }
    }
}

/// The `read-*` faults, on the contents of a catalog resource: another
/// URI, a `blob` that is not base64, or neither `text` nor `blob`.
fn rewrite_read(ctx: &At<'_, '_>, result: &mut Value) {
    let Some(Value::Object(c)) = result.pointer_mut("/contents/0") else {
        return;
    };
    if ctx.has(Fault::ReadWrongUri) {
        let uri = c.get("uri").and_then(Value::as_str).unwrap_or_default();
        c.insert("uri".into(), json!(format!("{uri}#contents")));
    }
    if ctx.has(Fault::ReadBadBlob) {
        if let Some(text) = c.remove("text") {
            c.insert("blob".into(), text);
        }
    }
    if ctx.has(Fault::ReadNoText) {
        c.remove("text");
    }
}

/// A read of a resource that does not exist: empty contents
/// (`resource-missing-empty`), or an internal error before 2026-07-28
/// (`resource-not-found-internal`).
fn rewrite_not_found(ctx: &At<'_, '_>, answer: &mut Result<Value, RpcError>) {
    let Err(e) = answer else {
        return;
    };
    if e.kind != Kind::ResourceNotFound {
        return;
    }
    if ctx.has(Fault::ResourceMissingEmpty) {
        *answer = Ok(json!({"contents": []}));
    } else if ctx.era == Era::Stateful && ctx.has(Fault::ResourceNotFoundInternal) {
        let uri = e.data_str("uri");
        *e = RpcError::internal(format!("Internal error: no such file {uri}"));
    } else if ctx.era == Era::Stateless && ctx.has(Fault::ResourceNotFoundLegacyCode) {
        e.code = -32002;
    }
}

/// `prompt-bad-role`: messages have the role `system`.
fn rewrite_prompt(ctx: &At<'_, '_>, result: &mut Value) {
    if ctx.has(Fault::PromptBadRole) {
        if let Some(Value::Array(messages)) = result.get_mut("messages") {
            for m in messages {
                m["role"] = json!("system");
            }
        }
    }
}

/// `prompt-missing-arg-ok`: a required argument left out renders empty.
pub fn renders_missing_argument(ctx: &At<'_, '_>) -> bool {
    ctx.has(Fault::PromptMissingArgOk)
}

/// `set-level-unknown-ok`: logging/setLevel takes a level that does not
/// exist.
pub fn accepts_unknown_level(ctx: &At<'_, '_>) -> bool {
    ctx.has(Fault::SetLevelUnknownOk)
}

/// The level just set is confirmed at debug level (`log-below-level`), and
/// echoed in the result (`set-level-echo`).
fn rewrite_log_level(ctx: &mut AtMut<'_, '_>, result: &mut Value, level: &str) {
    if ctx.has(Fault::LogBelowLevel) {
        for params in super::notification_params(ctx, "notifications/message") {
            if let Some(level) = params.get_mut("level") {
                *level = json!("debug");
            }
        }
    }
    if ctx.has(Fault::SetLevelEcho) {
        *result = json!({ "level": level });
    }
}

/// `completion-overflow`: more values than the 100 allowed, repeating the
/// matches.
pub fn rewrite_completion_count(ctx: &At<'_, '_>, shown: usize, max: usize) -> usize {
    if ctx.has(Fault::CompletionOverflow) {
        return max + 1;
    }
    shown
}

/// `list-changed-missing`: a catalog change is not announced.
fn rewrite_list_changed(ctx: &mut AtMut<'_, '_>) {
    if ctx.has(Fault::ListChangedMissing) {
        ctx.after.retain(|m| {
            !m["method"]
                .as_str()
                .is_some_and(|method| method.ends_with("/list_changed"))
        });
    }
}

/// `completion-unknown-ref-ok`: a completion for a prompt or template the
/// server does not have answers an empty completion instead of -32602.
pub fn answer_unknown_ref(ctx: &At<'_, '_>) -> bool {
    ctx.has(Fault::CompletionUnknownRefOk)
}
