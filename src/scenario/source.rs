//! YAML text → JSON value, remembering where every node came from so that any
//! later error (schema, pattern, CEL) can point at `file:line:col`.

use std::collections::HashMap;

use saphyr::{LoadableYamlNode, MarkedYamlOwned, ScalarOwned, YamlDataOwned};
use serde_json::{Map, Number, Value};

/// A 1-based line and column in a source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    pub line: usize,
    pub col: usize,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A parsed document and the position of every node, keyed by JSON Pointer.
#[derive(Debug, Clone, Default)]
pub struct SourceDoc {
    pub value: Value,
    positions: HashMap<String, Position>,
    key_positions: HashMap<String, Position>,
}

impl SourceDoc {
    /// The position of the node at `pointer`, or of its nearest ancestor.
    pub fn position(&self, pointer: &str) -> Position {
        let mut p = pointer.to_string();
        loop {
            if let Some(pos) = self.positions.get(&p) {
                return *pos;
            }
            match p.rfind('/') {
                Some(i) => p.truncate(i),
                None => return Position { line: 1, col: 1 },
            }
        }
    }

    /// The position of the key that introduces `pointer` (better for "unknown key").
    pub fn key_position(&self, pointer: &str) -> Position {
        self.key_positions
            .get(pointer)
            .copied()
            .unwrap_or_else(|| self.position(pointer))
    }
}

/// Why a YAML text could not become a JSON document.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{position}: {message}")]
pub struct SourceError {
    pub position: Position,
    pub message: String,
}

/// A data file (trace rules, client scenarios) that cannot be used: where,
/// and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}:{col}: {message}")]
pub struct PlacedError {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl PlacedError {
    /// An error at an item's `origin` (`file:line:col`).
    pub fn at(origin: &str, message: String) -> Self {
        let mut parts = origin.rsplitn(3, ':');
        let col = parts.next().and_then(|c| c.parse().ok()).unwrap_or(1);
        let line = parts.next().and_then(|l| l.parse().ok()).unwrap_or(1);
        PlacedError {
            file: parts.next().unwrap_or(origin).to_string(),
            line,
            col,
            message,
        }
    }
}

/// What an item reader found wrong: the JSON Pointer of the node, and why.
pub type Problem = (String, String);

/// Reads a YAML file holding one `key:` list, each item with `item(doc,
/// pointer, value)`; a problem is placed at its node's `file:line:col`.
pub fn load_list<T>(
    file: &str,
    text: &str,
    key: &str,
    mut item: impl FnMut(&SourceDoc, &str, &Value) -> Result<T, Problem>,
) -> Result<Vec<T>, PlacedError> {
    let doc = parse_yaml(text).map_err(|e| PlacedError {
        file: file.to_string(),
        line: e.position.line,
        col: e.position.col,
        message: e.message,
    })?;
    let place = |pointer: &str, message: String| {
        let p = doc.position(pointer);
        PlacedError {
            file: file.to_string(),
            line: p.line,
            col: p.col,
            message,
        }
    };
    let Some(list) = doc.value.get(key).and_then(Value::as_array) else {
        return Err(place(
            "",
            format!("expected a mapping with a `{key}:` list"),
        ));
    };
    list.iter()
        .enumerate()
        .map(|(i, v)| {
            let at = format!("/{key}/{i}");
            item(&doc, &at, v).map_err(|(ptr, msg)| place(&ptr, msg))
        })
        .collect()
}

/// The item at `at` as a mapping whose keys are all in `keys` (`what` names
/// the item in the message: "a rule", "a client scenario").
pub fn known_keys<'a>(
    v: &'a Value,
    at: &str,
    keys: &[&str],
    what: &str,
) -> Result<&'a Map<String, Value>, Problem> {
    let map = v
        .as_object()
        .ok_or_else(|| (at.to_string(), format!("{what} must be a mapping")))?;
    match map.keys().find(|k| !keys.contains(&k.as_str())) {
        Some(k) => Err((
            format!("{at}/{k}"),
            format!("unknown key `{k}`; {what} has {}", keys.join(", ")),
        )),
        None => Ok(map),
    }
}

/// Parses one YAML document into JSON with positions.
pub fn parse_yaml(text: &str) -> Result<SourceDoc, SourceError> {
    let docs = MarkedYamlOwned::load_from_str(text).map_err(|e| SourceError {
        position: Position {
            line: e.marker().line(),
            col: e.marker().col() + 1,
        },
        message: format!("invalid YAML: {}", e.info()),
    })?;
    let mut docs = docs.into_iter();
    let Some(root) = docs.next() else {
        return Err(SourceError {
            position: Position { line: 1, col: 1 },
            message: "the file is empty; expected a scenario mapping".into(),
        });
    };
    if let Some(extra) = docs.next() {
        return Err(SourceError {
            position: position_of(&extra),
            message: "a scenario file holds exactly one YAML document".into(),
        });
    }
    let mut doc = SourceDoc::default();
    doc.value = convert(&root, String::new(), &mut doc)?;
    Ok(doc)
}

