//! A whole run against one target: probe the eras it speaks, then every
//! scenario in each era, in parallel, with every event made final by the
//! run's policy and handed to the caller's sink. The CLI's main job and the
//! many-server matrix both drive this.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::events::ToolCalls;
use super::events::{Event, NarrowedJobs, RunInfo, Summary};
use super::executor::{applicability, CallTools, RunConfig};
use super::outcome::ScenarioResult;
use super::policy::{RunPolicy, Verdict};
use super::pool::SessionPool;
use super::probe::{
    close_probe_session, mark_spoken, probe_eras_staged, EraChoice, PendingEra, Probe, ProbeError,
    ProbedEra, StagedEras,
};
use super::property::PropertyRun;
use super::scheduler::{run_jobs, Job, StartOrder};
use super::slow_calls::SlowCalls;
use super::target::Target;
use crate::expr::{Bound, EvalOptions};
use crate::scenario::model::Scenario;
use crate::schema::Schemas;
use crate::session::client_fault::ClientFault;
use crate::session::era::KNOWN_VERSIONS;
use crate::session::Session;
use crate::transport::stdio::StartCounter;

/// How to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub eras: EraChoice,
    pub timeout: Duration,
    /// Scenarios at once (`-j`, else [`RunOptions::default_jobs`]).
    pub jobs: usize,
    /// Whether the user chose `jobs` (`-j`); a default is narrowed for a
    /// large catalog ([`RunOptions::jobs_for`]), a choice never.
    pub jobs_chosen: bool,
    /// How long a stdio server may take to exit once its stdin is closed.
    pub shutdown_grace: Duration,
    /// Every scenario on a fresh server, and no skip decided from the probe.
    pub isolate: bool,
    /// How long a freshly started stdio server may take to answer its handshake.
    pub startup: Duration,
    /// The seed of generated cases (`--seed`, `--replay`).
    pub property: PropertyRun,
    /// Which tools scenarios may call (`--call-tools`).
    pub call_tools: CallTools,
    /// The budget of each `bounded: true` request (`--call-budget-ms`).
    pub call_budget: Duration,
    /// At most how many groups, tags or tools a "for every" invariant checks.
    pub sample_size: usize,
    /// The schemas messages are validated against (`--mcp-schema`).
    pub schemas: Schemas,
    /// The client defect every session of the run carries (`--client-fault`).
    pub client_fault: Option<ClientFault>,
    /// How expressions are evaluated (`MCP_CONFORM_VERIFY_READS`).
    pub eval_options: EvalOptions,
}

impl RunOptions {
    /// Scenarios at once by default: most of a scenario's time against a
    /// real server is spent waiting (for a process to start, for an answer,
    /// for a timeout), so a few per core keep the cores busy.
    pub fn default_jobs() -> usize {
        (super::cores() * 4).clamp(4, 32)
    }

    /// Scenarios at once for a server that lists `tools` tools: the
    /// default narrowed so that the listings the scenarios hold together
    /// come to about [`TOOLS_AT_ONCE`] tools, and never below two; a
    /// number the user chose, as chosen. A scenario over a large catalog
    /// holds listings of all of it, and the default's several scenarios
    /// per core are for waiting servers, not for memory: over 10,000
    /// tools on two cores, eight at once peaked at 240 to 279 MiB, four at
    /// 210 to 238 MiB, and took no longer (reports/bench-scale.md).
    pub fn jobs_for(&self, tools: usize) -> usize {
        if self.jobs_chosen {
            return self.jobs;
        }
        self.jobs.min((TOOLS_AT_ONCE / tools.max(1)).max(2))
    }

    pub fn new(eras: EraChoice, timeout: Duration, jobs: usize) -> Self {
        Self {
            eras,
            timeout,
            jobs,
            jobs_chosen: false,
            shutdown_grace: Duration::from_millis(100),
            isolate: false,
            startup: Duration::from_secs(10),
            property: PropertyRun::default(),
            call_tools: CallTools::default(),
            call_budget: super::executor::DEFAULT_CALL_BUDGET,
            sample_size: super::DEFAULT_SAMPLE_SIZE,
            schemas: Schemas::default(),
            client_fault: None,
            eval_options: EvalOptions::default(),
        }
    }
}

/// About how many tools the listings of a run's scenarios may hold at once
/// when the user left `-j` to its default (see [`RunOptions::jobs_for`]).
pub const TOOLS_AT_ONCE: usize = 40_000;

/// The scenarios of a run: compiled, or still compiling while the server
/// starts (the built-in catalog takes about a tenth of a second of CPU,
/// which would otherwise come before the first server start). A run awaits
/// them once the server is probed, before its first scenario.
pub enum Catalog {
    Ready(Vec<Scenario>),
    Loading(Pin<Box<dyn Future<Output = Result<Vec<Scenario>, String>> + Send>>),
}

impl Catalog {
    /// Scenarios that `loading` compiles; its error says why there are none.
    pub fn loading(
        loading: impl Future<Output = Result<Vec<Scenario>, String>> + Send + 'static,
    ) -> Self {
        Self::Loading(Box::pin(loading))
    }

    /// The scenarios, once compiled.
    pub async fn scenarios(self) -> Result<Vec<Scenario>, String> {
        match self {
            Self::Ready(scenarios) => Ok(scenarios),
            Self::Loading(loading) => loading.await,
        }
    }
}

impl From<Vec<Scenario>> for Catalog {
    fn from(scenarios: Vec<Scenario>) -> Self {
        Self::Ready(scenarios)
    }
}

