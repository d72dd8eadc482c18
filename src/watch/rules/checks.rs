//! The built-in check kinds a rule file picks from, and the checks on one
//! message's JSON-RPC envelope. Flow checks (what came before) live in
//! `flows.rs`, HTTP ones in `http.rs`, those judged when the watch ends in
//! `session_end.rs`.

use serde_json::Value;

use super::params::{integers, string, strings};
use super::{capability, describe, flows, http, selection, session_end, Ctx, Hit};
use crate::watch::trace::Msg;

/// A check kind with its parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    JsonMessage,
    JsonrpcVersion,
    RequestId,
    UniqueRequestId {
        session: bool,
    },
    ResponseMatchesRequest,
    NoResponseToNotification,
    ResultOrError,
    ErrorCodeInteger,
    ReservedErrorCodes {
        defined: Vec<i64>,
    },
    RetiredErrorCodes {
        codes: Vec<i64>,
    },
    ResultType,
    CacheHints {
        methods: Vec<String>,
    },
    PingEmpty,
    Flow(flows::Flow),
    Http(http::HttpCheck),
    /// Judged on each HTTP session when the watch ends, never per message.
    SessionEnd(session_end::SessionEndedWith),
    NeedsCapability(capability::NeedsCapability),
    /// No bare tool_descriptions read after MISSING_TOOL_SELECTION.
    BareReadNotRepeated,
}

/// Every kind name, for the error on an unknown one.
pub const KINDS: &[&str] = &[
    "json-message",
    "jsonrpc-version",
    "request-id",
    "unique-request-id",
    "response-matches-request",
    "no-response-to-notification",
    "result-or-error",
    "error-code-integer",
    "reserved-error-codes",
    "retired-error-codes",
    "result-type",
    "cache-hints",
    "ping-empty",
    "initialize-first",
    "initialized-before-requests",
    "no-requests-before-init-answer",
    "no-server-requests-before-initialized",
    "meta-field",
    "no-initialize-after-modern",
    "retry-supported-version",
    "cursor-with-query",
    "description-read-before-retry",
    "relist-same-query",
    "progress-token-known",
    "cancel-in-flight",
    "cancel-notified",
    "log-level-requested",
    "http-header-present",
    "http-header-matches",
    "http-accept",
    "http-session-id",
    "http-notification-status",
    "http-no-posted-responses",
    "http-param-headers",
    "http-no-get",
    "http-origin-malformed-403",
    "http-origin-foreign-served",
    "http-session-ended-with",
    "needs-capability",
    "bare-read-not-repeated",
];

/// Reads the parameters a kind needs from `with` (an object or null).
pub fn parse(kind: &str, with: &Value) -> Result<Check, String> {
    let check = match kind {
        "json-message" => Check::JsonMessage,
        "jsonrpc-version" => Check::JsonrpcVersion,
        "request-id" => Check::RequestId,
        "unique-request-id" => Check::UniqueRequestId {
            session: match string(with, "scope")?.as_str() {
                "session" => true,
                "outstanding" => false,
                other => {
                    return Err(format!(
                        "scope must be session or outstanding, not {other:?}"
                    ))
                }
            },
        },
        "response-matches-request" => Check::ResponseMatchesRequest,
        "no-response-to-notification" => Check::NoResponseToNotification,
        "result-or-error" => Check::ResultOrError,
        "error-code-integer" => Check::ErrorCodeInteger,
        "reserved-error-codes" => Check::ReservedErrorCodes {
            defined: integers(with, "defined")?,
        },
        "retired-error-codes" => Check::RetiredErrorCodes {
            codes: integers(with, "codes")?,
        },
        "result-type" => Check::ResultType,
        "cache-hints" => Check::CacheHints {
            methods: strings(with, "methods")?,
        },
        "ping-empty" => Check::PingEmpty,
        "bare-read-not-repeated" => Check::BareReadNotRepeated,
        other => {
            if let Some(flow) = flows::parse(other, with)? {
                Check::Flow(flow)
            } else if let Some(h) = http::parse(other, with)? {
                Check::Http(h)
            } else if let Some(e) = session_end::parse(other, with)? {
                Check::SessionEnd(e)
            } else if let Some(c) = capability::parse(other, with)? {
                Check::NeedsCapability(c)
            } else {
                return Err(format!(
                    "unknown check kind {other:?}; the kinds are: {}",
                    KINDS.join(", ")
                ));
            }
        }
    };
    Ok(check)
}

impl Check {
    /// The positions examined and the hits of a check that judges a
    /// conversation once it ended: when the watch ends, or once the client
    /// ended it on its own (none for the checks that judge each message as
    /// it comes).
    pub fn at_end(
        &self,
        conv: &crate::watch::trace::Conversation,
    ) -> (Vec<usize>, Vec<(usize, Hit)>) {
        match self {
            Check::Flow(flow) => flow.at_end(conv),
            Check::SessionEnd(e) => e.at_close(conv),
            _ => (Vec::new(), Vec::new()),
        }
    }

