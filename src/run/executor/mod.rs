//! Runs one scenario against a target: applicability, the execution's
//! state and its step loop. Each other concern has its own file: the
//! scenario's sessions (`sessions`), sending a step and getting its answer
//! (`send`), the checks of an answer (`check`), and cleanup with the verdict
//! and its evidence (`verdict`).

mod check;
mod concurrent;
mod send;
mod sessions;
mod verdict;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::outcome::{Finding, Outcome, ScenarioResult};
use super::pool::SessionPool;
use super::property::{self, PropertyRun};
use super::slow_calls::{Party, SlowCalls};
use super::target::Target;
use super::walks::WalkCache;
use crate::expr::{Bindings, Bound, EvalOptions};
use crate::json::ReadTree;
use crate::scenario::model::{
    Action, Assertion, Fixture, ForEach, Isolation, Level, Place, Scenario, Step,
};
use crate::schema::Schemas;
use crate::session::client_fault::ClientFault;
use crate::session::{Era, Session, Transcript};

/// What every scenario of a run shares.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub target: Target,
    pub era: Era,
    /// The handshake answer of the probe session (`server` in CEL).
    pub server: Value,
    pub timeout: Duration,
    /// What the probe found (`probe` in `requires:`); None turns off the
    /// skips decided from it (`--isolate`). Shared: every scenario binds it,
    /// and on a large catalog it names every tool.
    pub probe: Option<Bound>,
    /// How long a stdio server may take to exit once its stdin closes.
    pub shutdown_grace: Duration,
    /// How long a freshly started stdio server may take to answer its handshake.
    pub startup: Duration,
    /// Whether the server serves the reference catalog (golden scenarios run).
    pub fixture_match: bool,
    /// What starting one more server (stdio) or session (HTTP) costs in
    /// this era, as the probe measured it (zero when not measured).
    pub start_cost: Duration,
    /// Warm sessions for `isolation: shared` scenarios (None: every scenario fresh).
    pub pool: Option<Arc<SessionPool>>,
    /// Servers handed on between `isolation: reused` scenarios; never to
    /// shared ones (None: every scenario fresh).
    pub reuse_pool: Option<Arc<SessionPool>>,
    /// The servers of `reused` scenarios that write bytes a server need not
    /// survive: a server that read them is handed on only to another such
    /// scenario, since what it does later may depend on them (rmcp 3.11
    /// takes a notification it would otherwise end on, once it has read an
    /// invalid Request).
    pub garbage_pool: Option<Arc<SessionPool>>,
    /// The servers of `reused` scenarios of one `reuse_group`, by group: a
    /// group's scenarios leave state that would sway other reused ones
    /// (description authorizations), so its servers serve only the group.
    pub group_pools: BTreeMap<String, Arc<SessionPool>>,
    /// The second sessions of shared scenarios when no warm server of
    /// their own pool is idle (None: every scenario fresh). A scenario
    /// waits for its first one here rather than starting yet another
    /// server.
    pub second_pool: Option<Arc<SessionPool>>,
    /// Holds, at most, the connection of a legacy server that refused the
    /// stateless probe's `server/discover` with an error (a dual-era
    /// client's connection before it falls back to `initialize`): the
    /// first session of the era opened without the handshake takes it
    /// instead of starting a server, its `initialize` being the fallback
    /// (None: every scenario fresh).
    pub refused_discover: Option<Arc<SessionPool>>,
    /// How many `hands_on` scenarios are written for the era: whether the
    /// garbage lane may get a donor's server before the shared lane hands
    /// its servers on (`waits_apart`), and whether one that only read may
    /// go to the second sessions first (`donor_pools`).
    pub hands_on_written: usize,
    /// The scenario of the reused lane whose bounded requests go out
    /// first (`RunConfig::bounded_lead_of`): it waits for the lane's first
    /// server apart from the queue, and the lane's other bounded
    /// scenarios come last.
    pub bounded_lead: Option<String>,
    /// Complete list walks the shared scenarios on warm servers pass on
    /// (None: every scenario walks its own).
    pub walks: Option<Arc<WalkCache>>,
    /// The seed of generated cases (`generate:` scenarios).
    pub property: PropertyRun,
    /// Which tools scenarios may call (`call_tools` in CEL).
    pub call_tools: CallTools,
    /// How long a `bounded: true` request may take before it is cancelled
    /// and its item recorded as not exercised (`--call-budget-ms`).
    pub call_budget: Duration,
    /// The bounded requests that outlasted `call_budget` earlier in the run
    /// (every era's configuration shares one).
    pub slow_calls: Arc<SlowCalls>,
    /// The eras this run tests, oldest first (`versions.run` in CEL).
    pub run_eras: Vec<String>,
    /// At most how many items a "for every group / tag / tool" invariant
    /// checks (`sample_size` in CEL, with `sample(list, sample_size, run_seed)`).
    pub sample_size: usize,
    /// What `schema_errors` validates against (`--mcp-schema`).
    pub schemas: Schemas,
    /// The client defect every session carries (`--client-fault`).
    pub client_fault: Option<ClientFault>,
    /// How expressions are evaluated (the test suites verify reads).
    pub eval_options: EvalOptions,
    /// When the run began: each result's `started_ms` counts from it.
    pub began: Instant,
}

