//! Runs many scenarios in parallel, each against its own server instance,
//! and reports each result on the event stream as soon as it is known.

use std::sync::Arc;

use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinSet;

use super::events::Event;
use super::executor::{run_scenario, RunConfig};
use super::outcome::ScenarioResult;
use crate::scenario::model::Scenario;

/// Runs `scenarios` with at most `jobs` at a time; results come back in input order.
pub async fn run_all(
    scenarios: Vec<Scenario>,
    cfg: Arc<RunConfig>,
    jobs: usize,
    events: mpsc::UnboundedSender<Event>,
) -> Vec<ScenarioResult> {
    let permits = Arc::new(Semaphore::new(jobs.max(1)));
    let mut set = JoinSet::new();
    for (index, scenario) in scenarios.into_iter().enumerate() {
        let cfg = cfg.clone();
        let permits = permits.clone();
        set.spawn(async move {
            let _permit = permits.acquire_owned().await.ok();
            (index, run_scenario(&scenario, &cfg).await)
        });
    }
    let mut results: Vec<(usize, ScenarioResult)> = Vec::new();
    while let Some(joined) = set.join_next().await {
        if let Ok((index, result)) = joined {
            let _ = events.send(Event::Finished(Box::new(result.clone())));
            results.push((index, result));
        }
    }
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}