fn run_info(target: &Target, probes: &[Probe], scenarios: usize, opts: &RunOptions) -> RunInfo {
    let newest = probes.last();
    let seed = opts.property.seed;
    RunInfo {
        target: target.display(),
        transport: target.transport().to_string(),
        era: newest.map_or_else(|| "unknown".into(), |p| p.era.version.clone()),
        eras: probes.iter().map(|p| p.era.version.clone()).collect(),
        server: newest.map_or(serde_json::Value::Null, |p| p.server.clone()),
        probes: probes
            .iter()
            .map(|p| (p.era.version.clone(), p.facts.clone()))
            .collect(),
        harness_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: chrono::Utc::now().to_rfc3339(),
        scenarios: scenarios * probes.len().max(1),
        fixture_match: newest
            .is_some_and(|p| crate::fixture::serves_reference_catalog(&p.tool_names)),
        seed,
        tool_calls: newest.map(|p| ToolCalls::of(opts.call_tools, p)),
        server_starts: None,
        jobs_narrowed: None,
    }
}

/// The most tools a probe listed: what the largest listing of the run
/// holds. (A stateless era probed after stateful ones is not counted: its
/// scenarios join jobs already sized by the same server's listings. A
/// server that speaks only the stateless era is probed before any job
/// starts: `probe_eras_staged` leaves nothing pending without a stateful
/// era.)
fn largest_listing(probes: &[Probe]) -> usize {
    probes.iter().map(|p| p.tool_names.len()).max().unwrap_or(0)
}

/// The warm sessions of one era's shared scenarios, the probe's session the
/// first of them; none (and the probe's session closed) with `--isolate`.
async fn warm_pool(
    era: ProbedEra,
    starting: Option<StartCounter>,
    opts: &RunOptions,
) -> Option<SessionPool> {
    if opts.isolate {
        era.close().await;
        return None;
    }
    let pool = SessionPool::new(opts.shutdown_grace)
        .with_patience(era.start_cost)
        .with_start_load(starting);
    if era.session.reusable() {
        pool.seed(era.session).await;
    } else {
        era.close().await;
    }
    Some(pool)
}

/// Probes `target` and runs `scenarios` in every era it accepts (as `opts`
/// asks); `sink` sees Started, every Finished (final: policy applied) and
/// Done with the verdict. Results come back in (era, input) order, without
/// transcripts. A target that cannot be probed gets no per-scenario results:
/// Started and a Done whose verdict is NOT RUN, then the error.
///
/// The stateful eras start as soon as they are probed, while the stateless
/// era's probe may still wait for a discover answer that a server without
/// it never gives (a start cost or half a second); the scenarios that read
/// what only the whole probe tells (`Scenario::reads_whole_probe`) wait
/// for it, and the stateless era's scenarios join the queue when it ends.
/// Started comes once every era is known, with what finished before it.
pub async fn run_catalog(
    target: Target,
    scenarios: impl Into<Catalog>,
    opts: &RunOptions,
    policy: &RunPolicy,
    mut sink: impl FnMut(Event),
) -> Result<Vec<ScenarioResult>, ProbeError> {
    let started = Instant::now();
    let staged = match probe_eras_staged(
        &target,
        &opts.eras,
        opts.timeout,
        opts.startup,
        opts.client_fault,
    )
    .await
    {
        Ok(p) => p,
        Err(e) => {
            not_run(&target, opts, &e, started, &mut sink);
            return Err(e);
        }
    };
    // Each era's work holds the scenarios it runs, shared rather than copied.
    let scenarios: Vec<Arc<Scenario>> = match scenarios.into().scenarios().await {
        Ok(s) => s.into_iter().map(Arc::new).collect(),
        Err(message) => {
            let e = ProbeError {
                message,
                stderr: String::new(),
                refusal: None,
            };
            staged.close().await;
            not_run(&target, opts, &e, started, &mut sink);
            return Err(e);
        }
    };
    let reuse_groups: BTreeSet<String> = scenarios
        .iter()
        .filter_map(|s| s.reuse_group.clone())
        .collect();
    let StagedEras {
        eras,
        pending,
        legacy,
    } = staged;
    let mut probes: Vec<Probe> = eras.iter().map(|p| p.probe.clone()).collect();
    let narrowed = NarrowedJobs::of(opts, largest_listing(&probes));
    let sized;
    let opts = match narrowed {
        Some(n) => {
            sized = RunOptions {
                jobs: n.jobs,
                ..opts.clone()
            };
            &sized
        }
        None => opts,
    };
    let whole = RunWide::of(&probes, Arc::default(), started);
    let (configs, mut pools) =
        era_configs(&target, eras, &whole, (&scenarios, &reuse_groups), opts).await;
    let mut work = Vec::new();
    for cfg in &configs {
        work.extend(era_work(&scenarios, cfg).await);
    }
    // Before any scenario starts: a shared scenario's second session finds
    // the fallen-back server idle instead of starting one. A stateless
    // probe still under way may yet bring one: the first session opened
    // without the handshake waits for it as for a donor.
    fall_back(legacy, &configs).await;
    // (Only a stdio probe keeps a refused connection.)
    let may_fall_back = pending.is_some() && target.transport() == "stdio";
    let awaited_fallback = fallback_pool(&configs).filter(|_| may_fall_back);
    if let Some(pool) = &awaited_fallback {
        pool.expect_donors(1).await;
    }
    let (held, now): (Vec<_>, Vec<_>) = work
        .into_iter()
        .partition(|(_, (s, _))| pending.is_some() && s.reads_whole_probe());
    let (batches, queued) = mpsc::unbounded_channel();
    let _ = batches.send(in_start_order(now));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let runner = tokio::spawn(run_jobs(queued, opts.jobs, tx));
    let mut early = Vec::new();
    if let Some(pending) = pending {
        let (accepted, refused) = keeping_events(pending, &mut rx, &mut early).await;
        fall_back(refused, &configs).await;
        if let Some(pool) = &awaited_fallback {
            let _ = pool.donor_done(None).await;
        }
        let later = LaterEra {
            target: &target,
            scenarios: &scenarios,
            reuse_groups: &reuse_groups,
            opts,
        };
        let (joined, era_pools) = later.join(accepted, &mut probes, &configs, held).await;
        pools.extend(era_pools);
        let _ = batches.send(in_start_order(joined));
    }
    drop(batches);
    let mut info = run_info(&target, &probes, scenarios.len(), opts);
    info.jobs_narrowed = narrowed;
    sink(Event::Started(Box::new(info)));
    let mut results = Vec::new();
    for event in early {
        take_event(event, policy, &mut results, &mut sink);
    }
    while let Some(event) = rx.recv().await {
        take_event(event, policy, &mut results, &mut sink);
    }
    let _ = runner.await;
    for pool in pools {
        pool.close_all().await;
    }
    sort_results(&mut results, &scenarios);
    crate::transport::stdio::reap_all().await;
    let mut summary = Summary::from_results(&results, started.elapsed().as_millis() as u64);
    summary.verdict = Some(policy.verdict(&results));
    summary.server_starts = target.server_starts();
    sink(Event::Done(summary));
    Ok(results)
}

