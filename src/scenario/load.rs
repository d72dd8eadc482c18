//! Loading is strict: a scenario file is parsed with positions, checked
//! against `schemas/scenario.schema.json`, then every pattern, CEL
//! expression and interpolation is checked. Every problem is reported as
//! `file:line:col: message`, and a file with any problem is not run.

use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::Validator;
use serde_json::{Map, Value};

use super::interpolate::{Template, ValueTemplate};
use super::model::{
    Action, Assertion, Expr, Fixture, ForEach, Place, Requirement, Scenario, SpecRef, Step,
    Transport,
};
use super::pattern::{self, describe};
use super::source::{parse_yaml, Position, SourceDoc};
use crate::expr::Programs;

mod files;
mod load_fields;
mod load_generate;
mod load_isolation;

pub use files::{load_path, load_sources};

use load_fields::raw;
use load_isolation::IsolationKeys;

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
    VALIDATOR
        .get_or_init(|| jsonschema::validator_for(schema_document()).map_err(|e| e.to_string()))
}

/// The schema as JSON (`null` if it does not parse, which the validator
/// then reports).
fn schema_document() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| serde_json::from_str(SCENARIO_SCHEMA).unwrap_or(Value::Null))
}

/// The schema node at `path` (a schema location, with or without `$ref`
/// steps in it).
fn schema_at(path: &str) -> Option<&'static Value> {
    let root = schema_document();
    let mut node = root;
    for part in path.split('/').skip(1) {
        node = if part == "$ref" {
            let target = node.get("$ref")?.as_str()?.strip_prefix('#')?;
            root.pointer(target)?
        } else {
            let part = part.replace("~1", "/").replace("~0", "~");
            match node {
                Value::Array(items) => items.get(part.parse::<usize>().ok()?)?,
                _ => node.get(&part)?,
            }
        };
    }
    Some(node)
}

/// The keys allowed where a schema error was found: the `properties` of
/// the object schema holding the failed keyword.
fn keys_beside(e: &jsonschema::ValidationError) -> Vec<&'static str> {
    let path = e.schema_path().as_str();
    let parent = path.rsplit_once('/').map_or("", |(p, _)| p);
    schema_at(parent)
        .and_then(|node| node.get("properties"))
        .and_then(Value::as_object)
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

struct Loader<'a> {
    file: &'a str,
    doc: SourceDoc,
    errors: Vec<LoadError>,
    /// Where its expressions are compiled, and what they read is noted.
    programs: &'a mut Programs,
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
        let mut found: Vec<(Position, String)> = Vec::new();
        for e in validator.iter_errors(&value) {
            self.describe_schema_error(&e, &mut found);
        }
        found.sort_by_key(|(p, _)| (p.line, p.col));
        found.dedup();
        for (position, message) in found {
            self.error_at(position, message);
        }
    }

    fn describe_schema_error(
        &self,
        e: &jsonschema::ValidationError,
        found: &mut Vec<(Position, String)>,
    ) {
        let pointer = e.instance_path().as_str().to_string();
        let place = describe_place(&pointer);
        let one = match e.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let key = unexpected.first().cloned().unwrap_or_default();
                self.unknown_key(&pointer, &key, &keys_beside(e))
            }
            ValidationErrorKind::OneOfNotValid { context }
            | ValidationErrorKind::AnyOf { context } => {
                match self.closest_form(e, &pointer, context) {
                    Some(Form::Branch(errors)) => {
                        for inner in errors {
                            self.describe_schema_error(inner, found);
                        }
                        return;
                    }
                    Some(Form::UnknownKey(message)) => message,
                    None => (
                        self.doc.position(&pointer),
                        format!("{place}: {}", e.masked()),
                    ),
                }
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
        };
        found.push(one);
    }

    /// `unknown key 'k' in …` at the key, with the nearest allowed key.
    fn unknown_key(&self, pointer: &str, key: &str, allowed: &[&str]) -> (Position, String) {
        let child = format!("{pointer}/{}", super::source::escape_pointer(key));
        (
            self.doc.key_position(&child),
            format!(
                "unknown key '{key}' in {}{}",
                describe_place(pointer),
                suggest_key(allowed, key)
            ),
        )
    }

    /// Which of the forms of a `oneOf` (a generator, an assertion, …) the
    /// value was meant to be: the one whose type and required keys it has,
    /// so that its own errors are reported; else, for an object, a key that
    /// no form allows.
    fn closest_form<'e>(
        &self,
        e: &jsonschema::ValidationError,
        pointer: &str,
        context: &'e [Vec<jsonschema::ValidationError<'static>>],
    ) -> Option<Form<'e>> {
        let wrong_form = |inner: &jsonschema::ValidationError| {
            inner.instance_path().as_str() == pointer
                && matches!(
                    inner.kind(),
                    ValidationErrorKind::Type { .. } | ValidationErrorKind::Required { .. }
                )
        };
        if let Some(branch) = context
            .iter()
            // A form with no errors (the value fits two forms) explains nothing.
            .filter(|errors| !errors.is_empty() && !errors.iter().any(wrong_form))
            .min_by_key(|errors| errors.len())
        {
            return Some(Form::Branch(branch));
        }
        let obj = e.instance().as_object()?;
        let allowed: Vec<&'static str> = context
            .iter()
            .flatten()
            .filter(|inner| inner.instance_path().as_str() == pointer)
            .flat_map(keys_beside)
            .collect();
        if allowed.is_empty() {
            return None;
        }
        let key = obj.keys().find(|k| !allowed.contains(&k.as_str()))?;
        Some(Form::UnknownKey(self.unknown_key(pointer, key, &allowed)))
    }
}

