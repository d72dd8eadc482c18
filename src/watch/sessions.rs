//! Which MCP session a message over HTTP belongs to, so one session's ids,
//! handshake and cursors never count against another's. A session is named
//! by the Mcp-Session-Id its server issued; the messages before that id
//! (initialize and its answer) by their HTTP exchange. Over stdio there is
//! one session. Pure: no I/O.

use std::collections::HashMap;

use super::trace::{Conversation, Msg, Side, MODERN};

/// Whether a client message begins a conversation of its own without an id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Begins {
    /// initialize: a new stateful session.
    Initialize,
    /// A 2026-07-28 request (`_meta` names the version): no session ids at all.
    Stateless,
    No,
}

impl Begins {
    fn of(msg: &Msg) -> Self {
        if msg.method() == Some("initialize") {
            Begins::Initialize
        } else if msg.meta_version().is_some_and(|v| v >= MODERN) {
            Begins::Stateless
        } else {
            Begins::No
        }
    }
}

/// One session's conversation.
#[derive(Debug, Default)]
pub struct Session {
    /// The Mcp-Session-Id its server issued (None: a server that issues
    /// none, or a 2026-07-28 conversation, which has no sessions).
    pub id: Option<String>,
    pub conv: Conversation,
}

/// Every session seen, in the order they began.
#[derive(Debug, Default)]
pub struct Sessions {
    pub list: Vec<Session>,
    by_id: HashMap<String, usize>,
    by_exchange: HashMap<u64, usize>,
    /// The session that messages without an Mcp-Session-Id belong to: the
    /// last one begun without an id that no server has given one yet.
    sessionless: Option<usize>,
}

impl Sessions {
    /// The index of the session `msg` belongs to, creating it if new.
    pub fn route(&mut self, msg: &Msg) -> usize {
        let Some(http) = msg.http.as_ref() else {
            return self.sessionless();
        };
        let header = http.header("mcp-session-id").map(str::to_string);
        if msg.from == Side::Client {
            let i = self.of_client(header.as_deref(), Begins::of(msg));
            self.by_exchange.insert(http.exchange, i);
            return i;
        }
        let i = match self.by_exchange.get(&http.exchange) {
            Some(i) => *i,
            None => self.of_client(header.as_deref(), Begins::No),
        };
        if let Some(id) = header {
            if !self.by_id.contains_key(&id) {
                self.by_id.insert(id.clone(), i);
                self.list[i].id.get_or_insert(id);
                if self.sessionless == Some(i) {
                    self.sessionless = None;
                }
            }
        }
        i
    }

    fn of_client(&mut self, header: Option<&str>, begins: Begins) -> usize {
        if let Some(i) = header.and_then(|id| self.by_id.get(id)) {
            return *i;
        }
        match header {
            None if begins == Begins::Initialize => {
                let i = self.begin(None);
                self.sessionless = Some(i);
                i
            }
            // No id after one was issued, or an id no server issued: the
            // latest session, whose rules on the header then judge it.
            None if begins == Begins::No && self.sessionless.is_none() && self.issued() => {
                self.list.len() - 1
            }
            None => self.sessionless(),
            Some(_) if self.issued() => self.list.len() - 1,
            // A proxy started in the middle of a session sees its id first.
            Some(id) => {
                let i = self.begin(Some(id.to_string()));
                self.by_id.insert(id.to_string(), i);
                i
            }
        }
    }

    /// Whether a server has issued any session id.
    fn issued(&self) -> bool {
        !self.by_id.is_empty()
    }

    fn sessionless(&mut self) -> usize {
        match self.sessionless {
            Some(i) => i,
            None => {
                let i = self.begin(None);
                self.sessionless = Some(i);
                i
            }
        }
    }

    fn begin(&mut self, id: Option<String>) -> usize {
        self.list.push(Session {
            id,
            conv: Conversation::default(),
        });
        self.list.len() - 1
    }

    /// The session's name in a report: its number and its id.
    pub fn label(&self, i: usize) -> String {
        match self.list.get(i).and_then(|s| s.id.as_deref()) {
            Some(id) => format!("session {} (Mcp-Session-Id {id})", i + 1),
            None => format!("session {}", i + 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::trace::HttpMeta;

    fn http(from: Side, body: &str, session: Option<&str>, exchange: u64) -> Msg {
        let headers = session
            .map(|s| vec![("mcp-session-id".to_string(), s.to_string())])
            .unwrap_or_default();
        let meta = HttpMeta {
            path: None,
            method: "POST".into(),
            status: (from == Side::Server).then_some(200),
            headers,
            exchange,
        };
        Msg::new(0, from, 0, body.to_string(), Some(meta))
    }

    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    const OK: &str = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

    #[test]
    fn interleaved_sessions_are_told_apart_by_exchange_then_by_id() {
        let mut s = Sessions::default();
        // two handshakes in flight at once, answered in the other order
        assert_eq!(s.route(&http(Side::Client, INIT, None, 1)), 0);
        assert_eq!(s.route(&http(Side::Client, INIT, None, 2)), 1);
        assert_eq!(s.route(&http(Side::Server, OK, Some("b"), 2)), 1);
        assert_eq!(s.route(&http(Side::Server, OK, Some("a"), 1)), 0);
        assert_eq!(s.route(&http(Side::Client, LIST, Some("a"), 3)), 0);
        assert_eq!(s.route(&http(Side::Client, LIST, Some("b"), 4)), 1);
        assert_eq!(s.label(1), "session 2 (Mcp-Session-Id b)");
        // a request without the id it was given stays in the latest session
        assert_eq!(s.route(&http(Side::Client, LIST, None, 5)), 1);
        // a sessionless (2026-07-28) conversation is a session of its own
        let mut t = Sessions::default();
        let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert_eq!(t.route(&http(Side::Client, discover, None, 1)), 0);
        assert_eq!(t.route(&http(Side::Server, OK, None, 1)), 0);
        assert_eq!(t.route(&http(Side::Client, LIST, None, 2)), 0);
        assert_eq!(t.list.len(), 1);
        // after a stateful session, a 2026-07-28 request begins its own
        assert_eq!(s.route(&http(Side::Client, discover, None, 6)), 2);
    }
}
