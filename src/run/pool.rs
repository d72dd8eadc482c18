//! Warm sessions kept between scenarios that declare `isolation: shared`:
//! such a scenario only reads, so the server (and its handshake) of the
//! previous one serves it as well as a fresh one would, and a Node or
//! Python server is not started again for each of them. At most `capacity`
//! shared sessions live at once per era; a shared scenario waits for one to
//! be free rather than starting yet another server. Below that bound it
//! still waits for a busy one as long as starting a new server would take
//! (`patience`): a warm server serves a read-only scenario in milliseconds,
//! while a Python server takes most of a second of CPU to start.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, Notify};
// Tokio's clock, which a test may pause and advance.
use tokio::time::Instant;

use super::cores;
use crate::session::Session;
use crate::transport::stdio::StartCounter;

/// How many times its patience a lease waits while donors run.
const DONOR_PATIENCE: u32 = 4;

/// How many times its patience a lease waits for a pool at its capacity
/// before it opens a server beyond it, and the least it waits: a lane's
/// scenarios take milliseconds each, so a wait this long means the
/// servers are held by scenarios that spend their time waiting (calls
/// that outlast the budget one after another, answers that never match
/// their request), and one more server costs less than queueing behind
/// them.
const OVERFLOW_PATIENCE: u32 = 8;
const OVERFLOW_WAIT: Duration = Duration::from_secs(2);

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
    /// Running scenarios of servers of their own, and pools, that may hand
    /// their servers to this pool when they are done (`expect_donors`).
    donors: usize,
    /// Scenarios of the era still to be done with this pool
    /// (`expect_users`); when the last is, its servers go onward.
    users: usize,
    /// Whether the servers went onward (nothing leases here any more).
    handed_onward: bool,
    /// Whether a scenario is to have the pool's first server
    /// (`expect_first`), until its lease (`lease_first`) ends.
    first_expected: bool,
}

/// The warm sessions of one era.
pub struct SessionPool {
    state: Mutex<State>,
    /// The pools this one's idle servers go to, in turn, once its last
    /// scenario is done: pools whose scenarios could have been given any
    /// server this one hands out (a server that only served reads serves
    /// scenarios that change their session; one that served those serves
    /// the scenarios that write garbage).
    onward: Vec<Arc<SessionPool>>,
    freed: Notify,
    capacity: usize,
    /// How long a stdio server may take to exit once its stdin closes.
    grace: Duration,
    /// How long a scenario waits for a busy warm session before opening
    /// another one (zero: open at once).
    patience: Duration,
    /// The servers of the run still starting up, when each session is a
    /// process of its own: patience grows with them (`under_load`).
    starting: Option<StartCounter>,
    cores: usize,
    /// How many times its patience a lease waits while donors run.
    donor_patience: u32,
    /// Leases under way (`lease`, `lease_first`): scenarios waiting here.
    waiting: AtomicUsize,
}

/// Counts a lease as waiting while it is under way (dropped with it, even
/// when the scenario is given up mid-wait).
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn on(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Nothing live and no donor to come: no server can come to the pool.
fn nothing_to_come(state: &State) -> bool {
    state.live == 0 && state.donors == 0
}

impl std::fmt::Debug for SessionPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionPool")
    }
}

impl SessionPool {
    pub fn new(grace: Duration) -> Self {
        Self::with_capacity(cores(), grace)
    }

    pub fn with_capacity(capacity: usize, grace: Duration) -> Self {
        Self {
            state: Mutex::new(State {
                idle: Vec::new(),
                live: 0,
                donors: 0,
                users: 0,
                handed_onward: false,
                first_expected: false,
            }),
            onward: Vec::new(),
            freed: Notify::new(),
            capacity: capacity.max(1),
            grace,
            patience: Duration::ZERO,
            starting: None,
            cores: cores(),
            donor_patience: DONOR_PATIENCE,
            waiting: AtomicUsize::new(0),
        }
    }

    /// Waits up to `patience` for a busy session before opening another:
    /// what starting a server costs (the probe measures it).
    pub fn with_patience(mut self, patience: Duration) -> Self {
        self.patience = patience;
        self
    }