/// What a value that fits none of the forms of a `oneOf` is reported as.
enum Form<'e> {
    /// The errors of the form it was meant to be.
    Branch(&'e [jsonschema::ValidationError<'static>]),
    /// A key no form allows.
    UnknownKey((Position, String)),
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

/// `; did you mean 'k'?` for the allowed key nearest `key` (two swapped
/// letters count as one edit), else the list of allowed keys.
fn suggest_key(allowed: &[&str], key: &str) -> String {
    let mut unique: Vec<&str> = Vec::new();
    for k in allowed {
        if !unique.contains(k) {
            unique.push(k);
        }
    }
    let allowed = unique;
    allowed
        .iter()
        .filter(|k| strsim::osa_distance(k, key) <= 2)
        .min_by_key(|k| strsim::osa_distance(k, key))
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
    load_among(&mut super::helpers::programs(), file, text)
}

/// [`load_str`], with its expressions compiled among `programs` (shared by
/// the files of one load).
fn load_among(programs: &mut Programs, file: &str, text: &str) -> Result<Scenario, LoadErrors> {
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
        programs,
    };
    loader.check_schema();
    if !loader.errors.is_empty() {
        return Err(LoadErrors(loader.errors));
    }
    // What this scenario's expressions read, and nothing of the files before.
    let _ = loader.programs.take_reads();
    let scenario = loader.build();
    let reads = loader.programs.take_reads();
    match scenario {
        Some(mut s) if loader.errors.is_empty() => {
            s.reads = std::sync::Arc::new(reads);
            Ok(s)
        }
        Some(_) => Err(LoadErrors(loader.errors)),
        None => {
            if loader.errors.is_empty() {
                // Never an empty list of problems for a file that did not load.
                loader.error("", "internal: the scenario could not be built");
            }
            Err(LoadErrors(loader.errors))
        }
    }
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

    /// The id and line:col of the node at `pointer`.
    fn place(&self, pointer: &str) -> Place {
        Place {
            id: Place::id_of(pointer),
            position: self.doc.position(pointer),
        }
    }

    fn expr(&mut self, pointer: &str, source: &str) -> Expr {
        let place = self.place(pointer);
        let program = match self.programs.compile(source) {
            Ok(program) => program,
            Err(e) => {
                self.error_at(place.position, format!("{} in {source:?}", e));
                // Never run: the file has an error. `true` stands in.
                (self.programs.compile("true")).unwrap_or_else(|_| unreachable!("`true` compiles"))
            }
        };
        Expr {
            source: source.to_string(),
            place,
            program,
        }
    }

    /// The pattern written at `base`, compiled; its problems are reported
    /// at the keys they concern.
    fn pattern(&mut self, base: &str, written: &Value) -> Option<pattern::Pattern> {
        let doc = &self.doc;
        let locate = |at: &str| {
            let pointer = format!("{base}{at}");
            Place {
                id: Place::id_of(&pointer),
                position: doc.position(&pointer),
            }
        };
        match pattern::compile_in(self.programs, written, &locate) {
            Ok(p) => Some(p),
            Err(errors) => {
                for e in errors {
                    let position = self.doc.key_position(&format!("{base}{}", e.pointer));
                    self.error_at(position, e.message);
                }
                None
            }
        }
    }

    /// A text with `${…}` holes, compiled; a problem is reported at `pointer`.
    fn template(&mut self, pointer: &str, text: &str) -> Template {
        Template::compile_in(self.programs, text).unwrap_or_else(|e| {
            self.error(pointer, e.to_string());
            Template::literal(text)
        })
    }

    /// A JSON value with `${…}` holes, compiled; a problem is reported at `pointer`.
    fn value_template(&mut self, pointer: &str, value: &Value) -> ValueTemplate {
        ValueTemplate::compile_in(self.programs, value).unwrap_or_else(|e| {
            self.error(pointer, e.to_string());
            ValueTemplate::Literal(value.clone())
        })
    }
}

