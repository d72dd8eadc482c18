//! The catalog file (`mcp-conform/catalog@1`): loading and validation.
//!
//! Heavy per-tool JSON (schemas, examples, guidance) is kept as compact JSON
//! text rather than `serde_json::Value`: a 100k-tool catalog would otherwise
//! cost several hundred megabytes of small allocations, and those fields are
//! only needed when one tool is described or called.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::collections::HashSet;
use std::fmt;

/// The only catalog format this server reads.
pub const FORMAT: &str = "mcp-conform/catalog@1";

/// Longest tool name accepted; keeps `?tools=` lists and cursors bounded.
const MAX_NAME_LEN: usize = 128;

/// Compact JSON text, parsed on demand.
#[derive(Clone, PartialEq, Eq)]
pub struct JsonText(Box<str>);

impl JsonText {
    pub fn from_value(value: &Value) -> Self {
        JsonText(value.to_string().into_boxed_str())
    }

    /// The parsed value. The text was produced by `serde_json` itself, so it
    /// always parses; `Null` is only a defensive fallback.
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }

    pub fn is_null(&self) -> bool {
        &*self.0 == "null"
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

impl<'de> Deserialize<'de> for JsonText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(|v| JsonText::from_value(&v))
    }
}

impl Serialize for JsonText {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(s)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Category {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
}

/// A group or a tag: both carry the same three fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Label {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    pub description: String,
    #[serde(default)]
    pub full_description: String,
    #[serde(rename = "inputSchema")]
    pub input_schema: JsonText,
    #[serde(default)]
    pub examples: JsonText,
    #[serde(default)]
    pub usage_guidance: JsonText,
    #[serde(default)]
    pub error_guidance: JsonText,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[serde(default)]
    pub groups: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub annotations: JsonText,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audience: Vec<String>,
}

impl Tool {
    /// Tools restricted to an audience are invisible to the default
    /// principal, which is the only principal this server has.
    pub fn is_visible(&self) -> bool {
        self.audience.is_empty()
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
}

impl Catalog {
    /// Parses and validates a catalog file.
    pub fn from_slice(bytes: &[u8]) -> Result<Catalog, CatalogError> {
        let catalog: Catalog =
            serde_json::from_slice(bytes).map_err(|e| CatalogError::Parse(e.to_string()))?;
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
        unique("tool", self.tools.iter().map(|t| t.name.as_str()))?;
        unique("prompt", self.prompts.iter().map(|p| p.name.as_str()))?;
        unique("resource", self.resources.iter().map(|r| r.uri.as_str()))?;
        for tool in &self.tools {
            self.validate_tool(tool)?;
        }
        Ok(())
    }

    /// Checks one tool against this catalog's declarations.
    pub fn validate_tool(&self, tool: &Tool) -> Result<(), CatalogError> {
        check_tool_name(&tool.name)?;
        if !is_object_schema(&tool.input_schema.value()) {
            return Err(CatalogError::BadSchema {
                tool: tool.name.clone(),
            });
        }
        if let Some(cat) = &tool.category {
            if !self.categories.iter().any(|c| &c.id == cat) {
                return Err(undeclared(tool, "category", cat));
            }
        }
        for group in &tool.groups {
            if !self.groups.iter().any(|g| &g.name == group) {
                return Err(undeclared(tool, "group", group));
            }
        }
        for tag in &tool.tags {
            if !self.tags.iter().any(|t| &t.name == tag) {
                return Err(undeclared(tool, "tag", tag));
            }
        }
        Ok(())
    }

    pub fn category(&self, id: &str) -> Option<&Category> {
        self.categories.iter().find(|c| c.id == id)
    }
}

fn undeclared(tool: &Tool, kind: &'static str, name: &str) -> CatalogError {
    CatalogError::Undeclared {
        tool: tool.name.clone(),
        kind,
        name: name.to_string(),
    }
}

fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
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

    const MINI: &str = include_str!("../../fixtures/catalogs/mini.json");

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
            create.input_schema.value()["required"],
            json!(["space_id", "title"])
        );
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
}