/// Waits for the stateless era's probe, keeping the events of the
/// scenarios already running (the sink sees Started first).
async fn keeping_events(
    pending: PendingEra,
    events: &mut mpsc::UnboundedReceiver<Event>,
    early: &mut Vec<Event>,
) -> (Option<ProbedEra>, Option<Session>) {
    let outcome = pending.accepted();
    tokio::pin!(outcome);
    loop {
        tokio::select! {
            era = &mut outcome => return era,
            Some(event) = events.recv() => early.push(event),
        }
    }
}

/// The connection of a legacy server that refused the stateless era's
/// `server/discover` with an error goes on as a dual-era client's would
/// ("Fall back to the `initialize` handshake", MCP 2026-07-28, Transports,
/// stdio, Backward Compatibility), in the oldest stateful era of the run
/// (the newest gets the servers of the version negotiation property's
/// cases). Where a scenario of that era opens a session without the
/// handshake, the first to do so takes the connection and sends its own
/// `initialize` (`RunConfig::refused_discover`): a server that scenario
/// would otherwise start. Otherwise the run sends the era's handshake, and
/// a server that answers with the era joins its warm servers as the
/// probe's own did (`SessionPool::offer`: the shared scenarios' pool, else
/// the garbage and reused ones). Anything else stops it.
async fn fall_back(legacy: Option<Session>, configs: &[Arc<RunConfig>]) {
    let Some(mut session) = legacy else { return };
    if let Some(cfg) = fallback_era(configs) {
        session.switch_era(cfg.era.clone());
        match handed_to(session, cfg).await {
            None => return,
            Some(left) => session = left,
        }
    }
    close_probe_session(session).await;
}

/// The era a refused discover's connection falls back in: the oldest
/// stateful one of the run.
fn fallback_era(configs: &[Arc<RunConfig>]) -> Option<&Arc<RunConfig>> {
    configs.iter().find(|c| !c.era.is_stateless())
}

/// Where the first session of the fallback era opened without the
/// handshake looks for a refused discover's connection.
fn fallback_pool(configs: &[Arc<RunConfig>]) -> Option<Arc<SessionPool>> {
    fallback_era(configs).and_then(|c| c.refused_discover.clone())
}

/// The fallen-back connection given to `cfg`'s era (see [`fall_back`]);
/// back when no pool of the era takes it.
async fn handed_to(session: Session, cfg: &RunConfig) -> Option<Session> {
    let mut session = match &cfg.refused_discover {
        Some(first_unshaken) => first_unshaken.offer(session).await?,
        None => session,
    };
    let pools: Vec<Arc<SessionPool>> = [&cfg.pool, &cfg.garbage_pool, &cfg.reuse_pool]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    if pools.is_empty() {
        return Some(session);
    }
    let answered = session.handshake().await.ok();
    let agreed = answered
        .as_ref()
        .and_then(|a| a.get("protocolVersion"))
        .and_then(serde_json::Value::as_str);
    if agreed == Some(cfg.era.version.as_str()) && session.reusable() {
        SessionPool::offer_to(&pools, session).await
    } else {
        Some(session)
    }
}

/// Hands one event of the run to the sink, a result made final by the
/// policy first and kept (without its transcript).
fn take_event(
    event: Event,
    policy: &RunPolicy,
    results: &mut Vec<ScenarioResult>,
    sink: &mut impl FnMut(Event),
) {
    match event {
        Event::Finished(mut r) => {
            policy.apply(&mut r);
            results.push(ScenarioResult {
                transcript: Vec::new(),
                ..(*r).clone()
            });
            sink(Event::Finished(r));
        }
        other => sink(other),
    }
}

/// Jobs sorted into the order the run starts them: lane by lane across
/// the eras, the eras taking turns within a lane.
fn in_start_order(mut work: Vec<(StartOrder, Job)>) -> Vec<(StartOrder, Job)> {
    work.sort_by_key(|(order, _)| *order);
    work
}

