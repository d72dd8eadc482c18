//! The pools' leases, donors and hand-ons, on `cat` processes as servers.

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

/// A lane of two servers with a 10 ms shutdown grace and `patience`.
fn lane_of_two(patience: Duration) -> SessionPool {
    SessionPool::with_capacity(2, Duration::from_millis(10)).with_patience(patience)
}

#[tokio::test]
async fn a_busy_session_is_waited_for_longer_while_more_servers_start_than_there_are_cores() {
    let spec = StdioSpec::new("cat", Vec::new());
    // Three servers that never write a line: all still starting.
    let starting: Vec<StdioConnection> = (0..3)
        .map(|_| StdioConnection::spawn(&spec).expect("cat runs"))
        .collect();
    assert_eq!(spec.starts.starting(), 3);
    let mut pool =
        lane_of_two(Duration::from_millis(40)).with_start_load(Some(spec.starts.clone()));
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
    let pool = lane_of_two(Duration::from_millis(150));
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
    let pool = || lane_of_two(patience);
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
    let pool = Arc::new(lane_of_two(Duration::from_millis(100)));
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
    let pool = lane_of_two(Duration::from_millis(100));
    pool.expect_users(1).await;
    pool.expect_donors(1).await;
    let asked = Instant::now();
    assert!(matches!(pool.lease_first().await, Lease::Open));
    assert_eq!(asked.elapsed(), OVERFLOW_WAIT);
}

#[tokio::test(start_paused = true)]
async fn the_first_lease_opens_at_once_when_nothing_can_come() {
    let pool = lane_of_two(Duration::from_millis(100));
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
    let pool = lane_of_two(Duration::from_millis(100));
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
    let lane = || lane_of_two(Duration::from_secs(1));
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
    let pool = lane_of_two(Duration::from_secs(30));
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
    let shared = lane_of_two(Duration::from_secs(30))
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
    let reused = Arc::new(lane_of_two(Duration::from_secs(30)));
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
    let pool = std::sync::Arc::new(lane_of_two(Duration::from_secs(30)));
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
