//! Reading what a Streamable HTTP server sends, within bounds: a body, an
//! SSE stream and each of its events have a byte cap, so a hostile server
//! cannot make the harness hold more than that; and a failure says what
//! the harness saw (status, content type, bytes, time) and why, the whole
//! cause chain on one line.

use std::error::Error;
use std::time::{Duration, Instant};

use reqwest::header::{CONTENT_ENCODING, CONTENT_TYPE, LOCATION};

use super::stdio::human_size;

/// What a user should do about a redirect: the harness follows none, since
/// following one would carry the user's headers to wherever it points.
pub const REDIRECT_HINT: &str =
    "MCP endpoints answer on the URL the client posts to; point --url at the final URL";

/// An error and every cause under it, on one line: reqwest's top-level
/// message ("error sending request for url (…)") names no cause by itself.
/// A cause that repeats the text of the one above it is left out.
pub fn error_chain(e: &(dyn Error + 'static)) -> String {
    let mut parts: Vec<String> = vec![e.to_string()];
    let mut source = e.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

/// What the harness saw of one HTTP answer, for the message of a failure.
#[derive(Debug, Clone)]
pub struct Seen {
    pub status: reqwest::StatusCode,
    pub content_type: String,
    /// Body bytes received so far.
    pub bytes: usize,
    /// When the request was sent.
    pub since: Instant,
}

impl Seen {
    pub fn of(response: &reqwest::Response, since: Instant) -> Self {
        Self {
            status: response.status(),
            content_type: header_text(response, CONTENT_TYPE),
            bytes: 0,
            since,
        }
    }
}

impl std::fmt::Display for Seen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let content_type = if self.content_type.is_empty() {
            "no content type"
        } else {
            &self.content_type
        };
        write!(
            f,
            "HTTP {}, {content_type}, {} body bytes received, {}",
            self.status,
            self.bytes,
            waited(self.since.elapsed())
        )
    }
}

/// "0.42 s after the request".
fn waited(d: Duration) -> String {
    format!("{:.2} s after the request", d.as_secs_f64())
}