impl Loader<'_> {
    fn build(&mut self) -> Option<Scenario> {
        let Some(root) = self.doc.value.as_object().cloned() else {
            self.error("", "a scenario file is a mapping of keys (id, title, …)");
            return None;
        };
        self.check_id_names_profile(&root);
        let mut ids: Vec<String> = Vec::new();
        let steps = self.list(&root, "", "steps");
        let built = self.build_steps(steps, "/steps", &mut ids);
        let cleanup = self.build_cleanup(&root);
        let generate = self.build_generate(&root, &ids);
        let IsolationKeys {
            isolation,
            handshake,
            hands_on,
            reused_in_eras,
            reuse_group,
            ends_server,
            confirm_fresh,
        } = self.isolation_keys(&root, &built, &cleanup, generate.as_deref());
        let requires = self.build_requires(raw(&root, "", "requires"));
        let asserts = self.build_asserts("", &root);
        let spec = self.build_spec(&root);
        let transports = self.transports(&root);
        let fixture = self.text(&root, "", "fixture").and_then(|f| {
            let parsed = Fixture::parse(&f);
            if parsed.is_none() {
                self.error(
                    "/fixture",
                    format!("unknown fixture '{f}' (known: reference-catalog)"),
                );
            }
            parsed
        });
        let level = self.level(&root, "");
        if !root.contains_key("level") {
            self.error("", "the scenario is missing required key level");
        }
        Some(Scenario {
            id: self.required_text(&root, "", "id")?,
            title: self.required_text(&root, "", "title")?,
            profile: self.required_text(&root, "", "profile")?,
            level: level?,
            requirements: self.strings(&root, "", "requirements"),
            spec,
            description: self.text(&root, "", "description"),
            shared_finding: self.shared_finding(&root),
            requires,
            eras: self.strings(&root, "", "eras"),
            eras_reason: self.text(&root, "", "eras_reason"),
            transports,
            fixture,
            timeout_ms: self.count(&root, "", "timeout_ms"),
            isolation,
            handshake,
            hands_on,
            reused_in_eras,
            reuse_group,
            ends_server,
            confirm_fresh,
            steps: built,
            asserts,
            cleanup,
            generate,
            origin: self.file.to_string(),
            reads: Default::default(),
        })
    }

    /// Steps of a list at `at` (`/steps`, `/generate/steps`); their ids join
    /// `ids`, where each must be new.
    fn build_steps(&mut self, items: &[Value], at: &str, ids: &mut Vec<String>) -> Vec<Step> {
        let mut built = Vec::new();
        for (pointer, obj) in self.mappings(items, at) {
            let Some(step) = self.build_step(&pointer, &obj) else {
                continue;
            };
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
        built
    }

    fn transports(&mut self, root: &Map<String, Value>) -> Vec<Transport> {
        let names = self.strings(root, "", "transports");
        let mut out = Vec::new();
        for (i, name) in names.iter().enumerate() {
            match Transport::parse(name) {
                Some(t) => out.push(t),
                None => self.error(
                    &format!("/transports/{i}"),
                    format!("unknown transport '{name}' (known: stdio, http)"),
                ),
            }
        }
        out
    }

    /// `spec:` entries, each checked whole: a malformed one is an error at
    /// its line, never left out of the reports.
    fn build_spec(&mut self, root: &Map<String, Value>) -> Vec<SpecRef> {
        let mut out = Vec::new();
        let items = self.list(root, "", "spec");
        for (pointer, obj) in self.mappings(items, "/spec") {
            match serde_json::from_value::<SpecRef>(Value::Object(obj)) {
                Ok(entry) => out.push(entry),
                Err(e) => {
                    let message = format!("{}: {e}", describe_place(&pointer));
                    self.error(&pointer, message);
                }
            }
        }
        out
    }

    fn build_requires(&mut self, value: Option<&Value>) -> Vec<Requirement> {
        match value {
            None => Vec::new(),
            Some(Value::String(s)) => {
                let expr = self.expr("/requires", s);
                vec![Requirement {
                    reason: Template::literal(&format!("precondition not met: {s}")),
                    expr,
                }]
            }
            Some(Value::Array(items)) => self
                .mappings(items, "/requires")
                .into_iter()
                .filter_map(|(pointer, obj)| self.requirement(&pointer, &obj))
                .collect(),
            Some(other) => {
                self.error(
                    "/requires",
                    format!(
                        "requires takes a CEL string or a list of {{expr, reason}}, found {}",
                        describe(other)
                    ),
                );
                Vec::new()
            }
        }
    }

    /// `{expr, reason}` at `pointer` (`requires:` entries, `skip_unless:`).
    fn requirement(&mut self, pointer: &str, obj: &Map<String, Value>) -> Option<Requirement> {
        let expr = self.required_text(obj, pointer, "expr");
        let reason = self.required_text(obj, pointer, "reason");
        Some(Requirement {
            expr: self.expr(&format!("{pointer}/expr"), &expr?),
            reason: self.template(&format!("{pointer}/reason"), &reason?),
        })
    }

    /// The `assert:` list of the mapping at `base`.
    fn build_asserts(&mut self, base: &str, obj: &Map<String, Value>) -> Vec<Assertion> {
        let items = self.list(obj, base, "assert");
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let pointer = format!("{base}/assert/{i}");
            match item {
                Value::String(s) => out.push(Assertion {
                    expr: self.expr(&pointer, s),
                    message: None,
                    level: None,
                }),
                Value::Object(entry) => {
                    let expr = self.required_text(entry, &pointer, "expr");
                    let message = self
                        .text(entry, &pointer, "message")
                        .map(|m| self.template(&format!("{pointer}/message"), &m));
                    let level = self.level(entry, &pointer);
                    if let Some(expr) = expr {
                        out.push(Assertion {
                            expr: self.expr(&format!("{pointer}/expr"), &expr),
                            message,
                            level,
                        });
                    }
                }
                other => self.error(
                    &pointer,
                    format!(
                        "an assert entry is a CEL string or {{expr, message, level}}, found {}",
                        describe(other)
                    ),
                ),
            }
        }
        out
    }

    fn build_step(&mut self, pointer: &str, obj: &Map<String, Value>) -> Option<Step> {
        let place = self.place(pointer);
        let present: Vec<&str> = ACTIONS
            .iter()
            .copied()
            .filter(|a| raw(obj, pointer, a).is_some())
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
        let params = raw(obj, pointer, "params")
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
        let written = raw(obj, pointer, "expect");
        let expect = written.and_then(|written| self.pattern(&base, written));
        if written.is_some() && matches!(action, Action::Sleep { .. } | Action::Check) {
            self.error(
                &base,
                "expect needs a step that gets an answer (request, send_raw or wait_notification)",
            );
        }
        let for_each = self.build_for_each(pointer, obj);
        let captures = self.build_captures(pointer, obj);
        let condition = self
            .text(obj, pointer, "if")
            .map(|src| self.expr(&format!("{pointer}/if"), &src));
        let skip_unless = self
            .mapping(obj, pointer, "skip_unless")
            .and_then(|o| self.requirement(&format!("{pointer}/skip_unless"), o));
        let step = Step {
            id: self.text(obj, pointer, "id"),
            condition,
            skip_unless,
            session: self.text(obj, pointer, "session"),
            handshake: self.flag(obj, pointer, "handshake", true),
            action,
            for_each,
            meta: self.flag(obj, pointer, "meta", true),
            sentinel: self.flag(obj, pointer, "sentinel", false),
            bounded: self.flag(obj, pointer, "bounded", false),
            expect_place: self.place(&format!("{pointer}/expect")),
            expect,
            asserts: self.build_asserts(pointer, obj),
            captures,
            timeout_ms: self.count(obj, pointer, "timeout_ms"),
            level: self.level(obj, pointer),
            place,
        };
        self.refuse_misplaced_keys(pointer, &step);
        Some(step)
    }

    /// The keys a step has that its action cannot honour, each a load error
    /// at the key.
    fn refuse_misplaced_keys(&mut self, pointer: &str, step: &Step) {
        let misplaced = [
            ("sentinel", step.sentinel_misplaced()),
            ("bounded", step.bounded_misplaced()),
            ("concurrency", step.concurrency_misplaced()),
        ];
        for (key, why) in misplaced {
            if let Some(why) = why {
                self.error(&format!("{pointer}/{key}"), why.to_string());
            }
        }
        if !step.handshake && step.on_main_session() {
            // The main session's handshake is the scenario's `handshake:`
            // key; a step can only skip the handshake of a session of its own.
            self.error(
                &format!("{pointer}/handshake"),
                "a step's handshake: false needs a `session:` of the step's own (not main); for the main session, set handshake: false on the scenario".to_string(),
            );
        }
    }

    /// `for_each` and `as` go together.
    fn build_for_each(&mut self, pointer: &str, obj: &Map<String, Value>) -> Option<ForEach> {
        let items = self.text(obj, pointer, "for_each");
        let var = self.text(obj, pointer, "as");
        let max_items = self.size(obj, pointer, "max_items");
        let concurrency = self.size(obj, pointer, "concurrency");
        if concurrency.is_some() && items.is_none() {
            self.error(
                &format!("{pointer}/concurrency"),
                "concurrency needs a for_each (the items whose requests go out at once)",
            );
        }
        match (items, var) {
            (Some(items), Some(var)) => Some(ForEach {
                items: self.expr(&format!("{pointer}/for_each"), &items),
                var,
                max_items: max_items.unwrap_or(DEFAULT_MAX_ITEMS),
                concurrency: concurrency.unwrap_or(1),
            }),
            (None, None) => None,
            (Some(_), None) => {
                self.error(
                    pointer,
                    format!("{} is missing required key as", describe_place(pointer)),
                );
                None
            }
            (None, Some(_)) => {
                self.error(
                    pointer,
                    format!(
                        "{} is missing required key for_each",
                        describe_place(pointer)
                    ),
                );
                None
            }
        }
    }

    /// `capture:`: name → CEL.
    fn build_captures(&mut self, pointer: &str, obj: &Map<String, Value>) -> Vec<(String, Expr)> {
        let Some(map) = self.mapping(obj, pointer, "capture") else {
            return Vec::new();
        };
        let at = format!("{pointer}/capture");
        let mut out = Vec::new();
        for name in map.keys() {
            if let Some(src) = self.text(map, &at, name) {
                let expr = self.expr(
                    &format!("{at}/{}", super::source::escape_pointer(name)),
                    &src,
                );
                out.push((name.clone(), expr));
            }
        }
        out
    }

    fn build_action(
        &mut self,
        pointer: &str,
        obj: &Map<String, Value>,
        kind: Option<&str>,
        params: Option<ValueTemplate>,
    ) -> Action {
        // The action key's own value, a string (its presence chose `kind`).
        let text = |loader: &mut Self, key: &str| {
            let text = loader.text(obj, pointer, key).unwrap_or_default();
            loader.template(&format!("{pointer}/{key}"), &text)
        };
        match kind {
            Some("request") => Action::Request {
                method: text(self, "request"),
                params,
                rpc_id: raw(obj, pointer, "rpc_id")
                    .map(|id| self.value_template(&format!("{pointer}/rpc_id"), id)),
                no_wait: self.flag(obj, pointer, "no_wait", false),
                paginate: self.text(obj, pointer, "paginate"),
                max_pages: self.size(obj, pointer, "max_pages"),
            },
            Some("notify") => Action::Notify {
                method: text(self, "notify"),
                params,
            },
            Some("send_raw") => Action::SendRaw {
                text: text(self, "send_raw"),
            },
            Some("wait_notification") => Action::WaitNotification {
                method: self
                    .text(obj, pointer, "wait_notification")
                    .unwrap_or_default(),
            },
            Some("http") => self.build_http(pointer, obj),
            Some(_) => Action::Sleep {
                ms: self.count(obj, pointer, "sleep_ms").unwrap_or(0),
            },
            None => Action::Check,
        }
    }
}

