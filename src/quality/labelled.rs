//! A labelled query set (`--queries FILE`): real questions and the items
//! that answer them, optionally graded.
//!
//! ```yaml
//! catalog: tools            # default catalog of the queries (tools, prompts, resources)
//! queries:
//!   - query: create a page
//!     relevant: [page_create]
//!   - query: who can see this space
//!     relevant: { space_list_members: 2, space_set_permissions: 1 }
//!     style: paraphrase     # a label the figures are broken down by
//!     catalog: tools
//! ```

use serde_json::Value;

use super::{Feature, Query, QueryKind, Relevant};
use crate::scenario::source::{escape_pointer, parse_yaml, Position, SourceDoc};

/// A labelled set that cannot be used, with where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{position}: {message}")]
pub struct LabelledError {
    pub file: String,
    pub position: Position,
    pub message: String,
}

/// The style label of queries that give none.
pub const DEFAULT_STYLE: &str = "labelled";

/// Parses a labelled set; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Vec<Query>, LabelledError> {
    let doc = parse_yaml(text).map_err(|e| LabelledError {
        file: file.into(),
        position: e.position,
        message: e.message,
    })?;
    let cx = Cx { file, doc: &doc };
    let at = |pointer: &str, message: String| cx.at(pointer, message);
    let Value::Object(root) = &doc.value else {
        return Err(at("", "expected a mapping with a `queries:` list".into()));
    };
    for key in root.keys() {
        if !["catalog", "queries"].contains(&key.as_str()) {
            return Err(cx.at_key(
                &format!("/{}", escape_pointer(key)),
                format!("unknown key `{key}` (expected catalog, queries)"),
            ));
        }
    }
    let default = match root.get("catalog") {
        None => Feature::Tools,
        Some(v) => catalog(v).ok_or_else(|| at("/catalog", CATALOG_HELP.into()))?,
    };
    let Some(Value::Array(list)) = root.get("queries") else {
        return Err(at(
            "/queries",
            "`queries:` must be a list of {query, relevant}".into(),
        ));
    };
    if list.is_empty() {
        return Err(at("/queries", "`queries:` is empty".into()));
    }
    list.iter()
        .enumerate()
        .map(|(i, q)| entry(&cx, &format!("/queries/{i}"), q, default))
        .collect()
}

/// Where errors point: the file and the positions of its nodes.
struct Cx<'a> {
    file: &'a str,
    doc: &'a SourceDoc,
}

impl Cx<'_> {
    /// At the value of `pointer`.
    fn at(&self, pointer: &str, message: String) -> LabelledError {
        self.error(self.doc.position(pointer), message)
    }

    /// At the key of `pointer` (an unknown key).
    fn at_key(&self, pointer: &str, message: String) -> LabelledError {
        self.error(self.doc.key_position(pointer), message)
    }

    fn error(&self, position: Position, message: String) -> LabelledError {
        LabelledError {
            file: self.file.into(),
            position,
            message,
        }
    }
}

const CATALOG_HELP: &str = "`catalog` must be tools, prompts or resources";

fn catalog(v: &Value) -> Option<Feature> {
    v.as_str().and_then(Feature::parse)
}

fn entry(
    cx: &Cx<'_>,
    pointer: &str,
    value: &Value,
    default: Feature,
) -> Result<Query, LabelledError> {
    let at = |pointer: &str, message: String| cx.at(pointer, message);
    let Value::Object(map) = value else {
        return Err(at(
            pointer,
            "each query is a mapping {query, relevant}".into(),
        ));
    };
    for key in map.keys() {
        if !["query", "relevant", "style", "catalog"].contains(&key.as_str()) {
            return Err(cx.at_key(
                &format!("{pointer}/{}", escape_pointer(key)),
                format!("unknown key `{key}` (expected query, relevant, style, catalog)"),
            ));
        }
    }
    let text = match map.get("query") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(_) => {
            return Err(at(
                &format!("{pointer}/query"),
                "`query` must be a non-empty string".into(),
            ))
        }
        None => return Err(at(pointer, "missing `query`".into())),
    };
    let relevant = relevant(map.get("relevant"), &format!("{pointer}/relevant"), &at)?;
    let style = match map.get("style") {
        None => DEFAULT_STYLE.to_string(),
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(_) => {
            return Err(at(
                &format!("{pointer}/style"),
                "`style` must be a word such as own or paraphrase".into(),
            ))
        }
    };
    let feature = match map.get("catalog") {
        None => default,
        Some(v) => {
            catalog(v).ok_or_else(|| at(&format!("{pointer}/catalog"), CATALOG_HELP.into()))?
        }
    };
    Ok(Query {
        text,
        kind: QueryKind::Labelled(style),
        feature,
        relevant,
    })
}

