//! A deterministic generator of large, realistic catalogs for benchmarks
//! (`serve-reference --catalog-gen N --out FILE`). The same N and seed
//! always give the same file.

use super::catalog_file::{
    Catalog, Category, Label, Prompt, PromptArgument, Resource, Tool, ToolFile, FORMAT,
};
use serde_json::{json, Value};
use std::collections::HashSet;

pub const DEFAULT_SEED: u64 = 0x6d63_702d_636f_6e66;

/// SplitMix64: tiny, fast and good enough for picking words.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// The 18 categories of seed 001, each with the entities its tools act on.
const CATEGORIES: &[(&str, &str, &str, &[&str])] = &[
    (
        "space",
        "Space Management",
        "Create, update, delete spaces and manage members",
        &["space", "member", "permission"],
    ),
    (
        "page",
        "Page Management",
        "Create, read, update, delete pages and history",
        &["page", "version", "template"],
    ),
    (
        "project",
        "Project Management",
        "Projects and milestones",
        &["project", "milestone"],
    ),
    (
        "task",
        "Task Management",
        "Create, update, assign, and track tasks",
        &["task", "subtask", "checklist"],
    ),
    (
        "user",
        "User Management",
        "User accounts and profiles",
        &["user", "profile"],
    ),
    (
        "comment",
        "Comments",
        "Comments and reactions",
        &["comment", "reaction"],
    ),
    (
        "group",
        "Group Management",
        "Groups and their members",
        &["group", "membership"],
    ),
    (
        "workspace",
        "Workspace",
        "Workspace settings and invites",
        &["workspace", "invite", "setting"],
    ),
    (
        "attachment",
        "Attachments",
        "File attachments",
        &["attachment", "file"],
    ),
    ("search", "Search", "Full-text search", &["index", "query"]),
    (
        "import_export",
        "Import and Export",
        "Import and export content",
        &["import", "export"],
    ),
    (
        "approval",
        "Approvals",
        "Approval workflows",
        &["approval", "review"],
    ),
    (
        "ai",
        "AI Generation",
        "AI-generated content",
        &["summary", "draft"],
    ),
    (
        "memory",
        "Agent Memory",
        "Memories an agent keeps",
        &["memory", "note"],
    ),
    (
        "research",
        "Research",
        "Research jobs and sources",
        &["job", "source"],
    ),
    (
        "navigation",
        "Navigation",
        "UI navigation",
        &["view", "link"],
    ),
    ("system", "System", "API discovery", &["webhook", "token"]),
    (
        "context",
        "Session Context",
        "Session context",
        &["context", "preference"],
    ),
];

/// Verb, description template (`{e}` = entity), tags, annotation kind.
const VERBS: &[(&str, &str, &str, Kind)] = &[
    ("create", "Create a new {e}", "create", Kind::Write),
    ("get", "Read one {e} by id", "read", Kind::Read),
    ("update", "Update the fields of a {e}", "write", Kind::Write),
    (
        "delete",
        "Delete a {e} permanently",
        "delete",
        Kind::Destroy,
    ),
    ("list", "List {e}s with paging", "read", Kind::Read),
    ("search", "Search {e}s by keyword", "search", Kind::Read),
    (
        "archive",
        "Archive a {e} so it no longer shows up",
        "write",
        Kind::Write,
    ),
    ("restore", "Restore an archived {e}", "write", Kind::Write),
    ("export", "Export a {e} as a file", "export", Kind::Read),
    ("duplicate", "Make a copy of a {e}", "create", Kind::Write),
    ("move", "Move a {e} to another parent", "write", Kind::Write),
    (
        "share",
        "Share a {e} with users or groups",
        "write",
        Kind::Write,
    ),
    ("lock", "Lock a {e} against edits", "write", Kind::Write),
    (
        "sync",
        "Synchronise a {e} with an external system",
        "write",
        Kind::Write,
    ),
    ("validate", "Check a {e} for problems", "read", Kind::Read),
    ("count", "Count {e}s matching a filter", "read", Kind::Read),
];

#[derive(Clone, Copy)]
enum Kind {
    Read,
    Write,
    Destroy,
}

const QUALIFIERS: &[(&str, &str)] = &[
    ("bulk", "for many items at once"),
    ("async", "as a background job"),
    ("draft", "as a draft"),
    ("recent", "limited to recent items"),
    ("shared", "among shared items"),
    ("owned", "owned by the current user"),
    ("scheduled", "on a schedule"),
    ("external", "from an external source"),
    ("audited", "with an audit trail"),
    ("preview", "as a preview without saving"),
];