    /// Whether the check judges a whole conversation once it is complete.
    pub fn judges_whole(&self) -> bool {
        matches!(self, Check::Flow(flows::Flow::CancelNotified { .. }))
    }

    /// Whether the check judges each session when the watch ends, however
    /// it ended.
    pub fn judges_at_close(&self) -> bool {
        matches!(self, Check::SessionEnd(_))
    }

    pub fn run(&self, ctx: &Ctx<'_>, msg: &Msg) -> Vec<Hit> {
        let hit = match self {
            Check::JsonMessage => json_message(msg),
            Check::JsonrpcVersion => jsonrpc_version(msg),
            Check::RequestId => request_id(msg),
            Check::UniqueRequestId { session } => unique_request_id(ctx, msg, *session),
            Check::ResponseMatchesRequest => response_matches_request(ctx, msg),
            Check::NoResponseToNotification => no_response_to_notification(ctx, msg),
            Check::ResultOrError => result_or_error(msg),
            Check::ErrorCodeInteger => error_code_integer(msg),
            Check::ReservedErrorCodes { defined } => reserved_error_codes(msg, defined),
            Check::RetiredErrorCodes { codes } => retired_error_codes(msg, codes),
            Check::ResultType => result_type(msg),
            Check::CacheHints { methods } => cache_hints(ctx, msg, methods),
            Check::PingEmpty => ping_empty(ctx, msg),
            Check::Flow(f) => f.run(ctx, msg),
            Check::Http(h) => h.run(ctx, msg),
            Check::SessionEnd(_) => None,
            Check::NeedsCapability(c) => c.run(ctx, msg),
            Check::BareReadNotRepeated => selection::check(ctx, msg),
        };
        hit.into_iter().collect()
    }
}

fn json_message(msg: &Msg) -> Option<Hit> {
    // An HTTP answer without a body (202 Accepted) is no message.
    if msg.raw.is_empty() && msg.http.is_some() {
        return None;
    }
    match &msg.value {
        Some(Value::Object(_)) => None,
        Some(_) => Some(Hit::new("the line is JSON but not an object", vec![])),
        None => Some(Hit::new(
            format!(
                "the line is not JSON: {}",
                crate::report::console::one_line(&msg.raw, 80)
            ),
            vec![],
        )),
    }
}

fn jsonrpc_version(msg: &Msg) -> Option<Hit> {
    let v = msg.value.as_ref()?.as_object()?;
    match v.get("jsonrpc") {
        Some(Value::String(s)) if s == "2.0" => None,
        Some(other) => Some(Hit::new(
            format!("{} has jsonrpc {other}, not \"2.0\"", describe(msg)),
            vec![],
        )),
        None => Some(Hit::new(
            format!("{} has no jsonrpc member", describe(msg)),
            vec![],
        )),
    }
}

fn request_id(msg: &Msg) -> Option<Hit> {
    let id = msg.id().filter(|_| msg.method().is_some())?;
    let ok = id.is_string() || id.as_i64().is_some() || id.as_u64().is_some();
    (!ok).then(|| {
        Hit::new(
            format!(
                "request {} has id {id}: it must be a string or an integer, never null",
                msg.method().unwrap_or_default()
            ),
            vec![],
        )
    })
}

fn unique_request_id(ctx: &Ctx<'_>, msg: &Msg, session: bool) -> Option<Hit> {
    if !msg.is_request() {
        return None;
    }
    let id = msg.id()?;
    if let Some(p) = ctx.conv.pending(msg.from, id) {
        return Some(Hit::new(
            format!(
                "{} reuses the id of request {} at #{}, which is still waiting for its answer",
                describe(msg),
                p.method,
                p.pos
            ),
            vec![p.pos],
        ));
    }
    let first = ctx.conv.used_id(msg.from, id).filter(|_| session)?;
    Some(Hit::new(
        format!(
            "{} reuses an id this {} already used at #{first} in the same session",
            describe(msg),
            msg.from
        ),
        vec![first],
    ))
}

fn response_matches_request(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    if !msg.is_response() {
        return None;
    }
    let requester = msg.from.other();
    let id = msg.id().filter(|id| !id.is_null());
    let Some(id) = id else {
        // An error without an id answers a message whose id could not be read.
        if msg.error().is_some() {
            return None;
        }
        return Some(Hit::new(
            "a result without an id answers no request".to_string(),
            vec![],
        ));
    };
    if ctx.conv.pending(requester, id).is_some() {
        return None;
    }
    if let Some((at, req)) = ctx.conv.answered(requester, id) {
        if ctx.conv.reused(requester, id) {
            // The requester sent the id twice; each copy gets its answer.
            return None;
        }
        return Some(Hit::new(
            format!(
                "a second response to {requester} request {} (id {id}), already answered at #{at}",
                req.method
            ),
            vec![req.pos, *at],
        ));
    }
    Some(Hit::new(
        format!("a response with id {id}, which the {requester} never used for a request"),
        vec![],
    ))
}

