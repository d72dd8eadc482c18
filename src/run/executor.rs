//! Runs one scenario against a target: applicability, sessions, steps,
//! expectations and assertions, and the verdict with its evidence.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::outcome::{Finding, Outcome, ScenarioResult};
use super::pool::{Lease, SessionPool};
use super::property::{self, PropertyRun};
use super::target::Target;
use crate::scenario::diff;
use crate::scenario::expr::Bindings;
use crate::scenario::interpolate::{Template, ValueTemplate};
use crate::scenario::model::{Action, Assertion, Fixture, Isolation, Level, Scenario, Step};
use crate::scenario::pattern::{AltVerdict, Pattern};
use crate::session::{Era, Session, SessionError, Transcript};
use crate::transport::RawRequest;

/// What every scenario of a run shares.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub target: Target,
    pub era: Era,
    /// The handshake answer of the probe session (`server` in CEL).
    pub server: Value,
    pub timeout: Duration,
    /// What the probe found (`probe` in `requires:`); None turns off the
    /// skips decided from it (`--isolate`).
    pub probe: Option<Value>,
    /// How long a stdio server may take to exit once its stdin closes.
    pub shutdown_grace: Duration,
    /// How long a freshly started stdio server may take to answer its handshake.
    pub startup: Duration,
    /// Whether the server serves the reference catalog (golden scenarios run).
    pub fixture_match: bool,
    /// Warm sessions for `isolation: shared` scenarios (None: every scenario fresh).
    pub pool: Option<Arc<SessionPool>>,
    /// The seed of generated cases (`generate:` scenarios).
    pub property: PropertyRun,
}

impl RunConfig {
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
            era,
            server,
            timeout,
            probe: None,
            shutdown_grace: Duration::from_millis(100),
            startup: timeout,
            fixture_match,
            pool: None,
            property: PropertyRun::default(),
        }
    }
}

const MAIN: &str = "main";

/// Other mismatch paths a finding lists besides the first.
const MAX_OTHER_PATHS: usize = 10;

