//! A client uses a discovery feature only where the server declared it:
//! `query` on tools/list under `tools.filtering` (SEP-1821), `filter` under
//! the top-level `filtering` (SEP-1300), `tools/search` under
//! `tools.search` (the search draft). The declaration is the handshake
//! answer's `capabilities` (initialize, or server/discover in 2026-07-28);
//! before any answer nothing is judged.

use serde_json::Value;

use super::params::{string, strings};
use super::{describe, Ctx, Hit};
use crate::watch::trace::{Msg, Side};

#[derive(Debug, Clone, PartialEq)]
pub struct NeedsCapability {
    /// The request method it applies to.
    pub method: String,
    /// A parameter whose presence uses the feature; None: the method itself.
    pub param: Option<String>,
    /// The path under `capabilities` that declares the feature.
    pub capability: Vec<String>,
}

pub fn parse(kind: &str, with: &Value) -> Result<Option<NeedsCapability>, String> {
    if kind != "needs-capability" {
        return Ok(None);
    }
    let capability = strings(with, "capability")?;
    if capability.is_empty() {
        return Err("`with.capability` must name at least one key".to_string());
    }
    Ok(Some(NeedsCapability {
        method: string(with, "method")?,
        param: with
            .get("param")
            .and_then(Value::as_str)
            .map(str::to_string),
        capability,
    }))
}

impl NeedsCapability {
    pub fn run(&self, ctx: &Ctx<'_>, msg: &Msg) -> Option<Hit> {
        if msg.from != Side::Client || !msg.is_request() || msg.method() != Some(&self.method) {
            return None;
        }
        if let Some(param) = &self.param {
            msg.params()?.get(param).filter(|v| !v.is_null())?;
        }
        let answer_at = ctx
            .conv
            .initialize_answered
            .or_else(|| discover_answer(ctx))?;
        if declared(&ctx.conv.server_info, &self.capability) {
            return None;
        }
        let with = match &self.param {
            Some(p) => format!(" with `{p}`"),
            None => String::new(),
        };
        Some(Hit::new(
            format!(
                "the client sent {}{with}, but the server's handshake answer does not declare capabilities.{}",
                describe(msg),
                self.capability.join(".")
            ),
            vec![answer_at],
        ))
    }
}

/// Where a server/discover was answered, for 2026-07-28 conversations.
fn discover_answer(ctx: &Ctx<'_>) -> Option<usize> {
    ctx.conv.discovered.as_ref()?;
    ctx.conv
        .msgs
        .iter()
        .rev()
        .find(|m| {
            m.from == Side::Server
                && m.result()
                    .is_some_and(|r| r.get("supportedVersions").is_some())
        })
        .map(|m| m.pos)
}

/// Whether `capabilities.<path>` is present and not false or null.
fn declared(server_info: &Value, path: &[String]) -> bool {
    let found = path
        .iter()
        .try_fold(server_info.get("capabilities"), |v, key| {
            Some(v.and_then(|v| v.get(key)))
        })
        .flatten();
    !matches!(found, None | Some(Value::Null) | Some(Value::Bool(false)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn path(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_capability_is_declared_by_any_value_but_false_and_null() {
        let info = json!({"capabilities": {"tools": {"filtering": true, "search": false}, "filtering": {}}});
        assert!(declared(&info, &path(&["tools", "filtering"])));
        assert!(declared(&info, &path(&["filtering"])));
        assert!(!declared(&info, &path(&["tools", "search"])));
        assert!(!declared(&info, &path(&["prompts", "search"])));
        assert!(!declared(&json!({}), &path(&["filtering"])));
    }

    #[test]
    fn a_bad_with_is_an_error() {
        assert!(parse("needs-capability", &json!({"method": "tools/list"})).is_err());
        assert!(parse(
            "needs-capability",
            &json!({"method": "x", "capability": []})
        )
        .is_err());
        assert_eq!(parse("other", &json!({})), Ok(None));
    }
}
