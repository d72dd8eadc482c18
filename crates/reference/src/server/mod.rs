//! The transport-neutral server: its settings, the live catalog, the
//! in-memory store and the change feed, and what one request sees of them
//! ([`Ctx`]). Transports own sessions and call [`Server::handle`] /
//! [`Server::handle_line`] (see `dispatch.rs`).
//!
//! A server is built from a [`Policy`] (its decisions) and a [`Layer`]
//! (what it rewrites); [`Plain`] and `Policy::default()` are the correct
//! server. `faults` builds the faulty ones.

pub mod layer;
pub mod wire;

pub use layer::{Layer, Plain};
pub use wire::Wire;

use crate::catalog_file::Catalog;
use crate::cursor::{self, CursorError, CursorKey, Position};
use crate::error::RpcError;
use crate::live::Snapshot;
use crate::policy::Policy;
use crate::rate::RateSpec;
use crate::served_era::Era;
use crate::session::{Change, SessionState};
use crate::shared_auth::SharedAuth;
use crate::store::Store;
use mcp_conform_protocol::jsonrpc::DEFAULT_MAX_LINE;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use tokio::sync::broadcast;

/// How long list results may be cached in the stateless era, when the
/// catalog cannot change at run time.
const STATIC_LIST_TTL_MS: u64 = 60_000;

/// How a server is run (the `serve-reference` options other than faults).
#[derive(Debug, Clone)]
pub struct Settings {
    /// Enables `conform/mutate`.
    pub control: bool,
    pub rate: Option<RateSpec>,
    pub max_line: usize,
    /// `--ping-client`: a ping request to the client before each tools/list
    /// answer in the stateful eras.
    pub ping_client: bool,
    /// `--list-changed-after-query`: one notifications/tools/list_changed
    /// per session, before the answer to its first tools/list with a query
    /// or filter, in the stateful eras.
    pub list_changed_after_query: bool,
    /// `--modern-only`: server/discover lists the stateless versions only,
    /// and initialize is refused with UnsupportedProtocolVersion.
    pub modern_only: bool,
    /// `--hold-calls`: every tools/call that would succeed is held without
    /// an answer until the client cancels it or the session ends.
    pub hold_calls: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            control: false,
            rate: None,
            max_line: DEFAULT_MAX_LINE,
            ping_client: false,
            list_changed_after_query: false,
            modern_only: false,
            hold_calls: false,
        }
    }
}

pub struct Server {
    pub(crate) settings: Settings,
    policy: Policy,
    layer: Arc<dyn Layer>,
    live: RwLock<Arc<Snapshot>>,
    pub(crate) cursors: CursorKey,
    store: Mutex<Store>,
    pub(crate) shared_auth: Option<SharedAuth>,
    changes: broadcast::Sender<Change>,
    /// Held from reading the catalog to replacing it, so concurrent
    /// mutations (several HTTP sessions) apply one after the other and none
    /// overwrites another's change.
    mutations: Mutex<()>,
    /// First pages served by `tools/list` (walks started), for the
    /// `grouping-membership-unstable` fault.
    walks: AtomicU64,
}

