//! The wire transcript of one scenario, shared by all of its sessions.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Entries kept per scenario; later ones are counted, not stored.
const MAX_ENTRIES: usize = 2000;
/// Memory the kept entries of one scenario may take, by [`approx_heap_bytes`].
/// Counts alone do not bound memory: 2000 small messages of a notification
/// flood take several MiB as parsed JSON, and a report keeps the transcript
/// of every failed scenario. The largest transcript of the reference run is
/// about 130 KB of JSON text; this leaves room for several times that.
pub const MAX_BYTES: usize = 1024 * 1024;
/// A message bigger than this is stored as a truncated text.
pub const MAX_MESSAGE_BYTES: usize = 32 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Sent,
    Received,
    Note,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Entry {
    /// Milliseconds since the scenario started.
    pub at_ms: u64,
    pub session: String,
    pub direction: Direction,
    /// The message, or a text for raw bytes, notes and truncated messages.
    pub message: Value,
    /// A received line not decoded yet (`message` is null until
    /// [`Entry::decode`]): most transcripts are dropped unread, and a long
    /// answer was decoded cut down, so the message is made from its text
    /// only for a transcript that is kept.
    #[serde(skip)]
    pub text: Option<Arc<str>>,
}

impl Entry {
    /// Makes `message` of the text the entry was recorded with, if any.
    pub fn decode(&mut self) {
        if let Some(text) = self.text.take() {
            self.message = decoded(&text);
        }
    }

    /// The message, decoded from its text if it was recorded as text: a
    /// kept transcript stays text until a report shows it (as parsed JSON
    /// it took several times the memory, for the whole run).
    pub fn message(&self) -> Cow<'_, Value> {
        match &self.text {
            Some(text) => Cow::Owned(decoded(text)),
            None => Cow::Borrowed(&self.message),
        }
    }
}

fn decoded(text: &str) -> Value {
    crate::jsonrpc::compact::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// An entry as reports show it: with its message decoded.
impl Serialize for Entry {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Shown<'a> {
            at_ms: u64,
            session: &'a str,
            direction: Direction,
            message: &'a Value,
        }
        Shown {
            at_ms: self.at_ms,
            session: &self.session,
            direction: self.direction,
            message: &self.message(),
        }
        .serialize(serializer)
    }
}

#[derive(Debug, Default)]
struct Inner {
    entries: Vec<Entry>,
    dropped: usize,
    /// Estimated memory of `entries`.
    bytes: usize,
}

impl Inner {
    fn is_full(&self) -> bool {
        self.entries.len() >= MAX_ENTRIES || self.bytes >= MAX_BYTES
    }
}

