//! The transport-neutral server: configuration, the live catalog, the
//! in-memory store and the change feed. Transports own sessions and call
//! [`Server::handle`] / [`Server::handle_line`] (see `dispatch.rs`).

use super::catalog_file::Catalog;
use super::cursor::CursorKey;
use super::faults::{Fault, Faults};
use super::live::Snapshot;
use super::rate::RateSpec;
use super::session::{Change, SessionState};
use super::shared_auth::SharedAuth;
use super::store::Store;
use mcp_conform_protocol::jsonrpc::DEFAULT_MAX_LINE;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use tokio::sync::broadcast;

/// How long list results may be cached in the stateless era, when the
/// catalog cannot change at run time.
const STATIC_LIST_TTL_MS: u64 = 60_000;

#[derive(Debug, Clone)]
pub struct Config {
    pub faults: Faults,
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
}

impl Default for Config {
    fn default() -> Self {
        Config {
            faults: Faults::none(),
            control: false,
            rate: None,
            max_line: DEFAULT_MAX_LINE,
            ping_client: false,
            list_changed_after_query: false,
            modern_only: false,
        }
    }
}

pub struct Server {
    pub(crate) config: Config,
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
    pub fn new(catalog: Catalog, config: Config) -> Self {
        let shared_auth = config
            .faults
            .has(Fault::PdSharedAuth)
            .then(|| SharedAuth::for_catalog(&catalog.name));
        let (changes, _) = broadcast::channel(64);
        Server {
            config,
            live: RwLock::new(Arc::new(Snapshot::new(catalog, 1))),
            cursors: CursorKey::random(),
            store: Mutex::new(Store::default()),
            shared_auth,
            changes,
            mutations: Mutex::new(()),
            walks: AtomicU64::new(0),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn faults(&self) -> &Faults {
        &self.config.faults
    }

    /// A new session with this server's rate limit.
    pub fn new_session(&self) -> SessionState {
        let mut session = SessionState::new(self.config.rate);
        if self.faults().has(Fault::RateLimitNoRecovery) {
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
        if change.origin == session.id || self.faults().has(Fault::ListChangedMissing) {
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
        if self.config.control {
            0
        } else {
            STATIC_LIST_TTL_MS
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_sessions_hear_about_changes() {
        let cat = Catalog::from_slice(include_bytes!("../../../fixtures/catalogs/mini.json"))
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
