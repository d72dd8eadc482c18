//! Sending a step: its wire action (a request or a paginated walk, a
//! notification, raw text, an HTTP exchange, a wait for a notification)
//! with its `${…}` filled in, and the answer it gets, as bound in CEL. A step
//! that gets no answer is a finding, and the scenario stops there.

use std::time::Duration;

use crate::run::slow_calls::{Claim, Party, SlowCalls, Ticket};
use serde_json::{json, Value};

use super::{Execution, RunConfig, Stop};
use crate::expr::Bound;
use crate::json::prune;
use crate::json::ReadTree;
use crate::run::outcome::{Finding, Outcome};
use crate::run::walks::WalkCache;
use crate::scenario::interpolate::{Template, ValueTemplate};
use crate::scenario::model::{Action, Step};
use crate::session::{PageWalk, Session, SessionError, Walked};
use crate::transport::RawRequest;

/// How long a paginated walk may take in all before it is stopped as not
/// exercised (or the step's timeout, if longer): a list so long that its
/// walk takes longer is not tested here, and is no fault of the server.
const WALK_BUDGET: Duration = Duration::from_secs(30);

/// What the wire gave back for a step, or why it gave nothing.
/// A request step's answer: shared with the run's walks when it is one.
type Sent = Result<Bound, SessionError>;

/// A `request:` step's request, interpolated.
struct Call {
    method: String,
    params: Option<Value>,
    rpc_id: Option<Value>,
    /// The request as the answer carries it (under `request`).
    request: Value,
}

/// A `request:` step as written, before interpolation.
struct RequestStep<'s> {
    method: &'s Template,
    params: &'s Option<ValueTemplate>,
    rpc_id: &'s Option<ValueTemplate>,
    no_wait: bool,
    /// The field of a paginated walk.
    paginate: Option<&'s str>,
    max_pages: Option<usize>,
}

/// An `http:` step as written, before interpolation.
struct HttpStep<'s> {
    method: &'s str,
    body: &'s Option<ValueTemplate>,
    text: &'s Option<Template>,
    headers: &'s [(Template, Option<Template>)],
    read_ms: u64,
}

