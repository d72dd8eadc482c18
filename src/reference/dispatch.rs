//! From one incoming message to the messages that answer it:
//! JSON-RPC envelope checks, era selection, the method table, error
//! mapping and the faults that act on the envelope.

use super::error::{RpcError, NOT_INITIALIZED, RATE_LIMITED};
use super::faults::Fault;
use super::handlers::{self, Ctx};
use super::params::Params;
use super::served_era::{self as era, Era};
use super::server::Server;
use super::session::SessionState;
use crate::jsonrpc::{codes, decode_line, error_response, response, DecodeError, Message};
use serde_json::{json, Value};

type Handler = fn(&mut Ctx<'_>, &Params<'_>) -> Result<Value, RpcError>;

/// Whether a method needs a session opened by `initialize` when it arrives
/// without a stateless protocol version.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Gate {
    Always,
    Session,
}

const METHODS: &[(&str, Handler, Gate)] = &[
    ("initialize", handlers::base::initialize, Gate::Always),
    ("ping", handlers::base::ping, Gate::Always),
    ("server/discover", handlers::base::discover, Gate::Always),
    ("tools/list", handlers::tools::list, Gate::Session),
    ("tools/call", handlers::tools::call, Gate::Session),
    ("tools/search", handlers::search::tools, Gate::Session),
    ("prompts/list", handlers::prompts::list, Gate::Session),
    ("prompts/get", handlers::prompts::get, Gate::Session),
    ("prompts/search", handlers::search::prompts, Gate::Session),
    ("resources/list", handlers::progressive::list, Gate::Session),
    (
        "resources/templates/list",
        handlers::progressive::templates,
        Gate::Session,
    ),
    ("resources/read", handlers::progressive::read, Gate::Session),
    (
        "resources/search",
        handlers::search::resources,
        Gate::Session,
    ),
    ("groups/list", handlers::groups::groups, Gate::Session),
    ("tags/list", handlers::groups::tags, Gate::Session),
    ("tasks/list", handlers::tasks::list, Gate::Session),
    ("tasks/get", handlers::tasks::get, Gate::Session),
    ("conform/mutate", handlers::control::mutate, Gate::Session),
    (
        "logging/setLevel",
        handlers::utility::set_level,
        Gate::Session,
    ),
    (
        "completion/complete",
        handlers::utility::complete,
        Gate::Session,
    ),
];

/// Every request method the server knows (for tests and fuzzing).
pub fn known_methods() -> Vec<&'static str> {
    let mut m: Vec<&str> = METHODS.iter().map(|(name, _, _)| *name).collect();
    m.push("subscriptions/listen");
    m
}

/// The answer to a line that is not JSON.
pub fn parse_error(e: &DecodeError) -> Value {
    error_response(
        Value::Null,
        codes::PARSE_ERROR,
        &format!("Parse error: {e}"),
        None,
    )
}

/// The answer to a line longer than the framing cap.
pub fn overlong_error(limit: usize) -> Value {
    error_response(
        Value::Null,
        codes::PARSE_ERROR,
        &format!("Parse error: message exceeds {limit} bytes"),
        None,
    )
}

impl Server {
    /// Decodes one line and handles it.
    pub fn handle_line(&self, session: &mut SessionState, line: &[u8]) -> Vec<Value> {
        match decode_line(line) {
            Ok(value) => self.handle(session, value),
            Err(e) => vec![parse_error(&e)],
        }
    }

    /// Handles one decoded message: the response (for a request) followed
    /// by any notifications it caused. Never panics on any input.
    pub fn handle(&self, session: &mut SessionState, msg: Value) -> Vec<Value> {
        if msg.is_array() {
            // Every era this server speaks removed JSON-RPC batching.
            return vec![invalid_request(Value::Null, "batches are not supported")];
        }
        match Message::classify(msg) {
            Message::Invalid { value, reason } => vec![invalid_request(usable_id(&value), &reason)],
            Message::Request { id, method, params } => {
                if !valid_id(&id) {
                    return vec![invalid_request(
                        Value::Null,
                        "\"id\" must be a string or an integer",
                    )];
                }
                self.request(session, id, &method, params.as_ref())
            }
            Message::Notification { method, params } => {
                self.notification(session, &method, params.as_ref())
            }
            // The server sends no requests, so a response is never awaited.
            Message::Response { .. } | Message::Error { .. } => Vec::new(),
        }
    }

