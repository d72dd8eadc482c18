//! Before the scenarios: find the era the server speaks, read its handshake
//! answer, and learn its tool names (to know whether golden scenarios apply).
//! The session of each accepted era stays open: it only read, so it becomes
//! the first warm server of that era's shared scenarios instead of a Python
//! or Node server being started once more.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::target::Target;
use crate::session::client_fault::ClientFault;
use crate::session::era::{self, Era};
use crate::session::{Session, SessionError, Transcript};

/// What the probe learned.
#[derive(Debug, Clone)]
pub struct Probe {
    pub era: Era,
    pub server: Value,
    pub tool_names: Vec<String>,
    /// What applicability conditions read without starting a server for
    /// each scenario: `probe.tools` (tool names), `probe.resources`
    /// (resource URIs), `probe.prompts` (prompt names). Also in the report.
    pub facts: Value,
    /// What `--call-tools read-only` leaves uncalled: the listed tools not
    /// marked `readOnlyHint: true`, and those marked read-only but also
    /// `destructiveHint: true`.
    pub hints: ToolHints,
}

/// How many listed tools lack the read-only hint, or carry the destructive one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolHints {
    pub not_read_only: usize,
    pub destructive: usize,
}

impl ToolHints {
    fn of(tools: &[Value]) -> Self {
        let flag = |t: &Value, k: &str| {
            t.pointer(&format!("/annotations/{k}")) == Some(&Value::Bool(true))
        };
        let mut h = Self::default();
        for t in tools {
            if !flag(t, "readOnlyHint") {
                h.not_read_only += 1;
            } else if flag(t, "destructiveHint") {
                h.destructive += 1;
            }
        }
        h
    }
}

/// An accepted era with the session that probed it, still open.
pub struct ProbedEra {
    pub probe: Probe,
    pub session: Session,
    /// How long connecting and the handshake took: what starting one more
    /// server for this era costs.
    pub start_cost: Duration,
}

impl ProbedEra {
    /// Ends the probe's session when nothing will reuse it.
    pub async fn close(self) -> Probe {
        close_probe_session(self.session).await;
        self.probe
    }
}

/// Stops the server of a probe's session that nothing goes on with.
pub async fn close_probe_session(mut session: Session) {
    session
        .close_in_background(Duration::from_millis(100))
        .await;
}

/// Why the target could not be probed (exit code 3).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}{}", if .stderr.is_empty() { String::new() } else { format!("\n--- server stderr (tail) ---\n{}", .stderr) })]
pub struct ProbeError {
    pub message: String,
    pub stderr: String,
    /// `server/discover` was refused with a recognised modern error: the
    /// versions the server offered in it (possibly none).
    pub refusal: Option<Vec<String>>,
}

/// Which eras a run tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EraChoice {
    /// Every era the server accepts, each in full.
    All,
    /// The newest era the server accepts (server/discover first, then initialize).
    Auto,
    /// Exactly this version.
    Pinned(String),
}

/// Probes the eras `choice` asks for; the result lists those the server
/// accepts, oldest first, and is never empty. Each comes with its session,
/// still open, its request timeout set to `timeout`, carrying
/// `client_fault` if one is given.
pub async fn probe_eras(
    target: &Target,
    choice: &EraChoice,
    timeout: Duration,
    startup: Duration,
    client_fault: Option<ClientFault>,
) -> Result<Vec<ProbedEra>, ProbeError> {
    let waits = Waits::starting(timeout, startup, client_fault);
    match choice {
        EraChoice::Pinned(v) => Ok(vec![probe_era(target, Era::new(v), waits).await?]),
        EraChoice::Auto => Ok(vec![probe_auto(target, waits).await?]),
        EraChoice::All => probe_all(target, waits).await,
    }
}

/// [`probe_eras`], handing back what is known before the stateless era's
/// probe has ended when that is at least one stateful era (every era only).
pub async fn probe_eras_staged(
    target: &Target,
    choice: &EraChoice,
    timeout: Duration,
    startup: Duration,
    client_fault: Option<ClientFault>,
) -> Result<StagedEras, ProbeError> {
    if !matches!(choice, EraChoice::All) {
        let eras = probe_eras(target, choice, timeout, startup, client_fault).await?;
        return Ok(StagedEras {
            eras,
            pending: None,
            legacy: None,
        });
    }
    probe_all_staged(target, Waits::starting(timeout, startup, client_fault)).await
}