/// What every era's configuration shares, from the probes of every era
/// known: the eras the run tests, whether the server serves the reference
/// catalog (its newest era's tools say), and the tools too slow to call.
struct RunWide {
    run_eras: Vec<String>,
    fixture_match: bool,
    slow_calls: Arc<SlowCalls>,
    /// When the run began (its results' `started_ms` count from it).
    began: Instant,
}

impl RunWide {
    /// A tool that outlasted the call budget in one era is not called
    /// again in another (`slow_calls`): it would only be waited out again.
    fn of(probes: &[Probe], slow_calls: Arc<SlowCalls>, began: Instant) -> Self {
        Self {
            began,
            run_eras: probes.iter().map(|p| p.era.version.clone()).collect(),
            fixture_match: probes
                .last()
                .is_some_and(|p| crate::fixture::serves_reference_catalog(&p.tool_names)),
            slow_calls,
        }
    }
}

/// The stateless era, when its probe ended after the stateful eras had
/// started: what joins the run then.
struct LaterEra<'a> {
    target: &'a Target,
    scenarios: &'a [Arc<Scenario>],
    reuse_groups: &'a BTreeSet<String>,
    opts: &'a RunOptions,
}

impl LaterEra<'_> {
    /// The jobs held back for the whole probe, with configurations that
    /// know it, and the new era's, if accepted (its probe joins `probes`,
    /// every probe's facts naming the eras spoken); with the new era's pools.
    async fn join(
        &self,
        accepted: Option<ProbedEra>,
        probes: &mut Vec<Probe>,
        configs: &[Arc<RunConfig>],
        held: Vec<(StartOrder, Job)>,
    ) -> (Vec<(StartOrder, Job)>, Vec<Arc<SessionPool>>) {
        let Some(mut era) = accepted else {
            // Nothing the held scenarios read has changed.
            return (held, Vec::new());
        };
        probes.push(era.probe.clone());
        mark_spoken(probes.iter_mut());
        if let Some(marked) = probes.last() {
            era.probe = marked.clone();
        }
        let slow_calls = configs.first().map(|c| Arc::clone(&c.slow_calls));
        let began = configs.first().map_or_else(Instant::now, |c| c.began);
        let whole = RunWide::of(probes, slow_calls.unwrap_or_default(), began);
        let mut joined = Vec::new();
        for (order, (s, provisional)) in held {
            let known = probes
                .iter()
                .find(|p| p.era.version == provisional.era.version);
            let facts = known.map(|p| &p.facts);
            let cfg = Arc::new(provisional.knowing(&whole.run_eras, whole.fixture_match, facts));
            recount(&s, &provisional, &cfg).await;
            joined.push((order, (s, cfg)));
        }
        let catalog = (self.scenarios, self.reuse_groups);
        let (era_configs, pools) =
            era_configs(self.target, vec![era], &whole, catalog, self.opts).await;
        for cfg in &era_configs {
            joined.extend(era_work(self.scenarios, cfg).await);
        }
        (joined, pools)
    }
}

/// A held scenario was counted among its pools' users by what applied
/// before the whole probe was known; what applies now settles the count.
async fn recount(s: &Scenario, before: &RunConfig, now: &RunConfig) {
    let applies = |cfg: &RunConfig| matches!(applicability(s, cfg), Ok(None));
    match (applies(before), applies(now)) {
        (true, false) => {
            for pool in before.pools_used_by(s) {
                pool.user_done().await;
            }
        }
        (false, true) => {
            for pool in now.pools_used_by(s) {
                pool.expect_users(1).await;
            }
        }
        _ => {}
    }
}

/// What the sink sees of a target that could not be probed: Started, and a
/// Done whose verdict is NOT RUN with the probe's error.
fn not_run(
    target: &Target,
    opts: &RunOptions,
    e: &ProbeError,
    started: Instant,
    sink: &mut impl FnMut(Event),
) {
    sink(Event::Started(Box::new(run_info(target, &[], 0, opts))));
    let mut summary = Summary::from_results(&[], started.elapsed().as_millis() as u64);
    summary.verdict = Some(Verdict::NotRun {
        reason: e.message.clone(),
    });
    summary.server_starts = target.server_starts();
    sink(Event::Done(summary));
}

/// An era's scenarios, each with its place in the order the run starts
/// them, lane by lane across the eras: first those whose server may serve
/// on after them (`RunConfig::donor_pools`), so that the pools waiting for
/// such servers get them early; then those on servers of their own, whose
/// starts then overlap the shared scenarios' work (after the shared ones,
/// they waited for jobs that shared scenarios held while queueing for a
/// warm server); then the shared ones; then the reused ones, the groups'
/// and those that write garbage, in the order servers go onward
/// (`SessionPool::with_onward`), so that a lane's scenarios have started
/// by the time the next lane waits for its servers. Within a lane, those
/// that may spend their time waiting (`Scenario::may_wait`) come first, so
/// that their waits overlap the rest, and those that end their server
/// last (`when_in_lane`). Where a server costs next to nothing to start (a
/// Streamable HTTP session, the built-in reference), no lane waits for
/// another's servers, and the scenarios that may wait come first whatever
/// their lane. Results are reported in the input order whatever the order
/// they ran in.
async fn era_work(scenarios: &[Arc<Scenario>], cfg: &Arc<RunConfig>) -> Vec<(StartOrder, Job)> {
    let mut donors = 0;
    for s in scenarios {
        donors += usize::from(!cfg.donor_pools(s).is_empty());
        for pool in cfg.awaited_from(s) {
            pool.expect_donors(1).await;
        }
    }
    count_pool_users(scenarios, cfg).await;
    if let (true, Some(pool)) = (cfg.lead_takes_first_server(), &cfg.reuse_pool) {
        pool.expect_first().await;
    }
    let cheap = cfg.cheap_starts();
    let mut seen: BTreeMap<(u8, u8), usize> = BTreeMap::new();
    scenarios
        .iter()
        .map(|s| {
            let (lane, when) = (lane_rank(s, cfg, donors > 0), when_in_lane(s, cfg));
            let place = seen.entry((lane, when)).or_default();
            *place += 1;
            let order = if cheap {
                (when, lane, *place)
            } else {
                (lane, when, *place)
            };
            (order, (Arc::clone(s), Arc::clone(cfg)))
        })
        .collect()
}

