//! The conversation model: every message seen so far, which side sent it,
//! and the facts the trace rules read (outstanding requests, the era, the
//! cursors a side was given, progress tokens in flight). Pure: no I/O.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The newest stateless protocol version; a request naming it (or a later
/// one) in `_meta` speaks the modern era.
pub const MODERN: &str = "2026-07-28";
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// Who sent a message, and whose rule a finding breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Client,
    Server,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }

    pub fn other(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What HTTP carried a message: the request's method and headers for a
/// client message, the response's status and headers for a server message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HttpMeta {
    /// POST, GET or DELETE.
    pub method: String,
    /// The request's path (and query) as the client sent it; an answer
    /// carries its request's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Header names in lower case, in the order they came.
    pub headers: Vec<(String, String)>,
    /// Which exchange (one HTTP request and its response) it belongs to.
    pub exchange: u64,
}

impl HttpMeta {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One message of the conversation, as it crossed the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct Msg {
    /// 1-based position in the transcript.
    pub pos: usize,
    pub from: Side,
    /// Milliseconds since the conversation began.
    pub at_ms: u64,
    /// The text as relayed (one line, without its newline).
    pub raw: String,
    /// The parsed message; None when the text is not JSON.
    pub value: Option<Value>,
    pub http: Option<HttpMeta>,
}

impl Msg {
    pub fn new(pos: usize, from: Side, at_ms: u64, raw: String, http: Option<HttpMeta>) -> Self {
        let value = serde_json::from_str(&raw).ok();
        Self {
            pos,
            from,
            at_ms,
            raw,
            value,
            http,
        }
    }

    pub fn method(&self) -> Option<&str> {
        self.value.as_ref()?.get("method")?.as_str()
    }

    pub fn id(&self) -> Option<&Value> {
        self.value.as_ref()?.get("id")
    }

    pub fn params(&self) -> Option<&Value> {
        self.value.as_ref()?.get("params")
    }

    /// A request: a method and an `id` member (even a bad one).
    pub fn is_request(&self) -> bool {
        self.method().is_some() && self.id().is_some()
    }

    pub fn is_notification(&self) -> bool {
        self.method().is_some() && self.id().is_none()
    }

    /// A response: `result` or `error`, and no method.
    pub fn is_response(&self) -> bool {
        let Some(v) = self.value.as_ref() else {
            return false;
        };
        v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some())
    }

    pub fn result(&self) -> Option<&Value> {
        self.value.as_ref()?.get("result")
    }

    pub fn error(&self) -> Option<&Value> {
        self.value.as_ref()?.get("error")
    }

    /// `params._meta[key]`.
    pub fn meta(&self, key: &str) -> Option<&Value> {
        self.params()?.get("_meta")?.get(key)
    }

    /// The protocol version the request names in `_meta`.
    pub fn meta_version(&self) -> Option<&str> {
        self.meta(META_VERSION)?.as_str()
    }
}

/// The key of an id: its JSON text, so `1` and `"1"` stay apart.
pub fn id_key(id: &Value) -> String {
    id.to_string()
}

/// A request waiting for its answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub pos: usize,
    pub method: String,
    pub params: Value,
}

/// Where a cursor came from: the request whose answer carried it.
#[derive(Debug, Clone, PartialEq)]
pub struct CursorOrigin {
    pub method: String,
    pub params: Value,
    pub pos: usize,
}

/// Everything the rules know about the conversation before the message
/// under check. [`Conversation::observe`] adds a message after the rules ran.
#[derive(Debug, Default)]
pub struct Conversation {
    pub msgs: Vec<Msg>,
    /// Requests of each side not answered yet, by id.
    pending: HashMap<(Side, String), Pending>,
    /// Every request id each side has used, with its first position.
    ever: HashMap<(Side, String), usize>,
    /// Requests answered, by (requesting side, id), with the answer's position.
    answered: HashMap<(Side, String), (usize, Pending)>,
    /// The client spoke the modern era (a `_meta` version, or a server/discover answered).
    pub modern: bool,
    /// The version the initialize handshake agreed on.
    pub negotiated: Option<String>,
    /// The version the client's initialize asked for (the era until answered).
    pub offered: Option<String>,
    pub initialize_sent: Option<usize>,
    pub initialize_answered: Option<usize>,
    pub initialized_sent: Option<usize>,
    /// The server/discover result's supportedVersions, when one came.
    pub discovered: Option<Vec<String>>,
    /// The handshake answer (initialize or server/discover result).
    pub server_info: Value,
    /// Cursors each side was given, with their origin.
    cursors: HashMap<(Side, String), CursorOrigin>,
    /// Versions the server refused with -32022, and the versions it offered.
    pub refused_versions: Vec<(String, Vec<String>, usize)>,
    /// Mcp-Session-Id the server issued on HTTP.
    pub http_session: Option<String>,
    /// Tools the server refused with TOOL_DESCRIPTION_REQUIRED, by name,
    /// with the position of the refusal.
    pub pd_required: HashMap<String, usize>,
    /// Tools whose description the client read, and where.
    pub pd_read: HashMap<String, usize>,
    notified_methods: HashSet<String>,
    /// Request ids a side used again while the first was still waiting.
    reused: HashSet<(Side, String)>,
    /// Messages of each side that no id can be read from (not JSON, not a
    /// valid request), not yet answered by an error without an id.
    unreadable: HashMap<Side, usize>,
}

