//! The MCP endpoint, `/mcp`.
//!
//! | Request | Answer |
//! |---|---|
//! | POST request, answer without notifications | 200 `application/json` |
//! | POST request whose answer comes with notifications (e.g. `conform/mutate`) | 200 `text/event-stream`: the notifications, then the response, then the stream ends |
//! | POST `subscriptions/listen` (2026-07-28) | 200 `text/event-stream`, open until the client leaves or the server stops (then the listen result) |
//! | POST notification or response | 202, empty body |
//! | POST body that is not JSON | 400, JSON-RPC -32700 |
//! | POST invalid message or batch (error without an id) | 400, JSON-RPC -32600 |
//! | POST answered with UnsupportedProtocolVersion / HeaderMismatch / MissingRequiredClientCapability | 400 (the 2026-07-28 schema requires it) |
//! | body over `--max-line` bytes | 413, JSON-RPC -32700 |
//! | `Content-Type` present and not JSON | 415 |
//! | `Accept` allows neither JSON nor SSE (or not SSE where only a stream will do) | 406 |
//! | `Origin` neither loopback nor `--allowed-origin` | 403 |
//! | stateful request without `Mcp-Session-Id` | 400, JSON-RPC -32600 saying so |
//! | unknown or ended `Mcp-Session-Id` | 404, JSON-RPC -32001 |
//! | `MCP-Protocol-Version` unsupported | 400, UnsupportedProtocolVersionError (-32022) |
//! | `MCP-Protocol-Version` ≠ the session's negotiated version | 400, JSON-RPC -32600 |
//! | 2026-07-28: header ≠ body (`MCP-Protocol-Version` vs `_meta`, `Mcp-Method`, `Mcp-Name`) or missing | 400, HeaderMismatchError (-32020) |
//! | 2026-07-28: a method the server does not implement | 404, JSON-RPC -32601 |
//! | 2026-07-28: `tools/call` whose `Mcp-Param-{Name}` headers (the tool's `x-mcp-header` parameters) are missing or differ | 400, HeaderMismatchError (-32020) |
//! | `initialize` when `--max-sessions` are open | 503 |
//! | GET with a session | 200 `text/event-stream`: list_changed caused by other sessions |
//! | GET in 2026-07-28 (no session, stateless version) | 405 (`subscriptions/listen` replaces it) |
//! | DELETE with a session | 204; the id is 404 afterwards |
//! | DELETE in 2026-07-28 (no session, stateless version) | 405 |
//! | `Mcp-Session-Id` on a 2026-07-28 request (stateless version header) | ignored |
//! | other methods | 405 |
//!
//! A stateful session is created by a successful `initialize` POSTed
//! without `Mcp-Session-Id`. A POST without one is stateless when it says
//! so: a 2026-07-28 `MCP-Protocol-Version` header or `_meta` version, or
//! `server/discover` (which any client may send to find versions). Each
//! stateless POST gets a fresh [`SessionState`], so nothing leaks between
//! requests and list results cannot vary per connection.

use super::body::{self, BodyError};
use super::held;
use super::param_values;
use super::sessions::{Listener, SessionEntry, STREAM_QUEUE};
use super::{json_response, rpc_error_status, App, Shared};
use crate::dispatch::{overlong_error, parse_error};
use crate::served_era::{self as era, META_SERVER_INFO, META_SUBSCRIPTION, META_VERSION};
use crate::session::{SessionState, Subscription};
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use mcp_conform_protocol::jsonrpc::{codes, decode_line, response};
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, watch};

pub const SESSION_HEADER: &str = "mcp-session-id";
pub const VERSION_HEADER: &str = "mcp-protocol-version";
pub const METHOD_HEADER: &str = "mcp-method";
pub const NAME_HEADER: &str = "mcp-name";

/// An unknown or ended session (implementation-defined range; the code
/// other SDKs use for the same condition).
pub const SESSION_NOT_FOUND: i64 = -32001;
/// The 2026-07-28 `HeaderMismatchError`.
pub const HEADER_MISMATCH: i64 = -32020;
/// Errors the 2026-07-28 schema says travel with HTTP 400.
const BAD_REQUEST_CODES: &[i64] = &[
    HEADER_MISMATCH,
    crate::error::MISSING_REQUIRED_CLIENT_CAPABILITY,
    crate::error::UNSUPPORTED_PROTOCOL_VERSION,
];

const LISTEN: &str = "subscriptions/listen";