/// A start that costs less than this (a Streamable HTTP session, an
/// in-process server) is not worth ordering the run around: a lane waits
/// for the one before it a few times this long at most, and a scenario
/// that may wait is not worth keeping from starting.
pub const CHEAP_START: Duration = Duration::from_millis(150);

/// The default of `--call-budget-ms`: a tool that works for longer (a
/// long-running demonstration, a slow fetch) is not exercised by a default
/// run rather than holding it up.
pub const DEFAULT_CALL_BUDGET: Duration = Duration::from_millis(1000);

/// Which tools a run may call (`--call-tools`): a conformance run must not
/// change a user's data, so by default only tools their server marks
/// read-only and not destructive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum CallTools {
    None,
    #[default]
    ReadOnly,
    All,
}

impl CallTools {
    /// The value of `call_tools` in CEL (and of the flag).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ReadOnly => "read-only",
            Self::All => "all",
        }
    }
}

impl RunConfig {
    /// The pool whose servers a scenario of this isolation runs on.
    pub fn pool_for(&self, s: &Scenario) -> Option<&Arc<SessionPool>> {
        match s.isolation_in(&self.era.version) {
            // Nothing to lease: its sessions are its steps' own.
            Isolation::Reused if !s.uses_main_session() => None,
            Isolation::Shared => self.pool.as_ref(),
            Isolation::Reused if s.reuse_group.is_some() => {
                self.group_pools.get(s.reuse_group.as_deref()?)
            }
            Isolation::Reused if s.may_break_connection() => self.garbage_pool.as_ref(),
            Isolation::Reused => self.reuse_pool.as_ref(),
            Isolation::Fresh => None,
        }
    }

    /// Whether starting one more server costs next to nothing here
    /// ([`CHEAP_START`]).
    pub fn cheap_starts(&self) -> bool {
        self.start_cost < CHEAP_START
    }

    /// Whether `s` takes a job of the queue of scenarios that spend their
    /// time waiting (`scheduler::run_jobs`) rather than one of the rest.
    /// Where a start costs next to nothing, every scenario that may wait
    /// does. Where it costs more, only the garbage scenarios and the
    /// bounded lead do, when a donor's server is coming to them
    /// (`donor_pools`): they wait for it holding no core, and take it as
    /// soon as the donor is done. Queued behind the shared scenarios
    /// instead, a Python server's garbage scenarios started only once every
    /// shared scenario had, and their one-second silence windows ran after
    /// all the other work. (Every reused scenario that may wait was tried
    /// the same way: they outnumber the donors, took their servers in no
    /// useful order, and one opened a server of its own after waiting its
    /// patience out. The lead is one, and it never opens one early:
    /// `SessionPool::lease_first`.)
    pub fn waits_apart(&self, s: &Scenario) -> bool {
        if self.cheap_starts() {
            return s.may_wait();
        }
        let waits_for_donors = self.leases_from(s, &self.garbage_pool) || self.leads_bounded(s);
        waits_for_donors && self.hands_on_written > 0
    }

    /// The scenario whose bounded requests go out first in the reused
    /// lane: the first of the catalog that leases from it, applies, and
    /// sends a `bounded: true` request. A request that outlasts the call
    /// budget is found once per run, by its first call
    /// (`RunConfig::slow_calls`): made early, on the first server the lane
    /// gets (a donor's, before the shared lane is done), that call's wait
    /// overlaps the rest of the run, and the lane's other bounded
    /// scenarios, last in the lane, skip what it found slow instead of
    /// holding a server while it is found. (On server-everything over stdio
    /// the first call of its long-running tool went out 1.04 s into a run
    /// of 2.3-2.5 s; as the lead's, at 0.6 s, in a run of 1.9-2.0 s.)
    pub fn bounded_lead_of<S: std::borrow::Borrow<Scenario>>(
        &self,
        scenarios: &[S],
    ) -> Option<String> {
        scenarios
            .iter()
            .map(std::borrow::Borrow::borrow)
            .filter(|s| s.makes_bounded_requests() && self.leases_from(s, &self.reuse_pool))
            .find(|s| matches!(applicability(s, self), Ok(None)))
            .map(|s| s.id.clone())
    }

