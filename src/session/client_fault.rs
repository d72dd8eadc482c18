//! Client-side faults for the harness's own session, the way the reference
//! server has `--fault`: a testing aid that makes mcp-conform a client that
//! breaks one rule, so that each client trace rule of `mcp-conform watch`
//! can be shown failing. Off unless `--client-fault NAME` is given, which
//! hands the fault to every session the command builds
//! (`Session::with_client_fault`); every fault acts in
//! [`ClientFault::rewrite`], on the messages that session is about to send,
//! and nowhere else (an HTTP header fault on its connection's requests).

use std::str::FromStr;

use serde_json::{json, Value};

use crate::transport::header_fault::HeaderFault;

/// One defect of the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientFault {
    /// A cursor goes back without the `query` or `filter` it was issued for.
    CursorWithoutQuery,
    /// The first request after the handshake is sent twice with the same id.
    DuplicateId,
    /// `notifications/initialized` is followed by a response to it (id null).
    AnswerNotification,
    /// `notifications/initialized` is never sent.
    NoInitialized,
    /// 2026-07-28 requests after server/discover carry no `_meta`.
    NoMeta2026,
    /// The first request after the handshake says `"jsonrpc": "1.0"`.
    JsonrpcOne,
    /// The first request after the handshake is also sent with a null id.
    NullId,
    /// A response with both `result` and `error`, to no request.
    ResultAndError,
    /// An error response whose code is a string, to no request.
    ErrorCodeString,
    /// An error response with the undefined reserved code -32050, to no request.
    ReservedErrorCode,
    /// A result without `resultType`, to no request.
    ResultWithoutType,
    /// A progress notification for a token no server request carried.
    UnknownProgress,
    /// A cancellation of a request id the client never sent.
    CancelUnknown,
    /// The initialize request is cancelled right after it is sent.
    CancelInitialize,
    /// A request the client stops waiting for is abandoned without the
    /// notifications/cancelled that would name it.
    CancelSilently,
    /// A ping goes out before initialize.
    PingBeforeInitialize,
    /// tools/list goes out before the initialize answer.
    RequestBeforeInitializeAnswer,
    /// A line that is not a JSON-RPC message (a bare JSON string) after the handshake.
    NotJsonRpc,
    /// A server's ping is answered with a result that is not empty.
    PingAnswerNotEmpty,
    /// A tools/list after the first one with a query or filter drops them
    /// (the re-list after notifications/tools/list_changed forgets the query).
    RelistWithoutQuery,
    /// After server/discover, an initialize goes out too (with the first
    /// request after the handshake).
    InitializeAfterDiscover,
    /// The first two 2026-07-28 requests after the handshake each go out
    /// beside a copy naming protocol version 2099-01-01, which the server
    /// refuses: the second names it again after the refusal.
    RetryRefusedVersion,
    /// The client driver uses `query`, `filter` and tools/search whatever
    /// the server's capabilities declare.
    IgnoreCapabilities,
    /// Refused with MISSING_TOOL_SELECTION, the driver sends the same bare
    /// tool_descriptions read again.
    RepeatBareRead,
    /// A header defect of every HTTP POST (see `transport::header_fault`).
    Http(HeaderFault),
}

impl ClientFault {
    pub const ALL: [ClientFault; 32] = [
        ClientFault::CursorWithoutQuery,
        ClientFault::DuplicateId,
        ClientFault::AnswerNotification,
        ClientFault::NoInitialized,
        ClientFault::NoMeta2026,
        ClientFault::JsonrpcOne,
        ClientFault::NullId,
        ClientFault::ResultAndError,
        ClientFault::ErrorCodeString,
        ClientFault::ReservedErrorCode,
        ClientFault::ResultWithoutType,
        ClientFault::UnknownProgress,
        ClientFault::CancelUnknown,
        ClientFault::CancelInitialize,
        ClientFault::CancelSilently,
        ClientFault::PingBeforeInitialize,
        ClientFault::RequestBeforeInitializeAnswer,
        ClientFault::NotJsonRpc,
        ClientFault::PingAnswerNotEmpty,
        ClientFault::RelistWithoutQuery,
        ClientFault::InitializeAfterDiscover,
        ClientFault::RetryRefusedVersion,
        ClientFault::IgnoreCapabilities,
        ClientFault::RepeatBareRead,
        ClientFault::Http(HeaderFault::NoAccept),
        ClientFault::Http(HeaderFault::NoSessionId),
        ClientFault::Http(HeaderFault::NoVersionHeader),
        ClientFault::Http(HeaderFault::VersionMismatch),
        ClientFault::Http(HeaderFault::WrongMethod),
        ClientFault::Http(HeaderFault::WrongName),
        ClientFault::Http(HeaderFault::NoParamHeaders),
        ClientFault::Http(HeaderFault::GetStream),
    ];

