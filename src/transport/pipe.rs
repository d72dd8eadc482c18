//! A server reached over in-memory pipes with the stdio framing: the
//! reference server running in the same process, with no child process to
//! start or stop (session and executor unit tests, the fault matrix's
//! trace of which faults each scenario meets).

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use super::stdio::{next_incoming, ExitState};
use super::{Incoming, TransportError};
use crate::jsonrpc::LineReader;

type Input = Box<dyn AsyncWrite + Send + Unpin>;
type Output = LineReader<BufReader<Box<dyn AsyncRead + Send + Unpin>>>;

/// Both ends the client holds: the server's input and its output.
pub struct PipeConnection {
    /// None once closed (the server then sees its input end).
    input: Option<Input>,
    /// None once the server closed its output.
    output: Option<Output>,
}

impl PipeConnection {
    pub fn new(
        input: impl AsyncWrite + Send + Unpin + 'static,
        output: impl AsyncRead + Send + Unpin + 'static,
    ) -> Self {
        let output: Box<dyn AsyncRead + Send + Unpin> = Box::new(output);
        Self {
            input: Some(Box::new(input)),
            output: Some(LineReader::new(
                BufReader::new(output),
                crate::jsonrpc::DEFAULT_MAX_LINE,
            )),
        }
    }

    pub async fn send(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        let Some(input) = self.input.as_mut() else {
            return Err(TransportError::Closed("the input is already closed".into()));
        };
        let written = async {
            input.write_all(bytes).await?;
            input.flush().await
        };
        written.await.map_err(|e| {
            TransportError::Closed(format!("cannot write to the in-process server ({e})"))
        })
    }

    /// The next thing the server wrote: `Closed` once, then `None`.
    pub async fn recv(&mut self) -> Option<Incoming> {
        let incoming = next_incoming(self.output.as_mut()?).await;
        if incoming == Incoming::Closed {
            self.output = None;
        }
        Some(incoming)
    }

    pub fn exit_state(&self) -> ExitState {
        if self.output.is_some() {
            ExitState::Running
        } else {
            ExitState::Disconnected
        }
    }

    /// Closes the server's input, which ends its loop.
    pub fn shutdown(&mut self) -> String {
        self.input = None;
        "was stopped (an in-process server: its input was closed)".to_string()
    }
}