    /// Whether `s` is the era's bounded lead ([`RunConfig::bounded_lead_of`]).
    pub fn leads_bounded(&self, s: &Scenario) -> bool {
        self.bounded_lead.as_deref() == Some(s.id.as_str())
    }

    /// Whether the era's bounded lead waits for the reused lane's first
    /// server (`SessionPool::lease_first`): only where starts cost, since
    /// where they are cheap no lane waits for a donor's server.
    pub fn lead_takes_first_server(&self) -> bool {
        self.bounded_lead.is_some() && !self.cheap_starts()
    }

    /// Whether `s` leases its main session from `pool` (one of this
    /// configuration's lanes).
    pub fn leases_from(&self, s: &Scenario, pool: &Option<Arc<SessionPool>>) -> bool {
        matches!((self.pool_for(s), pool), (Some(a), Some(b)) if Arc::ptr_eq(a, b))
    }

    /// Whether `s` runs on the warm servers of the era's shared scenarios.
    pub fn uses_shared_pool(&self, s: &Scenario) -> bool {
        s.isolation_in(&self.era.version) == Isolation::Shared && self.pool.is_some()
    }

    /// The pools `s` may lease from, which count it among their users
    /// (`SessionPool::expect_users`): its own, for a shared scenario the
    /// pool of second sessions, and for one that opens a session without
    /// the handshake the era's refused discover connection (once its last
    /// such user is done, a connection nobody took is stopped).
    pub fn pools_used_by(&self, s: &Scenario) -> Vec<Arc<SessionPool>> {
        let second = self
            .second_pool
            .as_ref()
            .filter(|_| self.uses_shared_pool(s));
        let refused = self
            .refused_discover
            .as_ref()
            .filter(|_| s.opens_unshaken());
        self.pool_for(s)
            .into_iter()
            .chain(second)
            .chain(refused)
            .cloned()
            .collect()
    }

    /// The pools a `hands_on: true` scenario, which runs on a server of its
    /// own, may hand that server to when it ends: the garbage pool first
    /// (it has room for two), then the pool of `reused` scenarios. The
    /// loader holds such a scenario to what a `reused` one may do, so the
    /// server it leaves is one a `reused` scenario could have left. One
    /// whose steps only read leaves a server any shared scenario could have
    /// left: where the era has other donors for the garbage lane
    /// (`hands_on_written`), it goes to the second sessions of the
    /// shared scenarios first, which would otherwise start a server.
    pub fn donor_pools(&self, s: &Scenario) -> Vec<Arc<SessionPool>> {
        if !s.hands_on_in(&self.era.version) {
            return Vec::new();
        }
        let seconds = self
            .second_pool
            .as_ref()
            .filter(|_| self.hands_on_written > 1 && s.only_reads());
        seconds
            .into_iter()
            .chain([&self.garbage_pool, &self.reuse_pool].into_iter().flatten())
            .cloned()
            .collect()
    }

    /// The pools that take the server of `session`, a session other than
    /// the main one that a `reused` scenario opened for itself (a
    /// property's `session: fresh` cases), once the scenario is done with
    /// it (`SessionPool::offer`). What such a scenario leaves on it is what
    /// it could leave on its main session, so the pools its main session's
    /// server goes on to take it: the garbage pool, and the pool of
    /// `reused` scenarios unless the scenario writes garbage. When every
    /// step on that session only read (its own `initialize` aside), the
    /// server is where a handshake leaves any other, and the shared
    /// scenarios' pool takes it first. None for a scenario in a
    /// `reuse_group` (its changes sway only its group) or one that ends its
    /// server.
    pub fn outlets(&self, s: &Scenario, session: &str) -> Vec<Arc<SessionPool>> {
        let reused = s.isolation_in(&self.era.version) == Isolation::Reused;
        if !reused || s.reuse_group.is_some() || s.ends_server {
            return Vec::new();
        }
        let shared = self.pool.as_ref().filter(|_| s.only_reads_on(session));
        let reuse = self
            .reuse_pool
            .as_ref()
            .filter(|_| !s.may_break_connection());
        [shared, self.garbage_pool.as_ref(), reuse]
            .into_iter()
            .flatten()
            .cloned()
            .collect()
    }

