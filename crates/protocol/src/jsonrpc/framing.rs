//! Newline-delimited framing with a hard cap on line length, so a peer that
//! writes an endless line cannot grow our memory.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The default cap on one line: 16 MiB.
pub const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;

/// One unit read off a newline-delimited stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// A complete line (without its terminator).
    Line(Vec<u8>),
    /// A line longer than the cap; its bytes were discarded up to the next newline.
    Overlong { limit: usize, seen: usize },
    /// The stream ended in the middle of a line; the partial bytes are kept.
    Partial(Vec<u8>),
}

/// Reads frames from a buffered async reader, never holding more than
/// `max_line` bytes. The partial line lives in the reader, not in the future,
/// so `next_frame` is cancellation-safe (it can sit inside a timeout).
pub struct LineReader<R> {
    inner: R,
    max_line: usize,
    line: Vec<u8>,
    seen: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub fn new(inner: R, max_line: usize) -> Self {
        Self {
            inner,
            max_line,
            line: Vec::new(),
            seen: 0,
        }
    }

    fn take_frame(&mut self, at_eof: bool) -> Option<Frame> {
        let seen = std::mem::take(&mut self.seen);
        let mut line = std::mem::take(&mut self.line);
        if seen > self.max_line {
            return Some(Frame::Overlong {
                limit: self.max_line,
                seen,
            });
        }
        if at_eof {
            return (seen > 0).then_some(Frame::Partial(line));
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Some(Frame::Line(line))
    }

    /// Bytes of a line begun but not yet ended.
    pub fn pending(&self) -> usize {
        self.seen
    }

    /// The next frame, or `None` at a clean end of stream.
    pub async fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                return Ok(self.take_frame(true));
            }
            let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(pos) => (&buf[..pos], Some(pos + 1)),
                None => (buf, None),
            };
            self.seen += chunk.len();
            if self.seen <= self.max_line {
                self.line.extend_from_slice(chunk);
            } else if !self.line.is_empty() {
                self.line = Vec::new();
            }
            let consumed = done.unwrap_or(buf.len());
            self.inner.consume(consumed);
            if done.is_some() {
                return Ok(self.take_frame(false));
            }
        }
    }
}

/// Why a line could not be turned into JSON.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    #[error("line is not valid UTF-8 (first bad byte at offset {0})")]
    InvalidUtf8(usize),
    #[error("line is not JSON: {0}")]
    NotJson(String),
}

/// Decodes one line as JSON.
pub fn decode_line(line: &[u8]) -> Result<Value, DecodeError> {
    let text = std::str::from_utf8(line).map_err(|e| DecodeError::InvalidUtf8(e.valid_up_to()))?;
    super::compact::from_str(text).map_err(|e| DecodeError::NotJson(e.to_string()))
}

/// Encodes a message as one line, newline included. `serde_json` never emits
/// raw newlines inside a compact document, so the framing is safe.
pub fn encode_line(value: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec(value).unwrap_or_else(|_| b"null".to_vec());
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], max: usize) -> Vec<Frame> {
        let mut reader = LineReader::new(tokio::io::BufReader::with_capacity(4, input), max);
        let mut out = Vec::new();
        while let Some(frame) = reader.next_frame().await.expect("read") {
            out.push(frame);
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_and_strips_crlf() {
        let got = frames(b"{\"a\":1}\r\nxyz\n", 100).await;
        assert_eq!(
            got,
            vec![
                Frame::Line(b"{\"a\":1}".to_vec()),
                Frame::Line(b"xyz".to_vec())
            ]
        );
    }

    #[tokio::test]
    async fn caps_overlong_lines_and_recovers() {
        let got = frames(b"0123456789abc\nok\n", 5).await;
        assert_eq!(
            got,
            vec![
                Frame::Overlong { limit: 5, seen: 13 },
                Frame::Line(b"ok".to_vec())
            ]
        );
    }

    #[tokio::test]
    async fn keeps_a_partial_last_line() {
        let got = frames(b"ok\npart", 100).await;
        assert_eq!(
            got,
            vec![
                Frame::Line(b"ok".to_vec()),
                Frame::Partial(b"part".to_vec())
            ]
        );
    }

    #[test]
    fn decode_reports_utf8_and_json_errors() {
        assert_eq!(decode_line(b"ab\xffcd"), Err(DecodeError::InvalidUtf8(2)));
        assert!(matches!(
            decode_line(b"{nope"),
            Err(DecodeError::NotJson(_))
        ));
        assert_eq!(decode_line(b"[1]"), Ok(serde_json::json!([1])));
    }
}
