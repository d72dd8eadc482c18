//! `mcp-conform quality`'s I/O: probe the server, read its catalogs, detect
//! its search surfaces the way the catalog's scenarios do, send every query
//! and collect the ranked answers. Scoring is `crate::quality`'s.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::quality::bm25::Baseline;
use crate::quality::measure::{self, Absent, Answer, QualityReport, SurfaceReport, DEPTH};
use crate::quality::{queries, Feature, Item, Query, Surface};
use crate::run::probe::{probe_eras, EraChoice, ProbeError};
use crate::run::target::Target;
use crate::session::client_fault::ClientFault;
use crate::session::{PageWalk, Session};

/// What to measure and how.
#[derive(Debug, Clone)]
pub struct QualityOptions {
    pub era: EraChoice,
    pub timeout: Duration,
    pub startup: Duration,
    pub seed: u64,
    /// Queries per surface at most (a seeded sample).
    pub max_queries: Option<usize>,
    /// Self-retrieval queries include description sentences.
    pub sentences: bool,
    /// A labelled set (its file name, its queries) instead of self-retrieval.
    pub labelled: Option<(String, Vec<Query>)>,
    /// The client defect the measuring sessions carry (`--client-fault`
    /// on a run with `--quality`).
    pub client_fault: Option<ClientFault>,
}

impl QualityOptions {
    pub fn new(timeout: Duration) -> Self {
        QualityOptions {
            era: EraChoice::Auto,
            timeout,
            startup: timeout,
            seed: 0,
            max_queries: None,
            sentences: true,
            labelled: None,
            client_fault: None,
        }
    }
}

/// The tool the category-search document defines.
const TOOL_SEARCH: &str = "tool_search";

/// Measures every search surface of `target`; a server with none gives a
/// report with no surface (nothing to measure).
pub async fn measure(target: &Target, opts: &QualityOptions) -> Result<QualityReport, ProbeError> {
    let mut probed = probe_eras(
        target,
        &opts.era,
        opts.timeout,
        opts.startup,
        opts.client_fault,
    )
    .await?;
    // The newest era accepted; the others' sessions are not needed.
    let Some(chosen) = probed.pop() else {
        return Err(ProbeError {
            message: format!("{} accepted no protocol version", target.display()),
            stderr: String::new(),
            refusal: None,
        });
    };
    for other in probed {
        other.close().await;
    }
    let era = chosen.probe.era.version.clone();
    let server = chosen.probe.server.clone();
    let mut session = chosen.session;
    let catalogs = Catalogs::read(&mut session, &server, opts.timeout).await;
    let (offered, absent) = surfaces(&server, &catalogs);
    let mut reports = Vec::new();
    for surface in offered {
        reports.push(measure_surface(&mut session, surface, &catalogs, opts).await);
    }
    session
        .close_in_background(Duration::from_millis(100))
        .await;
    Ok(QualityReport {
        format: measure::FORMAT,
        target: target.display(),
        transport: target.transport().to_string(),
        protocol_version: era,
        seed: opts.seed,
        query_set: opts
            .labelled
            .as_ref()
            .map_or_else(|| "self-retrieval".to_string(), |(file, _)| file.clone()),
        depth: DEPTH,
        surfaces: reports,
        absent,
    })
}

/// The items of each catalog the server declares, as listed.
struct Catalogs {
    tools: Vec<Value>,
    prompts: Vec<Value>,
    resources: Vec<Value>,
}

impl Catalogs {
    async fn read(session: &mut Session, server: &Value, timeout: Duration) -> Catalogs {
        let mut list = async |feature: Feature| {
            if server
                .pointer(&format!("/capabilities/{}", feature.plural()))
                .is_none()
            {
                return Vec::new();
            }
            list_all(session, feature, timeout).await
        };
        Catalogs {
            tools: list(Feature::Tools).await,
            prompts: list(Feature::Prompts).await,
            resources: list(Feature::Resources).await,
        }
    }