/// How long the probe waits for the handshake and for each request after
/// it, and the client fault its sessions carry (`--client-fault`).
#[derive(Debug, Clone, Copy)]
struct Waits {
    handshake: Duration,
    request: Duration,
    client_fault: Option<ClientFault>,
}

impl Waits {
    /// The probe starts the server: its first answer may take start-up
    /// time; the lists after it are ordinary requests.
    fn starting(timeout: Duration, startup: Duration, client_fault: Option<ClientFault>) -> Self {
        Self {
            handshake: timeout.max(startup),
            request: timeout,
            client_fault,
        }
    }

    fn same(timeout: Duration) -> Self {
        Self {
            handshake: timeout,
            request: timeout,
            client_fault: None,
        }
    }
}

/// How long auto waits for a discover answer before it starts a stateful
/// sibling: most servers answer (or refuse) discover sooner.
const SIBLING_AFTER: Duration = Duration::from_millis(500);

/// The least a discover is waited for after a sibling answered initialize.
const MIN_DISCOVER_GRACE: Duration = Duration::from_millis(500);

/// How a probe of one era is tied to the others of the same command.
enum Link<'a> {
    None,
    /// A stateful probe: tells when its handshake got an answer (or failed),
    /// with how long that took from the start.
    Ready(&'a tokio::sync::watch::Sender<Option<Duration>>),
    /// A stateless probe: its discover is given up once a sibling's start
    /// cost has passed again after the sibling answered (at least
    /// [`MIN_DISCOVER_GRACE`]).
    Cutoff(tokio::sync::watch::Receiver<Option<Duration>>),
}

/// Resolves when a discover waiting since a sibling started may be given
/// up; never, when no sibling gets as far as its handshake's end.
async fn sibling_cutoff(mut started: tokio::sync::watch::Receiver<Option<Duration>>) -> Duration {
    let cost = loop {
        if let Some(cost) = *started.borrow_and_update() {
            break cost;
        }
        if started.changed().await.is_err() {
            return std::future::pending().await;
        }
    };
    let grace = cost.max(MIN_DISCOVER_GRACE);
    tokio::time::sleep(grace).await;
    grace
}

/// Ends a sibling probe's session that nothing uses.
async fn close_unused(probed: Option<Result<ProbedEra, ProbeError>>) {
    if let Some(Ok(p)) = probed {
        p.close().await;
    }
}

/// Each known era at once: a stateful era counts when the server answers
/// `initialize` with that very version (MCP lifecycle: a server that does
/// not support the requested version answers with another one it does).
async fn probe_all(target: &Target, waits: Waits) -> Result<Vec<ProbedEra>, ProbeError> {
    let staged = probe_all_staged(target, waits).await?;
    Ok(staged.finish().await)
}

/// The eras of a run of every era, as far as they are known: the stateful
/// ones probed, and the stateless one's probe when it is still waiting for
/// a discover answer (a server without that era gives none, and is waited
/// for until a stateful sibling's start cost has passed again).
pub struct StagedEras {
    /// The eras accepted so far, their facts naming them as the eras spoken.
    pub eras: Vec<ProbedEra>,
    /// The stateless era's probe, still running: its era may join them.
    pub pending: Option<PendingEra>,
    /// The connection of a legacy server that refused the stateless era's
    /// `server/discover` with an error, still open: a stateful era's
    /// scenarios may have it once it falls back to `initialize`.
    pub legacy: Option<Session>,
}

/// How long the stateful eras, once probed, wait for the stateless probe
/// still under way: a discover answered about when their `initialize` was
/// (the era itself, or a refusal whose connection the run goes on with)
/// is then known before any scenario starts, not after some have started
/// servers it could have spared.
const STATELESS_GRACE: Duration = Duration::from_millis(50);

/// A stateless era's probe that has not ended yet.
pub struct PendingEra(tokio::task::JoinHandle<Result<ProbedEra, (ProbeError, Option<Session>)>>);

/// How a stateless era's probe ended: the era accepted, not spoken (its
/// session closed), or why the probe failed; and the connection of a
/// legacy server that refused `server/discover`, if it was kept.
struct StatelessEnd {
    era: Result<Option<ProbedEra>, ProbeError>,
    legacy: Option<Session>,
}

