//! Runs many scenarios in parallel, each against its own server instance
//! (stdio) or its own sessions (HTTP), and reports each result on the event
//! stream as soon as it is known. On a server shared by every scenario
//! (HTTP), a scenario that changes the catalog for all sessions runs alone,
//! so no other scenario sees its temporary tool or group.

use std::sync::Arc;

use tokio::sync::{mpsc, RwLock, Semaphore};
use tokio::task::JoinHandle;

use super::events::Event;
use super::executor::{applicability, run_scenario, RunConfig};
use super::outcome::{Outcome, ScenarioResult};
use super::target::Target;
use crate::scenario::model::Scenario;

/// Runs `scenarios` with at most `jobs` at a time; results come back in input
/// order, without their transcripts (the `Finished` events carry them whole).
pub async fn run_all(
    scenarios: Vec<Scenario>,
    cfg: Arc<RunConfig>,
    jobs: usize,
    events: mpsc::UnboundedSender<Event>,
) -> Vec<ScenarioResult> {
    let work = scenarios
        .into_iter()
        .enumerate()
        .map(|(i, s)| ((0, 0, i), (Arc::new(s), Arc::clone(&cfg))))
        .collect();
    let (batches, queued) = mpsc::unbounded_channel();
    let _ = batches.send(work);
    drop(batches);
    run_jobs(queued, jobs, events).await
}

/// A scenario of one configuration, to run.
pub type Job = (Arc<Scenario>, Arc<RunConfig>);

/// The queue of the scenarios that may spend their time waiting, where a
/// start costs next to nothing (see `run_jobs`).
const WAITERS: usize = 0;

/// Jobs of their own for the scenarios that may wait, per job of the
/// rest: a wait holds a job and no core. With as many as the rest, the
/// call-budget waits of one server-everything run over HTTP took all eight
/// of two cores' jobs, and the ninth such scenario started 0.2 s late.
const WAITER_JOBS: usize = 4;

/// Where a job starts among the others, lower first: in a catalog run
/// (`catalog_run::era_work`), its lane's rank and whether it waits (which
/// first depends on what a start costs), then its place among its era's
/// scenarios of the same kind, so that the eras take turns (each era's
/// servers busy at once, rather than one era's scenarios filling every job
/// while they queue for its servers).
pub type StartOrder = (u8, u8, usize);

