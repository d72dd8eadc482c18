//! Client scenarios: what the scenario server does, what the client driver
//! is asked to do (the context JSON), which trace rules grade it and which
//! messages show that the driver did what it was asked. Data, declared in
//! `client-scenarios/*.yaml` and embedded in the binary; every error points
//! at `file:line:col`. Pure: no I/O.

use serde_json::{json, Map, Value};

use crate::scenario::source::{known_keys, load_list, PlacedError, Problem, SourceDoc};

/// The built-in client scenario files.
const FILES: &[(&str, &str)] = &[
    (
        "client-scenarios/official.yaml",
        include_str!("../../client-scenarios/official.yaml"),
    ),
    (
        "client-scenarios/base.yaml",
        include_str!("../../client-scenarios/base.yaml"),
    ),
    (
        "client-scenarios/discovery.yaml",
        include_str!("../../client-scenarios/discovery.yaml"),
    ),
    (
        "client-scenarios/mcp-2026.yaml",
        include_str!("../../client-scenarios/mcp-2026.yaml"),
    ),
];

/// Catalogs a client scenario may name with `server.catalog`, embedded.
const CATALOGS: &[(&str, &str)] = &[
    (
        "add-numbers",
        include_str!("../../fixtures/catalogs/add-numbers.json"),
    ),
    (
        "header-params",
        include_str!("../../fixtures/catalogs/header-params.json"),
    ),
];

/// The eras a scenario applies in when it names none.
pub const ALL_ERAS: [&str; 3] = ["2025-06-18", "2025-11-25", "2026-07-28"];

/// One client scenario as declared.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientScenario {
    /// The name the driver receives in `MCP_CONFORMANCE_SCENARIO`.
    pub name: String,
    pub title: String,
    /// Protocol versions it applies in.
    pub eras: Vec<String>,
    /// `http`, `stdio` or both.
    pub transports: Vec<String>,
    pub server: ServerSetup,
    /// The actions the driver is asked to perform (the context's `actions`).
    pub actions: Vec<Value>,
    /// Messages the client must send for the scenario to have exercised
    /// its rules.
    pub expect: Vec<Expect>,
    /// The trace rules that grade it (ids or `prefix*`); empty: every client rule.
    pub rules: Vec<String>,
    /// `file:line:col` of the scenario.
    pub origin: String,
}

/// How the scenario server is set up: the reference server's own switches.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServerSetup {
    /// An embedded catalog name (see `CATALOGS`); None: the reference catalog.
    pub catalog: Option<String>,
    /// Reference server behaviours (`serve-reference --fault NAME`): in a
    /// client scenario, situations the client must cope with.
    pub behaviours: Vec<String>,
    /// Reference server options without a value (`ping-client` for
    /// `--ping-client`), from [`OPTIONS`].
    pub options: Vec<String>,
}

/// The `serve-reference` switches a client scenario may turn on.
pub const OPTIONS: &[&str] = &[
    "ping-client",
    "list-changed-after-query",
    "modern-only",
    "hold-calls",
];

/// A message the client must send: its method and, optionally, params it
/// must contain (a subset match) and keys it must carry, with what it
/// shows in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Expect {
    pub method: String,
    pub params: Option<Value>,
    /// Param keys it must carry (e.g. `cursor`).
    pub has: Vec<String>,
    /// At least this many such messages (default 1).
    pub count: usize,
    pub says: String,
}

/// A client scenario file that cannot be used: where, and why.
pub type ScenarioError = PlacedError;

impl ClientScenario {
    /// The context JSON the driver receives in `MCP_CONFORMANCE_CONTEXT`.
    pub fn context(&self, transport: &str, version: Option<&str>) -> Value {
        let mut ctx = Map::new();
        ctx.insert("scenario".into(), json!(self.name));
        ctx.insert("transport".into(), json!(transport));
        if let Some(v) = version {
            ctx.insert("protocolVersion".into(), json!(v));
        }
        ctx.insert("actions".into(), Value::Array(self.actions.clone()));
        Value::Object(ctx)
    }