    /// The pools that take the servers of the sessions `s` opens for
    /// itself (`outlets`), each once.
    pub fn outlets_of(&self, s: &Scenario) -> Vec<Arc<SessionPool>> {
        let mut pools: Vec<Arc<SessionPool>> = Vec::new();
        for name in s.own_sessions() {
            for pool in self.outlets(s, name) {
                if !pools.iter().any(|p| Arc::ptr_eq(p, &pool)) {
                    pools.push(pool);
                }
            }
        }
        pools
    }

    /// The pools that may get servers from `s` when it is done with them,
    /// each of which waits for it as for a donor
    /// (`SessionPool::expect_donors`, then `donor_done` once): those its
    /// own server goes to (`donor_pools`) and those the servers of the
    /// sessions it opens for itself go to (`outlets_of`).
    pub fn awaited_from(&self, s: &Scenario) -> Vec<Arc<SessionPool>> {
        let mut pools = self.donor_pools(s);
        pools.extend(self.outlets_of(s));
        pools
    }

    /// A configuration with every scenario on a fresh server and no probe facts.
    pub fn isolated(
        target: Target,
        era: Era,
        server: Value,
        timeout: Duration,
        fixture_match: bool,
    ) -> Self {
        Self {
            target,
            run_eras: vec![era.version.clone()],
            era,
            server,
            timeout,
            probe: None,
            shutdown_grace: Duration::from_millis(100),
            startup: timeout,
            fixture_match,
            start_cost: Duration::ZERO,
            pool: None,
            reuse_pool: None,
            garbage_pool: None,
            second_pool: None,
            refused_discover: None,
            group_pools: BTreeMap::new(),
            hands_on_written: 0,
            bounded_lead: None,
            walks: None,
            property: PropertyRun::default(),
            call_tools: CallTools::default(),
            call_budget: DEFAULT_CALL_BUDGET,
            slow_calls: Arc::default(),
            sample_size: super::DEFAULT_SAMPLE_SIZE,
            schemas: Schemas::default(),
            client_fault: None,
            eval_options: EvalOptions::default(),
            began: Instant::now(),
        }
    }
}

/// The session steps use unless they name another.
const MAIN: &str = crate::scenario::model::MAIN_SESSION;

/// Why a scenario does not apply to this server, if it does not.
pub fn applicability(s: &Scenario, cfg: &RunConfig) -> Result<Option<String>, String> {
    if !s.written_for(&cfg.era.version) {
        return Ok(Some(s.eras_reason.clone().unwrap_or_else(|| {
            format!(
                "not applicable in protocol version {} (applies to {})",
                cfg.era.version,
                s.eras.join(", ")
            )
        })));
    }
    let transport = cfg.target.transport();
    if !s.transports.is_empty() && !s.transports.iter().any(|t| t == transport) {
        let names: Vec<&str> = s.transports.iter().map(|t| t.as_str()).collect();
        return Ok(Some(format!(
            "not applicable over {transport} (applies to {})",
            names.join(", ")
        )));
    }
    if s.fixture == Some(Fixture::ReferenceCatalog) && !cfg.fixture_match {
        return Ok(Some(
            "golden scenario: needs the reference catalog (fixture: reference-catalog), and this server's tools differ"
                .into(),
        ));
    }
    let bindings = base_bindings(cfg);
    for req in &s.requires {
        if req.reads_probe() && cfg.probe.is_none() {
            // Decided by the scenario's own steps instead (`skip_unless`).
            continue;
        }
        match req.expr.eval_bool(&bindings) {
            Ok(true) => {}
            Ok(false) => return Ok(Some(req.reason.source().to_string())),
            Err(e) => {
                return Err(format!(
                    "requires {:?} could not be evaluated: {e}",
                    req.expr.source
                ))
            }
        }
    }
    Ok(None)
}

/// Bindings of a running scenario: the base ones plus empty wire logs.
fn initial_bindings(cfg: &RunConfig) -> Bindings {
    let mut b = base_bindings(cfg);
    b.insert("notifications", json!([]));
    b.insert("stdout_violations", json!([]));
    b.insert("touched_tools", json!([]));
    b
}