impl Execution<'_> {
    /// Does the step's wire action and returns its answer as bound in CEL.
    pub(super) async fn perform(&mut self, step: &Step, label: &str) -> Result<Bound, Stop> {
        let timeout = self.timeout(Some(step));
        let sent = match &step.action {
            Action::Request {
                method,
                params,
                rpc_id,
                no_wait,
                paginate,
                max_pages,
            } => {
                let request = RequestStep {
                    method,
                    params,
                    rpc_id,
                    no_wait: *no_wait,
                    paginate: paginate.as_deref(),
                    max_pages: *max_pages,
                };
                let sent = self.send_request(step, label, &request, timeout).await?;
                return sent.map_err(|e| self.wire_failure(step, label, e));
            }
            Action::Notify { method, params } => {
                let method = self.interpolated_text(label, method)?;
                let params = self.interpolated_params(label, params)?;
                let session = self.session(step, label).await?;
                session.notify(&method, params).await.map(|()| json!({}))
            }
            Action::SendRaw { text } => {
                let text = self.interpolated_text(label, text)?;
                let expect_answer = step.expect.is_some();
                let session = self.session(step, label).await?;
                if step.sentinel {
                    session.arm_sentinel();
                }
                session.send_raw(&text, expect_answer, Some(timeout)).await
            }
            Action::WaitNotification { method } => {
                let session = self.session(step, label).await?;
                session.wait_notification(method, Some(timeout)).await
            }
            Action::Sleep { ms } => {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                Ok(Value::Null)
            }
            Action::Http {
                method,
                body,
                text,
                headers,
                read_ms,
            } => {
                let http = HttpStep {
                    method,
                    body,
                    text,
                    headers,
                    read_ms: *read_ms,
                };
                let request = self.http_request(label, &http)?;
                let session = self.session(step, label).await?;
                session.http_exchange(&request).await.map(|a| a.to_value())
            }
            Action::Check => Ok(Value::Null),
        };
        sent.map(Bound::from)
            .map_err(|e| self.wire_failure(step, label, e))
    }

    /// A `request:` step: one request (awaited or not), or a paginated walk
    /// whose early end is a finding beside its answer. The answer carries the
    /// request under `request`.
    async fn send_request(
        &mut self,
        step: &Step,
        label: &str,
        written: &RequestStep<'_>,
        timeout: Duration,
    ) -> Result<Sent, Stop> {
        let params = self.interpolated_params(label, written.params)?;
        let rpc_id = self.interpolated_params(label, written.rpc_id)?;
        let method = self.interpolated_text(label, written.method)?;
        let call = Call {
            request: jsonrpc_request_view(&method, params.as_ref()),
            method,
            params,
            rpc_id,
        };
        match written.paginate {
            Some(field) => self.walk(step, label, written, field, call, timeout).await,
            None if written.no_wait => self.send_unawaited(step, label, call).await,
            None if step.bounded => self.send_bounded(step, label, call).await,
            None => self.send_awaited(step, label, call, timeout).await,
        }
    }

    /// The step's session, its sentinel armed when the step asks for one.
    async fn armed_session(&mut self, step: &Step, label: &str) -> Result<&mut Session, Stop> {
        let session = self.session(step, label).await?;
        if step.sentinel {
            session.arm_sentinel();
        }
        Ok(session)
    }

    /// `no_wait: true`: the request goes out and its answer is not awaited;
    /// the step's answer is the id it went out with.
    async fn send_unawaited(&mut self, step: &Step, label: &str, call: Call) -> Result<Sent, Stop> {
        let session = self.armed_session(step, label).await?;
        let id = session
            .send_request(&call.method, call.params, call.rpc_id, step.meta)
            .await;
        Ok(id.map(|id| Bound::from(json!({ "id": id, "request": call.request }))))
    }

    /// A request awaited for the step's timeout.
    async fn send_awaited(
        &mut self,
        step: &Step,
        label: &str,
        call: Call,
        timeout: Duration,
    ) -> Result<Sent, Stop> {
        let session = self.armed_session(step, label).await?;
        let answer = session
            .request_with(
                &call.method,
                call.params,
                call.rpc_id,
                Some(timeout),
                step.meta,
            )
            .await;
        Ok(answer.map(|a| Bound::from(with_request(a, call.request))))
    }

    /// `bounded: true`: a request cancelled once it outlasts the call
    /// budget, its item then not exercised; one that outlasted it earlier
    /// in the run is not sent again. Either way the answer carries only the
    /// request.
    async fn send_bounded(&mut self, step: &Step, label: &str, call: Call) -> Result<Sent, Stop> {
        let cfg = self.cfg;
        let Call {
            method,
            params,
            request,
            ..
        } = call;
        let party = self.party;
        let session = self.armed_session(step, label).await?;
        let outcome = call_bounded(cfg, party, session, &method, params.as_ref(), step.meta).await;
        Ok(self.bounded_answer(outcome, &method, params.as_ref(), request))
    }

    /// A bounded request's answer: the request alone (under `request`) when
    /// it was not answered within the budget or not sent, its item then not
    /// exercised.
    pub(super) fn bounded_answer(
        &mut self,
        outcome: Bounded,
        method: &str,
        params: Option<&Value>,
        request: Value,
    ) -> Sent {
        match outcome {
            Bounded::Answered(answer) => return Ok(Bound::from(with_request(answer, request))),
            Bounded::Failed(e) => return Err(e),
            Bounded::Outlasted(ticket) => self.record_outlasted(ticket, method, params),
            Bounded::NotSent { found_by } => {
                let why = not_sent_again(method, params, self.cfg.call_budget, &found_by);
                self.unexercised = Some(why);
            }
        }
        Ok(Bound::from(json!({ "request": request })))
    }

    /// A bounded request outlasted the call budget: it is not sent again in
    /// this run, and its item is not exercised.
    pub(super) fn record_outlasted(
        &mut self,
        ticket: Ticket,
        method: &str,
        params: Option<&Value>,
    ) {
        ticket.outlasted(&format!("{} ({})", self.s.id, self.cfg.era.version));
        self.unexercised = Some(not_exercised(method, params, self.cfg.call_budget));
    }

    /// What the scenario reads of a step's answer, with what the step's
    /// pattern looks at: a long list can be cut down to it.
    fn answer_keep(&self, step: &Step) -> Option<ReadTree> {
        let read = step
            .id
            .as_ref()
            .map(|_| self.answer_read(step).unwrap_or_default());
        match (&step.expect, read) {
            (None, read) => read,
            (Some(pattern), read) => {
                let mut keep = pattern.read_tree();
                keep.merge(read.unwrap_or_default());
                Some(keep)
            }
        }
    }

    /// A `paginate:` step: the complete walk an earlier shared scenario made
    /// on this server when there is one, else a walk page by page.
    async fn walk(
        &mut self,
        step: &Step,
        label: &str,
        written: &RequestStep<'_>,
        field: &str,
        call: Call,
        timeout: Duration,
    ) -> Result<Sent, Stop> {
        let known_items = self.known_items(&call.method, field);
        let keep = self.answer_keep(step);
        // A step with a pattern matches the answer its own server gave.
        let shared_walk = match (&keep, &step.expect) {
            (Some(read), None) => {
                self.shared_walk(step, written, &call.method, call.params.as_ref(), read)
            }
            _ => None,
        };
        // A walk that goes to the store is kept whole but for its pages.
        let stored_read = WalkCache::stored_read();
        let cache = self.cfg.walks.as_deref();
        let session = self.armed_session(step, label).await?;
        if let (Some(cache), Some(request_key)) = (cache, &shared_walk) {
            if let Some(hit) = earlier_walk(session, cache, request_key, &call.method) {
                return Ok(Ok(hit));
            }
        }
        let walk = PageWalk {
            field,
            max_pages: written.max_pages,
            known_items,
            budget: WALK_BUDGET.max(timeout),
            timeout,
            meta: step.meta,
            keep: if shared_walk.is_some() {
                Some(&stored_read)
            } else {
                keep.as_ref()
            },
        };
        let walked = match session.paginate(&call.method, call.params, walk).await {
            Ok(walked) => walked,
            Err(e) => return Ok(Err(e)),
        };
        let store = shared_walk.zip(cache);
        self.walk_answer(step, label, walked, call.request, keep, store)
    }

    /// The answer of a walk that ended: none when it was cut short (the
    /// scenario is not exercised, whatever the partial list would say; a
    /// failure found before stands), a finding beside it when the server
    /// broke the walk, and the list passed on to the shared walks when it
    /// may be (`store`: its key and the store).
    fn walk_answer(
        &mut self,
        step: &Step,
        label: &str,
        walked: Walked,
        request: Value,
        keep: Option<ReadTree>,
        store: Option<(String, &WalkCache)>,
    ) -> Result<Sent, Stop> {
        if let Some(unfinished) = walked.unfinished {
            self.skipped = Some(unfinished.to_string());
            return Err(Stop);
        }
        if let Some(broken) = &walked.broken {
            // The evidence: the walk as it went (each item as far as read),
            // before the answer is cut down to what the scenario reads.
            let outcome = Outcome::for_level(self.level_for(Some(step), None));
            let shown = with_request(walked.answer.clone(), request.clone());
            let f = Finding::new(outcome, Some(label.to_string()), broken.to_string())
                .at(self.s, &step.place)
                .with_answer(&shown);
            self.record(f)?;
        }
        let answer = match (&keep, store) {
            (Some(read), Some((request_key, cache)))
                if walked.broken.is_none() && walked.answer.get("result").is_some() =>
            {
                let whole = Bound::from(with_request(walked.answer, request));
                if cache.put(&request_key, &whole) {
                    return Ok(Ok(whole));
                }
                // Not kept (the store's budget for filtered lists is spent):
                // this scenario holds only what it reads, like any other walk.
                return Ok(Ok(Bound::from(prune(whole.into_json(), read))));
            }
            // A mismatch shows what the server sent: the walk cut each item
            // down to what the pattern looks at, the rest stays as it came.
            (Some(_), _) if step.expect.is_some() => walked.answer,
            // An error answer is small, and comes whole like an error page
            // (`PageRead`): what it was is what a setup step's refusal
            // names (`Execution::setup_refusal`).
            (Some(_), _) if walked.answer.get("result").is_none() => walked.answer,
            (Some(read), _) => prune(walked.answer, read),
            (None, _) => walked.answer,
        };
        Ok(Ok(Bound::from(with_request(answer, request))))
    }

    /// The key under which this walk may come from (and go to) the run's
    /// shared walks (see `run::walks`): a scenario on a warm server, or one
    /// that so far only listed on a server started the usual way; its
    /// main session, the first walk of this request in the scenario, no
    /// page cap or pattern of its own, and the raw `pages` not read (the
    /// store keeps the joined list only).
    fn shared_walk(
        &mut self,
        step: &Step,
        written: &RequestStep<'_>,
        method: &str,
        params: Option<&Value>,
        read: &ReadTree,
    ) -> Option<String> {
        let on_warm_main = (self.shared() || self.pristine)
            && self.cfg.walks.is_some()
            && step.session.as_deref().is_none_or(|s| s == super::MAIN);
        let reads_pages = read.field_read("pages").is_some();

        if !on_warm_main || written.max_pages.is_some() || step.sentinel || reads_pages {
            return None;
        }
        // A scenario that walks this request twice compares two answers of
        // its own server: both walks go to that server.
        if self.s.walks_request_again(step) {
            return None;
        }
        let request = WalkCache::request_key(method, params, step.meta);
        // A second walk of the same request in one scenario compares two
        // answers of the server: it goes to the server.
        self.walked.insert(request.clone()).then_some(request)
    }

    /// How many items `method` walks at most, as the probe's listing of the
    /// server says: a `*/list` or `*/search` of tools, prompts or resources
    /// returns no more than the server lists.
    fn known_items(&self, method: &str, field: &str) -> Option<usize> {
        let feature = method.split('/').next()?;
        if feature != field || !(method.ends_with("/list") || method.ends_with("/search")) {
            return None;
        }
        Some(
            self.cfg
                .probe
                .as_ref()?
                .json()
                .get(field)?
                .as_array()?
                .len(),
        )
    }

    /// An `http:` step's request with its body and header values interpolated.
    fn http_request(&mut self, label: &str, http: &HttpStep<'_>) -> Result<RawRequest, Stop> {
        let body = match (http.body, http.text) {
            (Some(b), _) => self.interpolated(label, b)?.to_string(),
            (None, Some(t)) => self.interpolated_text(label, t)?,
            (None, None) => String::new(),
        };
        let mut overrides = Vec::new();
        for (name, value) in http.headers {
            let name = self.interpolated_text(label, name)?;
            let value = match value {
                Some(v) => Some(self.interpolated_text(label, v)?),
                None => None,
            };
            overrides.push((name, value));
        }
        let method = reqwest::Method::from_bytes(http.method.as_bytes()).map_err(|e| {
            self.error = Some(format!("{label}: bad HTTP method {:?}: {e}", http.method));
            Stop
        })?;
        Ok(RawRequest {
            method,
            body,
            headers: overrides,
            read_ms: http.read_ms,
        })
    }

    /// A step that got no answer: a finding at the step's level, and a stop
    /// even below MUST, since there is nothing left to check. An exchange
    /// the harness could not complete (a redirect it does not follow) says
    /// nothing of conformance: the scenario ends with an error.
    pub(super) fn wire_failure(&mut self, step: &Step, label: &str, e: SessionError) -> Stop {
        if matches!(&e, SessionError::Transport(t) if t.is_incomplete_exchange()) {
            self.error = Some(format!("{label}: {e}"));
            return Stop;
        }
        let _ = self.step_finding(step, label, e.to_string(), &step.place);
        Stop
    }

    /// A JSON value with `${…}` interpolated; one that cannot be filled in
    /// makes the scenario an error.
    fn interpolated(&mut self, label: &str, value: &ValueTemplate) -> Result<Value, Stop> {
        value.render(&self.bindings).map_err(|e| {
            self.error = Some(format!("{label}: {e}"));
            Stop
        })
    }

    pub(super) fn interpolated_params(
        &mut self,
        label: &str,
        value: &Option<ValueTemplate>,
    ) -> Result<Option<Value>, Stop> {
        value
            .as_ref()
            .map(|v| self.interpolated(label, v))
            .transpose()
    }

    /// A method name (or other text) with `${…}` interpolated.
    pub(super) fn interpolated_text(
        &mut self,
        label: &str,
        text: &Template,
    ) -> Result<String, Stop> {
        text.render_text(&self.bindings).map_err(|e| {
            self.error = Some(format!("{label}: {e}"));
            Stop
        })
    }
}

