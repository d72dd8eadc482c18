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
pub(crate) mod tests {
    use super::*;
    use crate::session::{Connection, Era, Transcript};
    use crate::transport::stdio::StdioConnection;
    use crate::transport::StdioSpec;

    /// A server that never writes (`cat`): what the pools hold and hand on,
    /// for tests of who takes it.
    pub(crate) fn session() -> Session {
        let conn = StdioConnection::spawn(&StdioSpec::new("cat", Vec::new())).expect("cat runs");
        Session::new(
            "probe",
            Connection::Stdio(Box::new(conn)),
            Era::new("2025-11-25"),
            Duration::from_secs(1),
            Transcript::new(),
        )
    }

    #[tokio::test]
    async fn a_busy_session_is_waited_for_longer_while_more_servers_start_than_there_are_cores() {
        let spec = StdioSpec::new("cat", Vec::new());
        // Three servers that never write a line: all still starting.
        let starting: Vec<StdioConnection> = (0..3)
            .map(|_| StdioConnection::spawn(&spec).expect("cat runs"))
            .collect();
        assert_eq!(spec.starts.starting(), 3);
        let mut pool = SessionPool::with_capacity(2, Duration::from_millis(10))
            .with_patience(Duration::from_millis(40))
            .with_start_load(Some(spec.starts.clone()));
        pool.cores = 2;
        assert!(matches!(pool.lease().await, Lease::Open), "the first opens");
        let asked = Instant::now();
        assert!(matches!(pool.lease().await, Lease::Open));
        // Four starts on two cores: twice the patience.
        assert!(
            asked.elapsed() >= Duration::from_millis(75),
            "opened after {:?}",
            asked.elapsed()
        );
        drop(starting);
        assert_eq!(
            spec.starts.starting(),
            0,
            "a dropped connection is done starting"
        );
    }

    #[tokio::test]
    async fn a_seeded_session_is_leased_warm_without_opening_another() {
        let pool = SessionPool::with_capacity(2, Duration::from_millis(10));
        pool.seed(session()).await;
        assert!(matches!(pool.lease().await, Lease::Warm(_)));
        pool.release().await;
        assert!(matches!(pool.lease().await, Lease::Open), "nothing left");
    }

    #[tokio::test]
    async fn a_busy_session_is_waited_for_up_to_the_patience_then_another_opens() {
        let pool = SessionPool::with_capacity(2, Duration::from_millis(10))
            .with_patience(Duration::from_millis(150));
        assert!(
            matches!(pool.lease().await, Lease::Open),
            "an empty pool opens at once"
        );
        let asked = Instant::now();
        assert!(matches!(pool.lease().await, Lease::Open));
        let waited = asked.elapsed();
        assert!(waited >= Duration::from_millis(150), "{waited:?}");
        assert!(waited < Duration::from_secs(2), "{waited:?}");
    }

    /// A lane at its capacity whose servers stay busy (scenarios that
    /// wait out call budgets one after another, a server whose answers
    /// never match) opens one more after a long wait rather than holding
    /// every scenario queued behind them: with id-as-float, whose tool
    /// calls all outlast the budget, the reference's run took 7.4 minutes.
    #[tokio::test(start_paused = true)]
    async fn a_pool_at_its_capacity_opens_beyond_it_after_a_long_wait() {
        let pool = SessionPool::with_capacity(1, Duration::from_millis(10))
            .with_patience(Duration::from_millis(100));
        assert!(matches!(pool.lease().await, Lease::Open));
        let asked = Instant::now();
        assert!(matches!(pool.lease().await, Lease::Open), "beyond it");
        assert_eq!(asked.elapsed(), OVERFLOW_WAIT, "at least the floor");
        let slow = SessionPool::with_capacity(1, Duration::from_millis(10))
            .with_patience(Duration::from_millis(500));
        assert!(matches!(slow.lease().await, Lease::Open));
        let asked = Instant::now();
        assert!(matches!(slow.lease().await, Lease::Open));
        assert_eq!(asked.elapsed(), Duration::from_secs(4), "8 starts' worth");
    }

