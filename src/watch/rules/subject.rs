//! What each check kind judges: whether a message is one its check
//! examines (a response, for a check on responses; a
//! notifications/cancelled, for a check on cancellations), and that
//! subject in words. A rule whose filter matched no message, or whose check
//! met no subject, was not exercised: the report says so instead of
//! calling it held.

use super::capability::NeedsCapability;
use super::checks::Check;
use super::flows::Flow;
use super::http::HttpCheck;
use super::{Checker, Ctx, Rule, Uses};
use crate::watch::trace::{Msg, Side};

/// Why `rule` judged nothing in the checker's conversation, in one line.
pub(super) fn unexercised_reason(checker: &Checker, rule: &Rule, uses: Uses) -> String {
    let conv = &checker.conv;
    let side = rule.side;
    if !conv.msgs.iter().any(|m| m.from == side) {
        return format!("the {side} sent no message");
    }
    if uses.applied == 0 {
        match (rule.transport.as_deref(), checker.http) {
            (Some("http"), false) => return "over stdio; the rule holds over HTTP only".into(),
            (Some("stdio"), true) => return "over HTTP; the rule holds over stdio only".into(),
            _ => {}
        }
        if !rule.eras.is_empty() {
            let era = conv.era().map_or_else(
                || "no known version".to_string(),
                |e| format!("version {e}"),
            );
            return format!(
                "the conversation speaks {era}; the rule holds in {} only",
                rule.eras.join(", ")
            );
        }
    }
    if rule.check.judges_at_close() && !checker.closed {
        return "the rule judges each HTTP session when `mcp-conform watch` ends; a client scenario's conversation ends with the scenario, not when the client leaves".into();
    }
    if rule.check.judges_whole() && !checker.finished {
        return "the rule judges a conversation once the client has ended it, and a watched one is never known to be whole".into();
    }
    format!(
        "no {side} message here is {} ({} {side} messages looked at)",
        rule.check.subject(),
        uses.applied
    )
}

impl Check {
    /// Whether `msg` (already past the rule's side, era and transport
    /// filter) is one this check examines. The test mirrors the first
    /// guards of each check: a check that returns early on a message did
    /// not examine it.
    pub fn examines(&self, ctx: &Ctx<'_>, msg: &Msg) -> bool {
        match self {
            Check::JsonMessage => !(msg.raw.is_empty() && msg.http.is_some()),
            Check::JsonrpcVersion => msg.value.as_ref().is_some_and(|v| v.is_object()),
            Check::RequestId | Check::UniqueRequestId { .. } => msg.is_request(),
            Check::ResponseMatchesRequest | Check::NoResponseToNotification => msg.is_response(),
            Check::ResultOrError => msg
                .value
                .as_ref()
                .and_then(|v| v.as_object())
                .is_some_and(|o| o.contains_key("id") && !o.contains_key("method")),
            Check::ErrorCodeInteger => msg.error().is_some(),
            Check::ReservedErrorCodes { .. } | Check::RetiredErrorCodes { .. } => msg
                .error()
                .and_then(|e| e.get("code"))
                .is_some_and(|c| c.as_i64().is_some()),
            Check::ResultType => msg.result().is_some(),
            Check::CacheHints { methods } => answers(ctx, msg, |m| methods.iter().any(|x| x == m)),
            Check::PingEmpty => answers(ctx, msg, |m| m == "ping"),
            Check::Flow(f) => f.examines(ctx, msg),
            Check::Http(h) => h.examines(ctx, msg),
            // Judged when the watch ends (`at_end`), never per message.
            Check::SessionEnd(_) => false,
            Check::NeedsCapability(c) => c.examines(ctx, msg),
            Check::BareReadNotRepeated => {
                msg.from == Side::Client
                    && msg.is_request()
                    && msg.method() == Some("resources/read")
            }
        }
    }