/// Where a scenario comes within its lane: the bounded lead
/// (`RunConfig::bounded_lead_of`) first; then those that may wait, so that
/// their waits overlap the rest (even one that ends its server: a wait at
/// the end of the run costs more than the start of a server for the
/// scenarios after it); then the rest; then the lead's lane's other
/// scenarios that send bounded requests, which skip a request the lead
/// found slow instead of holding a server while it finds out; and those
/// that end their server last, since no scenario of the lane can take
/// that server after them.
fn when_in_lane(s: &Scenario, cfg: &RunConfig) -> u8 {
    let follows_lead = cfg.bounded_lead.is_some()
        && s.makes_bounded_requests()
        && cfg.leases_from(s, &cfg.reuse_pool);
    if cfg.leads_bounded(s) {
        0
    } else if s.may_wait() && !follows_lead {
        1
    } else if s.ends_server {
        4
    } else if follows_lead {
        3
    } else {
        2
    }
}

/// Where a scenario's lane comes in the order a run starts scenarios.
/// Servers of donors (`RunConfig::donor_pools`) go to the garbage lane
/// first: when the era has any, that lane starts right after the shared
/// one, so that its scenarios take a donor's server beside the reused
/// ones instead of waiting for theirs. (Started before the shared lane,
/// they held jobs the shared scenarios needed while a Python server
/// started for the donor: the PyPI fixture's run took 0.5 s longer.)
fn lane_rank(s: &Scenario, cfg: &RunConfig, donated: bool) -> u8 {
    if !cfg.donor_pools(s).is_empty() {
        0
    } else if cfg.pool_for(s).is_none() {
        1
    } else if cfg.uses_shared_pool(s) {
        2
    } else if cfg.leases_from(s, &cfg.garbage_pool) {
        if donated {
            3
        } else {
            6
        }
    } else if cfg.leases_from(s, &cfg.reuse_pool) {
        4
    } else {
        5
    }
}

/// Counts, for each pool of the era, the scenarios that will lease from
/// it (those that apply: one skipped before it starts leases nothing),
/// then lets the pools settle who waits for whose servers.
async fn count_pool_users(scenarios: &[Arc<Scenario>], cfg: &RunConfig) {
    for s in scenarios {
        if matches!(applicability(s, cfg), Ok(None)) {
            for pool in cfg.pools_used_by(s) {
                pool.expect_users(1).await;
            }
        }
    }
    let pools = [
        &cfg.pool,
        &cfg.second_pool,
        &cfg.reuse_pool,
        &cfg.garbage_pool,
        &cfg.refused_discover,
    ];
    for pool in pools.into_iter().flatten().chain(cfg.group_pools.values()) {
        pool.settle_users().await;
    }
}

/// One configuration per era probed, and every pool they hold (to close
/// at the end of the run).
async fn era_configs(
    target: &Target,
    probed: Vec<ProbedEra>,
    whole: &RunWide,
    (scenarios, reuse_groups): (&[Arc<Scenario>], &BTreeSet<String>),
    opts: &RunOptions,
) -> (Vec<Arc<RunConfig>>, Vec<Arc<SessionPool>>) {
    let mut configs = Vec::new();
    let mut pools = Vec::new();
    for era in probed {
        let version = &era.probe.era.version;
        let donors = scenarios.iter().filter(|s| s.hands_on_in(version)).count();
        let patience = era.start_cost;
        let probe = era.probe.clone();
        let starting = target.start_counter();
        let pool = warm_pool(era, starting.clone(), opts).await;
        let cheap = patience < super::executor::CHEAP_START && target.transport() == "http";
        let lanes = Lanes::new(pool, patience, starting, cheap, reuse_groups, opts);
        pools.extend(lanes.all());
        let Lanes {
            pool,
            second_pool,
            refused_discover,
            reuse_pool,
            garbage_pool,
            group_pools,
        } = lanes;
        let mut cfg = RunConfig {
            target: target.clone(),
            era: probe.era.clone(),
            server: probe.server.clone(),
            probe: (!opts.isolate).then(|| Bound::from(probe.facts.clone())),
            timeout: opts.timeout,
            shutdown_grace: opts.shutdown_grace,
            startup: opts.startup,
            fixture_match: whole.fixture_match,
            start_cost: patience,
            walks: pool.is_some().then(Default::default),
            pool,
            reuse_pool,
            garbage_pool,
            second_pool,
            refused_discover,
            group_pools,
            hands_on_written: donors,
            bounded_lead: None,
            property: opts.property,
            call_tools: opts.call_tools,
            call_budget: opts.call_budget,
            slow_calls: Arc::clone(&whole.slow_calls),
            began: whole.began,
            run_eras: whole.run_eras.clone(),
            sample_size: opts.sample_size,
            schemas: opts.schemas.clone(),
            client_fault: opts.client_fault,
            eval_options: opts.eval_options,
        };
        // With one job, scenarios take turns in one queue: a lead would not
        // wait apart, only hold the job while it waits (with `-j 1`,
        // server-everything's run took 5.9 s instead of 3.9 s).
        if opts.jobs > 1 {
            cfg.bounded_lead = cfg.bounded_lead_of(scenarios);
        }
        configs.push(Arc::new(cfg));
    }
    (configs, pools)
}