impl Conversation {
    /// The request `id` of `side` that is still waiting for an answer.
    pub fn pending(&self, side: Side, id: &Value) -> Option<&Pending> {
        self.pending.get(&(side, id_key(id)))
    }

    /// Every request of `side` waiting for an answer.
    pub fn pending_of(&self, side: Side) -> impl Iterator<Item = &Pending> {
        self.pending
            .iter()
            .filter(move |((s, _), _)| *s == side)
            .map(|(_, p)| p)
    }

    /// Where `side` first used request id `id`, if it did.
    pub fn used_id(&self, side: Side, id: &Value) -> Option<usize> {
        self.ever.get(&(side, id_key(id))).copied()
    }

    /// The answer already given to request `id` of `side`.
    pub fn answered(&self, side: Side, id: &Value) -> Option<&(usize, Pending)> {
        self.answered.get(&(side, id_key(id)))
    }

    /// Where `side` was given `cursor`.
    pub fn cursor_origin(&self, side: Side, cursor: &str) -> Option<&CursorOrigin> {
        self.cursors.get(&(side, cursor.to_string()))
    }

    /// The last message before the current one from `side`.
    pub fn last_from(&self, side: Side) -> Option<&Msg> {
        self.msgs.iter().rev().find(|m| m.from == side)
    }

    /// Whether `side` sent request id `id` again while it was waiting.
    pub fn reused(&self, side: Side, id: &Value) -> bool {
        self.reused.contains(&(side, id_key(id)))
    }

    /// Messages of `side` whose id could not be read, still owed an error
    /// without an id.
    pub fn unreadable(&self, side: Side) -> usize {
        self.unreadable.get(&side).copied().unwrap_or(0)
    }

    /// Whether `side` has ever sent a notification of `method`.
    pub fn has_notified(&self, method: &str) -> bool {
        self.notified_methods.contains(method)
    }

    /// The era as far as known: the modern version, the negotiated one,
    /// the one the client asked for, or None.
    pub fn era(&self) -> Option<String> {
        if self.modern {
            Some(MODERN.to_string())
        } else {
            self.negotiated.clone().or_else(|| self.offered.clone())
        }
    }

    /// Adds `msg` to the conversation (after the rules have seen it).
    pub fn observe(&mut self, msg: Msg) {
        if unreadable(&msg) {
            *self.unreadable.entry(msg.from).or_default() += 1;
        }
        if msg.is_response() && msg.id().is_none_or(Value::is_null) {
            if let Some(n) = self.unreadable.get_mut(&msg.from.other()) {
                *n = n.saturating_sub(1);
            }
        }
        if msg.is_request() {
            self.observe_request(&msg);
        } else if msg.is_response() {
            self.observe_response(&msg);
        } else if let Some(method) = msg.method() {
            self.notified_methods.insert(method.to_string());
            if method == "notifications/initialized" && msg.from == Side::Client {
                self.initialized_sent.get_or_insert(msg.pos);
            }
        }
        if let Some(http) = &msg.http {
            if msg.from == Side::Server {
                if let Some(id) = http.header("mcp-session-id") {
                    self.http_session.get_or_insert_with(|| id.to_string());
                }
            }
        }
        self.msgs.push(msg);
    }

    fn observe_request(&mut self, msg: &Msg) {
        let (Some(id), Some(method)) = (msg.id(), msg.method()) else {
            return;
        };
        let key = (msg.from, id_key(id));
        if self.pending.contains_key(&key) {
            self.reused.insert(key.clone());
        }
        self.ever.entry(key.clone()).or_insert(msg.pos);
        let params = msg.params().cloned().unwrap_or(Value::Null);
        if msg.from == Side::Client {
            if msg.meta_version().is_some_and(|v| v >= MODERN) {
                self.modern = true;
            }
            if method == "initialize" {
                self.initialize_sent.get_or_insert(msg.pos);
                let asked = params.get("protocolVersion").and_then(Value::as_str);
                self.offered = self.offered.take().or(asked.map(str::to_string));
            }
            if method == "resources/read" {
                self.note_description_read(&params, msg.pos);
            }
        }
        let pending = Pending {
            pos: msg.pos,
            method: method.to_string(),
            params,
        };
        self.pending.insert(key, pending);
    }

    fn observe_response(&mut self, msg: &Msg) {
        let Some(id) = msg.id() else { return };
        let key = (msg.from.other(), id_key(id));
        let Some(request) = self.pending.remove(&key) else {
            return;
        };
        if let Some(result) = msg.result() {
            self.learn_from_result(msg, &request, result);
        } else if let Some(error) = msg.error() {
            self.learn_from_error(msg, &request, error);
        }
        self.answered.insert(key, (msg.pos, request));
    }

