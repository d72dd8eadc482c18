//! Warm sessions kept between scenarios that declare `isolation: shared`:
//! such a scenario only reads, so the server (and its handshake) of the
//! previous one serves it as well as a fresh one would, and a Node or
//! Python server is not started again for each of them.

use std::time::Duration;

use tokio::sync::Mutex;

use crate::session::Session;

/// Idle warm sessions of one era; at most one per worker is ever in use.
pub struct SessionPool {
    idle: Mutex<Vec<Session>>,
    /// How long a stdio server may take to exit once its stdin closes.
    grace: Duration,
}

impl std::fmt::Debug for SessionPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionPool")
    }
}

impl SessionPool {
    pub fn new(grace: Duration) -> Self {
        Self {
            idle: Mutex::new(Vec::new()),
            grace,
        }
    }

    /// A warm session, if one is idle.
    pub async fn take(&self) -> Option<Session> {
        self.idle.lock().await.pop()
    }

    /// Returns a session that can serve another scenario.
    pub async fn put(&self, session: Session) {
        self.idle.lock().await.push(session);
    }

    /// Stops every idle server (end of an era's run).
    pub async fn close_all(&self) {
        let sessions = std::mem::take(&mut *self.idle.lock().await);
        for mut s in sessions {
            s.close_in_background(self.grace).await;
        }
    }
}
