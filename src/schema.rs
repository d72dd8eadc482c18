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

static USER: OnceLock<SchemaSet> = OnceLock::new();

/// Installs the `--mcp-schema` document (once per process).
pub fn set_user_schema(path: &str, root: Value) -> bool {
    USER.set(SchemaSet::new(&format!("schema {path}"), root))
        .is_ok()
}

/// Violations of `def` by `value` in the shipped schema, and in the user's
/// schema when one was given and it defines `def`.
pub fn errors(value: &Value, def: &str) -> Vec<String> {
    let mut out = builtin().errors(value, def);
    if let Some(user) = USER.get() {
        if user.has(def) {
            out.extend(user.errors(value, def));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