const LIFECYCLE: &[&str] = &[
    "stable",
    "stable",
    "stable",
    "beta",
    "experimental",
    "deprecated",
];
const DOMAIN_TAGS: &[&str] = &[
    "document",
    "collaboration",
    "admin",
    "automation",
    "integration",
    "analytics",
];
const USE_CASES: &[(&str, &str)] = &[
    ("authoring", "Writing and editing content"),
    ("planning", "Planning work and tracking progress"),
    ("administration", "Administering the workspace"),
    ("discovery", "Finding tools and content"),
    ("collaboration", "Working with other people"),
    ("automation", "Automating repetitive work"),
];

/// Generates an `n`-tool catalog.
pub fn generate(n: usize, seed: u64) -> Catalog {
    let mut rng = Rng(seed);
    let mut names = HashSet::new();
    let mut tools = system_tools();
    for t in &tools {
        names.insert(t.name.to_string());
    }
    while tools.len() < n {
        let tool = random_tool(&mut rng, &mut names);
        tools.push(tool);
    }
    tools.truncate(n);
    Catalog {
        tasks: Vec::new(),
        format: FORMAT.into(),
        name: format!("generated-{n}"),
        description: format!("A synthetic catalog of {n} tools (seed {seed})."),
        categories: CATEGORIES
            .iter()
            .map(|(id, name, desc, _)| Category {
                id: id.to_string(),
                name: name.to_string(),
                description: desc.to_string(),
            })
            .collect(),
        groups: groups(),
        tags: tags(),
        tools,
        prompts: prompts(),
        resources: resources(&mut rng),
        tool_descriptions_groups: Vec::new(),
    }
}

fn groups() -> Vec<Label> {
    CATEGORIES
        .iter()
        .map(|(id, name, desc, _)| label(id, name, desc))
        .chain(
            USE_CASES
                .iter()
                .map(|(id, desc)| label(id, &title_case(id), desc)),
        )
        .collect()
}

fn tags() -> Vec<Label> {
    let mut names: Vec<&str> = vec![
        "stable",
        "beta",
        "experimental",
        "deprecated",
        "read-only",
        "destructive",
        "idempotent",
    ];
    names.extend(VERBS.iter().map(|v| v.2));
    names.extend(DOMAIN_TAGS);
    let mut seen = HashSet::new();
    names
        .into_iter()
        .filter(|n| seen.insert(*n))
        .map(|n| label(n, &title_case(n), &format!("Tools tagged {n}")))
        .collect()
}

fn label(name: &str, title: &str, desc: &str) -> Label {
    Label {
        name: name.into(),
        title: title.into(),
        description: desc.into(),
        groups: Vec::new(),
    }
}

