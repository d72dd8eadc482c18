//! Requests that outlasted the call budget once in a run (a tool that works
//! for longer than `--call-budget-ms`, such as a long-running demonstration).
//! Asked again by a later scenario, such a request is not sent: its item is
//! not exercised, as it was the first time, and the run does not wait out
//! the budget again. On server-everything, its long-running tool, called by
//! three scenarios in each of two eras, was half of the run's wall time.
//!
//! The first call of a request is the one that finds out: a scenario that
//! asks for it while another scenario's identical call is under way waits
//! for that call's outcome (at most the budget) instead of starting its own
//! wait beside it, and then skips it or sends its own. Once a call answered
//! within the budget, later ones go out at once, side by side. A scenario
//! never waits for a call of its own, nor for one whose scenario waits,
//! directly or along a chain of waits, for a call it holds: it then sends
//! its call beside the other.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

/// The bounded requests of a run, by [`SlowCalls::key`], as far as the run
/// knows them.
#[derive(Debug, Default)]
pub struct SlowCalls {
    state: Mutex<State>,
    parties: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    known: HashMap<String, Known>,
    /// The request each waiting party waits for.
    waiting: HashMap<Party, String>,
}

/// Who asks: one scenario's run ([`SlowCalls::party`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Party(u64);

#[derive(Debug)]
enum Known {
    /// The first call, of `holder`, is under way; its ticket's end wakes
    /// the receivers.
    Pending {
        holder: Party,
        settled: watch::Receiver<()>,
    },
    /// A call answered within the budget.
    Answered,
    /// A call outlasted the budget in this scenario (id and era).
    Slow(String),
}

/// What a scenario about to send a bounded request is told.
#[derive(Debug)]
pub enum Claim {
    /// Send it, and settle the ticket with what came of it.
    Send(Ticket),
    /// Do not: it outlasted the budget in the scenario named (id and era).
    Slow(String),
}

/// The leave to send a bounded request. The first call of a request holds
/// the run's only pending one: the scenarios asking for it meanwhile wait
/// until the ticket is settled or dropped (a call that ended in an error
/// tells them nothing, so they then send their own).
#[derive(Debug)]
pub struct Ticket {
    calls: Arc<SlowCalls>,
    key: String,
    /// Held by the first call only; dropping it wakes the waiters.
    first: Option<watch::Sender<()>>,
}

impl SlowCalls {
    /// What a request is known by: a tool call by its tool (its slowness is
    /// the tool's work, whatever the arguments), anything else by its
    /// method and params.
    pub fn key(method: &str, params: Option<&Value>) -> String {
        let tool = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        match tool {
            Some(name) if method == "tools/call" => format!("tools/call {name}"),
            _ => format!(
                "{method} {}",
                params.map_or_else(String::new, Value::to_string)
            ),
        }
    }

    /// A new party to claim calls for.
    pub fn party(&self) -> Party {
        Party(self.parties.fetch_add(1, Ordering::Relaxed))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The scenario in which this request outlasted the budget, if one did.
    #[cfg(test)]
    fn found_by(&self, key: &str) -> Option<String> {
        match self.state().known.get(key) {
            Some(Known::Slow(first)) => Some(first.clone()),
            _ => None,
        }
    }

    /// Whether `party` would wait for a call of another party that is
    /// under way.
    pub fn would_wait(&self, key: &str, party: Party) -> bool {
        let state = self.state();
        matches!(state.known.get(key), Some(Known::Pending { holder, .. }) if !state.leads_back(*holder, party))
    }

    /// Whether `party` may send a bounded request now. While an identical
    /// call of another party is under way, waits for it to be settled, at
    /// most `patience` (longer than the call can take before it is
    /// cancelled: a longer wait means its scenario is held up elsewhere;
    /// the request then goes out without waiting for anything more).
    pub async fn claim(self: &Arc<Self>, key: String, party: Party, patience: Duration) -> Claim {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let mut settled = match self.decide(&key, party) {
                Ok(claim) => return claim,
                Err(under_way) => under_way,
            };
            // Ends when the first call's ticket is dropped (no value is ever sent).
            let waited = tokio::time::timeout_at(deadline, settled.changed()).await;
            self.state().waiting.remove(&party);
            if waited.is_err() {
                return Claim::Send(self.ticket(key, None));
            }
        }
    }

