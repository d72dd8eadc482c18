//! Validation of server messages against JSON Schemas: the hand-written ones
//! shipped in `schemas/mcp-messages.schema.json`, and an official
//! schema the user points at with `--mcp-schema FILE`. Validators are compiled
//! once per definition and reused.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::Validator;
use serde_json::{json, Value};

/// The hand-written message schemas, shipped with the binary.
pub const MESSAGE_SCHEMAS: &str = include_str!("../schemas/mcp-messages.schema.json");

/// A schema document and its compiled definitions.
pub struct SchemaSet {
    name: String,
    root: Value,
    compiled: Mutex<HashMap<String, Arc<Result<Validator, String>>>>,
}

impl SchemaSet {
    pub fn new(name: &str, root: Value) -> Self {
        Self {
            name: name.to_string(),
            root,
            compiled: Mutex::new(HashMap::new()),
        }
    }

    /// Whether the document defines `def` (under `$defs` or draft-07 `definitions`).
    pub fn has(&self, def: &str) -> bool {
        self.pointer_for(def).is_some()
    }

    fn pointer_for(&self, def: &str) -> Option<String> {
        ["$defs", "definitions"]
            .into_iter()
            .find(|k| self.root.get(*k).and_then(|d| d.get(def)).is_some())
            .map(|k| format!("#/{k}/{def}"))
    }

    fn validator(&self, def: &str) -> Arc<Result<Validator, String>> {
        if let Some(v) = self.compiled.lock().ok().and_then(|c| c.get(def).cloned()) {
            return v;
        }
        let compiled = Arc::new(match self.pointer_for(def) {
            None => Err(format!("{} has no definition {def}", self.name)),
            Some(pointer) => {
                let mut schema = self.root.clone();
                if let Some(map) = schema.as_object_mut() {
                    map.insert("$ref".into(), json!(pointer));
                }
                jsonschema::validator_for(&schema)
                    .map_err(|e| format!("{} does not compile: {e}", self.name))
            }
        });
        if let Ok(mut c) = self.compiled.lock() {
            c.insert(def.to_string(), compiled.clone());
        }
        compiled
    }

    /// Every violation of `def` by `value`, as "path: message" lines.
    pub fn errors(&self, value: &Value, def: &str) -> Vec<String> {
        match self.validator(def).as_ref() {
            Err(e) => vec![e.clone()],
            Ok(v) => v
                .iter_errors(value)
                .map(|e| {
                    let path = e.instance_path().as_str().to_string();
                    let path = if path.is_empty() {
                        "(root)".to_string()
                    } else {
                        path
                    };
                    format!("{}: {path}: {}", self.name, e.masked())
                })
                .collect(),
        }
    }
}

/// The shipped hand-written schemas.
pub fn builtin() -> &'static SchemaSet {
    static SET: OnceLock<SchemaSet> = OnceLock::new();
    SET.get_or_init(|| {
        SchemaSet::new(
            "mcp-conform schema",
            serde_json::from_str(MESSAGE_SCHEMAS).unwrap_or(Value::Null),
        )
    })
}

/// The schemas one run validates against (`schema_errors` in CEL): the
/// shipped ones, and the user's `--mcp-schema` document when given. Each run
/// carries its own in its configuration, so two runs in one process never see
/// each other's schema. Cloning shares the compiled validators.
#[derive(Clone, Default)]
pub struct Schemas {
    user: Option<Arc<SchemaSet>>,
}

impl std::fmt::Debug for Schemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let user = self.user.as_ref().map(|u| u.name.as_str());
        f.debug_struct("Schemas").field("user", &user).finish()
    }
}

/// Why a `--mcp-schema` file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UserSchemaError {
    #[error("cannot read the file: {0}")]
    Read(#[from] std::io::Error),
    #[error("the file is not JSON: {0}")]
    NotJson(#[from] serde_json::Error),
    #[error("the schema has neither $defs nor definitions (expected an MCP schema.json)")]
    NoDefinitions,
}

impl Schemas {
    /// The shipped schemas and `root`, the user's document named `path`.
    pub fn with_user(path: &str, root: Value) -> Result<Self, UserSchemaError> {
        if root.get("$defs").is_none() && root.get("definitions").is_none() {
            return Err(UserSchemaError::NoDefinitions);
        }
        Ok(Self {
            user: Some(Arc::new(SchemaSet::new(&format!("schema {path}"), root))),
        })
    }

    /// The shipped schemas and the user's `--mcp-schema` file.
    pub fn with_user_file(path: &std::path::Path) -> Result<Self, UserSchemaError> {
        let text = std::fs::read_to_string(path)?;
        Self::with_user(&path.display().to_string(), serde_json::from_str(&text)?)
    }

    /// Violations of `def` by `value` in the shipped schema, and in the
    /// user's schema when one was given and it defines `def`.
    pub fn errors(&self, value: &Value, def: &str) -> Vec<String> {
        let mut out = builtin().errors(value, def);
        if let Some(user) = self.user.as_ref().filter(|u| u.has(def)) {
            out.extend(user.errors(value, def));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(value: &Value, def: &str) -> Vec<String> {
        Schemas::default().errors(value, def)
    }

    #[test]
    fn checks_messages_against_definitions() {
        let ok =
            json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}, "groups": ["g"]}]});
        assert!(errors(&ok, "ListToolsResult").is_empty());
        let bad = json!({"tools": [{"name": 3}]});
        let e = errors(&bad, "ListToolsResult");
        assert!(e.iter().any(|m| m.contains("/tools/0")), "{e:?}");
        assert!(!errors(&json!({"code": "x", "message": "m"}), "Error").is_empty());
        assert_eq!(
            errors(&json!({}), "NoSuchDef"),
            vec!["mcp-conform schema has no definition NoSuchDef".to_string()]
        );
    }

    /// A user schema that requires `mark` of every tool list.
    fn marking(path: &str) -> Schemas {
        let root = json!({"$defs": {"ListToolsResult": {"required": ["mark"]}}});
        Schemas::with_user(path, root).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_user_schema_adds_its_violations_to_the_shipped_ones() {
        let list = json!({"tools": []});
        assert!(errors(&list, "ListToolsResult").is_empty());
        let e = marking("u.json").errors(&list, "ListToolsResult");
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].starts_with("schema u.json: (root): "), "{e:?}");
        // A definition the user's document lacks is checked by the shipped one only.
        let shipped = errors(&json!({}), "Error");
        assert!(!shipped.is_empty());
        assert_eq!(marking("u.json").errors(&json!({}), "Error"), shipped);
    }

    #[test]
    fn each_set_of_schemas_keeps_its_own_user_schema() {
        let (one, two, none) = (marking("one.json"), marking("two.json"), Schemas::default());
        let list = json!({"tools": []});
        assert!(one.errors(&list, "ListToolsResult")[0].contains("one.json"));
        assert!(two.errors(&list, "ListToolsResult")[0].contains("two.json"));
        assert!(none.errors(&list, "ListToolsResult").is_empty());
    }

    #[test]
    fn a_document_without_definitions_is_no_user_schema() {
        let e = Schemas::with_user("x.json", json!({"type": "object"}));
        assert!(matches!(e, Err(UserSchemaError::NoDefinitions)));
    }
}
