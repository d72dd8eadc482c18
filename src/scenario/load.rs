//! Loading is strict: a scenario file is parsed with positions, checked
//! against `schemas/scenario.schema.json`, then every pattern, CEL
//! expression and interpolation is checked. Every problem is reported as
//! `file:line:col: message`, and a file with any problem is not run.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::Validator;
use serde_json::{Map, Value};

use super::expr;
use super::interpolate::{Template, ValueTemplate};
use super::model::{
    Action, Assertion, Expr, Fixture, ForEach, Isolation, Level, Place, Requirement, Scenario,
    SpecRef, Step, Transport,
};
use super::pattern;
use super::source::{parse_yaml, Position, SourceDoc};

mod load_generate;

/// The scenario file schema, shipped with the binary.
pub const SCENARIO_SCHEMA: &str = include_str!("../../schemas/scenario.schema.json");

const ACTIONS: &[&str] = &[
    "request",
    "notify",
    "send_raw",
    "wait_notification",
    "sleep_ms",
    "http",
];
const DEFAULT_MAX_ITEMS: usize = 50;

/// One problem in one file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{position}: {message}")]
pub struct LoadError {
    pub file: String,
    pub position: Position,
    pub message: String,
}

/// Every problem found while loading a set of files.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct LoadErrors(pub Vec<LoadError>);

fn schema_validator() -> &'static Result<Validator, String> {
    static VALIDATOR: OnceLock<Result<Validator, String>> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value = serde_json::from_str(SCENARIO_SCHEMA).map_err(|e| e.to_string())?;
        jsonschema::validator_for(&schema).map_err(|e| e.to_string())
    })
}

struct Loader<'a> {
    file: &'a str,
    doc: SourceDoc,
    errors: Vec<LoadError>,
}

