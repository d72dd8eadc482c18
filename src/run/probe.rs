//! Before the scenarios: find the era the server speaks, read its handshake
//! answer, and learn its tool names (to know whether golden scenarios apply).

use std::time::Duration;

use serde_json::Value;

use super::target::Target;
use crate::session::era::{self, Era};
use crate::session::{Session, SessionError, Transcript};

/// What the probe learned.
#[derive(Debug, Clone)]
pub struct Probe {
    pub era: Era,
    pub server: Value,
    pub tool_names: Vec<String>,
}

/// Why the target could not be probed (exit code 3).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}{}", if .stderr.is_empty() { String::new() } else { format!("\n--- server stderr (tail) ---\n{}", .stderr) })]
pub struct ProbeError {
    pub message: String,
    pub stderr: String,
}

/// Negotiates (`requested = None` means auto) and probes the server.
pub async fn probe(
    target: &Target,
    requested: Option<&str>,
    timeout: Duration,
) -> Result<Probe, ProbeError> {
    match requested {
        Some(v) => probe_era(target, Era::new(v), timeout).await,
        None => {
            let discover_timeout = timeout.min(Duration::from_secs(3));
            match probe_era(target, Era::new(era::V2026_07_28), discover_timeout).await {
                Ok(p) if supports_stateless(&p.server) => Ok(p),
                _ => probe_era(target, Era::new(era::NEWEST_STATEFUL), timeout).await,
            }
        }
    }
}

fn supports_stateless(server: &Value) -> bool {
    server
        .get("supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|v| v.iter().any(|x| x == era::V2026_07_28))
}

async fn probe_era(target: &Target, mut era: Era, timeout: Duration) -> Result<Probe, ProbeError> {
    let conn = target.connect(&era).await.map_err(|e| ProbeError {
        message: e.to_string(),
        stderr: String::new(),
    })?;
    let mut session = Session::new("probe", conn, era.clone(), timeout, Transcript::new());
    let outcome = run_probe(&mut session, &mut era).await;
    let stderr = session.stderr_tail();
    session.close().await;
    outcome.map_err(|e| ProbeError {
        message: format!("cannot talk to {}: {e}", target.display()),
        stderr,
    })
}

async fn run_probe(session: &mut Session, era: &mut Era) -> Result<Probe, SessionError> {
    let server = session.handshake().await?;
    if !era.is_stateless() {
        let answered = server
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        if era::KNOWN_VERSIONS.contains(&answered) && answered != era.version {
            *era = Era::new(answered);
        }
    }
    let tool_names = list_tool_names(session).await;
    Ok(Probe {
        era: era.clone(),
        server,
        tool_names,
    })
}

async fn list_tool_names(session: &mut Session) -> Vec<String> {
    let mut names = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..1000 {
        let params = cursor.take().map(|c| serde_json::json!({ "cursor": c }));
        let Ok(answer) = session.request("tools/list", params, None, None).await else {
            break;
        };
        let Some(result) = answer.get("result") else {
            break;
        };
        for t in result
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(n) = t.get("name").and_then(Value::as_str) {
                names.push(n.to_string());
            }
        }
        match result.get("nextCursor") {
            Some(c @ Value::String(_)) => cursor = Some(c.clone()),
            _ => break,
        }
    }
    names
}
