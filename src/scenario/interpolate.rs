//! `${expr}` interpolation in params, patterns and raw text. The text between
//! the braces is a CEL expression over the same bindings as `assert`; a string
//! that is exactly one `${…}` takes the expression's JSON value, any other
//! string gets the value's text spliced in. `$${` writes a literal `${`.

use serde_json::{Map, Value};

use crate::expr::{Bindings, Compiled, ExprError, Programs};

/// One piece of an interpolated string.
#[derive(Debug, Clone, PartialEq)]
enum Piece<'a> {
    Text(std::borrow::Cow<'a, str>),
    Expr(&'a str),
}

/// Why a template cannot be split into text and expressions.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("unterminated ${{ in {0:?}")]
pub struct Unterminated(pub String);

fn split(template: &str) -> Result<Vec<Piece<'_>>, Unterminated> {
    let mut pieces = Vec::new();
    let mut rest = template;
    let mut text = String::new();
    while let Some(i) = rest.find("${") {
        if rest[..i].ends_with('$') {
            text.push_str(&rest[..i - 1]);
            text.push_str("${");
            rest = &rest[i + 2..];
            continue;
        }
        text.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let end = find_close(after).ok_or_else(|| Unterminated(template.to_string()))?;
        if !text.is_empty() {
            pieces.push(Piece::Text(std::mem::take(&mut text).into()));
        }
        pieces.push(Piece::Expr(after[..end].trim()));
        rest = &after[end + 1..];
    }
    text.push_str(rest);
    if !text.is_empty() {
        pieces.push(Piece::Text(text.into()));
    }
    Ok(pieces)
}

/// The closing brace of an interpolation, skipping braces inside CEL string
/// literals and nested map literals.
fn find_close(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(_), '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (Some(q), c) if c == q && !escaped => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '{') => depth += 1,
            (None, '}') if depth == 0 => return Some(i),
            (None, '}') => depth -= 1,
            _ => {}
        }
        escaped = false;
    }
    None
}

/// Why a template cannot be compiled: an unterminated `${`, or an
/// expression that does not compile.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TemplateError {
    #[error(transparent)]
    Unterminated(#[from] Unterminated),
    #[error("in ${{{expr}}}: {source}")]
    Expr { expr: String, source: ExprError },
}

/// Why interpolation failed at run time.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("in ${{{expr}}}: {source}")]
pub struct InterpolateError {
    pub expr: String,
    pub source: ExprError,
}

/// One piece of a compiled template.
#[derive(Debug, Clone, PartialEq)]
enum Hole {
    Text(String),
    Expr { source: String, program: Compiled },
}

/// A string with `${…}` holes, split and compiled when the scenario is
/// loaded, so a run only evaluates.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    source: String,
    pieces: Vec<Hole>,
}

impl Template {
    /// Splits `text` and compiles each expression (one text on its own:
    /// loading compiles with [`Template::compile_in`]).
    pub fn compile(text: &str) -> Result<Template, TemplateError> {
        Template::compile_in(&mut super::helpers::programs(), text)
    }

    /// Splits `text` and compiles each expression among `programs`.
    pub fn compile_in(programs: &mut Programs, text: &str) -> Result<Template, TemplateError> {
        if !text.contains("${") {
            return Ok(Template::literal(text));
        }
        let mut pieces = Vec::new();
        for piece in split(text)? {
            pieces.push(match piece {
                Piece::Text(t) => Hole::Text(t.into_owned()),
                Piece::Expr(e) => Hole::Expr {
                    source: e.to_string(),
                    program: programs.compile(e).map_err(|source| TemplateError::Expr {
                        expr: e.to_string(),
                        source,
                    })?,
                },
            });
        }
        Ok(Template {
            source: text.to_string(),
            pieces,
        })
    }

    /// A text without holes.
    pub fn literal(text: &str) -> Template {
        Template {
            source: text.to_string(),
            pieces: vec![Hole::Text(text.to_string())],
        }
    }

    /// The text as written in the scenario.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the text has no `${…}` (it renders as itself).
    pub fn is_literal(&self) -> bool {
        !self.pieces.iter().any(|p| matches!(p, Hole::Expr { .. }))
    }

    /// The value: a string, unless the whole text is one expression, which
    /// keeps its JSON type.
    pub fn render(&self, bindings: &Bindings) -> Result<Value, InterpolateError> {
        let eval = |source: &str, program: &Compiled| {
            program
                .eval(bindings)
                .map(keys_in_order)
                .map_err(|e| InterpolateError {
                    expr: source.to_string(),
                    source: e,
                })
        };
        match self.pieces.as_slice() {
            [Hole::Expr { source, program }] => return eval(source, program),
            [Hole::Text(t)] => return Ok(Value::String(t.clone())),
            _ => {}
        }
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Hole::Text(t) => out.push_str(t),
                Hole::Expr { source, program } => match eval(source, program)? {
                    Value::String(v) => out.push_str(&v),
                    other => out.push_str(&other.to_string()),
                },
            }
        }
        Ok(Value::String(out))
    }

    /// The value as text (JSON text when the expression gave no string).
    pub fn render_text(&self, bindings: &Bindings) -> Result<String, InterpolateError> {
        Ok(match self.render(bindings)? {
            Value::String(s) => s,
            other => other.to_string(),
        })
    }
}

