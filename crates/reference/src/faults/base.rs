//! Faults of the lifecycle: capabilities, the handshake answer
//! (`initialize`, `server/discover`), `ping` and `subscriptions/listen`.

use super::{grouping, Fault, Faults};
use crate::error::{RpcError, NOT_INITIALIZED};
use crate::handlers::Ctx;
use crate::served_era as era;
use serde_json::{json, Value};

/// Capabilities left out or mistyped: search, the tools/list query,
/// filtering, and the grouping extension's.
pub fn rewrite_capabilities(faults: &Faults, caps: &mut Value) {
    grouping::rewrite_capabilities(faults, caps);
    if faults.has(Fault::SearchCapabilityMissing) {
        for feature in ["tools", "prompts", "resources"] {
            if let Some(Value::Object(f)) = caps.get_mut(feature) {
                f.remove("search");
            }
        }
    }
    if faults.has(Fault::QueryCapabilityMissing) {
        if let Some(Value::Object(f)) = caps.get_mut("tools") {
            f.remove("filtering");
        }
    }
    if faults.has(Fault::FilteringCapabilityMissing) {
        if let Value::Object(c) = caps {
            c.remove("filtering");
        }
    }
    if faults.has(Fault::GroupingListChangedUndeclared) {
        if let Some(lc) = caps.pointer_mut("/filtering/groups/listChanged") {
            *lc = json!(false);
        }
    }
    if faults.has(Fault::CompletionsUndeclared) {
        if let Value::Object(c) = caps {
            c.remove("completions");
        }
    }
    if faults.has(Fault::FilteringListChangedString) {
        caps["filtering"] =
            json!({"groups": {"listChanged": "true"}, "tags": {"listChanged": "true"}});
    }
}

/// `initialize` answered with the version asked for, spoken or not
/// (`version-echo`), and the handshake without what `no-server-info` and
/// `no-instructions` leave out.
pub fn rewrite_initialize(ctx: &Ctx<'_>, params: Option<&Value>, answer: &mut Value) {
    let requested = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str);
    if let Some(r) = requested.filter(|r| !r.is_empty()) {
        if ctx.has(Fault::VersionEcho) {
            answer["protocolVersion"] = json!(r);
        }
    }
    rewrite_handshake(ctx.faults(), answer);
}

/// The handshake answer (`initialize`, `server/discover`) without
/// `serverInfo` or `instructions`.
pub fn rewrite_handshake(faults: &Faults, answer: &mut Value) {
    if let Value::Object(m) = answer {
        if faults.has(Fault::NoServerInfo) {
            m.remove("serverInfo");
            if let Some(Value::Object(meta)) = m.get_mut("_meta") {
                meta.remove(era::META_SERVER_INFO);
            }
        }
        if faults.has(Fault::NoInstructions) {
            m.remove("instructions");
        }
    }
}

/// `ping-not-empty`: ping answers a status instead of an empty result.
pub fn rewrite_ping(ctx: &Ctx<'_>, answer: &mut Value) {
    if ctx.has(Fault::PingNotEmpty) {
        *answer = json!({"status": "ok"});
    }
}

/// `ping-needs-initialized`: a ping that comes before
/// `notifications/initialized` is refused as if the session were not open.
pub fn refuse_early_ping(ctx: &Ctx<'_>) -> Result<(), RpcError> {
    if !ctx.has(Fault::PingNeedsInitialized) {
        return Ok(());
    }
    Err(RpcError::new(
        NOT_INITIALIZED,
        "Invalid Request: the session is not initialized yet".to_string(),
    ))
}

/// A `subscriptions/listen` stream just opened: it also gets what it did
/// not ask for (`listen-sends-unrequested`), and its acknowledgement lacks
/// the subscription id (`listen-ack-no-subscription-id`).
pub fn rewrite_listen(ctx: &mut Ctx<'_>) {
    if ctx.has(Fault::ListenSendsUnrequested) {
        if let Some(sub) = ctx.session.subscriptions.last_mut() {
            sub.unfiltered = true;
        }
    }
    if ctx.has(Fault::ListenAckNoSubscriptionId) {
        for params in super::notification_params(ctx, "notifications/subscriptions/acknowledged") {
            if let Value::Object(a) = params {
                a.remove("_meta");
            }
        }
    }
}

/// The answer to `ping` and the handshakes, rewritten by their faults.
pub fn rewrite_answer(ctx: &Ctx<'_>, params: Option<&Value>, answer: &mut Result<Value, RpcError>) {
    let Ok(result) = answer else {
        return;
    };
    match ctx.method {
        "initialize" => rewrite_initialize(ctx, params, result),
        "server/discover" => rewrite_handshake(ctx.faults(), result),
        "ping" => rewrite_ping(ctx, result),
        _ => {}
    }
}