    fn request(
        &self,
        session: &mut SessionState,
        id: Value,
        method: &str,
        params: Option<&Value>,
    ) -> Vec<Value> {
        if self.faults().has(Fault::IdLargeDropped) && beyond_double_precision(&id) {
            return Vec::new();
        }
        let reply_id = if self.faults().has(Fault::WrongId) {
            digits_as_number(&id)
        } else if self.faults().has(Fault::IdAsFloat) {
            number_as_float(&id)
        } else if self.faults().has(Fault::IdLargeLossy) {
            rounded_through_double(&id)
        } else {
            id.clone()
        };
        if let Some(bucket) = session.bucket.as_mut() {
            if let Err(ms) = bucket.take() {
                let e = if self.faults().has(Fault::RateLimitInternalError) {
                    RpcError::internal("Internal error")
                } else {
                    RpcError::new(
                        RATE_LIMITED,
                        format!("rate limit exceeded; retry after {ms} ms"),
                    )
                    .with_data(json!({"retryAfterMs": ms}))
                };
                return vec![e.to_response(reply_id)];
            }
        }
        let mut ctx = Ctx {
            server: self,
            snap: self.snapshot(),
            session,
            era: Era::Stateful,
            method,
            after: Vec::new(),
        };
        let mut out = Vec::new();
        match self.route(&mut ctx, &id, method, params) {
            Ok(Some(mut result)) => {
                out = progress(self.faults(), method, params);
                if ctx.era == Era::Stateless {
                    era::decorate_stateless(method, &mut result, self.list_ttl_ms());
                    self.stateless_result_faults(method, params, &mut result);
                    if self.faults().has(Fault::NoServerInfo) {
                        if let Some(Value::Object(meta)) = result.get_mut("_meta") {
                            meta.remove(era::META_SERVER_INFO);
                        }
                    }
                }
                if ctx.era == Era::Stateless
                    && method == "resources/list"
                    && !era::has_log_level(params)
                    && self.faults().has(Fault::LogWithoutLogLevel)
                {
                    out.push(crate::jsonrpc::notification(
                        "notifications/message",
                        Some(json!({"level": "info", "logger": "mcp-conform-reference", "data": "listing resources"})),
                    ));
                }
                if ctx.era == Era::Stateless
                    && method == "tools/list"
                    && self.faults().has(Fault::ServerPing2026)
                {
                    out.push(crate::jsonrpc::request(
                        json!(format!("reference-ping-{id}")),
                        "ping",
                        None,
                    ));
                }
                out.push(response(reply_id, result));
            }
            Ok(None) => {}
            Err(e) => {
                let mut response = self.map_error(e).to_response(reply_id);
                if self.faults().has(Fault::ErrorCodeString) {
                    if let Some(code) = response.pointer_mut("/error/code") {
                        *code = Value::String(code.to_string());
                    }
                }
                out.push(response);
            }
        }
        out.append(&mut ctx.after);
        out
    }

    /// Runs the handler; `Ok(None)` means the response is deferred
    /// (`subscriptions/listen`).
    fn route(
        &self,
        ctx: &mut Ctx<'_>,
        id: &Value,
        method: &str,
        params: Option<&Value>,
    ) -> Result<Option<Value>, RpcError> {
        let entry = METHODS.iter().find(|(name, _, _)| *name == method);
        let known = entry.is_some() || method == "subscriptions/listen";
        if !known || (method == "conform/mutate" && !self.config.control) {
            return Err(self.method_not_found(method));
        }
        let p = Params::new(params)?;
        ctx.era = match method {
            "initialize" => Era::Stateful,
            // Discovery is stateless whatever version it names, but one it
            // does not speak is refused like any other request's: "If the
            // server does not implement the requested version … it MUST
            // respond with an UnsupportedProtocolVersionError" (MCP
            // 2026-07-28, Versioning).
            "server/discover" => match era::classify(params) {
                Err(e) if !self.serves_any_version(params) => return Err(e),
                _ => Era::Stateless,
            },
            _ => match era::classify(params) {
                // `old-revision-served`: an older dated revision is taken
                // for the current one.
                Err(e) if self.faults().has(Fault::OldRevisionServed) => {
                    if era::older_revision(params) {
                        Era::Stateless
                    } else {
                        return Err(e);
                    }
                }
                other => other?,
            },
        };
        if ctx.era == Era::Stateless {
            self.require_meta(params)?;
            self.stateless_connection_faults(ctx, method)?;
        }
        let Some((_, handler, gate)) = entry else {
            // subscriptions/listen exists only in the stateless era.
            if ctx.era != Era::Stateless {
                return Err(self.method_not_found(method));
            }
            handlers::base::listen(ctx, id, &p)?;
            return Ok(None);
        };
        if *gate == Gate::Session && ctx.era == Era::Stateful && ctx.session.protocol.is_none() {
            return Err(RpcError::new(
                NOT_INITIALIZED,
                format!(
                    "Invalid Request: server not initialized; send initialize first, or carry _meta[\"{}\"] = \"{}\" for the stateless protocol",
                    era::META_VERSION,
                    era::V2026_07_28
                ),
            ));
        }
        handler(ctx, &p).map(Some)
    }

