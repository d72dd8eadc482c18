//! Ways of reaching a server. Each transport turns bytes into [`Incoming`]
//! items and knows how to stop its server; no scenario logic lives here.

pub mod http;
pub mod param_headers;
pub mod pipe;
pub mod process_group;
pub mod stdio;

use serde_json::Value;

pub use http::{HttpConnection, HttpSpec, RawAnswer, RawRequest};
pub use pipe::PipeConnection;
pub use stdio::{StdioConnection, StdioSpec};

/// What arrived from the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Message(Value),
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
    /// resumed elsewhere.
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
}