    fn of(&self, feature: Feature) -> &[Value] {
        match feature {
            Feature::Tools => &self.tools,
            Feature::Prompts => &self.prompts,
            Feature::Resources => &self.resources,
        }
    }

    /// Named items with their descriptions (an item without a name cannot
    /// be an expected answer).
    fn items(&self, feature: Feature) -> Vec<Item> {
        self.of(feature)
            .iter()
            .filter_map(|v| {
                Some(Item {
                    name: v.get("name")?.as_str()?.to_string(),
                    description: v
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                })
            })
            .collect()
    }
}

/// Every item of a paginated `*/list`, bounded in time.
async fn list_all(session: &mut Session, feature: Feature, timeout: Duration) -> Vec<Value> {
    let field = feature.plural();
    let walk = PageWalk {
        field,
        max_pages: None,
        known_items: None,
        budget: timeout.saturating_mul(20),
        timeout,
        meta: true,
        keep: None,
    };
    match session.paginate(&format!("{field}/list"), None, walk).await {
        Ok(w) => w
            .answer
            .pointer(&format!("/result/{field}"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}

/// Which surfaces the server offers, detected as the catalog's scenarios
/// detect them, and why each other one is absent.
fn surfaces(server: &Value, catalogs: &Catalogs) -> (Vec<Surface>, Vec<Absent>) {
    let caps = |path: &str| server.pointer(&format!("/capabilities/{path}"));
    let is_true = |path: &str| caps(path) == Some(&Value::Bool(true));
    let has_tool_search = catalogs
        .tools
        .iter()
        .any(|t| t.get("name").and_then(Value::as_str) == Some(TOOL_SEARCH));
    let mut offered = Vec::new();
    let mut absent = Vec::new();
    for surface in Surface::ALL {
        let reason = match surface {
            Surface::ToolsListQuery => (!is_true("tools/filtering")).then_some(
                "capabilities.tools.filtering is not true: no SEP-1821 query on tools/list",
            ),
            Surface::ToolsSearch => (!is_true("tools/search"))
                .then_some("capabilities.tools.search is not true: no tools/search"),
            Surface::PromptsSearch => (!is_true("prompts/search"))
                .then_some("capabilities.prompts.search is not true: no prompts/search"),
            Surface::ResourcesSearch => (!is_true("resources/search"))
                .then_some("capabilities.resources.search is not true: no resources/search"),
            Surface::CategoryToolSearch => (caps("tools").is_none() || !has_tool_search)
                .then_some("tools/list has no tool named tool_search: no category search"),
        };
        match reason {
            Some(r) => absent.push(Absent {
                surface,
                reason: r.to_string(),
            }),
            None => offered.push(surface),
        }
    }
    (offered, absent)
}

async fn measure_surface(
    session: &mut Session,
    surface: Surface,
    catalogs: &Catalogs,
    opts: &QualityOptions,
) -> SurfaceReport {
    let feature = surface.feature();
    let items = catalogs.items(feature);
    let names: Vec<String> = items.iter().map(|i| i.name.clone()).collect();
    let all = match &opts.labelled {
        Some((_, set)) => set
            .iter()
            .filter(|q| q.feature == feature)
            .cloned()
            .collect(),
        None => queries::self_queries(&items, feature, opts.seed, opts.sentences),
    };
    let chosen = queries::sample(all, opts.max_queries, opts.seed);
    if surface == Surface::CategoryToolSearch {
        authorize_tool_search(session, catalogs, opts.timeout).await;
    }
    let mut answered = Vec::with_capacity(chosen.len());
    for q in chosen {
        let answer = ask(session, surface, &q.text, opts.timeout).await;
        answered.push((q, answer));
    }
    measure::surface_report(surface, &names, &Baseline::new(&items), answered, opts.seed)
}

/// A server with progressive disclosure lists a `tool_descriptions`
/// resource and wants it read before its tools are called (as the
/// category-search scenarios do); harmless elsewhere.
async fn authorize_tool_search(session: &mut Session, catalogs: &Catalogs, timeout: Duration) {
    let uri = catalogs.resources.iter().find_map(|r| {
        let uri = r.get("uri")?.as_str()?;
        let bare = uri.split(['?', '#']).next()?;
        bare.ends_with("tool_descriptions")
            .then(|| bare.to_string())
    });
    if let Some(uri) = uri {
        let params = json!({ "uri": format!("{uri}?tools={TOOL_SEARCH}") });
        let _ = session
            .request("resources/read", Some(params), None, Some(timeout))
            .await;
    }
}

/// One query on one surface: up to [`DEPTH`] names, best first.
async fn ask(session: &mut Session, surface: Surface, query: &str, timeout: Duration) -> Answer {
    let (method, field) = match surface {
        Surface::ToolsListQuery => ("tools/list", "tools"),
        Surface::ToolsSearch => ("tools/search", "tools"),
        Surface::PromptsSearch => ("prompts/search", "prompts"),
        Surface::ResourcesSearch => ("resources/search", "resources"),
        Surface::CategoryToolSearch => return ask_tool_search(session, query, timeout).await,
    };
    let mut names = Vec::new();
    let mut cursor: Option<Value> = None;
    let mut latency_ms = None;
    loop {
        let mut params = json!({ "query": query });
        if let Some(c) = cursor.take() {
            params["cursor"] = c;
        }
        let started = Instant::now();
        let answer = match session
            .request(method, Some(params), None, Some(timeout))
            .await
        {
            Ok(a) => a,
            Err(e) if names.is_empty() => return Answer::Failed(e.to_string()),
            Err(_) => break,
        };
        latency_ms.get_or_insert(started.elapsed().as_secs_f64() * 1000.0);
        let Some(result) = answer.get("result") else {
            if names.is_empty() {
                return Answer::Failed(error_text(&answer));
            }
            break;
        };
        let before = names.len();
        names.extend(item_names(result.get(field)));
        match result.get("nextCursor") {
            Some(c @ Value::String(_)) if names.len() < DEPTH && names.len() > before => {
                cursor = Some(c.clone())
            }
            _ => break,
        }
    }
    names.truncate(DEPTH);
    Answer::Ranked {
        names,
        latency_ms: latency_ms.unwrap_or_default(),
    }
}

/// `tool_search` through `tools/call`, its results read from
/// `structuredContent` or the JSON of its first text content.
async fn ask_tool_search(session: &mut Session, query: &str, timeout: Duration) -> Answer {
    let params = json!({
        "name": TOOL_SEARCH,
        "arguments": { "query": query, "limit": DEPTH },
    });
    let started = Instant::now();
    let answer = match session
        .request("tools/call", Some(params), None, Some(timeout))
        .await
    {
        Ok(a) => a,
        Err(e) => return Answer::Failed(e.to_string()),
    };
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    let Some(result) = answer.get("result") else {
        return Answer::Failed(error_text(&answer));
    };
    if result.get("isError") == Some(&Value::Bool(true)) {
        return Answer::Failed("tool_search answered with isError: true".into());
    }
    let payload = result.get("structuredContent").cloned().or_else(|| {
        result
            .pointer("/content/0/text")
            .and_then(Value::as_str)
            .and_then(|t| serde_json::from_str(t).ok())
    });
    let hits = payload.as_ref().and_then(|p| p.get("tools"));
    let names = hits
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|h| h.pointer("/tool/name").or_else(|| h.get("name")))
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    Answer::Ranked { names, latency_ms }
}

/// The names of a result array (an item without one is skipped).
fn item_names(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|i| i.get("name").and_then(Value::as_str))
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

fn error_text(answer: &Value) -> String {
    match answer.get("error") {
        Some(e) => format!(
            "error {}: {}",
            e.get("code").unwrap_or(&Value::Null),
            e.get("message").and_then(Value::as_str).unwrap_or("")
        ),
        None => "an answer with neither result nor error".into(),
    }
}