    /// Faults of a 2026-07-28 server that keeps state per connection: one
    /// that wants `server/discover` before anything else ("Servers MUST
    /// NOT rely on prior requests over the same connection", MCP
    /// 2026-07-28, Basic, Statelessness).
    fn stateless_connection_faults(&self, ctx: &mut Ctx<'_>, method: &str) -> Result<(), RpcError> {
        if method == "server/discover" {
            ctx.session.discovered = true;
        } else if !ctx.session.discovered && self.faults().has(Fault::StatelessNeedsDiscover) {
            return Err(RpcError::new(
                codes::INVALID_REQUEST,
                "Invalid Request: send server/discover on this connection first",
            ));
        }
        Ok(())
    }

    /// "A request missing any required field is malformed; the server MUST
    /// reject it with JSON-RPC error code -32602" (MCP 2026-07-28, Basic,
    /// `_meta`): the protocol version and the client capabilities.
    fn require_meta(&self, params: Option<&Value>) -> Result<(), RpcError> {
        let meta = params.and_then(|p| p.get("_meta"));
        let missing: Vec<&str> = [era::META_VERSION, era::META_CAPABILITIES]
            .into_iter()
            .filter(|k| meta.and_then(|m| m.get(*k)).is_none_or(Value::is_null))
            .collect();
        if missing.is_empty() || self.faults().has(Fault::MetaUnchecked) {
            return Ok(());
        }
        Err(RpcError::invalid_params(format!(
            "Invalid params: _meta lacks the required {}",
            missing.join(" and ")
        ))
        .with_data(json!({ "missing": missing })))
    }

    /// Whether a fault has server/discover serve the version it names
    /// although the server does not speak it.
    fn serves_any_version(&self, params: Option<&Value>) -> bool {
        self.faults().has(Fault::DiscoverAnyVersion)
            || (self.faults().has(Fault::OldRevisionServed) && era::older_revision(params))
    }

    fn method_not_found(&self, method: &str) -> RpcError {
        if self.faults().has(Fault::UnknownMethodInternalError) {
            RpcError::internal(format!("Internal error: no handler for {method}"))
        } else {
            RpcError::method_not_found(method)
        }
    }

    /// The faults that break what 2026-07-28 asks of every result; each is
    /// asked about only where it can act.
    fn stateless_result_faults(&self, method: &str, params: Option<&Value>, result: &mut Value) {
        let Value::Object(map) = result else {
            return;
        };
        if !matches!(method, "tools/list" | "server/discover")
            && self.faults().has(Fault::ResultTypeListsOnly)
        {
            map.remove("resultType");
        }
        if method == "resources/read" && self.faults().has(Fault::ReadNoCacheHints) {
            map.remove("ttlMs");
            map.remove("cacheScope");
        }
        let later_page = params.and_then(|p| p.get("cursor")).is_some();
        if later_page
            && map.contains_key("cacheScope")
            && self.faults().has(Fault::CacheScopeVaries)
        {
            map.insert("cacheScope".into(), json!("private"));
        }
    }

    fn map_error(&self, e: RpcError) -> RpcError {
        if e.kind == super::error::Kind::BadType && self.faults().has(Fault::BadParamsInternalError)
        {
            return RpcError::internal(format!("Internal error: {}", e.message));
        }
        e
    }

    /// A notification gets no answer (JSON-RPC 2.0 section 4.1), except
    /// under the `cancel-answered` fault.
    fn notification(
        &self,
        session: &mut SessionState,
        method: &str,
        params: Option<&Value>,
    ) -> Vec<Value> {
        if method != "notifications/cancelled" {
            return Vec::new();
        }
        // Cancelling a subscriptions/listen request closes that stream.
        let Some(request_id) = params.and_then(|p| p.get("requestId")) else {
            return Vec::new();
        };
        let known = session.subscriptions.iter().any(|s| &s.id == request_id);
        session.subscriptions.retain(|s| &s.id != request_id);
        if !known && self.faults().has(Fault::CancelAnswered) {
            return vec![error_response(
                Value::Null,
                codes::INVALID_PARAMS,
                &format!("no request with id {request_id} is in progress"),
                None,
            )];
        }
        Vec::new()
    }
}

