//! The wire transcript of one scenario, shared by all of its sessions.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Entries kept per scenario; later ones are counted, not stored.
const MAX_ENTRIES: usize = 2000;
/// A message bigger than this is stored as a truncated text.
const MAX_MESSAGE_BYTES: usize = 32 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Sent,
    Received,
    Note,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Milliseconds since the scenario started.
    pub at_ms: u64,
    pub session: String,
    pub direction: Direction,
    /// The message, or a text for raw bytes, notes and truncated messages.
    pub message: Value,
}

#[derive(Debug, Default)]
struct Inner {
    entries: Vec<Entry>,
    dropped: usize,
}

/// A cheap-to-clone handle; every session of a scenario records into the same one.
#[derive(Debug, Clone)]
pub struct Transcript {
    start: Instant,
    inner: Arc<Mutex<Inner>>,
}

impl Default for Transcript {
    fn default() -> Self {
        Self::new()
    }
}

impl Transcript {
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            inner: Arc::default(),
        }
    }

    fn push(&self, session: &str, direction: Direction, message: Value) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        if inner.entries.len() >= MAX_ENTRIES {
            inner.dropped += 1;
            return;
        }
        inner.entries.push(Entry {
            at_ms: self.start.elapsed().as_millis() as u64,
            session: session.to_string(),
            direction,
            message,
        });
    }

    /// Whether further entries would only be counted (callers can skip copying).
    pub fn is_full(&self) -> bool {
        self.inner
            .lock()
            .map(|i| i.entries.len() >= MAX_ENTRIES)
            .unwrap_or(true)
    }

    pub fn record(&self, session: &str, direction: Direction, message: Value) {
        let text_len = if matches!(message, Value::Object(_) | Value::Array(_)) {
            serde_json::to_string(&message).map_or(0, |s| s.len())
        } else {
            0
        };
        let message = if text_len > MAX_MESSAGE_BYTES {
            let text = message.to_string();
            let cut = text.floor_char_boundary(MAX_MESSAGE_BYTES);
            Value::String(format!("{}… [{} bytes in all]", &text[..cut], text.len()))
        } else {
            message
        };
        self.push(session, direction, message);
    }

    pub fn record_raw(&self, session: &str, direction: Direction, text: &str) {
        let cut = text.floor_char_boundary(MAX_MESSAGE_BYTES.min(text.len()));
        self.push(
            session,
            direction,
            Value::String(format!("raw: {}", &text[..cut])),
        );
    }

    pub fn note(&self, session: &str, text: String) {
        self.push(session, Direction::Note, Value::String(text));
    }

    pub fn entries(&self) -> (Vec<Entry>, usize) {
        self.inner
            .lock()
            .map(|i| (i.entries.clone(), i.dropped))
            .unwrap_or_default()
    }
}