/// Why a scenario does not apply to this server, if it does not.
pub fn applicability(s: &Scenario, cfg: &RunConfig) -> Result<Option<String>, String> {
    if !s.eras.is_empty() && !s.eras.contains(&cfg.era.version) {
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
    b
}

fn base_bindings(cfg: &RunConfig) -> Bindings {
    let mut b = Bindings::default();
    b.insert("server", cfg.server.clone());
    b.insert("era", json!(cfg.era.version));
    b.insert("liveness_method", json!(cfg.era.liveness_method()));
    b.insert("transport", json!(cfg.target.transport()));
    if let Some(probe) = &cfg.probe {
        b.insert("probe", probe.clone());
    }
    b
}

/// Runs one scenario to its verdict. Never panics on server behaviour.
/// A shared scenario that errors on a warm server is run again on a fresh
/// one, and that verdict is the one reported.
pub async fn run_scenario(s: &Scenario, cfg: &RunConfig) -> ScenarioResult {
    let started = Instant::now();
    let mut result = match applicability(s, cfg) {
        Ok(Some(reason)) => ScenarioResult::skipped(s, reason),
        Err(message) => ScenarioResult::blank(s, Outcome::Error, message),
        Ok(None) => {
            let shared = s.isolation == Isolation::Shared && cfg.pool.is_some();
            let first = execute(s, cfg, shared).await;
            // A failure stands (the scenario only reads, and the equivalence
            // test holds shared and fresh verdicts equal); a scenario that
            // could not be evaluated gets a fresh server before it is reported.
            if shared && first.outcome == Outcome::Error {
                let mut again = execute(s, cfg, false).await;
                again.server_exits.insert(
                    0,
                    format!(
                        "re-run on a fresh server after '{}' on a shared one",
                        first.outcome
                    ),
                );
                again
            } else {
                first
            }
        }
    };
    result.duration_ms = started.elapsed().as_millis() as u64;
    result.era = cfg.era.version.clone();
    // Quote only the rules that hold in this era over this transport.
    let transport = cfg.target.transport();
    result
        .spec
        .retain(|spec| spec.applies_to(&cfg.era.version, transport));
    result
}

async fn execute(s: &Scenario, cfg: &RunConfig, shared: bool) -> ScenarioResult {
    let mut exec = Execution::new(s, cfg, shared);
    let stopped = exec.run().await;
    exec.cleanup().await;
    exec.finish(stopped).await
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
    /// Lengths of the wire logs last bound, so unchanged logs are not re-bound.
    bound_logs: (usize, usize),
    /// The main session comes from (and may go back to) the warm pool.
    shared: bool,
    /// The pool counted this scenario's main session as one of its own.
    leased: bool,
}

impl<'a> Execution<'a> {
    fn new(s: &'a Scenario, cfg: &'a RunConfig, shared: bool) -> Self {
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
            bound_logs: (0, 0),
            shared,
            leased: false,
        }
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
        if let Err(e) = self.open_session(MAIN).await {
            self.error = Some(e);
            return Err(Stop);
        }
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

    async fn open_session(&mut self, name: &str) -> Result<(), String> {
        if let Some(pool) = self
            .cfg
            .pool
            .as_ref()
            .filter(|_| self.shared && name == MAIN)
        {
            self.leased = true;
            if let Lease::Warm(mut warm) = pool.lease().await {
                warm.adopt(name, self.transcript.clone());
                self.transcript.note(
                    name,
                    "a warm server of an earlier shared scenario (its handshake is not repeated)"
                        .to_string(),
                );
                self.sessions.insert(name.to_string(), *warm);
                return Ok(());
            }
        }
        let conn = self
            .cfg
            .target
            .connect(&self.cfg.era)
            .await
            .map_err(|e| e.to_string())?;
        let mut session = Session::new(
            name,
            conn,
            self.cfg.era.clone(),
            self.cfg.timeout,
            self.transcript.clone(),
        );
        let handshake = session
            .handshake_within(Some(self.cfg.startup.max(self.cfg.timeout)))
            .await;
        let failed = handshake.is_err();
        self.sessions.insert(name.to_string(), session);
        match handshake {
            Ok(_) => Ok(()),
            Err(e) if failed => Err(format!(
                "session '{name}': {}",
                describe_handshake_error(&e)
            )),
            Err(_) => Ok(()),
        }
    }

    async fn session(&mut self, step: &Step, label: &str) -> Result<&mut Session, Stop> {
        let name = step.session.clone().unwrap_or_else(|| MAIN.to_string());
        if !self.sessions.contains_key(&name) {
            if let Err(e) = self.open_session(&name).await {
                let outcome = Outcome::for_level(self.level_for(Some(step), None));
                let f = Finding::new(outcome, Some(label.to_string()), e).at(self.s, &step.place);
                self.record(f)?;
                return Err(Stop);
            }
        }
        self.sessions.get_mut(&name).ok_or(Stop)
    }

    pub(super) async fn run_step(&mut self, index: usize, step: &Step) -> Result<(), Stop> {
        let label = step.label(index);
        if let Some(condition) = &step.condition {
            match condition.eval_bool(&self.bindings) {
                Ok(true) => {}
                Ok(false) => {
                    self.bind_step(step, Arc::new(Value::Null));
                    return Ok(());
                }
                Err(e) => {
                    let outcome = Outcome::for_level(self.level_for(Some(step), None));
                    let msg = format!("if {:?}: {e}", condition.source);
                    let f = Finding::new(outcome, Some(label), msg).at(self.s, &condition.place);
                    return self.record(f);
                }
            }
        }
        match &step.for_each {
            None => {
                let answer = Arc::new(self.perform(step, &label).await?);
                self.bind_step(step, Arc::clone(&answer));
                self.capture(step, &label)?;
                self.check_applicable(step, &label)?;
                self.check(step, &label, &answer, None)?;
            }
            Some(fe) => {
                let items = match fe.items.eval_list(&self.bindings) {
                    Ok(items) => items,
                    Err(e) => {
                        let outcome = Outcome::for_level(self.level_for(Some(step), None));
                        let msg = format!("for_each {:?}: {e}", fe.items.source);
                        let f = Finding::new(outcome, Some(label), msg).at(self.s, &fe.items.place);
                        return self.record(f);
                    }
                };
                let mut answers = Vec::new();
                for item in items.into_iter().take(fe.max_items) {
                    self.bindings.insert(fe.var.clone(), item.clone());
                    let answer = Arc::new(self.perform(step, &label).await?);
                    self.bind_step(step, Arc::clone(&answer));
                    self.check(step, &label, &answer, Some(&item))?;
                    answers.push(answer);
                }
                self.bindings.remove(&fe.var);
                if let Some(id) = &step.id {
                    // Drops the binding's share of the last answer, so that
                    // none of them is copied below.
                    self.bindings.remove(id);
                }
                let answers = answers
                    .into_iter()
                    .map(|a| Arc::try_unwrap(a).unwrap_or_else(|shared| (*shared).clone()))
                    .collect();
                self.bind_step(step, Arc::new(Value::Array(answers)));
                self.capture(step, &label)?;
                self.check_applicable(step, &label)?;
            }
        }
        Ok(())
    }

    /// `skip_unless`: a server that turns out not to offer the feature
    /// makes the scenario not applicable (skip), unless something already failed.
    fn check_applicable(&mut self, step: &Step, label: &str) -> Result<(), Stop> {
        let Some(req) = &step.skip_unless else {
            return Ok(());
        };
        match req.expr.eval_bool(&self.bindings) {
            Ok(true) => Ok(()),
            Ok(false) => {
                // The reason may name what the server offered (`${size(picks)}`).
                let reason = self.interpolated_text(label, &req.reason)?;
                self.skipped = Some(reason);
                Err(Stop)
            }
            Err(e) => {
                let outcome = Outcome::for_level(self.level_for(Some(step), None));
                let msg = format!("skip_unless {:?}: {e}", req.expr.source);
                let f = Finding::new(outcome, Some(label.to_string()), msg);
                self.record(f.at(self.s, &req.expr.place))
            }
        }
    }

    fn bind_step(&mut self, step: &Step, answer: Arc<Value>) {
        if let Some(id) = &step.id {
            self.bindings.insert_shared(id.clone(), answer);
        }
        let notes = self
            .sessions
            .get(MAIN)
            .map_or(0, |s| s.notification_log.len());
        let lines: usize = self.sessions.values().map(|s| s.violations.len()).sum();
        if (notes, lines) == self.bound_logs {
            return;
        }
        self.bound_logs = (notes, lines);
        let log: Vec<Value> = self
            .sessions
            .get(MAIN)
            .map(|s| s.notification_log.clone())
            .unwrap_or_default();
        self.bindings.insert("notifications", Value::Array(log));
        let violations: Vec<Value> = self
            .sessions
            .values()
            .flat_map(|s| {
                s.violations
                    .iter()
                    .map(|v| json!({"session": s.name, "reason": v.reason, "excerpt": v.excerpt}))
            })
            .collect();
        self.bindings
            .insert("stdout_violations", Value::Array(violations));
    }

    fn capture(&mut self, step: &Step, label: &str) -> Result<(), Stop> {
        if step.captures.is_empty() {
            return Ok(());
        }
        for (name, e) in &step.captures {
            match e.eval(&self.bindings) {
                Ok(v) => {
                    self.bindings.insert(name.clone(), v);
                }
                Err(err) => {
                    let outcome = Outcome::for_level(self.level_for(Some(step), None));
                    let msg = format!(
                        "capture '{name}' = {:?} could not be evaluated: {err}",
                        e.source
                    );
                    let f = Finding::new(outcome, Some(label.to_string()), msg);
                    self.record(f.at(self.s, &e.place))?;
                }
            }
        }
        Ok(())
    }

    fn interpolated(
        &mut self,
        step: &Step,
        label: &str,
        value: &ValueTemplate,
    ) -> Result<Value, Stop> {
        value.render(&self.bindings).map_err(|e| {
            self.error = Some(format!("{label}: {e}"));
            let _ = step;
            Stop
        })
    }

    /// A method name (or other text) with `${…}` interpolated.
    fn interpolated_text(&mut self, label: &str, text: &Template) -> Result<String, Stop> {
        text.render_text(&self.bindings).map_err(|e| {
            self.error = Some(format!("{label}: {e}"));
            Stop
        })
    }

    /// Does the step's wire action and returns its answer as bound in CEL.
    async fn perform(&mut self, step: &Step, label: &str) -> Result<Value, Stop> {
        let timeout = self.timeout(Some(step));
        let outcome = Outcome::for_level(self.level_for(Some(step), None));
        let answer = match &step.action {
            Action::Request {
                method,
                params,
                rpc_id,
                no_wait,
                paginate,
                max_pages,
            } => {
                let params = match params {
                    Some(p) => Some(self.interpolated(step, label, p)?),
                    None => None,
                };
                let rpc_id = match rpc_id {
                    Some(id) => Some(self.interpolated(step, label, id)?),
                    None => None,
                };
                let method = &self.interpolated_text(label, method)?;
                let request = jsonrpc_request_view(method, params.as_ref());
                let session = self.session(step, label).await?;
                if step.sentinel {
                    session.arm_sentinel();
                }
                let answer = match paginate {
                    None if *no_wait => session
                        .send_request(method, params, rpc_id, step.meta)
                        .await
                        .map(|id| (json!({ "id": id, "request": request }), None)),
                    None => session
                        .request_with(method, params, rpc_id, Some(timeout), step.meta)
                        .await
                        .map(|mut a| {
                            attach(&mut a, "request", request);
                            (a, None)
                        }),
                    Some(field) => paginate_all(
                        session, method, params, field, *max_pages, timeout, step.meta,
                    )
                    .await
                    .map(|(mut a, problem)| {
                        attach(&mut a, "request", request);
                        (a, problem)
                    }),
                };
                match answer {
                    Ok((a, problem)) => {
                        if let Some(problem) = problem {
                            let f = Finding::new(outcome, Some(label.to_string()), problem)
                                .at(self.s, &step.place)
                                .with_answer(&a);
                            self.record(f)?;
                        }
                        a
                    }
                    Err(e) => {
                        return self
                            .wire_failure(step, outcome, label, e)
                            .map(|_| Value::Null)
                    }
                }
            }
            Action::Notify { method, params } => {
                let method = &self.interpolated_text(label, method)?;
                let params = match params {
                    Some(p) => Some(self.interpolated(step, label, p)?),
                    None => None,
                };
                let session = self.session(step, label).await?;
                match session.notify(method, params).await {
                    Ok(()) => json!({}),
                    Err(e) => {
                        return self
                            .wire_failure(step, outcome, label, e)
                            .map(|_| Value::Null)
                    }
                }
            }
            Action::SendRaw { text } => {
                let text = self.interpolated_text(label, text)?;
                let expect_answer = step.expect.is_some();
                let session = self.session(step, label).await?;
                if step.sentinel {
                    session.arm_sentinel();
                }
                match session.send_raw(&text, expect_answer, Some(timeout)).await {
                    Ok(a) => a,
                    Err(e) => {
                        return self
                            .wire_failure(step, outcome, label, e)
                            .map(|_| Value::Null)
                    }
                }
            }
            Action::WaitNotification { method } => {
                let session = self.session(step, label).await?;
                match session.wait_notification(method, Some(timeout)).await {
                    Ok(n) => n,
                    Err(e) => {
                        return self
                            .wire_failure(step, outcome, label, e)
                            .map(|_| Value::Null)
                    }
                }
            }
            Action::Sleep { ms } => {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                Value::Null
            }
            Action::Http {
                method,
                body,
                text,
                headers,
                read_ms,
            } => {
                let request =
                    self.http_request(step, label, method, body, text, headers, *read_ms)?;
                let session = self.session(step, label).await?;
                match session.http_exchange(&request).await {
                    Ok(a) => a.to_value(),
                    Err(e) => {
                        return self
                            .wire_failure(step, outcome, label, e)
                            .map(|_| Value::Null)
                    }
                }
            }
            Action::Check => Value::Null,
        };
        Ok(answer)
    }

    /// An `http:` step's request with its body and header values interpolated.
    #[allow(clippy::too_many_arguments)]
    fn http_request(
        &mut self,
        step: &Step,
        label: &str,
        method: &str,
        body: &Option<ValueTemplate>,
        text: &Option<Template>,
        headers: &[(String, Option<Template>)],
        read_ms: u64,
    ) -> Result<RawRequest, Stop> {
        let body = match (body, text) {
            (Some(b), _) => self.interpolated(step, label, b)?.to_string(),
            (None, Some(t)) => self.interpolated_text(label, t)?,
            (None, None) => String::new(),
        };
        let mut overrides = Vec::new();
        for (name, value) in headers {
            let value = match value {
                Some(v) => Some(self.interpolated_text(label, v)?),
                None => None,
            };
            overrides.push((name.clone(), value));
        }
        let method = reqwest::Method::from_bytes(method.as_bytes()).map_err(|e| {
            self.error = Some(format!("{label}: bad HTTP method {method:?}: {e}"));
            Stop
        })?;
        Ok(RawRequest {
            method,
            body,
            headers: overrides,
            read_ms,
        })
    }

    fn wire_failure(
        &mut self,
        step: &Step,
        outcome: Outcome,
        label: &str,
        e: SessionError,
    ) -> Result<(), Stop> {
        let f = Finding::new(outcome, Some(label.to_string()), e.to_string());
        self.record(f.at(self.s, &step.place))?;
        // A step without an answer leaves nothing to check: stop even below MUST.
        Err(Stop)
    }

    fn check(
        &mut self,
        step: &Step,
        label: &str,
        answer: &Value,
        item: Option<&Value>,
    ) -> Result<(), Stop> {
        if let Some(pattern) = &step.expect {
            let pattern = pattern.resolve(&self.bindings).map_err(|e| {
                self.error = Some(format!("{label}: {e}"));
                Stop
            })?;
            let level = self.level_for(Some(step), None);
            self.check_expect(step, label, &pattern, answer, item, level)?;
        }
        for a in &step.asserts {
            self.check_assert(Some(step), Some(label), a, item, Some(answer))?;
        }
        Ok(())
    }

    fn check_expect(
        &mut self,
        step: &Step,
        label: &str,
        pattern: &Pattern,
        answer: &Value,
        item: Option<&Value>,
        level: Level,
    ) -> Result<(), Stop> {
        match pattern.matches(Some(answer)) {
            Ok(matched) => {
                for (_, l) in matched.labels {
                    if !self.labels.contains(&l) {
                        self.labels.push(l);
                    }
                }
                for (verdict, note) in matched.verdicts {
                    let v = if verdict == AltVerdict::Warn {
                        Level::Should
                    } else {
                        Level::Info
                    };
                    let mut f = Finding::new(
                        Outcome::for_level(level.weaker(v)),
                        Some(label.to_string()),
                        note,
                    )
                    .at(self.s, &step.expect_place)
                    .with_answer(answer);
                    f.item = item.cloned();
                    self.record(f)?;
                }
                Ok(())
            }
            Err(mismatch) => {
                let mut f = Finding::new(
                    Outcome::for_level(level),
                    Some(label.to_string()),
                    format!("answer does not match expect: {mismatch}"),
                )
                .at(self.s, &mismatch.place)
                .with_answer(answer);
                f.item = item.cloned();
                f.diff = diff::expect_diff(pattern, answer, &mismatch.path);
                f.expected = Some(pattern.to_value().clone());
                f.other_paths = pattern
                    .mismatches(Some(answer), MAX_OTHER_PATHS + 1)
                    .into_iter()
                    .map(|m| m.path)
                    .filter(|p| *p != mismatch.path)
                    .take(MAX_OTHER_PATHS)
                    .collect();
                f.path = Some(mismatch.path);
                self.record(f)
            }
        }
    }

    pub(super) fn check_assert(
        &mut self,
        step: Option<&Step>,
        label: Option<&str>,
        a: &Assertion,
        item: Option<&Value>,
        answer: Option<&Value>,
    ) -> Result<(), Stop> {
        let outcome = Outcome::for_level(self.level_for(step, Some(a)));
        let problem = match a.expr.eval_bool(&self.bindings) {
            Ok(true) => return Ok(()),
            Ok(false) => match &a.message {
                Some(m) => match m.render_text(&self.bindings) {
                    Ok(text) => text,
                    Err(e) => format!("{} [the message could not be filled in: {e}]", m.source()),
                },
                None => "assertion is false".to_string(),
            },
            Err(e) => format!(
                "{}: the assertion could not be evaluated ({e})",
                a.message
                    .as_ref()
                    .map_or("assertion failed", |m| m.source())
            ),
        };
        let mut f =
            Finding::new(outcome, label.map(str::to_string), problem).at(self.s, &a.expr.place);
        if let Some(answer) = answer {
            f = f.with_answer(answer);
        }
        f.expected = Some(Value::String(a.expr.source.clone()));
        f.item = item.cloned();
        self.record(f)
    }

    /// Runs the `cleanup:` steps whatever happened before. What they find
    /// goes to the transcript as notes; the verdict stays as it was.
    async fn cleanup(&mut self) {
        if self.s.cleanup.is_empty() || !self.sessions.contains_key(MAIN) {
            return;
        }
        let findings = self.findings.len();
        let error = self.error.take();
        let skipped = self.skipped.take();
        for (index, step) in self.s.cleanup.iter().enumerate() {
            let label = format!("cleanup step {}", index + 1);
            let runs = match &step.condition {
                Some(c) => c.eval_bool(&self.bindings).unwrap_or(false),
                None => true,
            };
            if runs && self.perform(step, &label).await.is_err() && self.error.is_none() {
                self.error = Some(format!("{label} stopped"));
            }
            let problems: Vec<String> = self
                .findings
                .drain(findings..)
                .map(|f| f.message)
                .chain(self.error.take())
                .collect();
            for p in problems {
                self.transcript.note(MAIN, format!("{label}: {p}"));
            }
        }
        self.error = error;
        self.skipped = skipped;
    }

    async fn finish(mut self, _stopped: Result<(), Stop>) -> ScenarioResult {
        let (outcome, message) = self.verdict();
        let mut exits = Vec::new();
        let mut stderr = String::new();
        let several = self.sessions.len() > 1;
        // Evidence matters only for a scenario that did not pass: then the
        // server's exit is waited for; otherwise it ends in the background.
        let wait_for_exit = matches!(outcome, Outcome::Fail | Outcome::Warn | Outcome::Error);
        let grace = self.cfg.shutdown_grace;
        if let Some(pool) = self.cfg.pool.clone().filter(|_| self.leased) {
            match self.sessions.remove(MAIN) {
                // A read-only scenario's failure is in the server's answers,
                // not its state: the server stays warm, its stderr is the
                // evidence, and it has not exited.
                Some(main) if self.error.is_none() && main.reusable() => {
                    if wait_for_exit {
                        stderr = main.stderr_tail();
                        exits.push(format!("{MAIN}: server still running (kept warm)"));
                    }
                    pool.put(main).await
                }
                other => {
                    self.sessions.extend(other.map(|m| (MAIN.to_string(), m)));
                    pool.release().await;
                }
            }
        }
        for (name, session) in self.sessions.iter_mut() {
            let how = if wait_for_exit {
                session
                    .close_within(grace.max(Duration::from_millis(300)))
                    .await
            } else {
                session.close_in_background(grace).await
            };
            exits.push(format!("{name}: server {how}"));
            let tail = session.stderr_tail();
            if !tail.is_empty() {
                if several {
                    stderr.push_str(&format!("--- session {name} ---\n"));
                }
                stderr.push_str(&tail);
            }
        }
        let (transcript, dropped) = self.transcript.take_entries();
        let mut result = ScenarioResult::blank(self.s, outcome, message);
        result.findings = self.findings;
        result.alternatives = self.labels;
        result.transcript = transcript;
        result.transcript_dropped = dropped;
        result.stderr_tail = stderr;
        result.server_exits = exits;
        result
    }

    fn verdict(&self) -> (Outcome, String) {
        if let Some(e) = &self.error {
            return (Outcome::Error, e.clone());
        }
        if let Some(reason) = &self.skipped {
            if !self.findings.iter().any(|f| f.outcome == Outcome::Fail) {
                return (Outcome::Skip, reason.clone());
            }
        }
        let worst = self.findings.iter().max_by_key(|f| f.outcome.severity());
        match worst {
            Some(f) if f.outcome != Outcome::Info => (f.outcome, f.headline()),
            _ => {
                let chosen = if self.labels.is_empty() {
                    String::new()
                } else {
                    format!("server chose: {}", self.labels.join(", "))
                };
                let notes: Vec<String> = self.findings.iter().map(Finding::headline).collect();
                let message = [chosen, notes.join("; ")]
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join("; ");
                if matches!(self.s.level, Level::Info | Level::May) || !self.findings.is_empty() {
                    (Outcome::Info, message)
                } else {
                    (Outcome::Pass, message)
                }
            }
        }
    }
}

fn describe_handshake_error(e: &SessionError) -> String {
    match e {
        SessionError::Closed { exit, .. } => format!("the server {exit} during the handshake"),
        SessionError::Timeout { method, ms, hint } => {
            format!("no answer to {method} within {ms} ms during the handshake{hint}")
        }
        other => other.to_string(),
    }
}

fn jsonrpc_request_view(method: &str, params: Option<&Value>) -> Value {
    let mut v = json!({"method": method});
    if let Some(p) = params {
        v["params"] = p.clone();
    }
    v
}

fn attach(answer: &mut Value, key: &str, value: Value) {
    if let Some(map) = answer.as_object_mut() {
        map.insert(key.to_string(), value);
    }
}

/// Follows `nextCursor` until it is absent, concatenating `result.<field>`.
/// A repeated cursor, too many pages or a page of the wrong shape ends the
/// walk; why is given beside the answer.
async fn paginate_all(
    session: &mut Session,
    method: &str,
    params: Option<Value>,
    field: &str,
    max_pages: usize,
    timeout: Duration,
    meta: bool,
) -> Result<(Value, Option<String>), SessionError> {
    let base = match params {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let mut items = Vec::new();
    let mut pages: Vec<Value> = Vec::new();
    let mut seen_cursors: Vec<String> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut problem: Option<String> = None;
    loop {
        let mut p = base.clone();
        if let Some(c) = &cursor {
            p.insert("cursor".into(), json!(c));
        }
        let answer = session
            .request_with(method, Some(Value::Object(p)), None, Some(timeout), meta)
            .await?;
        let next = next_page(&answer, method, field, pages.len() + 1, &mut items);
        pages.push(answer);
        match next {
            Ok(None) => break,
            Ok(Some(next)) if seen_cursors.contains(&next) => {
                problem = Some(format!(
                    "pagination of {method} does not terminate: cursor {next:?} came back after {} pages",
                    pages.len()
                ));
                break;
            }
            Ok(Some(_)) if pages.len() >= max_pages => {
                problem = Some(format!(
                    "pagination of {method} did not end within {max_pages} pages"
                ));
                break;
            }
            Ok(Some(next)) => {
                seen_cursors.push(next.clone());
                cursor = Some(next);
            }
            Err(why) => {
                problem = Some(why);
                break;
            }
        }
    }
    let last = pages.last();
    let mut out = match last.and_then(|l| l.get("result")) {
        Some(result) => {
            let mut result = result.clone();
            if let Some(map) = result.as_object_mut() {
                map.insert(field.to_string(), Value::Array(items));
                map.remove("nextCursor");
            }
            let id = last.and_then(|l| l.get("id")).cloned();
            json!({"jsonrpc": "2.0", "id": id.unwrap_or(Value::Null), "result": result})
        }
        None => last.cloned().unwrap_or(Value::Null),
    };
    attach(&mut out, "page_count", json!(pages.len()));
    attach(&mut out, "pages", Value::Array(pages));
    Ok((out, problem))
}

/// Adds one page's `result.<field>` to `items`; gives its `nextCursor`
/// (`None` on the last page, or on an error answer, which ends the walk),
/// or why the page breaks the shape.
fn next_page(
    answer: &Value,
    method: &str,
    field: &str,
    number: usize,
    items: &mut Vec<Value>,
) -> Result<Option<String>, String> {
    let Some(result) = answer.get("result") else {
        return Ok(None);
    };
    let Some(page) = result.get(field).and_then(Value::as_array) else {
        return Err(format!(
            "page {number} of {method} has no array result.{field}"
        ));
    };
    items.extend(page.iter().cloned());
    match result.get("nextCursor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(next)) => Ok(Some(next.clone())),
        Some(other) => Err(format!("nextCursor of {method} is not a string: {other}")),
    }
}
