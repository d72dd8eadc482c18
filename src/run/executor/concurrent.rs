//! A `for_each` request step with `concurrency` above 1: up to that many
//! items' requests in flight at once on the step's session. Each answer
//! is bound and checked in item order, as if the requests had gone out
//! one by one, so a scenario reads the same either way; only the waits
//! overlap (a tool that works until the call budget runs out no longer
//! holds up the calls after it).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::send::{claim_bounded, jsonrpc_request_view, with_request, Bounded};
use super::{Execution, Stop};
use crate::expr::Bound;
use crate::run::slow_calls::{Claim, Ticket};
use crate::scenario::interpolate::{Template, ValueTemplate};
use crate::scenario::model::{ForEach, Step};
use crate::session::{InFlight, SessionError};

/// One item's request, as it went out (or why it did not).
enum Launched {
    /// Sent; its answer is awaited for `wait` (see `land`).
    Sent { request: InFlight, call: ItemCall },
    /// Not sent: it outlasted the call budget earlier in the run, in the
    /// scenario `found_by` names.
    Skipped {
        method: String,
        params: Option<Value>,
        found_by: String,
    },
    /// Sent, and it outlasted its wait before the send even ended.
    Outlasted(ItemCall),
    /// Could not be sent.
    Failed(SessionError),
}

/// An item's request as it went out.
struct ItemCall {
    method: String,
    params: Option<Value>,
    /// How long its answer is waited for (see `land`).
    wait: Duration,
    /// A bounded request's leave to go out, settled by its outcome (its
    /// item is not exercised when it outlasts the wait).
    ticket: Option<Ticket>,
}

/// An item with its request under way.
struct Pending {
    item: Value,
    /// The request as its answer carries it (under `request`).
    view: Value,
    launched: Launched,
}

/// A launch that took this long waited for something (another scenario's
/// call, the session's start) while answers of its items were coming in.
const LONG_LAUNCH: Duration = Duration::from_millis(20);

/// The step's request as written: its method and params.
pub(super) struct Written<'s> {
    pub method: &'s Template,
    pub params: &'s Option<ValueTemplate>,
}