fn position_of(node: &MarkedYamlOwned) -> Position {
    Position {
        line: node.span.start.line(),
        col: node.span.start.col() + 1,
    }
}

/// Escapes a key for use in a JSON Pointer (RFC 6901).
pub fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn convert(
    node: &MarkedYamlOwned,
    pointer: String,
    doc: &mut SourceDoc,
) -> Result<Value, SourceError> {
    let position = position_of(node);
    doc.positions.insert(pointer.clone(), position);
    let err = |message: String| SourceError { position, message };
    Ok(match &node.data {
        YamlDataOwned::Value(scalar) => {
            scalar_to_json(scalar).ok_or_else(|| err("number is not finite".into()))?
        }
        YamlDataOwned::Representation(text, _, _) => Value::String(text.clone()),
        YamlDataOwned::Sequence(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                out.push(convert(item, format!("{pointer}/{i}"), doc)?);
            }
            Value::Array(out)
        }
        YamlDataOwned::Mapping(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                let Some(name) = key_text(key) else {
                    return Err(SourceError {
                        position: position_of(key),
                        message: "mapping keys must be strings".into(),
                    });
                };
                let child = format!("{pointer}/{}", escape_pointer(&name));
                doc.key_positions.insert(child.clone(), position_of(key));
                let converted = convert(value, child, doc)?;
                out.insert(name, converted);
            }
            Value::Object(out)
        }
        YamlDataOwned::Tagged(_, inner) => convert(inner, pointer, doc)?,
        YamlDataOwned::Alias(_) => {
            return Err(err(
                "YAML aliases are not supported in scenario files".into()
            ))
        }
        YamlDataOwned::BadValue => {
            return Err(err("value cannot be read (bad scalar for its tag)".into()))
        }
    })
}

fn key_text(key: &MarkedYamlOwned) -> Option<String> {
    match &key.data {
        YamlDataOwned::Value(ScalarOwned::String(s)) => Some(s.to_string()),
        YamlDataOwned::Value(ScalarOwned::Integer(i)) => Some(i.to_string()),
        YamlDataOwned::Value(ScalarOwned::Boolean(b)) => Some(b.to_string()),
        YamlDataOwned::Representation(s, _, _) => Some(s.clone()),
        _ => None,
    }
}

fn scalar_to_json(scalar: &ScalarOwned) -> Option<Value> {
    Some(match scalar {
        ScalarOwned::Null => Value::Null,
        ScalarOwned::Boolean(b) => Value::Bool(*b),
        ScalarOwned::Integer(i) => Value::Number((*i).into()),
        ScalarOwned::FloatingPoint(f) => Value::Number(Number::from_f64(f.into_inner())?),
        ScalarOwned::String(s) => Value::String(s.to_string()),
    })
}

/// Where something sits in its scenario file: a stable, readable id
/// (`steps[2]`, `steps[2].assert[0]`, `steps[1].expect.result.tools`,
/// `assert[0]`; scenarios/README.md) and its line and column.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    pub id: String,
    pub position: Position,
}

impl Place {
    /// The id of the node at a JSON Pointer into the scenario file:
    /// `/steps/2/assert/0/expr` → `steps[2].assert[0]` (an `expr` key only
    /// says where the expression of an entry is, so it is left out).
    pub fn id_of(pointer: &str) -> String {
        let mut id = String::new();
        let parts: Vec<&str> = pointer.split('/').skip(1).collect();
        for (i, part) in parts.iter().enumerate() {
            let part = part.replace("~1", "/").replace("~0", "~");
            if part == "expr" && i + 1 == parts.len() && i > 0 {
                break;
            }
            if part.parse::<usize>().is_ok() && !id.is_empty() {
                id.push_str(&format!("[{part}]"));
            } else {
                if !id.is_empty() {
                    id.push('.');
                }
                id.push_str(&part);
            }
        }
        id
    }

    /// `file:line:col`, the way a compiler points at a line.
    pub fn location(&self, file: &str) -> String {
        format!("{file}:{}", self.position)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn converts_and_remembers_positions() {
        let doc = parse_yaml("id: a\nsteps:\n  - request: tools/list\n    params: {x: 1}\n")
            .expect("parse");
        assert_eq!(
            doc.value,
            json!({"id": "a", "steps": [{"request": "tools/list", "params": {"x": 1}}]})
        );
        assert_eq!(
            doc.position("/steps/0/params/x"),
            Position { line: 4, col: 17 }
        );
        assert_eq!(
            doc.key_position("/steps/0/params"),
            Position { line: 4, col: 5 }
        );
        assert_eq!(
            doc.position("/steps/0/nope/deeper"),
            Position { line: 3, col: 5 }
        );
    }

    #[test]
    fn syntax_errors_carry_a_position() {
        let err = parse_yaml("id: [unclosed\n").expect_err("must fail");
        assert!(err.position.line >= 1, "{err}");
        assert!(err.message.starts_with("invalid YAML"), "{err}");
    }

    #[test]
    fn duplicate_keys_are_rejected() {
        assert!(parse_yaml("id: a\nid: b\n").is_err());
    }
}