/// Which answer formats the client's `Accept` allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Wants {
    json: bool,
    sse: bool,
}

fn accepts(headers: &HeaderMap) -> Wants {
    let Some(raw) = headers.get(header::ACCEPT) else {
        return Wants {
            json: true,
            sse: true,
        };
    };
    let mut w = Wants {
        json: false,
        sse: false,
    };
    for part in raw.to_str().unwrap_or("").split(',') {
        let media = part.split(';').next().unwrap_or("").trim();
        match media.to_ascii_lowercase().as_str() {
            "*/*" => {
                w.json = true;
                w.sse = true;
            }
            "application/*" | "application/json" => w.json = true,
            "text/*" | "text/event-stream" => w.sse = true,
            _ => {}
        }
    }
    w
}

/// A header as text; a value that is not visible ASCII is an error.
fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, String> {
    match headers.get(name) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(Some)
            .map_err(|_| format!("Bad Request: the {name} header is not visible ASCII")),
    }
}

/// The parts of a message the transport looks at before dispatching it.
struct Peek {
    /// The id of a request (a message with `method` and `id`).
    id: Option<Value>,
    method: Option<String>,
}

impl Peek {
    fn of(msg: &Value) -> Peek {
        let method = msg.get("method").and_then(Value::as_str).map(String::from);
        let id = method.as_ref().and_then(|_| msg.get("id")).cloned();
        Peek { id, method }
    }

    /// The id for error answers made by the transport.
    fn reply_id(&self) -> Value {
        self.id.clone().unwrap_or(Value::Null)
    }

    fn is(&self, method: &str) -> bool {
        self.method.as_deref() == Some(method)
    }
}

fn body_version(msg: &Value) -> Option<&str> {
    msg.get("params")?.get("_meta")?.get(META_VERSION)?.as_str()
}

fn bad_request(id: Value, message: &str) -> Response {
    rpc_error_status(
        StatusCode::BAD_REQUEST,
        id,
        codes::INVALID_REQUEST,
        message,
        None,
    )
}

fn missing_session(id: Value) -> Response {
    bad_request(
        id,
        "Bad Request: missing Mcp-Session-Id header. Send initialize (without the header) to open a session and carry the Mcp-Session-Id it returns on every later request; 2026-07-28 requests need no session but carry MCP-Protocol-Version: 2026-07-28.",
    )
}

fn session_not_found(id: Value) -> Response {
    rpc_error_status(
        StatusCode::NOT_FOUND,
        id,
        SESSION_NOT_FOUND,
        "Session not found: this Mcp-Session-Id is unknown, was deleted or expired; send initialize to open a new session",
        None,
    )
}

fn not_acceptable(id: Value, what: &str) -> Response {
    rpc_error_status(
        StatusCode::NOT_ACCEPTABLE,
        id,
        codes::INVALID_REQUEST,
        &format!("Not Acceptable: {what}"),
        None,
    )
}

fn header_mismatch(id: Value, message: String) -> Response {
    rpc_error_status(
        StatusCode::BAD_REQUEST,
        id,
        HEADER_MISMATCH,
        &format!("Header mismatch: {message}"),
        None,
    )
}

/// The rejection when the header disagrees with the session's negotiated
/// version (both must exist to disagree).
fn session_version_error(
    state: &SessionState,
    header: Option<&str>,
    id: Value,
) -> Option<Response> {
    match (header, state.protocol) {
        (Some(h), Some(agreed)) if h != agreed => Some(bad_request(
            id,
            &format!(
                "Bad Request: MCP-Protocol-Version header says {h}, but this session negotiated {agreed}"
            ),
        )),
        _ => None,
    }
}

/// The rejection of an unsupported `MCP-Protocol-Version` header.
fn version_header_error(version: Option<&str>, id: &Value) -> Option<Response> {
    match version {
        Some(v) if !era::supported().contains(&v) => Some(json_response(
            StatusCode::BAD_REQUEST,
            &era::unsupported(v).to_response(id.clone()),
        )),
        _ => None,
    }
}

pub async fn post(State(app): State<Shared>, headers: HeaderMap, body: Body) -> Response {
    let response = post_message(app.clone(), headers, body).await;
    app.server.layer().post_response(response)
}

