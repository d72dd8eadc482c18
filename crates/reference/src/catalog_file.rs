//! The catalog file (`mcp-conform/catalog@1`): loading and validation.
//!
//! Heavy per-tool JSON (schemas, examples, guidance) is kept as JSON text,
//! as the file spells it, rather than `serde_json::Value`: a 100k-tool catalog would otherwise
//! cost several hundred megabytes of small allocations, and those fields are
//! only needed when one tool is described or called.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

/// The only catalog format this server reads.
pub const FORMAT: &str = "mcp-conform/catalog@1";

/// Longest tool name accepted; keeps `?tools=` lists and cursors bounded.
const MAX_NAME_LEN: usize = 128;

/// JSON text, parsed on demand. Shared (`Arc`) so that identical
/// texts — e.g. the few distinct annotation sets — are stored once.
#[derive(Clone, PartialEq, Eq)]
pub struct JsonText(Arc<str>);

thread_local! {
    /// Serialisation scratch space: writing into a reused buffer and copying
    /// once into an exact-size allocation avoids the trail of freed,
    /// doubling buffers that would fragment the heap of a big catalog.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// Labels seen while a catalog is being parsed (see [`Catalog::from_slice`]).
    static LABELS: RefCell<Option<HashMap<Box<str>, Arc<str>>>> = const { RefCell::new(None) };
}

/// A shared copy of `s`: while a catalog is being parsed, equal labels get
/// one allocation (a big catalog repeats a few dozen of them in every tool).
fn label_arc(s: String) -> Arc<str> {
    LABELS.with(|labels| match labels.borrow_mut().as_mut() {
        Some(map) => match map.get(s.as_str()) {
            Some(shared) => Arc::clone(shared),
            None => {
                let shared: Arc<str> = Arc::from(s.as_str());
                map.insert(s.into_boxed_str(), Arc::clone(&shared));
                shared
            }
        },
        None => s.into(),
    })
}

/// Turns label sharing on for its lifetime (and off on every exit path).
struct LabelScope;

impl LabelScope {
    fn enter() -> Self {
        LABELS.with(|l| *l.borrow_mut() = Some(HashMap::new()));
        LabelScope
    }
}

impl Drop for LabelScope {
    fn drop(&mut self) {
        LABELS.with(|l| *l.borrow_mut() = None);
    }
}