    /// Whether a trace rule grades this scenario.
    pub fn grades(&self, rule_id: &str) -> bool {
        self.rules.is_empty()
            || self.rules.iter().any(|r| match r.strip_suffix('*') {
                Some(prefix) => rule_id.starts_with(prefix),
                None => r == rule_id,
            })
    }
}

/// The text of an embedded catalog.
pub fn catalog(name: &str) -> Option<&'static str> {
    CATALOGS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Every built-in client scenario, in file order; names are unique.
pub fn builtin() -> Result<Vec<ClientScenario>, ScenarioError> {
    let mut all = Vec::new();
    for (file, text) in FILES {
        all.extend(load_str(file, text)?);
    }
    let mut seen = std::collections::HashSet::new();
    for s in &all {
        if !seen.insert(s.name.clone()) {
            return Err(ScenarioError::at(
                &s.origin,
                format!("scenario {:?} is declared twice", s.name),
            ));
        }
    }
    Ok(all)
}

/// The scenarios of one file.
pub fn load_str(file: &str, text: &str) -> Result<Vec<ClientScenario>, ScenarioError> {
    load_list(file, text, "scenarios", |doc, at, v| {
        scenario(doc, file, at, v)
    })
}

const KEYS: &[&str] = &[
    "name",
    "title",
    "eras",
    "transports",
    "server",
    "actions",
    "expect",
    "rules",
];

/// The operations a driver knows (docs/client.md, "Actions").
pub const OPS: &[&str] = &[
    "list_tools",
    "search_tools",
    "call_tool",
    "read_resource",
    "await_list_changed",
    "ping",
];

fn scenario(doc: &SourceDoc, file: &str, at: &str, v: &Value) -> Result<ClientScenario, Problem> {
    let map = known_keys(v, at, KEYS, "a client scenario")?;
    let text = |key: &str| -> Result<String, Problem> {
        map.get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| (format!("{at}/{key}"), format!("`{key}` must be a string")))
    };
    let eras = strings(map, at, "eras")?.unwrap_or_else(|| ALL_ERAS.map(String::from).to_vec());
    if let Some((i, bad)) = eras
        .iter()
        .enumerate()
        .find(|(_, e)| !ALL_ERAS.contains(&e.as_str()))
    {
        return Err((
            format!("{at}/eras/{i}"),
            format!("unknown era {bad:?}; eras are {}", ALL_ERAS.join(", ")),
        ));
    }
    let transports =
        strings(map, at, "transports")?.unwrap_or_else(|| vec!["http".into(), "stdio".into()]);
    if let Some((i, bad)) = transports
        .iter()
        .enumerate()
        .find(|(_, t)| !matches!(t.as_str(), "http" | "stdio"))
    {
        return Err((
            format!("{at}/transports/{i}"),
            format!("unknown transport {bad:?}; transports are http and stdio"),
        ));
    }
    let actions = actions(map, at)?;
    let pos = doc.position(at);
    Ok(ClientScenario {
        name: text("name")?,
        title: text("title")?,
        eras,
        transports,
        server: server(map, at)?,
        actions,
        expect: expects(map, at)?,
        rules: strings(map, at, "rules")?.unwrap_or_default(),
        origin: format!("{file}:{}:{}", pos.line, pos.col),
    })
}

fn strings(map: &Map<String, Value>, at: &str, key: &str) -> Result<Option<Vec<String>>, Problem> {
    match map.get(key) {
        None => Ok(None),
        Some(v) => serde_json::from_value(v.clone()).map(Some).map_err(|_| {
            (
                format!("{at}/{key}"),
                format!("`{key}` must be a list of strings"),
            )
        }),
    }
}