/// An estimate of the heap memory a parsed JSON value holds: each string's
/// bytes, each array and object slot, object keys and the per-allocation
/// overhead. Used to keep stored messages within a byte budget.
pub fn approx_heap_bytes(value: &Value) -> usize {
    const ALLOC: usize = 16;
    const SLOT: usize = std::mem::size_of::<Value>();
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        Value::String(s) => s.len() + ALLOC,
        Value::Array(items) => {
            ALLOC + items.len() * SLOT + items.iter().map(approx_heap_bytes).sum::<usize>()
        }
        Value::Object(map) => {
            // An ordered map: an entry vector (hash, key, value) plus an index table.
            let per_entry = SLOT + std::mem::size_of::<String>() + 2 * std::mem::size_of::<usize>();
            2 * ALLOC
                + map
                    .iter()
                    .map(|(k, v)| per_entry + k.len() + ALLOC + approx_heap_bytes(v))
                    .sum::<usize>()
        }
    }
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
        let bytes = entry_bytes(session, &message);
        self.push_entry(session, direction, message, None, bytes);
    }

    /// Keeps an entry (a message, or its text to decode later) that takes
    /// about `bytes`, if the budget allows.
    fn push_entry(
        &self,
        session: &str,
        direction: Direction,
        message: Value,
        text: Option<Arc<str>>,
        bytes: usize,
    ) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        if inner.is_full() {
            inner.dropped += 1;
            return;
        }
        if inner.bytes + bytes > MAX_BYTES && !inner.entries.is_empty() {
            // The one place the budget runs out: say so where a reader looks.
            inner.bytes = MAX_BYTES;
            inner.dropped += 1;
            let marker = format!(
                "transcript limit reached ({} KiB of messages): later messages are counted, not kept",
                MAX_BYTES / 1024
            );
            self.append(
                &mut inner,
                session,
                Direction::Note,
                Value::String(marker),
                None,
            );
            return;
        }
        inner.bytes += bytes;
        self.append(&mut inner, session, direction, message, text);
    }

    fn append(
        &self,
        inner: &mut Inner,
        session: &str,
        direction: Direction,
        message: Value,
        text: Option<Arc<str>>,
    ) {
        inner.entries.push(Entry {
            at_ms: self.start.elapsed().as_millis() as u64,
            session: session.to_string(),
            direction,
            message,
            text,
        });
    }

    /// Whether further entries would only be counted (callers can skip copying).
    pub fn is_full(&self) -> bool {
        self.inner.lock().map(|i| i.is_full()).unwrap_or(true)
    }

    /// A short note that is kept even when the transcript is full (a closing
    /// summary such as how many notifications were dropped).
    pub fn note_always(&self, session: &str, text: String) {
        if let Ok(mut inner) = self.inner.lock() {
            self.append(
                &mut inner,
                session,
                Direction::Note,
                Value::String(text),
                None,
            );
        }
    }

    /// Records a message; one bigger than `MAX_MESSAGE_BYTES` as JSON text is
    /// kept as the start of that text. Only a message that is kept whole is
    /// copied.
    pub fn record(&self, session: &str, direction: Direction, message: &Value) {
        let mut text = BoundedText::new(MAX_MESSAGE_BYTES);
        // Writing into BoundedText cannot fail.
        let _ = serde_json::to_writer(&mut text, message);
        let entry = if text.total <= MAX_MESSAGE_BYTES {
            message.clone()
        } else {
            Value::String(format!("{}… [{} bytes in all]", text.head(), text.total))
        };
        self.push(session, direction, entry);
    }

    /// Records a message as the JSON text it came as (valid JSON), decoded
    /// only if the transcript is kept ([`Entry::decode`]); one longer than
    /// `MAX_MESSAGE_BYTES` is kept as the start of that text, as `record`
    /// keeps a long message.
    pub fn record_text(&self, session: &str, direction: Direction, text: &str) {
        if text.len() > MAX_MESSAGE_BYTES {
            let head = &text[..text.floor_char_boundary(MAX_MESSAGE_BYTES)];
            let long = format!("{head}… [{} bytes in all]", text.len());
            return self.push(session, direction, Value::String(long));
        }
        // The message as parsed JSON costs a few times its text.
        let bytes = std::mem::size_of::<Entry>() + session.len() + 4 * text.len();
        self.push_entry(
            session,
            direction,
            Value::Null,
            Some(Arc::from(text)),
            bytes,
        );
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

    /// A copy of the entries, decoded.
    pub fn entries(&self) -> (Vec<Entry>, usize) {
        let (mut entries, dropped) = self
            .inner
            .lock()
            .map(|i| (i.entries.clone(), i.dropped))
            .unwrap_or_default();
        entries.iter_mut().for_each(Entry::decode);
        (entries, dropped)
    }

    /// The entries, moved out (the transcript is left empty, its budget
    /// spent): for the end of a scenario, when nothing records any more.
    /// Entries recorded as text are not decoded yet ([`Entry::decode`]).
    pub fn take_entries(&self) -> (Vec<Entry>, usize) {
        self.inner
            .lock()
            .map(|mut i| (std::mem::take(&mut i.entries), i.dropped))
            .unwrap_or_default()
    }
}

/// A message's JSON text, of which only the first `limit` bytes are kept;
/// the rest is counted.
struct BoundedText {
    kept: Vec<u8>,
    limit: usize,
    total: usize,
}

impl BoundedText {
    fn new(limit: usize) -> Self {
        BoundedText {
            kept: Vec::new(),
            limit,
            total: 0,
        }
    }

