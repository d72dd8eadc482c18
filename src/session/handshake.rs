//! The era's handshake: `initialize` and `notifications/initialized`, or
//! `server/discover`, and the refusals that show a server is 2026-07-28 only.

use std::time::Duration;

use serde_json::{json, Value};

use super::{era, Era, Session, SessionError};

impl Session {
    /// Speaks `era` from the next message on, on the same connection (a
    /// client retrying with a version the server named as supported).
    pub fn switch_era(&mut self, era: Era) {
        self.conn.switch_era(&era);
        self.era = era;
    }

    /// Performs the era's handshake and remembers the server's answer.
    pub async fn handshake(&mut self) -> Result<Value, SessionError> {
        self.handshake_within(None).await
    }

    /// The handshake, its answer awaited for `wait` instead of the request
    /// timeout: a stdio server that was just started is given time to start
    /// (a Python or Node server on a busy machine takes seconds), which is
    /// not the answer time a conformance rule is about.
    pub async fn handshake_within(
        &mut self,
        wait: Option<Duration>,
    ) -> Result<Value, SessionError> {
        let wait = wait.filter(|_| self.conn.is_stream());
        let answer = if self.era.is_stateless() {
            let r = self.request("server/discover", None, None, wait).await?;
            if let Some(refusal) = modern_refusal("server/discover", &r) {
                return Err(refusal);
            }
            let result = handshake_result(&r)?;
            normalise_discover(&result)
        } else {
            let params = json!({
                "protocolVersion": self.era.version,
                "capabilities": era::client_capabilities(&self.era),
                "clientInfo": era::client_info(),
            });
            let r = self.request("initialize", Some(params), None, wait).await?;
            // A server that speaks only 2026-07-28 refuses initialize with
            // UnsupportedProtocolVersion naming the versions to retry with.
            let unsupported = r.pointer("/error/code").and_then(Value::as_i64) == Some(-32022);
            if let Some(refusal) = modern_refusal("initialize", &r).filter(|_| unsupported) {
                return Err(refusal);
            }
            let result = handshake_result(&r)?;
            let agreed = result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or(&self.era.version)
                .to_string();
            self.finish_handshake(&agreed).await?;
            result
        };
        self.server = answer.clone();
        Ok(answer)
    }

    /// The end of a stateful handshake once `initialize` settled on
    /// `agreed`: later requests carry that version, the server hears
    /// `notifications/initialized`, and over Streamable HTTP the stream of
    /// server messages is opened.
    async fn finish_handshake(&mut self, agreed: &str) -> Result<(), SessionError> {
        self.conn.handshake_done(agreed);
        self.notify("notifications/initialized", None).await?;
        self.conn
            .open_get_stream(self.timeout.min(Duration::from_secs(1)))
            .await;
        Ok(())
    }

    /// Brings a session opened without the handshake to where the
    /// handshake would have left it, so that its server may serve other
    /// scenarios: its own `initialize` must have settled on the session's
    /// era, and `notifications/initialized` is sent if it was not. False
    /// when that initialize got no result naming the era (the server is not
    /// one a scenario with the handshake could meet). A session whose
    /// handshake was done (it knows the server's answer) and the stateless
    /// era have no lifecycle left to complete.
    pub async fn complete_lifecycle(&mut self) -> bool {
        if self.era.is_stateless() || !self.server.is_null() {
            return true;
        }
        let Some(result) = self.own_initialize.clone() else {
            return false;
        };
        let agreed = result.get("protocolVersion").and_then(Value::as_str);
        if agreed != Some(self.era.version.as_str()) {
            return false;
        }
        if !self.initialized_sent {
            self.transcript.note(
                &self.name,
                "the scenario is over: notifications/initialized completes its handshake, so that the server can serve the next scenario".to_string(),
            );
            let version = self.era.version.clone();
            if self.finish_handshake(&version).await.is_err() {
                return false;
            }
        }
        if self.server.is_null() {
            self.server = result;
        }
        true
    }
}

/// The 2026-07-28 errors that identify a modern server ("a recognized modern
/// JSON-RPC error", MCP 2026-07-28, Basic, Versioning, Backward
/// Compatibility), by code.
const MODERN_ERRORS: &[(i64, &str)] = &[
    (-32020, "HeaderMismatch"),
    (-32021, "MissingRequiredClientCapability"),
    (-32022, "UnsupportedProtocolVersion"),
];

/// A `server/discover` error answer that only a modern server gives.
pub(super) fn modern_refusal(request: &'static str, response: &Value) -> Option<SessionError> {
    let error = response.get("error")?;
    let code = error.get("code").and_then(Value::as_i64)?;
    let (_, name) = MODERN_ERRORS.iter().find(|(c, _)| *c == code)?;
    let supported = error
        .pointer("/data/supported")
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    Some(SessionError::ModernRefusal {
        request,
        code,
        name,
        supported,
        error: error.to_string(),
    })
}

fn handshake_result(response: &Value) -> Result<Value, SessionError> {
    match (response.get("result"), response.get("error")) {
        (Some(result), _) if result.is_object() => Ok(result.clone()),
        (_, Some(error)) => Err(SessionError::HandshakeRefused(error.to_string())),
        _ => Err(SessionError::Handshake(format!(
            "the answer has no result object: {response}"
        ))),
    }
}

/// Presents a `server/discover` answer with an initialize result's
/// `serverInfo` (lifted from `_meta`), so `requires` expressions work in
/// every era. Nothing the server did not send is added: a check of the
/// answer (`base/handshake`) reads what the server said.
pub(super) fn normalise_discover(result: &Value) -> Value {
    let mut out = result.clone();
    if let Some(map) = out.as_object_mut() {
        if let Some(info) = result.pointer("/_meta/io.modelcontextprotocol~1serverInfo") {
            map.entry("serverInfo").or_insert_with(|| info.clone());
        }
    }
    out
}
