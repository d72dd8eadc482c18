//! mcp-conform's own client driver (`mcp-conform client-driver`): the
//! harness's session acting as an MCP client under `mcp-conform client`,
//! following the driver convention (docs/client.md). With `--client-fault`
//! it breaks one client rule on purpose, which is how every client rule is
//! shown failing.

use std::time::Duration;

use serde_json::{json, Value};

use crate::run::target::Target;
use crate::session::client_fault::ClientFault;
use crate::session::transcript::Transcript;
use crate::session::{Era, Session, SessionError};
use crate::transport::{HttpSpec, StdioSpec};

use super::runner::{ENV_CONTEXT, ENV_SCENARIO, ENV_SERVER_COMMAND};

/// The most pages one listing follows.
const MAX_PAGES: usize = 50;
/// The error code of TOOL_DESCRIPTION_REQUIRED (progressive disclosure).
const TOOL_DESCRIPTION_REQUIRED: i64 = -32010;

/// Why the driver could not do its work.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error("{ENV_CONTEXT} is not JSON: {0}")]
    Context(String),
    #[error("no server: pass its URL as the last argument (HTTP) or set {ENV_SERVER_COMMAND} to a JSON array (stdio)")]
    NoServer,
    #[error("{ENV_SERVER_COMMAND} must be a JSON array of strings: {0}")]
    ServerCommand(String),
    #[error("cannot connect: {0}")]
    Connect(String),
    #[error("{0}")]
    Session(#[from] SessionError),
    #[error("the server speaks none of this client's versions; it offers {0:?}")]
    NoCommonVersion(Vec<String>),
}

/// What the driver was asked, read from its arguments and environment.
#[derive(Debug, Clone)]
pub struct Job {
    pub scenario: String,
    pub context: Value,
    pub url: Option<String>,
    pub server_command: Option<Vec<String>>,
}

impl Job {
    /// Reads the convention: the URL as last argument, the scenario and
    /// context from the environment.
    pub fn from_env(url: Option<String>) -> Result<Job, DriverError> {
        let scenario = std::env::var(ENV_SCENARIO).unwrap_or_default();
        let context = match std::env::var(ENV_CONTEXT) {
            Ok(text) if !text.trim().is_empty() => {
                serde_json::from_str(&text).map_err(|e| DriverError::Context(e.to_string()))?
            }
            _ => json!({}),
        };
        let server_command = match std::env::var(ENV_SERVER_COMMAND) {
            Ok(text) => Some(
                serde_json::from_str::<Vec<String>>(&text)
                    .map_err(|e| DriverError::ServerCommand(e.to_string()))?,
            ),
            Err(_) => None,
        };
        Ok(Job {
            scenario,
            context,
            url,
            server_command,
        })
    }

    /// The actions to perform: the context's, or those the official
    /// suite's scenario names stand for.
    pub fn actions(&self) -> Vec<Value> {
        if let Some(list) = self.context.get("actions").and_then(Value::as_array) {
            return list.clone();
        }
        match self.scenario.as_str() {
            "tools_call" => vec![
                json!({"op": "list_tools"}),
                json!({"op": "call_tool", "name": "add_numbers", "arguments": {"a": 5, "b": 3}}),
            ],
            _ => vec![json!({"op": "list_tools"})],
        }
    }

    fn target(&self) -> Result<Target, DriverError> {
        if let Some(url) = &self.url {
            return Ok(Target::Http {
                spec: HttpSpec::new(url.clone()),
                process: None,
                command: None,
            });
        }
        let argv = self.server_command.as_ref().ok_or(DriverError::NoServer)?;
        let (program, args) = argv.split_first().ok_or(DriverError::NoServer)?;
        Ok(Target::Stdio(StdioSpec::new(
            program.clone(),
            args.to_vec(),
        )))
    }
}