async fn post_message(app: Shared, headers: HeaderMap, body: Body) -> Response {
    if !body::is_json(&headers) {
        return rpc_error_status(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Value::Null,
            codes::INVALID_REQUEST,
            "Unsupported Media Type: POST a JSON-RPC message with Content-Type: application/json",
            None,
        );
    }
    let wants = accepts(&headers);
    if !wants.json && !wants.sse {
        return not_acceptable(
            Value::Null,
            "Accept must allow application/json or text/event-stream",
        );
    }
    let bytes = match body::read(&headers, body, app.max_body).await {
        Ok(b) => b,
        Err(BodyError::TooLarge { limit }) => {
            return json_response(StatusCode::PAYLOAD_TOO_LARGE, &overlong_error(limit))
        }
        Err(BodyError::Broken(e)) => {
            return bad_request(Value::Null, &format!("Bad Request: cannot read body: {e}"))
        }
    };
    let msg = match decode_line(&bytes) {
        Ok(v) => v,
        Err(e) => return json_response(StatusCode::BAD_REQUEST, &parse_error(&e)),
    };
    let peek = Peek::of(&msg);
    if peek.is(LISTEN) && !wants.sse {
        return not_acceptable(
            peek.reply_id(),
            "subscriptions/listen answers with a stream: Accept must allow text/event-stream",
        );
    }
    let version = match header_str(&headers, VERSION_HEADER) {
        Ok(v) => v,
        Err(e) => return bad_request(peek.reply_id(), &e),
    };
    if !app.server.policy().http.version_header_ignored.on() {
        if let Some(r) = version_header_error(version, &peek.reply_id()) {
            return r;
        }
    }
    let session = match header_str(&headers, SESSION_HEADER) {
        // "An Mcp-Session-Id header on a request: ignore it" (MCP
        // 2026-07-28, Streamable HTTP, Backward Compatibility).
        Ok(Some(_)) if stateless_version(version) && !peek.is("initialize") => {
            if app.server.policy().http.session_id_honoured.on() {
                header_str(&headers, SESSION_HEADER)
            } else {
                Ok(None)
            }
        }
        other => other,
    };
    match session {
        Err(e) => bad_request(peek.reply_id(), &e),
        Ok(Some(key)) => in_session(&app, &session_key(&app, key), version, msg, &peek, wants),
        Ok(None) if peek.is("initialize") => initialize(&app, msg, &peek, wants),
        Ok(None) if is_stateless(version, &msg, &peek) => {
            stateless(&app, &headers, version, msg, &peek, wants)
        }
        Ok(None) if app.server.policy().http.session_optional.on() => {
            let mut state = app.server.new_session();
            answer(app.server.handle(&mut state, msg), wants)
        }
        Ok(None) => missing_session(peek.reply_id()),
    }
}

/// The session key a client's `Mcp-Session-Id` header names.
fn session_key<'a>(app: &App, key: &'a str) -> std::borrow::Cow<'a, str> {
    app.server.layer().session_id_in(key)
}

/// An `MCP-Protocol-Version` header naming a sessionless (2026-07-28) version.
fn stateless_version(version: Option<&str>) -> bool {
    version.is_some_and(|v| era::STATELESS.contains(&v))
}

fn is_stateless(version: Option<&str>, msg: &Value, peek: &Peek) -> bool {
    let stateless = |v: &str| era::STATELESS.contains(&v);
    version.is_some_and(stateless)
        || body_version(msg).is_some_and(stateless)
        || peek.is("server/discover")
}

fn in_session(
    app: &Shared,
    key: &str,
    version: Option<&str>,
    msg: Value,
    peek: &Peek,
    wants: Wants,
) -> Response {
    let Some(entry) = app.sessions.get(key) else {
        if app.server.policy().http.unknown_session_400.on() {
            return bad_request(peek.reply_id(), "Bad Request: unknown session");
        }
        return session_not_found(peek.reply_id());
    };
    let mut state = entry.state();
    let unsupported_ignored = app.server.policy().http.version_header_ignored.on()
        && version.is_some_and(|v| !era::supported().contains(&v));
    if !unsupported_ignored {
        if let Some(r) = session_version_error(&state, version, peek.reply_id()) {
            return r;
        }
    }
    let out = app.server.handle(&mut state, msg);
    let held = held::take(&mut state, held_id(peek), &out, false);
    let listen = take_deferred_listen(&mut state, peek, &out);
    drop(state);
    if let Some(held) = held {
        return held::stream(app, out, held);
    }
    match listen {
        Some(sub) => open_listen(app, Some(entry.key.clone()), sub, out),
        None => answer(out, wants),
    }
}