/// `versions` in CEL: the revisions of `crate::protocol`, so that no
/// scenario spells them out, those the probe found the server speaking,
/// and those this run tests.
fn protocol_versions(probe: Option<&Value>, run: &[String]) -> Value {
    use crate::protocol::{KNOWN_VERSIONS, OLDER_REVISIONS, STATEFUL};
    let published: Vec<&str> = OLDER_REVISIONS
        .iter()
        .chain(KNOWN_VERSIONS)
        .copied()
        .collect();
    let spoken = probe
        .and_then(|p| p.get("eras"))
        .cloned()
        .unwrap_or_else(|| json!([]));
    json!({ "known": KNOWN_VERSIONS, "stateful": STATEFUL, "published": published, "spoken": spoken, "run": run })
}

fn base_bindings(cfg: &RunConfig) -> Bindings {
    let mut b = Bindings::default();
    b.set_schemas(cfg.schemas.clone());
    b.set_options(cfg.eval_options);
    b.insert("server", cfg.server.clone());
    b.insert("era", json!(cfg.era.version));
    b.insert("liveness_method", json!(cfg.era.liveness_method()));
    b.insert("request_meta", crate::session::era::request_meta(&cfg.era));
    b.insert("transport", json!(cfg.target.transport()));
    b.insert("call_tools", json!(cfg.call_tools.as_str()));
    b.insert("run_seed", json!(cfg.property.seed));
    b.insert("sample_size", json!(cfg.sample_size));
    b.insert(
        "versions",
        protocol_versions(cfg.probe.as_ref().map(Bound::json), &cfg.run_eras),
    );
    if let Some(probe) = &cfg.probe {
        b.insert("probe", probe.clone());
    }
    b
}

/// Runs one scenario to its verdict. Never panics on server behaviour.
/// A shared scenario that errors on a warm server is run again on a fresh
/// one, and that verdict is the one reported; so is a `confirm_fresh`
/// scenario that did not pass on one.
pub async fn run_scenario(s: &Scenario, cfg: &RunConfig) -> ScenarioResult {
    let started = Instant::now();
    let not_run = |result: ScenarioResult| async {
        // A donor that does not run is done all the same.
        for pool in cfg.awaited_from(s) {
            pool.donor_done(None).await;
        }
        result
    };
    let mut result = match applicability(s, cfg) {
        Ok(Some(reason)) => not_run(ScenarioResult::skipped(s, reason)).await,
        Err(message) => not_run(ScenarioResult::blank(s, Outcome::Error, message)).await,
        Ok(None) => {
            let pooled = cfg.pool_for(s).is_some();
            let (first, warm) = execute(s, cfg, pooled).await;
            // A failure stands (the equivalence tests hold shared, reused
            // and fresh verdicts equal); a scenario that could not be
            // evaluated gets a fresh server before it is reported, as does
            // any verdict but pass of one that asks for it.
            let unconfirmed = s.confirm_fresh && warm && first.outcome != Outcome::Pass;
            let result = if pooled && (first.outcome == Outcome::Error || unconfirmed) {
                let (mut again, _) = execute(s, cfg, false).await;
                again.server_exits.insert(
                    0,
                    format!(
                        "re-run on a fresh server after '{}' on a warm one",
                        first.outcome
                    ),
                );
                again
            } else {
                first
            };
            for pool in cfg.pools_used_by(s) {
                pool.user_done().await;
            }
            for pool in cfg.outlets_of(s) {
                pool.donor_done(None).await;
            }
            result
        }
    };
    result.duration_ms = started.elapsed().as_millis() as u64;
    result.started_ms = Some(started.saturating_duration_since(cfg.began).as_millis() as u64);
    result.era = cfg.era.version.clone();
    // Quote only the rules that hold in this era over this transport.
    let transport = cfg.target.transport();
    result
        .spec
        .retain(|spec| spec.applies_to(&cfg.era.version, transport));
    // And only the shared findings of this transport.
    result.shared_finding = result
        .shared_finding
        .take()
        .filter(|shared| shared.holds_over(transport));
    result
}

/// The scenario's result, and whether its main session was a warm server.
async fn execute(s: &Scenario, cfg: &RunConfig, pooled: bool) -> (ScenarioResult, bool) {
    let mut exec = Execution::new(s, cfg, pooled);
    exec.donor_pools = cfg.donor_pools(s);
    let stopped = exec.run().await;
    exec.cleanup().await;
    let warm = exec.on_warm_server;
    (exec.finish(stopped).await, warm)
}

/// A check failed at a level that ends the scenario.
pub(super) struct Stop;

