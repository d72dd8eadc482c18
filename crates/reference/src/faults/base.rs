//! Faults of the lifecycle: capabilities, the handshake answer
//! (`initialize`, `server/discover`), `ping` and `subscriptions/listen`.

use super::{grouping, Fault, Faults};
use super::{At, AtMut};
use crate::error::{RpcError, NOT_INITIALIZED};
use crate::served_era as era;
use serde_json::{json, Value};

declare! {
    NoServerInfo = "no-server-info"
        breaks ["BASE-INIT-01", "BASE-SCHEMA-01", "MCP26-INFO-01"]:
        "the handshake answer carries no serverInfo";
    VersionEcho = "version-echo"
        breaks ["BASE-VER-01"]:
        "initialize answers with whatever non-empty protocolVersion the client asked for, even one the server does not speak";
    SearchCapabilityMissing = "search-capability-missing"
        breaks ["SEARCH-CAP-01"]:
        "*/search methods answer but no feature declares search: true";
    FilteringCapabilityMissing = "filtering-capability-missing"
        breaks ["SEP1300-CAP-01", "SEP1300-GRP-02"]:
        "groups/list and tags/list answer but capabilities.filtering is not declared";
    FilteringListChangedString = "filtering-list-changed-string"
        breaks ["SEP1300-CAP-01"]:
        "capabilities.filtering.groups/tags.listChanged is the string \"true\"";
    QueryCapabilityMissing = "query-capability-missing"
        breaks ["SEP1821-CAP-01"]:
        "tools/list honours `query` but capabilities.tools.filtering is not declared";
    NoInstructions = "no-instructions"
        breaks ["SEP1821-DOC-01"]:
        "the handshake answer carries no instructions";
    ListenAckNoSubscriptionId = "listen-ack-no-subscription-id"
        breaks ["MCP26-SUB-01"]:
        "the subscriptions/listen acknowledgement carries no io.modelcontextprotocol/subscriptionId";
    ListenSendsUnrequested = "listen-sends-unrequested"
        breaks ["MCP26-SUB-02"]:
        "a subscriptions/listen stream also gets the list_changed notifications it did not ask for";
    GroupingListChangedUndeclared = "grouping-list-changed-undeclared"
        breaks ["GRP-LC-02"]:
        "groups listChanged is declared false (extension and filtering.groups), yet group changes still emit notifications/groups/list_changed";
    PingNotEmpty = "ping-not-empty"
        breaks ["CORE-UTIL-01"]:
        "ping answers {\"status\": \"ok\"} instead of an empty result";
    PingNeedsInitialized = "ping-needs-initialized"
        breaks ["CORE-UTIL-04"]:
        "ping before notifications/initialized is refused (-32600) instead of answered";
    CompletionsUndeclared = "completions-undeclared"
        breaks ["MCP26-DECL-01"]:
        "completion/complete answers, but the completions capability is not declared; a `_meta` key of the discover answer is named `mcp conform` (a space, against the naming rules)";
}

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
pub fn rewrite_initialize(ctx: &At<'_, '_>, params: Option<&Value>, answer: &mut Value) {
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
pub fn rewrite_ping(ctx: &At<'_, '_>, answer: &mut Value) {
    if ctx.has(Fault::PingNotEmpty) {
        *answer = json!({"status": "ok"});
    }
}

/// `ping-needs-initialized`: a ping that comes before
/// `notifications/initialized` is refused as if the session were not open.
pub fn refuse_early_ping(ctx: &At<'_, '_>) -> Result<(), RpcError> {
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
pub fn rewrite_listen(ctx: &mut AtMut<'_, '_>) {
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
pub fn rewrite_answer(
    ctx: &At<'_, '_>,
    params: Option<&Value>,
    answer: &mut Result<Value, RpcError>,
) {
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