impl Loader<'_> {
    fn error_at(&mut self, position: Position, message: impl Into<String>) {
        self.errors.push(LoadError {
            file: self.file.to_string(),
            position,
            message: message.into(),
        });
    }

    fn error(&mut self, pointer: &str, message: impl Into<String>) {
        let position = self.doc.position(pointer);
        self.error_at(position, message);
    }

    fn check_schema(&mut self) {
        let validator = match schema_validator() {
            Ok(v) => v,
            Err(e) => {
                self.error_at(
                    Position::default(),
                    format!("internal: the scenario schema does not compile: {e}"),
                );
                return;
            }
        };
        let value = self.doc.value.clone();
        let mut found: Vec<(Position, String)> = validator
            .iter_errors(&value)
            .map(|e| self.describe_schema_error(&e))
            .collect();
        found.sort_by_key(|(p, _)| (p.line, p.col));
        found.dedup();
        for (position, message) in found {
            self.error_at(position, message);
        }
    }

    fn describe_schema_error(&self, e: &jsonschema::ValidationError) -> (Position, String) {
        let pointer = e.instance_path().as_str().to_string();
        let place = describe_place(&pointer);
        match e.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let key = unexpected.first().cloned().unwrap_or_default();
                let child = format!("{pointer}/{}", super::source::escape_pointer(&key));
                let hint = suggest_key(&pointer, &key);
                (
                    self.doc.key_position(&child),
                    format!("unknown key '{key}' in {place}{hint}"),
                )
            }
            ValidationErrorKind::Required { property } => (
                self.doc.position(&pointer),
                format!("{place} is missing required key {property}"),
            ),
            ValidationErrorKind::Enum { options } => {
                let allowed: Vec<String> = options
                    .as_array()
                    .map(|o| {
                        o.iter()
                            .map(|v| v.as_str().map_or(v.to_string(), str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                (
                    self.doc.position(&pointer),
                    format!(
                        "{place}: {} is not one of {}",
                        e.instance(),
                        allowed.join(", ")
                    ),
                )
            }
            _ => (
                self.doc.position(&pointer),
                format!("{place}: {}", e.masked()),
            ),
        }
    }
}

fn describe_place(pointer: &str) -> String {
    let parts: Vec<&str> = pointer.split('/').skip(1).collect();
    match parts.as_slice() {
        [] => "the scenario".into(),
        ["steps", i] => format!("step {}", i.parse::<usize>().map_or(0, |n| n + 1)),
        ["cleanup", i] => format!("cleanup step {}", i.parse::<usize>().map_or(0, |n| n + 1)),
        ["steps", i, rest @ ..] => format!(
            "step {} key '{}'",
            i.parse::<usize>().map_or(0, |n| n + 1),
            rest.join(".")
        ),
        _ => format!("key '{}'", parts.join(".")),
    }
}

fn suggest_key(pointer: &str, key: &str) -> String {
    let in_step = pointer.starts_with("/steps/") || pointer.starts_with("/cleanup/");
    let allowed: &[&str] = if in_step && pointer.matches('/').count() == 2 {
        &[
            "id",
            "if",
            "skip_unless",
            "session",
            "handshake",
            "request",
            "notify",
            "send_raw",
            "wait_notification",
            "sleep_ms",
            "http",
            "params",
            "rpc_id",
            "no_wait",
            "sentinel",
            "bounded",
            "meta",
            "paginate",
            "max_pages",
            "for_each",
            "as",
            "max_items",
            "expect",
            "assert",
            "capture",
            "timeout_ms",
            "level",
        ]
    } else if pointer.is_empty() {
        &[
            "id",
            "title",
            "description",
            "profile",
            "level",
            "requirements",
            "spec",
            "requires",
            "eras",
            "eras_reason",
            "transports",
            "fixture",
            "timeout_ms",
            "isolation",
            "handshake",
            "steps",
            "cleanup",
            "assert",
            "generate",
        ]
    } else {
        &[]
    };
    allowed
        .iter()
        .filter(|k| strsim::levenshtein(k, key) <= 2)
        .min_by_key(|k| strsim::levenshtein(k, key))
        .map(|k| format!("; did you mean '{k}'?"))
        .unwrap_or_else(|| {
            if allowed.is_empty() {
                String::new()
            } else {
                format!(" (allowed: {})", allowed.join(", "))
            }
        })
}

/// Loads one scenario from text; `file` names it in errors.
pub fn load_str(file: &str, text: &str) -> Result<Scenario, LoadErrors> {
    let doc = parse_yaml(text).map_err(|e| {
        LoadErrors(vec![LoadError {
            file: file.to_string(),
            position: e.position,
            message: e.message,
        }])
    })?;
    let mut loader = Loader {
        file,
        doc,
        errors: Vec::new(),
    };
    loader.check_schema();
    if !loader.errors.is_empty() {
        return Err(LoadErrors(loader.errors));
    }
    let (scenario, reads) = expr::collecting_reads(|| loader.build());
    match scenario {
        Some(mut s) if loader.errors.is_empty() => {
            s.reads = std::sync::Arc::new(reads);
            Ok(s)
        }
        _ => Err(LoadErrors(loader.errors)),
    }
}

fn get_str(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key).and_then(Value::as_str).map(str::to_string)
}

fn get_u64(obj: &Map<String, Value>, key: &str) -> Option<u64> {
    obj.get(key).and_then(Value::as_u64)
}

fn parse_level(value: Option<&Value>) -> Option<Level> {
    value.and_then(|v| serde_json::from_value(v.clone()).ok())
}