/// Connects, performs every action, closes. Returns the failed actions'
/// descriptions (empty when all went through).
pub async fn drive(
    job: &Job,
    version: Option<&str>,
    client_fault: Option<ClientFault>,
) -> Result<Vec<String>, DriverError> {
    let version = version
        .or_else(|| job.context.get("protocolVersion").and_then(Value::as_str))
        .unwrap_or(crate::protocol::NEWEST_STATEFUL);
    let era = Era::new(version);
    let conn = job
        .target()?
        .connect(&era)
        .await
        .map_err(|e| DriverError::Connect(e.to_string()))?;
    let timeout = Duration::from_secs(10);
    let mut session = Session::new("client-driver", conn, era, timeout, Transcript::default())
        .with_client_fault(client_fault);
    handshake(&mut session, timeout).await?;
    let mut failed = Vec::new();
    for action in job.actions() {
        let allowed = action.get("may_fail") == Some(&Value::Bool(true));
        match perform(&mut session, &action).await {
            // The scenario expects the server to refuse this one.
            Err(why) if allowed => eprintln!("client-driver: {action}: refused as allowed: {why}"),
            Err(why) => failed.push(format!("{action}: {why}")),
            Ok(()) => {}
        }
    }
    session.close().await;
    Ok(failed)
}

/// The handshake; refused with UnsupportedProtocolVersion, once more with
/// the newest version the server named that this client speaks ("The
/// client SHOULD select a mutually supported version from the supported
/// list and retry the request", MCP 2026-07-28, Versioning).
async fn handshake(session: &mut Session, timeout: Duration) -> Result<(), DriverError> {
    let supported = match session.handshake_within(Some(timeout)).await {
        Ok(_) => return Ok(()),
        Err(SessionError::ModernRefusal { supported, .. }) => supported,
        Err(e) => return Err(e.into()),
    };
    let known = crate::protocol::KNOWN_VERSIONS;
    let Some(version) = supported
        .iter()
        .filter(|v| known.contains(&v.as_str()))
        .max()
    else {
        return Err(DriverError::NoCommonVersion(supported));
    };
    session.switch_era(Era::new(version));
    session.handshake_within(Some(timeout)).await?;
    Ok(())
}

async fn perform(s: &mut Session, action: &Value) -> Result<(), String> {
    let params = action.get("params").cloned();
    match action.get("op").and_then(Value::as_str).unwrap_or("") {
        "list_tools" => {
            let params = without_undeclared(s, params);
            walk(s, "tools/list", params).await
        }
        // A server that does not declare search is listed instead.
        "search_tools" if !declared(s, &["tools", "search"]) => walk(s, "tools/list", None).await,
        "search_tools" => walk(s, "tools/search", params).await,
        "call_tool" => call_tool(s, action).await,
        "read_resource" => read_resource(s, action).await,
        "await_list_changed" => {
            let ms = action
                .get("timeout_ms")
                .and_then(Value::as_u64)
                .unwrap_or(5000);
            s.wait_notification(
                "notifications/tools/list_changed",
                Some(Duration::from_millis(ms)),
            )
            .await
            .map_err(|e| e.to_string())?;
            walk(s, "tools/list", params).await
        }
        "ping" if s.era.is_stateless() => Ok(()),
        "ping" => answered(s, "ping", None).await,
        other => Err(format!("unknown op {other:?}")),
    }
}

/// Whether the server's handshake answer declares `capabilities.<path>`
/// (present, and neither false nor null). The `ignore-capabilities` client
/// fault says yes to everything.
fn declared(s: &Session, path: &[&str]) -> bool {
    if s.client_fault() == Some(ClientFault::IgnoreCapabilities) {
        return true;
    }
    let found = path
        .iter()
        .try_fold(&s.server["capabilities"], |v, key| v.get(key));
    !matches!(found, None | Some(Value::Null) | Some(Value::Bool(false)))
}

/// tools/list params without what the server did not declare: `query`
/// needs `tools.filtering` (SEP-1821), `filter` needs `filtering` (SEP-1300).
fn without_undeclared(s: &Session, params: Option<Value>) -> Option<Value> {
    let mut params = params?;
    if let Some(obj) = params.as_object_mut() {
        if !declared(s, &["tools", "filtering"]) {
            obj.remove("query");
        }
        if !declared(s, &["filtering"]) {
            obj.remove("filter");
        }
    }
    Some(params)
}

