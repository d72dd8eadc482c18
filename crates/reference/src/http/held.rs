//! The response stream of a tools/call that `--hold-calls` holds: the
//! dispatcher's other messages, then nothing, kept open until the client
//! cancels the call (a `notifications/cancelled` naming it drops the
//! held entry and with it the stream's release), the client closes the
//! stream (which is the cancellation in 2026-07-28), or the server stops.

use super::App;
use crate::session::SessionState;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::Value;
use std::convert::Infallible;
use tokio::sync::oneshot;

/// When the request `id` was a tools/call the dispatcher held, gives its
/// entry a release and returns the receiving end. `keep`: the entry
/// leaves with the stream (a sessionless request's state ends with it).
pub fn take(
    state: &mut SessionState,
    id: Option<&Value>,
    out: &[Value],
    keep: bool,
) -> Option<Held> {
    let id = id?;
    if out.iter().any(|m| m.get("id") == Some(id)) {
        return None;
    }
    let at = state
        .held
        .iter()
        .position(|h| &h.id == id && h.release.is_none())?;
    let (tx, rx) = oneshot::channel();
    if keep {
        state.held.remove(at);
        return Some(Held { rx, kept: Some(tx) });
    }
    state.held[at].release = Some(tx);
    Some(Held { rx, kept: None })
}

/// What keeps a held call's stream open.
pub struct Held {
    rx: oneshot::Receiver<()>,
    /// The sender, when nothing else can drop it: then only the client or
    /// the server's stop ends the stream.
    kept: Option<oneshot::Sender<()>>,
}

/// `initial` messages, then an open stream without an answer.
pub fn stream(app: &App, initial: Vec<Value>, held: Held) -> Response {
    let mut shutdown = app.shutdown.clone();
    let head = futures::stream::iter(
        initial
            .iter()
            .map(|m| Ok::<_, Infallible>(Event::default().event("message").data(m.to_string())))
            .collect::<Vec<_>>(),
    );
    let tail = futures::stream::once(async move {
        let Held { rx, kept } = held;
        tokio::select! {
            _ = rx => {}
            _ = shutdown.wait_for(|stop| *stop) => {}
        }
        drop(kept);
    })
    .filter_map(|()| async { None::<Result<Event, Infallible>> });
    Sse::new(head.chain(tail))
        .keep_alive(KeepAlive::default())
        .into_response()
}