    /// The messages this check examines, in words, for the line of a rule
    /// that met none.
    pub fn subject(&self) -> String {
        let s = match self {
            Check::JsonMessage => "a line with a body",
            Check::JsonrpcVersion => "a JSON object",
            Check::RequestId | Check::UniqueRequestId { .. } => "a request",
            Check::ResponseMatchesRequest | Check::NoResponseToNotification => "a response",
            Check::ResultOrError => "a message with an id and no method",
            Check::ErrorCodeInteger => "an error response",
            Check::ReservedErrorCodes { .. } | Check::RetiredErrorCodes { .. } => {
                "an error response with an integer code"
            }
            Check::ResultType => "a result",
            Check::CacheHints { methods } => {
                return format!("an answer to {}", methods.join(", "));
            }
            Check::PingEmpty => "an answer to a ping",
            Check::Flow(f) => return f.subject(),
            Check::Http(h) => return h.subject(),
            Check::SessionEnd(e) => return e.subject(),
            Check::NeedsCapability(c) => {
                return match c.param {
                    Some(_) => format!("a {} request after the handshake answer", c.method),
                    None => "a request after the handshake answer".to_string(),
                };
            }
            Check::BareReadNotRepeated => "a resources/read request",
        };
        s.to_string()
    }
}

/// Whether `msg` answers a request of the other side, still waiting,
/// whose method `pick` accepts.
fn answers(ctx: &Ctx<'_>, msg: &Msg, pick: impl Fn(&str) -> bool) -> bool {
    msg.result().is_some()
        && msg
            .id()
            .and_then(|id| ctx.conv.pending(msg.from.other(), id))
            .is_some_and(|p| pick(&p.method))
}

impl Flow {
    fn examines(&self, ctx: &Ctx<'_>, msg: &Msg) -> bool {
        let conv = ctx.conv;
        let request = msg.is_request();
        match self {
            Flow::InitializeFirst => request,
            Flow::InitializedBeforeRequests => {
                request && conv.initialize_answered.is_some() && !conv.modern
            }
            Flow::NoRequestsBeforeInitAnswer => request && conv.initialize_sent.is_some(),
            Flow::NoServerRequestsBeforeInitialized => {
                request && conv.initialize_sent.is_some() && !conv.modern
            }
            Flow::MetaField { .. } => request && (conv.modern || msg.meta_version().is_some()),
            Flow::NoInitializeAfterModern => request && msg.method() == Some("initialize"),
            Flow::RetrySupportedVersion => {
                request && msg.meta_version().is_some() && !conv.refused_versions.is_empty()
            }
            Flow::CursorWithQuery { methods, .. } => {
                request
                    && msg.method().is_some_and(|m| methods.iter().any(|x| x == m))
                    && msg.params().and_then(|p| p.get("cursor")).is_some()
            }
            Flow::DescriptionReadBeforeRetry => {
                request
                    && msg.method() == Some("tools/call")
                    && msg
                        .params()
                        .and_then(|p| p.get("name"))
                        .and_then(|n| n.as_str())
                        .is_some_and(|n| conv.pd_required.contains_key(n))
            }
            Flow::RelistSameQuery { .. } => {
                request
                    && msg.method() == Some("tools/list")
                    && conv.msgs.iter().any(|m| {
                        m.from != msg.from && m.method() == Some("notifications/tools/list_changed")
                    })
            }
            Flow::ProgressTokenKnown => msg.method() == Some("notifications/progress"),
            Flow::CancelInFlight { .. } => {
                msg.method() == Some("notifications/cancelled") && !request
            }
            // Judged on the whole conversation (`at_end`), never per message.
            Flow::CancelNotified { .. } => false,
            Flow::LogLevelRequested => msg.method() == Some("notifications/message") && conv.modern,
        }
    }