    /// The claim on `key`, or (the party then counted as waiting for it)
    /// what tells when the call under way is settled.
    fn decide(self: &Arc<Self>, key: &str, party: Party) -> Result<Claim, watch::Receiver<()>> {
        let mut state = self.state();
        match state.known.get(key) {
            Some(Known::Slow(first)) => Ok(Claim::Slow(first.clone())),
            Some(Known::Pending { holder, .. }) if state.leads_back(*holder, party) => {
                Ok(Claim::Send(self.ticket(key.into(), None)))
            }
            Some(Known::Pending { settled, .. }) => {
                let settled = settled.clone();
                state.waiting.insert(party, key.to_string());
                Err(settled)
            }
            Some(Known::Answered) => Ok(Claim::Send(self.ticket(key.into(), None))),
            None => {
                let (first, settled) = watch::channel(());
                let pending = Known::Pending {
                    holder: party,
                    settled,
                };
                state.known.insert(key.to_string(), pending);
                Ok(Claim::Send(self.ticket(key.into(), Some(first))))
            }
        }
    }

    fn ticket(self: &Arc<Self>, key: String, first: Option<watch::Sender<()>>) -> Ticket {
        Ticket {
            calls: Arc::clone(self),
            key,
            first,
        }
    }
}

impl State {
    /// Whether `holder` is `party`, or waits (through the holders of the
    /// calls it waits for) for a call `party` holds: waiting for it would
    /// close a circle of waits.
    fn leads_back(&self, holder: Party, party: Party) -> bool {
        let mut at = holder;
        // Each party waits for one call at most: a chain longer than the
        // parties that wait is a circle not through `party`.
        for _ in 0..=self.waiting.len() {
            if at == party {
                return true;
            }
            let next = self
                .waiting
                .get(&at)
                .and_then(|key| match self.known.get(key) {
                    Some(Known::Pending { holder, .. }) => Some(*holder),
                    _ => None,
                });
            match next {
                Some(next) => at = next,
                None => return false,
            }
        }
        false
    }
}

impl Ticket {
    /// Whether this is the run's first call of its request, which other
    /// scenarios may be waiting for.
    pub fn is_first(&self) -> bool {
        self.first.is_some()
    }

    /// The call answered within the budget: later ones go out at once.
    pub fn answered(mut self) {
        if self.first.is_some() {
            let key = self.key.clone();
            self.calls.state().known.insert(key, Known::Answered);
            self.first = None;
        }
    }

    /// The call outlasted the budget in `scenario`: later ones are not sent.
    /// The first scenario to find it out is the one named.
    pub fn outlasted(mut self, scenario: &str) {
        let mut state = self.calls.state();
        if !matches!(state.known.get(&self.key), Some(Known::Slow(_))) {
            let slow = Known::Slow(scenario.to_string());
            state.known.insert(self.key.clone(), slow);
        }
        drop(state);
        self.first = None;
    }
}