fn initialize(app: &Shared, msg: Value, peek: &Peek, wants: Wants) -> Response {
    if app.sessions.is_full() {
        return too_many_sessions(app, peek);
    }
    let mut state = app.server.new_session();
    let out = app.server.handle(&mut state, msg);
    if state.protocol.is_none() {
        // initialize failed (or was a notification): no session to keep.
        return answer(out, wants);
    }
    let entry = match app.sessions.open(state) {
        Ok(e) => e,
        Err(super::sessions::OpenError::Full(_)) => return too_many_sessions(app, peek),
        Err(super::sessions::OpenError::NoRandomness) => {
            return rpc_error_status(
                StatusCode::INTERNAL_SERVER_ERROR,
                peek.reply_id(),
                codes::INTERNAL_ERROR,
                "Internal error: no randomness for a session id",
                None,
            )
        }
    };
    let mut response = answer(out, wants);
    let shown = app.server.layer().session_id_out(&entry.key);
    if let Ok(v) = HeaderValue::from_str(&shown) {
        response.headers_mut().insert(SESSION_HEADER, v);
    }
    response
}

fn too_many_sessions(app: &App, peek: &Peek) -> Response {
    rpc_error_status(
        StatusCode::SERVICE_UNAVAILABLE,
        peek.reply_id(),
        crate::error::RATE_LIMITED,
        &format!(
            "Service Unavailable: {} sessions are open, the most this server keeps; DELETE unused ones or wait for them to expire",
            app.sessions.len()
        ),
        None,
    )
}

fn stateless(
    app: &Shared,
    headers: &HeaderMap,
    version: Option<&str>,
    msg: Value,
    peek: &Peek,
    wants: Wants,
) -> Response {
    if let Some(method) = &peek.method {
        let http = &app.server.policy().http;
        let checks = Checks {
            params: expected_params(app, &msg, method),
            decode: !http.name_not_decoded.on(),
            versions: !http.version_mismatch_ok.on(),
            version_required: !http.version_header_optional.on(),
            names: !http.name_unchecked.on(),
            raw_params: http.param_raw_accepted.on(),
        };
        if let Err(why) = check_stateless_headers(headers, version, &msg, method, &checks) {
            let mut r = header_mismatch(peek.reply_id(), why);
            if app.server.policy().http.header_mismatch_500.on() {
                *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            }
            return r;
        }
    }
    let mut state = app.server.new_session();
    let out = handle_sessionless(app, &mut state, msg);
    if let Some(held) = held::take(&mut state, held_id(peek), &out, true) {
        return held::stream(app, out, held);
    }
    match take_deferred_listen(&mut state, peek, &out) {
        Some(sub) => open_listen(app, None, sub, out),
        None => {
            let unknown = out.iter().any(|m| {
                m.pointer("/error/code").and_then(Value::as_i64) == Some(codes::METHOD_NOT_FOUND)
            });
            let refused_capability = out.iter().any(|m| {
                m.pointer("/error/code").and_then(Value::as_i64)
                    == Some(crate::error::MISSING_REQUIRED_CLIENT_CAPABILITY)
            });
            let mut r = answer(out, wants);
            if refused_capability && app.server.policy().http.capability_200.on() {
                *r.status_mut() = StatusCode::OK;
            }
            // "If the server does not implement the requested RPC method, it
            // MUST respond with 404 Not Found and a JSON-RPC error with code
            // -32601" (MCP 2026-07-28, Streamable HTTP).
            if unknown && !app.server.policy().http.unknown_method_200.on() {
                *r.status_mut() = StatusCode::NOT_FOUND;
            }
            r
        }
    }
}

/// Handles a request that has no session. With a rate limit, the shared
/// sessionless bucket is lent to it, and held meanwhile: such requests are
/// then handled one at a time.
fn handle_sessionless(app: &App, state: &mut SessionState, msg: Value) -> Vec<Value> {
    if state.bucket.is_none() {
        return app.server.handle(state, msg);
    }
    let mut shared = app.sessionless.lock().unwrap_or_else(|e| e.into_inner());
    std::mem::swap(&mut state.bucket, &mut *shared);
    let out = app.server.handle(state, msg);
    std::mem::swap(&mut state.bucket, &mut *shared);
    out
}