/// The progress a `tools/call` with `_meta.progressToken` reports before
/// its answer: half done, then done (the same value twice under the
/// `progress-not-increasing` fault).
fn progress(faults: &super::faults::Faults, method: &str, params: Option<&Value>) -> Vec<Value> {
    let token = params.and_then(|p| p.pointer("/_meta/progressToken"));
    let (Some(token), "tools/call") = (token, method) else {
        return Vec::new();
    };
    let last = if faults.has(Fault::ProgressNotIncreasing) {
        1
    } else {
        2
    };
    [1, last]
        .into_iter()
        .map(|n| {
            crate::jsonrpc::notification(
                "notifications/progress",
                Some(json!({"progressToken": token, "progress": n, "total": 2})),
            )
        })
        .collect()
}

fn invalid_request(id: Value, reason: &str) -> Value {
    error_response(
        id,
        codes::INVALID_REQUEST,
        &format!("Invalid Request: {reason}"),
        None,
    )
}

fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// The id of an invalid message, when it has a usable one.
fn usable_id(value: &Value) -> Value {
    value
        .get("id")
        .filter(|id| valid_id(id))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The `id-as-float` fault: a number id is read into an `f64` and written
/// back from it.
fn number_as_float(id: &Value) -> Value {
    match id.as_f64() {
        Some(f) if id.is_number() => Value::from(f),
        _ => id.clone(),
    }
}

/// The `id-large-lossy` fault: an integer id held in an `f64`, as a
/// JavaScript server holds it, and written back as an integer.
/// An integer id a double cannot hold exactly (the `id-large-dropped` fault).
fn beyond_double_precision(id: &Value) -> bool {
    rounded_through_double(id) != *id
}

fn rounded_through_double(id: &Value) -> Value {
    match (id.as_i64(), id.as_u64()) {
        (Some(n), _) => Value::from(n as f64 as i64),
        (None, Some(n)) => Value::from(n as f64 as u64),
        _ => id.clone(),
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
    use crate::reference::catalog_file::Catalog;
    use crate::reference::server::Config;

    fn server() -> Server {
        let cat =
            Catalog::from_slice(include_bytes!("../../fixtures/catalogs/mini.json")).expect("mini");
        Server::new(cat, Config::default())
    }

    #[test]
    fn envelope_errors() {
        let s = server();
        let mut sess = s.new_session();
        let out = s.handle_line(&mut sess, b"{oops");
        assert_eq!(out[0]["error"]["code"], -32700);
        assert_eq!(out[0]["id"], Value::Null);
        let out = s.handle(&mut sess, json!([1, 2]));
        assert_eq!(out[0]["error"]["code"], -32600);
        let out = s.handle(&mut sess, json!({"jsonrpc": "2.0", "id": 3}));
        assert_eq!(out[0]["error"]["code"], -32600);
        assert_eq!(out[0]["id"], 3);
        let out = s.handle(
            &mut sess,
            json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
        );
        assert_eq!(out[0]["error"]["code"], -32600);
        let out = s.handle(
            &mut sess,
            json!({"jsonrpc": "2.0", "id": "7", "method": "nope"}),
        );
        assert_eq!(out[0]["error"]["code"], -32601);
        assert_eq!(out[0]["id"], "7");
    }

    #[test]
    fn requests_need_a_session_or_a_stateless_version() {
        let s = server();
        let mut sess = s.new_session();
        let out = s.handle(
            &mut sess,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        );
        assert_eq!(out[0]["error"]["code"], NOT_INITIALIZED);
        let stateless = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
            "params": {"_meta": {era::META_VERSION: era::V2026_07_28, era::META_CAPABILITIES: {}}}});
        let out = s.handle(&mut sess, stateless);
        assert_eq!(out[0]["result"]["resultType"], "complete");
        assert!(out[0]["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.len() == 14));
    }

    #[test]
    fn wrong_id_fault_only_touches_digit_strings() {
        assert_eq!(digits_as_number(&json!("42")), json!(42));
        assert_eq!(digits_as_number(&json!("a1")), json!("a1"));
        assert_eq!(digits_as_number(&json!(7)), json!(7));
    }
}