    /// A lease waits only its patience, not `DONOR_PATIENCE` times it,
    /// while donors run: where a start is a Streamable HTTP session, a
    /// donor's server saves one `initialize` round trip, less than the
    /// wait. (On server-everything over HTTP the reused scenarios waited
    /// 150 ms for the shared ones' servers, the long-running tool's first
    /// call with them: 1.96-2.14 s a run against 1.87-1.93 s without.)
    pub fn donors_not_worth_waiting_for(mut self) -> Self {
        self.donor_patience = 1;
        self
    }

    /// Weighs a start against the servers of `starts` still starting up.
    pub fn with_start_load(mut self, starts: Option<StartCounter>) -> Self {
        self.starting = starts;
        self
    }

    /// `patience` stretched by the starts under way: with more servers
    /// starting than there are cores, one more start takes that much
    /// longer (they share the CPU, and slow each other down), so a busy
    /// session is worth waiting for that much longer.
    fn under_load(&self, patience: Duration) -> Duration {
        let Some(starting) = &self.starting else {
            return patience;
        };
        let crowd = (starting.starting() + 1) as f64 / self.cores as f64;
        patience.mul_f64(crowd.max(1.0))
    }

    /// Hands the idle servers, once this pool's last scenario is done, to
    /// `pools` in turn.
    pub fn with_onward(mut self, pools: Vec<Arc<SessionPool>>) -> Self {
        self.onward = pools;
        self
    }

    /// Adds an open session that nothing holds (the probe's), as if a
    /// scenario had opened it and given it back.
    pub async fn seed(&self, session: Session) {
        let mut state = self.state.lock().await;
        state.live += 1;
        state.idle.push(session);
        drop(state);
        self.freed.notify_one();
    }

    /// A warm session, or leave to open one; waits for up to `patience`
    /// while any allowed session is in use, and while every one is, up to
    /// `OVERFLOW_PATIENCE` times as long (at least `OVERFLOW_WAIT`).
    pub async fn lease(&self) -> Lease {
        self.lease_within(|state| {
            if state.live >= self.capacity {
                self.long_wait()
            } else if nothing_to_come(state) {
                // With nothing busy and no donor running, nothing can
                // come free: opening at once costs no more than waiting.
                Duration::ZERO
            } else if state.donors > 0 {
                // A donor's server comes after its own start and its
                // scenario: worth a longer wait than a busy session's.
                self.under_load(self.patience * self.donor_patience)
            } else {
                self.under_load(self.patience)
            }
        })
        .await
    }

    /// How long a lease at the pool's capacity waits before it opens a
    /// server beyond it.
    fn long_wait(&self) -> Duration {
        self.under_load(self.patience * OVERFLOW_PATIENCE)
            .max(OVERFLOW_WAIT)
    }

    /// A warm session, or leave to open one once it has waited what
    /// `patience` says for the pool as it is now.
    async fn lease_within(&self, patience: impl Fn(&State) -> Duration) -> Lease {
        let _waiting = Waiting::on(&self.waiting);
        let asked = Instant::now();
        loop {
            let notified = self.freed.notified();
            let limit = {
                let mut state = self.state.lock().await;
                if let Some(session) = state.idle.pop() {
                    return Lease::Warm(Box::new(session));
                }
                let waited = asked.elapsed();
                let patience = patience(&state);
                if waited >= patience {
                    state.live += 1;
                    return Lease::Open;
                }
                patience - waited
            };
            let _ = tokio::time::timeout(limit, notified).await;
        }
    }

    /// An idle session, or leave to open one at once.
    pub async fn lease_at_once(&self) -> Lease {
        self.lease_within(|_| Duration::ZERO).await
    }

    /// A warm session for the scenario that is to have the pool's first
    /// server (`RunConfig::bounded_lead`), or the leave to open one once
    /// none can come (nothing live, no donor to come). It waits as long as
    /// a lease at the pool's capacity does (`OVERFLOW_PATIENCE`), not the
    /// patience of other leases: waiting from the start of the run, it
    /// would run out of that and start a server of its own (on a Python
    /// server, one more start than the run needs); bounded all the same,
    /// since with few jobs a donor may be queued behind it. While it waits, a
    /// donor's server comes here before the later lanes
    /// (`SessionPool::first_server_to_front`).
    pub async fn lease_first(&self) -> Lease {
        let long_wait = self.long_wait();
        let lease = self
            .lease_within(|state| {
                if nothing_to_come(state) {
                    Duration::ZERO
                } else {
                    long_wait
                }
            })
            .await;
        self.state.lock().await.first_expected = false;
        lease
    }