/// The pools of one era, a lane each: the shared scenarios' (the probe's
/// server the first), their second sessions', the reused ones', each
/// `reuse_group`'s and the garbage scenarios'; none with `--isolate`.
///
/// At most two servers per lane serve the `isolation: reused` scenarios at
/// once (they are few and short, and a Node or Python start costs more
/// than waiting). The garbage lane holds two as well: its scenarios each
/// wait out a sentinel's grace on a server that drops what they write (a
/// tenth of a second to half a second), and with room for one a second
/// donor's server was stopped while they queued for the first (every
/// TypeScript SDK server's run ended on that queue, when the grace was a
/// fixed half second). When the last shared scenario is done, the shared servers
/// go onward to the reused ones, and theirs in turn to those that write
/// garbage (`SessionPool::with_onward`), each lane waiting for them as for
/// a donor. A server that served a later lane never goes back to an
/// earlier one: one pool for shared and reused scenarios was tried for the
/// stateless era (2026-07-28), and a server's answer to a scenario's first
/// notification then depended on what the process saw before (rmcp 3.11
/// ends a process whose first message is a notification other than
/// `notifications/initialized`).
struct Lanes {
    pool: Option<Arc<SessionPool>>,
    second_pool: Option<Arc<SessionPool>>,
    refused_discover: Option<Arc<SessionPool>>,
    reuse_pool: Option<Arc<SessionPool>>,
    garbage_pool: Option<Arc<SessionPool>>,
    group_pools: BTreeMap<String, Arc<SessionPool>>,
}

impl Lanes {
    /// The lanes around the shared pool `shared` (None: none at all). Where
    /// a new session costs next to nothing (`cheap`: Streamable HTTP, no
    /// process starts), a lane may hold as many sessions as there are jobs:
    /// a busy one is not worth waiting for. A process, however quick to
    /// start, is still a process.
    fn new(
        shared: Option<SessionPool>,
        patience: Duration,
        starting: Option<StartCounter>,
        cheap: bool,
        reuse_groups: &BTreeSet<String>,
        opts: &RunOptions,
    ) -> Self {
        let lane = |capacity: usize, onward: Vec<Arc<SessionPool>>| {
            let capacity = if cheap {
                capacity.max(opts.jobs)
            } else {
                capacity
            };
            let pool = SessionPool::with_capacity(capacity, opts.shutdown_grace)
                .with_patience(patience)
                .with_start_load(starting.clone())
                .with_onward(onward);
            let pool = if cheap {
                pool.donors_not_worth_waiting_for()
            } else {
                pool
            };
            Arc::new(pool)
        };
        let live = shared.is_some();
        let garbage_pool = live.then(|| lane(2, Vec::new()));
        let to_garbage: Vec<Arc<SessionPool>> = garbage_pool.iter().cloned().collect();
        let group_pools: BTreeMap<String, Arc<SessionPool>> = reuse_groups
            .iter()
            .filter(|_| live)
            .map(|group| (group.clone(), lane(2, to_garbage.clone())))
            .collect();
        let after_reuse: Vec<Arc<SessionPool>> =
            group_pools.values().chain(&garbage_pool).cloned().collect();
        let reuse_pool = live.then(|| lane(2, after_reuse));
        // The garbage lane before the groups: it is the last lane to get
        // the reused servers, so that a server left over from the shared
        // ones lets it start beside the reused scenarios instead of after.
        let after_shared: Vec<Arc<SessionPool>> = reuse_pool
            .iter()
            .chain(&garbage_pool)
            .chain(group_pools.values())
            .cloned()
            .collect();
        // Second sessions wait for one another: a second server for them
        // only when the first stays busy for as long as a start takes.
        let second_pool = live.then(|| lane(2, after_shared.clone()));
        let pool = shared.map(|shared| Arc::new(shared.with_onward(after_shared)));
        let refused_discover = live.then(|| lane(1, Vec::new()));
        Self {
            pool,
            second_pool,
            refused_discover,
            reuse_pool,
            garbage_pool,
            group_pools,
        }
    }

    /// Every pool, to close at the end of the run.
    fn all(&self) -> Vec<Arc<SessionPool>> {
        let lanes = [
            &self.pool,
            &self.second_pool,
            &self.reuse_pool,
            &self.garbage_pool,
            &self.refused_discover,
        ];
        let pools = lanes.into_iter().flatten().chain(self.group_pools.values());
        pools.cloned().collect()
    }
}