impl PendingEra {
    /// Whether the probe ends within `grace` (its outcome stays to be read).
    async fn ends_within(&self, grace: Duration) -> bool {
        let until = Instant::now() + grace;
        while !self.0.is_finished() {
            if Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        true
    }

    /// The era, when its probe ends with it accepted, and the connection
    /// of a legacy server that refused it.
    pub async fn accepted(self) -> (Option<ProbedEra>, Option<Session>) {
        let end = self.ended().await;
        (end.era.ok().flatten(), end.legacy)
    }

    async fn ended(self) -> StatelessEnd {
        let probed = match self.0.await {
            Ok(probed) => probed,
            Err(e) => Err((
                ProbeError {
                    message: format!("internal: the stateless era's probe stopped: {e}"),
                    stderr: String::new(),
                    refusal: None,
                },
                None,
            )),
        };
        match probed {
            Ok(p) if speaks_stateless(&p) => StatelessEnd {
                era: Ok(Some(p)),
                legacy: None,
            },
            Ok(p) => {
                p.close().await;
                StatelessEnd {
                    era: Ok(None),
                    legacy: None,
                }
            }
            Err((e, legacy)) => StatelessEnd {
                era: Err(e),
                legacy,
            },
        }
    }
}

impl StagedEras {
    /// Every accepted era, once the stateless probe (if any) has ended.
    pub async fn finish(self) -> Vec<ProbedEra> {
        let mut eras = self.eras;
        let mut legacy = self.legacy;
        if let Some(pending) = self.pending {
            let (era, refused) = pending.accepted().await;
            eras.extend(era);
            legacy = legacy.or(refused);
            mark_spoken(eras.iter_mut().map(|p| &mut p.probe));
        }
        if let Some(unused) = legacy {
            close_probe_session(unused).await;
        }
        eras
    }

    /// Ends every probe's session: the run goes no further.
    pub async fn close(self) {
        for era in self.finish().await {
            era.close().await;
        }
    }
}

/// Each accepted era was asked for on a connection of its own and answered
/// with itself: what scenarios may take as known (`versions.spoken`).
pub fn mark_spoken<'a>(probes: impl Iterator<Item = &'a mut Probe>) {
    let mut probes: Vec<&mut Probe> = probes.collect();
    let spoken: Vec<String> = probes.iter().map(|p| p.era.version.clone()).collect();
    for p in &mut probes {
        if let Some(facts) = p.facts.as_object_mut() {
            facts.insert("eras".into(), serde_json::json!(spoken));
        }
    }
}