fn title_case(s: &str) -> String {
    s.split(['_', '-'])
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn random_tool(rng: &mut Rng, names: &mut HashSet<String>) -> Tool {
    let (cat, _, _, entities) = *rng.pick(CATEGORIES);
    let entity = *rng.pick(entities);
    let (verb, template, verb_tag, kind) = *rng.pick(VERBS);
    let qualifier = rng.chance(60).then(|| *rng.pick(QUALIFIERS));
    let mut name = format!("{entity}_{verb}");
    if let Some((q, _)) = qualifier {
        name = format!("{name}_{q}");
    }
    if names.contains(&name) {
        let mut k = 2;
        while names.contains(&format!("{name}_{k}")) {
            k += 1 + rng.below(50);
        }
        name = format!("{name}_{k}");
    }
    names.insert(name.clone());
    let mut description = template.replace("{e}", entity);
    if let Some((_, phrase)) = qualifier {
        description = format!("{description} {phrase}");
    }
    let mut tags = vec![rng.pick(LIFECYCLE).to_string(), verb_tag.to_string()];
    tags.push(
        match kind {
            Kind::Read => "read-only",
            Kind::Write => "idempotent",
            Kind::Destroy => "destructive",
        }
        .to_string(),
    );
    if rng.chance(50) {
        tags.push(rng.pick(DOMAIN_TAGS).to_string());
    }
    tags.dedup();
    let mut groups = vec![cat.to_string()];
    if rng.chance(40) {
        groups.push(rng.pick(USE_CASES).0.to_string());
    }
    ToolFile {
        title: title_case(&name),
        full_description: format!(
            "{description}. Works on {entity}s in the {cat} area; ids are case-sensitive and returned by the list tools."
        ),
        input_schema: schema(verb, entity),
        examples: json!([{"description": description, "input": example(verb, entity)}]),
        usage_guidance: json!({"when_to_use": description}),
        error_guidance: json!({"NOT_FOUND": format!("No such {entity}; list them first.")}),
        annotations: annotations(kind),
        category: Some(cat.to_string()),
        name,
        description,
        groups,
        tags,
        audience: Vec::new(),
        requires_client: Vec::new(),
    }
    .into()
}

fn schema(verb: &str, entity: &str) -> Value {
    let id = format!("{entity}_id");
    match verb {
        "create" => json!({"type": "object", "properties": {
            "title": {"type": "string", "description": format!("Title of the new {entity}")},
            "description": {"type": "string"},
            "parent_id": {"type": "string"}}, "required": ["title"]}),
        "list" | "count" => json!({"type": "object", "properties": {
            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
            "cursor": {"type": "string"}}}),
        "search" => json!({"type": "object", "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100}}, "required": ["query"]}),
        _ => json!({"type": "object", "properties": {
            id.clone(): {"type": "string", "description": format!("Id of the {entity}")},
            "reason": {"type": "string"}}, "required": [id]}),
    }
}

fn example(verb: &str, entity: &str) -> Value {
    match verb {
        "create" => json!({"title": format!("New {entity}")}),
        "list" | "count" => json!({"limit": 10}),
        "search" => json!({"query": "roadmap"}),
        _ => json!({ format!("{entity}_id"): format!("{entity}_1") }),
    }
}

fn annotations(kind: Kind) -> Value {
    let (ro, destructive) = match kind {
        Kind::Read => (true, false),
        Kind::Write => (false, false),
        Kind::Destroy => (false, true),
    };
    json!({"readOnlyHint": ro, "destructiveHint": destructive})
}

/// The category-search tools, so large catalogs exercise that profile too.
fn system_tools() -> Vec<Tool> {
    let mk = |name: &str, desc: &str, schema: Value| -> Tool {
        ToolFile {
            name: name.into(),
            title: title_case(name),
            description: desc.into(),
            full_description: desc.into(),
            input_schema: schema,
            examples: json!([]),
            usage_guidance: Value::Null,
            error_guidance: Value::Null,
            category: Some("system".into()),
            groups: vec!["system".into(), "discovery".into()],
            tags: vec!["stable".into(), "read-only".into(), "search".into()],
            annotations: annotations(Kind::Read),
            audience: Vec::new(),
            requires_client: Vec::new(),
        }
        .into()
    };
    vec![
        mk(
            "tool_search",
            "Search the tool catalog by keyword, category or tags",
            json!({"type": "object", "properties": {
                "query": {"type": "string"}, "category": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}}}),
        ),
        mk(
            "list_categories",
            "List tool categories with tool counts",
            json!({"type": "object", "properties": {}}),
        ),
        mk(
            "get_tools_by_category",
            "List the tools of one category",
            json!({"type": "object", "properties": {"category": {"type": "string"}}, "required": ["category"]}),
        ),
    ]
}

fn prompts() -> Vec<Prompt> {
    ["summarize", "plan", "review", "translate", "outline"]
        .iter()
        .map(|p| Prompt {
            name: format!("{p}_content"),
            title: title_case(&format!("{p} content")),
            description: format!("{} a piece of content", title_case(p)),
            arguments: vec![PromptArgument {
                name: "target".into(),
                description: "What to work on".into(),
                required: true,
            }],
            template: format!("Please {p} {{{{target}}}}."),
            groups: Vec::new(),
        })
        .collect()
}

fn resources(rng: &mut Rng) -> Vec<Resource> {
    (0..20)
        .map(|i| {
            let (cat, name, desc, _) = *rng.pick(CATEGORIES);
            Resource {
                uri: format!("docs:///guides/{cat}/{i}"),
                name: format!("{cat}-guide-{i}"),
                title: format!("{name} guide {i}"),
                description: format!("How to use the {cat} tools"),
                mime_type: "text/markdown".into(),
                text: format!("# {name}\n\n{desc}. Guide number {i}."),
                groups: Vec::new(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_valid_and_unique() {
        let a = generate(500, 7);
        let b = generate(500, 7);
        assert_eq!(a.tools.len(), 500);
        assert_eq!(
            a.tools.iter().map(|t| &t.name).collect::<Vec<_>>(),
            b.tools.iter().map(|t| &t.name).collect::<Vec<_>>()
        );
        a.validate().expect("generated catalog validates");
        let text = serde_json::to_vec(&a).expect("serialises");
        let back = Catalog::from_slice(&text).expect("reloads");
        assert_eq!(back.tools.len(), 500);
        assert_ne!(
            generate(50, 8).tools[10].name,
            generate(50, 7).tools[10].name
        );
    }
}
