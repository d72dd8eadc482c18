//! The Streamable HTTP relay: a reverse proxy that forwards every request
//! (POST, GET, DELETE) to the one upstream the user named, and streams each
//! answer back unchanged, SSE included. Copies of the messages, with their
//! headers and status, go to the [`Sink`] on a thread of its own.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;

use super::trace::{HttpMeta, Side};
use super::Sink;

/// The most of one request body the proxy reads.
const MAX_BODY: usize = 64 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("cannot listen on {addr}: {reason}")]
    Listen { addr: SocketAddr, reason: String },
    #[error("the upstream {url} is not a usable http(s) URL: {reason}")]
    Upstream { url: String, reason: String },
    #[error("the upstream {url} cannot be reached: {reason}")]
    Unreachable { url: String, reason: String },
}

/// How the watched connection ended.
pub struct Watched {
    pub sink: Sink,
    pub ended: String,
}

type Wire = (Side, Instant, Vec<u8>, HttpMeta);

struct Relay {
    client: reqwest::Client,
    upstream: reqwest::Url,
    wire: mpsc::Sender<Wire>,
    exchanges: AtomicU64,
}

/// Serves until SIGINT or SIGTERM, then runs the checks judged when a
/// watch ends ([`Sink::close`]) and returns the sink.
pub async fn run(addr: SocketAddr, upstream: &str, sink: Sink) -> Result<Watched, HttpError> {
    let listener = bind(addr).await?;
    let mut watched = serve_until(listener, upstream, sink, stop_signal()).await?;
    watched.sink.close();
    Ok(watched)
}

/// Binds the relay's listening socket (port 0 picks a free one).
pub async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, HttpError> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| HttpError::Listen {
            addr,
            reason: e.to_string(),
        })
}

/// Relays what `listener` receives to `upstream` until `stop` completes
/// (its output says why), then returns the sink.
pub async fn serve_until(
    listener: tokio::net::TcpListener,
    upstream: &str,
    sink: Sink,
    stop: impl std::future::Future<Output = &'static str>,
) -> Result<Watched, HttpError> {
    let addr = listener
        .local_addr()
        .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)));
    let url = reqwest::Url::parse(upstream).map_err(|e| HttpError::Upstream {
        url: upstream.to_string(),
        reason: e.to_string(),
    })?;
    reachable(&url).await?;
    // No proxy from the environment and no redirects: the user's headers
    // reach the upstream they named and no other host.
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| HttpError::Upstream {
            url: upstream.to_string(),
            reason: e.to_string(),
        })?;
    let (wire, rx) = mpsc::channel::<Wire>();
    let checker = std::thread::spawn(move || check(sink, rx));
    let relay = Arc::new(Relay {
        client,
        upstream: url,
        wire,
        exchanges: AtomicU64::new(0),
    });
    let app = axum::Router::new()
        .fallback(proxy)
        .with_state(relay.clone());
    let server = axum::serve(listener, app);
    let ended = tokio::select! {
        r = server => match r {
            Ok(()) => "the listener closed".to_string(),
            Err(e) => format!("the listener failed: {e}"),
        },
        s = stop => s.to_string(),
    };
    drop(relay);
    let sink = tokio::task::spawn_blocking(move || checker.join())
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| HttpError::Listen {
            addr,
            reason: "the checking thread panicked".into(),
        })?;
    Ok(Watched { sink, ended })
}

/// Whether anything listens at the upstream's host and port.
async fn reachable(url: &reqwest::Url) -> Result<(), HttpError> {
    let err = |reason: String| HttpError::Unreachable {
        url: url.to_string(),
        reason,
    };
    let host = url.host_str().ok_or_else(|| err("no host".into()))?;
    let port = url
        .port_or_known_default()
        .ok_or_else(|| err("no port".into()))?;
    let connect = tokio::net::TcpStream::connect((host, port));
    match tokio::time::timeout(Duration::from_secs(5), connect).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(err(e.to_string())),
        Err(_) => Err(err("no answer within 5 s".into())),
    }
}

#[cfg(unix)]
async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        std::future::pending::<()>().await;
        return "";
    };
    tokio::select! {
        _ = int.recv() => "SIGINT",
        _ = term.recv() => "SIGTERM",
    }
}

#[cfg(windows)]
async fn stop_signal() -> &'static str {
    let _ = tokio::signal::ctrl_c().await;
    "Ctrl-C"
}

fn check(mut sink: Sink, rx: mpsc::Receiver<Wire>) -> Sink {
    while let Ok((from, at, bytes, http)) = rx.recv() {
        sink.message(from, at, &bytes, Some(http));
    }
    sink
}

/// Headers that belong to one hop, not to the message.
fn hop_by_hop(name: &str) -> bool {
    matches!(
        name,
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "transfer-encoding"
            | "te"
            | "trailer"
            | "upgrade"
            | "host"
            | "content-length"
    )
}