/// What a stateless POST's headers are checked against beyond the standard
/// headers: the `Mcp-Param-{Name}` values its tool's schema asks for, and
/// whether encoded values are decoded first (the `http-name-not-decoded`
/// fault compares them as sent).
struct Checks {
    params: Vec<(String, String)>,
    decode: bool,
    /// Whether the header version is compared with `_meta`'s (the
    /// `http-version-mismatch-ok` fault does not).
    versions: bool,
    /// Whether a request must carry `MCP-Protocol-Version` (the
    /// `http-version-header-optional` fault serves one without).
    version_required: bool,
    /// Whether `Mcp-Name` is compared with the body (the
    /// `http-name-unchecked` fault only asks that it be there).
    names: bool,
    /// Whether an `Mcp-Param` header's raw bytes are read as UTF-8 (the
    /// `http-param-raw-accepted` fault) instead of refused.
    raw_params: bool,
}

/// The `Mcp-Param-{Name}` headers a `tools/call` must carry: the values of
/// the parameters its tool's schema marks with `x-mcp-header`. The
/// `http-param-header-unchecked` fault checks none.
fn expected_params(app: &App, msg: &Value, method: &str) -> Vec<(String, String)> {
    let name = msg.pointer("/params/name").and_then(Value::as_str);
    let (Some(name), "tools/call") = (name, method) else {
        return Vec::new();
    };
    let snap = app.server.snapshot();
    let Some(doc) = snap.doc(name) else {
        return Vec::new();
    };
    let schema = snap.tool(doc).input_schema();
    let mut expected = param_values::expected(&schema, msg.pointer("/params/arguments"));
    if !expected.is_empty() && app.server.policy().http.param_header_unchecked.on() {
        return Vec::new();
    }
    let annotated = schema.get("properties").and_then(Value::as_object);
    let headers = annotated
        .into_iter()
        .flatten()
        .filter_map(|(_, p)| p.get("x-mcp-header").and_then(Value::as_str));
    let absent: Vec<String> = headers
        .filter(|h| !expected.iter().any(|(e, _)| e == h))
        .map(str::to_string)
        .collect();
    // `http-param-header-expected`: a parameter left out or null still
    // asks for its header ("Server MUST NOT expect the header").
    if !absent.is_empty() && app.server.policy().http.param_header_expected.on() {
        expected.extend(absent.into_iter().map(|h| (h, String::new())));
    }
    expected
}

/// A header value as the comparison reads it: decoded from the Base64
/// sentinel form when `decode` (a bad sentinel is a mismatch).
fn compared(header: &str, decode: bool) -> Option<String> {
    if decode {
        param_values::decoded(header)
    } else {
        Some(header.to_string())
    }
}

