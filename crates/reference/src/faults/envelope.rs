//! Faults of the JSON-RPC envelope and of what every 2026-07-28 request and
//! result must carry: ids, error codes and kinds, the era a request is
//! served in, the `_meta` check, and the messages sent before an answer.
//! `dispatch` applies them around every handler.

use super::{Fault, Faults};
use crate::error::{Kind, RpcError};
use crate::served_era::{self as era, Era};
use crate::session::SessionState;
use mcp_conform_protocol::jsonrpc::{codes, error_response};
use serde_json::{json, Value};

declare! {
    UnknownMethodInternalError = "unknown-method-internal-error"
        breaks ["BASE-ERR-01", "SEARCH-CAP-02", "SEP1300-GRP-02"]:
        "unknown methods get -32603 instead of -32601";
    BadParamsInternalError = "bad-params-internal-error"
        breaks ["BASE-ERR-02", "SEP1821-NEG-01", "SEARCH-REQ-02", "SEP1300-NEG-03", "CAT-NEG-01"]:
        "params of the wrong JSON type get -32603 instead of -32602";
    WrongId = "wrong-id"
        breaks ["BASE-ID-01"]:
        "responses to string ids made only of digits come back with a number id";
    ErrorCodeString = "error-code-string"
        breaks ["BASE-ERR-04", "BASE-SCHEMA-01"]:
        "error codes are sent as strings (\"-32601\") instead of integers";
    IdAsFloat = "id-as-float"
        breaks ["BASE-ID-01"]:
        "numeric ids are echoed as floats (4711 comes back as 4711.0)";
    IdLargeLossy = "id-large-lossy"
        breaks ["BASE-ID-01"]:
        "integer ids beyond 2^53 are stored as doubles and come back rounded";
    IdLargeDropped = "id-large-dropped"
        breaks ["BASE-ID-01"]:
        "requests whose integer id is beyond 2^53 are dropped without an answer";
    OldRevisionServed = "old-revision-served"
        breaks ["MCP26-VER-01"]:
        "a request whose `_meta` protocol version is an older MCP revision (2024-11-05, 2025-03-26) is served as 2026-07-28 instead of refused with UnsupportedProtocolVersion (-32022)";
    MetaUnchecked = "meta-unchecked"
        breaks ["MCP26-META-01"]:
        "2026-07-28 requests whose `_meta` lacks the protocol version or the client capabilities are served instead of refused with -32602";
    DiscoverAnyVersion = "discover-any-version"
        breaks ["MCP26-VER-01"]:
        "server/discover answers any `_meta` protocol version instead of UnsupportedProtocolVersion (-32022)";
    ResultTypeListsOnly = "result-type-lists-only"
        breaks ["MCP26-RT-01"]:
        "2026-07-28 results carry resultType only on tools/list and server/discover";
    ReadNoCacheHints = "read-no-cache-hints"
        breaks ["MCP26-CACHE-01"]:
        "2026-07-28 resources/read results carry no ttlMs or cacheScope";
    CacheScopeVaries = "cache-scope-varies"
        breaks ["MCP26-CACHE-01"]:
        "2026-07-28 list pages after the first say cacheScope private while the first says public";
    ServerPing2026 = "server-ping-2026"
        breaks ["MCP26-REQ-01"]:
        "in 2026-07-28 the server sends a ping request of its own before each tools/list answer";
    RateLimitNoRecovery = "rate-limit-no-recovery"
        breaks ["SEARCH-RATE-01"]
        serve with ["--rate-limit", "5/s"]:
        "with --rate-limit, a session's spent token bucket never refills: every request after the burst is refused";
    RateLimitInternalError = "rate-limit-internal-error"
        breaks ["SEARCH-RATE-01"]
        serve with ["--rate-limit", "5/s"]:
        "with --rate-limit, requests over the limit get a bare -32603 \"Internal error\" that does not say why";
    CancelAnswered = "cancel-answered"
        breaks ["CORE-UTIL-02", "MCP26-NOTIF-01"]:
        "notifications/cancelled for a request id the server never saw is answered with an error (id null)";
    ProgressNotIncreasing = "progress-not-increasing"
        breaks ["CORE-UTIL-03"]:
        "tools/call progress notifications repeat the same progress value";
    StatelessNeedsDiscover = "stateless-needs-discover"
        breaks ["MCP26-STATELESS-01"]:
        "2026-07-28: a connection's requests other than server/discover are refused (-32600) until it has sent server/discover (relies on an earlier request)";
    LogWithoutLogLevel = "log-without-log-level"
        breaks ["MCP26-LOG-01"]:
        "2026-07-28: resources/list is preceded by a notifications/message although the request carries no io.modelcontextprotocol/logLevel";
    NotificationAnswered = "notification-answered"
        breaks ["BASE-NOTIF-01", "MCP26-NOTIF-01"]:
        "a notification the server does not handle (an unknown method, or a request method sent without an id) is answered with -32601 (id null)";
    InvalidRequestSilent = "invalid-request-silent"
        breaks ["BASE-ERR-05"]:
        "a message that is not a valid Request (`method` not a string, `jsonrpc` not \"2.0\") is dropped without an answer";
    InvalidRequestNoIdSilent = "invalid-request-no-id-silent"
        breaks ["BASE-ERR-05"]:
        "a message that is not a valid Request and carries no id (`method` not a string) is dropped without an answer, as if it were a notification";
    IdNonAsciiMangled = "id-non-ascii-mangled"
        breaks ["BASE-ID-03"]:
        "string ids holding non-ASCII characters come back mangled: their UTF-8 bytes read as Latin-1 (`é` becomes `Ã©`)";
    IdZeroDropped = "id-zero-dropped"
        breaks ["BASE-ID-01"]:
        "a request whose id is 0 is taken for a notification (a falsy id) and gets no answer";
    ProgressUnrequested = "progress-unrequested"
        breaks ["CORE-UTIL-03", "CORE-UTIL-05"]:
        "tools/call without a progressToken still sends a notifications/progress (with progressToken 0)";
    ResultTypeUnknown = "result-type-unknown"
        breaks ["MCP26-RT-02"]:
        "2026-07-28: tools/call results carry resultType \"done\", a value neither the core protocol nor an advertised extension defines";
    InputRequiredOnCompletion = "input-required-on-completion"
        breaks ["MCP26-MRTR-01"]:
        "2026-07-28: completion/complete answers an InputRequiredResult (asking for a root list), a request that may not carry one";
    InputRequiredHollow = "input-required-hollow"
        breaks ["MCP26-MRTR-02"]:
        "2026-07-28: prompts/get answers an InputRequiredResult with neither inputRequests nor requestState";
    ListsPerConnection = "lists-per-connection"
        breaks ["MCP26-LIST-02", "MCP26-LIST-03"]:
        "2026-07-28 prompts/list and resources/list leave out the entries whose name hashes odd with a salt drawn per process (per connection on stdio)";
    ServerCancels = "server-cancels"
        breaks ["MCP26-CANCEL-01"]:
        "2026-07-28: tools/list is preceded by a notifications/cancelled naming the request itself, although no subscription is torn down";
}

