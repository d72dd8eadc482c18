//! Streamable HTTP for the reference server (`serve-reference --http ADDR`):
//! one MCP endpoint at `/mcp` (POST messages, GET the session's
//! notification stream, DELETE the session) and the REST endpoints of seed
//! 001 under `/mcp-standard/`. Status codes and their reasons are listed in
//! `mcp.rs`; the transport only frames, routes and checks headers — every
//! message is answered by [`Server::handle`], as on stdio.

mod body;
mod held;
mod mcp;
pub mod origin;
pub mod param_values;
mod rest;
pub mod sessions;

use super::server::Server;
use super::session::Change;
use super::{ReferenceError, ServeArgs};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use origin::OriginPolicy;
use serde_json::{json, Value};
use sessions::{Listeners, Sessions};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, watch};

/// Where `--http` with no value listens.
pub const DEFAULT_ADDR: &str = "127.0.0.1:3000";
pub const DEFAULT_SESSION_TTL_SECS: u64 = 30 * 60;
pub const DEFAULT_MAX_SESSIONS: usize = 10_000;
pub const MCP_PATH: &str = "/mcp";
/// How long open streams and connections get to finish after SIGTERM.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// What `serve` needs besides the server.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub addr: String,
    pub origins: OriginPolicy,
    pub session_ttl: Duration,
    pub max_sessions: usize,
}

impl HttpOptions {
    pub fn from_args(addr: &str, args: &ServeArgs) -> Result<Self, ReferenceError> {
        Ok(HttpOptions {
            addr: addr.to_string(),
            origins: OriginPolicy::new(&args.allowed_origins).map_err(ReferenceError::BadOrigin)?,
            session_ttl: Duration::from_secs(args.session_ttl.max(1)),
            max_sessions: args.max_sessions.max(1),
        })
    }
}

/// Everything the handlers share.
pub(crate) struct App {
    pub server: Server,
    pub sessions: Sessions,
    pub listeners: Listeners,
    pub origins: OriginPolicy,
    pub max_body: usize,
    /// Becomes true on SIGTERM / Ctrl-C: open streams say goodbye and end.
    pub shutdown: watch::Receiver<bool>,
    /// With `--rate-limit`: the one bucket every request without a session
    /// (the stateless era) draws from, so the advertised limit holds there too.
    pub sessionless: std::sync::Mutex<Option<crate::rate::TokenBucket>>,
}

type Shared = Arc<App>;

/// `PORT` alone means loopback: a reference server must not be reachable
/// from the network unless the user names a host.
fn resolve_addr(addr: &str) -> String {
    if !addr.is_empty() && addr.bytes().all(|b| b.is_ascii_digit()) {
        format!("127.0.0.1:{addr}")
    } else {
        addr.to_string()
    }
}

async fn bind(addr: &str) -> Result<tokio::net::TcpListener, ReferenceError> {
    let full = resolve_addr(addr);
    let err = |reason: String| ReferenceError::HttpAddr {
        addr: addr.to_string(),
        reason,
    };
    let candidates: Vec<SocketAddr> = tokio::net::lookup_host(&full)
        .await
        .map_err(|e| err(format!("not HOST:PORT or PORT ({e})")))?
        .collect();
    let mut last = String::from("no address");
    for candidate in candidates {
        match tokio::net::TcpListener::bind(candidate).await {
            Ok(l) => return Ok(l),
            Err(e) => last = format!("cannot listen on {candidate}: {e}"),
        }
    }
    Err(err(last))
}

pub(crate) fn router(app: Shared) -> Router {
    Router::new()
        .route(MCP_PATH, post(mcp::post).get(mcp::get).delete(mcp::delete))
        .route("/mcp-standard/{tool}", post(rest::call))
        // The seed's own curl example uses this prefix.
        .route("/api/mcp-standard/{tool}", post(rest::call))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&app),
            check_origin,
        ))
        .with_state(app)
}

/// glibc keeps only 7 freed chunks per size class in its per-thread cache;
/// a list answer frees hundreds of small values of a few sizes at once, so
/// most frees and the next request's allocations take the slow locked path
/// (and `malloc_consolidate`). A deeper cache cut the server's CPU per
/// `tools/list` by about a quarter in `benches/http_load.rs`, for ~3 MB of
/// memory. The setting can only be made before the process starts, so the
/// CLI re-executes itself once with it (same pid, same arguments and
/// descriptors). A `GLIBC_TUNABLES` the user set is left alone.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MALLOC_TUNABLES: &str = "glibc.malloc.tcache_count=1000";

/// Re-executes the current process with [`MALLOC_TUNABLES`] unless already
/// tuned; returns only when that is not possible or not needed.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;
        if std::env::var_os("GLIBC_TUNABLES").is_some() {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let mut args = std::env::args_os();
        let argv0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
        // `exec` only returns on failure; serving untuned is then fine.
        let _ = std::process::Command::new(exe)
            .arg0(argv0)
            .args(args)
            .env("GLIBC_TUNABLES", MALLOC_TUNABLES)
            .exec();
    }
}