/// Results in (era, input) order: eras oldest first, scenarios as given.
fn sort_results(results: &mut [ScenarioResult], scenarios: &[Arc<Scenario>]) {
    let eras: Vec<String> = KNOWN_VERSIONS.iter().map(|v| v.to_string()).collect();
    results.sort_by_key(|r| {
        (
            eras.iter().position(|e| *e == r.era),
            scenarios.iter().position(|s| s.id == r.id),
        )
    });
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::reference::Config;
    use crate::scenario::load::load_str;
    use crate::session::Era;

    fn scenario(id: &str, isolation: &str, wait: bool) -> Scenario {
        // A bounded request may use up the call budget: the scenario may wait.
        let bounded = if wait { "    bounded: true\n" } else { "" };
        let text = format!(
            "id: {id}\ntitle: t\nprofile: base\nlevel: MUST\nisolation: {isolation}\nsteps:\n  - request: ping\n{bounded}"
        );
        load_str("t.yaml", &text).unwrap_or_else(|e| panic!("{e:?}"))
    }

    /// A configuration with a shared and a reused lane, whose starts cost
    /// `start_cost`.
    fn config(start_cost: Duration) -> Arc<RunConfig> {
        let mut cfg = RunConfig::isolated(
            Target::InProcess(Config::default()),
            Era::new("2025-11-25"),
            json!({}),
            Duration::from_secs(5),
            false,
        );
        let grace = Duration::from_millis(10);
        cfg.pool = Some(Arc::new(SessionPool::with_capacity(2, grace)));
        cfg.reuse_pool = Some(Arc::new(SessionPool::with_capacity(2, grace)));
        cfg.garbage_pool = Some(Arc::new(SessionPool::with_capacity(1, grace)));
        cfg.start_cost = start_cost;
        Arc::new(cfg)
    }

    async fn order(start_cost: Duration) -> Vec<String> {
        let scenarios = [
            scenario("base/reads", "shared", false),
            scenario("base/changes-and-waits", "reused", true),
            scenario("base/changes", "reused", false),
            scenario("base/reads-and-waits", "shared", true),
            scenario("base/own", "fresh", false),
        ];
        start_order(&scenarios, &config(start_cost)).await
    }

    /// The ids of `scenarios` in the order the run starts them.
    async fn start_order(scenarios: &[Scenario], cfg: &Arc<RunConfig>) -> Vec<String> {
        let mut work = era_work(&shared(scenarios), cfg).await;
        work.sort_by_key(|(order, _)| *order);
        work.into_iter().map(|(_, (s, _))| s.id.clone()).collect()
    }

    fn shared(scenarios: &[Scenario]) -> Vec<Arc<Scenario>> {
        scenarios.iter().cloned().map(Arc::new).collect()
    }

    /// A scenario from its YAML text after the header.
    fn scenario_with(id: &str, rest: &str) -> Scenario {
        let text = format!("id: {id}\ntitle: t\nprofile: base\nlevel: MUST\n{rest}");
        load_str("t.yaml", &text).unwrap_or_else(|e| panic!("{e:?}"))
    }

    /// The start order of a garbage scenario among the others, with a
    /// donor of a server in the era or without one.
    async fn garbage_order(donor: bool) -> Vec<String> {
        let mut scenarios = vec![
            scenario("base/reads", "shared", false),
            scenario_with("base/garbage", GARBAGE),
            scenario("base/changes", "reused", false),
        ];
        if donor {
            let hands_on = "hands_on: true\nsteps:\n  - request: ping\n";
            scenarios.push(scenario_with("base/donor", hands_on));
        }
        let mut work = era_work(&shared(&scenarios), &config(Duration::from_secs(1))).await;
        work.sort_by_key(|(order, _)| *order);
        work.into_iter().map(|(_, (s, _))| s.id.clone()).collect()
    }

    #[tokio::test]
    async fn the_garbage_lane_starts_early_only_where_a_donor_may_bring_it_a_server() {
        assert_eq!(
            garbage_order(false).await,
            ["base/reads", "base/changes", "base/garbage"],
            "without a donor its server comes from the reused lane, last"
        );
        assert_eq!(
            garbage_order(true).await,
            ["base/donor", "base/reads", "base/garbage", "base/changes"],
            "a donor's server goes to it first: it takes that beside the reused lane"
        );
    }

    const GARBAGE: &str =
        "isolation: reused\nsteps:\n  - send_raw: 'not json'\n  - request: ping\n";

    #[test]
    fn only_garbage_awaiting_a_donor_waits_apart_where_starts_cost() {
        let garbage = scenario_with("base/garbage", GARBAGE);
        let reads_and_waits = scenario("base/reads-and-waits", "shared", true);
        let changes = scenario("base/changes", "reused", false);
        let mut costly = (*config(Duration::from_secs(1))).clone();
        assert!(!costly.waits_apart(&garbage), "no donor: it queues in turn");
        costly.hands_on_written = 1;
        assert!(costly.waits_apart(&garbage), "a donor's server is coming");
        assert!(!costly.waits_apart(&reads_and_waits));
        assert!(!costly.waits_apart(&changes));
        let cheap = config(Duration::from_millis(2));
        assert!(cheap.waits_apart(&reads_and_waits));
        assert!(!cheap.waits_apart(&garbage), "it does not wait");
    }

    /// Where a start costs a while and a donor brings the garbage lane a
    /// server, its scenario starts while the scenarios before it in the
    /// start order still hold every job of the rest, not after the last of
    /// them has started.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn garbage_awaiting_a_donor_does_not_queue_behind_the_other_lanes() {
        let slow = |n: usize| {
            let rest = "isolation: fresh\nsteps:\n  - sleep_ms: 300\n  - request: ping\n";
            scenario_with(&format!("base/own-{n}"), rest)
        };
        let mut scenarios: Vec<Scenario> = (0..4).map(slow).collect();
        scenarios.push(scenario_with("base/garbage", GARBAGE));
        let mut cfg = (*config(Duration::from_secs(1))).clone();
        cfg.hands_on_written = 1;
        let work = era_work(&shared(&scenarios), &Arc::new(cfg)).await;
        let (batches, queued) = mpsc::unbounded_channel();
        let _ = batches.send(work);
        drop(batches);
        let (tx, mut rx) = mpsc::unbounded_channel();
        run_jobs(queued, 2, tx).await;
        let mut started = Vec::new();
        while let Ok(event) = rx.try_recv() {
            if let Event::ScenarioStarted(id) = event {
                started.push(id);
            }
        }
        let garbage = started.iter().position(|id| id == "base/garbage");
        let third = started.iter().position(|id| id == "base/own-2");
        assert!(
            garbage < third,
            "the garbage scenario waited for a job of the others: {started:?}"
        );
    }

    /// The garbage lane takes the servers of two donors, so that its
    /// scenarios (an invalid Request and an unparsable line, each waiting
    /// out a silence window) run side by side rather than one after the
    /// other on one server while the second donor's server is stopped.
    #[cfg(unix)]
    #[tokio::test]
    async fn the_garbage_lane_takes_the_servers_of_two_donors() {
        let opts = RunOptions::new(EraChoice::All, Duration::from_secs(5), 4);
        let shared = SessionPool::with_capacity(2, Duration::from_millis(10));
        let lanes = Lanes::new(
            Some(shared),
            Duration::from_secs(1),
            None,
            false,
            &BTreeSet::new(),
            &opts,
        );
        let garbage = lanes.garbage_pool.clone().expect("a garbage lane");
        garbage.expect_users(2).await;
        garbage.expect_donors(2).await;
        for donor in ["first", "second"] {
            let back = garbage
                .donor_done(Some(crate::run::pool::tests::session()))
                .await;
            assert!(back.is_none(), "the {donor} donor's server was not taken");
        }
        garbage.close_all().await;
    }

    #[tokio::test]
    async fn where_a_start_costs_a_while_own_servers_then_lanes_start_in_turn() {
        assert_eq!(
            order(Duration::from_secs(1)).await,
            [
                "base/own",
                "base/reads-and-waits",
                "base/reads",
                "base/changes-and-waits",
                "base/changes"
            ]
        );
    }

    /// The start order where the era's reused lane has a bounded lead.
    async fn order_with_lead(start_cost: Duration) -> Vec<String> {
        let scenarios = [
            scenario("base/reads", "shared", false),
            scenario("base/changes", "reused", false),
            scenario("base/changes-and-waits", "reused", true),
            scenario("base/changes-and-waits-too", "reused", true),
            scenario("base/reads-and-waits", "shared", true),
        ];
        let mut cfg = (*config(start_cost)).clone();
        cfg.bounded_lead = cfg.bounded_lead_of(&scenarios);
        assert_eq!(cfg.bounded_lead.as_deref(), Some("base/changes-and-waits"));
        start_order(&scenarios, &Arc::new(cfg)).await
    }

    #[test]
    fn a_default_number_of_jobs_narrows_for_a_large_catalog_and_a_chosen_one_never() {
        let mut opts = RunOptions::new(EraChoice::All, Duration::from_secs(5), 8);
        assert_eq!(opts.jobs_for(0), 8);
        assert_eq!(opts.jobs_for(5_000), 8);
        assert_eq!(opts.jobs_for(10_000), 4);
        assert_eq!(opts.jobs_for(20_000), 2);
        assert_eq!(opts.jobs_for(100_000), 2, "never below two");
        let narrowed = NarrowedJobs::of(&opts, 10_000);
        assert_eq!(
            narrowed,
            Some(NarrowedJobs {
                jobs: 4,
                default: 8,
                tools: 10_000
            })
        );
        assert_eq!(NarrowedJobs::of(&opts, 5_000), None);
        opts.jobs_chosen = true;
        assert_eq!(opts.jobs_for(100_000), 8);
        assert_eq!(NarrowedJobs::of(&opts, 100_000), None);
    }

    #[tokio::test]
    async fn the_bounded_lead_starts_first_in_its_lane_and_the_others_bounded_last() {
        assert_eq!(
            order_with_lead(Duration::from_secs(1)).await,
            [
                "base/reads-and-waits",
                "base/reads",
                "base/changes-and-waits",
                "base/changes",
                "base/changes-and-waits-too"
            ]
        );
    }

    #[test]
    fn the_bounded_lead_is_the_first_reused_scenario_that_applies_and_sends_one() {
        let mut cfg = (*config(Duration::from_secs(1))).clone();
        let shared = scenario("base/shared-waits", "shared", true);
        let plain = scenario("base/changes", "reused", false);
        let not_here = scenario_with(
            "base/not-here",
            "isolation: reused\neras: [2025-06-18]\neras_reason: r\nsteps:\n  - request: ping\n    bounded: true\n",
        );
        let lead = scenario("base/lead", "reused", true);
        let after = scenario("base/after", "reused", true);
        let catalog = [shared, plain, not_here, lead, after];
        assert_eq!(cfg.bounded_lead_of(&catalog).as_deref(), Some("base/lead"));
        cfg.reuse_pool = None;
        assert_eq!(
            cfg.bounded_lead_of(&catalog),
            None,
            "no reused lane, no lead"
        );
    }

    #[tokio::test]
    async fn where_a_start_costs_next_to_nothing_every_waiter_starts_first() {
        assert_eq!(
            order(Duration::from_millis(2)).await,
            [
                "base/reads-and-waits",
                "base/changes-and-waits",
                "base/own",
                "base/reads",
                "base/changes"
            ]
        );
    }
}