fn without_hop_by_hop(headers: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(headers.len());
    for (k, v) in headers {
        if !hop_by_hop(k.as_str()) {
            out.append(k.clone(), v.clone());
        }
    }
    out
}

fn header_list(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

async fn proxy(State(relay): State<Arc<Relay>>, req: Request) -> Response {
    let exchange = relay.exchanges.fetch_add(1, Ordering::Relaxed) + 1;
    let (parts, body) = req.into_parts();
    let body = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        Err(e) => return (StatusCode::PAYLOAD_TOO_LARGE, e.to_string()).into_response(),
    };
    let at = Instant::now();
    let mut url = relay.upstream.clone();
    if let Some(q) = parts.uri.query() {
        url.set_query(Some(q));
    }
    let meta = HttpMeta {
        method: parts.method.to_string(),
        path: parts.uri.path_and_query().map(|p| p.as_str().to_string()),
        status: None,
        headers: header_list(&parts.headers),
        exchange,
    };
    // A GET or DELETE has no body but is still something the client did
    // (a 2026-07-28 client opens no GET stream): it is recorded, bodiless.
    if !body.is_empty() || parts.method != axum::http::Method::POST {
        let _ = relay
            .wire
            .send((Side::Client, at, body.to_vec(), meta.clone()));
    }
    let headers = without_hop_by_hop(&parts.headers);
    let sent = relay
        .client
        .request(parts.method.clone(), url)
        .headers(headers)
        .body(body)
        .send()
        .await;
    let upstream = match sent {
        Ok(r) => r,
        Err(e) => {
            return (
                StatusCode::BAD_GATEWAY,
                format!("mcp-conform watch: the upstream did not answer: {e}"),
            )
                .into_response()
        }
    };
    answer(upstream, &relay, meta)
}

/// The upstream's answer, streamed through unchanged; a copy of each
/// message goes to the sink.
fn answer(upstream: reqwest::Response, relay: &Relay, request: HttpMeta) -> Response {
    let status = upstream.status();
    let headers = without_hop_by_hop(upstream.headers());
    let meta = HttpMeta {
        method: request.method,
        path: request.path,
        status: Some(status.as_u16()),
        headers: header_list(upstream.headers()),
        exchange: request.exchange,
    };
    let sse = meta
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/event-stream"));
    let mut inspector = Inspector {
        wire: relay.wire.clone(),
        meta,
        sse,
        body: Vec::new(),
        event: Vec::new(),
        line: Vec::new(),
        sent_any: false,
    };
    let stream = upstream.bytes_stream().map(move |chunk| {
        if let Ok(bytes) = &chunk {
            inspector.push(bytes);
        }
        chunk
    });
    let mut response = Response::new(Body::from_stream(stream));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

/// Watches an answer's bytes go by: a JSON body is one message, an SSE
/// stream one message per event's data. When the stream ends (or the host
/// drops it) the inspector is dropped and sends what it holds.
struct Inspector {
    wire: mpsc::Sender<Wire>,
    meta: HttpMeta,
    sse: bool,
    body: Vec<u8>,
    /// The data lines of the SSE event being read.
    event: Vec<u8>,
    line: Vec<u8>,
    sent_any: bool,
}

impl Inspector {
    fn push(&mut self, bytes: &[u8]) {
        if !self.sse {
            self.body.extend_from_slice(bytes);
            return;
        }
        for b in bytes {
            if *b == b'\n' {
                let line = std::mem::take(&mut self.line);
                self.sse_line(&line);
            } else {
                self.line.push(*b);
            }
        }
    }

    fn sse_line(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            let data = std::mem::take(&mut self.event);
            if !data.is_empty() {
                self.send(data);
            }
            return;
        }
        if let Some(data) = line.strip_prefix(b"data:") {
            let data = data.strip_prefix(b" ").unwrap_or(data);
            if !self.event.is_empty() {
                self.event.push(b'\n');
            }
            self.event.extend_from_slice(data);
        }
    }

    fn send(&mut self, bytes: Vec<u8>) {
        self.sent_any = true;
        let _ = self
            .wire
            .send((Side::Server, Instant::now(), bytes, self.meta.clone()));
    }
}

impl Drop for Inspector {
    fn drop(&mut self) {
        if self.sse {
            let data = std::mem::take(&mut self.event);
            if !data.is_empty() {
                self.send(data);
            }
        } else {
            let body = std::mem::take(&mut self.body);
            let text = String::from_utf8_lossy(&body);
            if !text.trim().is_empty() {
                self.send(text.trim_end().as_bytes().to_vec());
            }
        }
        if !self.sent_any {
            // A bodiless answer (202 Accepted, 405…): its status is what the rules read.
            self.send(Vec::new());
        }
    }
}