/// Serves until SIGTERM or Ctrl-C.
pub async fn serve(server: Server, options: HttpOptions) -> Result<(), ReferenceError> {
    let listener = bind(&options.addr).await?;
    let local = listener.local_addr()?;
    if !local.ip().is_loopback() {
        eprintln!(
            "warning: listening on a non-loopback address ({local}); the reference server has no authentication"
        );
    }
    let (stop_tx, stop_rx) = watch::channel(false);
    let changes = server.subscribe_changes();
    let sessionless = std::sync::Mutex::new(server.new_session().bucket);
    let app = Arc::new(App {
        max_body: server.settings().max_line,
        server,
        sessions: Sessions::new(options.max_sessions),
        listeners: Listeners::default(),
        origins: options.origins.clone(),
        shutdown: stop_rx,
        sessionless,
    });
    let fanout = tokio::spawn(fan_out(Arc::clone(&app), changes));
    let sweeper = tokio::spawn(sweep(Arc::clone(&app), options.session_ttl));
    eprintln!("listening on http://{local}{MCP_PATH}");

    let graceful = async move {
        stop_signal().await;
        let _ = stop_tx.send(true);
    };
    // Answers and stream events are small writes: send them at once rather
    // than letting Nagle's algorithm wait for the client's delayed ACK.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let served = axum::serve(listener, router(Arc::clone(&app))).with_graceful_shutdown(graceful);
    let mut stopping = app.shutdown.clone();
    let result = tokio::select! {
        r = served => r.map_err(ReferenceError::from),
        // Clients that keep a connection open must not hold the exit hostage.
        _ = async {
            let _ = stopping.wait_for(|s| *s).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => Ok(()),
    };
    fanout.abort();
    sweeper.abort();
    result
}

async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Delivers every catalog change to every other live session: each
/// session's GET stream and each open `subscriptions/listen` stream.
async fn fan_out(app: Shared, mut changes: broadcast::Receiver<Change>) {
    loop {
        let change = match changes.recv().await {
            Ok(c) => c,
            // Some changes were missed: announce every list, which is
            // always safe (list_changed only says "list again").
            Err(broadcast::error::RecvError::Lagged(_)) => Change {
                origin: 0,
                tools: true,
                prompts: true,
                resources: true,
                groups: true,
                tags: true,
            },
            Err(broadcast::error::RecvError::Closed) => return,
        };
        deliver(&app, &change);
    }
}

fn deliver(app: &App, change: &Change) {
    for entry in app.sessions.streaming() {
        let notes = app.server.notifications_for(&entry.state(), change);
        entry.push(notes);
    }
    for listener in app.listeners.all() {
        let notes = app.server.notifications_for(&listener.state(), change);
        for n in notes {
            let _ = listener.tx.try_send(n);
        }
    }
}

/// Ends idle sessions.
async fn sweep(app: Shared, ttl: Duration) {
    let period = (ttl / 4).clamp(Duration::from_millis(250), Duration::from_secs(60));
    let mut tick = tokio::time::interval(period);
    loop {
        tick.tick().await;
        for key in app.sessions.expire(ttl) {
            app.listeners.remove_owned_by(&key);
        }
    }
}

/// Rejects requests whose `Origin` is neither loopback nor allowed (403),
/// before any handler runs. Accepted cross-origin requests get CORS
/// headers, and their preflights (`OPTIONS`) are answered here, so a
/// browser client on an allowed origin can use the endpoint.
async fn check_origin(State(app): State<Shared>, request: Request, next: Next) -> Response {
    let Some(origin) = request.headers().get(header::ORIGIN).cloned() else {
        return next.run(request).await;
    };
    if app.server.policy().http.origin_unchecked.on() {
        return next.run(request).await;
    }
    if !origin.to_str().is_ok_and(|o| app.origins.allows(o)) {
        let shown = String::from_utf8_lossy(origin.as_bytes()).into_owned();
        let message = format!(
            "Forbidden: Origin {shown:?} is not allowed (loopback origins are; start the server with --allowed-origin to allow others)"
        );
        return if request.uri().path() == MCP_PATH {
            rpc_error_status(StatusCode::FORBIDDEN, Value::Null, -32600, &message, None)
        } else {
            rest::error(StatusCode::FORBIDDEN, &message)
        };
    }
    let mut response = if request.method() == Method::OPTIONS {
        let mut r = StatusCode::NO_CONTENT.into_response();
        let h = r.headers_mut();
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(CORS_REQUEST_HEADERS),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("600"),
        );
        r
    } else {
        next.run(request).await
    };
    let h = response.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    h.insert(header::VARY, HeaderValue::from_static("Origin"));
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("Mcp-Session-Id"),
    );
    response
}

/// What a browser client may send cross-origin.
const CORS_REQUEST_HEADERS: &str = "content-type, accept, authorization, last-event-id, mcp-session-id, mcp-protocol-version, mcp-method, mcp-name";

/// A JSON-RPC error as the body of an HTTP error status.
pub(crate) fn rpc_error_status(
    status: StatusCode,
    id: Value,
    code: i64,
    message: &str,
    data: Option<Value>,
) -> Response {
    json_response(
        status,
        &mcp_conform_protocol::jsonrpc::error_response(id, code, message, data),
    )
}

pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response {
    // Sized for a typical list page, so the buffer rarely regrows.
    let mut bytes = Vec::with_capacity(8 * 1024);
    if serde_json::to_writer(&mut bytes, body).is_err() {
        bytes = b"{}".to_vec();
    }
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        bytes,
    )
        .into_response()
}

/// `{"error": message}` (REST) — kept here so the origin check can use it.
pub(crate) fn error_object(message: &str) -> Value {
    json!({ "error": message })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_ports_bind_loopback() {
        assert_eq!(resolve_addr("8080"), "127.0.0.1:8080");
        assert_eq!(resolve_addr("0.0.0.0:1"), "0.0.0.0:1");
        assert_eq!(resolve_addr("localhost:0"), "localhost:0");
    }
}