/// The complete walk of `request_key` an earlier shared scenario made on
/// this server, unless the server said its list changed since (the store
/// is then emptied). Shared, not copied: it is the answer this walk would
/// give, request included, and each expression converts only the part it
/// reads.
fn earlier_walk(
    session: &Session,
    cache: &WalkCache,
    request_key: &str,
    method: &str,
) -> Option<Bound> {
    if session
        .notification_log
        .iter()
        .any(crate::run::walks::says_list_changed)
    {
        cache.clear();
        return None;
    }
    let hit = cache.get(request_key)?;
    session.transcript.note(
        &session.name,
        format!("{method}: the complete walk an earlier shared scenario made on this server (not walked again)"),
    );
    Some(hit)
}

/// What came of a `bounded: true` request.
pub(super) enum Bounded {
    Answered(Value),
    /// No answer within the call budget; the call was cancelled.
    Outlasted(Ticket),
    /// Not sent: it outlasted the budget earlier in the run, in the
    /// scenario `found_by` names.
    NotSent {
        found_by: String,
    },
    Failed(SessionError),
}

/// A bounded request on `session`, sent unless the run knows it to outlast
/// the call budget (see [`claim_bounded`]), and cancelled once it does.
async fn call_bounded(
    cfg: &RunConfig,
    party: Party,
    session: &mut Session,
    method: &str,
    params: Option<&Value>,
    meta: bool,
) -> Bounded {
    let ticket = match claim_bounded(cfg, party, session, method, params).await {
        Claim::Send(ticket) => ticket,
        Claim::Slow(found_by) => return Bounded::NotSent { found_by },
    };
    let answer = session
        .request_within(method, params.cloned(), meta, cfg.call_budget)
        .await;
    match answer {
        Ok(Some(answer)) => {
            ticket.answered();
            Bounded::Answered(answer)
        }
        Ok(None) => Bounded::Outlasted(ticket),
        Err(e) => Bounded::Failed(e),
    }
}