impl Loader<'_> {
    /// Ids are `profile/name`, so `-k base/*`, `-p` and reports group them
    /// the same way; an id without its profile prefix is a load error.
    fn check_id_names_profile(&mut self, root: &Map<String, Value>) {
        let (Some(id), Some(profile)) = (
            root.get("id").and_then(Value::as_str),
            root.get("profile").and_then(Value::as_str),
        ) else {
            return;
        };
        if !id.starts_with(&format!("{profile}/")) {
            self.error(
                "/id",
                format!("scenario id '{id}' must start with its profile: '{profile}/…'"),
            );
        }
    }

    /// `isolation: shared` only on scenarios whose every step leaves the
    /// server as it found it.
    fn check_shareable(&mut self, steps: &[Step], cleanup: &[Step]) {
        if !cleanup.is_empty() {
            self.error(
                "/isolation",
                "isolation: shared, but the scenario has cleanup steps (it changes the server)",
            );
        }
        for (i, step) in steps.iter().enumerate() {
            if let Some(why) = step.shares_badly() {
                self.error_at(
                    step.place.position,
                    format!(
                        "isolation: shared, but step {} {why}; use isolation: fresh",
                        i + 1
                    ),
                );
            }
        }
    }

    /// The id and line:col of the node at `pointer`.
    fn place(&self, pointer: &str) -> Place {
        Place {
            id: Place::id_of(pointer),
            position: self.doc.position(pointer),
        }
    }

    fn expr(&mut self, pointer: &str, source: &str) -> Expr {
        let place = self.place(pointer);
        let program = match expr::compile(source) {
            Ok(program) => program,
            Err(e) => {
                self.error_at(place.position, format!("{} in {source:?}", e));
                // Never run: the file has an error. `true` stands in.
                expr::compile("true").unwrap_or_else(|_| unreachable!("`true` compiles"))
            }
        };
        Expr {
            source: source.to_string(),
            place,
            program,
        }
    }

    /// A text with `${…}` holes, compiled; a problem is reported at `pointer`.
    fn template(&mut self, pointer: &str, text: &str) -> Template {
        Template::compile(text).unwrap_or_else(|e| {
            self.error(pointer, e.to_string());
            Template::literal(text)
        })
    }

    /// A JSON value with `${…}` holes, compiled; a problem is reported at `pointer`.
    fn value_template(&mut self, pointer: &str, value: &Value) -> ValueTemplate {
        ValueTemplate::compile(value).unwrap_or_else(|e| {
            self.error(pointer, e.to_string());
            ValueTemplate::Literal(value.clone())
        })
    }

    fn build(&mut self) -> Option<Scenario> {
        let root = self.doc.value.as_object()?.clone();
        self.check_id_names_profile(&root);
        let steps = root
            .get("steps")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut built = Vec::new();
        let mut ids: Vec<String> = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            let pointer = format!("/steps/{i}");
            if let Some(step) = step.as_object().and_then(|s| self.build_step(&pointer, s)) {
                if let Some(id) = &step.id {
                    if ids.contains(id) {
                        self.error(
                            &format!("{pointer}/id"),
                            format!("step id '{id}' is used twice"),
                        );
                    }
                    ids.push(id.clone());
                }
                built.push(step);
            }
        }
        let cleanup = self.build_cleanup(root.get("cleanup"));
        let generate = self.build_generate(root.get("generate"), &ids);
        let isolation = match root.get("isolation").and_then(Value::as_str) {
            Some("shared") => Isolation::Shared,
            _ => Isolation::Fresh,
        };
        let handshake = root
            .get("handshake")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        if !handshake && isolation == Isolation::Shared {
            self.error(
                "/handshake",
                "handshake: false needs a fresh connection (isolation: fresh): a warm one had its handshake",
            );
        }
        if isolation == Isolation::Shared {
            self.check_shareable(&built, &cleanup);
            if let Some(g) = &generate {
                self.check_shareable(&g.steps, &[]);
            }
        }
        let requires = self.build_requires(root.get("requires"));
        let asserts = self.build_asserts("", root.get("assert"));
        let spec: Vec<SpecRef> = root
            .get("spec")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default();
        let strings = |key: &str| -> Vec<String> {
            root.get(key)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        Some(Scenario {
            id: get_str(&root, "id")?,
            title: get_str(&root, "title")?,
            profile: get_str(&root, "profile")?,
            level: parse_level(root.get("level"))?,
            requirements: strings("requirements"),
            spec,
            description: get_str(&root, "description"),
            requires,
            eras: strings("eras"),
            eras_reason: get_str(&root, "eras_reason"),
            // the schema allows only the names these parse
            transports: strings("transports")
                .iter()
                .filter_map(|t| Transport::parse(t))
                .collect(),
            fixture: get_str(&root, "fixture").and_then(|f| Fixture::parse(&f)),
            timeout_ms: get_u64(&root, "timeout_ms"),
            isolation,
            handshake,
            steps: built,
            asserts,
            cleanup,
            generate,
            origin: self.file.to_string(),
            reads: Default::default(),
        })
    }

    fn build_requires(&mut self, value: Option<&Value>) -> Vec<Requirement> {
        match value {
            Some(Value::String(s)) => {
                let expr = self.expr("/requires", s);
                vec![Requirement {
                    reason: Template::literal(&format!("precondition not met: {s}")),
                    expr,
                }]
            }
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| {
                    let obj = item.as_object()?;
                    let expr = self.expr(&format!("/requires/{i}/expr"), &get_str(obj, "expr")?);
                    let reason = get_str(obj, "reason")?;
                    Some(Requirement {
                        expr,
                        reason: self.template(&format!("/requires/{i}/reason"), &reason),
                    })
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    fn build_asserts(&mut self, base: &str, value: Option<&Value>) -> Vec<Assertion> {
        let Some(Value::Array(items)) = value else {
            return Vec::new();
        };
        items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| {
                let pointer = format!("{base}/assert/{i}");
                match item {
                    Value::String(s) => Some(Assertion {
                        expr: self.expr(&pointer, s),
                        message: None,
                        level: None,
                    }),
                    Value::Object(obj) => Some(Assertion {
                        expr: self.expr(&format!("{pointer}/expr"), &get_str(obj, "expr")?),
                        message: get_str(obj, "message")
                            .map(|m| self.template(&format!("{pointer}/message"), &m)),
                        level: parse_level(obj.get("level")),
                    }),
                    _ => None,
                }
            })
            .collect()
    }

    fn build_step(&mut self, pointer: &str, obj: &Map<String, Value>) -> Option<Step> {
        let place = self.place(pointer);
        let present: Vec<&str> = ACTIONS
            .iter()
            .copied()
            .filter(|a| obj.contains_key(*a))
            .collect();
        if present.len() > 1 {
            self.error(
                pointer,
                format!(
                    "a step does one thing, but this one has {}",
                    present.join(" and ")
                ),
            );
            return None;
        }
        let params = obj
            .get("params")
            .map(|p| self.value_template(&format!("{pointer}/params"), p));
        if params.is_some()
            && present
                .first()
                .is_some_and(|a| *a != "request" && *a != "notify")
        {
            self.error(
                &format!("{pointer}/params"),
                "params only go with request or notify",
            );
        }
        let action = self.build_action(pointer, obj, present.first().copied(), params);
        let base = format!("{pointer}/expect");
        let expect = obj.get("expect").and_then(|written| {
            let locate = |at: &str| self.place(&format!("{base}{at}"));
            match pattern::compile(written, &locate) {
                Ok(p) => Some(p),
                Err(errors) => {
                    for e in errors {
                        let position = self.doc.key_position(&format!("{base}{}", e.pointer));
                        self.error_at(position, e.message);
                    }
                    None
                }
            }
        });
        if obj.contains_key("expect") && matches!(action, Action::Sleep { .. } | Action::Check) {
            self.error(
                &base,
                "expect needs a step that gets an answer (request, send_raw or wait_notification)",
            );
        }
        let for_each = match (get_str(obj, "for_each"), get_str(obj, "as")) {
            (Some(items), Some(var)) => Some(ForEach {
                items: self.expr(&format!("{pointer}/for_each"), &items),
                var,
                max_items: get_u64(obj, "max_items").map_or(DEFAULT_MAX_ITEMS, |n| n as usize),
            }),
            _ => None,
        };
        let captures = obj
            .get("capture")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(name, v)| {
                        let src = v.as_str()?;
                        Some((
                            name.clone(),
                            self.expr(&format!("{pointer}/capture/{name}"), src),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let condition = get_str(obj, "if").map(|src| self.expr(&format!("{pointer}/if"), &src));
        let skip_unless = obj
            .get("skip_unless")
            .and_then(Value::as_object)
            .and_then(|o| {
                let expr = self.expr(&format!("{pointer}/skip_unless/expr"), &get_str(o, "expr")?);
                let reason = get_str(o, "reason")?;
                Some(Requirement {
                    expr,
                    reason: self.template(&format!("{pointer}/skip_unless/reason"), &reason),
                })
            });
        let step = Step {
            id: get_str(obj, "id"),
            condition,
            skip_unless,
            session: get_str(obj, "session"),
            handshake: obj
                .get("handshake")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            action,
            for_each,
            meta: obj.get("meta").and_then(Value::as_bool).unwrap_or(true),
            sentinel: obj
                .get("sentinel")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            bounded: obj.get("bounded").and_then(Value::as_bool).unwrap_or(false),
            expect_place: self.place(&format!("{pointer}/expect")),
            expect,
            asserts: self.build_asserts(pointer, obj.get("assert")),
            captures,
            timeout_ms: get_u64(obj, "timeout_ms"),
            level: parse_level(obj.get("level")),
            place,
        };
        if let Some(why) = step.sentinel_misplaced() {
            self.error(&format!("{pointer}/sentinel"), why.to_string());
        }
        if let Some(why) = step.bounded_misplaced() {
            self.error(&format!("{pointer}/bounded"), why.to_string());
        }
        if !step.handshake && step.session.as_deref().is_none_or(|s| s == "main") {
            // The main session's handshake is the scenario's `handshake:`
            // key; a step can only skip the handshake of a session of its own.
            self.error(
                &format!("{pointer}/handshake"),
                "a step's handshake: false needs a `session:` of the step's own (not main); for the main session, set handshake: false on the scenario".to_string(),
            );
        }
        Some(step)
    }

    fn build_action(
        &mut self,
        pointer: &str,
        obj: &Map<String, Value>,
        kind: Option<&str>,
        params: Option<ValueTemplate>,
    ) -> Action {
        match kind {
            Some("request") => Action::Request {
                method: self.template(
                    &format!("{pointer}/request"),
                    &get_str(obj, "request").unwrap_or_default(),
                ),
                params,
                rpc_id: obj
                    .get("rpc_id")
                    .map(|id| self.value_template(&format!("{pointer}/rpc_id"), id)),
                no_wait: obj.get("no_wait").and_then(Value::as_bool).unwrap_or(false),
                paginate: get_str(obj, "paginate"),
                max_pages: get_u64(obj, "max_pages").map(|n| n as usize),
            },
            Some("notify") => Action::Notify {
                method: self.template(
                    &format!("{pointer}/notify"),
                    &get_str(obj, "notify").unwrap_or_default(),
                ),
                params,
            },
            Some("send_raw") => {
                let text = get_str(obj, "send_raw").unwrap_or_default();
                Action::SendRaw {
                    text: self.template(&format!("{pointer}/send_raw"), &text),
                }
            }
            Some("wait_notification") => Action::WaitNotification {
                method: get_str(obj, "wait_notification").unwrap_or_default(),
            },
            Some("http") => self.build_http(pointer, obj),
            Some(_) => Action::Sleep {
                ms: get_u64(obj, "sleep_ms").unwrap_or(0),
            },
            None => Action::Check,
        }
    }
}

impl Loader<'_> {
    /// `cleanup:` steps undo; they carry no checks, since a verdict is
    /// already reached when they run.
    fn build_cleanup(&mut self, value: Option<&Value>) -> Vec<Step> {
        let items = value.and_then(Value::as_array).cloned().unwrap_or_default();
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let pointer = format!("/cleanup/{i}");
            let Some(obj) = item.as_object() else {
                continue;
            };
            for key in ["expect", "assert", "capture", "skip_unless", "for_each"] {
                if obj.contains_key(key) {
                    let at = self.doc.key_position(&format!("{pointer}/{key}"));
                    self.error_at(
                        at,
                        format!("a cleanup step only undoes what the scenario changed; it cannot have `{key}`"),
                    );
                }
            }
            if let Some(step) = self.build_step(&pointer, obj) {
                out.push(step);
            }
        }
        out
    }

    fn build_http(&mut self, pointer: &str, obj: &Map<String, Value>) -> Action {
        let base = format!("{pointer}/http");
        let spec = obj
            .get("http")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if spec.contains_key("body") && spec.contains_key("text") {
            self.error(
                &base,
                "an http step has a JSON body or a text body, not both",
            );
        }
        let body = spec
            .get("body")
            .map(|body| self.value_template(&format!("{base}/body"), body));
        let text = get_str(&spec, "text").map(|t| self.template(&format!("{base}/text"), &t));
        let headers = spec
            .get("headers")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        let at = format!("{base}/headers/{}", super::source::escape_pointer(k));
                        (k.clone(), v.as_str().map(|v| self.template(&at, v)))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let http_only = self.doc.value.get("transports") == Some(&serde_json::json!(["http"]));
        if !http_only {
            let at = self.doc.key_position(&base);
            self.error_at(
                at,
                "an http step only works over Streamable HTTP: the scenario needs `transports: [http]`",
            );
        }
        Action::Http {
            method: get_str(&spec, "method").unwrap_or_else(|| "POST".into()),
            body,
            text,
            headers,
            read_ms: get_u64(&spec, "read_ms").unwrap_or(0),
        }
    }
}

/// Loads every `*.yaml` / `*.yml` scenario under `path` (a file or a directory),
/// skipping `requirements.yaml` and `sources.yaml`. Files are loaded in sorted path order.
pub fn load_path(path: &Path) -> Result<Vec<Scenario>, LoadErrors> {
    let files = if path.is_dir() {
        let mut files = Vec::new();
        collect_files(path, &mut files).map_err(|e| io_error(path, &e))?;
        files.sort();
        files
    } else {
        vec![path.to_path_buf()]
    };
    let sources: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .map(|text| (f.display().to_string(), text))
                .map_err(|e| io_error(f, &e))
        })
        .collect::<Result<_, _>>()?;
    load_sources(&sources)
}