impl Server {
    /// A server of `catalog` that decides by `policy` and rewrites through
    /// `layer`.
    pub fn assemble(
        catalog: Catalog,
        settings: Settings,
        policy: Policy,
        layer: Arc<dyn Layer>,
    ) -> Self {
        let shared_auth = policy
            .sessions
            .shared_auth
            .on()
            .then(|| SharedAuth::for_catalog(&catalog.name));
        let (changes, _) = broadcast::channel(64);
        Server {
            settings,
            policy,
            layer,
            live: RwLock::new(Arc::new(Snapshot::new(catalog, 1))),
            cursors: CursorKey::random(),
            store: Mutex::new(Store::default()),
            shared_auth,
            changes,
            mutations: Mutex::new(()),
            walks: AtomicU64::new(0),
        }
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn layer(&self) -> &dyn Layer {
        &*self.layer
    }

    /// A new session with this server's rate limit.
    pub fn new_session(&self) -> SessionState {
        let mut session = SessionState::new(self.settings.rate);
        if self.policy.sessions.bucket_never_refills.on() {
            session.bucket = session.bucket.take().map(|b| b.without_refill());
        }
        session
    }

    /// The catalog generation requests see right now.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        Arc::clone(&self.live.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Serializes catalog mutations: take it, then read [`Server::snapshot`],
    /// edit, and [`Server::replace_catalog`] before dropping it.
    pub(crate) fn lock_mutations(&self) -> MutexGuard<'_, ()> {
        self.mutations.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces the catalog (control hook) and announces the change to
    /// other sessions; the caller notifies its own session inline.
    pub(crate) fn replace_catalog(&self, catalog: Catalog, change: Change) {
        let mut live = self.live.write().unwrap_or_else(|e| e.into_inner());
        let generation = live.generation + 1;
        *live = Arc::new(Snapshot::new(catalog, generation));
        drop(live);
        // No receivers (stdio) is not an error worth reporting.
        let _ = self.changes.send(change);
    }

    /// Catalog changes, for transports that serve several sessions: feed
    /// each received change to [`Server::notifications_for`] per session.
    pub fn subscribe_changes(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    /// The notifications `session` should receive for a change made by any
    /// session. The session that made it already got them after its
    /// response, so it gets none here.
    pub fn notifications_for(
        &self,
        session: &SessionState,
        change: &Change,
    ) -> Vec<serde_json::Value> {
        if change.origin == session.id || self.policy.sessions.list_changed_missing.on() {
            return Vec::new();
        }
        session.notifications_for(change)
    }

    pub(crate) fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a `tools/list` walk when its first page is served.
    pub(crate) fn start_walk(&self) {
        self.walks.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether the latest walk is an even-numbered one (the second, fourth…).
    pub(crate) fn even_walk(&self) -> bool {
        self.walks.load(Ordering::Relaxed).is_multiple_of(2)
    }

    pub(crate) fn list_ttl_ms(&self) -> u64 {
        if self.settings.control {
            0
        } else {
            STATIC_LIST_TTL_MS
        }
    }
}

/// What one request sees.
pub struct Ctx<'a> {
    pub server: &'a Server,
    pub snap: Arc<Snapshot>,
    pub session: &'a mut SessionState,
    pub era: Era,
    pub method: &'a str,
    /// Messages to send after the response (notifications).
    pub after: Vec<Value>,
}

impl<'a> Ctx<'a> {
    /// The server's layer, for as long as the request.
    pub fn layer(&self) -> &'a dyn Layer {
        self.server.layer()
    }

    /// The server's decisions, for as long as the request.
    pub fn policy(&self) -> &'a Policy {
        self.server.policy()
    }

    /// The offset a cursor stands for, checked against this method, scope
    /// and catalog generation; 0 without a cursor.
    pub fn resume(&self, cursor: Option<&str>, scope: [u8; 8]) -> Result<usize, RpcError> {
        let Some(cursor) = cursor else {
            return Ok(0);
        };
        let cursor = self.layer().cursor(self, cursor);
        let resumed = self
            .server
            .cursors
            .resume(cursor, self.method, scope, self.snap.generation);
        self.layer().resume(self, resumed).map_err(cursor_error)
    }

    /// The cursor for the page after `[offset, offset + shown)`, if any.
    pub fn next_cursor(
        &self,
        scope: [u8; 8],
        offset: usize,
        shown: usize,
        total: usize,
    ) -> Option<String> {
        let end = offset + shown;
        if shown == 0 || end >= total {
            return None;
        }
        let next = self.layer().next_offset(self, offset, end);
        Some(self.server.cursors.encode(&Position {
            method: self.method.to_string(),
            scope,
            generation: self.snap.generation,
            offset: next,
        }))
    }
}

pub fn cursor_error(e: CursorError) -> RpcError {
    RpcError::invalid_params(e.to_string())
}

/// The scope of a list with no query or filter.
pub fn unscoped() -> [u8; 8] {
    cursor::scope(&[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    #[test]
    fn other_sessions_hear_about_changes() {
        let cat = Catalog::from_slice(include_bytes!("../../../../fixtures/catalogs/mini.json"))
            .expect("mini");
        let server = Server::new(cat, Config::default());
        let mut rx = server.subscribe_changes();
        let mut a = server.new_session();
        let mut b = server.new_session();
        a.protocol = Some("2025-11-25");
        b.protocol = Some("2025-11-25");
        let change = Change {
            origin: a.id,
            tools: true,
            ..Change::default()
        };
        server.replace_catalog(server.snapshot().catalog.clone(), change);
        let got = rx.try_recv().expect("change broadcast");
        assert!(server.notifications_for(&a, &got).is_empty());
        assert_eq!(server.notifications_for(&b, &got).len(), 1);
        assert_eq!(server.snapshot().generation, 2);
    }

    #[test]
    fn server_can_be_shared_across_threads() {
        fn assert_shareable<T: Send + Sync>() {}
        assert_shareable::<Server>();
    }
}
