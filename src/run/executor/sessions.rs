//! The sessions of one scenario: the main one and those steps name,
//! opened on first use (warm from the pool when the scenario is shared),
//! and what they saw on the wire bound for CEL.

use std::sync::Arc;

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
        if let Some(warm) = self.lease_warm(name, handshake).await {
            let earlier = if self.shared() { "shared" } else { "reused" };
            self.transcript.note(
                name,
                format!(
                    "a warm server of an earlier {earlier} scenario (its handshake is not repeated)"
                ),
            );
            self.on_warm_server |= name == MAIN;
            self.sessions.insert(name.to_string(), warm);
            return Ok(());
        }
        let main_without = name == MAIN && !self.s.handshake;
        let spare = self.spare.take_if(|spare| !handshake && spare.name == name);
        let refused = if spare.is_none() && (main_without || !handshake) {
            self.refused_discover(name).await
        } else {
            None
        };
        let mut session = match spare.or(refused) {
            Some(open) => open,
            None => self.start_server(name).await?,
        };
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

    /// The connection of a legacy server that refused the probe's
    /// `server/discover`, if this era still holds it, for the session
    /// `name`, opened without the handshake: its first message is the
    /// fallback `initialize` a dual-era client sends on it.
    async fn refused_discover(&mut self, name: &str) -> Option<Session> {
        let pool = self.cfg.refused_discover.as_ref()?;
        // While the stateless probe is still under way, its connection may
        // yet come (`fall_back`): worth a wait, as a donor's server is.
        let session = pool.idle_or_donated().await?;
        self.transcript.note(
            name,
            "the connection of the probe whose server/discover this legacy server refused with an error: as a dual-era client does, it goes on with initialize (MCP 2026-07-28, Transports, stdio, Backward Compatibility)".to_string(),
        );
        Some(self.adopt(name, session))
    }

    /// A new connection (over stdio, a server started) for the session `name`.
    async fn start_server(&mut self, name: &str) -> Result<Session, String> {
        let conn = self
            .cfg
            .target
            .connect(&self.cfg.era)
            .await
            .map_err(|e| e.to_string())?;
        Ok(Session::new(
            name,
            conn,
            self.cfg.era.clone(),
            self.cfg.timeout,
            self.transcript.clone(),
        )
        .with_client_fault(self.cfg.client_fault))
    }

    /// Starts the server the next `handshake: false` step of session `name`
    /// will take. One that cannot start is left to that step to report.
    async fn start_spare(&mut self, name: &str) {
        if let Ok(spare) = self.start_server(name).await {
            self.spare = Some(spare);
        }
    }

    /// Stops a server started ahead that no step took.
    pub(in crate::run) async fn close_spare(&mut self) {
        if let Some(mut unused) = self.spare.take() {
            unused.close_in_background(self.cfg.shutdown_grace).await;
        }
    }

    /// A warm session for `name` when the scenario's isolation lets it
    /// have one: its main session from its pool, and a shared scenario's
    /// other sessions from the same pool when one is idle, else from the
    /// era's pool of second sessions. `None` with the leave to open a
    /// session counted as the pool's (the caller opens it and it is given
    /// back at the end), or with nothing leased.
    async fn lease_warm(&mut self, name: &str, handshake: bool) -> Option<Session> {
        let pool = self.pooled.clone()?;
        let leads = name == MAIN && self.cfg.leads_bounded(self.s);
        let lease = if leads && self.cfg.lead_takes_first_server() {
            pool.lease_first().await
        } else if leads {
            // Where a session costs next to nothing, the lead's first
            // bounded call, which starts the run's longest wait, goes out
            // on a session of its own rather than after the wait for a
            // busy one (over Streamable HTTP, 40 ms on server-everything).
            pool.lease_at_once().await
        } else if name == MAIN {
            pool.lease().await
        } else if self.shared() && handshake {
            if let Some(idle) = pool.try_idle().await {
                self.leased.insert(name.to_string(), pool);
                return Some(self.adopt(name, idle));
            }
            let Some(seconds) = self.cfg.second_pool.clone() else {
                self.leased.insert(name.to_string(), pool.clone());
                return self.adopt_lease(name, pool.lease_now().await);
            };
            // Waiting for the pool of second sessions cannot deadlock as
            // long as a scenario waits only for its first one there: whoever
            // holds one already has its main session and waits for nothing.
            let first = !self.leased.values().any(|p| Arc::ptr_eq(p, &seconds));
            let lease = if first {
                seconds.lease().await
            } else {
                seconds.lease_now().await
            };
            self.leased.insert(name.to_string(), seconds);
            return self.adopt_lease(name, lease);
        } else {
            return None;
        };
        self.leased.insert(name.to_string(), pool);
        self.adopt_lease(name, lease)
    }

    fn adopt_lease(&mut self, name: &str, lease: Lease) -> Option<Session> {
        match lease {
            Lease::Warm(warm) => Some(self.adopt(name, *warm)),
            Lease::Open => None,
        }
    }

    fn adopt(&mut self, name: &str, mut warm: Session) -> Session {
        warm.adopt(name, self.transcript.clone());
        if name == MAIN && self.s.reuse_group.is_some() && warm.left_filtered_listing() {
            // A reuse group's scenarios read what the session holds (the
            // descriptions a read authorizes), and this warm server's
            // session last listed tools filtered: a server may keep that as
            // session state (pd-auth-filter-scoped), which an unfiltered
            // listing resets. Taken from the store, that listing would
            // never reach the server.
            self.pristine = false;
        }
        warm
    }

    /// The step's session, opened on first use; a session that cannot be
    /// opened is a finding at the step's level, and the step stops.
    pub(super) async fn session(&mut self, step: &Step, label: &str) -> Result<&mut Session, Stop> {
        let name = step.session.clone().unwrap_or_else(|| MAIN.to_string());
        if !step.handshake {
            // Each `handshake: false` step starts its session anew, so that
            // it always meets a server that was never initialized (a
            // property's next case included).
            self.hand_on_opened(&name).await;
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
            // One server ahead at most: a case's other sessions wait their turn.
            if !step.handshake && self.spare_wanted && self.spare.is_none() {
                self.start_spare(&name).await;
            }
        }
        self.sessions.get_mut(&name).ok_or(Stop)
    }

    /// Binds `touched_tools`: the tools the main session's earlier
    /// scenarios named (none on a server started for this one), which a
    /// `confirm_fresh` scenario leaves out of its picks.
    pub(super) fn bind_touched_tools(&mut self) {
        let Some(main) = self.sessions.get(MAIN) else {
            return;
        };
        let touched: Vec<Value> = main.touched_tools().iter().map(|t| json!(t)).collect();
        self.bindings.insert("touched_tools", Value::Array(touched));
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
