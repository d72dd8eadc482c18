//! Why a session operation did not produce an answer.

use crate::transport::TransportError;

/// Why a session operation did not produce an answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SessionError {
    #[error("no answer to {method} within {ms} ms{hint}")]
    Timeout {
        method: String,
        ms: u64,
        hint: String,
    },
    #[error("no answer to {unanswered}: {sentinel}, sent right after it, was answered, and nothing more came within {grace_ms} ms")]
    Dropped {
        /// "the ping with id 9007199254740993", or "the raw message".
        unanswered: String,
        /// "the ping with id 11".
        sentinel: String,
        grace_ms: u64,
    },
    #[error("no answer to {method}: the server answered its HTTP POST with {status} and no JSON-RPC response{hint}")]
    Unanswered {
        method: String,
        status: String,
        hint: String,
    },
    #[error("the server {exit} while {during}")]
    Closed { during: String, exit: String },
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("handshake failed: {0}")]
    Handshake(String),
    /// The handshake's request was answered with an error that is not one
    /// of the 2026-07-28 errors: to `server/discover`, what a legacy server
    /// answers, on a connection a dual-era client falls back on with
    /// `initialize` (MCP 2026-07-28, Transports, stdio, Backward
    /// Compatibility).
    #[error("handshake failed: the server answered with an error: {0}")]
    HandshakeRefused(String),
    /// `server/discover` answered with an error only a 2026-07-28 server
    /// gives: the server is modern, and a client must not fall back to
    /// `initialize` (MCP 2026-07-28, Transports, stdio, Backward Compatibility).
    #[error("handshake failed: {request} was refused with {name} ({code}); the server offers {}: {error}", offered(.supported))]
    ModernRefusal {
        /// `server/discover`, or `initialize` refused by a server that
        /// speaks only 2026-07-28.
        request: &'static str,
        code: i64,
        name: &'static str,
        supported: Vec<String>,
        error: String,
    },
    #[error("an http step needs a Streamable HTTP target (--url)")]
    NotHttp,
}

/// The versions a refusal offered, for its message.
pub(super) fn offered(supported: &[String]) -> String {
    if supported.is_empty() {
        "no version list".to_string()
    } else {
        format!("the versions {}", supported.join(", "))
    }
}