/// A header as text ("" when absent or not text), lower-cased.
pub fn header_text(response: &reqwest::Response, name: reqwest::header::HeaderName) -> String {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// A redirect the harness does not follow: the status and where it pointed.
pub fn redirect(response: &reqwest::Response) -> Option<(String, String)> {
    if !response.status().is_redirection() {
        return None;
    }
    let location = response
        .headers()
        .get(LOCATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    Some((response.status().to_string(), location))
}

/// Why a body is not read at all: compressed although the request accepted
/// no encoding (it would be binary, and a small one can inflate to
/// gigabytes), or declared larger than the cap.
pub fn refused(response: &reqwest::Response, cap: usize) -> Option<String> {
    let encoding = header_text(response, CONTENT_ENCODING);
    if !encoding.is_empty() && encoding != "identity" {
        return Some(format!(
            "the body has Content-Encoding: {encoding}, which the request did not accept; \
             not decoded"
        ));
    }
    match response.content_length() {
        Some(n) if n > cap as u64 => Some(format!(
            "the body declares Content-Length {n}, over the {} cap; not read",
            human_size(cap)
        )),
        _ => None,
    }
}

/// Why reading stopped before the body or stream ended well.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReadError {
    #[error("the body exceeded the {} cap; the harness stopped reading", human_size(*.0))]
    BodyCap(usize),
    #[error("one SSE event exceeded the {} cap; the harness stopped reading", human_size(*.0))]
    EventCap(usize),
    #[error("the SSE stream exceeded the {} cap in all; the harness stopped reading", human_size(*.0))]
    StreamCap(usize),
    #[error("{0}")]
    Broken(String),
}

/// How a body read ended early: "the body ended after 17 of 1000 bytes: …"
/// when its length was declared.
pub fn broken_body(e: &reqwest::Error, got: usize, declared: Option<u64>) -> ReadError {
    let of = declared.map(|n| format!(" of {n}")).unwrap_or_default();
    ReadError::Broken(format!(
        "the body ended after {got}{of} bytes: {}",
        error_chain(e)
    ))
}

/// An SSE parser that holds at most one event's data (up to `max_event`
/// bytes) and reads at most `max_stream` bytes in all. Only `data` fields
/// are kept; other fields and comments are counted and dropped, so a huge
/// comment or id line costs no memory either.
#[derive(Debug)]
pub struct SseReader {
    max_event: usize,
    max_stream: usize,
    total: usize,
    /// The field name of the current line, while its colon is not seen
    /// (kept up to 8 bytes: only `data` matters).
    field: Vec<u8>,
    field_long: bool,
    /// The current line's colon was seen: the rest is its value.
    in_value: bool,
    value_is_data: bool,
    /// The one space after the colon that the format drops.
    skip_space: bool,
    line_empty: bool,
    after_cr: bool,
    data: Vec<u8>,
    data_lines: usize,
}

impl SseReader {
    pub fn new(max_event: usize, max_stream: usize) -> Self {
        Self {
            max_event,
            max_stream,
            total: 0,
            field: Vec::new(),
            field_long: false,
            in_value: false,
            value_is_data: false,
            skip_space: false,
            line_empty: true,
            after_cr: false,
            data: Vec::new(),
            data_lines: 0,
        }
    }

    /// Bytes read so far.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Feeds one chunk; the data of each event it completes goes to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Vec<u8>>) -> Result<(), ReadError> {
        // The stream's cap is checked after the chunk's events, so that one
        // event over its own cap is named as such.
        self.total = self.total.saturating_add(chunk.len());
        let mut rest = chunk;
        while !rest.is_empty() {
            if std::mem::take(&mut self.after_cr) && rest[0] == b'\n' {
                rest = &rest[1..];
                continue;
            }
            match rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
                Some(i) => {
                    self.take(&rest[..i])?;
                    self.end_line(out)?;
                    self.after_cr = rest[i] == b'\r';
                    rest = &rest[i + 1..];
                }
                None => {
                    self.take(rest)?;
                    break;
                }
            }
        }
        if self.total > self.max_stream {
            return Err(ReadError::StreamCap(self.max_stream));
        }
        Ok(())
    }

    /// Part of a line, without its end.
    fn take(&mut self, mut run: &[u8]) -> Result<(), ReadError> {
        if run.is_empty() {
            return Ok(());
        }
        self.line_empty = false;
        if !self.in_value {
            let colon = run.iter().position(|b| *b == b':');
            let name = &run[..colon.unwrap_or(run.len())];
            if self.field.len() + name.len() > 8 {
                self.field_long = true;
            } else {
                self.field.extend_from_slice(name);
            }
            let Some(c) = colon else {
                return Ok(());
            };
            self.in_value = true;
            self.skip_space = true;
            self.value_is_data = self.is_data_field();
            if self.value_is_data {
                self.start_data_line()?;
            }
            run = &run[c + 1..];
        }
        if std::mem::take(&mut self.skip_space) {
            match run.first() {
                Some(b' ') => run = &run[1..],
                Some(_) => {}
                None => self.skip_space = true,
            }
        }
        if self.value_is_data {
            self.push_data(run)?;
        }
        Ok(())
    }

    fn is_data_field(&self) -> bool {
        !self.field_long && self.field == b"data"
    }

    /// A `data` line adds a line feed between it and the one before.
    fn start_data_line(&mut self) -> Result<(), ReadError> {
        self.data_lines += 1;
        if self.data_lines > 1 {
            self.push_data(b"\n")?;
        }
        Ok(())
    }

    fn push_data(&mut self, bytes: &[u8]) -> Result<(), ReadError> {
        if self.data.len() + bytes.len() > self.max_event {
            return Err(ReadError::EventCap(self.max_event));
        }
        self.data.extend_from_slice(bytes);
        Ok(())
    }

    fn end_line(&mut self, out: &mut Vec<Vec<u8>>) -> Result<(), ReadError> {
        if self.line_empty {
            // A blank line ends the event.
            if self.data_lines > 0 {
                out.push(std::mem::take(&mut self.data));
            }
            self.data_lines = 0;
        } else if !self.in_value && self.is_data_field() {
            // `data` with no colon: a data line with an empty value.
            self.start_data_line()?;
        }
        self.field.clear();
        self.field_long = false;
        self.in_value = false;
        self.value_is_data = false;
        self.skip_space = false;
        self.line_empty = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{HttpConnection, HttpSpec, Incoming};
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    fn events(input: &[&[u8]], max_event: usize) -> (Vec<String>, Option<ReadError>) {
        let mut r = SseReader::new(max_event, 1 << 20);
        let mut out = Vec::new();
        let mut err = None;
        for chunk in input {
            if let Err(e) = r.feed(chunk, &mut out) {
                err = Some(e);
                break;
            }
        }
        let texts = out
            .into_iter()
            .map(|d| String::from_utf8_lossy(&d).into_owned())
            .collect();
        (texts, err)
    }

    #[test]
    fn events_end_at_a_blank_line_whatever_the_line_ends() {
        let (got, err) = events(
            &[b"data: a\n\ndata: b\r\n\r\ndata:c\r\rid: 7\nevent: x\ndata\n\n"],
            64,
        );
        assert_eq!(got, ["a", "b", "c", ""]);
        assert_eq!(err, None);
    }

    #[test]
    fn data_lines_join_with_a_line_feed_and_survive_any_chunking() {
        let whole = b": comment\ndata: {\"a\":\ndata:  1}\n\n";
        for cut in 0..whole.len() {
            let (got, _) = events(&[&whole[..cut], &whole[cut..]], 64);
            assert_eq!(got, ["{\"a\":\n 1}"], "cut at {cut}");
        }
        // A CR and its LF in different chunks are one line end.
        let (got, _) = events(&[b"data: a\r", b"\n\r", b"\n"], 64);
        assert_eq!(got, ["a"]);
    }

    #[test]
    fn one_event_over_the_cap_stops_the_reader() {
        let (got, err) = events(&[b"data: 12345\n\n", b"data: 1234", b"56789"], 8);
        assert_eq!(got, ["12345"]);
        assert_eq!(err, Some(ReadError::EventCap(8)));
        // Over several data lines too.
        let (_, err) = events(&[b"data: 1234\ndata: 5678\n"], 8);
        assert_eq!(err, Some(ReadError::EventCap(8)));
    }

    #[test]
    fn other_fields_cost_nothing_but_count_toward_the_stream_cap() {
        let mut r = SseReader::new(8, 100);
        let mut out = Vec::new();
        let comment = [b':'; 60];
        assert_eq!(r.feed(&comment, &mut out), Ok(()));
        assert_eq!(r.data.capacity(), 0);
        assert_eq!(r.feed(&comment, &mut out), Err(ReadError::StreamCap(100)));
        assert_eq!(r.total(), 120);
    }

    #[test]
    fn a_long_field_name_is_not_data() {
        let (got, err) = events(&[b"datadatadata: x\n\n"], 64);
        assert!(got.is_empty());
        assert_eq!(err, None);
    }

    #[test]
    fn the_error_chain_names_every_cause_once() {
        #[derive(Debug)]
        struct E(&'static str, Option<Box<E>>);
        impl std::fmt::Display for E {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0)
            }
        }
        impl Error for E {
            fn source(&self) -> Option<&(dyn Error + 'static)> {
                self.1.as_deref().map(|e| e as _)
            }
        }
        let e = E(
            "error sending request",
            Some(Box::new(E(
                "client error (Connect)",
                Some(Box::new(E(
                    "Connect",
                    Some(Box::new(E("connection refused", None))),
                ))),
            ))),
        );
        assert_eq!(
            error_chain(&e),
            "error sending request: client error (Connect): connection refused"
        );
    }

    /// A loopback server that answers every request with `answer` (and
    /// keeps the connection open when `hold`); what it was sent is kept.
    async fn serve(answer: Vec<u8>, hold: bool) -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
        let got = Arc::new(Mutex::new(Vec::new()));
        let seen = got.clone();
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                let mut buf = vec![0; 64 * 1024];
                let n = conn.read(&mut buf).await.unwrap_or(0);
                seen.lock()
                    .expect("a lock")
                    .push(String::from_utf8_lossy(&buf[..n]).into_owned());
                let _ = conn.write_all(&answer).await;
                if hold {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                }
            }
        });
        (url, got)
    }

    fn spec(url: &str) -> HttpSpec {
        let mut spec = HttpSpec::new(url);
        spec.timeout = Duration::from_secs(2);
        spec.max_body = 1024;
        spec.headers = vec![("x-api-key".into(), "SECRET123".into())];
        spec
    }

    const INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;

    /// What the connection queues after one POST of `answer`.
    async fn queued(answer: &[u8], hold: bool) -> (Vec<Incoming>, Vec<String>) {
        let (url, got) = serve(answer.to_vec(), hold).await;
        let mut conn = HttpConnection::new(&spec(&url), false, "2025-11-25").expect("a client");
        conn.send(INITIALIZE).await.expect("an answer");
        let mut items = Vec::new();
        while let Ok(Some(item)) = tokio::time::timeout(Duration::from_secs(1), conn.recv()).await {
            let last = matches!(item, Incoming::Unanswered { .. });
            items.push(item);
            if last {
                break;
            }
        }
        let sent = got.lock().expect("a lock").clone();
        (items, sent)
    }

    fn reasons(items: &[Incoming]) -> String {
        items
            .iter()
            .filter_map(|i| match i {
                Incoming::Garbage { reason, .. } => Some(reason.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(" / ")
    }

    #[tokio::test]
    async fn a_redirect_to_another_host_is_an_error_and_nothing_reaches_that_host() {
        let (elsewhere, reached) = serve(b"HTTP/1.1 200 OK\r\n\r\n".to_vec(), false).await;
        let redirect = format!(
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: {elsewhere}\r\nContent-Length: 0\r\n\r\n"
        );
        let (url, _) = serve(redirect.into_bytes(), false).await;
        let mut conn = HttpConnection::new(&spec(&url), false, "2025-11-25").expect("a client");
        let e = conn.send(INITIALIZE).await.expect_err("a redirect");
        assert!(e.is_incomplete_exchange());
        assert_eq!(
            e.to_string(),
            format!(
                "POST {url} answered 307 Temporary Redirect to Location {elsewhere}, a redirect \
                 mcp-conform does not follow; hint: {REDIRECT_HINT}"
            )
        );
        assert!(reached.lock().expect("a lock").is_empty());
    }

    #[tokio::test]
    async fn one_sse_event_over_the_cap_ends_the_wait_naming_the_cap() {
        let mut answer =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: ".to_vec();
        answer.extend(std::iter::repeat_n(b'a', 4096));
        let (items, _) = queued(&answer, true).await;
        let why = reasons(&items);
        assert!(
            why.starts_with("one SSE event exceeded the 1 KiB cap; the harness stopped reading (HTTP 200 OK, text/event-stream, "),
            "{why}"
        );
        assert!(
            matches!(items.last(), Some(Incoming::Unanswered { .. })),
            "{items:?}"
        );
    }

    #[tokio::test]
    async fn a_body_over_the_cap_or_cut_short_says_how_far_it_got() {
        let mut endless = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n".to_vec();
        endless.extend(std::iter::repeat_n(b' ', 4096));
        let (items, _) = queued(&endless, true).await;
        assert!(
            reasons(&items).starts_with("the body exceeded the 1 KiB cap"),
            "{items:?}"
        );

        let cut = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\": \"2.0\",";
        let (items, _) = queued(cut, false).await;
        let why = reasons(&items);
        assert!(
            why.starts_with("the body ended after 18 of 1000 bytes: error decoding response body")
                && why.contains("(HTTP 200 OK, application/json, 18 body bytes received, "),
            "{why}"
        );
        assert!(matches!(items.last(), Some(Incoming::Unanswered { .. })));
    }

    #[tokio::test]
    async fn a_compressed_body_is_named_not_decoded_and_only_identity_is_accepted() {
        let answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\n\x1f\x8b\x08\x00";
        let (items, sent) = queued(answer, false).await;
        assert!(
            reasons(&items).starts_with(
                "the body has Content-Encoding: gzip, which the request did not accept; not decoded (HTTP 200 OK"
            ),
            "{items:?}"
        );
        let request = sent.join("").to_ascii_lowercase();
        assert!(
            request.contains("\r\naccept-encoding: identity\r\n"),
            "{request}"
        );
    }

    #[tokio::test]
    async fn a_refused_connection_names_its_cause() {
        let port = TcpListener::bind("127.0.0.1:0")
            .await
            .and_then(|l| l.local_addr())
            .expect("a port")
            .port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let mut conn = HttpConnection::new(&spec(&url), false, "2025-11-25").expect("a client");
        let e = conn
            .send(INITIALIZE)
            .await
            .expect_err("refused")
            .to_string();
        assert!(
            e.starts_with(&format!("POST {url} failed after "))
                && e.to_ascii_lowercase().contains("connection refused"),
            "{e}"
        );
    }
}