    fn learn_from_result(&mut self, msg: &Msg, request: &Pending, result: &Value) {
        match request.method.as_str() {
            "initialize" if msg.from == Side::Server => {
                self.initialize_answered.get_or_insert(msg.pos);
                self.negotiated = result
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                self.server_info = result.clone();
            }
            "server/discover" if msg.from == Side::Server => {
                self.modern = true;
                self.discovered = result.get("supportedVersions").and_then(|v| {
                    v.as_array().map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                });
                self.server_info = result.clone();
            }
            _ => {}
        }
        if let Some(cursor) = result.get("nextCursor").and_then(Value::as_str) {
            let origin = CursorOrigin {
                method: request.method.clone(),
                params: request.params.clone(),
                pos: msg.pos,
            };
            self.cursors
                .insert((msg.from.other(), cursor.to_string()), origin);
        }
        if request.method == "tools/call"
            && result.get("isError") == Some(&Value::Bool(true))
            && marker_in(result)
        {
            self.note_description_required(request, msg.pos);
        }
    }

    fn learn_from_error(&mut self, msg: &Msg, request: &Pending, error: &Value) {
        if error.get("code").and_then(Value::as_i64) == Some(-32022) {
            let requested = request
                .params
                .pointer("/_meta/io.modelcontextprotocol~1protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let supported = error
                .pointer("/data/supported")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            self.refused_versions.push((requested, supported, msg.pos));
        }
        if request.method == "tools/call" && marker_in(error) {
            self.note_description_required(request, msg.pos);
        }
    }

    fn note_description_required(&mut self, request: &Pending, pos: usize) {
        if let Some(name) = request.params.get("name").and_then(Value::as_str) {
            self.pd_required.insert(name.to_string(), pos);
            self.pd_read.remove(name);
        }
    }

    /// A read of a `tool_descriptions` resource authorizes the tools its
    /// `tools` query parameter names.
    fn note_description_read(&mut self, params: &Value, pos: usize) {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return;
        };
        for name in described_tools(uri) {
            self.pd_read.insert(name, pos);
        }
    }
}

/// A message a receiver cannot read an id from, or that is no valid
/// request or notification: JSON-RPC answers it with an error whose id is null.
fn unreadable(msg: &Msg) -> bool {
    // A bodiless HTTP exchange (a GET, a 202 Accepted) carries no message.
    if msg.raw.is_empty() && msg.http.is_some() {
        return false;
    }
    let Some(v) = msg.value.as_ref().and_then(Value::as_object) else {
        return true;
    };
    if v.contains_key("result") || v.contains_key("error") {
        return false;
    }
    let method_ok = v.get("method").is_some_and(Value::is_string);
    let version_ok = v.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    let id_ok = v
        .get("id")
        .is_none_or(|id| id.is_string() || id.is_number());
    !(method_ok && version_ok && id_ok)
}

/// Whether a result or error carries the TOOL_DESCRIPTION_REQUIRED marker
/// anywhere a client can see it (code, data, message or text content).
pub fn marker_in(value: &Value) -> bool {
    value.to_string().contains("TOOL_DESCRIPTION_REQUIRED")
}

/// The tool names a `…tool_descriptions?tools=a,b` URI asks for.
pub fn described_tools(uri: &str) -> Vec<String> {
    let Some((path, query)) = uri.split_once('?') else {
        return Vec::new();
    };
    if !path.ends_with("tool_descriptions") {
        return Vec::new();
    }
    query
        .split('&')
        .filter_map(|pair| pair.strip_prefix("tools="))
        .flat_map(|list| list.split(','))
        .map(|n| percent_decode(n.trim()))
        .filter(|n| !n.is_empty())
        .collect()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(pos: usize, from: Side, text: &str) -> Msg {
        Msg::new(pos, from, 0, text.to_string(), None)
    }

    #[test]
    fn a_response_closes_the_request_of_the_other_side() {
        let mut c = Conversation::default();
        c.observe(msg(
            1,
            Side::Client,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        ));
        assert!(c.pending(Side::Client, &serde_json::json!(1)).is_some());
        c.observe(msg(
            2,
            Side::Server,
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":"c1"}}"#,
        ));
        assert!(c.pending(Side::Client, &serde_json::json!(1)).is_none());
        assert_eq!(
            c.cursor_origin(Side::Client, "c1")
                .map(|o| o.method.as_str()),
            Some("tools/list")
        );
    }

    #[test]
    fn description_reads_name_their_tools() {
        assert_eq!(
            described_tools("resource:///tool_descriptions?tools=a,b%5Fc"),
            vec!["a".to_string(), "b_c".to_string()]
        );
        assert!(described_tools("file:///x?tools=a").is_empty());
    }
}