    /// A scenario of the era is to have this pool's first server
    /// (`lease_first`): until it has it, a donor's server comes here
    /// before any other pool (`first_server_to_front`).
    pub async fn expect_first(&self) {
        self.state.lock().await.first_expected = true;
    }

    /// Takes back the server of the scenario that had the pool's first
    /// one (`lease_first`), or passes it on: when no scenario waits here
    /// and one of a later lane (`with_onward`) does, that lane gets it,
    /// since the server it would have had from a donor came here instead
    /// (on a Python server, the garbage lane otherwise waited its
    /// patience out and started a server of its own).
    pub async fn put_or_pass_on(&self, session: Session) {
        if self.waiting.load(Ordering::SeqCst) == 0 {
            for pool in &self.onward {
                if pool.waiting.load(Ordering::SeqCst) == 0 {
                    continue;
                }
                let mut state = self.state.lock().await;
                state.live = state.live.saturating_sub(1);
                drop(state);
                match pool.offer(session).await {
                    None => return,
                    Some(back) => {
                        self.state.lock().await.live += 1;
                        return self.put(back).await;
                    }
                }
            }
        }
        self.put(session).await
    }

    /// Moves ahead of the later lanes in `pools` (those its servers go
    /// onward to) the first pool that expects a scenario to take its first
    /// server (`expect_first`) and has none yet: a donor's server, offered
    /// to `pools` in turn, goes there before those lanes, and waits there
    /// for that scenario if it has not asked yet. An earlier lane (the
    /// shared scenarios' second sessions) keeps its turn.
    pub async fn first_server_to_front(pools: &mut [Arc<SessionPool>]) {
        for i in 0..pools.len() {
            let waits = {
                let state = pools[i].state.lock().await;
                state.first_expected && state.live == 0
            };
            if waits {
                let later =
                    |p: &Arc<SessionPool>| pools[i].onward.iter().any(|o| Arc::ptr_eq(o, p));
                let mut ahead = i;
                while ahead > 0 && later(&pools[ahead - 1]) {
                    ahead -= 1;
                }
                pools[ahead..=i].rotate_right(1);
                return;
            }
        }
    }

    /// A warm session if one is idle or comes free within `patience`, else
    /// leave to open one, whatever the pool holds: for a scenario's second
    /// session, taken while it holds its main one (waiting without bound
    /// there, two scenarios could each wait for the other's).
    pub async fn lease_now(&self) -> Lease {
        let asked = Instant::now();
        loop {
            let notified = self.freed.notified();
            let until = asked + self.under_load(self.patience);
            {
                let mut state = self.state.lock().await;
                if let Some(session) = state.idle.pop() {
                    return Lease::Warm(Box::new(session));
                }
                if Instant::now() >= until {
                    state.live += 1;
                    return Lease::Open;
                }
            }
            let _ = tokio::time::timeout_at(until, notified).await;
        }
    }

    /// An idle session, waiting for one while donors are still to come
    /// (up to `DONOR_PATIENCE` times the patience); None once there is
    /// none idle and no donor left, and nothing is opened.
    pub async fn idle_or_donated(&self) -> Option<Session> {
        let until = Instant::now() + self.patience * DONOR_PATIENCE;
        loop {
            let notified = self.freed.notified();
            {
                let mut state = self.state.lock().await;
                if let Some(session) = state.idle.pop() {
                    return Some(session);
                }
                if state.donors == 0 || Instant::now() >= until {
                    return None;
                }
            }
            let _ = tokio::time::timeout_at(until, notified).await;
        }
    }

