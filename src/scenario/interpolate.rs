//! `${expr}` interpolation in params, patterns and raw text. The text between
//! the braces is a CEL expression over the same bindings as `assert`; a string
//! that is exactly one `${…}` takes the expression's JSON value, any other
//! string gets the value's text spliced in. `$${` writes a literal `${`.

use serde_json::{Map, Value};

use super::expr::{self, Bindings, ExprError};

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

/// Every expression in every string of `value`, for load-time checking.
pub fn expressions(value: &Value) -> Result<Vec<String>, Unterminated> {
    let mut out = Vec::new();
    collect(value, &mut out)?;
    Ok(out)
}

fn collect(value: &Value, out: &mut Vec<String>) -> Result<(), Unterminated> {
    match value {
        Value::String(s) => {
            for piece in split(s)? {
                if let Piece::Expr(e) = piece {
                    out.push(e.to_string());
                }
            }
        }
        Value::Array(items) => items.iter().try_for_each(|v| collect(v, out))?,
        Value::Object(map) => {
            for (k, v) in map {
                collect(&Value::String(k.clone()), out)?;
                collect(v, out)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Why interpolation failed at run time.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InterpolateError {
    #[error(transparent)]
    Unterminated(#[from] Unterminated),
    #[error("in ${{{expr}}}: {source}")]
    Expr { expr: String, source: ExprError },
}

/// Replaces every `${…}` in `value`.
pub fn interpolate(value: &Value, bindings: &Bindings) -> Result<Value, InterpolateError> {
    Ok(match value {
        Value::String(s) => interpolate_str(s, bindings)?,
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| interpolate(v, bindings))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                let key = match interpolate_str(k, bindings)? {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                out.insert(key, interpolate(v, bindings)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

/// Interpolates one string; the result is a string unless the whole string is one expression.
pub fn interpolate_str(s: &str, bindings: &Bindings) -> Result<Value, InterpolateError> {
    if !s.contains("${") {
        return Ok(Value::String(s.to_string()));
    }
    let pieces = split(s)?;
    let eval = |e: &str| {
        expr::eval(e, bindings).map_err(|source| InterpolateError::Expr {
            expr: e.to_string(),
            source,
        })
    };
    if let [Piece::Expr(e)] = pieces.as_slice() {
        return eval(e);
    }
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(t) => out.push_str(&t),
            Piece::Expr(e) => match eval(e)? {
                Value::String(v) => out.push_str(&v),
                other => out.push_str(&other.to_string()),
            },
        }
    }
    Ok(Value::String(out))
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

    #[test]
    fn whole_expression_keeps_its_type() {
        let b = bindings();
        assert_eq!(
            interpolate(&json!({"groups": ["${g}"], "n": "${n}"}), &b),
            Ok(json!({"groups": ["pages"], "n": 3}))
        );
        assert_eq!(
            interpolate(&json!("${all.result.tools[0]}"), &b),
            Ok(json!({"name": "a"}))
        );
    }

    #[test]
    fn mixed_text_is_spliced() {
        let b = bindings();
        assert_eq!(
            interpolate_str("uri?tools=${g},${ {'a': 'x'}.a }", &b),
            Ok(json!("uri?tools=pages,x"))
        );
        assert_eq!(interpolate_str("n=${n}", &b), Ok(json!("n=3")));
        assert_eq!(
            interpolate_str("literal $${g}", &b),
            Ok(json!("literal ${g}"))
        );
    }

    #[test]
    fn errors_name_the_expression() {
        let b = bindings();
        assert!(matches!(
            interpolate_str("${nope}", &b),
            Err(InterpolateError::Expr { .. })
        ));
        assert!(matches!(
            interpolate_str("${open", &b),
            Err(InterpolateError::Unterminated(_))
        ));
        assert_eq!(
            expressions(&json!({"a": ["${x}", "y ${ z.w }"]})),
            Ok(vec!["x".to_string(), "z.w".to_string()])
        );
    }
}