/// The id an answer carries (the request's own), or `None` when the request
/// is dropped unanswered (`id-large-dropped`).
pub fn reply_id(faults: &Faults, id: &Value) -> Option<Value> {
    if faults.has(Fault::IdLargeDropped) && beyond_double_precision(id) {
        return None;
    }
    let non_ascii = id.as_str().is_some_and(|s| !s.is_ascii());
    Some(if faults.has(Fault::WrongId) {
        digits_as_number(id)
    } else if non_ascii && faults.has(Fault::IdNonAsciiMangled) {
        latin1_mojibake(id)
    } else if faults.has(Fault::IdAsFloat) {
        number_as_float(id)
    } else if faults.has(Fault::IdLargeLossy) {
        rounded_through_double(id)
    } else {
        id.clone()
    })
}

/// `rate-limit-internal-error`: the refusal does not say why.
pub fn rewrite_rate_limited(faults: &Faults, e: RpcError) -> RpcError {
    if faults.has(Fault::RateLimitInternalError) {
        return RpcError::internal("Internal error");
    }
    e
}

/// `discover-any-version` (and `old-revision-served`): server/discover
/// serves a version the server does not speak.
pub fn discover_serves_any_version(faults: &Faults, params: Option<&Value>) -> bool {
    faults.has(Fault::DiscoverAnyVersion)
        || (faults.has(Fault::OldRevisionServed) && era::older_revision(params))
}