/// Whether a bounded request goes out: not when it outlasted the call
/// budget earlier in the run, and not before an identical call of another
/// scenario under way has ended (noted in the session's transcript).
pub(super) async fn claim_bounded(
    cfg: &RunConfig,
    party: Party,
    // `&mut`: a shared borrow of a session is not `Send` across the wait.
    session: &mut Session,
    method: &str,
    params: Option<&Value>,
) -> Claim {
    let key = SlowCalls::key(method, params);
    if cfg.slow_calls.would_wait(&key, party) {
        session.transcript.note(
            &session.name,
            format!("{method}: waiting for the same call of another scenario, under way, to answer or outlast the call budget"),
        );
    }
    let claim = cfg
        .slow_calls
        .claim(key, party, claim_patience(cfg.call_budget))
        .await;
    if let Claim::Slow(first) = &claim {
        session.transcript.note(
            &session.name,
            format!("{method}: not sent; it outlasted the call budget in {first}"),
        );
    }
    claim
}

/// How long a bounded request waits for an identical call under way: its
/// budget counts from when it was sent, or from when the answer before it
/// in its step came (which may be later), and its scenario settles it when
/// that answer's turn comes; a waiter that gave up a moment early would
/// send a call of its own. Twice the budget, and a second.
fn claim_patience(budget: Duration) -> Duration {
    budget * 2 + Duration::from_secs(1)
}

