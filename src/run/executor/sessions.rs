//! The sessions of one scenario: the main one and those steps name,
//! opened on first use (warm from the pool when the scenario is shared),
//! and what they saw on the wire bound for CEL.

use serde_json::{json, Value};

use super::{Execution, Stop, MAIN};
use crate::expr::Bound;
use crate::run::pool::Lease;
use crate::scenario::model::Step;
use crate::session::{Session, SessionError};

impl Execution<'_> {
    /// Opens the session `name`: a warm one from the pool for a shared
    /// scenario's main session, else a fresh connection and its handshake.
    pub(super) async fn open_session(&mut self, name: &str) -> Result<(), String> {
        self.open_session_with(name, true).await
    }

    /// Opens the session `name`, without the era's handshake when
    /// `handshake` is false (a step that sends its own `initialize`).
    async fn open_session_with(&mut self, name: &str, handshake: bool) -> Result<(), String> {
        let from_pool = name == MAIN || (self.shared() && handshake);
        if let Some(pool) = self.pooled.clone().filter(|_| from_pool) {
            self.leased.insert(name.to_string());
            // A second session never waits for the pool: the scenario holds
            // its main one, and two scenarios each waiting for another's
            // would wait for ever.
            let lease = if name == MAIN {
                pool.lease().await
            } else {
                pool.lease_now().await
            };
            let earlier = if self.shared() { "shared" } else { "reused" };
            if let Lease::Warm(mut warm) = lease {
                warm.adopt(name, self.transcript.clone());
                self.transcript.note(
                    name,
                    format!(
                        "a warm server of an earlier {earlier} scenario (its handshake is not repeated)"
                    ),
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
        )
        .with_client_fault(self.cfg.client_fault);
        let main_without = name == MAIN && !self.s.handshake;
        if main_without || !handshake {
            // The first message on this connection is the step's own.
            let why = if main_without {
                "a fresh connection, no handshake (scenario `handshake: false`)"
            } else {
                "opened without a handshake (step `handshake: false`)"
            };
            self.transcript.note(name, why.to_string());
            session.allow_startup(self.cfg.startup);
            self.sessions.insert(name.to_string(), session);
            return Ok(());
        }
        let handshake = session
            .handshake_within(Some(self.cfg.startup.max(self.cfg.timeout)))
            .await;
        self.sessions.insert(name.to_string(), session);
        handshake
            .map(|_| ())
            .map_err(|e| format!("session '{name}': {}", describe_handshake_error(&e)))
    }

    /// The step's session, opened on first use; a session that cannot be
    /// opened is a finding at the step's level, and the step stops.
    pub(super) async fn session(&mut self, step: &Step, label: &str) -> Result<&mut Session, Stop> {
        let name = step.session.clone().unwrap_or_else(|| MAIN.to_string());
        if !step.handshake {
            // Each `handshake: false` step starts its session anew, so that
            // it always meets a server that was never initialized (a
            // property's next case included).
            if let Some(mut old) = self.sessions.remove(&name) {
                old.close_in_background(self.cfg.shutdown_grace).await;
            }
        }
        if !self.sessions.contains_key(&name) {
            if let Err(e) = self.open_session_with(&name, step.handshake).await {
                // Whatever its level, a step without its session cannot go on.
                let _ = self.step_finding(step, label, e, &step.place);
                return Err(Stop);
            }
        }
        self.sessions.get_mut(&name).ok_or(Stop)
    }

    /// Binds the step's answer to its id, and the wire logs (notifications,
    /// stdout violations) when they grew.
    pub(super) fn bind_step(&mut self, step: &Step, answer: Bound) {
        if let Some(id) = &step.id {
            self.bindings.insert(id.clone(), answer);
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
}

/// A handshake that failed, said the way a person reads it.
fn describe_handshake_error(e: &SessionError) -> String {
    match e {
        SessionError::Closed { exit, .. } => format!("the server {exit} during the handshake"),
        SessionError::Timeout { method, ms, hint } => {
            format!("no answer to {method} within {ms} ms during the handshake{hint}")
        }
        other => other.to_string(),
    }
}