impl Loader<'_> {
    /// `cleanup:` steps undo; they carry no checks, since a verdict is
    /// already reached when they run.
    fn build_cleanup(&mut self, root: &Map<String, Value>) -> Vec<Step> {
        let items = self.list(root, "", "cleanup");
        let mut out = Vec::new();
        for (pointer, obj) in self.mappings(items, "/cleanup") {
            for key in ["expect", "assert", "capture", "skip_unless", "for_each"] {
                if obj.contains_key(key) {
                    let at = self.doc.key_position(&format!("{pointer}/{key}"));
                    self.error_at(
                        at,
                        format!("a cleanup step only undoes what the scenario changed; it cannot have `{key}`"),
                    );
                }
            }
            if let Some(step) = self.build_step(&pointer, &obj) {
                out.push(step);
            }
        }
        out
    }

    fn build_http(&mut self, pointer: &str, obj: &Map<String, Value>) -> Action {
        let base = format!("{pointer}/http");
        let spec = self
            .mapping(obj, pointer, "http")
            .cloned()
            .unwrap_or_default();
        if spec.contains_key("body") && spec.contains_key("text") {
            self.error(
                &base,
                "an http step has a JSON body or a text body, not both",
            );
        }
        let body = raw(&spec, &base, "body")
            .map(|body| self.value_template(&format!("{base}/body"), body));
        let text = self
            .text(&spec, &base, "text")
            .map(|t| self.template(&format!("{base}/text"), &t));
        let headers = self.build_headers(&base, &spec);
        let http_only = self.doc.value.get("transports") == Some(&serde_json::json!(["http"]));
        if !http_only {
            let at = self.doc.key_position(&base);
            self.error_at(
                at,
                "an http step only works over Streamable HTTP: the scenario needs `transports: [http]`",
            );
        }
        Action::Http {
            method: self
                .text(&spec, &base, "method")
                .unwrap_or_else(|| "POST".into()),
            body,
            text,
            headers,
            read_ms: self.count(&spec, &base, "read_ms").unwrap_or(0),
        }
    }

    /// Header overrides: a string (with `${…}`), or null to remove one.
    fn build_headers(
        &mut self,
        base: &str,
        spec: &Map<String, Value>,
    ) -> Vec<(Template, Option<Template>)> {
        let Some(headers) = self.mapping(spec, base, "headers") else {
            return Vec::new();
        };
        let at = format!("{base}/headers");
        let mut out = Vec::new();
        for (name, value) in headers {
            let pointer = format!("{at}/{}", super::source::escape_pointer(name));
            let name = self.template(&pointer, name);
            match value {
                Value::Null => out.push((name, None)),
                Value::String(v) => out.push((name, Some(self.template(&pointer, v)))),
                other => self.error(
                    &pointer,
                    format!(
                        "a header is a string, or null to remove it, found {}",
                        describe(other)
                    ),
                ),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::model::{Isolation, Level};

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

    /// The built-in catalog's expressions are parsed by the faster parser
    /// where it gives the environment's tree (`expr::parse`); this holds it
    /// to that for every one of them.
    #[test]
    fn every_builtin_expression_parses_as_the_environments_parser_parses_it() {
        let mut programs = crate::scenario::helpers::programs();
        for (path, text) in crate::builtin::files() {
            if path.ends_with(".yaml") && !matches!(*path, "requirements.yaml" | "sources.yaml") {
                load_among(&mut programs, path, text).unwrap_or_else(|e| panic!("{e}"));
            }
        }
        let (texts, env) = programs.texts();
        assert!(texts.len() > 1000, "only {} expressions", texts.len());
        let differ: Vec<String> = texts
            .iter()
            .filter_map(|t| crate::expr::agrees_with_environment_parser(env, t).err())
            .collect();
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    }

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
        assert!(s.may_wait(), "a bounded request may use up the call budget");
        assert!(load_str("t.yaml", GOOD)
            .is_ok_and(|s| s.handshake && !s.steps[0].bounded && !s.may_wait()));
        let sleeps = GOOD.replace(
            "steps:
",
            "steps:
  - sleep_ms: 300
",
        );
        assert!(load_str("t.yaml", &sleeps).is_ok_and(|s| s.may_wait()));
        let per_case = format!(
            "{GOOD}generate:\n  vars:\n    n: {{ int: [0, 3] }}\n  steps:\n    - request: ping\n      session: fresh\n      handshake: false\n  assert: [\"true\"]\n"
        );
        let per_case = load_str("t.yaml", &per_case).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(per_case.may_wait(), "a server started for each case");
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
    fn concurrency_is_read_on_a_request_for_each_and_refused_elsewhere() {
        let per_item = |extra: &str| {
            GOOD.replace(
                "    request: no/such/method\n",
                &format!(
                    "    for_each: \"[1, 2]\"\n    as: x\n{extra}    request: no/such/method\n"
                ),
            )
        };
        let s = load_str("t.yaml", &per_item("    concurrency: 4\n"))
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(s.steps[0].for_each.as_ref().map(|f| f.concurrency), Some(4));
        let s = load_str("t.yaml", &per_item("")).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(s.steps[0].for_each.as_ref().map(|f| f.concurrency), Some(1));
        let misplaced = [
            per_item("    concurrency: 4\n    paginate: tools\n"),
            per_item("    concurrency: 4\n    sentinel: true\n"),
            per_item("    concurrency: 4\n    id_value: 7\n").replace("id_value", "rpc_id"),
        ];
        for text in misplaced {
            let errs = errors(&text);
            assert!(
                errs.iter().any(|e| e.contains("concurrency above 1 needs")),
                "{text}: {errs:?}"
            );
        }
        let alone = GOOD.replace("    request:", "    concurrency: 2\n    request:");
        let errs = errors(&alone);
        assert!(
            errs.iter()
                .any(|e| e.contains("t.yaml:8:18: concurrency needs a for_each")),
            "{errs:?}"
        );
    }

    #[test]
    fn reused_scenarios_take_raw_bytes_and_refuse_catalog_changes() {
        let reused = |step: &str| {
            format!(
                "isolation: reused\n{}",
                GOOD.replace("    request: no/such/method\n", step)
            )
        };
        let literal =
            reused("    send_raw: '{\"jsonrpc\": \"2.0\", \"method\": \"notifications/x\"}'\n");
        let s = load_str("t.yaml", &literal).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(s.isolation, Isolation::Reused);
        assert!(!s.may_break_connection(), "literal JSON-RPC needs no check");
        for garbage in [
            "    send_raw: 'not json'\n",
            "    send_raw: '{\"jsonrpc\": \"1.0\", \"id\": 1, \"method\": \"ping\"}'\n",
            "    send_raw: '${x}'\n",
        ] {
            let s = load_str("t.yaml", &reused(garbage)).unwrap_or_else(|e| panic!("{e:?}"));
            assert!(s.may_break_connection(), "{garbage}: checked before reuse");
        }
        let step = "    request: conform/mutate\n";
        assert!(
            errors(&reused(step))
                .iter()
                .any(|e| e.contains("isolation: reused, but") && e.contains("control hook")),
            "{step}: {:?}",
            errors(&reused(step))
        );
        // A scenario whose server is stopped after it may change the catalog.
        let ends = load_str("t.yaml", &format!("ends_server: true\n{}", reused(step)))
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(ends.ends_server);
        assert!(
            errors(&format!("handshake: false\n{}", reused("    request: a\n")))
                .iter()
                .any(|e| e.contains("handshake: false needs a fresh connection"))
        );
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

    const GENERATE: &str =
        "generate:\n  vars:\n    n: { int: [0, 3] }\n  assert:\n    - \"true\"\n";

    /// `GOOD` with a generate block, `from` in it replaced by `to`.
    fn generate(from: &str, to: &str) -> String {
        format!("{GOOD}{}", GENERATE.replace(from, to))
    }

    #[test]
    fn an_unknown_key_anywhere_names_the_nearest_allowed_one() {
        let http = |to: &str| {
            GOOD.replace("steps:", "transports: [http]\nsteps:")
                .replace(
                    "request: no/such/method\n    expect: { error: { code: -32601 } }",
                    to,
                )
        };
        let cases = [
            (GOOD.replace("title:", "titel:"), "t.yaml:2:1: unknown key 'titel' in the scenario; did you mean 'title'?"),
            (generate("  vars:", "  case: 4\n  vars:"), "t.yaml:14:3: unknown key 'case' in key 'generate'; did you mean 'cases'?"),
            (generate("[0, 3] }", "[0, 3], mx: 3 }"), "t.yaml:15:23: unknown key 'mx' in key 'generate.vars.n' (allowed: int)"),
            (generate("int: [0, 3]", "picks: \"[1]\""), "t.yaml:15:10: unknown key 'picks' in key 'generate.vars.n'; did you mean 'pick'?"),
            (GOOD.replace("message: must", "mesage: must"), "t.yaml:12:9: unknown key 'mesage' in step 1 key 'assert.0'; did you mean 'message'?"),
            (GOOD.replace("steps:", "spec:\n  - doc: jsonrpc-2.0\n    sectoin: x\nsteps:"), "t.yaml:8:5: unknown key 'sectoin' in key 'spec.0'; did you mean 'section'?"),
            (GOOD.replace("steps:", "requires:\n  - expr: \"true\"\n    reson: x\nsteps:"), "t.yaml:8:5: unknown key 'reson' in key 'requires.0'; did you mean 'reason'?"),
            (http("http: { methd: GET }"), "t.yaml:9:13: unknown key 'methd' in step 1 key 'http'; did you mean 'method'?"),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .filter_map(|(text, expected)| {
                let e = errors(text);
                (!e.iter().any(|e| e == expected)).then(|| format!("{expected}\n  got {e:?}"))
            })
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn a_shared_finding_names_known_transports() {
        let shared = |transports: &str| {
            GOOD.replace(
                "steps:",
                &format!("shared_finding:\n  note: n\n  see: docs/popular-servers.md#x\n  transports: {transports}\nsteps:"),
            )
        };
        assert_eq!(
            errors(&shared("[stdio, htp]")),
            ["t.yaml:9:23: key 'shared_finding.transports.1': \"htp\" is not one of stdio, http"]
        );
        let loaded = load_str("t.yaml", &shared("[stdio]"));
        let transports = loaded.map(|s| s.shared_finding.map(|f| f.transports));
        assert_eq!(transports.ok().flatten(), Some(vec!["stdio".to_string()]));
    }

    #[test]
    fn a_number_with_a_decimal_point_is_refused_where_a_count_goes() {
        // Each of these was read as no value at all (the schema's `integer`
        // takes 2.0): a timeout, a sleep or a case count silently defaulted.
        let step = |key: &str| format!("    {key}: 2.0\n    expect:");
        let cases = [
            (
                "scenario timeout_ms",
                GOOD.replace("steps:", "timeout_ms: 2.0\nsteps:"),
                "key 'timeout_ms'",
            ),
            (
                "step timeout_ms",
                GOOD.replace("    expect:", &step("timeout_ms")),
                "step 1 key 'timeout_ms'",
            ),
            (
                "max_pages",
                GOOD.replace(
                    "    expect:",
                    &format!("    paginate: tools\n{}", step("max_pages")),
                ),
                "step 1 key 'max_pages'",
            ),
            (
                "max_items",
                GOOD.replace(
                    "    expect:",
                    &format!("    for_each: \"[1]\"\n    as: x\n{}", step("max_items")),
                ),
                "step 1 key 'max_items'",
            ),
            (
                "sleep_ms",
                GOOD.replace(
                    "    expect:",
                    "  - sleep_ms: 2.0\n  - request: x\n    expect:",
                ),
                "step 2 key 'sleep_ms'",
            ),
            (
                "read_ms",
                GOOD.replace("steps:", "transports: [http]\nsteps:")
                    .replace(
                        "request: no/such/method\n    expect: { error: { code: -32601 } }",
                        "http: { method: GET, read_ms: 2.0 }",
                    ),
                "step 1 key 'http.read_ms'",
            ),
            (
                "cases",
                generate("  vars:", "  cases: 2.0\n  vars:"),
                "key 'generate.cases'",
            ),
            (
                "max_shrinks",
                generate("  vars:", "  max_shrinks: 2.0\n  vars:"),
                "key 'generate.max_shrinks'",
            ),
            (
                "subset min",
                generate("int: [0, 3]", "subset: \"[1]\", min: 2.0"),
                "key 'generate.vars.n.min'",
            ),
            (
                "text max_len",
                generate("int: [0, 3]", "text: [ascii], max_len: 2.0"),
                "key 'generate.vars.n.max_len'",
            ),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .filter_map(|(what, text, place)| {
                let e = errors(text);
                let expected = format!(
                    "{place} takes a whole number (written without a decimal point), found 2.0"
                );
                (e.len() != 1 || !e[0].ends_with(&expected)).then(|| format!("{what}: {e:?}"))
            })
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// The builder's own errors, without the schema in front of it: what
    /// it makes of a value the schema would have refused, had the two
    /// drifted apart.
    pub(super) fn built_unchecked(text: &str) -> Vec<String> {
        let doc = parse_yaml(text).unwrap_or_else(|e| panic!("{e}"));
        let mut loader = Loader {
            file: "t.yaml",
            doc,
            errors: Vec::new(),
            programs: &mut crate::scenario::helpers::programs(),
        };
        let _ = loader.build();
        loader.errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn the_builder_refuses_a_malformed_key_rather_than_drop_it() {
        let at_step = |to: &str| GOOD.replace("    expect:", &format!("{to}\n    expect:"));
        let cases = [
            // A malformed `spec:` entry was dropped by `.ok()`, and with it
            // every quote of the scenario.
            (GOOD.replace("steps:", "spec:\n  - doc: x\n    sectoin: y\nsteps:"), "t.yaml:7:5: key 'spec.0': unknown field `sectoin`"),
            (GOOD.replace("steps:", "spec:\n  - section: y\nsteps:"), "t.yaml:7:5: key 'spec.0': missing field `doc`"),
            (GOOD.replace("steps:", "spec: [5]\nsteps:"), "t.yaml:6:8: key 'spec.0' must be a mapping, found 5"),
            (GOOD.replace("steps:", "spec: x\nsteps:"), "t.yaml:6:7: key 'spec' takes a list, found \"x\""),
            (GOOD.replace("steps:", "requires: 5\nsteps:"), "t.yaml:6:11: requires takes a CEL string or a list"),
            (GOOD.replace("steps:", "requires:\n  - expr: \"true\"\nsteps:"), "t.yaml:7:5: key 'requires.0' is missing required key reason"),
            (GOOD.replace("steps:", "isolation: sometimes\nsteps:"), "t.yaml:6:12: isolation is fresh, shared or reused, not 'sometimes'"),
            (GOOD.replace("steps:", "transports: [tcp]\nsteps:"), "t.yaml:6:14: unknown transport 'tcp'"),
            (GOOD.replace("steps:", "fixture: other\nsteps:"), "t.yaml:6:10: unknown fixture 'other'"),
            (GOOD.replace("steps:", "isolation: shared\nhands_on: true\nsteps:"), "t.yaml:7:11: hands_on: true is for isolation: fresh (other scenarios' servers serve on already)"),
            (GOOD.replace("steps:", "isolation: shared\nreused_in_eras: [2025-11-25]\nsteps:"), "t.yaml:7:17: reused_in_eras is for isolation: fresh scenarios"),
            (GOOD.replace("steps:", "reused_in_eras: [2026-07-28]\nsteps:").replace("no/such/method", "conform/mutate"), "t.yaml:8:5: isolation: reused, but the step changes the server's catalog (control hook); leave the era out of reused_in_eras"),
            (GOOD.replace("steps:", "isolation: fresh\nhands_on: true\nreused_in_eras: [2025-11-25, 2031-01-01]\nsteps:"), "t.yaml:8:30: reused_in_eras names '2031-01-01', not a protocol version this harness knows"),
            (GOOD.replace("steps:", "isolation: shared\nends_server: true\nsteps:"), "t.yaml:7:14: ends_server: true is for isolation: reused (a fresh scenario's server is stopped after it anyway; a shared one must stay as it was)"),
            (GOOD.replace("steps:", "confirm_fresh: true\nsteps:"), "t.yaml:6:16: confirm_fresh: true is for isolation: reused scenarios that hand their server on"),
            (GOOD.replace("steps:", "reuse_group: x\nsteps:"), "t.yaml:6:14: reuse_group is for isolation: reused (it names the scenarios a reused server is handed on between)"),
            (GOOD.replace("steps:", "hands_on: true\nsteps:").replace("    request: no/such/method", "    session: b\n    handshake: false\n    request: no/such/method"), "t.yaml:8:5: hands_on: true, but the step opens a session without the handshake; a reused scenario could not take it"),
            (GOOD.replace("steps:", "handshake: \"no\"\nsteps:"), "t.yaml:6:12: key 'handshake' takes true or false, found \"no\""),
            (GOOD.replace("steps:", "eras: [2025, x]\nsteps:"), "t.yaml:6:8: key 'eras.0' takes a string, found 2025"),
            (GOOD.replace("level: MUST", "level: MUSTY"), "t.yaml:4:8: key 'level' takes one of MUST, SHOULD, MAY, INFO, found \"MUSTY\""),
            (GOOD.replace("title: unknown methods get -32601\n", ""), "t.yaml:1:1: the scenario is missing required key title"),
            (GOOD.replace("  - id: r\n", "  - 5\n  - id: r\n"), "t.yaml:7:5: step 1 must be a mapping, found 5"),
            (at_step("    if: 5"), "t.yaml:9:9: step 1 key 'if' takes a string, found 5"),
            (at_step("    capture: { n: 5 }"), "t.yaml:9:19: step 1 key 'capture.n' takes a string, found 5"),
            (at_step("    skip_unless: { expr: \"true\" }"), "t.yaml:9:18: step 1 key 'skip_unless' is missing required key reason"),
            (at_step("    for_each: \"[1]\""), "t.yaml:7:5: step 1 is missing required key as"),
            (at_step("    timeout_ms: -1"), "t.yaml:9:17: step 1 key 'timeout_ms' takes a whole number"),
            (GOOD.replace("      - expr:", "      - 5\n      - expr:"), "t.yaml:11:9: an assert entry is a CEL string or {expr, message, level}, found 5"),
            (GOOD.replace("      - expr: \"r.error.code == -32601\"\n", "      - level: MUST\n"), "t.yaml:11:9: step 1 key 'assert.0' is missing required key expr"),
            (GOOD.replace("        message: must", "        level: MUSTY\n        message: must"), "t.yaml:12:16: step 1 key 'assert.0.level' takes one of MUST"),
            (GOOD.replace("steps:", "transports: [http]\nsteps:").replace("request: no/such/method\n    expect: { error: { code: -32601 } }", "http: { headers: { Accept: 5 } }"), "t.yaml:9:32: a header is a string, or null to remove it, found 5"),
            (format!("{GOOD}generate:\n  vars:\n    n: x\n  assert: [\"true\"]\n"), "t.yaml:15:8: a generator is a mapping, found \"x\""),
            (format!("{GOOD}generate:\n  vars:\n    n: {{ int: [0, 3] }}\n  cases: 9\n  examples:\n    - {{ n: 5 }}\n  assert: [\"true\"]\n"), "t.yaml:18:12: key 'generate.examples.0.n' takes a string, found 5"),
            (format!("{GOOD}generate:\n  vars:\n    n: {{ pick: 5 }}\n  assert: [\"true\"]\n"), "t.yaml:15:16: key 'generate.vars.n.pick' takes a string, found 5"),
            (format!("{GOOD}generate:\n  vars:\n    n: {{ subset: \"[1]\", repeats: 1 }}\n  assert: [\"true\"]\n"), "t.yaml:15:34: key 'generate.vars.n.repeats' takes true or false, found 1"),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .filter_map(|(text, expected)| {
                let e = built_unchecked(text);
                (!e.iter().any(|e| e.starts_with(expected)))
                    .then(|| format!("{expected}\n  got {e:?}"))
            })
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        for (text, expected) in &cases {
            // The schema refuses each first, with its own message.
            assert!(load_str("t.yaml", text).is_err(), "{expected}");
        }
        assert_eq!(built_unchecked(GOOD), Vec::<String>::new());
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
