//! Protocol eras: which handshake a session performs and what every request carries.

use serde_json::{json, Map, Value};

pub use crate::protocol::{KNOWN_VERSIONS, NEWEST_STATEFUL, V2025_06_18, V2025_11_25, V2026_07_28};
use crate::protocol::{META_CAPABILITIES, META_CLIENT_INFO, META_VERSION};

/// A protocol version and whether it has sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Era {
    pub version: String,
}

impl Era {
    pub fn new(version: &str) -> Self {
        Self {
            version: version.to_string(),
        }
    }

    /// 2026-07-28 and later have no initialize and no sessions.
    /// The cheapest request every server of the era must answer with a
    /// result: `ping` in the stateful eras; the 2026-07-28 schema has no
    /// `ping`, and `server/discover` is the one request its servers must
    /// implement.
    pub fn liveness_method(&self) -> &'static str {
        if self.is_stateless() {
            "server/discover"
        } else {
            "ping"
        }
    }

    pub fn is_stateless(&self) -> bool {
        self.version.as_str() >= V2026_07_28
    }
}

/// The harness's own identity, sent as clientInfo.
pub fn client_info() -> Value {
    json!({"name": "mcp-conform", "version": env!("CARGO_PKG_VERSION")})
}

/// What the harness declares it can do: nothing, in every era. No scenario
/// exercises roots, sampling or elicitation, and declaring them provokes
/// servers into asking (and complaining on stderr about an empty answer)
/// during runs that are not about them; in 2026-07-28 "an empty object means
/// the client supports no optional capabilities" (the schema's
/// `RequestMetaObject`). A stateful server that asks anyway still gets an answer.
pub fn client_capabilities(_era: &Era) -> Value {
    json!({})
}

/// The `_meta` every request of the era carries: the protocol version, the
/// client's capabilities and its identity in 2026-07-28, nothing before
/// (where a dual-era server takes a request carrying them for a 2026-07-28
/// one, and asks for that revision's headers).
pub fn request_meta(era: &Era) -> Value {
    if !era.is_stateless() {
        return json!({});
    }
    json!({
        META_VERSION: era.version,
        META_CAPABILITIES: client_capabilities(era),
        META_CLIENT_INFO: client_info(),
    })
}

/// Adds the stateless era's per-request `_meta` to params (which must be an
/// object or absent; anything else is sent as written, for wrong-type tests).
pub fn with_meta(params: Option<Value>, era: &Era) -> Option<Value> {
    let meta = request_meta(era);
    match params {
        None => Some(json!({ "_meta": meta })),
        Some(Value::Object(mut map)) => {
            let merged = match map.remove("_meta") {
                Some(Value::Object(existing)) => {
                    let mut m: Map<String, Value> = meta.as_object().cloned().unwrap_or_default();
                    m.extend(existing);
                    Value::Object(m)
                }
                Some(other) => other,
                None => meta,
            };
            map.insert("_meta".into(), merged);
            Some(Value::Object(map))
        }
        Some(other) => Some(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_is_merged_not_overwritten() {
        let era = Era::new(V2026_07_28);
        assert!(era.is_stateless() && !Era::new(V2025_11_25).is_stateless());
        let p = with_meta(
            Some(
                json!({"query": "x", "_meta": {"io.modelcontextprotocol/protocolVersion": "1999"}}),
            ),
            &era,
        )
        .unwrap_or_default();
        assert_eq!(p["query"], "x");
        assert_eq!(
            p["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "1999"
        );
        assert_eq!(
            p["_meta"]["io.modelcontextprotocol/clientInfo"]["name"],
            "mcp-conform"
        );
        assert_eq!(with_meta(Some(json!(5)), &era), Some(json!(5)));
        assert_eq!(
            p["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            json!({}),
            "2026-07-28 declares no roots.listChanged"
        );
        assert_eq!(client_capabilities(&Era::new(V2025_11_25)), json!({}));
    }

    #[test]
    fn only_the_stateless_era_carries_request_meta() {
        assert_eq!(request_meta(&Era::new(V2025_11_25)), json!({}));
        let meta = request_meta(&Era::new(V2026_07_28));
        assert_eq!(meta[META_VERSION], V2026_07_28);
        assert_eq!(meta[META_CAPABILITIES], json!({}));
    }
}

#[cfg(test)]
mod capability_tests {
    use super::*;

    #[test]
    fn no_client_capability_is_declared_that_no_scenario_exercises() {
        assert_eq!(client_capabilities(&Era::new(V2025_06_18)), json!({}));
    }
}