pub(super) struct Execution<'a> {
    pub(super) s: &'a Scenario,
    pub(super) cfg: &'a RunConfig,
    sessions: BTreeMap<String, Session>,
    pub(super) bindings: Bindings,
    pub(super) findings: Vec<Finding>,
    labels: Vec<String>,
    transcript: Transcript,
    /// Set when the scenario could not be evaluated at all.
    pub(super) error: Option<String>,
    /// Set when a step found the scenario not applicable.
    pub(super) skipped: Option<String>,
    /// Set when a `bounded: true` request outlasted the run's budget and
    /// was cancelled: why its item was not exercised.
    pub(super) unexercised: Option<String>,
    /// The setup steps answered with an error, by id, each with what it
    /// was (`Execution::setup_refusal`).
    pub(super) refused: Vec<(String, String)>,
    /// Lengths of the wire logs last bound, so unchanged logs are not re-bound.
    bound_logs: (usize, usize),
    /// The pool the main session comes from and may go back to.
    pooled: Option<Arc<SessionPool>>,
    /// The pools that wait for this scenario's own server when it ends
    /// (`RunConfig::donor_pools`).
    donor_pools: Vec<Arc<SessionPool>>,
    /// Whether the server wrote to stderr during the step that first went
    /// wrong (its stderr tail is then worth showing with the verdict).
    pub(super) stderr_in_failure: Option<bool>,
    /// The sessions a pool counts as its own, with that pool: the main
    /// one, and in a shared scenario those its steps name (each a warm
    /// server of the pool, or one opened for it and given back).
    leased: BTreeMap<String, Arc<SessionPool>>,
    /// The walks this scenario asked for so far: a second one of the same
    /// request goes to the server, whatever the shared store has.
    walked: std::collections::HashSet<String>,
    /// Every step so far only listed or checked, on a server started the
    /// usual way for this scenario: its lists are those of any warm server
    /// of the run, so a walk may come from the shared store even if the
    /// scenario runs on a server of its own (most `fresh` scenarios begin
    /// by listing tools). Not for a reuse group's scenario on a warm
    /// server (`Execution::adopt`).
    pristine: bool,
    /// Whether a `handshake: false` step should start the server of the
    /// next one as soon as its own is open: a property's cases each start
    /// a server, one after another, and the next case's start-up (most of
    /// a second for an interpreter) then overlaps this case's work.
    pub(in crate::run) spare_wanted: bool,
    /// The server started ahead for the next `handshake: false` step of
    /// this name (`spare_wanted`); closed unused if no step takes it.
    spare: Option<Session>,
    /// Who this scenario's bounded requests wait as (`SlowCalls::claim`).
    pub(super) party: Party,
    /// Whether the main session is a warm server an earlier scenario
    /// served (`confirm_fresh` then checks a verdict other than pass again).
    pub(super) on_warm_server: bool,
}

impl Execution<'_> {
    /// The main session comes from (and may go back to) the warm pool of
    /// shared scenarios.
    fn shared(&self) -> bool {
        self.pooled.is_some() && self.cfg.uses_shared_pool(self.s)
    }
}

impl RunConfig {
    /// This configuration once every era's probe is known: the eras the
    /// run tests, whether the server serves the reference catalog, and
    /// (unless `--isolate`) this era's probe facts naming every era spoken.
    pub fn knowing(
        &self,
        run_eras: &[String],
        fixture_match: bool,
        probe: Option<&Value>,
    ) -> RunConfig {
        let mut cfg = self.clone();
        cfg.run_eras = run_eras.to_vec();
        cfg.fixture_match = fixture_match;
        if cfg.probe.is_some() {
            cfg.probe = probe.cloned().map(Bound::from).or(cfg.probe);
        }
        cfg
    }
}

impl<'a> Execution<'a> {
    fn new(s: &'a Scenario, cfg: &'a RunConfig, pooled: bool) -> Self {
        let pool = cfg.pool_for(s).filter(|_| pooled).cloned();
        Self {
            s,
            cfg,
            sessions: BTreeMap::new(),
            bindings: initial_bindings(cfg),
            findings: Vec::new(),
            labels: Vec::new(),
            transcript: Transcript::new(),
            error: None,
            skipped: None,
            unexercised: None,
            refused: Vec::new(),
            bound_logs: (0, 0),
            pooled: pool,
            donor_pools: Vec::new(),
            leased: Default::default(),
            walked: Default::default(),
            // A confirm_fresh scenario reads what its session holds: its
            // listings (a filtered one sets what a description read may
            // authorize under pd-auth-filter-scoped) go to its server.
            pristine: s.handshake && s.fixture.is_none() && !s.confirm_fresh,
            stderr_in_failure: None,
            spare_wanted: false,
            spare: None,
            party: cfg.slow_calls.party(),
            on_warm_server: false,
        }
    }