/// The 2026-07-28 header rules: `MCP-Protocol-Version` equals the body's
/// `_meta` version, `Mcp-Method` the body's method, and `Mcp-Name` the
/// tool or prompt name (or resource URI) where the method has one. A body
/// version the server does not support is left to the dispatcher, whose
/// UnsupportedProtocolVersionError says more than a mismatch would.
fn check_stateless_headers(
    headers: &HeaderMap,
    version: Option<&str>,
    msg: &Value,
    method: &str,
    checks: &Checks,
) -> Result<(), String> {
    let body = body_version(msg);
    match version {
        // Discovery must work for a client that does not know any version
        // yet; one that names its version in `_meta` knows the header too
        // ("Every POST request to the MCP endpoint MUST include an
        // MCP-Protocol-Version header", MCP 2026-07-28, Streamable HTTP).
        None if method == "server/discover" && body.is_none() => return Ok(()),
        None if !checks.version_required => {}
        None => return Err("missing MCP-Protocol-Version header".into()),
        Some(h) => {
            if let Some(b) = body.filter(|b| checks.versions && era::supported().contains(b)) {
                if b != h {
                    return Err(format!(
                        "MCP-Protocol-Version header is {h} but _meta[\"{META_VERSION}\"] is {b}"
                    ));
                }
            }
        }
    }
    match header_str(headers, METHOD_HEADER)? {
        None => return Err(format!("missing Mcp-Method header (expected {method})")),
        Some(h) if h != method => {
            return Err(format!(
                "Mcp-Method header is {h} but the body's method is {method}"
            ))
        }
        Some(_) => {}
    }
    let name = match method {
        "tools/call" | "prompts/get" => msg.pointer("/params/name"),
        "resources/read" => msg.pointer("/params/uri"),
        _ => None,
    };
    // A missing or mistyped name is the dispatcher's -32602 to give.
    if let Some(name) = name.and_then(Value::as_str) {
        match header_str(headers, NAME_HEADER)? {
            None => return Err(format!("missing Mcp-Name header (expected {name})")),
            Some(h) if checks.names && compared(h, checks.decode).as_deref() != Some(name) => {
                return Err(format!("Mcp-Name header is {h} but the body names {name}"))
            }
            Some(_) => {}
        }
    }
    for (param, expected) in &checks.params {
        let header = format!("mcp-param-{}", param.to_ascii_lowercase());
        let value = if checks.raw_params {
            headers
                .get(&header)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        } else {
            header_str(headers, &header)?.map(str::to_string)
        };
        match value.as_deref() {
            None => {
                return Err(format!(
                    "missing Mcp-Param-{param} header (the tool's x-mcp-header parameter is {expected} in the body)"
                ))
            }
            Some(h) if compared(h, checks.decode).as_deref() != Some(expected.as_str()) => {
                return Err(format!(
                    "Mcp-Param-{param} header is {h} but the body's value is {expected}"
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// When the message was a `subscriptions/listen` the dispatcher accepted
/// (it answered with the acknowledgement and deferred the response), takes
/// the subscription out of `state`: it lives with its stream from now on.
fn take_deferred_listen(
    state: &mut SessionState,
    peek: &Peek,
    out: &[Value],
) -> Option<Subscription> {
    let id = peek.id.as_ref().filter(|_| peek.is(LISTEN))?;
    let answered = out.iter().any(|m| m.get("id") == Some(id));
    if answered {
        return None;
    }
    let at = state.subscriptions.iter().position(|s| &s.id == id)?;
    Some(state.subscriptions.remove(at))
}

/// The id of a tools/call, which `--hold-calls` may hold.
fn held_id(peek: &Peek) -> Option<&Value> {
    peek.id.as_ref().filter(|_| peek.is("tools/call"))
}

fn is_response(m: &Value) -> bool {
    m.get("result").is_some() || m.get("error").is_some()
}

/// The status a dispatched answer travels with.
fn status_for(reply: &Value) -> StatusCode {
    let Some(error) = reply.get("error") else {
        return StatusCode::OK;
    };
    let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
    // An error without an id answers a message that could not be taken
    // as a request at all (invalid, batch): the POST itself was bad.
    // A 2026-07-28 request without a required `_meta` field: "On HTTP, the
    // response status MUST be 400 Bad Request" (MCP 2026-07-28, Basic, `_meta`).
    let malformed = code == codes::INVALID_PARAMS && error.pointer("/data/missing").is_some();
    if BAD_REQUEST_CODES.contains(&code) || malformed || reply.get("id").is_none_or(Value::is_null)
    {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    }
}

/// Frames the dispatcher's messages: 202 for none, JSON for a lone
/// response, SSE (notifications first, the response last) when
/// notifications come with it and the client accepts a stream.
fn answer(mut out: Vec<Value>, wants: Wants) -> Response {
    let Some(at) = out.iter().position(is_response) else {
        if out.is_empty() {
            return StatusCode::ACCEPTED.into_response();
        }
        // Only notifications (not produced today): still deliver them.
        return sse_once(out);
    };
    let status = status_for(&out[at]);
    let streams = wants.sse && (!wants.json || out.len() > 1);
    if status != StatusCode::OK || !streams {
        return json_response(status, &out[at]);
    }
    let reply = out.remove(at);
    out.push(reply);
    sse_once(out)
}

fn event(message: &Value) -> Result<Event, Infallible> {
    Ok(Event::default().event("message").data(message.to_string()))
}

/// A finite SSE answer.
fn sse_once(messages: Vec<Value>) -> Response {
    let events: Vec<Result<Event, Infallible>> = messages.iter().map(event).collect();
    Sse::new(futures::stream::iter(events)).into_response()
}

/// What keeps a long-lived stream registered; dropped with the stream when
/// the client disconnects.
enum Registration {
    Get {
        app: Shared,
        entry: Arc<SessionEntry>,
        serial: u64,
    },
    Listen {
        app: Shared,
        key: u64,
    },
}

impl Drop for Registration {
    fn drop(&mut self) {
        match self {
            Registration::Get { app, entry, serial } => app.sessions.detach_stream(entry, *serial),
            Registration::Listen { app, key } => app.listeners.remove(*key),
        }
    }
}

struct Feed {
    rx: mpsc::Receiver<Value>,
    shutdown: watch::Receiver<bool>,
    /// Sent when the server stops (the listen result), then the stream ends.
    farewell: Option<Value>,
    done: bool,
    _registration: Registration,
}

/// `initial` messages, then whatever the registry queues, until the queue
/// closes (session ended), the server stops, or the client leaves.
fn live_stream(
    initial: Vec<Value>,
    feed: Feed,
) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static {
    let head = futures::stream::iter(initial.iter().map(event).collect::<Vec<_>>());
    let tail = futures::stream::unfold(feed, |mut f| async move {
        // `done`: the farewell went out; `wait_for` would fire again.
        if f.done {
            return None;
        }
        let next = tokio::select! {
            biased;
            m = f.rx.recv() => m,
            _ = f.shutdown.wait_for(|stop| *stop) => {
                f.done = true;
                f.farewell.take()
            }
        };
        next.map(|v| (event(&v), f))
    });
    head.chain(tail)
}

fn open_listen(
    app: &Shared,
    owner: Option<String>,
    sub: Subscription,
    out: Vec<Value>,
) -> Response {
    let id = sub.id.clone();
    let mut state = app.server.new_session();
    state.subscriptions.push(sub);
    let (tx, rx) = mpsc::channel(STREAM_QUEUE);
    let key = app.listeners.add(Listener {
        owner,
        state: Mutex::new(state),
        tx,
    });
    let farewell = response(
        id.clone(),
        json!({
            "resultType": "complete",
            "_meta": {META_SUBSCRIPTION: id, META_SERVER_INFO: era::server_info()},
        }),
    );
    let feed = Feed {
        rx,
        shutdown: app.shutdown.clone(),
        farewell: Some(farewell),
        done: false,
        _registration: Registration::Listen {
            app: Arc::clone(app),
            key,
        },
    };
    Sse::new(live_stream(out, feed))
        .keep_alive(KeepAlive::default())
        .into_response()
}

pub async fn get(State(app): State<Shared>, headers: HeaderMap) -> Response {
    let version = match header_str(&headers, VERSION_HEADER) {
        Ok(v) => v,
        Err(e) => return bad_request(Value::Null, &e),
    };
    if let Some(r) = version_header_error(version, &Value::Null) {
        return r;
    }
    if app.server.policy().http.get_json.on() {
        return json_response(StatusCode::OK, &json!({}));
    }
    let key = match header_str(&headers, SESSION_HEADER) {
        Err(e) => return bad_request(Value::Null, &e),
        Ok(Some(key)) => session_key(&app, key),
        Ok(None) if stateless_version(version) => {
            return method_not_allowed(
                "Method Not Allowed: 2026-07-28 has no GET stream; POST subscriptions/listen to receive notifications",
            )
        }
        Ok(None) => return missing_session(Value::Null),
    };
    let Some(entry) = app.sessions.get(&key) else {
        return session_not_found(Value::Null);
    };
    if let Some(r) = session_version_error(&entry.state(), version, Value::Null) {
        return r;
    }
    if !accepts(&headers).sse {
        return not_acceptable(
            Value::Null,
            "GET opens an event stream: Accept must allow text/event-stream",
        );
    }
    let (serial, rx) = app.sessions.attach_stream(&entry);
    let feed = Feed {
        rx,
        shutdown: app.shutdown.clone(),
        farewell: None,
        done: false,
        _registration: Registration::Get {
            app: Arc::clone(&app),
            entry,
            serial,
        },
    };
    Sse::new(live_stream(Vec::new(), feed))
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// 405 with `Allow: POST`: what a 2026-07-28 server answers a GET or
/// DELETE ("respond with 405 Method Not Allowed", MCP 2026-07-28,
/// Streamable HTTP, Backward Compatibility).
fn method_not_allowed(message: &str) -> Response {
    let mut r = rpc_error_status(
        StatusCode::METHOD_NOT_ALLOWED,
        Value::Null,
        codes::INVALID_REQUEST,
        message,
        None,
    );
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    r
}

pub async fn delete(State(app): State<Shared>, headers: HeaderMap) -> Response {
    let version = header_str(&headers, VERSION_HEADER).ok().flatten();
    let key = match header_str(&headers, SESSION_HEADER) {
        Err(e) => return bad_request(Value::Null, &e),
        Ok(None) if stateless_version(version) && !app.server.policy().http.delete_400.on() => {
            return method_not_allowed("Method Not Allowed: 2026-07-28 has no sessions to delete")
        }
        Ok(Some(key)) => session_key(&app, key),
        Ok(None) => return missing_session(Value::Null),
    };
    if app.server.policy().http.delete_keeps_session.on() && app.sessions.get(&key).is_some() {
        return StatusCode::NO_CONTENT.into_response();
    }
    if app.sessions.close(&key).is_none() {
        return session_not_found(Value::Null);
    }
    app.listeners.remove_owned_by(&key);
    StatusCode::NO_CONTENT.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn reads_accept() {
        let both = Wants {
            json: true,
            sse: true,
        };
        assert_eq!(accepts(&HeaderMap::new()), both);
        assert_eq!(
            accepts(&headers(&[(
                "accept",
                "application/json, text/event-stream"
            )])),
            both
        );
        assert_eq!(
            accepts(&headers(&[("accept", "application/json;q=0.9")])),
            Wants {
                json: true,
                sse: false
            }
        );
        assert_eq!(
            accepts(&headers(&[("accept", "text/html")])),
            Wants {
                json: false,
                sse: false
            }
        );
    }

    #[test]
    fn stateless_header_rules() {
        let checks = Checks {
            params: Vec::new(),
            decode: true,
            versions: true,
            version_required: true,
            names: true,
            raw_params: false,
        };
        let checks = &checks;
        let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "page_get", "_meta": {META_VERSION: "2026-07-28"}}});
        let good = headers(&[("mcp-method", "tools/call"), ("mcp-name", "page_get")]);
        assert_eq!(
            check_stateless_headers(&good, Some("2026-07-28"), &msg, "tools/call", checks),
            Ok(())
        );
        let wrong_version =
            check_stateless_headers(&good, Some("2025-11-25"), &msg, "tools/call", checks);
        assert!(wrong_version.is_err_and(|e| e.contains("_meta")));
        let wrong_method = headers(&[("mcp-method", "tools/list"), ("mcp-name", "page_get")]);
        assert!(check_stateless_headers(
            &wrong_method,
            Some("2026-07-28"),
            &msg,
            "tools/call",
            checks
        )
        .is_err_and(|e| e.contains("Mcp-Method")));
        let no_name = headers(&[("mcp-method", "tools/call")]);
        assert!(
            check_stateless_headers(&no_name, Some("2026-07-28"), &msg, "tools/call", checks)
                .is_err_and(|e| e.contains("Mcp-Name"))
        );
        let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"});
        assert_eq!(
            check_stateless_headers(
                &HeaderMap::new(),
                None,
                &discover,
                "server/discover",
                checks
            ),
            Ok(())
        );
        // A client that names its version in `_meta` sends the header too.
        let versioned = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
            "params": {"_meta": {META_VERSION: "2026-07-28"}}});
        assert!(check_stateless_headers(
            &HeaderMap::new(),
            None,
            &versioned,
            "server/discover",
            checks
        )
        .is_err_and(|e| e.contains("MCP-Protocol-Version")));
        // An encoded Mcp-Name is decoded; an Mcp-Param header must match.
        let encoded = headers(&[
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?cGFnZV9nZXQ=?="),
            ("mcp-param-region", "us-west1"),
        ]);
        let region = Checks {
            params: vec![("Region".into(), "us-west1".into())],
            decode: true,
            versions: true,
            version_required: true,
            names: true,
            raw_params: false,
        };
        assert_eq!(
            check_stateless_headers(&encoded, Some("2026-07-28"), &msg, "tools/call", &region),
            Ok(())
        );
        let other = Checks {
            params: vec![("Region".into(), "eu-west1".into())],
            decode: true,
            versions: true,
            version_required: true,
            names: true,
            raw_params: false,
        };
        assert!(
            check_stateless_headers(&encoded, Some("2026-07-28"), &msg, "tools/call", &other)
                .is_err_and(|e| e.contains("Mcp-Param-Region"))
        );
        let raw = Checks {
            params: Vec::new(),
            decode: false,
            versions: true,
            version_required: true,
            names: true,
            raw_params: false,
        };
        assert!(
            check_stateless_headers(&encoded, Some("2026-07-28"), &msg, "tools/call", &raw)
                .is_err_and(|e| e.contains("Mcp-Name"))
        );
    }

    #[test]
    fn statuses() {
        assert_eq!(status_for(&json!({"id": 1, "result": {}})), StatusCode::OK);
        assert_eq!(
            status_for(&json!({"id": 1, "error": {"code": -32601}})),
            StatusCode::OK
        );
        assert_eq!(
            status_for(&json!({"id": 1, "error": {"code": -32022}})),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            status_for(&json!({"id": null, "error": {"code": -32600}})),
            StatusCode::BAD_REQUEST
        );
    }
}