impl JsonText {
    /// The parsed value. The text was checked by `serde_json` when it was
    /// read, so it always parses; `Null` is only a defensive fallback.
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }

    pub fn is_null(&self) -> bool {
        &*self.0 == "null"
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for JsonText {
    fn default() -> Self {
        JsonText("null".into())
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Category {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
}

/// A group or a tag: both carry the same three fields; a group may also
/// belong to other groups (the grouping extension's nested groups).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Label {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// The groups this group belongs to (groups only; a tag has none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

/// A tool as the catalog file spells it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolFile {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub full_description: String,
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub examples: Value,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub usage_guidance: Value,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub error_guidance: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[serde(default)]
    pub groups: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub annotations: Value,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audience: Vec<String>,
    /// Client capabilities a call needs (`sampling`, `elicitation`, `roots`):
    /// in 2026-07-28 the server asks for them with an `InputRequiredResult`,
    /// or refuses with -32021 when the client did not declare them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires_client: Vec<String>,
}

/// A tool, stored compactly: the fields every list and search touches are
/// plain strings, labels are shared, and everything only a description read
/// or a call needs (full description, input schema, examples, guidance,
/// audience) is one JSON text. A 100k-tool catalog fits in about a third of
/// the memory the file-shaped struct would take.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(from = "ToolSource", into = "ToolFile")]
pub struct Tool {
    pub name: Box<str>,
    pub title: Box<str>,
    pub description: Box<str>,
    pub category: Option<Arc<str>>,
    pub groups: Box<[Arc<str>]>,
    pub tags: Box<[Arc<str>]>,
    pub annotations: JsonText,
    /// See [`ToolFile::requires_client`].
    pub requires_client: Box<[Arc<str>]>,
    details: JsonText,
    visible: bool,
    /// Whether `inputSchema` is an object with `"type": "object"`, decided
    /// while the schema is at hand so validation need not parse it again.
    object_schema: bool,
    /// Whether `inputSchema` may mark a parameter with `x-mcp-header`
    /// (its text names the keyword), so a 2026-07-28 listing parses only
    /// those schemas to show the marked parameters.
    header_parameters: bool,
}

/// The parts of a tool's details that a full `tools/list` entry shows
/// (`Null` where the catalog leaves them out).
#[derive(Debug, Default, Deserialize)]
pub struct SchemaAndExamples {
    #[serde(rename = "inputSchema", default)]
    pub input_schema: Value,
    #[serde(default)]
    pub examples: Value,
}

/// A tool as it is read from a catalog file: the heavy fields stay raw JSON
/// text, since they are only stored (as [`JsonText`]) and never inspected.
/// Building `Value`s for them and writing them back out was most of the
/// reference server's start-up time.
#[derive(Deserialize)]
struct ToolSource {
    name: String,
    #[serde(default)]
    title: String,
    description: String,
    #[serde(default)]
    full_description: String,
    #[serde(rename = "inputSchema")]
    input_schema: Box<RawValue>,
    #[serde(default)]
    examples: Option<Box<RawValue>>,
    #[serde(default)]
    usage_guidance: Option<Box<RawValue>>,
    #[serde(default)]
    error_guidance: Option<Box<RawValue>>,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    groups: Vec<String>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    annotations: Option<Box<RawValue>>,
    #[serde(default)]
    audience: Vec<String>,
    #[serde(default)]
    requires_client: Vec<String>,
}

/// Just enough of a schema to tell whether it is an object schema; every
/// other key is skipped without being stored.
#[derive(Deserialize)]
struct SchemaHead<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

/// The schema keyword of MCP 2026-07-28 that maps a tool parameter to a
/// request header (Streamable HTTP, Custom Headers from Tool Parameters).
pub const HEADER_KEYWORD: &str = "x-mcp-header";

/// Whether raw JSON text may hold `word` in a string: spelled out, or
/// behind an escape sequence that could spell it.
fn may_name(raw: &str, word: &str) -> bool {
    raw.contains(word) || raw.contains("\\u")
}

fn raw_is_object_schema(raw: &RawValue) -> bool {
    serde_json::from_str::<SchemaHead>(raw.get())
        .is_ok_and(|head| head.kind.as_deref() == Some("object"))
}

/// `{"full_description":…,"inputSchema":…,…}` assembled from raw texts; the
/// same keys, in the same order, as `From<ToolFile>` writes.
fn details_text(src: &ToolSource) -> JsonText {
    SCRATCH.with(|buf| {
        let mut buf = buf.borrow_mut();
        buf.clear();
        buf.extend_from_slice(b"{\"full_description\":");
        // Writing a string into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *buf, &src.full_description);
        buf.extend_from_slice(b",\"inputSchema\":");
        buf.extend_from_slice(src.input_schema.get().as_bytes());
        for (key, raw) in [
            ("examples", &src.examples),
            ("usage_guidance", &src.usage_guidance),
            ("error_guidance", &src.error_guidance),
        ] {
            if let Some(raw) = raw.as_deref().filter(|r| r.get() != "null") {
                buf.extend_from_slice(format!(",\"{key}\":").as_bytes());
                buf.extend_from_slice(raw.get().as_bytes());
            }
        }
        if !src.audience.is_empty() {
            buf.extend_from_slice(b",\"audience\":");
            let _ = serde_json::to_writer(&mut *buf, &src.audience);
        }
        buf.push(b'}');
        let text = std::str::from_utf8(&buf).unwrap_or("null");
        JsonText(Arc::from(text))
    })
}

impl From<ToolSource> for Tool {
    fn from(src: ToolSource) -> Tool {
        let details = details_text(&src);
        let annotations = match src.annotations.as_deref() {
            Some(raw) if raw.get() != "null" => JsonText(label_arc(raw.get().to_string())),
            _ => JsonText::default(),
        };
        Tool {
            object_schema: raw_is_object_schema(&src.input_schema),
            header_parameters: may_name(src.input_schema.get(), HEADER_KEYWORD),
            visible: src.audience.is_empty(),
            details,
            annotations,
            name: src.name.into(),
            title: src.title.into(),
            description: src.description.into(),
            category: src.category.map(label_arc),
            groups: src.groups.into_iter().map(label_arc).collect(),
            tags: src.tags.into_iter().map(label_arc).collect(),
            requires_client: src.requires_client.into_iter().map(label_arc).collect(),
        }
    }
}

impl From<ToolFile> for Tool {
    /// Built values (the generator's, the control hook's) take the same path
    /// as a parsed file: each heavy field becomes raw JSON text once.
    fn from(f: ToolFile) -> Tool {
        let raw = |v: &Value| serde_json::value::to_raw_value(v).ok();
        let present = |v: &Value| if v.is_null() { None } else { raw(v) };
        Tool::from(ToolSource {
            // A `Value` always serialises; the default is `null`.
            input_schema: raw(&f.input_schema).unwrap_or_default(),
            examples: present(&f.examples),
            usage_guidance: present(&f.usage_guidance),
            error_guidance: present(&f.error_guidance),
            annotations: present(&f.annotations),
            name: f.name,
            title: f.title,
            description: f.description,
            full_description: f.full_description,
            category: f.category,
            groups: f.groups,
            tags: f.tags,
            audience: f.audience,
            requires_client: f.requires_client,
        })
    }
}

impl From<Tool> for ToolFile {
    fn from(t: Tool) -> ToolFile {
        let mut d = t.details();
        let mut take = |key: &str| d.get_mut(key).map(Value::take).unwrap_or(Value::Null);
        let full_description = match take("full_description") {
            Value::String(s) => s,
            _ => String::new(),
        };
        let audience = match take("audience") {
            Value::Array(items) => items
                .into_iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        ToolFile {
            input_schema: take("inputSchema"),
            examples: take("examples"),
            usage_guidance: take("usage_guidance"),
            error_guidance: take("error_guidance"),
            full_description,
            audience,
            name: t.name.into(),
            title: t.title.into(),
            description: t.description.into(),
            category: t.category.map(|c| c.to_string()),
            groups: t.groups.iter().map(|g| g.to_string()).collect(),
            tags: t.tags.iter().map(|g| g.to_string()).collect(),
            annotations: t.annotations.value(),
            requires_client: t.requires_client.iter().map(|c| c.to_string()).collect(),
        }
    }
}

impl Tool {
    /// Tools restricted to an audience are invisible to the default
    /// principal, which is the only principal this server has.
    pub fn is_visible(&self) -> bool {
        self.visible
    }

    /// `{full_description, inputSchema, examples?, usage_guidance?,
    /// error_guidance?, audience?}`.
    pub fn details(&self) -> Value {
        self.details.value()
    }

    /// Whether the input schema's text names `x-mcp-header` at all; when
    /// not, no parameter of it is marked.
    pub fn may_mark_header_parameters(&self) -> bool {
        self.header_parameters
    }

    pub fn input_schema(&self) -> Value {
        self.schema_and_examples().input_schema
    }

    /// `inputSchema` and `examples` alone, as a full listing shows them:
    /// the other details (the long descriptions and guidance) are skipped
    /// over rather than built, since every listing of a catalog reads these.
    pub fn schema_and_examples(&self) -> SchemaAndExamples {
        serde_json::from_str(self.details.as_str()).unwrap_or_default()
    }

    pub fn category_id(&self) -> Option<&str> {
        self.category.as_deref()
    }

    pub fn has_group(&self, name: &str) -> bool {
        self.groups.iter().any(|g| &**g == name)
    }

    pub fn has_tag(&self, name: &str) -> bool {
        self.tags.iter().any(|t| &**t == name)
    }

    pub fn groups_json(&self) -> Value {
        Value::Array(
            self.groups
                .iter()
                .map(|g| Value::String(g.to_string()))
                .collect(),
        )
    }

    pub fn tags_json(&self) -> Value {
        Value::Array(
            self.tags
                .iter()
                .map(|g| Value::String(g.to_string()))
                .collect(),
        )
    }

    /// Replaces the group list (control hook).
    pub fn set_groups(&mut self, groups: Vec<Arc<str>>) {
        self.groups = groups.into();
    }

    pub fn set_tags(&mut self, tags: Vec<Arc<str>>) {
        self.tags = tags.into();
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptArgument {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub required: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub arguments: Vec<PromptArgument>,
    #[serde(default)]
    pub template: String,
    /// The groups the prompt belongs to (grouping extension membership).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    pub uri: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    #[serde(default)]
    pub description: String,
    #[serde(rename = "mimeType", default = "text_plain")]
    pub mime_type: String,
    #[serde(default)]
    pub text: String,
    /// The groups the resource belongs to (grouping extension membership).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

/// A task the server keeps (MCP 2025-11-25 tasks, listed by `tasks/list`):
/// finished work of earlier requests, so that `tasks/list` has entries that
/// carry group membership like every other primitive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    #[serde(
        rename = "statusMessage",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub status_message: String,
    #[serde(rename = "createdAt")]
    pub created_at: String,
    #[serde(rename = "lastUpdatedAt")]
    pub last_updated_at: String,
    /// Retention in milliseconds; `None` (JSON null) for unlimited.
    #[serde(default)]
    pub ttl: Option<u64>,
    /// The groups the task belongs to (grouping extension membership).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

fn text_plain() -> String {
    "text/plain".into()
}

/// A whole catalog, validated.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Catalog {
    pub format: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub categories: Vec<Category>,
    #[serde(default)]
    pub groups: Vec<Label>,
    #[serde(default)]
    pub tags: Vec<Label>,
    #[serde(default)]
    pub tools: Vec<Tool>,
    #[serde(default)]
    pub prompts: Vec<Prompt>,
    #[serde(default)]
    pub resources: Vec<Resource>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<Task>,
    /// The groups of the server's own `tool_descriptions` resource and its
    /// template (grouping extension membership).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_descriptions_groups: Vec<String>,
}

/// Why a catalog was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CatalogError {
    #[error("catalog is not valid JSON for {FORMAT}: {0}")]
    Parse(String),
    #[error("catalog format is {0:?}; expected {FORMAT:?}")]
    Format(String),
    #[error("duplicate {kind} {name:?}")]
    Duplicate { kind: &'static str, name: String },
    #[error("{kind} name {name:?} is invalid: {why}")]
    BadName {
        kind: &'static str,
        name: String,
        why: &'static str,
    },
    #[error("tool {tool:?} names {kind} {name:?}, which the catalog does not declare")]
    Undeclared {
        tool: String,
        kind: &'static str,
        name: String,
    },
    #[error("tool {tool:?}: inputSchema must be a JSON object with \"type\": \"object\"")]
    BadSchema { tool: String },
    #[error("{owner} belongs to group {name:?}, which the catalog does not declare")]
    UndeclaredGroup { owner: String, name: String },
    #[error("tag {tag:?} names groups; only groups can belong to groups")]
    TagInGroup { tag: String },
    #[error("group {0:?} belongs to itself")]
    SelfMember(String),
    #[error("groups belong to each other in a cycle: {}", .0.join(" -> "))]
    GroupCycle(Vec<String>),
}

impl Catalog {
    /// Parses and validates a catalog file.
    pub fn from_slice(bytes: &[u8]) -> Result<Catalog, CatalogError> {
        // Checked as UTF-8 once, whole: parsed from bytes, `serde_json`
        // checks every string again as it copies it, which was a tenth of
        // the start-up of a server of 10,000 tools (perf).
        let text = std::str::from_utf8(bytes)
            .map_err(|e| CatalogError::Parse(format!("the file is not UTF-8: {e}")))?;
        // Sharing labels while parsing (rather than deduplicating after)
        // never allocates the duplicates, so they leave no holes behind.
        let scope = LabelScope::enter();
        let parsed = serde_json::from_str::<Catalog>(text);
        drop(scope);
        let catalog = parsed.map_err(|e| CatalogError::Parse(e.to_string()))?;
        catalog.validate()?;
        Ok(catalog)
    }

    pub fn validate(&self) -> Result<(), CatalogError> {
        if self.format != FORMAT {
            return Err(CatalogError::Format(self.format.clone()));
        }
        unique("category", self.categories.iter().map(|c| c.id.as_str()))?;
        unique("group", self.groups.iter().map(|g| g.name.as_str()))?;
        unique("tag", self.tags.iter().map(|t| t.name.as_str()))?;
        unique("tool", self.tools.iter().map(|t| &*t.name))?;
        unique("prompt", self.prompts.iter().map(|p| p.name.as_str()))?;
        unique("resource", self.resources.iter().map(|r| r.uri.as_str()))?;
        unique("task", self.tasks.iter().map(|t| t.task_id.as_str()))?;
        for tool in &self.tools {
            self.validate_tool(tool)?;
        }
        self.validate_membership()
    }

    /// Checks the grouping extension's membership: every named group is
    /// declared, and groups nest without self-reference or cycles.
    fn validate_membership(&self) -> Result<(), CatalogError> {
        let declared = |owner: String, names: &[String]| -> Result<(), CatalogError> {
            match names
                .iter()
                .find(|n| !self.groups.iter().any(|g| g.name == **n))
            {
                Some(name) => Err(CatalogError::UndeclaredGroup {
                    owner,
                    name: name.clone(),
                }),
                None => Ok(()),
            }
        };
        for t in &self.tags {
            if !t.groups.is_empty() {
                return Err(CatalogError::TagInGroup {
                    tag: t.name.clone(),
                });
            }
        }
        for g in &self.groups {
            if g.groups.contains(&g.name) {
                return Err(CatalogError::SelfMember(g.name.clone()));
            }
            declared(format!("group {:?}", g.name), &g.groups)?;
        }
        for p in &self.prompts {
            declared(format!("prompt {:?}", p.name), &p.groups)?;
        }
        for r in &self.resources {
            declared(format!("resource {:?}", r.uri), &r.groups)?;
        }
        for t in &self.tasks {
            declared(format!("task {:?}", t.task_id), &t.groups)?;
        }
        declared(
            "the tool_descriptions resource".into(),
            &self.tool_descriptions_groups,
        )?;
        match group_cycle(&self.groups) {
            Some(cycle) => Err(CatalogError::GroupCycle(cycle)),
            None => Ok(()),
        }
    }

    /// Checks one tool against this catalog's declarations.
    pub fn validate_tool(&self, tool: &Tool) -> Result<(), CatalogError> {
        check_tool_name(&tool.name)?;
        if !tool.object_schema {
            return Err(CatalogError::BadSchema {
                tool: tool.name.to_string(),
            });
        }
        if let Some(cat) = &tool.category {
            if !self.categories.iter().any(|c| *c.id == **cat) {
                return Err(undeclared(tool, "category", cat));
            }
        }
        for group in &tool.groups {
            if !self.groups.iter().any(|g| *g.name == **group) {
                return Err(undeclared(tool, "group", group));
            }
        }
        for tag in &tool.tags {
            if !self.tags.iter().any(|t| *t.name == **tag) {
                return Err(undeclared(tool, "tag", tag));
            }
        }
        Ok(())
    }

    pub fn category(&self, id: &str) -> Option<&Category> {
        self.categories.iter().find(|c| c.id == id)
    }
}

/// A cycle among nested groups (`a -> b -> a`), if there is one: a
/// depth-first walk that meets a group still on its own path.
pub fn group_cycle(groups: &[Label]) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let index: HashMap<&str, usize> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| (g.name.as_str(), i))
        .collect();
    let mut mark = vec![Mark::New; groups.len()];
    for start in 0..groups.len() {
        if mark[start] != Mark::New {
            continue;
        }
        // (group, next parent to visit); an explicit stack, so a deep
        // nesting cannot overflow the call stack.
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        mark[start] = Mark::OnPath;
        while let Some(top) = path.last_mut() {
            let (g, next) = *top;
            top.1 += 1;
            let Some(parent) = groups[g].groups.get(next) else {
                mark[g] = Mark::Done;
                path.pop();
                continue;
            };
            // Undeclared parents are reported by the caller's own check.
            let Some(&p) = index.get(parent.as_str()) else {
                continue;
            };
            match mark[p] {
                Mark::Done => {}
                Mark::OnPath => {
                    let from = path.iter().position(|(x, _)| *x == p).unwrap_or(0);
                    let mut cycle: Vec<String> = path[from..]
                        .iter()
                        .map(|(x, _)| groups[*x].name.clone())
                        .collect();
                    cycle.push(groups[p].name.clone());
                    return Some(cycle);
                }
                Mark::New => {
                    mark[p] = Mark::OnPath;
                    path.push((p, 0));
                }
            }
        }
    }
    None
}

fn undeclared(tool: &Tool, kind: &'static str, name: &str) -> CatalogError {
    CatalogError::Undeclared {
        tool: tool.name.to_string(),
        kind,
        name: name.to_string(),
    }
}

/// Tool names travel inside `?tools=a,b` URIs, so commas, `&`, `=` and
/// whitespace would make them unaddressable.
pub fn check_tool_name(name: &str) -> Result<(), CatalogError> {
    let bad = |why| {
        Err(CatalogError::BadName {
            kind: "tool",
            name: name.to_string(),
            why,
        })
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > MAX_NAME_LEN {
        return bad("it is longer than 128 bytes");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return bad("only ASCII letters, digits, '_', '-' and '.' are allowed");
    }
    Ok(())
}

fn unique<'a>(
    kind: &'static str,
    names: impl Iterator<Item = &'a str>,
) -> Result<(), CatalogError> {
    let mut seen = HashSet::new();
    for name in names {
        if name.is_empty() {
            return Err(CatalogError::BadName {
                kind,
                name: String::new(),
                why: "it is empty",
            });
        }
        if !seen.insert(name) {
            return Err(CatalogError::Duplicate {
                kind,
                name: name.to_string(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MINI: &str = include_str!("../../../fixtures/catalogs/mini.json");

    fn mini_value() -> Value {
        serde_json::from_str(MINI).expect("mini.json is JSON")
    }

    fn load(value: &Value) -> Result<Catalog, CatalogError> {
        Catalog::from_slice(value.to_string().as_bytes())
    }

    #[test]
    fn mini_catalog_loads() {
        let cat = load(&mini_value()).expect("mini loads");
        assert_eq!(cat.name, "mini");
        assert_eq!(cat.tools.iter().filter(|t| t.is_visible()).count(), 14);
        assert_eq!(cat.tools.iter().filter(|t| !t.is_visible()).count(), 1);
        let create = &cat.tools[0];
        assert_eq!(
            create.input_schema()["required"],
            json!(["space_id", "title"])
        );
        let back = serde_json::to_value(create).expect("serialises");
        assert_eq!(back, mini_value()["tools"][0], "file form round-trips");
        let a = &cat.tools[1].tags[0];
        let b = cat
            .tools
            .iter()
            .flat_map(|t| t.tags.iter())
            .rfind(|t| ***t == **a)
            .expect("tag");
        assert!(Arc::ptr_eq(a, b), "labels are interned");
    }

    #[test]
    fn only_a_schema_that_may_name_the_header_keyword_is_looked_into() {
        let tool = |schema: &str| {
            let text = format!(r#"{{"name":"t","description":"d","inputSchema":{schema}}}"#);
            let src: ToolSource = serde_json::from_str(&text).expect("a tool");
            Tool::from(src).may_mark_header_parameters()
        };
        assert!(!tool(
            r#"{"type":"object","properties":{"a":{"type":"string"}}}"#
        ));
        assert!(tool(
            r#"{"type":"object","properties":{"a":{"x-mcp-header":"A"}}}"#
        ));
        // An escape could spell the keyword: such a schema is parsed.
        assert!(tool(
            r#"{"type":"object","properties":{"a":{"x\u002dmcp-header":"A"}}}"#
        ));
    }

    #[test]
    fn a_listing_reads_the_schema_and_examples_the_details_hold() {
        let cat = load(&mini_value()).expect("mini loads");
        let mut with_examples = 0;
        for tool in cat.tools.iter() {
            let details = tool.details();
            let shown = tool.schema_and_examples();
            assert_eq!(shown.input_schema, details["inputSchema"], "{}", tool.name);
            assert_eq!(shown.examples, details["examples"], "{}", tool.name);
            with_examples += usize::from(!shown.examples.is_null());
        }
        assert!(
            with_examples > 0,
            "the mini catalog has tools with examples"
        );
    }

    #[test]
    fn raw_loading_matches_the_file_form() {
        // Parsed from the (pretty-printed) file, with raw JSON kept as it is,
        // and built from ToolFile values: the same tools either way.
        let pretty = serde_json::to_string_pretty(&mini_value()).expect("prints");
        let raw = Catalog::from_slice(pretty.as_bytes()).expect("mini loads");
        for (tool, file) in raw
            .tools
            .iter()
            .zip(mini_value()["tools"].as_array().expect("tools"))
        {
            let built = Tool::from(serde_json::from_value::<ToolFile>(file.clone()).expect("tool"));
            assert_eq!(tool.details(), built.details(), "{}", tool.name);
            assert_eq!(tool.annotations.value(), built.annotations.value());
            assert_eq!(tool.is_visible(), built.is_visible());
            assert_eq!(serde_json::to_value(tool).ok(), Some(file.clone()));
        }
        let mut v = mini_value();
        v["tools"][0]["inputSchema"] = json!({"properties": {"type": "object"}});
        let err = Catalog::from_slice(v.to_string().as_bytes()).expect_err("no type");
        assert!(matches!(err, CatalogError::BadSchema { .. }), "{err}");
    }

    #[test]
    fn rejects_wrong_format_and_duplicates() {
        let mut v = mini_value();
        v["format"] = json!("other@2");
        assert!(matches!(load(&v), Err(CatalogError::Format(_))));
        let mut v = mini_value();
        let first = v["tools"][0].clone();
        v["tools"].as_array_mut().expect("array").push(first);
        let err = load(&v).expect_err("duplicate");
        assert_eq!(err.to_string(), "duplicate tool \"page_create\"");
    }

    #[test]
    fn rejects_undeclared_references() {
        for (key, value, kind) in [
            ("groups", json!(["nope"]), "group"),
            ("tags", json!(["nope"]), "tag"),
            ("category", json!("nope"), "category"),
        ] {
            let mut v = mini_value();
            v["tools"][0][key] = value;
            match load(&v) {
                Err(CatalogError::Undeclared { kind: k, .. }) => assert_eq!(k, kind),
                other => panic!("expected undeclared {kind}, got {other:?}"),
            }
        }
    }

    #[test]
    fn membership_names_declared_groups_that_nest_without_cycles() {
        let mut v = mini_value();
        v["groups"][0]["groups"] = json!(["tasks"]);
        v["prompts"][0]["groups"] = json!(["pages"]);
        v["resources"][0]["groups"] = json!(["discovery"]);
        v["tool_descriptions_groups"] = json!(["discovery"]);
        let cat = load(&v).expect("nested groups load");
        assert_eq!(cat.groups[0].groups, ["tasks"]);
        let back = serde_json::to_value(&cat).expect("serialises");
        assert_eq!(back["prompts"][0]["groups"], json!(["pages"]));
        assert!(
            back["prompts"][1].get("groups").is_none(),
            "empty is left out"
        );

        let mut bad = v.clone();
        bad["prompts"][0]["groups"] = json!(["nope"]);
        let err = load(&bad).expect_err("undeclared");
        assert!(matches!(err, CatalogError::UndeclaredGroup { .. }), "{err}");
        let mut bad = v.clone();
        bad["groups"][1]["groups"] = json!([bad["groups"][1]["name"].clone()]);
        assert!(matches!(load(&bad), Err(CatalogError::SelfMember(_))));
        let mut bad = v.clone();
        let first = bad["groups"][0]["name"].clone();
        let tasks = bad["groups"]
            .as_array_mut()
            .and_then(|g| g.iter_mut().find(|g| g["name"] == "tasks"))
            .expect("tasks group");
        tasks["groups"] = json!([first]);
        let err = load(&bad).expect_err("cycle");
        assert_eq!(
            err.to_string(),
            "groups belong to each other in a cycle: pages -> tasks -> pages"
        );
        let mut bad = v.clone();
        bad["tags"][0]["groups"] = json!(["pages"]);
        assert!(matches!(load(&bad), Err(CatalogError::TagInGroup { .. })));
    }

    #[test]
    fn cycles_are_found_however_deep() {
        let chain = |n: usize, closed: bool| -> Vec<Label> {
            (0..n)
                .map(|i| Label {
                    name: format!("g{i}"),
                    title: String::new(),
                    description: String::new(),
                    groups: if i + 1 < n {
                        vec![format!("g{}", i + 1)]
                    } else if closed {
                        vec!["g0".into()]
                    } else {
                        Vec::new()
                    },
                })
                .collect()
        };
        assert_eq!(group_cycle(&chain(100_000, false)), None);
        let cycle = group_cycle(&chain(5, true)).expect("cycle");
        assert_eq!(cycle, ["g0", "g1", "g2", "g3", "g4", "g0"]);
    }

    #[test]
    fn rejects_bad_names_and_schemas() {
        let mut v = mini_value();
        v["tools"][0]["name"] = json!("a,b");
        assert!(matches!(load(&v), Err(CatalogError::BadName { .. })));
        let mut v = mini_value();
        v["tools"][0]["inputSchema"] = json!({"type": "string"});
        assert!(matches!(load(&v), Err(CatalogError::BadSchema { .. })));
        assert!(matches!(
            Catalog::from_slice(b"{"),
            Err(CatalogError::Parse(_))
        ));
    }

    #[test]
    fn a_file_that_is_not_utf8_is_refused_before_parsing() {
        let err = Catalog::from_slice(b"{\"format\": \"\xff\"}").expect_err("not UTF-8");
        assert!(
            matches!(&err, CatalogError::Parse(m) if m.contains("not UTF-8") && m.contains("index 12")),
            "{err}"
        );
    }
}