    /// Bytes every session's server has written to stderr so far.
    fn stderr_total(&self) -> u64 {
        self.sessions.values().map(Session::stderr_total).sum()
    }

    fn timeout(&self, step: Option<&Step>) -> Duration {
        step.and_then(|s| s.timeout_ms)
            .or(self.s.timeout_ms)
            .map_or(self.cfg.timeout, Duration::from_millis)
    }

    fn level_for(&self, step: Option<&Step>, assertion: Option<&Assertion>) -> Level {
        let mut level = self.s.level;
        if let Some(l) = step.and_then(|s| s.level) {
            level = level.weaker(l);
        }
        if let Some(l) = assertion.and_then(|a| a.level) {
            level = level.weaker(l);
        }
        level
    }

    /// Whether a finding recorded since the first `from` failed or warned.
    pub(super) fn failed_or_warned_since(&self, from: usize) -> bool {
        self.findings[from.min(self.findings.len())..]
            .iter()
            .any(|f| matches!(f.outcome, Outcome::Fail | Outcome::Warn))
    }

    /// Records a finding; returns Stop when it fails the scenario.
    fn record(&mut self, finding: Finding) -> Result<(), Stop> {
        let stops = finding.outcome == Outcome::Fail;
        self.findings.push(finding);
        if stops {
            Err(Stop)
        } else {
            Ok(())
        }
    }

    async fn run(&mut self) -> Result<(), Stop> {
        // A scenario whose steps all name other sessions opens none here.
        let opened = if self.s.uses_main_session() {
            self.open_session(MAIN).await
        } else {
            Ok(())
        };
        if let Err(e) = opened {
            self.error = Some(e);
            return Err(Stop);
        }
        self.bind_touched_tools();
        for (index, step) in self.s.steps.iter().enumerate() {
            self.run_step(index, step).await?;
        }
        if let Some(g) = &self.s.generate {
            property::run_cases(self, g).await?;
        }
        let asserts = self.s.asserts.clone();
        for a in &asserts {
            self.check_assert(None, None, a, None, None)?;
        }
        Ok(())
    }

    /// Runs one step: its `if`, then its action once or once per `for_each`
    /// item, each answer bound, captured and checked.
    pub(in crate::run) async fn run_step(&mut self, index: usize, step: &Step) -> Result<(), Stop> {
        let label = step.label(index);
        if !self.condition_holds(step, &label)? {
            return Ok(());
        }
        let (stderr_before, findings_before) = (self.stderr_total(), self.findings.len());
        let done = match &step.for_each {
            None => self.run_once(step, &label).await,
            Some(fe) => self.run_for_each(step, &label, fe).await,
        };
        let went_wrong = self.error.is_some() || self.failed_or_warned_since(findings_before);
        if went_wrong && self.stderr_in_failure.is_none() {
            self.stderr_in_failure = Some(self.stderr_total() > stderr_before);
        }
        self.pristine &= step.only_lists();
        done
    }

    /// The step's `if`: false binds its id to null and skips it; an `if`
    /// that cannot be evaluated is a finding (and skips it too).
    fn condition_holds(&mut self, step: &Step, label: &str) -> Result<bool, Stop> {
        let Some(condition) = &step.condition else {
            return Ok(true);
        };
        match condition.eval_bool(&self.bindings) {
            Ok(true) => Ok(true),
            Ok(false) => {
                self.bind_step(step, Bound::from(Value::Null));
                Ok(false)
            }
            Err(e) => {
                let msg = format!("if {:?}: {e}", condition.source);
                self.step_finding(step, label, msg, &condition.place)
                    .map(|()| false)
            }
        }
    }

    async fn run_once(&mut self, step: &Step, label: &str) -> Result<(), Stop> {
        let answer = self.perform(step, label).await?;
        if let Some(why) = self.unexercised.take() {
            // Nothing to check: the scenario is not exercised.
            self.skipped = Some(why);
            return Err(Stop);
        }
        self.bind_step(step, answer.clone());
        if let (Some(id), Some(why)) = (&step.id, self.setup_refusal(step, answer.json())) {
            self.refused.push((id.clone(), format!("{label}: {why}")));
        }
        self.capture(step, label)?;
        self.check_applicable(step, label)?;
        self.check(step, label, answer.json(), None)
    }