    /// The kept bytes, cut back to whole UTF-8 characters.
    fn head(&self) -> &str {
        match std::str::from_utf8(&self.kept) {
            Ok(text) => text,
            Err(e) => std::str::from_utf8(&self.kept[..e.valid_up_to()]).unwrap_or_default(),
        }
    }
}

impl std::io::Write for BoundedText {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = self.limit.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&buf[..room.min(buf.len())]);
        self.total += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What one entry costs: the message, the session name, the entry itself.
fn entry_bytes(session: &str, message: &Value) -> usize {
    std::mem::size_of::<Entry>() + session.len() + approx_heap_bytes(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn flood_note() -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "x".repeat(100)}})
    }

    /// A kept entry stays the text it came as; a report shows it decoded,
    /// and a report read back holds the same message.
    #[test]
    fn an_entry_recorded_as_text_is_shown_decoded() {
        let t = Transcript::new();
        t.record_text(
            "main",
            Direction::Received,
            r#"{"jsonrpc":"2.0","id":1,"result":{"b":1,"a":[2]}}"#,
        );
        t.record_text("main", Direction::Received, "not json");
        let (entries, _) = t.take_entries();
        assert!(entries
            .iter()
            .all(|e| e.text.is_some() && e.message.is_null()));
        let shown = serde_json::to_value(&entries).expect("serializes");
        assert_eq!(
            shown[0]["message"],
            json!({"jsonrpc": "2.0", "id": 1, "result": {"b": 1, "a": [2]}})
        );
        assert_eq!(
            shown[0]["message"].to_string(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"b":1,"a":[2]}}"#
        );
        assert_eq!(shown[1]["message"], json!("not json"));
        assert_eq!(*entries[0].message(), shown[0]["message"]);
        let read_back: Vec<Entry> = serde_json::from_value(shown.clone()).expect("reads back");
        assert_eq!(serde_json::to_value(&read_back).expect("serializes"), shown);
    }

    #[test]
    fn big_messages_are_kept_as_the_start_of_their_text() {
        let t = Transcript::new();
        let small = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        // Three-byte characters, so the cut falls inside one.
        let big = json!({"text": "€".repeat(MAX_MESSAGE_BYTES)});
        t.record("main", Direction::Received, &small);
        t.record("main", Direction::Received, &big);
        let (entries, _) = t.entries();
        assert_eq!(entries[0].message, small);
        let full = big.to_string();
        let Value::String(kept) = &entries[1].message else {
            panic!("a big message is kept as text: {:?}", entries[1].message);
        };
        let (head, tail) = kept.split_once('…').expect("cut marker");
        assert!(full.starts_with(head) && head.len() > MAX_MESSAGE_BYTES - 3);
        assert_eq!(tail, format!(" [{} bytes in all]", full.len()));
    }

    #[test]
    fn a_flood_is_bounded_by_bytes_and_says_so() {
        let t = Transcript::new();
        let one = entry_bytes("main", &flood_note());
        for _ in 0..100_000 {
            t.record("main", Direction::Received, &flood_note());
        }
        let (entries, dropped) = t.entries();
        let kept: usize = entries
            .iter()
            .map(|e| entry_bytes(&e.session, &e.message))
            .sum();
        assert!(kept <= MAX_BYTES + 1024, "{kept} bytes kept");
        assert!(
            entries.len() < MAX_BYTES / one + 2,
            "{} entries",
            entries.len()
        );
        assert_eq!(entries.len() - 1 + dropped, 100_000);
        let last = entries
            .last()
            .map(|e| e.message.to_string())
            .unwrap_or_default();
        assert!(last.contains("transcript limit reached"), "{last}");
        assert!(t.is_full());
        t.note_always("main", "closing note".into());
        assert_eq!(t.entries().0.len(), entries.len() + 1);
    }

    #[test]
    fn the_estimate_grows_with_content() {
        assert_eq!(approx_heap_bytes(&json!(1)), 0);
        let small = approx_heap_bytes(&json!({"a": "b"}));
        let big = approx_heap_bytes(&json!({"a": "b".repeat(1000)}));
        assert!(big >= small + 999);
        assert!(approx_heap_bytes(&flood_note()) > 300);
    }
}
