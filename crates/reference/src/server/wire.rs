//! What a layer may do to what the transports write and read back: the
//! bytes around stdout's messages, a POST's response, the session id a
//! client is handed. Every method's default leaves the wire as the
//! correct server writes it, so [`super::Plain`] changes nothing.
//!
//! The transports call these at the one place each writes; a fault that
//! acts on the wire implements them (`faults::FaultLayer`), and nothing
//! in `stdio` or `http` knows which fault did.

use axum::response::Response;
use serde_json::Value;
use std::borrow::Cow;

/// The transports' side of a [`super::Layer`]. See the module comment.
#[allow(unused_variables)]
pub trait Wire: Send + Sync {
    /// Bytes written to stdout ahead of a batch of messages.
    fn stdout_before(&self, messages: &[Value]) -> Option<&'static [u8]> {
        None
    }
    /// A POST's response, as it leaves the server.
    fn post_response(&self, response: Response) -> Response {
        response
    }
    /// The `Mcp-Session-Id` header a session's key is handed out as.
    fn session_id_out(&self, key: &str) -> String {
        key.to_owned()
    }
    /// The session key a client's `Mcp-Session-Id` header names: the
    /// inverse of [`Wire::session_id_out`].
    fn session_id_in<'k>(&self, header: &'k str) -> Cow<'k, str> {
        Cow::Borrowed(header)
    }
}