fn io_error(path: &Path, e: &std::io::Error) -> LoadErrors {
    LoadErrors(vec![LoadError {
        file: path.display().to_string(),
        position: Position { line: 1, col: 1 },
        message: format!("cannot read: {e}"),
    }])
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_files(&path, out)?;
        } else if is_scenario_file(&path) {
            out.push(path);
        }
    }
    Ok(())
}

fn is_scenario_file(path: &Path) -> bool {
    let ext = path.extension().and_then(|e| e.to_str());
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    matches!(ext, Some("yaml" | "yml"))
        && !matches!(name, "requirements.yaml" | "sources.yaml")
        && !name.starts_with('.')
}

/// Loads many (name, text) sources; ids must be unique across all of them.
pub fn load_sources(sources: &[(String, String)]) -> Result<Vec<Scenario>, LoadErrors> {
    let mut scenarios = Vec::new();
    let mut errors = Vec::new();
    for loaded in load_each(sources) {
        match loaded {
            Ok(s) => scenarios.push(s),
            Err(LoadErrors(mut e)) => errors.append(&mut e),
        }
    }
    let mut seen: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    for s in &scenarios {
        if let Some(first) = seen.insert(&s.id, &s.origin) {
            errors.push(LoadError {
                file: s.origin.clone(),
                position: Position { line: 1, col: 1 },
                message: format!("scenario id '{}' is already used by {first}", s.id),
            });
        }
    }
    if errors.is_empty() {
        Ok(scenarios)
    } else {
        Err(LoadErrors(errors))
    }
}

