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
        let permits = permits.clone();
        let shared_server = shared_server.clone();
        let server_is_shared = matches!(cfg.target, Target::Http { .. });
        let alone = server_is_shared && scenario.mutates_server();
        let started = events.clone();
        set.spawn(async move {
            let _permit = permits.acquire_owned().await.ok();
            let _ = started.send(Event::ScenarioStarted(scenario.id.clone()));
            let result = if alone {
                let _only_one = shared_server.write().await;
                run_guarded(&scenario, &cfg).await
            } else {
                let _one_of_many = shared_server.read().await;
                run_guarded(&scenario, &cfg).await
            };
            (index, result)
        });
    }
    let mut results: Vec<(usize, ScenarioResult)> = Vec::new();
    while let Some(joined) = set.join_next().await {
        if let Ok((index, mut result)) = joined {
            // The transcript is most of a result: copy everything else.
            let transcript = std::mem::take(&mut result.transcript);
            let kept = result.clone();
            result.transcript = transcript;
            let _ = events.send(Event::Finished(Box::new(result)));
            results.push((index, kept));
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