    /// What a setup step's error answer was, when it was one: a step of the
    /// scenario's own `steps` (not a property case's) that sends a request
    /// and checks nothing of its answer (no `expect`, no `assert`) only
    /// gathers what later steps need. The run's probe counts a listing
    /// answered with an error as empty, so the scenarios that need its
    /// items skip; a capture that reads such an answer and cannot be
    /// evaluated makes the scenario not exercised the same way
    /// (`Execution::capture`), rather than failing a rule nothing tested.
    /// A step that checks its answer keeps every finding.
    fn setup_refusal(&self, step: &Step, answer: &Value) -> Option<String> {
        let Action::Request { method, .. } = &step.action else {
            return None;
        };
        let is_setup = step.expect.is_none()
            && step.asserts.is_empty()
            && self.s.steps.iter().any(|own| std::ptr::eq(own, step));
        let error = answer.get("error").filter(|_| is_setup)?;
        let method = method.source();
        let code = error.get("code").map_or_else(String::new, Value::to_string);
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        Some(format!("{method} was refused ({code} {message:?})"))
    }

    /// What the scenario's expressions read of the step's answer (None: the
    /// step has no id, or nothing reads it). A `for_each` step's id is
    /// read both as one answer and as the list of them.
    fn answer_read(&self, step: &Step) -> Option<ReadTree> {
        let id = step.id.as_ref()?;
        self.s.reads.get(id).map(ReadTree::with_items_read)
    }

    /// The step once per item, each answer checked with the id bound to it;
    /// afterwards the id is bound to the list of answers.
    async fn run_for_each(&mut self, step: &Step, label: &str, fe: &ForEach) -> Result<(), Stop> {
        let items = match fe.items.eval_list_first(&self.bindings, fe.max_items) {
            Ok(items) => items,
            Err(e) => {
                let msg = format!("for_each {:?}: {e}", fe.items.source);
                return self.step_finding(step, label, msg, &fe.items.place);
            }
        };
        let items: Vec<Value> = items.into_iter().take(fe.max_items).collect();
        let answers = match &step.action {
            Action::Request { method, params, .. } if fe.concurrency > 1 => {
                let written = concurrent::Written { method, params };
                self.answers_in_flight(step, label, fe, written, items)
                    .await?
            }
            _ => {
                let mut answers = Vec::new();
                for item in items {
                    self.bindings.insert(fe.var.clone(), item.clone());
                    let answer = self.perform(step, label).await?;
                    answers.extend(self.take_item_answer(step, label, &item, answer)?);
                }
                answers
            }
        };
        self.bindings.remove(&fe.var);
        if let Some(id) = &step.id {
            // Drops the binding's share of the last answer, so that
            // none of them is copied below.
            self.bindings.remove(id);
        }
        // What the scenario reads of each answer, as the walk kept it: an
        // answer shared with the store of walks is copied only that far.
        let kept = self.answer_read(step);
        let answers = answers
            .into_iter()
            .map(|answer| match &kept {
                Some(read) => answer.into_json_kept(read),
                None => answer.into_json(),
            })
            .collect();
        self.bind_step(step, Bound::from(Value::Array(answers)));
        self.capture(step, label)?;
        self.check_applicable(step, label)
    }

    /// One item's answer: bound to the step's id and checked with the item
    /// bound, or, where its request outlasted the call budget, an info
    /// finding and no answer (this item is not exercised; the others
    /// still are).
    fn take_item_answer(
        &mut self,
        step: &Step,
        label: &str,
        item: &Value,
        answer: Bound,
    ) -> Result<Option<Bound>, Stop> {
        if let Some(why) = self.unexercised.take() {
            let f =
                Finding::new(Outcome::Info, Some(label.to_string()), why).at(self.s, &step.place);
            self.record(f)?;
            return Ok(None);
        }
        self.bind_step(step, answer.clone());
        self.check(step, label, answer.json(), Some(item))?;
        Ok(Some(answer))
    }

    /// Records a problem of a step at the step's level, pointing at `place`.
    fn step_finding(
        &mut self,
        step: &Step,
        label: &str,
        message: String,
        place: &Place,
    ) -> Result<(), Stop> {
        let outcome = Outcome::for_level(self.level_for(Some(step), None));
        let f = Finding::new(outcome, Some(label.to_string()), message).at(self.s, place);
        self.record(f)
    }
}
