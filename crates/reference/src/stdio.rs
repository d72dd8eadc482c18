//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout, one
//! session per process. Nothing but protocol messages is written to stdout.

use super::dispatch::{overlong_error, parse_error};
use super::server::Server;
use mcp_conform_protocol::jsonrpc::{decode_line, encode_line, Frame, LineReader};
use serde_json::Value;
use std::io::{Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, BufReader, ReadBuf};

/// Serves one session until the input ends (or a write fails because the
/// client went away).
pub async fn serve<R, W>(server: &Server, input: R, mut output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: Write,
{
    let mut reader = LineReader::new(
        BufReader::with_capacity(1 << 16, input),
        server.settings().max_line,
    );
    let mut session = server.new_session();
    while let Some(frame) = reader.next_frame().await? {
        let (out, exit) = match frame {
            Frame::Line(line) | Frame::Partial(line) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match decode_line(&line) {
                    Ok(value) => (server.handle(&mut session, value), false),
                    Err(_) if server.policy().stdio.parse_error_silent.on() => continue,
                    Err(e) => (
                        vec![parse_error(&e)],
                        server.policy().stdio.parse_error_exit.on(),
                    ),
                }
            }
            Frame::Overlong { limit, .. } => (vec![overlong_error(limit)], false),
        };
        let before = server.layer().stdout_before(&out);
        if before.is_some_and(|bytes| output.write_all(bytes).is_err()) {
            return Ok(());
        }
        if write_all(&mut output, &out).is_err() {
            // The client closed stdout; there is nobody left to serve.
            return Ok(());
        }
        if exit {
            break;
        }
    }
    Ok(())
}

fn write_all<W: Write>(output: &mut W, messages: &[Value]) -> std::io::Result<()> {
    if messages.is_empty() {
        return Ok(());
    }
    let mut buf = Vec::new();
    for m in messages {
        buf.extend_from_slice(&encode_line(m));
    }
    output.write_all(&buf)?;
    output.flush()
}

/// Standard input read on the serving thread itself, for [`serve`] on a
/// runtime of its own (`serve-reference`). The loop handles one message at
/// a time and nothing runs beside it, so a read that blocks stalls nothing
/// else; tokio's own stdin would hand every read to a thread of its
/// blocking pool and wake the runtime with the bytes: a thread started in
/// every server process, and two thread switches per message.
pub struct BlockingStdin(std::io::Stdin);

impl BlockingStdin {
    pub fn new() -> Self {
        Self(std::io::stdin())
    }
}

impl Default for BlockingStdin {
    fn default() -> Self {
        Self::new()
    }
}

impl AsyncRead for BlockingStdin {
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let read = loop {
            match self.0.lock().read(buf.initialize_unfilled()) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        Poll::Ready(read.map(|n| buf.advance(n)))
    }
}
