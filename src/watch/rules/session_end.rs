//! Checks judged once the watch ends (the host closed, SIGINT, the end of
//! a replay), on each HTTP session on its own: what a client should have
//! done before leaving a session, and never did. Unlike the checks on a
//! whole conversation (`cancel-notified`), these do not need to know that
//! the client ended on its own: a session that ends unterminated is a fact
//! of the trace, whatever the reason, and the rules that use them say how
//! little that proves by their level.

use serde_json::Value;

use super::params::string;
use super::Hit;
use crate::watch::trace::{Conversation, Msg, Side};

/// `http-session-ended-with`: each HTTP session its server gave an
/// `Mcp-Session-Id` saw, by the end of the watch, a client request of
/// `method` (an HTTP method, e.g. DELETE) carrying that id.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEndedWith {
    pub method: String,
}

pub fn parse(kind: &str, with: &Value) -> Result<Option<SessionEndedWith>, String> {
    if kind != "http-session-ended-with" {
        return Ok(None);
    }
    let method = string(with, "method")?;
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(format!(
            "`with.method` must be an HTTP method such as DELETE, not {method:?}"
        ));
    }
    Ok(Some(SessionEndedWith {
        method: method.to_ascii_uppercase(),
    }))
}

impl SessionEndedWith {
    /// The position examined (the session's last client message) and the
    /// hit about it, for one session's conversation at the end of the
    /// watch. A session without an issued id, or a 2026-07-28 one (that
    /// era has no sessions), is not examined.
    pub fn at_close(&self, conv: &Conversation) -> (Vec<usize>, Vec<(usize, Hit)>) {
        let Some(issued) = conv.http_session.as_deref() else {
            return (Vec::new(), Vec::new());
        };
        let Some(last) = conv.msgs.iter().rev().find(|m| m.from == Side::Client) else {
            return (Vec::new(), Vec::new());
        };
        if conv.modern {
            return (Vec::new(), Vec::new());
        }
        let sent = |m: &&Msg| {
            m.from == Side::Client
                && m.http
                    .as_ref()
                    .is_some_and(|h| h.method.eq_ignore_ascii_case(&self.method))
        };
        let mut of_method = conv.msgs.iter().filter(sent);
        let with_id = |m: &&Msg| {
            m.http
                .as_ref()
                .and_then(|h| h.header("mcp-session-id"))
                .is_some_and(|id| id == issued)
        };
        if of_method.clone().any(|m| with_id(&m)) {
            return (vec![last.pos], Vec::new());
        }
        let issued_at = conv
            .msgs
            .iter()
            .find(|m| {
                m.from == Side::Server
                    && m.http
                        .as_ref()
                        .and_then(|h| h.header("mcp-session-id"))
                        .is_some()
            })
            .map(|m| m.pos);
        let other = of_method
            .next()
            .map(|m| {
                format!(
                    " (the {} at #{} carries Mcp-Session-Id {:?})",
                    self.method,
                    m.pos,
                    m.http
                        .as_ref()
                        .and_then(|h| h.header("mcp-session-id"))
                        .unwrap_or("(none)")
                )
            })
            .unwrap_or_default();
        let hit = Hit::new(
            format!(
                "the session with Mcp-Session-Id {issued:?} ended with no HTTP {} carrying that id{other}; its last client message is #{}",
                self.method, last.pos
            ),
            issued_at.into_iter().collect(),
        );
        (vec![last.pos], vec![(last.pos, hit)])
    }

    pub fn subject(&self) -> String {
        "the end of an HTTP session its server gave an Mcp-Session-Id".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::trace::HttpMeta;
    use serde_json::json;

    fn msg(pos: usize, from: Side, method: &str, body: &str, session: Option<&str>) -> Msg {
        let meta = HttpMeta {
            path: Some("/mcp".into()),
            method: method.into(),
            status: (from == Side::Server).then_some(200),
            headers: session
                .map(|s| vec![("mcp-session-id".to_string(), s.to_string())])
                .unwrap_or_default(),
            exchange: pos as u64,
        };
        Msg::new(pos, from, 0, body.to_string(), Some(meta))
    }

    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
    const OK: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}"#;
    const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

    /// A 2025-11-25 session given id `s1`, then `tail` from the client.
    fn session(tail: &[(&str, Option<&str>)]) -> Conversation {
        let mut conv = Conversation::default();
        conv.observe(msg(1, Side::Client, "POST", INIT, None));
        conv.observe(msg(2, Side::Server, "POST", OK, Some("s1")));
        conv.observe(msg(3, Side::Client, "POST", LIST, Some("s1")));
        for (i, (method, id)) in tail.iter().enumerate() {
            conv.observe(msg(4 + i, Side::Client, method, "", *id));
        }
        conv
    }

    fn check() -> SessionEndedWith {
        SessionEndedWith {
            method: "DELETE".into(),
        }
    }

    #[test]
    fn a_session_left_without_delete_is_found_at_its_last_client_message() {
        let (examined, hits) = check().at_close(&session(&[]));
        assert_eq!(examined, vec![3]);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, 3);
        assert_eq!(hits[0].1.related, vec![2]);
        assert!(hits[0].1.message.contains("\"s1\""), "{:?}", hits[0].1);
    }

    #[test]
    fn a_delete_with_the_id_holds_whatever_the_answer() {
        let mut conv = session(&[("DELETE", Some("s1"))]);
        // answered 405: the server does not let clients end sessions
        conv.observe(msg(5, Side::Server, "DELETE", "", None));
        let (examined, hits) = check().at_close(&conv);
        assert_eq!((examined, hits.len()), (vec![4], 0));
    }

    #[test]
    fn a_delete_without_the_issued_id_does_not_count() {
        let (_, hits) = check().at_close(&session(&[("DELETE", None)]));
        assert_eq!(hits.len(), 1);
        assert!(hits[0]
            .1
            .message
            .contains("#4 carries Mcp-Session-Id \"(none)\""));
        let (_, hits) = check().at_close(&session(&[("GET", Some("s1"))]));
        assert_eq!(hits.len(), 1);
    }

    #[test]
    fn sessions_without_an_issued_id_or_in_2026_are_not_examined() {
        let mut none = Conversation::default();
        none.observe(msg(1, Side::Client, "POST", INIT, None));
        none.observe(msg(2, Side::Server, "POST", OK, None));
        assert_eq!(check().at_close(&none), (Vec::new(), Vec::new()));
        let mut modern = Conversation::default();
        let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        modern.observe(msg(1, Side::Client, "POST", &discover.to_string(), None));
        modern.observe(msg(2, Side::Server, "POST", OK, Some("x")));
        assert_eq!(check().at_close(&modern), (Vec::new(), Vec::new()));
    }

    #[test]
    fn the_method_is_an_http_method() {
        let with = json!({"method": "delete"});
        assert_eq!(parse("http-session-ended-with", &with), Ok(Some(check())));
        assert!(parse("http-session-ended-with", &json!({"method": "DE LETE"})).is_err());
        assert!(parse("http-session-ended-with", &Value::Null).is_err());
        assert_eq!(parse("http-no-get", &with), Ok(None));
    }
}