fn server(map: &Map<String, Value>, at: &str) -> Result<ServerSetup, Problem> {
    let Some(v) = map.get("server") else {
        return Ok(ServerSetup::default());
    };
    let at = format!("{at}/server");
    let s = known_keys(v, &at, &["catalog", "behaviours", "options"], "`server`")?;
    let options = strings(s, &at, "options")?.unwrap_or_default();
    if let Some((i, bad)) = options
        .iter()
        .enumerate()
        .find(|(_, o)| !OPTIONS.contains(&o.as_str()))
    {
        return Err((
            format!("{at}/options/{i}"),
            format!("unknown option {bad:?}; options are {}", OPTIONS.join(", ")),
        ));
    }
    let catalog = match s.get("catalog") {
        None => None,
        Some(Value::String(name)) if self::catalog(name).is_some() => Some(name.clone()),
        Some(other) => {
            let known: Vec<&str> = CATALOGS.iter().map(|(n, _)| *n).collect();
            return Err((
                format!("{at}/catalog"),
                format!("unknown catalog {other}; known: {}", known.join(", ")),
            ));
        }
    };
    Ok(ServerSetup {
        catalog,
        behaviours: strings(s, &at, "behaviours")?.unwrap_or_default(),
        options,
    })
}

fn actions(map: &Map<String, Value>, at: &str) -> Result<Vec<Value>, Problem> {
    let Some(v) = map.get("actions") else {
        return Ok(Vec::new());
    };
    let list = v.as_array().ok_or_else(|| {
        (
            format!("{at}/actions"),
            "`actions` must be a list".to_string(),
        )
    })?;
    for (i, a) in list.iter().enumerate() {
        let op = a.get("op").and_then(Value::as_str).unwrap_or("");
        if !OPS.contains(&op) {
            return Err((
                format!("{at}/actions/{i}"),
                format!(
                    "an action needs `op`, one of {}; found {}",
                    OPS.join(", "),
                    a.get("op").map_or("none".to_string(), Value::to_string)
                ),
            ));
        }
    }
    Ok(list.clone())
}

fn expects(map: &Map<String, Value>, at: &str) -> Result<Vec<Expect>, Problem> {
    let Some(v) = map.get("expect") else {
        return Ok(Vec::new());
    };
    let list = v.as_array().ok_or_else(|| {
        (
            format!("{at}/expect"),
            "`expect` must be a list".to_string(),
        )
    })?;
    list.iter()
        .enumerate()
        .map(|(i, e)| {
            let here = format!("{at}/expect/{i}");
            let method = e.get("method").and_then(Value::as_str).ok_or_else(|| {
                (
                    here.clone(),
                    "an expectation needs `method` (a string)".to_string(),
                )
            })?;
            let says = e.get("says").and_then(Value::as_str).ok_or_else(|| {
                (
                    here.clone(),
                    "an expectation needs `says`: what the message shows, in words".to_string(),
                )
            })?;
            Ok(Expect {
                method: method.to_string(),
                params: e.get("params").cloned(),
                has: e
                    .get("has")
                    .and_then(|h| serde_json::from_value(h.clone()).ok())
                    .unwrap_or_default(),
                count: e.get("count").and_then(Value::as_u64).unwrap_or(1) as usize,
                says: says.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_scenario_loads_with_unique_names() {
        let all = builtin().unwrap_or_else(|e| panic!("{e}"));
        assert!(all.len() >= 20, "{} client scenarios", all.len());
    }

    #[test]
    fn an_unknown_op_is_reported_at_its_position() {
        let text = "scenarios:\n  - name: x\n    title: t\n    actions:\n      - op: fly\n";
        let e = load_str("f.yaml", text).expect_err("fly is no op");
        assert_eq!((e.line, e.col), (5, 9), "{e}");
        assert!(e.message.contains("list_tools"), "{e}");
    }

    #[test]
    fn an_unknown_key_and_era_are_named() {
        let e = load_str(
            "f.yaml",
            "scenarios:\n  - name: x\n    title: t\n    colour: red\n",
        )
        .expect_err("unknown key");
        assert!(e.message.contains("unknown key `colour`"), "{e}");
        let e = load_str(
            "f.yaml",
            "scenarios:\n  - name: x\n    title: t\n    eras: [2024-11-05]\n",
        )
        .expect_err("unknown era");
        assert_eq!(e.line, 4, "{e}");
    }

    #[test]
    fn rule_patterns_select_by_prefix() {
        let s = load_str(
            "f.yaml",
            "scenarios:\n  - name: x\n    title: t\n    rules: [client/http-*, client/ping-empty]\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(s[0].grades("client/http-accept"));
        assert!(s[0].grades("client/ping-empty"));
        assert!(!s[0].grades("client/ping-emptier"));
    }
}
