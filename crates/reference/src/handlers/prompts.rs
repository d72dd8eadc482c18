//! `prompts/list` and `prompts/get`.

use super::{grouping, paged_list, Ctx};
use crate::catalog_file::Prompt;
use crate::error::RpcError;
use crate::params::Params;
use serde_json::{json, Map, Value};

/// A prompt as `prompts/list` (and `prompts/search`) shows it.
pub fn entry(ctx: &Ctx<'_>, p: &Prompt) -> Value {
    let mut e = Map::new();
    e.insert("name".into(), json!(p.name));
    if !p.title.is_empty() {
        e.insert("title".into(), json!(p.title));
    }
    e.insert("description".into(), json!(p.description));
    e.insert("arguments".into(), json!(p.arguments));
    let mut e = Value::Object(e);
    grouping::attach(&mut e, p.groups.iter().map(String::as_str));
    ctx.layer().prompt_entry(ctx, &mut e);
    e
}

pub fn list(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let cursor = p.cursor()?;
    let items = ctx
        .snap
        .catalog
        .prompts
        .iter()
        .map(|x| entry(ctx, x))
        .collect();
    paged_list(ctx, "prompts", items, cursor)
}

pub fn get(ctx: &mut Ctx<'_>, p: &Params<'_>) -> Result<Value, RpcError> {
    let name = p.req_str("name")?;
    let args = p.opt_object("arguments")?;
    let prompt = ctx
        .snap
        .catalog
        .prompts
        .iter()
        .find(|x| x.name == name)
        .ok_or_else(|| RpcError::invalid_params(format!("Unknown prompt: {name}")))?;
    let mut values: Vec<(&str, &str)> = Vec::new();
    for arg in &prompt.arguments {
        match args.and_then(|a| a.get(&arg.name)) {
            None | Some(Value::Null)
                if arg.required && !ctx.policy().requests.missing_argument_rendered.on() =>
            {
                return Err(RpcError::invalid_params(format!(
                    "Missing required argument '{}' for prompt {name}",
                    arg.name
                )));
            }
            None | Some(Value::Null) => values.push((&arg.name, "")),
            Some(Value::String(s)) => values.push((&arg.name, s)),
            Some(other) => {
                return Err(RpcError::bad_type(
                    &format!("arguments.{}", arg.name),
                    "a string",
                    other,
                ));
            }
        }
    }
    Ok(json!({
        "description": prompt.description,
        "messages": [{
            "role": "user",
            "content": {"type": "text", "text": render(&prompt.template, &values)},
        }],
    }))
}

/// Substitutes `{{name}}` (spaces inside the braces allowed) with the
/// argument's value; unknown placeholders are left as written.
pub fn render(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let key = after[..end].trim();
        match values.iter().find(|(k, _)| *k == key) {
            Some((_, v)) => out.push_str(v),
            None => out.push_str(&rest[start..start + 2 + end + 2]),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_placeholders() {
        let v = [("a", "1"), ("b", "two")];
        assert_eq!(
            render("x {{a}} y {{ b }} z {{c}} {{", &v),
            "x 1 y two z {{c}} {{"
        );
    }
}