fn no_response_to_notification(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    if !msg.is_response() || msg.id().is_some_and(|id| !id.is_null()) {
        return None;
    }
    let other = msg.from.other();
    // An error without an id answers a message whose id could not be read.
    if msg.error().is_some() && ctx.conv.unreadable(other) > 0 {
        return None;
    }
    let last = ctx
        .conv
        .msgs
        .iter()
        .rev()
        .find(|m| m.from == other && m.is_notification());
    let Some(last) = last else {
        // A result without an id answers no request: only a notification
        // could have prompted it.
        return msg.result().map(|_| {
            Hit::new(
                "a result without an id: it answers no request, and a notification gets no response".to_string(),
                vec![],
            )
        });
    };
    Some(Hit::new(
        format!(
            "a response without an id, with no message of the {other} left that it could answer but {} at #{}: a notification gets no response",
            describe(last),
            last.pos
        ),
        vec![last.pos],
    ))
}

fn result_or_error(msg: &Msg) -> Option<Hit> {
    let v = msg.value.as_ref()?.as_object()?;
    if v.contains_key("method") || !v.contains_key("id") {
        return None;
    }
    match (v.contains_key("result"), v.contains_key("error")) {
        (true, false) | (false, true) => None,
        (true, true) => Some(Hit::new(
            format!("{} carries both result and error", describe(msg)),
            vec![],
        )),
        (false, false) => Some(Hit::new(
            format!(
                "a message with id {} has neither method, result nor error",
                v.get("id").map(Value::to_string).unwrap_or_default()
            ),
            vec![],
        )),
    }
}

fn error_code_integer(msg: &Msg) -> Option<Hit> {
    let code = msg.error()?.get("code");
    match code {
        Some(c) if c.as_i64().is_some() => None,
        Some(c) => Some(Hit::new(
            format!(
                "{} has error.code {c}, which is not an integer",
                describe(msg)
            ),
            vec![],
        )),
        None => Some(Hit::new(
            format!("{} has no error.code", describe(msg)),
            vec![],
        )),
    }
}

fn reserved_error_codes(msg: &Msg, defined: &[i64]) -> Option<Hit> {
    let code = msg.error()?.get("code")?.as_i64()?;
    let reserved = (-32099..=-32020).contains(&code);
    (reserved && !defined.contains(&code)).then(|| {
        Hit::new(
            format!(
                "{} uses error code {code}, in the range -32020..-32099 reserved for codes the specification defines ({})",
                describe(msg),
                defined.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            ),
            vec![],
        )
    })
}

fn retired_error_codes(msg: &Msg, codes: &[i64]) -> Option<Hit> {
    let code = msg.error()?.get("code")?.as_i64()?;
    codes.contains(&code).then(|| {
        Hit::new(
            format!(
                "{} uses error code {code}, which this protocol version retired",
                describe(msg)
            ),
            vec![],
        )
    })
}

fn result_type(msg: &Msg) -> Option<Hit> {
    let result = msg.result()?;
    match result.get("resultType") {
        Some(Value::String(_)) => None,
        Some(other) => Some(Hit::new(
            format!("{} has resultType {other}, not a string", describe(msg)),
            vec![],
        )),
        None => Some(Hit::new(
            format!("{} has no resultType in its result", describe(msg)),
            vec![],
        )),
    }
}

fn cache_hints(ctx: &Ctx<'_>, msg: &Msg, methods: &[String]) -> Option<Hit> {
    let result = msg.result()?;
    let req = ctx.conv.pending(msg.from.other(), msg.id()?)?;
    if !methods.contains(&req.method) {
        return None;
    }
    if result.get("resultType").and_then(Value::as_str) != Some("complete") {
        return None;
    }
    let missing: Vec<&str> = ["ttlMs", "cacheScope"]
        .into_iter()
        .filter(|k| result.get(*k).is_none())
        .collect();
    (!missing.is_empty()).then(|| {
        Hit::new(
            format!(
                "the {} result answering #{} lacks {}",
                req.method,
                req.pos,
                missing.join(" and ")
            ),
            vec![req.pos],
        )
    })
}

fn ping_empty(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    let result = msg.result()?.as_object()?;
    let req = ctx.conv.pending(msg.from.other(), msg.id()?)?;
    if req.method != "ping" {
        return None;
    }
    let extra: Vec<&String> = result
        .keys()
        .filter(|k| *k != "_meta" && *k != "resultType")
        .collect();
    (!extra.is_empty()).then(|| {
        Hit::new(
            format!(
                "the answer to ping #{} is not empty: it has {}",
                req.pos,
                extra
                    .iter()
                    .map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            vec![req.pos],
        )
    })
}