    #[tokio::test(start_paused = true)]
    async fn a_session_given_back_within_the_long_wait_is_leased_warm() {
        let pool = Arc::new(
            SessionPool::with_capacity(1, Duration::from_millis(10))
                .with_patience(Duration::from_millis(100)),
        );
        assert!(matches!(pool.lease().await, Lease::Open));
        let giver = Arc::clone(&pool);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            giver.put(session()).await;
        });
        assert!(matches!(pool.lease().await, Lease::Warm(_)));
    }

    #[tokio::test]
    async fn a_second_session_waits_at_most_the_patience_whatever_the_capacity() {
        let pool = SessionPool::with_capacity(1, Duration::from_millis(10))
            .with_patience(Duration::from_millis(100));
        assert!(matches!(pool.lease().await, Lease::Open));
        let asked = Instant::now();
        assert!(
            matches!(pool.lease_now().await, Lease::Open),
            "past the capacity, after the patience"
        );
        assert!(asked.elapsed() >= Duration::from_millis(100));
        assert!(asked.elapsed() < Duration::from_secs(2));
        pool.seed(session()).await;
        assert!(matches!(pool.lease_now().await, Lease::Warm(_)));
    }

    #[tokio::test]
    async fn a_lease_waits_for_a_donor_and_takes_its_server() {
        let pool = std::sync::Arc::new(
            SessionPool::with_capacity(1, Duration::from_millis(10))
                .with_patience(Duration::from_secs(30)),
        );
        pool.expect_users(1).await;
        pool.expect_donors(2).await;
        let donor = std::sync::Arc::clone(&pool);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(donor.donor_done(Some(session())).await.is_none(), "taken");
            let mut back = donor.donor_done(Some(session())).await.expect("no room");
            back.close_in_background(Duration::from_millis(10)).await;
        });
        assert!(
            matches!(pool.lease().await, Lease::Warm(_)),
            "an empty pool with a donor running waits for its server"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_lease_waits_for_donors_once_its_patience_where_they_are_not_worth_it() {
        let patience = Duration::from_millis(100);
        let waited = |pool: SessionPool| async move {
            pool.expect_users(1).await;
            pool.expect_donors(1).await;
            let asked = Instant::now();
            assert!(matches!(pool.lease().await, Lease::Open));
            asked.elapsed()
        };
        let pool =
            || SessionPool::with_capacity(2, Duration::from_millis(10)).with_patience(patience);
        assert_eq!(waited(pool()).await, patience * DONOR_PATIENCE);
        assert_eq!(
            waited(pool().donors_not_worth_waiting_for()).await,
            patience
        );
    }

    /// The bounded lead waits from the start of the run: with a patience
    /// it would run out of it and start a server the run does not need.
    #[tokio::test(start_paused = true)]
    async fn the_first_lease_waits_for_a_donor_past_the_patience_of_others() {
        let pool = Arc::new(
            SessionPool::with_capacity(2, Duration::from_millis(10))
                .with_patience(Duration::from_millis(100)),
        );
        pool.expect_users(1).await;
        pool.expect_donors(1).await;
        pool.expect_first().await;
        let donor = Arc::clone(&pool);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            assert!(donor.donor_done(Some(session())).await.is_none());
        });
        let asked = Instant::now();
        let Lease::Warm(mut warm) = pool.lease_first().await else {
            panic!("it opened a server of its own while a donor ran");
        };
        assert_eq!(asked.elapsed(), Duration::from_millis(1500));
        assert!(asked.elapsed() > Duration::from_millis(100) * DONOR_PATIENCE);
        warm.close_in_background(Duration::from_millis(10)).await;
        assert!(!pool.state.lock().await.first_expected, "it had it");
    }

    /// With few jobs a donor may be queued behind the lead: it opens a
    /// server after the long wait rather than wait for ever.
    #[tokio::test(start_paused = true)]
    async fn the_first_lease_opens_after_the_long_wait_when_no_donor_comes() {
        let pool = SessionPool::with_capacity(2, Duration::from_millis(10))
            .with_patience(Duration::from_millis(100));
        pool.expect_users(1).await;
        pool.expect_donors(1).await;
        let asked = Instant::now();
        assert!(matches!(pool.lease_first().await, Lease::Open));
        assert_eq!(asked.elapsed(), OVERFLOW_WAIT);
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_lease_opens_at_once_when_nothing_can_come() {
        let pool = SessionPool::with_capacity(2, Duration::from_millis(10))
            .with_patience(Duration::from_millis(100));
        pool.expect_users(1).await;
        let asked = Instant::now();
        assert!(matches!(pool.lease_first().await, Lease::Open));
        assert_eq!(asked.elapsed(), Duration::ZERO);
    }

    /// Where sessions are cheap, the bounded lead does not wait for a
    /// donor or a busy session: its first call starts the run's longest
    /// wait. An idle one it takes all the same.
    #[tokio::test(start_paused = true)]
    async fn the_lease_at_once_waits_for_nothing_and_takes_an_idle_session() {
        let pool = SessionPool::with_capacity(2, Duration::from_millis(10))
            .with_patience(Duration::from_millis(100));
        pool.expect_users(2).await;
        pool.expect_donors(1).await;
        let asked = Instant::now();
        assert!(matches!(pool.lease_at_once().await, Lease::Open));
        assert_eq!(asked.elapsed(), Duration::ZERO);
        pool.seed(session()).await;
        let Lease::Warm(mut warm) = pool.lease_at_once().await else {
            panic!("an idle session was left for a new one");
        };
        warm.close_in_background(Duration::from_millis(10)).await;
    }

    /// Three lanes in order: the shared scenarios' second sessions, the
    /// garbage lane, the reused lane (whose servers go on to the garbage
    /// one), as a donor that only read offers its server.
    fn donor_lanes() -> [Arc<SessionPool>; 3] {
        let lane = || {
            SessionPool::with_capacity(2, Duration::from_millis(10))
                .with_patience(Duration::from_secs(1))
        };
        let garbage = Arc::new(lane());
        let reuse = Arc::new(lane().with_onward(vec![Arc::clone(&garbage)]));
        [Arc::new(lane()), garbage, reuse]
    }

    #[tokio::test]
    async fn a_donor_serves_the_lane_expecting_its_first_server_before_the_later_lanes() {
        let [seconds, garbage, reuse] = donor_lanes();
        let mut pools = [
            Arc::clone(&seconds),
            Arc::clone(&garbage),
            Arc::clone(&reuse),
        ];
        SessionPool::first_server_to_front(&mut pools).await;
        assert!(
            Arc::ptr_eq(&pools[1], &garbage),
            "nobody expects a first server"
        );
        reuse.expect_first().await;
        SessionPool::first_server_to_front(&mut pools).await;
        assert!(
            Arc::ptr_eq(&pools[0], &seconds),
            "an earlier lane keeps its turn"
        );
        assert!(Arc::ptr_eq(&pools[1], &reuse), "ahead of the garbage lane");
        assert!(Arc::ptr_eq(&pools[2], &garbage));
        let mut again = [
            Arc::clone(&seconds),
            Arc::clone(&garbage),
            Arc::clone(&reuse),
        ];
        reuse.expect_users(1).await;
        reuse.seed(session()).await;
        SessionPool::first_server_to_front(&mut again).await;
        assert!(
            Arc::ptr_eq(&again[1], &garbage),
            "once it has a server, no more"
        );
        reuse.close_all().await;
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_server_goes_on_to_a_waiting_later_lane_when_none_waits_in_its_own() {
        let [_, garbage, reuse] = donor_lanes();
        reuse.expect_users(2).await;
        garbage.expect_users(1).await;
        garbage.expect_donors(1).await;
        let waiter = Arc::clone(&garbage);
        let garbage_lease = tokio::spawn(async move { waiter.lease().await });
        tokio::task::yield_now().await;
        reuse.seed(session()).await;
        let Lease::Warm(first) = reuse.lease_first().await else {
            panic!("the seeded server");
        };
        reuse.put_or_pass_on(*first).await;
        let Ok(Lease::Warm(mut passed)) = garbage_lease.await else {
            panic!("the garbage lane did not get the server");
        };
        passed.close_in_background(Duration::from_millis(10)).await;
        assert_eq!(reuse.state.lock().await.live, 0, "it left the lane");
        // With a scenario of its own lane waiting, it stays.
        reuse.seed(session()).await;
        let Lease::Warm(second) = reuse.lease().await else {
            panic!("the seeded server");
        };
        let waiter = Arc::clone(&reuse);
        let reuse_lease = tokio::spawn(async move { waiter.lease().await });
        tokio::task::yield_now().await;
        reuse.put_or_pass_on(*second).await;
        let Ok(Lease::Warm(mut kept)) = reuse_lease.await else {
            panic!("the reused lane's scenario did not get it");
        };
        kept.close_in_background(Duration::from_millis(10)).await;
    }

    #[tokio::test]
    async fn an_offered_server_goes_to_the_first_pool_with_room_and_scenarios_to_serve() {
        let idle = Arc::new(SessionPool::with_capacity(1, Duration::from_millis(10)));
        let full = Arc::new(SessionPool::with_capacity(1, Duration::from_millis(10)));
        let open = Arc::new(SessionPool::with_capacity(1, Duration::from_millis(10)));
        full.expect_users(1).await;
        full.seed(session()).await;
        open.expect_users(1).await;
        assert!(!idle.has_room().await, "no scenario to serve");
        assert!(!full.has_room().await, "at its capacity");
        assert!(open.has_room().await);
        let pools = [idle, full, Arc::clone(&open)];
        assert!(SessionPool::offer_to(&pools, session()).await.is_none());
        assert!(open.try_idle().await.is_some(), "the third pool took it");
        let mut back = SessionPool::offer_to(&pools, session())
            .await
            .expect("no pool has room now");
        back.close_in_background(Duration::from_millis(10)).await;
        pools[1].close_all().await;
    }

    #[tokio::test]
    async fn a_session_waits_for_a_donated_server_only_while_a_donor_runs() {
        let pool = Arc::new(
            SessionPool::with_capacity(1, Duration::from_millis(10))
                .with_patience(Duration::from_secs(30)),
        );
        pool.expect_users(1).await;
        assert!(
            pool.idle_or_donated().await.is_none(),
            "no donor: nothing to wait for"
        );
        pool.expect_donors(1).await;
        let donor = Arc::clone(&pool);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(donor.offer(session()).await.is_none(), "taken");
            assert!(donor.donor_done(None).await.is_none());
        });
        let asked = Instant::now();
        let mut got = pool.idle_or_donated().await.expect("the donated server");
        assert!(asked.elapsed() < Duration::from_secs(5));
        got.close_in_background(Duration::from_millis(10)).await;
        pool.expect_donors(1).await;
        let quits = Arc::clone(&pool);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(quits.donor_done(None).await.is_none());
        });
        assert!(
            pool.idle_or_donated().await.is_none(),
            "a donor that brings nothing ends the wait"
        );
    }

    #[tokio::test]
    async fn a_pool_without_scenarios_to_serve_gives_a_donors_server_back() {
        let pool = SessionPool::with_capacity(1, Duration::from_millis(10));
        pool.expect_donors(1).await;
        let mut back = pool
            .donor_done(Some(session()))
            .await
            .expect("no scenario of this pool would take it: it goes to the next pool");
        back.close_in_background(Duration::from_millis(10)).await;
    }

    #[tokio::test]
    async fn a_lease_without_donors_or_busy_sessions_opens_at_once() {
        let pool = SessionPool::with_capacity(2, Duration::from_millis(10))
            .with_patience(Duration::from_secs(30));
        pool.expect_donors(1).await;
        assert!(pool.donor_done(None).await.is_none());
        let asked = Instant::now();
        assert!(matches!(pool.lease().await, Lease::Open));
        assert!(asked.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn servers_go_onward_when_the_last_scenario_of_a_lane_is_done() {
        let garbage = Arc::new(SessionPool::with_capacity(1, Duration::from_millis(10)));
        let reused = Arc::new(
            SessionPool::with_capacity(2, Duration::from_millis(10))
                .with_onward(vec![Arc::clone(&garbage)]),
        );
        let shared = SessionPool::with_capacity(2, Duration::from_millis(10))
            .with_patience(Duration::from_secs(30))
            .with_onward(vec![Arc::clone(&reused), Arc::clone(&garbage)]);
        shared.seed(session()).await;
        shared.seed(session()).await;
        shared.expect_users(2).await;
        reused.expect_users(1).await;
        garbage.expect_users(1).await;
        for pool in [&shared, &reused, &garbage] {
            pool.settle_users().await;
        }
        shared.user_done().await;
        assert!(
            reused.try_idle().await.is_none(),
            "a shared scenario is still to run"
        );
        shared.user_done().await;
        let Lease::Warm(first) = reused.lease().await else {
            panic!("the shared servers went to the reused lane")
        };
        assert!(reused.try_idle().await.is_some(), "both fit");
        assert!(
            garbage.try_idle().await.is_none(),
            "the reused lane had room for both"
        );
        reused.put(*first).await;
        reused.user_done().await;
        assert!(
            matches!(garbage.lease().await, Lease::Warm(_)),
            "the reused lane's idle server went on to the garbage lane"
        );
    }

    #[tokio::test]
    async fn a_lane_waits_for_the_servers_of_the_lane_before_it() {
        let reused = Arc::new(
            SessionPool::with_capacity(2, Duration::from_millis(10))
                .with_patience(Duration::from_secs(30)),
        );
        let shared = Arc::new(
            SessionPool::with_capacity(2, Duration::from_millis(10))
                .with_onward(vec![Arc::clone(&reused)]),
        );
        shared.expect_users(1).await;
        reused.expect_users(1).await;
        shared.settle_users().await;
        reused.settle_users().await;
        let lane = Arc::clone(&shared);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            lane.seed(session()).await;
            lane.user_done().await;
        });
        let lease = tokio::time::timeout(Duration::from_secs(5), reused.lease())
            .await
            .expect("the hand-over ends the wait");
        assert!(matches!(lease, Lease::Warm(_)));
    }

    #[tokio::test]
    async fn a_lane_without_scenarios_hands_on_what_it_holds_at_once() {
        let reused = Arc::new(SessionPool::with_capacity(2, Duration::from_millis(10)));
        let shared = SessionPool::with_capacity(2, Duration::from_millis(10))
            .with_onward(vec![Arc::clone(&reused)]);
        shared.seed(session()).await;
        reused.expect_users(1).await;
        shared.settle_users().await;
        assert!(matches!(reused.lease().await, Lease::Warm(_)));
    }

    #[tokio::test]
    async fn a_session_given_back_within_the_patience_is_reused() {
        let pool = std::sync::Arc::new(
            SessionPool::with_capacity(2, Duration::from_millis(10))
                .with_patience(Duration::from_secs(30)),
        );
        let Lease::Open = pool.lease().await else {
            panic!("an empty pool opens at once")
        };
        let giver = std::sync::Arc::clone(&pool);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            giver.put(session()).await;
        });
        let asked = Instant::now();
        let lease = tokio::time::timeout(Duration::from_secs(5), pool.lease())
            .await
            .expect("the session given back ends the wait");
        assert!(matches!(lease, Lease::Warm(_)));
        assert!(asked.elapsed() < Duration::from_secs(5));
    }
}