impl Execution<'_> {
    /// The answers to `items`, each checked in item order (see
    /// `take_item_answer`); requests go out `fe.concurrency` at a time.
    pub(super) async fn answers_in_flight(
        &mut self,
        step: &Step,
        label: &str,
        fe: &ForEach,
        written: Written<'_>,
        items: Vec<Value>,
    ) -> Result<Vec<Bound>, Stop> {
        let mut items = items.into_iter();
        let mut pending: VecDeque<Pending> = VecDeque::new();
        let mut answers = Vec::new();
        let mut previous_done = Instant::now();
        loop {
            while pending.len() < fe.concurrency.max(1) {
                let Some(item) = items.next() else { break };
                self.bindings.insert(fe.var.clone(), item.clone());
                let launching = Instant::now();
                match self.launch(step, label, &written).await {
                    Ok((view, launched)) => {
                        // Time spent waiting for another scenario's call is
                        // not taken from the answers in flight here.
                        if launching.elapsed() >= LONG_LAUNCH {
                            previous_done = previous_done.max(Instant::now());
                        }
                        pending.push_back(Pending {
                            item,
                            view,
                            launched,
                        });
                    }
                    Err(stop) => return Err(self.give_up(step, label, pending, stop).await),
                }
            }
            let Some(next) = pending.pop_front() else {
                return Ok(answers);
            };
            self.bindings.insert(fe.var.clone(), next.item.clone());
            let landed = self.land(step, label, next, previous_done).await;
            let taken = match landed {
                Ok((answer, item, done)) => {
                    previous_done = done;
                    self.take_item_answer(step, label, &item, answer)
                }
                Err(stop) => Err(stop),
            };
            match taken {
                Ok(Some(answer)) => answers.push(answer),
                Ok(None) => {}
                Err(stop) => return Err(self.give_up(step, label, pending, stop).await),
            }
        }
    }

    /// Sends the request of the item bound now, unless it is known to
    /// outlast the call budget.
    async fn launch(
        &mut self,
        step: &Step,
        label: &str,
        written: &Written<'_>,
    ) -> Result<(Value, Launched), Stop> {
        let params = self.interpolated_params(label, written.params)?;
        let method = self.interpolated_text(label, written.method)?;
        let view = jsonrpc_request_view(&method, params.as_ref());
        let (cfg, party) = (self.cfg, self.party);
        let budget = step.bounded.then_some(cfg.call_budget);
        let wait = budget.unwrap_or_else(|| self.timeout(Some(step)));
        let session = self.session(step, label).await?;
        let ticket = match budget {
            None => None,
            Some(_) => match claim_bounded(cfg, party, session, &method, params.as_ref()).await {
                Claim::Send(ticket) => Some(ticket),
                Claim::Slow(found_by) => {
                    let skipped = Launched::Skipped {
                        method,
                        params,
                        found_by,
                    };
                    return Ok((view, skipped));
                }
            },
        };
        let started = session
            .start_request(&method, params.clone(), step.meta, wait)
            .await;
        let call = ItemCall {
            method,
            params,
            wait,
            ticket,
        };
        let launched = match started {
            Ok(Some(request)) => Launched::Sent { request, call },
            Ok(None) => Launched::Outlasted(call),
            Err(e) => Launched::Failed(e),
        };
        Ok((view, launched))
    }

    /// The answer to one item's request, as `perform` gives it, with the
    /// item and when its answer came (or the wait for it ended): a request
    /// that outlasted the call budget leaves its item not exercised
    /// (`unexercised`), and one that got no answer stops the scenario.
    ///
    /// Its wait counts from when it was sent, or from when the answer
    /// before it came if that was later: a server that serves one request
    /// at a time only starts on this one then, and it is given the time it
    /// would have had had the requests gone out one by one.
    async fn land(
        &mut self,
        step: &Step,
        label: &str,
        pending: Pending,
        previous_done: Instant,
    ) -> Result<(Bound, Value, Instant), Stop> {
        let Pending {
            item,
            view,
            launched,
        } = pending;
        let (request, call) = match launched {
            Launched::Skipped {
                method,
                params,
                found_by,
            } => {
                let not_sent = Bounded::NotSent { found_by };
                let answer = self.bounded_answer(not_sent, &method, params.as_ref(), view);
                let answer = answer.map_err(|e| self.wire_failure(step, label, e))?;
                return Ok((answer, item, previous_done));
            }
            Launched::Failed(e) => return Err(self.wire_failure(step, label, e)),
            Launched::Outlasted(call) => {
                let answer = self.outlasted(step, label, call, &view)?;
                return Ok((answer, item, Instant::now()));
            }
            Launched::Sent { request, call } => (request, call),
        };
        let deadline = request.sent().max(previous_done) + call.wait;
        let session = self.session(step, label).await?;
        match session.finish_request(&request, deadline).await {
            Ok(Some((answer, at))) => {
                if let Some(ticket) = call.ticket {
                    ticket.answered();
                }
                Ok((Bound::from(with_request(answer, view)), item, at))
            }
            Ok(None) => {
                let cancel = step.bounded.then_some(call.wait);
                session.abandon_request(request, cancel).await;
                let answer = self.outlasted(step, label, call, &view)?;
                Ok((answer, item, Instant::now()))
            }
            Err(e) => {
                session.abandon_request(request, None).await;
                Err(self.wire_failure(step, label, e))
            }
        }
    }

    /// A request unanswered after `waited`: with `bounded: true` its item is
    /// not exercised and the request is not sent again in this run;
    /// otherwise the step timed out.
    fn outlasted(
        &mut self,
        step: &Step,
        label: &str,
        call: ItemCall,
        view: &Value,
    ) -> Result<Bound, Stop> {
        let Some(ticket) = call.ticket.filter(|_| step.bounded) else {
            let timeout = SessionError::Timeout {
                method: call.method,
                ms: call.wait.as_millis() as u64,
                hint: String::new(),
            };
            return Err(self.wire_failure(step, label, timeout));
        };
        self.record_outlasted(ticket, &call.method, call.params.as_ref());
        Ok(Bound::from(json!({ "request": view })))
    }

    /// The scenario stops at an item: the requests still in flight are
    /// given up, their late answers ignored.
    async fn give_up(
        &mut self,
        step: &Step,
        label: &str,
        pending: VecDeque<Pending>,
        stop: Stop,
    ) -> Stop {
        for Pending { launched, .. } in pending {
            if let Launched::Sent { request, .. } = launched {
                if let Ok(session) = self.session(step, label).await {
                    session.abandon_request(request, None).await;
                }
            }
        }
        stop
    }
}
