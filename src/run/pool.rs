//! Warm sessions kept between scenarios that declare `isolation: shared`:
//! such a scenario only reads, so the server (and its handshake) of the
//! previous one serves it as well as a fresh one would, and a Node or
//! Python server is not started again for each of them. At most `capacity`
//! shared sessions live at once per era; a shared scenario waits for one to
//! be free rather than starting yet another server.

use std::time::Duration;

use tokio::sync::{Mutex, Notify};

use crate::session::Session;

/// What a shared scenario gets from the pool.
pub enum Lease {
    /// A warm session to adopt.
    Warm(Box<Session>),
    /// Room for one more: open a session and give it back when done.
    Open,
}

struct State {
    idle: Vec<Session>,
    /// Sessions that exist: idle, or held by a running scenario.
    live: usize,
}

/// The warm sessions of one era.
pub struct SessionPool {
    state: Mutex<State>,
    freed: Notify,
    capacity: usize,
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
        Self::with_capacity(
            std::thread::available_parallelism().map_or(2, |n| n.get()),
            grace,
        )
    }

    pub fn with_capacity(capacity: usize, grace: Duration) -> Self {
        Self {
            state: Mutex::new(State {
                idle: Vec::new(),
                live: 0,
            }),
            freed: Notify::new(),
            capacity: capacity.max(1),
            grace,
        }
    }

    /// A warm session, or leave to open one; waits while every allowed
    /// session is in use.
    pub async fn lease(&self) -> Lease {
        loop {
            let notified = self.freed.notified();
            {
                let mut state = self.state.lock().await;
                if let Some(session) = state.idle.pop() {
                    return Lease::Warm(Box::new(session));
                }
                if state.live < self.capacity {
                    state.live += 1;
                    return Lease::Open;
                }
            }
            notified.await;
        }
    }

    /// Returns a leased session that can serve another scenario.
    pub async fn put(&self, session: Session) {
        self.state.lock().await.idle.push(session);
        self.freed.notify_one();
    }

    /// A leased session (or the leave to open one) is gone: room for another.
    pub async fn release(&self) {
        let mut state = self.state.lock().await;
        state.live = state.live.saturating_sub(1);
        drop(state);
        self.freed.notify_one();
    }

    /// Stops every idle server (end of an era's run).
    pub async fn close_all(&self) {
        let sessions = std::mem::take(&mut self.state.lock().await.idle);
        for mut s in sessions {
            s.close_in_background(self.grace).await;
        }
    }
}