    pub fn name(self) -> &'static str {
        match self {
            ClientFault::CursorWithoutQuery => "cursor-without-query",
            ClientFault::DuplicateId => "duplicate-id",
            ClientFault::AnswerNotification => "answer-notification",
            ClientFault::NoInitialized => "no-initialized",
            ClientFault::NoMeta2026 => "no-meta-2026",
            ClientFault::JsonrpcOne => "jsonrpc-1",
            ClientFault::NullId => "null-id",
            ClientFault::ResultAndError => "result-and-error",
            ClientFault::ErrorCodeString => "error-code-string",
            ClientFault::ReservedErrorCode => "reserved-error-code",
            ClientFault::ResultWithoutType => "result-without-type",
            ClientFault::UnknownProgress => "unknown-progress",
            ClientFault::CancelUnknown => "cancel-unknown",
            ClientFault::CancelInitialize => "cancel-initialize",
            ClientFault::CancelSilently => "cancel-silently",
            ClientFault::PingBeforeInitialize => "ping-before-initialize",
            ClientFault::RequestBeforeInitializeAnswer => "request-before-initialize-answer",
            ClientFault::NotJsonRpc => "not-json-rpc",
            ClientFault::PingAnswerNotEmpty => "ping-answer-not-empty",
            ClientFault::RelistWithoutQuery => "relist-without-query",
            ClientFault::InitializeAfterDiscover => "initialize-after-discover",
            ClientFault::RetryRefusedVersion => "retry-refused-version",
            ClientFault::IgnoreCapabilities => "ignore-capabilities",
            ClientFault::RepeatBareRead => "repeat-bare-read",
            ClientFault::Http(HeaderFault::NoAccept) => "http-no-accept",
            ClientFault::Http(HeaderFault::NoSessionId) => "http-no-session-id",
            ClientFault::Http(HeaderFault::NoVersionHeader) => "http-no-version-header",
            ClientFault::Http(HeaderFault::VersionMismatch) => "http-version-mismatch",
            ClientFault::Http(HeaderFault::WrongMethod) => "http-wrong-method",
            ClientFault::Http(HeaderFault::WrongName) => "http-wrong-name",
            ClientFault::Http(HeaderFault::NoParamHeaders) => "http-no-param-headers",
            ClientFault::Http(HeaderFault::GetStream) => "http-get-stream",
        }
    }

    pub fn help(self) -> &'static str {
        match self {
            ClientFault::CursorWithoutQuery => {
                "a cursor goes back without the query or filter it was issued for"
            }
            ClientFault::DuplicateId => {
                "the first request after the handshake is sent twice with the same id"
            }
            ClientFault::AnswerNotification => {
                "notifications/initialized is followed by a response to it (id null)"
            }
            ClientFault::NoInitialized => "notifications/initialized is never sent",
            ClientFault::NoMeta2026 => "2026-07-28 requests after server/discover carry no _meta",
            ClientFault::JsonrpcOne => {
                "the first request after the handshake says \"jsonrpc\": \"1.0\""
            }
            ClientFault::NullId => {
                "the first request after the handshake is also sent with a null id"
            }
            ClientFault::ResultAndError => "a response with both result and error, to no request",
            ClientFault::ErrorCodeString => {
                "an error response whose code is a string, to no request"
            }
            ClientFault::ReservedErrorCode => {
                "an error response with the undefined reserved code -32050, to no request"
            }
            ClientFault::ResultWithoutType => "a result without resultType, to no request",
            ClientFault::UnknownProgress => {
                "a progress notification for a token no server request carried"
            }
            ClientFault::CancelUnknown => "a cancellation of a request id the client never sent",
            ClientFault::CancelInitialize => {
                "the initialize request is cancelled right after it is sent"
            }
            ClientFault::CancelSilently => {
                "a request the client stops waiting for gets no notifications/cancelled"
            }
            ClientFault::PingBeforeInitialize => "a ping goes out before initialize",
            ClientFault::RequestBeforeInitializeAnswer => {
                "tools/list goes out before the initialize answer"
            }
            ClientFault::NotJsonRpc => {
                "a line that is not a JSON-RPC message (a bare JSON string) after the handshake"
            }
            ClientFault::PingAnswerNotEmpty => {
                "a server's ping is answered with {\"status\": \"ok\"} instead of an empty result"
            }
            ClientFault::RelistWithoutQuery => {
                "a tools/list after the first one with a query or filter drops them"
            }
            ClientFault::InitializeAfterDiscover => {
                "after server/discover, an initialize goes out too"
            }
            ClientFault::RetryRefusedVersion => {
                "a 2026-07-28 request names a protocol version the server already refused"
            }
            ClientFault::IgnoreCapabilities => {
                "the driver sends query, filter and tools/search whatever the server declared"
            }
            ClientFault::RepeatBareRead => {
                "refused with MISSING_TOOL_SELECTION, the driver reads tool_descriptions bare again"
            }
            ClientFault::Http(HeaderFault::NoAccept) => "HTTP: Accept lists application/json only",
            ClientFault::Http(HeaderFault::NoSessionId) => "HTTP: no POST carries Mcp-Session-Id",
            ClientFault::Http(HeaderFault::NoVersionHeader) => {
                "HTTP: no POST carries MCP-Protocol-Version"
            }
            ClientFault::Http(HeaderFault::VersionMismatch) => {
                "HTTP: MCP-Protocol-Version says 2025-11-25 whatever the body's _meta says"
            }
            ClientFault::Http(HeaderFault::WrongMethod) => {
                "HTTP (2026-07-28): Mcp-Method names another method than the body"
            }
            ClientFault::Http(HeaderFault::WrongName) => {
                "HTTP (2026-07-28): Mcp-Name names another tool, prompt or resource than the body"
            }
            ClientFault::Http(HeaderFault::NoParamHeaders) => {
                "HTTP (2026-07-28): no Mcp-Param-{Name} header goes out for x-mcp-header parameters"
            }
            ClientFault::Http(HeaderFault::GetStream) => {
                "HTTP (2026-07-28): a GET to the MCP endpoint follows the first POST"
            }
        }
    }

    /// What the session sends instead of `msg`: nothing, `msg` changed, or
    /// `msg` and more. `state` remembers what the fault already did.
    pub fn rewrite(self, msg: Value, state: &mut FaultState) -> Vec<Value> {
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        let request = msg.get("id").is_some() && !method.is_empty();
        match self {
            ClientFault::CursorWithoutQuery => {
                let mut msg = msg;
                if let Some(params) = msg.get_mut("params").and_then(Value::as_object_mut) {
                    if params.contains_key("cursor") {
                        params.remove("query");
                        params.remove("filter");
                    }
                }
                vec![msg]
            }
            ClientFault::DuplicateId => {
                let handshake = matches!(method, "initialize" | "server/discover");
                if request && !handshake && !state.acted {
                    state.acted = true;
                    return vec![msg.clone(), msg];
                }
                vec![msg]
            }
            ClientFault::AnswerNotification if method == "notifications/initialized" => {
                vec![msg, json!({"jsonrpc": "2.0", "id": null, "result": {}})]
            }
            ClientFault::NoInitialized if method == "notifications/initialized" => Vec::new(),
            ClientFault::CancelSilently if method == "notifications/cancelled" => Vec::new(),
            ClientFault::RelistWithoutQuery if method == "tools/list" => {
                let mut msg = msg;
                if let Some(params) = msg.get_mut("params").and_then(Value::as_object_mut) {
                    let narrowed = params.contains_key("query") || params.contains_key("filter");
                    if narrowed && !params.contains_key("cursor") {
                        if state.listed_with_query {
                            params.remove("query");
                            params.remove("filter");
                        }
                        state.listed_with_query = true;
                    }
                }
                vec![msg]
            }
            // The session's only empty result is its answer to a ping.
            ClientFault::PingAnswerNotEmpty if msg.get("result") == Some(&json!({})) => {
                let mut msg = msg;
                msg["result"] = json!({"status": "ok"});
                vec![msg]
            }
            ClientFault::NoMeta2026 if request && method != "server/discover" => {
                let mut msg = msg;
                if let Some(params) = msg.get_mut("params").and_then(Value::as_object_mut) {
                    params.remove("_meta");
                }
                vec![msg]
            }
            _ => {
                let method = method.to_string();
                self.rewrite_more(msg, &method, request, state)
            }
        }
    }

    /// The faults that add a message: around the initialize request, or
    /// once, beside the first request after the handshake.
    fn rewrite_more(
        self,
        msg: Value,
        method: &str,
        request: bool,
        state: &mut FaultState,
    ) -> Vec<Value> {
        if method == "initialize" {
            return self.around_initialize(msg);
        }
        let handshake = matches!(method, "server/discover");
        if self == ClientFault::RetryRefusedVersion && request && !handshake {
            return refused_version_again(msg, state);
        }
        if !request || handshake || state.acted {
            return vec![msg];
        }
        if self == ClientFault::JsonrpcOne {
            state.acted = true;
            let mut msg = msg;
            msg["jsonrpc"] = json!("1.0");
            return vec![msg];
        }
        match self.beside_first_request(&msg) {
            Some(extra) => {
                state.acted = true;
                vec![msg, extra]
            }
            None => vec![msg],
        }
    }

    /// The initialize request, with what the fault sends before or after it.
    fn around_initialize(self, msg: Value) -> Vec<Value> {
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        match self {
            ClientFault::CancelInitialize => vec![
                msg,
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}),
            ],
            ClientFault::PingBeforeInitialize => vec![
                json!({"jsonrpc": "2.0", "id": "mcp-conform-fault-ping", "method": "ping"}),
                msg,
            ],
            ClientFault::RequestBeforeInitializeAnswer => vec![
                msg,
                json!({"jsonrpc": "2.0", "id": "mcp-conform-fault-early", "method": "tools/list"}),
            ],
            _ => vec![msg],
        }
    }

    /// The message the fault sends after `msg`, the first request after
    /// the handshake; None when the fault adds none.
    fn beside_first_request(self, msg: &Value) -> Option<Value> {
        let stray = |id: &str| json!({"jsonrpc": "2.0", "id": id});
        let extra = match self {
            ClientFault::NullId => {
                let mut copy = msg.clone();
                copy["id"] = Value::Null;
                copy
            }
            ClientFault::ResultAndError => {
                let mut m = stray("mcp-conform-fault");
                m["result"] = json!({});
                m["error"] = json!({"code": -32603, "message": "both"});
                m
            }
            ClientFault::ErrorCodeString => {
                let mut m = stray("mcp-conform-fault");
                m["error"] = json!({"code": "-32603", "message": "a string code"});
                m
            }
            ClientFault::ReservedErrorCode => {
                let mut m = stray("mcp-conform-fault");
                m["error"] = json!({"code": -32050, "message": "an undefined reserved code"});
                m
            }
            ClientFault::ResultWithoutType => {
                let mut m = stray("mcp-conform-fault");
                m["result"] = json!({});
                m
            }
            ClientFault::UnknownProgress => {
                json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "mcp-conform-fault-token", "progress": 1}})
            }
            ClientFault::CancelUnknown => {
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 987654321}})
            }
            ClientFault::NotJsonRpc => json!("this line is not a JSON-RPC message"),
            ClientFault::InitializeAfterDiscover if msg.pointer("/params/_meta").is_some() => {
                json!({
                "jsonrpc": "2.0", "id": "mcp-conform-fault-initialize", "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "mcp-conform", "version": env!("CARGO_PKG_VERSION")}}})
            }
            _ => return None,
        };
        Some(extra)
    }
}

