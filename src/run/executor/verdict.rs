//! The end of a scenario: its `cleanup` steps, the verdict drawn from its
//! findings, and the evidence kept beside it (how each server ended, its
//! stderr, the transcript). A warm session that stayed healthy goes back
//! to its pool.

use std::time::Duration;

use super::{Execution, Stop, MAIN};
use crate::run::outcome::{Finding, Outcome, ScenarioResult};
use crate::run::pool::SessionPool;
use crate::scenario::model::Level;
use crate::session::Session;

impl Execution<'_> {
    /// Runs the `cleanup:` steps whatever happened before. What they find
    /// goes to the transcript as notes; the verdict stays as it was.
    pub(super) async fn cleanup(&mut self) {
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

    pub(super) async fn finish(mut self, _stopped: Result<(), Stop>) -> ScenarioResult {
        let (outcome, message) = self.verdict();
        let mut exits = Vec::new();
        let mut stderr = String::new();
        let several = self.sessions.len() > 1;
        // Evidence matters only for a scenario that did not pass: then the
        // server's exit is waited for; otherwise it ends in the background.
        let wait_for_exit = matches!(outcome, Outcome::Fail | Outcome::Warn | Outcome::Error);
        let grace = self.cfg.shutdown_grace;
        // A server's stderr is shown with a verdict only when it may explain
        // it: the server ended on its own, or wrote to stderr during the step
        // that went wrong (not, say, a start-up complaint of a warm server).
        let mut stderr_relevant = self.stderr_in_failure == Some(true) || self.error.is_some();
        for session in self.sessions.values_mut() {
            stderr_relevant |= session.has_exited();
        }
        // A confirm_fresh scenario vouches for what it leaves only by passing.
        let serves_on = !self.s.confirm_fresh || outcome == Outcome::Pass;
        for (name, pool) in std::mem::take(&mut self.leased) {
            let handed_on = self.give_back(&pool, &name, serves_on).await;
            if let Some(main) = handed_on {
                if stderr_relevant {
                    append_tail(&mut stderr, several.then_some(&name), &main.stderr_tail());
                }
                if wait_for_exit {
                    exits.push(format!(
                        "{name}: server still running, handed on to the next scenario"
                    ));
                }
                if name == MAIN && self.cfg.leads_bounded(self.s) {
                    pool.put_or_pass_on(main).await
                } else {
                    pool.put(main).await
                }
            }
        }
        self.hand_on_own_server(!wait_for_exit).await;
        if !wait_for_exit {
            let names: Vec<String> = self.sessions.keys().cloned().collect();
            for name in names {
                self.hand_on_opened(&name).await;
            }
        }
        self.close_spare().await;
        for (name, session) in self.sessions.iter_mut() {
            let how = if wait_for_exit {
                session
                    .close_within(grace.max(Duration::from_millis(300)))
                    .await
            } else {
                session.close_in_background(grace).await
            };
            exits.push(format!("{name}: server {how}"));
            if stderr_relevant {
                append_tail(&mut stderr, several.then_some(name), &session.stderr_tail());
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

    /// Takes the leased session `name` out of the scenario when it can
    /// serve another one, for the caller to hand on; otherwise leaves it to
    /// be closed with the scenario's own and frees its place in the pool.
    /// A server still healthy is handed on, whatever the verdict: every
    /// request it was sent got its answer or was cancelled (a late answer
    /// is ignored wherever it lands), its stream is still in step (a wire
    /// violation is this scenario's finding, not the next one's), and it is
    /// still running (no exit to keep as evidence).
    async fn give_back(
        &mut self,
        pool: &SessionPool,
        name: &str,
        serves_on: bool,
    ) -> Option<Session> {
        let healthy = if serves_on {
            self.take_if_healthy(name).await
        } else {
            None
        };
        if healthy.is_none() {
            pool.release().await;
        }
        healthy
    }

    /// Takes the session `name` out of the scenario if it can serve
    /// another: the scenario was evaluated, every request it was sent got
    /// its answer or was cancelled, its stream is in step, it is still
    /// running, and after raw bytes or a notification it still answers a
    /// liveness request (what came before that answer is set aside).
    async fn take_if_healthy(&mut self, name: &str) -> Option<Session> {
        let timeout = self.cfg.timeout;
        // A scenario that ends its server hands on none, however healthy.
        let fit = self.error.is_none() && !self.s.ends_server;
        let session = self.sessions.get_mut(name)?;
        // An answer to a notification (a server should write none) or to
        // garbage may come after the scenario ended; read before another
        // scenario's request, it was taken for that request's answer.
        let check = self.s.may_break_connection() || session.notified();
        let mut healthy = fit && session.reusable() && !session.has_exited();
        if healthy && check {
            healthy = session.checkup(timeout).await;
        }
        // A session opened without the handshake serves on only once its
        // own initialize is followed by what the handshake sends.
        if healthy {
            healthy = session.complete_lifecycle().await;
        }
        if healthy {
            self.sessions.remove(name)
        } else {
            None
        }
    }

    /// A scenario on a server of its own hands that server, still healthy,
    /// to the first pool that waited for it and has room (a scenario whose
    /// verdict needs the server's exit as evidence keeps it); every pool
    /// that waited hears that it is done either way.
    async fn hand_on_own_server(&mut self, may_hand_on: bool) {
        let mut pools = std::mem::take(&mut self.donor_pools);
        if pools.is_empty() {
            return;
        }
        SessionPool::first_server_to_front(&mut pools).await;
        let mut server = if may_hand_on {
            self.take_if_healthy(MAIN).await
        } else {
            None
        };
        for pool in pools {
            server = pool.donor_done(server).await;
        }
        if let Some(kept) = server {
            self.sessions.insert(MAIN.to_string(), kept);
        }
    }

    /// Hands the server of `name`, a session other than the main one that
    /// the scenario opened itself, to the era's pools that take such
    /// servers (`RunConfig::outlets`) when it is still healthy; it stays
    /// with the scenario (to be closed) when it is not, or no pool takes it.
    pub(super) async fn hand_on_opened(&mut self, name: &str) {
        if name == MAIN || self.leased.contains_key(name) {
            return;
        }
        let outlets = self.cfg.outlets(self.s, name);
        // Completing the lifecycle of a server no pool would take only
        // puts a misleading notification in the transcript.
        let mut room = false;
        for pool in &outlets {
            room = room || pool.has_room().await;
        }
        if !room {
            return;
        }
        let Some(server) = self.take_if_healthy(name).await else {
            return;
        };
        match SessionPool::offer_to(&outlets, server).await {
            Some(kept) => {
                self.sessions.insert(name.to_string(), kept);
            }
            None => {
                self.transcript.note(
                    name,
                    "its server is healthy: handed on to the era's other scenarios".to_string(),
                );
            }
        }
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

/// Adds a server's stderr tail to the evidence, under its session's name
/// when the scenario had several.
fn append_tail(stderr: &mut String, session: Option<&str>, tail: &str) {
    if tail.is_empty() {
        return;
    }
    if let Some(name) = session {
        stderr.push_str(&format!("--- session {name} ---\n"));
    }
    stderr.push_str(tail);
}
