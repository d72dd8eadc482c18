//! A whole run against one target: probe, then every scenario in parallel,
//! with every event handed to the caller's sink. The CLI's main job and the
//! many-server matrix both drive this.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::events::{Event, RunInfo, Summary};
use super::executor::RunConfig;
use super::outcome::ScenarioResult;
use super::probe::{probe, ProbeError};
use super::scheduler::run_all;
use super::target::Target;
use crate::scenario::model::Scenario;

/// How to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// A protocol version, or None for auto negotiation.
    pub protocol_version: Option<String>,
    pub timeout: Duration,
    pub jobs: usize,
}

/// A target that cannot be probed still gets a verdict on every scenario:
/// each is an error naming why, so reports and CI viewers show the whole run.
fn report_unreachable(
    target: &Target,
    scenarios: &[Scenario],
    opts: &RunOptions,
    e: &ProbeError,
    started: Instant,
    sink: &mut impl FnMut(Event),
) {
    sink(Event::Started(Box::new(RunInfo {
        target: target.display(),
        transport: target.transport().to_string(),
        era: opts
            .protocol_version
            .clone()
            .unwrap_or_else(|| "unknown".into()),
        server: serde_json::Value::Null,
        harness_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: chrono::Utc::now().to_rfc3339(),
        scenarios: scenarios.len(),
        fixture_match: false,
    })));
    let mut results = Vec::new();
    for s in scenarios {
        let mut r = ScenarioResult::blank(
            s,
            super::outcome::Outcome::Error,
            format!("not run: {}", e.message),
        );
        r.stderr_tail = e.stderr.clone();
        sink(Event::Finished(Box::new(r.clone())));
        results.push(r);
    }
    sink(Event::Done(Summary::from_results(
        &results,
        started.elapsed().as_millis() as u64,
    )));
}

/// Probes `target` and runs `scenarios`; `sink` sees Started, every Finished
/// (as each scenario ends) and Done. Results come back in input order.
pub async fn run_catalog(
    target: Target,
    scenarios: Vec<Scenario>,
    opts: &RunOptions,
    mut sink: impl FnMut(Event),
) -> Result<Vec<ScenarioResult>, ProbeError> {
    let started = Instant::now();
    let probed = match probe(&target, opts.protocol_version.as_deref(), opts.timeout).await {
        Ok(p) => p,
        Err(e) => {
            report_unreachable(&target, &scenarios, opts, &e, started, &mut sink);
            return Err(e);
        }
    };
    let fixture_match = crate::fixture::serves_reference_catalog(&probed.tool_names);
    sink(Event::Started(Box::new(RunInfo {
        target: target.display(),
        transport: target.transport().to_string(),
        era: probed.era.version.clone(),
        server: probed.server.clone(),
        harness_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: chrono::Utc::now().to_rfc3339(),
        scenarios: scenarios.len(),
        fixture_match,
    })));
    let cfg = Arc::new(RunConfig {
        target,
        era: probed.era,
        server: probed.server,
        timeout: opts.timeout,
        fixture_match,
    });
    let (tx, mut rx) = mpsc::unbounded_channel();
    let runner = tokio::spawn(run_all(scenarios, cfg, opts.jobs, tx));
    while let Some(event) = rx.recv().await {
        sink(event);
    }
    let results = runner.await.unwrap_or_default();
    sink(Event::Done(Summary::from_results(
        &results,
        started.elapsed().as_millis() as u64,
    )));
    Ok(results)
}
