//! The connection a session runs over: one enum over stdio, Streamable
//! HTTP and the in-process reference server, so the session speaks MCP
//! without knowing which.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::Era;
use crate::transport::header_fault::HeaderFault;
use crate::transport::stdio::ExitState;
use crate::transport::{HttpConnection, Incoming, StdioConnection, TransportError};

/// A server process shared by every HTTP session of a run (`--url U -- CMD`).
pub type SharedProcess = Arc<tokio::sync::Mutex<StdioConnection>>;

/// The connection a session runs over.
pub enum Connection {
    Stdio(Box<StdioConnection>),
    Http(Box<HttpConnection>, Option<SharedProcess>),
    /// The reference server in the same process (`Target::InProcess`).
    Pipe(Box<crate::transport::PipeConnection>),
}

impl Connection {
    pub(super) async fn send(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        match self {
            Connection::Stdio(c) => c.send(bytes).await,
            Connection::Http(c, _) => c.send(bytes).await,
            Connection::Pipe(c) => c.send(bytes).await,
        }
    }

    /// Sends a request without waiting on the transport for more than the
    /// write: over HTTP its POST goes on in the background
    /// (`HttpConnection::send_detached`). Returns the HTTP exchange's
    /// number.
    pub(super) async fn send_request_detached(
        &mut self,
        bytes: &[u8],
    ) -> Result<Option<u64>, TransportError> {
        match self {
            Connection::Http(c, _) if c.can_detach() => c.send_detached(bytes).map(Some),
            other => {
                other.send(bytes).await?;
                Ok(other.last_exchange())
            }
        }
    }

    /// Bounds how long a write may block (stdio; HTTP requests have their
    /// own timeout, and the in-process server always reads).
    pub(super) fn limit_writes(&mut self, limit: Duration) {
        if let Connection::Stdio(c) = self {
            c.limit_writes(limit);
        }
    }

    pub(super) async fn recv(&mut self) -> Option<Incoming> {
        match self {
            Connection::Stdio(c) => c.recv().await,
            Connection::Http(c, _) => c.recv().await,
            Connection::Pipe(c) => c.recv().await,
        }
    }

    pub fn stderr_tail(&self) -> String {
        match self {
            Connection::Stdio(c) => c.stderr_tail(),
            Connection::Http(_, Some(p)) => {
                p.try_lock().map(|c| c.stderr_tail()).unwrap_or_default()
            }
            Connection::Http(_, None) => String::new(),
            Connection::Pipe(_) => String::new(),
        }
    }

    /// Bytes the server process has written to stderr (0 without a process).
    pub(super) fn stderr_total(&self) -> u64 {
        match self {
            Connection::Stdio(c) => c.stderr_total(),
            Connection::Http(_, Some(p)) => p.try_lock().map(|c| c.stderr_total()).unwrap_or(0),
            Connection::Http(_, None) | Connection::Pipe(_) => 0,
        }
    }

    /// Whether the server process has ended (without waiting).
    pub(super) fn has_exited(&mut self) -> bool {
        match self {
            Connection::Stdio(c) => c.try_exit().is_some(),
            Connection::Http(_, Some(p)) => p.try_lock().is_ok_and(|mut c| c.try_exit().is_some()),
            Connection::Http(_, None) | Connection::Pipe(_) => false,
        }
    }

    pub(super) async fn exit_state(&mut self) -> ExitState {
        match self {
            Connection::Stdio(c) => c.exit_state().await,
            Connection::Http(_, Some(p)) => p.lock().await.exit_state().await,
            Connection::Http(_, None) => ExitState::Disconnected,
            Connection::Pipe(c) => c.exit_state(),
        }
    }

    pub(super) fn pending_bytes(&self) -> usize {
        match self {
            Connection::Stdio(c) => c.pending_bytes(),
            _ => 0,
        }
    }

    /// HTTP: the number of the last POST (see `Incoming::Unanswered`).
    pub(super) fn last_exchange(&self) -> Option<u64> {
        match self {
            Connection::Http(c, _) => Some(c.last_exchange()),
            _ => None,
        }
    }

    /// HTTP: the number the next POST will have.
    pub(super) fn next_exchange(&self) -> Option<u64> {
        self.last_exchange().map(|n| n + 1)
    }

    /// A stream read in order (stdio framing): a sentinel can follow a
    /// message, and a freshly started server is given time to start.
    pub(super) fn is_stream(&self) -> bool {
        match self {
            Connection::Stdio(_) => true,
            Connection::Http(..) => false,
            Connection::Pipe(_) => true,
        }
    }

    /// HTTP: remembers the `x-mcp-header` annotations of the tools in a
    /// result (`tools/list`, and any result listing tool definitions), so
    /// later `tools/call`s mirror them into `Mcp-Param-{Name}` headers.
    /// Returns the tools whose annotations are invalid, with why.
    pub(super) fn learn_tools(&self, answer: &Value) -> Vec<(String, String)> {
        if let Connection::Http(c, _) = self {
            if let Some(tools) = answer.pointer("/result/tools").and_then(Value::as_array) {
                return c.learn_tools(tools);
            }
        }
        Vec::new()
    }

    /// Tells the transport the handshake settled on `version`.
    /// Moves an open connection to another era's framing (HTTP headers).
    pub(super) fn switch_era(&mut self, era: &Era) {
        if let Connection::Http(c, _) = self {
            if era.is_stateless() {
                c.become_stateless(&era.version);
            } else {
                c.set_protocol_version(&era.version);
            }
        }
    }

    pub(super) fn handshake_done(&mut self, version: &str) {
        if let Connection::Http(c, _) = self {
            c.set_protocol_version(version);
        }
    }

    /// HTTP: listen on the session's GET stream for what other sessions
    /// cause, once the server has answered the GET (bounded by `wait`): a
    /// change made right after the handshake must not beat the stream.
    pub(super) async fn open_get_stream(&mut self, wait: Duration) {
        if let Connection::Http(c, _) = self {
            if let Some(open) = c.open_get_stream() {
                let _ = tokio::time::timeout(wait, open).await;
            }
        }
    }

    /// HTTP: bends one header of every request (a client fault).
    pub(super) fn set_header_fault(&mut self, fault: Option<HeaderFault>) {
        if let Connection::Http(c, _) = self {
            c.set_header_fault(fault);
        }
    }

    pub async fn shutdown(&mut self, grace: Duration) -> String {
        match self {
            Connection::Stdio(c) => c.shutdown(grace).await,
            Connection::Http(c, _) => c.shutdown().await,
            Connection::Pipe(c) => c.shutdown(),
        }
    }

    /// Stdio: stop the server without waiting for it (see
    /// `StdioConnection::shutdown_in_background`).
    pub(super) async fn shutdown_in_background(&mut self, grace: Duration) -> String {
        match self {
            Connection::Stdio(c) => c.shutdown_in_background(grace),
            Connection::Http(c, _) => c.shutdown().await,
            Connection::Pipe(c) => c.shutdown(),
        }
    }
}