/// `retry-refused-version`: the first two 2026-07-28 requests each go out
/// after a copy naming a version no server speaks; by the second, the
/// first copy's refusal has come back.
fn refused_version_again(msg: Value, state: &mut FaultState) -> Vec<Value> {
    if state.refused_copies >= 2 || msg.pointer("/params/_meta").is_none() {
        return vec![msg];
    }
    state.refused_copies += 1;
    let mut copy = msg.clone();
    copy["id"] = json!(format!(
        "mcp-conform-fault-version-{}",
        state.refused_copies
    ));
    copy["params"]["_meta"][crate::protocol::META_VERSION] = json!("2099-01-01");
    vec![copy, msg]
}

/// What a fault has done so far in one session.
#[derive(Debug, Default, Clone)]
pub struct FaultState {
    acted: bool,
    /// A tools/list with a query or filter has gone out (`relist-without-query`).
    listed_with_query: bool,
    /// Copies sent with a refused version (`retry-refused-version`).
    refused_copies: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown client fault {0:?}; the client faults are: {list}", list = names())]
pub struct UnknownClientFault(pub String);

fn names() -> String {
    ClientFault::ALL
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl FromStr for ClientFault {
    type Err = UnknownClientFault;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ClientFault::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownClientFault(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in ClientFault::ALL {
            assert_eq!(f.name().parse::<ClientFault>(), Ok(f));
        }
        assert!("nope".parse::<ClientFault>().is_err());
    }

    #[test]
    fn cursor_without_query_drops_the_query_of_a_next_page_only() {
        let mut st = FaultState::default();
        let first = json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"query":"x"}});
        let next = json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"query":"x","cursor":"c"}});
        let f = ClientFault::CursorWithoutQuery;
        assert_eq!(f.rewrite(first.clone(), &mut st), vec![first]);
        assert_eq!(
            f.rewrite(next, &mut st),
            vec![json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"c"}})]
        );
    }

    #[test]
    fn duplicate_id_sends_one_request_twice_once() {
        let mut st = FaultState::default();
        let req = json!({"jsonrpc":"2.0","id":3,"method":"tools/list"});
        let f = ClientFault::DuplicateId;
        assert_eq!(f.rewrite(req.clone(), &mut st).len(), 2);
        assert_eq!(f.rewrite(req, &mut st).len(), 1);
    }
}