/// [`probe_all`], handing back the stateful eras without waiting for the
/// stateless probe when at least one of them is accepted and that probe
/// is still running.
async fn probe_all_staged(target: &Target, waits: Waits) -> Result<StagedEras, ProbeError> {
    // The stateless attempt's discover is given up once a stateful sibling
    // (the same command, started at the same time) has answered initialize
    // and as long again has passed: a server that ignores an unknown method
    // costs that, not a fixed wait, and one slow to start is waited for.
    let (ready, started) = tokio::sync::watch::channel(None);
    let stateless = era::KNOWN_VERSIONS
        .iter()
        .map(|v| Era::new(v))
        .find(Era::is_stateless)
        .map(|era| {
            let target = target.clone();
            let link = Link::Cutoff(started.clone());
            PendingEra(tokio::spawn(async move {
                probe_era_keeping(&target, era, waits, link, true).await
            }))
        });
    let stateful: Vec<&str> = era::KNOWN_VERSIONS
        .iter()
        .copied()
        .filter(|v| !Era::new(v).is_stateless())
        .collect();
    let attempts = stateful
        .iter()
        .map(|v| probe_era_linked(target, Era::new(v), waits, Link::Ready(&ready)));
    let outcomes = futures::future::join_all(attempts).await;
    let mut accepted = Vec::new();
    let mut first_error = None;
    for (version, outcome) in stateful.iter().zip(outcomes) {
        match outcome {
            Ok(p) if p.probe.era.version == *version => accepted.push(p),
            Ok(p) => {
                p.close().await;
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let still_running = match &stateless {
        Some(p) => !p.ends_within(STATELESS_GRACE).await,
        None => false,
    };
    if !accepted.is_empty() && still_running {
        mark_spoken(accepted.iter_mut().map(|p| &mut p.probe));
        return Ok(StagedEras {
            eras: accepted,
            pending: stateless,
            legacy: None,
        });
    }
    let mut legacy = None;
    if let Some(pending) = stateless {
        let end = pending.ended().await;
        legacy = end.legacy;
        match end.era {
            Ok(era) => accepted.extend(era),
            // The stateful attempts tell most about a server that can't start.
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match (accepted.is_empty(), first_error) {
        (false, _) => {
            mark_spoken(accepted.iter_mut().map(|p| &mut p.probe));
            Ok(StagedEras {
                eras: accepted,
                pending: None,
                legacy,
            })
        }
        (true, Some(e)) => {
            if let Some(unused) = legacy {
                close_probe_session(unused).await;
            }
            Err(e)
        }
        (true, None) => Err(ProbeError {
            message: format!(
                "{} accepts none of the protocol versions {}",
                target.display(),
                era::KNOWN_VERSIONS.join(", ")
            ),
            stderr: String::new(),
            refusal: None,
        }),
    }
}

/// A stateless era's probe counts when it probed that era (not another the
/// server chose) and discover lists it.
fn speaks_stateless(p: &ProbedEra) -> bool {
    let version = &p.probe.era.version;
    Era::new(version).is_stateless() && speaks(&p.probe, version)
}

/// A stateless probe counts only when discover lists that version.
fn speaks(p: &Probe, version: &str) -> bool {
    !Era::new(version).is_stateless() || supports_stateless(&p.server)
}

/// Negotiates (`requested = None` means auto) and probes the server; the
/// probe's session is closed.
pub async fn probe(
    target: &Target,
    requested: Option<&str>,
    timeout: Duration,
) -> Result<Probe, ProbeError> {
    let waits = Waits::same(timeout);
    let probed = match requested {
        Some(v) => probe_era(target, Era::new(v), waits).await?,
        None => probe_auto(target, waits).await?,
    };
    Ok(probed.close().await)
}

/// The newest era the server speaks, negotiated as a dual-era client does
/// on the released text (MCP 2026-07-28, Transports, stdio and Streamable
/// HTTP, Backward Compatibility): `server/discover` first; a discover result
/// or a recognised modern error (UnsupportedProtocolVersion and the other
/// 2026-07-28 codes) means a modern server, whose advertised versions are
/// chosen from and never bypassed by falling back to `initialize`; any other
/// error, or silence, means a legacy server, probed with `initialize`.
async fn probe_auto(target: &Target, waits: Waits) -> Result<ProbedEra, ProbeError> {
    let (ready, started) = tokio::sync::watch::channel(None);
    let modern = Era::new(era::V2026_07_28);
    let discover = probe_era_linked(target, modern, waits, Link::Cutoff(started));
    tokio::pin!(discover);
    // A server that has not answered discover soon gets a stateful sibling
    // (the same command, probed with initialize): its answer tells when the
    // command has started, which bounds the discover wait, and it is the
    // legacy probe itself should discover get no answer.
    let (discovered, mut legacy) = match tokio::time::timeout(SIBLING_AFTER, &mut discover).await {
        Ok(d) => (d, None),
        Err(_) => {
            let stateful = Era::new(era::NEWEST_STATEFUL);
            let sibling = probe_era_linked(target, stateful, waits, Link::Ready(&ready));
            let (d, l) = tokio::join!(discover, sibling);
            (d, Some(l))
        }
    };
    let offered = match discovered {
        Ok(p) if supports_stateless(&p.probe.server) => {
            close_unused(legacy).await;
            return Ok(p);
        }
        Ok(p) => {
            let offered = strings(p.probe.server.get("supportedVersions"));
            p.close().await;
            offered
        }
        Err(e) => match e.refusal {
            Some(offered) => offered,
            None => {
                return match legacy.take() {
                    Some(l) => l,
                    None => probe_era(target, Era::new(era::NEWEST_STATEFUL), waits).await,
                }
            }
        },
    };
    close_unused(legacy).await;
    match newest_known(&offered) {
        Some(v) if !Era::new(v).is_stateless() => probe_era(target, Era::new(v), waits).await,
        _ => Err(ProbeError {
            message: format!(
                "{} is a 2026-07-28-era (modern) server that offers {}, and mcp-conform speaks none of them ({}); it does not fall back to initialize with a modern server",
                target.display(),
                if offered.is_empty() { "no protocol version".to_string() } else { format!("only {}", offered.join(", ")) },
                era::KNOWN_VERSIONS.join(", ")
            ),
            stderr: String::new(),
            refusal: None,
        }),
    }
}

/// The strings of a JSON array (anything else: none).
fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// The newest version of `offered` that the harness speaks, other than the
/// modern one already refused or not listed.
fn newest_known(offered: &[String]) -> Option<&'static str> {
    era::KNOWN_VERSIONS
        .iter()
        .rev()
        .find(|v| offered.iter().any(|o| o == *v))
        .copied()
}

fn supports_stateless(server: &Value) -> bool {
    server
        .get("supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|v| v.iter().any(|x| x == era::V2026_07_28))
}

async fn probe_era(target: &Target, era: Era, waits: Waits) -> Result<ProbedEra, ProbeError> {
    probe_era_linked(target, era, waits, Link::None).await
}

async fn probe_era_linked(
    target: &Target,
    era: Era,
    waits: Waits,
    link: Link<'_>,
) -> Result<ProbedEra, ProbeError> {
    probe_era_keeping(target, era, waits, link, false)
        .await
        .map_err(|(e, _)| e)
}

/// [`probe_era_linked`], keeping the connection when `keep_legacy` and a
/// server over stdio answered the stateless era's `server/discover` with
/// an error that is not a 2026-07-28 one: a legacy server, which a
/// dual-era client goes on with on the same connection ("Fall back to the
/// `initialize` handshake", MCP 2026-07-28, Transports, stdio, Backward
/// Compatibility).
async fn probe_era_keeping(
    target: &Target,
    mut era: Era,
    waits: Waits,
    link: Link<'_>,
    keep_legacy: bool,
) -> Result<ProbedEra, (ProbeError, Option<Session>)> {
    let started = Instant::now();
    let conn = target.connect(&era).await.map_err(|e| {
        let e = ProbeError {
            message: e.to_string(),
            stderr: String::new(),
            refusal: None,
        };
        (e, None)
    })?;
    let mut session = Session::new("probe", conn, era.clone(), waits.request, Transcript::new())
        .with_client_fault(waits.client_fault);
    let e = match run_probe(&mut session, &mut era, waits.handshake, started, link).await {
        Ok((probe, start_cost)) => {
            return Ok(ProbedEra {
                probe,
                session,
                start_cost,
            })
        }
        Err(e) => e,
    };
    let legacy = keep_legacy
        && era.is_stateless()
        && target.transport() == "stdio"
        && matches!(e, SessionError::HandshakeRefused(_));
    if legacy {
        let refused = ProbeError {
            message: format!("cannot talk to {}: {e}", target.display()),
            stderr: String::new(),
            refusal: None,
        };
        return Err((refused, Some(session)));
    }
    // How the server ended decides the words, not which pipe broke first.
    let exit = session.server_exit().await;
    // Closing waits for the stderr reader to drain what the server wrote.
    session.close_within(Duration::from_millis(100)).await;
    let stderr = session.stderr_tail();
    let message = match exit {
        Some(how) => format!(
            "`{}` {how} before answering the handshake",
            target.display()
        ),
        None => format!("cannot talk to {}: {e}", target.display()),
    };
    let refusal = match e {
        SessionError::ModernRefusal { supported, .. } => Some(supported),
        _ => None,
    };
    let e = ProbeError {
        message,
        stderr,
        refusal,
    };
    Err((e, None))
}

/// The probe, and how long the server took from `started` (before the
/// connection) to its handshake answer: what starting one costs.
async fn run_probe(
    session: &mut Session,
    era: &mut Era,
    handshake_wait: Duration,
    started: Instant,
    link: Link<'_>,
) -> Result<(Probe, Duration), SessionError> {
    let server = linked_handshake(session, handshake_wait, started, link).await?;
    let start_cost = started.elapsed();
    if !era.is_stateless() {
        let answered = server
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        if era::KNOWN_VERSIONS.contains(&answered) && answered != era.version {
            *era = Era::new(answered);
        }
    }
    let declares = |feature: &str| {
        server
            .pointer(&format!("/capabilities/{feature}"))
            .is_some()
    };
    let tools = if declares("tools") {
        list_items(session, "tools/list", "tools").await
    } else {
        Vec::new()
    };
    let tool_names = keys(&tools, "name");
    let resources = if declares("resources") {
        keys(
            &list_items(session, "resources/list", "resources").await,
            "uri",
        )
    } else {
        Vec::new()
    };
    let prompts = if declares("prompts") {
        keys(
            &list_items(session, "prompts/list", "prompts").await,
            "name",
        )
    } else {
        Vec::new()
    };
    let facts = serde_json::json!({
        "tools": tool_names,
        "resources": resources,
        "prompts": prompts,
    });
    let probe = Probe {
        era: era.clone(),
        server,
        tool_names,
        facts,
        hints: ToolHints::of(&tools),
    };
    Ok((probe, start_cost))
}

/// The handshake, tied to the probes of the other eras by `link`.
async fn linked_handshake(
    session: &mut Session,
    wait: Duration,
    started: Instant,
    link: Link<'_>,
) -> Result<Value, SessionError> {
    match link {
        Link::None => session.handshake_within(Some(wait)).await,
        Link::Ready(ready) => {
            let answer = session.handshake_within(Some(wait)).await;
            let cost = started.elapsed();
            // The first sibling to get this far tells; an error counts too
            // (the command has run as far as it will).
            ready.send_if_modified(|known| known.is_none() && known.replace(cost).is_none());
            answer
        }
        Link::Cutoff(sibling) => tokio::select! {
            answer = session.handshake_within(Some(wait)) => answer,
            grace = sibling_cutoff(sibling) => Err(SessionError::Timeout {
                method: "server/discover".into(),
                ms: started.elapsed().as_millis() as u64,
                hint: format!(
                    " (the same command answered initialize, and {} ms more passed)",
                    grace.as_millis()
                ),
            }),
        },
    }
}

/// The string `key` of each item that has one.
fn keys(items: &[Value], key: &str) -> Vec<String> {
    items
        .iter()
        .filter_map(|i| i.get(key).and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// Every item of a paginated list, to its end whatever its length; stops at
/// the first error, a cursor seen before, or a page that adds no new item
/// (by `name`, else `uri`: a server going in circles).
async fn list_items(session: &mut Session, method: &str, field: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut cursor: Option<Value> = None;
    let mut seen_cursors = std::collections::HashSet::new();
    let mut seen_keys = std::collections::HashSet::new();
    loop {
        let params = cursor.take().map(|c| serde_json::json!({ "cursor": c }));
        let Ok(answer) = session.request(method, params, None, None).await else {
            break;
        };
        let Some(result) = answer.get("result") else {
            break;
        };
        let before = seen_keys.len();
        for item in result
            .get(field)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = item
                .get("name")
                .or_else(|| item.get("uri"))
                .and_then(Value::as_str);
            if key.is_some_and(|k| seen_keys.insert(k.to_string())) {
                items.push(item.clone());
            }
        }
        match result.get("nextCursor") {
            Some(c @ Value::String(text))
                if seen_keys.len() > before && seen_cursors.insert(text.clone()) =>
            {
                cursor = Some(c.clone())
            }
            _ => break,
        }
    }
    items
}

#[cfg(test)]
mod sibling_tests {
    use super::{sibling_cutoff, MIN_DISCOVER_GRACE};
    use std::time::{Duration, Instant};

    #[tokio::test]
    async fn discover_is_cut_a_start_up_time_after_the_sibling_answered() {
        let (ready, started) = tokio::sync::watch::channel(None);
        let cut = tokio::spawn(sibling_cutoff(started));
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!cut.is_finished(), "no sibling answer yet: never cut");
        let answered = Instant::now();
        ready.send_replace(Some(Duration::from_millis(700)));
        assert_eq!(cut.await.ok(), Some(Duration::from_millis(700)));
        assert!(answered.elapsed() >= Duration::from_millis(700));
        // A fast sibling still leaves the least grace.
        let (_ready, started) = tokio::sync::watch::channel(Some(Duration::from_millis(20)));
        assert_eq!(sibling_cutoff(started).await, MIN_DISCOVER_GRACE);
    }

    #[tokio::test]
    async fn a_sibling_that_never_answers_never_cuts() {
        let (ready, started) = tokio::sync::watch::channel(None);
        drop(ready);
        let cut = tokio::time::timeout(Duration::from_millis(800), sibling_cutoff(started)).await;
        assert!(cut.is_err());
    }
}

#[cfg(test)]
mod hint_tests {
    use super::ToolHints;
    use serde_json::json;

    #[test]
    fn hints_count_tools_a_default_run_leaves_uncalled() {
        let tools = [
            json!({"name": "r", "annotations": {"readOnlyHint": true}}),
            json!({"name": "d", "annotations": {"readOnlyHint": true, "destructiveHint": true}}),
            json!({"name": "w", "annotations": {"destructiveHint": false}}),
            json!({"name": "p"}),
        ];
        assert_eq!(
            ToolHints::of(&tools),
            ToolHints {
                not_read_only: 2,
                destructive: 1
            }
        );
    }
}
