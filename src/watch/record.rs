//! The `--record` transcript: one JSON line per message, both directions,
//! with its time and, over HTTP, its headers; `watch --replay` reads it back.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::trace::{HttpMeta, Msg, Side};

/// The version tag of a record line.
pub const FORMAT: &str = "mcp-conform/watch-record@1";

/// One recorded message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Position in the conversation (1-based).
    pub pos: usize,
    /// `client->server` or `server->client`.
    pub direction: String,
    pub from: Side,
    /// Milliseconds since the conversation began.
    pub at_ms: u64,
    /// Wall-clock time (RFC 3339).
    pub timestamp: String,
    /// The message text exactly as relayed, without its newline.
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpMeta>,
    #[serde(default)]
    pub format: String,
}

/// A record file that cannot be read back: which line, and why.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("cannot read {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("{path}:{line}:1: not a watch record line ({reason})")]
    Line {
        path: String,
        line: usize,
        reason: String,
    },
}

/// The record line of `msg`, with its newline.
pub fn line(msg: &Msg) -> String {
    let record = Record {
        pos: msg.pos,
        direction: match msg.from {
            Side::Client => "client->server",
            Side::Server => "server->client",
        }
        .to_string(),
        from: msg.from,
        at_ms: msg.at_ms,
        timestamp: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        text: msg.raw.clone(),
        http: msg.http.clone(),
        format: FORMAT.to_string(),
    };
    let mut text = serde_json::to_string(&record).unwrap_or_default();
    text.push('\n');
    text
}

/// The messages of a record file, in order.
pub fn read(path: &Path) -> Result<Vec<Msg>, RecordError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| RecordError::Io {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    parse(&shown, &text)
}

/// The messages of a record's text; `path` names it in errors.
pub fn parse(path: &str, text: &str) -> Result<Vec<Msg>, RecordError> {
    let mut msgs = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let r: Record = serde_json::from_str(l).map_err(|e| RecordError::Line {
            path: path.to_string(),
            line: i + 1,
            reason: e.to_string(),
        })?;
        msgs.push(Msg::new(msgs.len() + 1, r.from, r.at_ms, r.text, r.http));
    }
    Ok(msgs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_line_reads_back_as_the_same_message() {
        let msg = Msg::new(
            1,
            Side::Client,
            7,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.into(),
            None,
        );
        let text = line(&msg);
        let back = parse("r.jsonl", &text).unwrap_or_default();
        assert_eq!(back, vec![msg]);
    }

    #[test]
    fn a_bad_line_is_named() {
        let e = parse("r.jsonl", "\n{oops}\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("r.jsonl:2:1: not a watch record line"),
            "{e}"
        );
    }
}
