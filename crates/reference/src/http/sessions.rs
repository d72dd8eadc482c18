//! The HTTP session table (stateful eras) and the open notification
//! streams: each session's GET stream and every `subscriptions/listen`
//! stream.

use crate::session::SessionState;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Messages queued on one stream before further ones are dropped. The
/// stream only carries list_changed signals, which repeat themselves: a
/// client this far behind has lost nothing it cannot recover by listing.
pub const STREAM_QUEUE: usize = 256;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where a stream's messages go, and which stream it is (a newer GET on
/// the same session replaces an older one).
struct StreamSlot {
    serial: u64,
    tx: mpsc::Sender<Value>,
}

pub struct SessionEntry {
    pub key: String,
    state: Mutex<SessionState>,
    /// Milliseconds since the table's epoch.
    last_used: AtomicU64,
    stream: Mutex<Option<StreamSlot>>,
}

impl SessionEntry {
    pub fn state(&self) -> MutexGuard<'_, SessionState> {
        lock(&self.state)
    }

    pub fn has_stream(&self) -> bool {
        lock(&self.stream)
            .as_ref()
            .is_some_and(|s| !s.tx.is_closed())
    }

    /// Queues messages on the session's GET stream, if one is open.
    pub fn push(&self, messages: Vec<Value>) {
        if messages.is_empty() {
            return;
        }
        if let Some(slot) = lock(&self.stream).as_ref() {
            for m in messages {
                let _ = slot.tx.try_send(m);
            }
        }
    }
}

/// Why a session could not be created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenError {
    Full(usize),
    NoRandomness,
}

pub struct Sessions {
    map: RwLock<HashMap<String, Arc<SessionEntry>>>,
    epoch: Instant,
    max: usize,
    next_serial: AtomicU64,
}