/// Why a bounded request's item was not exercised: what was asked (a
/// tool call names its tool) and the budget it outlasted.
fn not_exercised(method: &str, params: Option<&Value>, budget: Duration) -> String {
    let what = asked(method, params);
    let secs = budget.as_secs_f64();
    format!("{what} not exercised: did not answer within {secs} s (--call-budget-ms); the call was cancelled")
}

/// Why a bounded request that outlasted the budget earlier in the run was
/// not sent again.
fn not_sent_again(method: &str, params: Option<&Value>, budget: Duration, first: &str) -> String {
    let what = asked(method, params);
    let secs = budget.as_secs_f64();
    format!("{what} not exercised: it did not answer within {secs} s (--call-budget-ms) in {first} earlier in this run, so it was not called again")
}

/// What a request asked for, as a finding names it: a tool call by its tool.
fn asked(method: &str, params: Option<&Value>) -> String {
    match params.and_then(|p| p.get("name")).and_then(Value::as_str) {
        Some(name) if method == "tools/call" => format!("tool {name}"),
        _ => method.to_string(),
    }
}

/// The request as a finding shows it.
pub(super) fn jsonrpc_request_view(method: &str, params: Option<&Value>) -> Value {
    let mut v = json!({"method": method});
    if let Some(p) = params {
        v["params"] = p.clone();
    }
    v
}

/// The answer with the request that got it under `request`.
pub(super) fn with_request(mut answer: Value, request: Value) -> Value {
    if let Some(map) = answer.as_object_mut() {
        map.insert("request".to_string(), request);
    }
    answer
}