/// Files per loading thread below which one thread does it all.
const FILES_PER_THREAD: usize = 16;

/// `load_str` of every source, in order. Parsing the YAML, checking it and
/// compiling its CEL is pure CPU work, and the whole built-in catalog takes
/// long enough to show in a run's wall time, so it is spread over the cores.
fn load_each(sources: &[(String, String)]) -> Vec<Result<Scenario, LoadErrors>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(sources.len() / FILES_PER_THREAD)
        .max(1);
    let load_chunk = |chunk: &[(String, String)]| -> Vec<Result<Scenario, LoadErrors>> {
        expr::while_loading(|| {
            chunk
                .iter()
                .map(|(name, text)| load_str(name, text))
                .collect()
        })
    };
    if threads == 1 {
        return load_chunk(sources);
    }
    let chunk = sources.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = sources
            .chunks(chunk)
            .map(|part| scope.spawn(move || load_chunk(part)))
            .collect();
        handles
            .into_iter()
            .zip(sources.chunks(chunk))
            // A panicking loader is a bug; loading that chunk again on this
            // thread surfaces the same panic with its message.
            .flat_map(|(h, part)| h.join().unwrap_or_else(|_| load_chunk(part)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "\
id: base/unknown-method
title: unknown methods get -32601
profile: base
level: MUST
requirements: [BASE-ERR-01]
steps:
  - id: r
    request: no/such/method
    expect: { error: { code: -32601 } }
    assert:
      - expr: \"r.error.code == -32601\"
        message: must be method not found
";

    fn errors(text: &str) -> Vec<String> {
        load_str("t.yaml", text)
            .expect_err("must fail")
            .0
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn bounded_and_handshake_keys_are_read_and_misplacements_refused() {
        let good = GOOD.replace("    expect:", "    bounded: true\n    expect:");
        let s = load_str("t.yaml", &format!("handshake: false\n{good}"))
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(s.steps[0].bounded && !s.handshake);
        assert!(load_str("t.yaml", GOOD).is_ok_and(|s| s.handshake && !s.steps[0].bounded));
        let paged = good.replace(
            "    bounded: true",
            "    bounded: true\n    paginate: tools",
        );
        assert!(errors(&paged)
            .iter()
            .any(|e| e.contains("bounded: true needs")));
        let shared = format!("handshake: false\nisolation: shared\n{GOOD}");
        assert!(errors(&shared)
            .iter()
            .any(|e| e.contains("handshake: false needs a fresh connection")));
    }

    #[test]
    fn an_alias_reuses_an_anchored_block_within_a_file() {
        let text = "\
id: base/anchors
title: one expectation, two steps
profile: base
level: MUST
requirements: [BASE-ERR-01]
steps:
  - id: first
    request: no/such/method
    expect: &unknown { error: { code: -32601 } }
  - id: again
    request: no/such/method
    expect: *unknown
";
        let s = load_str("t.yaml", text).expect("loads");
        assert_eq!(s.steps.len(), 2);
        let [first, again] = [&s.steps[0], &s.steps[1]].map(|step| {
            step.expect
                .as_ref()
                .map(|p| (p.to_value().clone(), p.place.position.line))
                .expect("an expect")
        });
        assert_eq!(first.0, serde_json::json!({"error": {"code": -32601}}));
        assert_eq!(first.0, again.0, "the alias is the anchored block");
        assert_eq!(
            (first.1, again.1),
            (9, 12),
            "each step's expect has its own line"
        );
    }

    #[test]
    fn loads_a_good_file() {
        let s = load_str("t.yaml", GOOD).expect("loads");
        assert_eq!(s.id, "base/unknown-method");
        assert_eq!(s.level, Level::Must);
        assert!(
            matches!(&s.steps[0].action, Action::Request { method, .. } if method.source() == "no/such/method")
        );
        assert_eq!(
            s.steps[0].asserts[0].message.as_ref().map(|m| m.source()),
            Some("must be method not found")
        );
        assert_eq!(s.steps[0].place.id, "steps[0]");
        assert_eq!(s.steps[0].asserts[0].expr.place.id, "steps[0].assert[0]");
        assert_eq!(
            s.steps[0].asserts[0].expr.place.position.to_string(),
            "11:15"
        );
    }

    #[test]
    fn unknown_keys_point_at_the_key_with_a_suggestion() {
        let text = GOOD.replace("    expect:", "    expct:");
        assert_eq!(
            errors(&text),
            ["t.yaml:9:5: unknown key 'expct' in step 1; did you mean 'expect'?"]
        );
    }

    #[test]
    fn wrong_types_and_bad_levels() {
        let e = errors(&GOOD.replace("level: MUST", "level: MUSTY"));
        assert!(e[0].starts_with("t.yaml:4:8: key 'level':"), "{e:?}");
        let e = errors(&GOOD.replace("request: no/such/method", "request: 42"));
        assert!(
            e[0].starts_with("t.yaml:8:14: step 1 key 'request':"),
            "{e:?}"
        );
    }

    #[test]
    fn bad_cel_and_bad_operators_are_found() {
        let e = errors(&GOOD.replace("r.error.code == -32601", "r.error.code == ("));
        assert!(e[0].starts_with("t.yaml:11:15: CEL syntax error"), "{e:?}");
        let e = errors(&GOOD.replace("{ code: -32601 }", "{ code: { $tpye: integer } }"));
        assert_eq!(e, ["t.yaml:9:32: unknown operator $tpye; did you mean $type? (known: $type, $absent, $present, $regex, $contains, $unordered, $each, $len, $min_len, $max_len, $gte, $lte, $one_of, $not, $eq, $exact, $label, $verdict, $note)"]);
    }

    #[test]
    fn a_bad_regex_is_a_load_error_at_its_line_and_column() {
        let e = errors(&GOOD.replace("message: { $type: string }", "x").replace(
            "{ code: -32601 }",
            "{ code: -32601, message: { $regex: \"a(b\" } }",
        ));
        assert_eq!(
            e,
            ["t.yaml:9:49: $regex \"a(b\" does not compile: unclosed group"]
        );
    }

    #[test]
    fn a_step_does_one_thing() {
        let e = errors(&GOOD.replace(
            "    request: no/such/method",
            "    request: a\n    notify: b",
        ));
        assert_eq!(
            e,
            ["t.yaml:7:5: a step does one thing, but this one has request and notify"]
        );
    }

    #[test]
    fn yaml_syntax_errors_have_positions() {
        let e = errors("id: [a\n");
        assert!(e[0].starts_with("t.yaml:2:"), "{e:?}");
    }

    #[test]
    fn duplicate_ids_across_files() {
        let sources = vec![
            ("a.yaml".to_string(), GOOD.to_string()),
            ("b.yaml".to_string(), GOOD.to_string()),
        ];
        let e = load_sources(&sources).expect_err("dup");
        assert_eq!(
            e.0[0].to_string(),
            "b.yaml:1:1: scenario id 'base/unknown-method' is already used by a.yaml"
        );
    }
}