/// `value` with the keys of every object in sorted order. A map built or
/// passed through by CEL comes out in hash order, which differs from run to
/// run; a message or a request must read the same under the same seed.
fn keys_in_order(mut value: Value) -> Value {
    sort_keys(&mut value);
    value
}

fn sort_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.sort_keys();
            map.values_mut().for_each(sort_keys);
        }
        Value::Array(items) => items.iter_mut().for_each(sort_keys),
        _ => {}
    }
}

/// A JSON value whose strings (and keys) may hold `${…}`, compiled when the
/// scenario is loaded; parts without any are kept as they are.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueTemplate {
    Literal(Value),
    Str(Template),
    Array(Vec<ValueTemplate>),
    Object(Vec<(Template, ValueTemplate)>),
}

impl ValueTemplate {
    /// Compiles every string of `value`; the first problem is the error
    /// (one value on its own: loading compiles with [`ValueTemplate::compile_in`]).
    pub fn compile(value: &Value) -> Result<ValueTemplate, TemplateError> {
        ValueTemplate::compile_in(&mut super::helpers::programs(), value)
    }

    /// [`ValueTemplate::compile`] among `programs`.
    pub fn compile_in(
        programs: &mut Programs,
        value: &Value,
    ) -> Result<ValueTemplate, TemplateError> {
        if !has_holes(value) {
            return Ok(ValueTemplate::Literal(value.clone()));
        }
        Ok(match value {
            Value::String(s) => ValueTemplate::Str(Template::compile_in(programs, s)?),
            Value::Array(items) => ValueTemplate::Array(
                items
                    .iter()
                    .map(|item| ValueTemplate::compile_in(programs, item))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(map) => ValueTemplate::Object(
                map.iter()
                    .map(|(k, v)| {
                        Ok((
                            Template::compile_in(programs, k)?,
                            ValueTemplate::compile_in(programs, v)?,
                        ))
                    })
                    .collect::<Result<_, TemplateError>>()?,
            ),
            other => ValueTemplate::Literal(other.clone()),
        })
    }

    /// Whether rendering gives the value as written.
    pub fn is_literal(&self) -> bool {
        matches!(self, ValueTemplate::Literal(_))
    }

    /// The value with every `${…}` replaced.
    pub fn render(&self, bindings: &Bindings) -> Result<Value, InterpolateError> {
        Ok(match self {
            ValueTemplate::Literal(v) => v.clone(),
            ValueTemplate::Str(t) => t.render(bindings)?,
            ValueTemplate::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|v| v.render(bindings))
                    .collect::<Result<_, _>>()?,
            ),
            ValueTemplate::Object(fields) => {
                let mut out = Map::new();
                for (k, v) in fields {
                    out.insert(k.render_text(bindings)?, v.render(bindings)?);
                }
                Value::Object(out)
            }
        })
    }
}

/// Whether any string (or key) of `value` holds `${`.
pub fn has_holes(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains("${"),
        Value::Array(items) => items.iter().any(has_holes),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains("${") || has_holes(v)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bindings() -> Bindings {
        Bindings::from(
            json!({"g": "pages", "n": 3, "all": {"result": {"tools": [{"name": "a"}]}}})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        )
    }

    fn render(v: Value) -> Result<Value, InterpolateError> {
        ValueTemplate::compile(&v)
            .unwrap_or_else(|e| panic!("{e}"))
            .render(&bindings())
    }

    fn text(t: &str) -> Result<Value, InterpolateError> {
        Template::compile(t)
            .unwrap_or_else(|e| panic!("{e}"))
            .render(&bindings())
    }

    #[test]
    fn whole_expression_keeps_its_type() {
        assert_eq!(
            render(json!({"groups": ["${g}"], "n": "${n}"})),
            Ok(json!({"groups": ["pages"], "n": 3}))
        );
        assert_eq!(
            render(json!("${all.result.tools[0]}")),
            Ok(json!({"name": "a"}))
        );
        assert_eq!(render(json!({"${g}": 1})), Ok(json!({"pages": 1})));
        assert!(ValueTemplate::compile(&json!({"a": [1, "x"]})).is_ok_and(|t| t.is_literal()));
    }

    #[test]
    fn a_map_reads_the_same_every_time() {
        let t = Template::compile(
            "got ${{'zeta': 1, 'alpha': {'y': 2, 'b': 3}, 'mid': [{'q': 1, 'a': 2}]}}",
        )
        .expect("compiles");
        let text = t.render_text(&bindings()).expect("renders");
        assert_eq!(
            text,
            r#"got {"alpha":{"b":3,"y":2},"mid":[{"a":2,"q":1}],"zeta":1}"#
        );
    }

    #[test]
    fn mixed_text_is_spliced() {
        assert_eq!(
            text("uri?tools=${g},${ {'a': 'x'}.a }"),
            Ok(json!("uri?tools=pages,x"))
        );
        assert_eq!(text("n=${n}"), Ok(json!("n=3")));
        assert_eq!(text("literal $${g}"), Ok(json!("literal ${g}")));
    }

    #[test]
    fn errors_name_the_expression() {
        assert!(matches!(text("${nope}"), Err(InterpolateError { .. })));
        assert!(matches!(
            Template::compile("${open"),
            Err(TemplateError::Unterminated(_))
        ));
        assert!(matches!(
            Template::compile("x ${ a == }"),
            Err(TemplateError::Expr { .. })
        ));
    }
}
