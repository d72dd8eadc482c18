//! Runs many scenarios in parallel, each against its own server instance
//! (stdio) or its own sessions (HTTP), and reports each result on the event
//! stream as soon as it is known. On a server shared by every scenario
//! (HTTP), a scenario that changes the catalog for all sessions runs alone,
//! so no other scenario sees its temporary tool or group.

use std::sync::Arc;

use tokio::sync::{mpsc, RwLock, Semaphore};
use tokio::task::JoinSet;

use super::events::Event;
use super::executor::{run_scenario, RunConfig};
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
        .map(|s| (s, Arc::clone(&cfg)))
        .collect();
    run_jobs(work, jobs, events).await
}

/// Runs every (scenario, configuration) pair, e.g. the catalog in each era
/// at once, so that one era's slow timeouts overlap another's work.
pub async fn run_jobs(
    work: Vec<(Scenario, Arc<RunConfig>)>,
    jobs: usize,
    events: mpsc::UnboundedSender<Event>,
) -> Vec<ScenarioResult> {
    let permits = Arc::new(Semaphore::new(jobs.max(1)));
    let shared_server = Arc::new(RwLock::new(()));
    let mut set = JoinSet::new();
    for (index, (scenario, cfg)) in work.into_iter().enumerate() {
        // Taken here, in input order, so scenarios start in that order
        // (`-j 1` runs them as listed): tasks spawned at once took their
        // permits in whatever order the runtime first polled them.
        let permit = Arc::clone(&permits).acquire_owned().await.ok();
        let shared_server = shared_server.clone();
        let server_is_shared = matches!(cfg.target, Target::Http { .. });
        let alone = server_is_shared && scenario.mutates_server();
        let events = events.clone();
        set.spawn(async move {
            let _permit = permit;
            let _ = events.send(Event::ScenarioStarted(scenario.id.clone()));
            let mut result = if alone {
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
        });
    }
    let mut results: Vec<(usize, ScenarioResult)> = Vec::new();
    while let Some(joined) = set.join_next().await {
        if let Ok(done) = joined {
            results.push(done);
        }
    }
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
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

    fn scenario(n: usize) -> Scenario {
        let text = format!(
            "id: base/order-{n}\ntitle: order {n}\nprofile: base\nlevel: MUST\nsteps:\n  - request: ping\n    expect:\n      result: {{}}\n"
        );
        load_str("unit.yaml", &text).unwrap_or_else(|e| panic!("{e}"))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn one_job_at_a_time_runs_the_scenarios_in_their_order() {
        let cfg = Arc::new(RunConfig::isolated(
            Target::InProcess(Config::default()),
            Era::new("2025-11-25"),
            json!({"capabilities": {}}),
            Duration::from_secs(5),
            true,
        ));
        let scenarios: Vec<Scenario> = (0..40).map(scenario).collect();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let results = run_all(scenarios, cfg, 1, tx).await;
        assert!(results.iter().all(|r| r.outcome == Outcome::Pass));
        let mut started = Vec::new();
        while let Ok(event) = rx.try_recv() {
            if let Event::ScenarioStarted(id) = event {
                started.push(id);
            }
        }
        let listed: Vec<String> = (0..40).map(|n| format!("base/order-{n}")).collect();
        assert_eq!(started, listed);
    }
}