impl Sessions {
    pub fn new(max: usize) -> Self {
        Sessions {
            map: RwLock::new(HashMap::new()),
            epoch: Instant::now(),
            max,
            next_serial: AtomicU64::new(1),
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, HashMap<String, Arc<SessionEntry>>> {
        self.map.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, HashMap<String, Arc<SessionEntry>>> {
        self.map.write().unwrap_or_else(|e| e.into_inner())
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    pub fn len(&self) -> usize {
        self.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn is_full(&self) -> bool {
        self.len() >= self.max
    }

    /// Stores an initialized session under a new unguessable id.
    pub fn open(&self, state: SessionState) -> Result<Arc<SessionEntry>, OpenError> {
        let key = new_key().ok_or(OpenError::NoRandomness)?;
        let entry = Arc::new(SessionEntry {
            key: key.clone(),
            state: Mutex::new(state),
            last_used: AtomicU64::new(self.now_ms()),
            stream: Mutex::new(None),
        });
        let mut map = self.write();
        if map.len() >= self.max {
            return Err(OpenError::Full(self.max));
        }
        map.insert(key, Arc::clone(&entry));
        Ok(entry)
    }

    /// The live session with this id, marked as used now.
    pub fn get(&self, key: &str) -> Option<Arc<SessionEntry>> {
        let entry = self.read().get(key).cloned()?;
        entry.last_used.store(self.now_ms(), Ordering::Relaxed);
        Some(entry)
    }

    /// Ends a session: its GET stream closes (its sender is dropped).
    pub fn close(&self, key: &str) -> Option<Arc<SessionEntry>> {
        let entry = self.write().remove(key)?;
        lock(&entry.stream).take();
        Some(entry)
    }

    /// Opens (or replaces) the session's GET stream; the receiver ends when
    /// the session ends or a newer GET replaces it.
    pub fn attach_stream(&self, entry: &SessionEntry) -> (u64, mpsc::Receiver<Value>) {
        let (tx, rx) = mpsc::channel(STREAM_QUEUE);
        let serial = self.next_serial.fetch_add(1, Ordering::Relaxed);
        *lock(&entry.stream) = Some(StreamSlot { serial, tx });
        (serial, rx)
    }

    /// Called when a GET stream's connection goes away: frees its slot
    /// unless a newer stream already took it, and restarts the idle clock.
    pub fn detach_stream(&self, entry: &SessionEntry, serial: u64) {
        let mut slot = lock(&entry.stream);
        if slot.as_ref().is_some_and(|s| s.serial == serial) {
            *slot = None;
        }
        entry.last_used.store(self.now_ms(), Ordering::Relaxed);
    }

    /// Sessions with an open GET stream.
    pub fn streaming(&self) -> Vec<Arc<SessionEntry>> {
        self.read()
            .values()
            .filter(|e| e.has_stream())
            .cloned()
            .collect()
    }

    /// Ends sessions unused for `ttl`; a session with an open GET stream
    /// is in use. Returns the ids ended.
    pub fn expire(&self, ttl: Duration) -> Vec<String> {
        let now = self.now_ms();
        let ttl = ttl.as_millis() as u64;
        let idle: Vec<String> = self
            .read()
            .values()
            .filter(|e| {
                now.saturating_sub(e.last_used.load(Ordering::Relaxed)) >= ttl && !e.has_stream()
            })
            .map(|e| e.key.clone())
            .collect();
        for key in &idle {
            self.close(key);
        }
        idle
    }
}

/// 128 random bits, hex: unguessable, and visible ASCII as the spec asks.
fn new_key() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A `subscriptions/listen` stream: the subscription and where its
/// notifications go. `owner` is the HTTP session it was opened in, if any.
pub struct Listener {
    pub owner: Option<String>,
    pub state: Mutex<SessionState>,
    pub tx: mpsc::Sender<Value>,
}

impl Listener {
    pub fn state(&self) -> MutexGuard<'_, SessionState> {
        lock(&self.state)
    }
}

#[derive(Default)]
pub struct Listeners {
    map: Mutex<HashMap<u64, Arc<Listener>>>,
    next: AtomicU64,
}

impl Listeners {
    pub fn add(&self, listener: Listener) -> u64 {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.map).insert(key, Arc::new(listener));
        key
    }

    pub fn remove(&self, key: u64) {
        lock(&self.map).remove(&key);
    }

    /// Ends every stream opened inside a session that ended.
    pub fn remove_owned_by(&self, session: &str) {
        lock(&self.map).retain(|_, l| l.owner.as_deref() != Some(session));
    }

    pub fn all(&self) -> Vec<Arc<Listener>> {
        lock(&self.map).values().cloned().collect()
    }

    pub fn len(&self) -> usize {
        lock(&self.map).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_open_expire_and_close() {
        let s = Sessions::new(2);
        let a = s.open(SessionState::new(None)).expect("a");
        let b = s.open(SessionState::new(None)).expect("b");
        assert_ne!(a.key, b.key);
        assert_eq!(a.key.len(), 32);
        assert_eq!(
            s.open(SessionState::new(None)).err(),
            Some(OpenError::Full(2))
        );
        let (serial, _rx) = s.attach_stream(&a);
        assert_eq!(s.streaming().len(), 1);
        // `a` streams, so only `b` is idle.
        assert_eq!(s.expire(Duration::ZERO), vec![b.key.clone()]);
        assert!(s.get(&b.key).is_none());
        s.detach_stream(&a, serial);
        assert!(s.close(&a.key).is_some());
        assert!(s.is_empty());
    }

    #[test]
    fn a_newer_stream_replaces_the_older() {
        let s = Sessions::new(4);
        let a = s.open(SessionState::new(None)).expect("a");
        let (first, mut rx1) = s.attach_stream(&a);
        let (_, mut rx2) = s.attach_stream(&a);
        s.detach_stream(&a, first);
        assert!(a.has_stream());
        a.push(vec![Value::from(1)]);
        assert_eq!(rx2.try_recv().ok(), Some(Value::from(1)));
        assert!(rx1.try_recv().is_err());
    }
}
