//! From one incoming message to the messages that answer it:
//! JSON-RPC envelope checks, era selection, the method table and error
//! mapping. The server's layer wraps each step (`server::Layer`): the
//! envelope around the request, and the answer around its handler.

use super::error::{RpcError, NOT_INITIALIZED, RATE_LIMITED};
use super::handlers::{self, Ctx};
use super::params::Params;
use super::served_era::{self as era, Era};
use super::server::Server;
use super::session::{Held, SessionState};
use mcp_conform_protocol::jsonrpc::{
    codes, decode_line, error_response, response, DecodeError, Message,
};
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
    /// `--list-changed-after-query`: whether this answer is the one the
    /// session's single list_changed goes with.
    fn announces_change(&self, ctx: &mut Ctx<'_>, method: &str, params: Option<&Value>) -> bool {
        let narrowed =
            params.is_some_and(|p| p.get("query").is_some() || p.get("filter").is_some());
        let fires = self.settings().list_changed_after_query
            && method == "tools/list"
            && ctx.era != Era::Stateless
            && narrowed
            && !ctx.session.change_announced;
        if fires {
            ctx.session.change_announced = true;
        }
        fires
    }

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
            Message::Invalid { value, .. } if self.layer().drop_invalid_request(&value) => {
                Vec::new()
            }
            Message::Invalid { value, reason } => vec![invalid_request(usable_id(&value), &reason)],
            Message::Request { id, .. } if self.layer().drop_id_zero(&id) => Vec::new(),
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
        let Some(reply_id) = self.layer().reply_id(&id) else {
            return Vec::new();
        };
        if let Some(bucket) = session.bucket.as_mut() {
            if let Err(ms) = bucket.take() {
                let e = RpcError::new(
                    RATE_LIMITED,
                    format!("rate limit exceeded; retry after {ms} ms"),
                )
                .with_data(json!({"retryAfterMs": ms}));
                let e = self.layer().rate_limited(e);
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
            Ok(Some(_)) if method == "tools/call" && self.settings().hold_calls => {
                ctx.session.held.push(Held { id, release: None });
            }
            Ok(Some(mut result)) => {
                out = progress(method, params);
                if !out.is_empty() {
                    self.layer().progress(&mut out);
                }
                out.extend(self.layer().unrequested_progress(method, params));
                if ctx.era == Era::Stateless {
                    era::decorate_stateless(method, &mut result, self.list_ttl_ms());
                    self.layer().stateless_result(method, params, &mut result);
                }
                out.extend(self.layer().before_answer(ctx.era, method, params, &id));
                if self.announces_change(&mut ctx, method, params) {
                    out.push(mcp_conform_protocol::jsonrpc::notification(
                        "notifications/tools/list_changed",
                        None,
                    ));
                }
                if method == "tools/list"
                    && ctx.era != Era::Stateless
                    && self.settings().ping_client
                {
                    out.push(mcp_conform_protocol::jsonrpc::request(
                        json!(format!("reference-ping-{id}")),
                        "ping",
                        None,
                    ));
                }
                out.push(response(reply_id, result));
            }
            Ok(None) => {}
            Err(e) => {
                let e = self.layer().error(e);
                let mut response = e.to_response(reply_id);
                self.layer().error_response(&mut response);
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
        if !known || (method == "conform/mutate" && !self.settings.control) {
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
                Err(e) if !self.layer().discover_serves_any_version(params) => return Err(e),
                _ => Era::Stateless,
            },
            _ => match era::classify(params) {
                Err(_) if self.layer().old_revision_served(params) => Era::Stateless,
                other => other?,
            },
        };
        if ctx.era == Era::Stateless {
            self.require_meta(params)?;
            self.layer().stateless_connection(ctx.session, method)?;
        }
        let Some((_, handler, gate)) = entry else {
            // subscriptions/listen exists only in the stateless era.
            if ctx.era != Era::Stateless {
                return Err(self.method_not_found(method));
            }
            handlers::base::listen(ctx, id, &p)?;
            self.layer().listen(ctx);
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
        if method == "ping" && ctx.era == Era::Stateful && !ctx.session.initialized {
            self.layer().early_ping(ctx)?;
        }
        let mut answer = handler(ctx, &p);
        self.layer().answer(ctx, params, &mut answer);
        answer.map(Some)
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
        if missing.is_empty() || self.policy().requests.meta_unchecked.on() {
            return Ok(());
        }
        Err(RpcError::invalid_params(format!(
            "Invalid params: _meta lacks the required {}",
            missing.join(" and ")
        ))
        .with_data(json!({ "missing": missing })))
    }

    fn method_not_found(&self, method: &str) -> RpcError {
        self.layer()
            .unknown_method(method, RpcError::method_not_found(method))
    }

    /// A notification gets no answer (JSON-RPC 2.0 section 4.1) unless the
    /// layer gives it one.
    fn notification(
        &self,
        session: &mut SessionState,
        method: &str,
        params: Option<&Value>,
    ) -> Vec<Value> {
        if method == "notifications/initialized" {
            session.initialized = true;
        }
        if method != "notifications/cancelled" {
            return self.layer().unknown_notification(method);
        }
        let Some(request_id) = params.and_then(|p| p.get("requestId")) else {
            return Vec::new();
        };
        // A held call is dropped unanswered: "Servers receiving cancellation
        // notifications SHOULD: … Not send a response for the cancelled
        // request" (MCP 2026-07-28, Cancellation, Behavior Requirements).
        if let Some(at) = session.held.iter().position(|h| &h.id == request_id) {
            session.held.remove(at);
            return Vec::new();
        }
        // Cancelling a subscriptions/listen request closes that stream.
        let known = session.subscriptions.iter().any(|s| &s.id == request_id);
        session.subscriptions.retain(|s| &s.id != request_id);
        if !known {
            return self.layer().unknown_cancel(request_id);
        }
        Vec::new()
    }
}

/// The progress a `tools/call` with `_meta.progressToken` reports before
/// its answer: half done, then done.
fn progress(method: &str, params: Option<&Value>) -> Vec<Value> {
    let token = params.and_then(|p| p.pointer("/_meta/progressToken"));
    let (Some(token), "tools/call") = (token, method) else {
        return Vec::new();
    };
    [1, 2]
        .into_iter()
        .map(|n| {
            mcp_conform_protocol::jsonrpc::notification(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog_file::Catalog;
    use crate::Config;

    fn server() -> Server {
        let cat = Catalog::from_slice(include_bytes!("../../../fixtures/catalogs/mini.json"))
            .expect("mini");
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
    fn a_held_call_gets_no_answer_and_its_cancellation_drops_it() {
        let cat = Catalog::from_slice(include_bytes!("../../../fixtures/catalogs/mini.json"))
            .expect("mini");
        let s = Server::new(
            cat,
            Config {
                hold_calls: true,
                ..Config::default()
            },
        );
        let mut sess = s.new_session();
        let call = |id: i64| {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "page_get", "arguments": {"page_id": "pg_1"},
                    "_meta": {era::META_VERSION: era::V2026_07_28, era::META_CAPABILITIES: {}}}})
        };
        assert!(s.handle(&mut sess, call(1)).is_empty());
        assert!(s.handle(&mut sess, call(2)).is_empty());
        assert_eq!(sess.held.len(), 2);
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1}});
        assert!(s.handle(&mut sess, cancel).is_empty());
        assert_eq!(sess.held.len(), 1);
        assert_eq!(sess.held[0].id, 2);
        // Other requests are answered as ever.
        let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
            "params": {"_meta": {era::META_VERSION: era::V2026_07_28, era::META_CAPABILITIES: {}}}});
        assert_eq!(s.handle(&mut sess, list)[0]["id"], 3);
    }
}
