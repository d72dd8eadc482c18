//! The reference server in the same process, for tests and library users
//! ([`crate::run::Target::InProcess`]): its stdio loop runs on a task,
//! reads from an in-memory pipe and writes to a channel, so a test talks to
//! it in microseconds and leaves no process. The command line never uses
//! it: a run against the reference starts real processes, as it would any
//! server.

use std::io::Write;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::{load_catalog, stdio, Catalog, Config, Server};

/// The embedded reference catalog, parsed once per process.
fn reference_catalog() -> Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG
        .get_or_init(|| load_catalog(None).expect("the embedded catalog loads"))
        .clone()
}

/// Starts a reference server with `config` on the reference catalog, as a
/// stdio server would be: one server, one session. Returns its input and
/// its output; closing the input ends it.
pub fn spawn(
    config: Config,
) -> (
    impl AsyncWrite + Send + Unpin,
    impl AsyncRead + Send + Unpin,
) {
    let server = Arc::new(Server::new(reference_catalog(), config));
    let (input, server_input) = tokio::io::duplex(1 << 16);
    let (sender, receiver) = unbounded_channel();
    tokio::spawn(async move {
        // Ends when the input closes or the client drops the output.
        let _ = stdio::serve(&server, server_input, ChannelWriter(sender)).await;
    });
    (input, ChannelReader::new(receiver))
}

/// The server's output: each write is one message on the channel, so the
/// server never blocks on a reader in the same thread.
struct ChannelWriter(UnboundedSender<Vec<u8>>);

impl Write for ChannelWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .send(buf.to_vec())
            .map_err(|_| std::io::ErrorKind::BrokenPipe)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The client's end of the server's output, read as a byte stream.
struct ChannelReader {
    receiver: UnboundedReceiver<Vec<u8>>,
    chunk: Vec<u8>,
    read: usize,
}

impl ChannelReader {
    fn new(receiver: UnboundedReceiver<Vec<u8>>) -> Self {
        Self {
            receiver,
            chunk: Vec::new(),
            read: 0,
        }
    }
}

impl AsyncRead for ChannelReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        while self.read == self.chunk.len() {
            match self.receiver.poll_recv(cx) {
                Poll::Ready(Some(chunk)) => {
                    self.chunk = chunk;
                    self.read = 0;
                }
                // The server ended: end of stream.
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
        let start = self.read;
        let n = buf.remaining().min(self.chunk.len() - start);
        buf.put_slice(&self.chunk[start..start + n]);
        self.read += n;
        Poll::Ready(Ok(()))
    }
}
