//! Client-side faults for the harness's own session, the way the reference
//! server has `--fault`: a testing aid that makes mcp-conform a client that
//! breaks one rule, so that each client trace rule of `mcp-conform watch`
//! can be shown failing. Off unless `--client-fault NAME` is given; every
//! fault acts in [`ClientFault::rewrite`], on the messages the session is
//! about to send, and nowhere else.

use std::str::FromStr;
use std::sync::OnceLock;

use serde_json::{json, Value};

/// One defect of the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientFault {
    /// A cursor goes back without the `query` it was issued for.
    CursorWithoutQuery,
    /// The first request after the handshake is sent twice with the same id.
    DuplicateId,
    /// `notifications/initialized` is followed by a response to it (id null).
    AnswerNotification,
    /// `notifications/initialized` is never sent.
    NoInitialized,
    /// 2026-07-28 requests after server/discover carry no `_meta`.
    NoMeta2026,
}

impl ClientFault {
    pub const ALL: [ClientFault; 5] = [
        ClientFault::CursorWithoutQuery,
        ClientFault::DuplicateId,
        ClientFault::AnswerNotification,
        ClientFault::NoInitialized,
        ClientFault::NoMeta2026,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ClientFault::CursorWithoutQuery => "cursor-without-query",
            ClientFault::DuplicateId => "duplicate-id",
            ClientFault::AnswerNotification => "answer-notification",
            ClientFault::NoInitialized => "no-initialized",
            ClientFault::NoMeta2026 => "no-meta-2026",
        }
    }

    pub fn help(self) -> &'static str {
        match self {
            ClientFault::CursorWithoutQuery => {
                "a cursor goes back without the query it was issued for"
            }
            ClientFault::DuplicateId => {
                "the first request after the handshake is sent twice with the same id"
            }
            ClientFault::AnswerNotification => {
                "notifications/initialized is followed by a response to it (id null)"
            }
            ClientFault::NoInitialized => "notifications/initialized is never sent",
            ClientFault::NoMeta2026 => "2026-07-28 requests after server/discover carry no _meta",
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
            ClientFault::NoMeta2026 if request && method != "server/discover" => {
                let mut msg = msg;
                if let Some(params) = msg.get_mut("params").and_then(Value::as_object_mut) {
                    params.remove("_meta");
                }
                vec![msg]
            }
            _ => vec![msg],
        }
    }
}

/// What a fault has done so far in one session.
#[derive(Debug, Default, Clone)]
pub struct FaultState {
    acted: bool,
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

/// The process's client fault, set once from the command line before any
/// session opens: every session the run opens (probe, pool, scenarios)
/// carries the same defect.
static PROCESS_FAULT: OnceLock<ClientFault> = OnceLock::new();

/// Sets the fault every session of this process gets (once; later calls are ignored).
pub fn set_process_fault(fault: ClientFault) {
    let _ = PROCESS_FAULT.set(fault);
}

/// The fault a new session gets.
pub fn process_fault() -> Option<ClientFault> {
    PROCESS_FAULT.get().copied()
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
