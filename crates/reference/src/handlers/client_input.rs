//! What a tool needs from the client (`requires_client` in the catalog), in
//! 2026-07-28, where a server asks for client input inside its answer
//! (multi round-trip requests) instead of sending requests of its own.
//!
//! "A server MUST NOT rely on capabilities the client has not declared. If
//! processing a request requires a capability the client did not include in
//! `io.modelcontextprotocol/clientCapabilities`, the server MUST return a
//! MissingRequiredClientCapabilityError (-32021) whose
//! `data.requiredCapabilities` lists the missing capabilities" (2026-07-28,
//! Basic, `_meta`), and "Servers MUST NOT send an `inputRequests` that the
//! client has not declared support for in its capabilities" (Basic,
//! Patterns, Multi Round-Trip Requests).
//!
//! In the stateful eras the reference answers such a tool from its store,
//! as it does every other tool: it sends no server-initiated requests.

use serde_json::{json, Map, Value};

use super::Ctx;
use crate::catalog_file::Tool;
use crate::error::{RpcError, MISSING_REQUIRED_CLIENT_CAPABILITY};
use crate::params::Params;
use crate::served_era::{Era, META_CAPABILITIES};

/// `None`: the call goes on (nothing is needed, or every input came back in
/// `inputResponses`); `Some(answer)`: the `InputRequiredResult` that asks
/// for what is still missing. An undeclared capability is the -32021 error.
pub fn gate(ctx: &Ctx<'_>, p: &Params<'_>, tool: &Tool) -> Result<Option<Value>, RpcError> {
    if ctx.era != Era::Stateless || tool.requires_client.is_empty() {
        return Ok(None);
    }
    let missing = undeclared(p, tool);
    if !missing.is_empty() && !ctx.policy().requests.undeclared_input_requested.on() {
        return Err(missing_capability(ctx, tool, &missing));
    }
    let answered = p.get("inputResponses").and_then(Value::as_object);
    let pending: Map<String, Value> = tool
        .requires_client
        .iter()
        .filter(|c| !answered.is_some_and(|a| a.contains_key(&***c)))
        .map(|c| (c.to_string(), input_request(c, tool)))
        .collect();
    if pending.is_empty() {
        return Ok(None);
    }
    Ok(Some(
        json!({"resultType": "input_required", "inputRequests": pending}),
    ))
}

/// The capabilities the tool needs that the request's `_meta` does not declare.
fn undeclared<'t>(p: &Params<'_>, tool: &'t Tool) -> Vec<&'t str> {
    let declared = p
        .get("_meta")
        .and_then(|m| m.get(META_CAPABILITIES))
        .and_then(Value::as_object);
    tool.requires_client
        .iter()
        .map(|c| &**c)
        .filter(|c| !declared.is_some_and(|d| d.contains_key(*c)))
        .collect()
}

fn missing_capability(ctx: &Ctx<'_>, tool: &Tool, missing: &[&str]) -> RpcError {
    let mut error = RpcError::new(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "{} needs the client's {} capability, which the request's clientCapabilities does not declare",
            tool.name,
            missing.join(", ")
        ),
    );
    let required: Map<String, Value> = missing.iter().map(|c| (c.to_string(), json!({}))).collect();
    error = error.with_data(json!({ "requiredCapabilities": required }));
    ctx.layer().missing_capability(ctx, &mut error);
    error
}

/// The request the client fulfils for one capability.
fn input_request(capability: &str, tool: &Tool) -> Value {
    match capability {
        "sampling" => json!({
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "text",
                    "text": format!("Carry out the {} request described by the tool call's arguments.", tool.name)}}],
                "maxTokens": 1000
            }
        }),
        "elicitation" => json!({
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": format!("{} asks you to confirm", tool.name),
                "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
            }
        }),
        _ => json!({"method": "roots/list", "params": {}}),
    }
}
