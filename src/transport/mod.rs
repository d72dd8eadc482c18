//! Ways of reaching a server. Each transport turns bytes into [`Incoming`]
//! items and knows how to stop its server; no scenario logic lives here.

pub mod header_fault;
pub mod http;
pub mod http_read;
pub mod param_headers;
pub mod pipe;
pub mod process_group;
pub mod stdio;

use serde_json::Value;

/// The Streamable HTTP session header.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The Streamable HTTP protocol-version header.
pub const VERSION_HEADER: &str = "mcp-protocol-version";

pub use http::{HttpConnection, HttpSpec, RawAnswer, RawRequest};
pub use pipe::PipeConnection;
pub use stdio::{StdioConnection, StdioSpec};

/// What arrived from the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Message(Value),
    /// A line of newline-delimited output (stdio), not yet decoded: the
    /// session decodes it, knowing what it will read of an answer (see
    /// `session::pruned_decode`).
    Line(Vec<u8>),
    /// Output that is not a JSON-RPC message line: the reason and the first bytes.
    Garbage {
        reason: String,
        excerpt: String,
    },
    /// The server closed its output.
    Closed,
    /// HTTP: the POST numbered `exchange` got its whole answer, a plain
    /// body (not an SSE stream) with no JSON-RPC response in it. A
    /// response to the message it carried can no longer come: Streamable
    /// HTTP answers a request on its own POST, and only an SSE stream can be
    /// resumed elsewhere. Also sent for a body or SSE stream the harness
    /// stopped reading (compressed, or past the size cap).
    Unanswered {
        exchange: u64,
        status: String,
    },
}

/// Why talking to the server failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TransportError {
    #[error("cannot start `{command}`: {reason}")]
    Spawn { command: String, reason: String },
    #[error("{0}")]
    Closed(String),
    /// A 3xx answer. The harness follows no redirect: following one would
    /// carry the request's headers (the user's credentials among them)
    /// wherever the server points. The exchange could not be completed,
    /// which is not a conformance failure.
    #[error(
        "{method} {url} answered {status}{}, a redirect mcp-conform does not follow; hint: {}",
        location_text(location),
        http_read::REDIRECT_HINT
    )]
    Redirect {
        method: String,
        url: String,
        status: String,
        location: String,
    },
}

impl TransportError {
    /// The exchange could not be completed for a reason that says nothing
    /// of the server's conformance (a step ends with an error, not a failure).
    pub fn is_incomplete_exchange(&self) -> bool {
        matches!(self, TransportError::Redirect { .. })
    }
}

fn location_text(location: &str) -> String {
    if location.is_empty() {
        " with no Location".to_string()
    } else {
        format!(" to Location {location}")
    }
}
