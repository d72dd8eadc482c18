//! Ways of reaching a server. Each transport turns bytes into [`Incoming`]
//! items and knows how to stop its server; no scenario logic lives here.

pub mod http;
#[cfg(test)]
pub mod pipe;
pub mod process_group;
pub mod stdio;

use serde_json::Value;

pub use http::{HttpConnection, HttpSpec, RawAnswer, RawRequest};
#[cfg(test)]
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
}

/// Why talking to the server failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TransportError {
    #[error("cannot start `{command}`: {reason}")]
    Spawn { command: String, reason: String },
    #[error("{0}")]
    Closed(String),
}