/// `old-revision-served`: a request naming an older dated revision is taken
/// for a 2026-07-28 one instead of being refused.
pub fn old_revision_served(faults: &Faults, params: Option<&Value>) -> bool {
    faults.has(Fault::OldRevisionServed) && era::older_revision(params)
}

/// `meta-unchecked`: a 2026-07-28 request's `_meta` may lack what it must
/// carry.
pub fn meta_unchecked(faults: &Faults) -> bool {
    faults.has(Fault::MetaUnchecked)
}

/// `stateless-needs-discover`: a 2026-07-28 server that keeps state per
/// connection and wants `server/discover` before anything else ("Servers
/// MUST NOT rely on prior requests over the same connection", MCP
/// 2026-07-28, Basic, Statelessness).
pub fn stateless_connection(
    faults: &Faults,
    session: &mut SessionState,
    method: &str,
) -> Result<(), RpcError> {
    if method == "server/discover" {
        session.discovered = true;
    } else if !session.discovered && faults.has(Fault::StatelessNeedsDiscover) {
        return Err(RpcError::new(
            codes::INVALID_REQUEST,
            "Invalid Request: send server/discover on this connection first",
        ));
    }
    Ok(())
}

/// `unknown-method-internal-error`: an unknown method is an internal error.
pub fn rewrite_unknown_method(faults: &Faults, method: &str, e: RpcError) -> RpcError {
    if faults.has(Fault::UnknownMethodInternalError) {
        return RpcError::internal(format!("Internal error: no handler for {method}"));
    }
    e
}

/// `bad-params-internal-error`: a parameter of the wrong type is an
/// internal error.
pub fn rewrite_error(faults: &Faults, e: RpcError) -> RpcError {
    if e.kind == Kind::BadType && faults.has(Fault::BadParamsInternalError) {
        return RpcError::internal(format!("Internal error: {}", e.message));
    }
    e
}

/// `error-code-string`: the code of an error response is a string.
pub fn rewrite_error_response(faults: &Faults, response: &mut Value) {
    if faults.has(Fault::ErrorCodeString) {
        if let Some(code) = response.pointer_mut("/error/code") {
            *code = Value::String(code.to_string());
        }
    }
}

/// The faults that break what 2026-07-28 asks of every result, on a result
/// already decorated for the stateless era; each is asked about only where
/// it can act.
pub fn rewrite_stateless_result(
    faults: &Faults,
    method: &str,
    params: Option<&Value>,
    result: &mut Value,
) {
    let Value::Object(map) = result else {
        return;
    };
    if !matches!(method, "tools/list" | "server/discover") && faults.has(Fault::ResultTypeListsOnly)
    {
        map.remove("resultType");
    }
    if method == "resources/read" && faults.has(Fault::ReadNoCacheHints) {
        map.remove("ttlMs");
        map.remove("cacheScope");
    }
    let later_page = params.and_then(|p| p.get("cursor")).is_some();
    if later_page && map.contains_key("cacheScope") && faults.has(Fault::CacheScopeVaries) {
        map.insert("cacheScope".into(), json!("private"));
    }
    if faults.has(Fault::NoServerInfo) {
        if let Some(Value::Object(meta)) = map.get_mut("_meta") {
            meta.remove(era::META_SERVER_INFO);
        }
    }
    rewrite_result_kind(faults, method, map);
    if matches!(method, "prompts/list" | "resources/list") && faults.has(Fault::ListsPerConnection)
    {
        let key = if method == "prompts/list" {
            "prompts"
        } else {
            "resources"
        };
        if let Some(Value::Array(entries)) = map.get_mut(key) {
            entries.retain(|e| per_process_even(e["name"].as_str().unwrap_or("")));
        }
    }
    if method == "server/discover" && faults.has(Fault::CompletionsUndeclared) {
        if let Some(Value::Object(meta)) = map.get_mut("_meta") {
            meta.insert("mcp conform".into(), json!(true));
        }
    }
}

