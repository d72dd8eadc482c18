//! Checks on the Streamable HTTP envelope: the headers a client's POST
//! must carry and match against its body, and the status of a server's answer.

use serde_json::Value;

use super::http_request::{decode_sentinel, request_of};
use super::params::string;
use super::{describe, Ctx, Hit};
use crate::watch::trace::{Msg, Side};

#[derive(Debug, Clone, PartialEq)]
pub enum HttpCheck {
    /// A header every client POST carries (after the handshake, if so said).
    HeaderPresent {
        name: String,
        after_handshake: bool,
    },
    /// A header that must equal a body field: `method`, `name` (params.name
    /// or params.uri, of tools/call, resources/read, prompts/get) or
    /// `protocol-version` (the `_meta` version).
    HeaderMatches {
        name: String,
        field: String,
    },
    Accept,
    SessionId,
    NotificationStatus,
    NoPostedResponses,
    /// A tools/call mirrors its tool's `x-mcp-header` parameters.
    ParamHeaders,
    /// The client sends no GET to the MCP endpoint.
    NoGet,
    /// A request whose `Origin` is no origin at all is answered 403.
    OriginMalformed403,
    /// A request from a non-loopback `Origin` to a loopback host was
    /// served: whether the server allows that origin is its own list.
    OriginForeignServed,
}

pub fn parse(kind: &str, with: &Value) -> Result<Option<HttpCheck>, String> {
    let check = match kind {
        "http-header-present" => HttpCheck::HeaderPresent {
            name: string(with, "name")?,
            after_handshake: with
                .get("after_handshake")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        },
        "http-header-matches" => {
            let field = string(with, "field")?;
            if !matches!(field.as_str(), "method" | "name" | "protocol-version") {
                return Err(format!(
                    "`with.field` must be method, name or protocol-version, not {field:?}"
                ));
            }
            HttpCheck::HeaderMatches {
                name: string(with, "name")?,
                field,
            }
        }
        "http-accept" => HttpCheck::Accept,
        "http-session-id" => HttpCheck::SessionId,
        "http-notification-status" => HttpCheck::NotificationStatus,
        "http-no-posted-responses" => HttpCheck::NoPostedResponses,
        "http-param-headers" => HttpCheck::ParamHeaders,
        "http-no-get" => HttpCheck::NoGet,
        "http-origin-malformed-403" => HttpCheck::OriginMalformed403,
        "http-origin-foreign-served" => HttpCheck::OriginForeignServed,
        _ => return Ok(None),
    };
    Ok(Some(check))
}

impl HttpCheck {
    pub fn run(&self, ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
        let http = msg.http.as_ref()?;
        if *self == HttpCheck::NoGet {
            return (msg.from == Side::Client && http.method == "GET").then(|| {
                Hit::new(
                    format!(
                        "the client sent a GET to the MCP endpoint (Accept {:?}); 2026-07-28 has no GET stream, a client listens with subscriptions/listen",
                        http.header("accept").unwrap_or_default()
                    ),
                    vec![],
                )
            });
        }
        if matches!(
            self,
            HttpCheck::OriginMalformed403 | HttpCheck::OriginForeignServed
        ) {
            return super::origin::check(ctx, msg, *self == HttpCheck::OriginMalformed403);
        }
        if msg.from == Side::Client && (http.method != "POST" || msg.value.is_none()) {
            return None;
        }
        match self {
            HttpCheck::HeaderPresent {
                name,
                after_handshake,
            } => {
                if *after_handshake
                    && (ctx.conv.initialize_answered.is_none()
                        || msg.method() == Some("initialize"))
                {
                    return None;
                }
                http.header(name).is_none().then(|| {
                    Hit::new(
                        format!("the POST of {} has no {name} header", describe(msg)),
                        vec![],
                    )
                })
            }
            HttpCheck::HeaderMatches { name, field } => header_matches(msg, name, field),
            HttpCheck::Accept => {
                let accept = http.header("accept").unwrap_or_default();
                let both =
                    accept.contains("application/json") && accept.contains("text/event-stream");
                (!both).then(|| {
                    Hit::new(
                        format!(
                            "the POST of {} has Accept {accept:?}, which does not list both application/json and text/event-stream",
                            describe(msg)
                        ),
                        vec![],
                    )
                })
            }
            HttpCheck::SessionId => session_id(ctx, msg),
            HttpCheck::NotificationStatus => notification_status(ctx, msg),
            HttpCheck::ParamHeaders => super::param_headers::check(ctx, msg),
            HttpCheck::NoGet | HttpCheck::OriginMalformed403 | HttpCheck::OriginForeignServed => {
                None
            }
            HttpCheck::NoPostedResponses => msg.is_response().then(|| {
                Hit::new(
                    format!("the client POSTs a JSON-RPC {}", describe(msg)),
                    vec![],
                )
            }),
        }
    }
}

/// What the body says for `field`, if the field applies to this message.
fn body_value(msg: &Msg, field: &str) -> Option<String> {
    // The headers mirror requests only (MCP 2026-07-28, Standard Request Headers).
    if !msg.is_request() {
        return None;
    }
    match field {
        "method" => msg.method().map(str::to_string),
        "protocol-version" => msg.meta_version().map(str::to_string),
        _ => {
            let key = match msg.method()? {
                "tools/call" | "prompts/get" => "name",
                "resources/read" => "uri",
                _ => return None,
            };
            Some(msg.params()?.get(key)?.as_str()?.to_string())
        }
    }
}

fn header_matches(msg: &Msg, name: &str, field: &str) -> Option<Hit> {
    let expected = body_value(msg, field)?;
    let http = msg.http.as_ref()?;
    let Some(given) = http.header(name) else {
        return Some(Hit::new(
            format!("the POST of {} has no {name} header", describe(msg)),
            vec![],
        ));
    };
    let decoded = decode_sentinel(given).unwrap_or_else(|| given.to_string());
    (decoded != expected).then(|| {
        Hit::new(
            format!(
                "the POST of {} has {name}: {given:?}, but the body says {expected:?}",
                describe(msg)
            ),
            vec![],
        )
    })
}

fn session_id(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    let issued = ctx.conv.http_session.as_deref()?;
    if ctx.conv.modern || msg.method() == Some("initialize") {
        return None;
    }
    let given = msg.http.as_ref()?.header("mcp-session-id");
    (given != Some(issued)).then(|| {
        Hit::new(
            format!(
                "the POST of {} carries Mcp-Session-Id {:?}, not the {issued:?} the server issued",
                describe(msg),
                given.unwrap_or("(none)")
            ),
            vec![],
        )
    })
}

fn notification_status(ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
    let http = msg.http.as_ref()?;
    let posted = request_of(ctx, msg)?;
    if !(posted.is_notification() || posted.is_response()) {
        return None;
    }
    let status = http.status?;
    if !(200..300).contains(&status) {
        return None;
    }
    (status != 202 || !msg.raw.is_empty()).then(|| {
        Hit::new(
            format!(
                "the POST of {} at #{} is answered with status {status}{}, not 202 Accepted with no body",
                describe(posted),
                posted.pos,
                if msg.raw.is_empty() { "" } else { " and a body" }
            ),
            vec![posted.pos],
        )
    })
}