    /// An idle session if one is waiting, without waiting or opening.
    pub async fn try_idle(&self) -> Option<Session> {
        self.state.lock().await.idle.pop()
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

    /// `count` scenarios on servers of their own are to run that may hand
    /// their server to this pool when they end ([`SessionPool::donor_done`],
    /// once each, skipped or not); until then a lease waits for them as for
    /// a busy session (up to `patience`).
    pub async fn expect_donors(&self, count: usize) {
        self.state.lock().await.donors += count;
    }

    /// The donor is done: its server joins the pool if it brought one and
    /// the pool has room and scenarios still to serve, and comes back
    /// otherwise (for the next pool that waited for it).
    pub async fn donor_done(&self, server: Option<Session>) -> Option<Session> {
        let mut state = self.state.lock().await;
        state.donors = state.donors.saturating_sub(1);
        let back = match server {
            Some(session) if self.room_in(&state) => {
                state.live += 1;
                state.idle.push(session);
                None
            }
            other => other,
        };
        drop(state);
        self.freed.notify_one();
        back
    }

    /// A server that may or may not be wanted here (one a scenario opened
    /// for a session of its own, or the connection of a refused probe),
    /// taken when the pool has room and scenarios still to serve
    /// (`has_room`); otherwise it comes back.
    pub async fn offer(&self, session: Session) -> Option<Session> {
        let mut state = self.state.lock().await;
        if !self.room_in(&state) {
            return Some(session);
        }
        state.live += 1;
        state.idle.push(session);
        drop(state);
        self.freed.notify_one();
        None
    }

    /// Whether an offered server would be taken now.
    pub async fn has_room(&self) -> bool {
        self.room_in(&*self.state.lock().await)
    }

    fn room_in(&self, state: &State) -> bool {
        state.users > 0 && state.live < self.capacity
    }

    /// Offers `session` to `pools` in turn; what none takes comes back.
    pub async fn offer_to(pools: &[Arc<SessionPool>], session: Session) -> Option<Session> {
        let mut left = Some(session);
        for pool in pools {
            let Some(session) = left.take() else { break };
            left = pool.offer(session).await;
        }
        left
    }

    /// `count` scenarios of the era are to lease from this pool. Called
    /// for every pool before the era's first scenario starts, then
    /// [`SessionPool::settle_users`] once.
    pub async fn expect_users(&self, count: usize) {
        self.state.lock().await.users += count;
    }

    /// Every pool's users are counted: the onward pools of one that has
    /// scenarios to serve wait for its servers as for a donor's, and a pool
    /// with none hands on what it holds (the probe's server) at once.
    pub async fn settle_users(&self) {
        if self.state.lock().await.users == 0 {
            return self.hand_onward(false).await;
        }
        for pool in &self.onward {
            pool.expect_donors(1).await;
        }
    }

    /// One of the scenarios counted by `expect_users` is done (run, skipped
    /// or failed); after the last, the idle servers go onward.
    pub async fn user_done(&self) {
        let mut state = self.state.lock().await;
        state.users = state.users.saturating_sub(1);
        let last = state.users == 0;
        drop(state);
        if last {
            self.hand_onward(true).await;
        }
    }

    /// Drains the idle servers into the onward pools that still have
    /// scenarios to serve (each waited for them when `expected`); the rest
    /// are stopped.
    async fn hand_onward(&self, expected: bool) {
        let mut state = self.state.lock().await;
        if std::mem::replace(&mut state.handed_onward, true) {
            return;
        }
        let mut servers = std::mem::take(&mut state.idle);
        state.live = state.live.saturating_sub(servers.len());
        drop(state);
        for pool in &self.onward {
            pool.take_handed_over(&mut servers, expected).await;
        }
        self.close_sessions(servers).await;
    }

    /// Takes as many of `servers` as it has room and scenarios for; when
    /// the hand-over was `expected`, it was counted as a donor, now done.
    async fn take_handed_over(&self, servers: &mut Vec<Session>, expected: bool) {
        let mut state = self.state.lock().await;
        if expected {
            state.donors = state.donors.saturating_sub(1);
        }
        while self.room_in(&state) {
            let Some(session) = servers.pop() else { break };
            state.live += 1;
            state.idle.push(session);
        }
        drop(state);
        // Several scenarios may have waited for these servers.
        self.freed.notify_waiters();
    }

    /// Stops every idle server (end of an era's run).
    pub async fn close_all(&self) {
        let sessions = std::mem::take(&mut self.state.lock().await.idle);
        self.close_sessions(sessions).await;
    }

    /// Stops `sessions` the way this pool stops its own.
    async fn close_sessions(&self, sessions: Vec<Session>) {
        for mut s in sessions {
            s.close_in_background(self.grace).await;
        }
    }
}

#[cfg(all(test, unix))]
pub(crate) mod tests;
