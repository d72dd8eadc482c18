//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout, one
//! session per process. Nothing but protocol messages is written to stdout.

use super::dispatch::{overlong_error, parse_error};
use super::server::Server;
use mcp_conform_protocol::jsonrpc::{decode_line, encode_line, Frame, LineReader};
use serde_json::Value;
use std::io::Write;
use tokio::io::{AsyncRead, BufReader};

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
