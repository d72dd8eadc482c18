//! Protocol eras: which versions are stateful, how a message says which era
//! it belongs to, and what every result must carry in the stateless era.

use super::error::{Kind, RpcError, RESOURCE_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION};
use serde_json::{json, Value};

pub use mcp_conform_protocol::revisions::{
    META_CAPABILITIES, META_LOG_LEVEL, META_SERVER_INFO, META_SUBSCRIPTION, META_VERSION,
    OLDER_REVISIONS, STATEFUL, STATELESS, V2025_06_18, V2025_11_25, V2026_07_28,
};

/// Whether a request's `_meta` names a log level.
pub fn has_log_level(params: Option<&Value>) -> bool {
    params
        .and_then(|p| p.pointer("/_meta"))
        .and_then(|m| m.get(META_LOG_LEVEL))
        .is_some()
}

pub const SERVER_NAME: &str = "mcp-conform-reference";
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Every version this server speaks, newest first.
pub fn supported() -> Vec<&'static str> {
    STATELESS.iter().chain(STATEFUL).copied().collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2025-06-18 / 2025-11-25: a session opened by `initialize`.
    Stateful,
    /// 2026-07-28: every request names its version in `_meta`.
    Stateless,
}

/// Decides the era of one request from its `_meta`. A version carried in
/// `_meta` selects the stateless era when it is one; a stateful version there
/// is tolerated (the session's handshake still applies); anything else is an
/// `UnsupportedProtocolVersionError`.
pub fn classify(params: Option<&Value>) -> Result<Era, RpcError> {
    let Some(version) = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_VERSION))
    else {
        return Ok(Era::Stateful);
    };
    let Value::String(v) = version else {
        return Err(RpcError::bad_type(
            &format!("_meta[\"{META_VERSION}\"]"),
            "a string",
            version,
        ));
    };
    if STATELESS.contains(&v.as_str()) {
        Ok(Era::Stateless)
    } else if STATEFUL.contains(&v.as_str()) {
        Ok(Era::Stateful)
    } else {
        Err(unsupported(v))
    }
}

/// Whether the request's `_meta` names an older published revision (what
/// `--fault old-revision-served` mistakes for the current one).
pub fn older_revision(params: Option<&Value>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_VERSION))
        .and_then(Value::as_str)
        .is_some_and(|v| OLDER_REVISIONS.contains(&v))
}

pub fn unsupported(requested: &str) -> RpcError {
    unsupported_by(requested, &supported())
}

/// UnsupportedProtocolVersion naming `supported` as the versions to retry with.
pub fn unsupported_by(requested: &str, supported: &[&str]) -> RpcError {
    RpcError::new(
        UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version: {requested}"),
    )
    .with_data(json!({"requested": requested, "supported": supported}))
}

/// The version `initialize` answers with: the client's when it is a stateful
/// version we speak, else our newest stateful one.
pub fn negotiate(requested: Option<&str>) -> &'static str {
    requested
        .and_then(|r| STATEFUL.iter().find(|v| **v == r))
        .copied()
        .unwrap_or(STATEFUL[0])
}

pub fn server_info() -> Value {
    json!({"name": SERVER_NAME, "version": SERVER_VERSION})
}

/// Methods whose stateless results are cacheable lists or reads.
fn cacheable(method: &str) -> bool {
    matches!(
        method,
        "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/read"
            | "resources/templates/list"
            | "groups/list"
            | "tags/list"
            | "tools/search"
            | "prompts/search"
            | "resources/search"
    )
}

/// Adds what the stateless era requires of every result: `resultType`, and
/// `ttlMs` + `cacheScope` on list and read results. Search results get a TTL
/// of 0 because the search draft asks clients not to cache them.
pub fn decorate_stateless(method: &str, result: &mut Value, list_ttl_ms: u64) {
    let Value::Object(map) = result else {
        return;
    };
    map.entry("resultType").or_insert(json!("complete"));
    if cacheable(method) {
        let ttl = if method.ends_with("/search") {
            0
        } else {
            list_ttl_ms
        };
        map.entry("ttlMs").or_insert(json!(ttl));
        map.entry("cacheScope").or_insert(json!("public"));
    }
    let meta = map.entry("_meta").or_insert_with(|| json!({}));
    if let Value::Object(meta) = meta {
        meta.entry(META_SERVER_INFO).or_insert_with(server_info);
    }
}

// The error's code depends on the era, so it is built here, beside the
// eras, and `error` stays independent of them.
impl RpcError {
    /// A URI that names no resource: -32002 in the stateful eras (MCP
    /// 2025-11-25 "Resource not found: -32002"), -32602 in 2026-07-28.
    pub fn resource_not_found(uri: &str, era: Era) -> Self {
        let e = match era {
            Era::Stateful => {
                RpcError::new(RESOURCE_NOT_FOUND, format!("Resource not found: {uri}"))
            }
            Era::Stateless => RpcError::invalid_params(format!("Resource not found: {uri}")),
        };
        RpcError {
            kind: Kind::ResourceNotFound,
            ..e.with_data(json!({"uri": uri}))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_by_meta() {
        assert_eq!(classify(None), Ok(Era::Stateful));
        let p = json!({"_meta": {META_VERSION: "2026-07-28"}});
        assert_eq!(classify(Some(&p)), Ok(Era::Stateless));
        let p = json!({"_meta": {META_VERSION: "2025-11-25"}});
        assert_eq!(classify(Some(&p)), Ok(Era::Stateful));
        let p = json!({"_meta": {META_VERSION: "1999-01-01"}});
        let e = classify(Some(&p)).expect_err("unsupported");
        assert_eq!(e.code, -32022);
        assert_eq!(e.data.as_ref().expect("data")["requested"], "1999-01-01");
        let p = json!({"_meta": {META_VERSION: 7}});
        assert_eq!(classify(Some(&p)).expect_err("bad").code, -32602);
    }

    #[test]
    fn negotiates() {
        assert_eq!(negotiate(Some("2025-06-18")), "2025-06-18");
        assert_eq!(negotiate(Some("2026-07-28")), "2025-11-25");
        assert_eq!(negotiate(None), "2025-11-25");
    }

    #[test]
    fn decorates() {
        let mut r = json!({"tools": []});
        decorate_stateless("tools/list", &mut r, 5);
        assert_eq!(r["resultType"], "complete");
        assert_eq!(r["ttlMs"], 5);
        assert_eq!(r["cacheScope"], "public");
        let mut r = json!({"content": []});
        decorate_stateless("tools/call", &mut r, 5);
        assert!(r.get("ttlMs").is_none());
        assert_eq!(r["_meta"][META_SERVER_INFO]["name"], SERVER_NAME);
    }
}