/// The faults on what kind of result a 2026-07-28 answer is: a resultType
/// nobody defines (`result-type-unknown`), an InputRequiredResult where
/// none may be (`input-required-on-completion`) or one that carries
/// nothing to act on (`input-required-hollow`).
fn rewrite_result_kind(faults: &Faults, method: &str, map: &mut serde_json::Map<String, Value>) {
    let complete = map.get("resultType").and_then(Value::as_str) == Some("complete");
    if method == "tools/call" && complete && faults.has(Fault::ResultTypeUnknown) {
        map.insert("resultType".into(), json!("done"));
    }
    if method == "completion/complete" && faults.has(Fault::InputRequiredOnCompletion) {
        map.remove("completion");
        map.insert("resultType".into(), json!("input_required"));
        map.insert(
            "inputRequests".into(),
            json!({"roots": {"method": "roots/list", "params": {}}}),
        );
    }
    if method == "prompts/get" && faults.has(Fault::InputRequiredHollow) {
        map.retain(|k, _| k == "_meta");
        map.insert("resultType".into(), json!("input_required"));
    }
}

/// Whether a name hashes even under a salt drawn once per process: what a
/// list that depends on the connection keeps (`lists-per-connection`).
fn per_process_even(name: &str) -> bool {
    use std::hash::BuildHasher;
    static SALT: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    SALT.get_or_init(Default::default)
        .hash_one(name)
        .is_multiple_of(2)
}

/// Messages a fault sends before a successful answer: a log message nobody
/// asked for (`log-without-log-level`) and a ping request of the server's
/// own (`server-ping-2026`).
pub fn before_answer(
    faults: &Faults,
    era: Era,
    method: &str,
    params: Option<&Value>,
    id: &Value,
) -> Vec<Value> {
    let mut out = Vec::new();
    if era != Era::Stateless {
        return out;
    }
    if method == "resources/list"
        && !era::has_log_level(params)
        && faults.has(Fault::LogWithoutLogLevel)
    {
        out.push(mcp_conform_protocol::jsonrpc::notification(
            "notifications/message",
            Some(json!({"level": "info", "logger": "mcp-conform-reference", "data": "listing resources"})),
        ));
    }
    if method == "tools/list" && faults.has(Fault::ServerCancels) {
        out.push(mcp_conform_protocol::jsonrpc::notification(
            "notifications/cancelled",
            Some(json!({"requestId": id, "reason": "mcp-conform reference fault"})),
        ));
    }
    if method == "tools/list" && faults.has(Fault::ServerPing2026) {
        out.push(mcp_conform_protocol::jsonrpc::request(
            json!(format!("reference-ping-{id}")),
            "ping",
            None,
        ));
    }
    out
}

/// `progress-not-increasing`: the last progress notification repeats the
/// value before it.
pub fn rewrite_progress(faults: &Faults, notes: &mut [Value]) {
    let [.., before, last] = notes else {
        return;
    };
    if faults.has(Fault::ProgressNotIncreasing) {
        if let (Some(p), Some(l)) = (
            before.pointer("/params/progress"),
            last.pointer_mut("/params/progress"),
        ) {
            *l = p.clone();
        }
    }
}

/// `cancel-answered`: a cancellation of a request the server never saw is
/// answered with an error.
pub fn answer_unknown_cancel(faults: &Faults, request_id: &Value) -> Vec<Value> {
    if !faults.has(Fault::CancelAnswered) {
        return Vec::new();
    }
    vec![error_response(
        Value::Null,
        codes::INVALID_PARAMS,
        &format!("no request with id {request_id} is in progress"),
        None,
    )]
}

/// The notifications a server handles; any other is one it does not know.
const KNOWN_NOTIFICATIONS: &[&str] = &[
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
];