impl Drop for Ticket {
    /// A first call that was neither answered nor outlasted (its session
    /// failed, its scenario stopped) leaves the request unknown: the next
    /// scenario to ask sends it.
    fn drop(&mut self) {
        if self.first.take().is_some() {
            let mut state = self.calls.state();
            if matches!(state.known.get(&self.key), Some(Known::Pending { .. })) {
                state.known.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PATIENCE: Duration = Duration::from_secs(5);

    /// A claim of `k` by a new party, waiting in a task of its own.
    fn claim_in_task(slow: &Arc<SlowCalls>) -> tokio::task::JoinHandle<Claim> {
        let slow = Arc::clone(slow);
        tokio::spawn(async move { slow.claim("k".into(), slow.party(), PATIENCE).await })
    }

    /// A first call of `k` under way, and a second party's claim of it
    /// waiting in a task of its own.
    async fn first_and_waiter() -> (Arc<SlowCalls>, Ticket, tokio::task::JoinHandle<Claim>) {
        let slow = Arc::new(SlowCalls::default());
        let first = ticket(slow.claim("k".into(), slow.party(), PATIENCE).await);
        let waiting = claim_in_task(&slow);
        tokio::task::yield_now().await;
        (slow, first, waiting)
    }

    fn ticket(claim: Claim) -> Ticket {
        match claim {
            Claim::Send(t) => t,
            Claim::Slow(first) => panic!("told it is slow (found by {first})"),
        }
    }

    #[test]
    fn a_tool_is_known_by_its_name_whatever_its_arguments() {
        let call = |args| json!({"name": "sleepy", "arguments": args});
        let key = SlowCalls::key("tools/call", Some(&call(json!({"s": 1}))));
        assert_eq!(
            key,
            SlowCalls::key("tools/call", Some(&call(json!({"s": 2}))))
        );
        assert_ne!(
            key,
            SlowCalls::key("tools/call", Some(&json!({"name": "quick"})))
        );
        assert_ne!(
            SlowCalls::key("resources/read", Some(&json!({"uri": "a"}))),
            SlowCalls::key("resources/read", Some(&json!({"uri": "b"})))
        );
    }

    #[tokio::test]
    async fn a_call_that_outlasted_the_budget_is_not_sent_again_and_the_first_finder_is_named() {
        let slow = Arc::new(SlowCalls::default());
        let first = ticket(slow.claim("k".into(), slow.party(), PATIENCE).await);
        first.outlasted("core/tools-call (2025-06-18)");
        assert_eq!(
            slow.found_by("k").as_deref(),
            Some("core/tools-call (2025-06-18)")
        );
        match slow.claim("k".into(), slow.party(), PATIENCE).await {
            Claim::Slow(found) => assert_eq!(found, "core/tools-call (2025-06-18)"),
            Claim::Send(_) => panic!("a known slow call was let out again"),
        }
        // One that was let out beside it and outlasted too names the first.
        slow.ticket("k".into(), None)
            .outlasted("core/tool-structured-text (2025-06-18)");
        assert_eq!(
            slow.found_by("k").as_deref(),
            Some("core/tools-call (2025-06-18)")
        );
    }

    #[tokio::test]
    async fn a_second_caller_waits_for_the_first_call_and_learns_it_was_slow() {
        let slow = Arc::new(SlowCalls::default());
        let first = ticket(slow.claim("k".into(), slow.party(), PATIENCE).await);
        let second = claim_in_task(&slow);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            !second.is_finished(),
            "the second caller went out beside the first"
        );
        first.outlasted("a (2025-06-18)");
        match second.await.expect("the waiting task ended") {
            Claim::Slow(found) => assert_eq!(found, "a (2025-06-18)"),
            Claim::Send(_) => panic!("the second caller sent a call found slow"),
        }
    }

    #[tokio::test]
    async fn once_a_call_answered_the_waiters_and_later_callers_go_out_together() {
        let (slow, first, waiting) = first_and_waiter().await;
        first.answered();
        let second = ticket(waiting.await.expect("the waiting task ended"));
        // Neither the second nor a third holds the others up.
        let third = ticket(slow.claim("k".into(), slow.party(), Duration::ZERO).await);
        assert!(!second.is_first() && !third.is_first());
    }

    #[tokio::test]
    async fn a_first_call_that_ended_without_an_outcome_lets_the_next_caller_send_its_own() {
        let (slow, first, waiting) = first_and_waiter().await;
        drop(first);
        let second = ticket(waiting.await.expect("the waiting task ended"));
        assert!(
            second.is_first(),
            "the next caller's call is the request's first one now"
        );
        assert_eq!(slow.found_by("k"), None);
    }

    #[tokio::test]
    async fn a_party_never_waits_for_its_own_call_nor_for_one_that_waits_for_it() {
        let slow = Arc::new(SlowCalls::default());
        let (a, b) = (slow.party(), slow.party());
        let a_first = ticket(slow.claim("x".into(), a, PATIENCE).await);
        let b_first = ticket(slow.claim("y".into(), b, PATIENCE).await);
        // Its own call under way: the second goes out beside it.
        let own = ticket(slow.claim("x".into(), a, PATIENCE).await);
        assert!(a_first.is_first() && !own.is_first());
        // b waits for a's x; a, asking for b's y, would close the circle.
        assert!(slow.would_wait("x", b));
        let b_waits = tokio::spawn({
            let slow = Arc::clone(&slow);
            async move { slow.claim("x".into(), b, PATIENCE).await }
        });
        while !slow.state().waiting.contains_key(&b) {
            tokio::task::yield_now().await;
        }
        assert!(!slow.would_wait("y", a));
        let beside = ticket(slow.claim("y".into(), a, PATIENCE).await);
        assert!(!beside.is_first(), "a went out beside b's call");
        a_first.outlasted("a (2025-06-18)");
        assert!(matches!(
            b_waits.await.expect("b's wait ended"),
            Claim::Slow(_)
        ));
        assert!(!slow.state().waiting.contains_key(&b), "b no longer waits");
        b_first.answered();
    }

    #[tokio::test]
    async fn a_waiter_goes_out_after_its_patience_if_the_first_call_is_never_settled() {
        let slow = Arc::new(SlowCalls::default());
        let _first = ticket(slow.claim("k".into(), slow.party(), PATIENCE).await);
        let started = tokio::time::Instant::now();
        let second = ticket(
            slow.claim("k".into(), slow.party(), Duration::from_millis(100))
                .await,
        );
        assert!(started.elapsed() >= Duration::from_millis(100));
        assert!(!second.is_first());
    }
}