/// Runs every (scenario, configuration) pair, e.g. the catalog in each era
/// at once, so that one era's slow timeouts overlap another's work. Jobs
/// come in batches, each in its start order; a later batch (an era whose
/// probe ended after the others had started) joins the jobs not started
/// yet in that order. Where a start costs next to nothing
/// (`RunConfig::cheap_starts`), scenarios that may spend their time
/// waiting (a sleep, an awaited notification, a bounded call, a server
/// started per case) take jobs of their own, `WAITER_JOBS` times as many
/// and in a queue of their own, so that their waits hold up neither the
/// work nor its queue. Where a start costs more, they take turns with the
/// rest: started at once they would each start a server of their own
/// rather than wait for one to come free; only the garbage scenarios that
/// a donor's server is coming to wait apart (`RunConfig::waits_apart`).
/// With `-j 1` everything takes turns in one queue.
/// Results come back in the order the jobs arrived.
pub async fn run_jobs(
    mut batches: mpsc::UnboundedReceiver<Vec<(StartOrder, Job)>>,
    jobs: usize,
    events: mpsc::UnboundedSender<Event>,
) -> Vec<ScenarioResult> {
    let shared_server = Arc::new(RwLock::new(()));
    let queues: Vec<Arc<Queue>> = (0..if jobs > 1 { 2 } else { 1 })
        .map(|_| Arc::default())
        .collect();
    let sort = {
        let queues = queues.clone();
        async move {
            let mut arrived = 0;
            while let Some(batch) = batches.recv().await {
                for (order, job) in batch {
                    let waits = job.1.waits_apart(&job.0);
                    let queue = if waits { WAITERS } else { WAITERS + 1 };
                    let queue = &queues[queue.min(queues.len() - 1)];
                    queue.push(order, (arrived, job)).await;
                    arrived += 1;
                }
            }
            for queue in &queues {
                queue.close().await;
            }
        }
    };
    let feeders = queues.iter().enumerate().map(|(i, queue)| {
        let waiters = i == WAITERS && queues.len() > 1;
        let permits = if waiters { jobs * WAITER_JOBS } else { jobs };
        let permits = Arc::new(Semaphore::new(permits.max(1)));
        feed(
            Arc::clone(queue),
            permits,
            shared_server.clone(),
            events.clone(),
        )
    });
    let (_, fed) = futures::join!(sort, futures::future::join_all(feeders));
    let mut results: Vec<(usize, ScenarioResult)> = Vec::new();
    for handles in fed {
        for handle in handles {
            if let Ok(done) = handle.await {
                results.push(done);
            }
        }
    }
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// A job numbered in the order it arrived.
type Numbered = (usize, Job);

/// The jobs of one queue not started yet, in start order, and whether more
/// may come.
#[derive(Default)]
struct Queue {
    pending: tokio::sync::Mutex<Pending>,
    arrived: tokio::sync::Notify,
}

#[derive(Default)]
struct Pending {
    jobs: std::collections::BTreeMap<(StartOrder, usize), Numbered>,
    closed: bool,
}

impl Queue {
    async fn push(&self, order: StartOrder, job: Numbered) {
        self.pending.lock().await.jobs.insert((order, job.0), job);
        self.arrived.notify_one();
    }

    /// No more jobs will come.
    async fn close(&self) {
        self.pending.lock().await.closed = true;
        self.arrived.notify_one();
    }

    /// The first job not started yet; None once the queue is closed and empty.
    async fn next(&self) -> Option<Numbered> {
        loop {
            {
                let mut pending = self.pending.lock().await;
                if let Some((_, job)) = pending.jobs.pop_first() {
                    return Some(job);
                }
                if pending.closed {
                    return None;
                }
            }
            self.arrived.notified().await;
        }
    }
}

/// Starts the jobs of one queue in its order, each once a job is free.
async fn feed(
    queue: Arc<Queue>,
    permits: Arc<Semaphore>,
    shared_server: Arc<RwLock<()>>,
    events: mpsc::UnboundedSender<Event>,
) -> Vec<JoinHandle<(usize, ScenarioResult)>> {
    let mut handles = Vec::new();
    while let Some((index, (scenario, cfg))) = queue.next().await {
        // Taken here, in input order, so scenarios start in that order
        // (`-j 1` runs them as listed): tasks spawned at once took their
        // permits in whatever order the runtime first polled them. A
        // scenario that does not apply takes none: it only reports why.
        let applies = matches!(applicability(&scenario, &cfg), Ok(None));
        let permit = if applies {
            Arc::clone(&permits).acquire_owned().await.ok()
        } else {
            None
        };
        let shared_server = shared_server.clone();
        let server_is_shared = matches!(cfg.target, Target::Http { .. });
        let alone = server_is_shared && scenario.mutates_server();
        let events = events.clone();
        handles.push(tokio::spawn(async move {
            let _permit = permit;
            let _ = events.send(Event::ScenarioStarted(scenario.id.clone()));
            // One that does not apply changes nothing: it neither waits for
            // the server to itself nor holds up one that waits for that.
            let mut result = if !applies {
                run_guarded(&scenario, &cfg).await
            } else if alone {
                let _only_one = shared_server.write().await;
                run_guarded(&scenario, &cfg).await
            } else {
                let _one_of_many = shared_server.read().await;
                run_guarded(&scenario, &cfg).await
            };
            // The transcript is most of a result: the event takes it, the
            // returned copy has everything else.
            let transcript = std::mem::take(&mut result.transcript);
            let kept = result.clone();
            result.transcript = transcript;
            let _ = events.send(Event::Finished(Box::new(result)));
            (index, kept)
        }));
    }
    handles
}

/// Runs a scenario; a panic (a harness bug) becomes an `error` result with
/// the panic's message instead of a scenario silently missing from the run.
async fn run_guarded(scenario: &Scenario, cfg: &RunConfig) -> ScenarioResult {
    use futures::FutureExt;
    match std::panic::AssertUnwindSafe(run_scenario(scenario, cfg))
        .catch_unwind()
        .await
    {
        Ok(result) => result,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "no message".to_string());
            let mut r = ScenarioResult::blank(
                scenario,
                Outcome::Error,
                format!(
                    "internal error: mcp-conform panicked while running this scenario: {message}"
                ),
            );
            r.era = cfg.era.version.clone();
            r
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::reference::Config;
    use crate::scenario::load::load_str;
    use crate::session::Era;

    /// The built-in reference in 2025-11-25, every scenario on a fresh server.
    fn reference_config() -> Arc<RunConfig> {
        Arc::new(RunConfig::isolated(
            Target::InProcess(Config::default()),
            Era::new("2025-11-25"),
            json!({"capabilities": {}}),
            Duration::from_secs(5),
            true,
        ))
    }

    fn scenario(n: usize) -> Scenario {
        let text = format!(
            "id: base/order-{n}\ntitle: order {n}\nprofile: base\nlevel: MUST\nsteps:\n  - request: ping\n    expect:\n      result: {{}}\n"
        );
        load_str("unit.yaml", &text).unwrap_or_else(|e| panic!("{e}"))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_scenario_that_does_not_apply_waits_for_no_job() {
        let cfg = reference_config();
        let slow = load_str(
            "unit.yaml",
            "id: base/slow\ntitle: slow\nprofile: base\nlevel: MUST\nsteps:\n  - sleep_ms: 300\n  - request: ping\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let elsewhere = load_str(
            "unit.yaml",
            "id: base/elsewhere\ntitle: elsewhere\nprofile: base\nlevel: MUST\neras: [2026-07-28]\nsteps:\n  - request: ping\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let results = run_all(vec![slow, elsewhere], cfg, 1, tx).await;
        assert_eq!(results[1].outcome, Outcome::Skip);
        let mut finished = Vec::new();
        while let Ok(event) = rx.try_recv() {
            if let Event::Finished(r) = event {
                finished.push(r.id);
            }
        }
        assert_eq!(
            finished,
            ["base/elsewhere", "base/slow"],
            "the skip did not wait for the only job"
        );
    }

    /// Where starts cost next to nothing, scenarios that only wait take
    /// jobs of their own, more than the rest: six waits on two jobs all
    /// start before the first ends.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn waits_on_cheap_sessions_start_together_beyond_the_jobs_of_the_rest() {
        let cfg = reference_config();
        let waiting = |n: usize| {
            let text = format!(
                "id: base/wait-{n}\ntitle: wait\nprofile: base\nlevel: MUST\nsteps:\n  - sleep_ms: 400\n  - request: ping\n"
            );
            load_str("unit.yaml", &text).unwrap_or_else(|e| panic!("{e}"))
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        run_all((0..6).map(waiting).collect(), cfg, 2, tx).await;
        let mut events = Vec::new();
        while let Ok(event) = rx.try_recv() {
            events.push(matches!(event, Event::ScenarioStarted(_)));
        }
        let first_end = events.iter().position(|started| !started);
        assert_eq!(
            first_end,
            Some(6),
            "all six started before one ended: {events:?}"
        );
    }

    /// The scenarios in the order they started, from the events so far.
    fn started_ids(rx: &mut mpsc::UnboundedReceiver<Event>) -> Vec<String> {
        let mut started = Vec::new();
        while let Ok(event) = rx.try_recv() {
            if let Event::ScenarioStarted(id) = event {
                started.push(id);
            }
        }
        started
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn one_job_at_a_time_runs_the_scenarios_in_their_order() {
        let cfg = reference_config();
        let scenarios: Vec<Scenario> = (0..40).map(scenario).collect();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let results = run_all(scenarios, cfg, 1, tx).await;
        assert!(results.iter().all(|r| r.outcome == Outcome::Pass));
        let started = started_ids(&mut rx);
        let listed: Vec<String> = (0..40).map(|n| format!("base/order-{n}")).collect();
        assert_eq!(started, listed);
    }

    /// An era whose probe ended late sends its jobs in a second batch: they
    /// start among the jobs not started yet in start order, and results
    /// come back in the order the jobs arrived.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_later_batch_joins_the_jobs_not_started_yet_in_start_order() {
        let cfg = reference_config();
        let job = |n: usize| ((0, 0, n), (Arc::new(scenario(n)), Arc::clone(&cfg)));
        let (batches, queued) = mpsc::unbounded_channel();
        let _ = batches.send(vec![job(0), job(2), job(4)]);
        let _ = batches.send(vec![job(1), job(3)]);
        drop(batches);
        let (tx, mut rx) = mpsc::unbounded_channel();
        let results = run_jobs(queued, 1, tx).await;
        let returned: Vec<&str> = results.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(
            returned,
            [
                "base/order-0",
                "base/order-2",
                "base/order-4",
                "base/order-1",
                "base/order-3"
            ]
        );
        let started = started_ids(&mut rx);
        let in_order: Vec<String> = (0..5).map(|n| format!("base/order-{n}")).collect();
        assert_eq!(started, in_order);
    }
}