/// `notification-answered`: a notification the server does not handle is
/// answered with -32601, as a request of that method would be.
pub fn answer_unknown_notification(faults: &Faults, method: &str) -> Vec<Value> {
    if KNOWN_NOTIFICATIONS.contains(&method) || !faults.has(Fault::NotificationAnswered) {
        return Vec::new();
    }
    vec![error_response(
        Value::Null,
        codes::METHOD_NOT_FOUND,
        &format!("Method not found: {method}"),
        None,
    )]
}

/// `invalid-request-silent`: a message that is not a valid Request is
/// dropped instead of answered with -32600; `invalid-request-no-id-silent`
/// drops only one that carries no id (read as a notification).
pub fn drop_invalid_request(faults: &Faults, value: &Value) -> bool {
    faults.has(Fault::InvalidRequestSilent)
        || (faults.has(Fault::InvalidRequestNoIdSilent) && value.get("id").is_none())
}

/// `id-zero-dropped`: a request with id 0 is read as having no id (a
/// falsy id), so as a notification, and gets no answer.
pub fn drop_id_zero(faults: &Faults, id: &Value) -> bool {
    id.as_i64() == Some(0) && faults.has(Fault::IdZeroDropped)
}

/// `progress-unrequested`: a `tools/call` that asked for no progress gets
/// a progress notification anyway, under a token it never sent.
pub fn unrequested_progress(faults: &Faults, method: &str, params: Option<&Value>) -> Vec<Value> {
    let asked = params
        .and_then(|p| p.pointer("/_meta/progressToken"))
        .is_some();
    if method != "tools/call" || asked || !faults.has(Fault::ProgressUnrequested) {
        return Vec::new();
    }
    vec![mcp_conform_protocol::jsonrpc::notification(
        "notifications/progress",
        Some(json!({"progressToken": 0, "progress": 1, "total": 2})),
    )]
}

/// The `id-as-float` fault: a number id is read into an `f64` and written
/// back from it.
fn number_as_float(id: &Value) -> Value {
    match id.as_f64() {
        Some(f) if id.is_number() => Value::from(f),
        _ => id.clone(),
    }
}

/// An integer id a double cannot hold exactly (the `id-large-dropped` fault).
fn beyond_double_precision(id: &Value) -> bool {
    rounded_through_double(id) != *id
}

/// The `id-large-lossy` fault: an integer id held in an `f64`, as a
/// JavaScript server holds it, and written back as an integer.
fn rounded_through_double(id: &Value) -> Value {
    match (id.as_i64(), id.as_u64()) {
        (Some(n), _) => Value::from(n as f64 as i64),
        (None, Some(n)) => Value::from(n as f64 as u64),
        _ => id.clone(),
    }
}

/// The `id-non-ascii-mangled` fault: a string id's UTF-8 bytes, each read
/// as one Latin-1 character.
fn latin1_mojibake(id: &Value) -> Value {
    match id {
        Value::String(s) => Value::String(s.bytes().map(char::from).collect()),
        other => other.clone(),
    }
}

/// The `wrong-id` fault: a string id made only of digits becomes a number.
fn digits_as_number(id: &Value) -> Value {
    match id {
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s
            .parse::<u64>()
            .map(Value::from)
            .unwrap_or_else(|_| id.clone()),
        _ => id.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_id_fault_only_touches_digit_strings() {
        assert_eq!(digits_as_number(&json!("42")), json!(42));
        assert_eq!(digits_as_number(&json!("a1")), json!("a1"));
        assert_eq!(digits_as_number(&json!(7)), json!(7));
        assert_eq!(latin1_mojibake(&json!("é")), json!("Ã©"));
    }

    #[test]
    fn the_clean_reply_id_is_the_request_id() {
        let none = Faults::none();
        for id in [json!("42"), json!(4711), json!(9_007_199_254_740_993u64)] {
            assert_eq!(reply_id(&none, &id), Some(id.clone()));
        }
        let dropped = Faults::from_iter([Fault::IdLargeDropped]);
        assert_eq!(reply_id(&dropped, &json!(9_007_199_254_740_993u64)), None);
        assert_eq!(reply_id(&dropped, &json!(7)), Some(json!(7)));
    }
}
