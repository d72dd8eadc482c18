//! `mcp-conform watch`: a transparent proxy between any MCP host and any
//! server that relays both directions unchanged and checks the conversation
//! against trace rules, client and server.
//!
//! The relays (`relay_stdio`, `relay_http`) own the I/O and hand copies of
//! each message to a [`Sink`]; the rules (`rules/`) and the conversation
//! model (`trace`) are pure; `report` turns what the sink found into the
//! run report every format renders.

pub mod record;
pub mod relay_http;
pub mod relay_stdio;
pub mod report;
pub mod rules;
pub mod sessions;
pub mod trace;

use std::io::Write;
use std::time::Instant;

use rules::{Checker, Rule, Violation};
use trace::{HttpMeta, Msg, Side};

/// Where copies of the relayed messages go: the checker, the live findings
/// (stderr or `--log`) and the `--record` transcript.
pub struct Sink {
    pub checker: Checker,
    live: Box<dyn Write + Send>,
    record: Option<Box<dyn Write + Send>>,
    started: Instant,
    quiet: bool,
}

impl Sink {
    pub fn new(rules: Vec<Rule>, http: bool, live: Box<dyn Write + Send>) -> Self {
        Self {
            checker: Checker::new(rules, http),
            live,
            record: None,
            started: Instant::now(),
            quiet: false,
        }
    }

    /// Also writes every message to `out` as a JSON line (`--record`).
    pub fn recording(mut self, out: Box<dyn Write + Send>) -> Self {
        self.record = Some(out);
        self
    }

    /// Prints no live findings (the reports still have them).
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }

    pub fn started(&self) -> Instant {
        self.started
    }

    /// One message as it crossed the wire at `at`: recorded, checked, and
    /// its findings printed.
    pub fn message(&mut self, from: Side, at: Instant, raw: &[u8], http: Option<HttpMeta>) {
        let at_ms = at.saturating_duration_since(self.started).as_millis() as u64;
        let text = String::from_utf8_lossy(raw);
        let text = text.strip_suffix('\r').unwrap_or(&text).to_string();
        let pos = self.checker.conv.msgs.len() + 1;
        let msg = Msg::new(pos, from, at_ms, text, http);
        if let Some(out) = self.record.as_mut() {
            let line = record::line(&msg);
            // A record that cannot be written must not stop the relay.
            let _ = out.write_all(line.as_bytes()).and_then(|_| out.flush());
        }
        self.feed(msg);
    }

    /// Checks a message already made (live or replayed).
    pub fn feed(&mut self, msg: Msg) {
        let found: Vec<Violation> = self.checker.feed(msg).to_vec();
        self.print(&found);
    }

    /// The watch has ended (the host closed, a signal, the end of a
    /// replay): runs the checks judged then, and prints what they found.
    pub fn close(&mut self) {
        let before = self.checker.violations.len();
        self.checker.close();
        let found = self.checker.violations[before..].to_vec();
        self.print(&found);
    }

    fn print(&mut self, found: &[Violation]) {
        if self.quiet {
            return;
        }
        for v in found {
            let _ = writeln!(self.live, "{}", live_line(v));
        }
        let _ = self.live.flush();
    }
}

/// A finding as printed while the conversation runs.
pub fn live_line(v: &Violation) -> String {
    let related = if v.related.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = v.related.iter().map(|p| format!("#{p}")).collect();
        format!(" (see {})", list.join(", "))
    };
    format!(
        "mcp-conform watch: {} broke {} ({}) at #{}: {}{related}",
        v.side,
        v.rule,
        v.level.as_str(),
        v.pos,
        v.message
    )
}

/// Splits a byte stream into lines for inspection; the bytes themselves are
/// relayed elsewhere, unchanged.
#[derive(Debug, Default)]
pub struct LineSplitter {
    partial: Vec<u8>,
}

impl LineSplitter {
    /// Feeds a chunk; calls `line` with each complete line (without `\n`).
    pub fn push(&mut self, chunk: &[u8], mut line: impl FnMut(&[u8])) {
        let mut rest = chunk;
        while let Some(i) = rest.iter().position(|b| *b == b'\n') {
            if self.partial.is_empty() {
                line(&rest[..i]);
            } else {
                self.partial.extend_from_slice(&rest[..i]);
                line(&self.partial);
                self.partial.clear();
            }
            rest = &rest[i + 1..];
        }
        self.partial.extend_from_slice(rest);
    }

    /// The last line, when the stream ended without a newline.
    pub fn finish(&mut self) -> Option<Vec<u8>> {
        (!self.partial.is_empty()).then(|| std::mem::take(&mut self.partial))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_across_chunks() {
        let mut s = LineSplitter::default();
        let mut lines = Vec::new();
        s.push(b"{\"a\":1}\n{\"b\"", |l| lines.push(l.to_vec()));
        s.push(b":2}\n\n{\"c\":3}", |l| lines.push(l.to_vec()));
        assert_eq!(
            lines,
            vec![b"{\"a\":1}".to_vec(), b"{\"b\":2}".to_vec(), b"".to_vec()]
        );
        assert_eq!(s.finish(), Some(b"{\"c\":3}".to_vec()));
    }
}