/// resources/read. The `repeat-bare-read` client fault reads once more,
/// unchanged, when the server answers MISSING_TOOL_SELECTION.
async fn read_resource(s: &mut Session, action: &Value) -> Result<(), String> {
    let params = Some(json!({ "uri": action.get("uri").cloned().unwrap_or(Value::Null) }));
    let first = answered(s, "resources/read", params.clone()).await;
    let refused = first
        .as_ref()
        .is_err_and(|e| e.contains("MISSING_TOOL_SELECTION"));
    if refused && s.client_fault() == Some(ClientFault::RepeatBareRead) {
        return answered(s, "resources/read", params).await;
    }
    first
}

/// Sends a request; an error answer is a failure.
async fn answered(s: &mut Session, method: &str, params: Option<Value>) -> Result<(), String> {
    let answer = s
        .request(method, params, None, None)
        .await
        .map_err(|e| e.to_string())?;
    match answer.get("error") {
        Some(e) => Err(format!("{method} answered {e}")),
        None => Ok(()),
    }
}

/// Lists every page, sending the same params with each cursor.
async fn walk(s: &mut Session, method: &str, params: Option<Value>) -> Result<(), String> {
    let base = params.unwrap_or_else(|| json!({}));
    let mut cursor: Option<Value> = None;
    for _ in 0..MAX_PAGES {
        let mut p = base.clone();
        if let (Some(c), Some(obj)) = (&cursor, p.as_object_mut()) {
            obj.insert("cursor".into(), c.clone());
        }
        let answer = s
            .request(method, Some(p), None, None)
            .await
            .map_err(|e| e.to_string())?;
        if let Some(e) = answer.get("error") {
            return Err(format!("{method} answered {e}"));
        }
        cursor = answer.pointer("/result/nextCursor").cloned();
        if cursor.is_none() {
            return Ok(());
        }
    }
    Err(format!("{method} still had pages after {MAX_PAGES}"))
}

/// tools/call; refused with TOOL_DESCRIPTION_REQUIRED, reads the named
/// description and calls once more. With `cancel_after_ms`, a call still
/// unanswered after that long is cancelled the way the session cancels any
/// request past its budget (`Session::request_within`).
async fn call_tool(s: &mut Session, action: &Value) -> Result<(), String> {
    let params = json!({
        "name": action.get("name").cloned().unwrap_or(Value::Null),
        "arguments": action.get("arguments").cloned().unwrap_or_else(|| json!({})),
    });
    if let Some(ms) = action.get("cancel_after_ms").and_then(Value::as_u64) {
        return call_then_cancel(s, params, Duration::from_millis(ms)).await;
    }
    let first = s
        .request("tools/call", Some(params.clone()), None, None)
        .await
        .map_err(|e| e.to_string())?;
    let code = first.pointer("/error/code").and_then(Value::as_i64);
    if code != Some(TOOL_DESCRIPTION_REQUIRED) {
        return match first.get("error") {
            Some(e) => Err(format!("tools/call answered {e}")),
            None => Ok(()),
        };
    }
    let uri = first
        .pointer("/error/data/resource_uri")
        .cloned()
        .ok_or("TOOL_DESCRIPTION_REQUIRED without data.resource_uri")?;
    answered(s, "resources/read", Some(json!({ "uri": uri }))).await?;
    answered(s, "tools/call", Some(params)).await
}

/// `call_tool` with `cancel_after_ms`: an answer within the time is taken
/// as it is (there was nothing left to cancel).
async fn call_then_cancel(s: &mut Session, params: Value, after: Duration) -> Result<(), String> {
    let answer = s
        .request_within("tools/call", Some(params), true, after)
        .await
        .map_err(|e| e.to_string())?;
    match answer {
        None => Ok(()),
        Some(a) => {
            eprintln!(
                "client-driver: tools/call answered within {} ms; nothing to cancel",
                after.as_millis()
            );
            match a.get("error") {
                Some(e) => Err(format!("tools/call answered {e}")),
                None => Ok(()),
            }
        }
    }
}