    fn subject(&self) -> String {
        let s = match self {
            Flow::InitializeFirst => "a request",
            Flow::InitializedBeforeRequests => "a request after the initialize answer",
            Flow::NoRequestsBeforeInitAnswer => "a request after an initialize request",
            Flow::NoServerRequestsBeforeInitialized => "a request after an initialize request",
            Flow::MetaField { .. } => "a 2026-07-28 request",
            Flow::NoInitializeAfterModern => "an initialize request",
            Flow::RetrySupportedVersion => {
                "a request naming a version after an UnsupportedProtocolVersion answer"
            }
            Flow::CursorWithQuery { methods, .. } => {
                return format!("a {} request with a cursor", methods.join(" or "));
            }
            Flow::DescriptionReadBeforeRetry => {
                "a tools/call of a tool refused with TOOL_DESCRIPTION_REQUIRED"
            }
            Flow::RelistSameQuery { .. } => "a tools/list after notifications/tools/list_changed",
            Flow::ProgressTokenKnown => "a notifications/progress",
            Flow::CancelInFlight { .. } => "a notifications/cancelled",
            Flow::CancelNotified { methods } => {
                return format!(
                    "a {} request left unanswered while the client went on",
                    methods.join(" or ")
                );
            }
            Flow::LogLevelRequested => "a 2026-07-28 notifications/message",
        };
        s.to_string()
    }
}

impl HttpCheck {
    fn examines(&self, ctx: &Ctx<'_>, msg: &Msg) -> bool {
        let Some(http) = msg.http.as_ref() else {
            return false;
        };
        let posted = msg.from == Side::Client && http.method == "POST" && msg.value.is_some();
        match self {
            HttpCheck::NoGet => msg.from == Side::Client,
            HttpCheck::OriginMalformed403 | HttpCheck::OriginForeignServed => {
                msg.from == Side::Server
                    && super::http_request::request_of(ctx, msg)
                        .and_then(|r| r.http.as_ref())
                        .is_some_and(|h| h.header("origin").is_some())
            }
            HttpCheck::HeaderPresent {
                after_handshake, ..
            } => {
                posted
                    && (!after_handshake
                        || (ctx.conv.initialize_answered.is_some()
                            && msg.method() != Some("initialize")))
            }
            HttpCheck::HeaderMatches { .. } | HttpCheck::ParamHeaders => posted && msg.is_request(),
            HttpCheck::Accept | HttpCheck::NoPostedResponses => posted,
            HttpCheck::SessionId => posted && ctx.conv.http_session.is_some(),
            HttpCheck::NotificationStatus => {
                msg.from == Side::Server
                    && super::http_request::request_of(ctx, msg)
                        .is_some_and(|p| p.is_notification() || p.is_response())
            }
        }
    }

    fn subject(&self) -> String {
        let s = match self {
            HttpCheck::NoGet => "a client HTTP request",
            HttpCheck::OriginMalformed403 | HttpCheck::OriginForeignServed => {
                "an answer to a request carrying an Origin header"
            }
            HttpCheck::HeaderPresent {
                after_handshake: true,
                ..
            } => "a POST after the handshake",
            HttpCheck::HeaderPresent { .. } | HttpCheck::Accept | HttpCheck::NoPostedResponses => {
                "a POSTed message"
            }
            HttpCheck::HeaderMatches { .. } | HttpCheck::ParamHeaders => "a POSTed request",
            HttpCheck::SessionId => "a POST after the server issued Mcp-Session-Id",
            HttpCheck::NotificationStatus => "an answer to a POSTed notification or response",
        };
        s.to_string()
    }
}

impl NeedsCapability {
    /// Every request of the method after the handshake answer: one
    /// without the parameter is a client that did not use the feature,
    /// which is what the rule asks of it where the server did not declare it.
    fn examines(&self, ctx: &Ctx<'_>, msg: &Msg) -> bool {
        msg.from == Side::Client
            && msg.is_request()
            // A feature that is a method of its own: any request could have been it.
            && (self.param.is_none() || msg.method() == Some(self.method.as_str()))
            && (ctx.conv.initialize_answered.is_some() || ctx.conv.discovered.is_some())
    }
}