/// `relevant`: a list of names (grade 1) or a mapping name → grade > 0.
fn relevant(
    value: Option<&Value>,
    pointer: &str,
    at: &dyn Fn(&str, String) -> LabelledError,
) -> Result<Vec<Relevant>, LabelledError> {
    let help = "`relevant` must be a non-empty list of item names, or a mapping of name to grade (a number above 0)";
    let out: Vec<Relevant> = match value {
        Some(Value::Array(names)) => names
            .iter()
            .enumerate()
            .map(|(i, n)| match n {
                Value::String(s) if !s.is_empty() => Ok(Relevant {
                    name: s.clone(),
                    grade: 1.0,
                }),
                _ => Err(at(
                    &format!("{pointer}/{i}"),
                    "an item name must be a non-empty string".into(),
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(Value::Object(graded)) => graded
            .iter()
            .map(|(name, g)| match g.as_f64() {
                Some(grade) if grade > 0.0 => Ok(Relevant {
                    name: name.clone(),
                    grade,
                }),
                _ => Err(at(
                    &format!("{pointer}/{name}"),
                    format!("the grade of `{name}` must be a number above 0"),
                )),
            })
            .collect::<Result<_, _>>()?,
        None => {
            return Err(at(
                pointer.rsplit_once('/').map_or("", |p| p.0),
                "missing `relevant`".into(),
            ))
        }
        Some(_) => return Err(at(pointer, help.into())),
    };
    if out.is_empty() {
        return Err(at(pointer, help.into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lists_grades_styles_and_catalogs() {
        let text = "catalog: tools\nqueries:\n  - query: create a page\n    relevant: [page_create]\n  - query: who sees it\n    relevant: {a: 2, b: 1}\n    style: paraphrase\n    catalog: prompts\n";
        let q = parse("q.yaml", text).expect("valid");
        assert_eq!(q.len(), 2);
        assert_eq!(q[0].kind, QueryKind::Labelled(DEFAULT_STYLE.into()));
        assert_eq!(q[0].relevant[0].grade, 1.0);
        assert_eq!(q[1].feature, Feature::Prompts);
        assert_eq!(q[1].kind.label(), "paraphrase");
        assert_eq!(q[1].relevant[0].grade, 2.0);
    }

    #[test]
    fn errors_name_file_line_and_column() {
        for (text, want) in [
            (
                "queries:\n  - query: x\n    relevant: []\n",
                "q.yaml:3:15: `relevant` must be",
            ),
            (
                "queries:\n  - query: x\n    relevant: [a]\n    weight: 3\n",
                "q.yaml:4:5: unknown key `weight`",
            ),
            (
                "queries:\n  - relevant: [a]\n",
                "q.yaml:2:5: missing `query`",
            ),
            (
                "queries:\n  - query: x\n    relevant: {a: 0}\n",
                "q.yaml:3:19: the grade of `a`",
            ),
            (
                "catalog: nope\nqueries: []\n",
                "q.yaml:1:10: `catalog` must be",
            ),
            ("queries: [\n", "q.yaml:"),
            ("- a\n", "q.yaml:1:1: expected a mapping"),
        ] {
            let err = parse("q.yaml", text).expect_err(text).to_string();
            assert!(err.starts_with(want), "{text:?}: {err}");
        }
    }
}
